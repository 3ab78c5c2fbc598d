package cmds_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"shardis/codec"
	"shardis/executor"
	"shardis/internal/testserver"
	"shardis/server"
	"shardis/shard"
)

func TestSelect_SwitchesDatabase(t *testing.T) {
	_, c := keysStart(t)
	conn := c.Conn()
	defer conn.Close()
	if err := conn.Set(keysCtx, "k", "db0", 0).Err(); err != nil {
		t.Fatal(err)
	}
	if err := conn.Select(keysCtx, 5).Err(); err != nil {
		t.Fatal(err)
	}
	if err := conn.Get(keysCtx, "k").Err(); err != redis.Nil {
		t.Fatalf("GET k in db 5: %v", err)
	}
	if err := conn.Set(keysCtx, "k", "db5", 0).Err(); err != nil {
		t.Fatal(err)
	}
	if err := conn.Select(keysCtx, 0).Err(); err != nil {
		t.Fatal(err)
	}
	if v, _ := conn.Get(keysCtx, "k").Result(); v != "db0" {
		t.Fatalf("GET k in db 0 = %q", v)
	}
}

func TestSelect_PipelinedCommandsUseTheNewDatabase(t *testing.T) {
	s, _ := keysStart(t)
	got := string(testserver.Raw(t, s.Addr,
		[]byte("SELECT 1\r\nSET k one\r\nSELECT 0\r\nGET k\r\nSELECT 1\r\nGET k\r\n"), 300*time.Millisecond))
	if want := "+OK\r\n+OK\r\n+OK\r\n$-1\r\n+OK\r\n$3\r\none\r\n"; got != want {
		t.Fatalf("replies %q, want %q", got, want)
	}
}

func TestSelect_HonoursConfiguredDatabases(t *testing.T) {
	t.Parallel()
	s := testserver.Start(t, "--databases", "2")
	c := s.Client(t)
	expect(t, c, "OK", "SELECT", "1")
	expectErr(t, c, "ERR DB index is out of range", "SELECT", "2")
}

func TestDBSize_CountsKeysOfTheSelectedDB(t *testing.T) {
	s, c := keysStart(t)
	expect(t, c, int64(0), "DBSIZE")
	for i := range 50 {
		expect(t, c, "OK", "SET", fmt.Sprintf("k%d", i), "v")
	}
	expect(t, c, "OK", "SET", "k0", "again") // overwrite: no new key
	expect(t, c, int64(50), "DBSIZE")
	c1 := s.Client(t, func(o *redis.Options) { o.DB = 1 })
	expect(t, c1, int64(0), "DBSIZE")
	expect(t, c, int64(10), "DEL", "k0", "k1", "k2", "k3", "k4", "k5", "k6", "k7", "k8", "k9")
	expect(t, c, int64(40), "DBSIZE")
	expectErr(t, c, "ERR wrong number of arguments for 'dbsize' command", "DBSIZE", "x")
}

func TestFlushDB_FlushesOnlyTheSelectedDB(t *testing.T) {
	s, c := keysStart(t)
	c1 := s.Client(t, func(o *redis.Options) { o.DB = 1 })
	for i := range 20 {
		expect(t, c, "OK", "SET", fmt.Sprintf("k%d", i), "v")
		expect(t, c1, "OK", "SET", fmt.Sprintf("k%d", i), "v")
	}
	expect(t, c, int64(1), "EXPIRE", "k3", "100")
	expect(t, c, "OK", "FLUSHDB")
	expect(t, c, int64(0), "DBSIZE")
	expect(t, c, int64(0), "EXISTS", "k0", "k3")
	expect(t, c1, int64(20), "DBSIZE")
	// The db is usable again at once.
	expect(t, c, "OK", "SET", "k3", "new")
	expect(t, c, int64(-1), "TTL", "k3")
	expect(t, c, int64(1), "DBSIZE")
	expect(t, c, "OK", "FLUSHDB", "ASYNC")
	expect(t, c, "OK", "FLUSHDB", "sync")
	expect(t, c, int64(0), "DBSIZE")
}

func TestFlushAll_FlushesEveryDB(t *testing.T) {
	s, c := keysStart(t)
	c7 := s.Client(t, func(o *redis.Options) { o.DB = 7 })
	expect(t, c, "OK", "SET", "a", "v")
	expect(t, c7, "OK", "SET", "b", "v")
	expect(t, c, "OK", "FLUSHALL")
	expect(t, c, int64(0), "DBSIZE")
	expect(t, c7, int64(0), "DBSIZE")
	expect(t, c7, int64(0), "EXISTS", "b")
	expect(t, c, "OK", "FLUSHALL", "ASYNC")
}

func TestSwapDB_SwapsContents(t *testing.T) {
	s, c := keysStart(t)
	c1 := s.Client(t, func(o *redis.Options) { o.DB = 1 })
	for i := range 10 {
		expect(t, c, "OK", "SET", fmt.Sprintf("zero%d", i), "0")
	}
	expect(t, c1, "OK", "SET", "one", "1")
	expect(t, c1, int64(1), "EXPIRE", "one", "100")
	expect(t, c, "OK", "SWAPDB", "0", "1")
	expect(t, c, int64(1), "DBSIZE")
	expect(t, c, "1", "GET", "one")
	expect(t, c, int64(100), "TTL", "one")
	expect(t, c1, int64(10), "DBSIZE")
	expect(t, c1, "0", "GET", "zero3")
	expect(t, c, "OK", "SWAPDB", "1", "1")
	expect(t, c, "OK", "SWAPDB", "1", "0")
	expect(t, c, int64(10), "DBSIZE")
	expect(t, c, "0", "GET", "zero3")
}

func TestDB(t *testing.T) {
	keysSuite(t, []keysCase{
		{"Select_Errors", func(t *testing.T, e keysEnv) {
			c := e.c
			expectErr(t, c, "ERR DB index is out of range", "SELECT", "16")
			expectErr(t, c, "ERR DB index is out of range", "SELECT", "-1")
			expectErr(t, c, "ERR value is not an integer or out of range", "SELECT", "abc")
			expectErr(t, c, "ERR value is not an integer or out of range", "SELECT", "")
			expectErr(t, c, "ERR value is not an integer or out of range", "SELECT", "1.0")
			expectErr(t, c, "ERR value is out of range, value must between -2147483648 and 2147483647", "SELECT", "2147483648")
			expectErr(t, c, "ERR wrong number of arguments for 'select' command", "SELECT")
		}},
		{"FlushDB_SyntaxErrors", func(t *testing.T, e keysEnv) {
			c := e.c
			expect(t, c, "OK", "SET", "k", "v")
			expectErr(t, c, "ERR syntax error", "FLUSHDB", "BAD")
			expectErr(t, c, "ERR syntax error", "FLUSHDB", "ASYNC", "SYNC")
			expectErr(t, c, "ERR syntax error", "FLUSHALL", "foo")
			expect(t, c, int64(1), "DBSIZE")
		}},
		{"SwapDB_Errors", func(t *testing.T, e keysEnv) {
			c := e.c
			expectErr(t, c, "ERR invalid first DB index", "SWAPDB", "x", "1")
			expectErr(t, c, "ERR invalid first DB index", "SWAPDB", "x", "y")
			expectErr(t, c, "ERR invalid second DB index", "SWAPDB", "1", "y")
			expectErr(t, c, "ERR DB index is out of range", "SWAPDB", "1", "16")
			expectErr(t, c, "ERR DB index is out of range", "SWAPDB", "-1", "0")
			expectErr(t, c, "ERR invalid second DB index", "SWAPDB", "0", "2147483648")
			expectErr(t, c, "ERR wrong number of arguments for 'swapdb' command", "SWAPDB", "1")
		}},
	})
}

// keysDump lists every live key of databases 0..15 of store as "db/key" -> "value|expire".
func keysDump(t *testing.T, store *shard.Store) map[string]string {
	t.Helper()
	out := map[string]string{}
	for id := range store.NumShards() {
		if err := store.Do(id, func(tx *shard.Tx) {
			for db := range 16 {
				tx.ScanKeys(id, db, nil, func(key []byte, m *codec.Meta) bool {
					out[fmt.Sprintf("%d/%s", db, key)] = fmt.Sprintf("%s|%d", m.Value, m.Expire)
					return true
				})
			}
		}); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// TestKeyspace_BinlogReplayReproducesData checks the records the keyspace, expire and db
// commands log: replaying every shard's binlog into an empty store must give the same data.
func TestKeyspace_BinlogReplayReproducesData(t *testing.T) {
	s, c := keysStart(t)
	c4 := s.Client(t, func(o *redis.Options) { o.DB = 4 })
	c3 := s.Client(t, func(o *redis.Options) { o.DB = 3 })
	expect(t, c, "OK", "SET", "gone", "v")
	expect(t, c, "OK", "FLUSHALL")
	for i := range 40 {
		expect(t, c, "OK", "SET", fmt.Sprintf("k%d", i), fmt.Sprintf("v%d", i))
	}
	steps := [][]any{
		{"EXPIRE", "k0", "1000"},
		{"PEXPIRE", "k1", "2000000"},
		{"EXPIREAT", "k2", "4000000000"},
		{"PEXPIREAT", "k3", "4000000000123"},
		{"EXPIRE", "k4", "100"}, {"PERSIST", "k4"},
		{"EXPIRE", "k5", "-1"},
		{"RENAME", "k0", keysOtherShard(s, "k0", "renamed")},
		{"RENAMENX", "k6", keysOtherShard(s, "k6", "nx")},
		{"RENAME", "k1", "k7"},
		{"COPY", "k2", keysOtherShard(s, "k2", "copy")},
		{"COPY", "k3", "k3", "DB", "2"},
		{"COPY", "k8", "k9", "REPLACE"},
		{"MOVE", "k3", "6"},
		{"MOVE", "k10", "7"},
		{"DEL", "k11", "k12", "nope"},
		{"UNLINK", "k13"},
	}
	for _, args := range steps {
		if _, err := doCmd(t, c, args...); err != nil {
			t.Fatalf("%v: %v", args, err)
		}
	}
	expect(t, c3, "OK", "SET", "flushed", "v")
	expect(t, c3, "OK", "FLUSHDB")
	expect(t, c4, "OK", "SET", "swapped", "v")
	expect(t, c4, int64(1), "EXPIRE", "swapped", "1000")
	expect(t, c, "OK", "SWAPDB", "4", "5")
	expect(t, c, "OK", "SELECT", "0") // not logged: a connection command

	want := keysDump(t, s.Store)
	if want["5/swapped"] == "" || want["2/k3"] == "" || want["6/k3"] == "" || len(want) < 30 {
		t.Fatalf("unexpected source data: %v", want)
	}
	dst := testserver.OpenStore(t, t.TempDir(), s.Store.NumShards())
	dstSrv := executor.New(&server.Server{Store: dst})
	for id := range s.Store.NumShards() {
		if _, err := dstSrv.ReplayShard(s.Store, id); err != nil {
			t.Fatalf("shard %d: %v", id, err)
		}
	}
	got := keysDump(t, dst)
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %q after replay, want %q", k, got[k], v)
		}
	}
	for k, v := range got {
		if _, ok := want[k]; !ok {
			t.Errorf("%s = %q after replay, absent in the source", k, v)
		}
	}
}
