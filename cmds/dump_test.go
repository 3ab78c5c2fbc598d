package cmds_test

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"shardis/internal/testserver"
	"shardis/rdb"
	"shardis/rdbstore"
	"shardis/shard"
)

// startRedisDebug starts a reference redis-server with DEBUG enabled (DIGEST-VALUE).
func startRedisDebug(t *testing.T, extra ...string) (*redis.Client, int) {
	t.Helper()
	return startRedisDebugIn(t, t.TempDir(), extra...)
}

// startRedisDebugIn is startRedisDebug on directory dir (which may hold a dump.rdb to load).
func startRedisDebugIn(t *testing.T, dir string, extra ...string) (*redis.Client, int) {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		t.Skip("redis-server is not installed")
	}
	port := testserver.FreePort(t)
	args := append([]string{"--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--save", "",
		"--appendonly", "no", "--dir", dir, "--enable-debug-command", "yes"}, extra...)
	cmd := exec.Command(bin, args...)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	opts := &redis.Options{Addr: "127.0.0.1:" + strconv.Itoa(port), DisableIdentity: true, Protocol: 2, MaxRetries: -1}
	if i := slices.Index(extra, "--requirepass"); i >= 0 {
		opts.Password = extra[i+1]
	}
	rc := redis.NewClient(opts)
	t.Cleanup(func() { rc.Close() })
	waitFor(t, func() bool { return rc.Ping(testCtx).Err() == nil })
	return rc, port
}

func dumpDo(t *testing.T, c *redis.Client, args ...any) any {
	t.Helper()
	v, err := c.Do(testCtx, args...).Result()
	if err != nil && err != redis.Nil {
		t.Fatalf("%v: %v", args, err)
	}
	return v
}

// dumpFixture builds a key of every type and encoding Redis 7.0 writes (small and big
// collections, integers, a stream with groups, pending entries and consumers, an HLL, a big
// string, a key with an expire) on c, and returns the keys.
func dumpFixture(t *testing.T, c *redis.Client) []string {
	t.Helper()
	do := func(args ...any) { dumpDo(t, c, args...) }
	do("SET", "str", "hello")
	do("SET", "int", "12345")
	do("SET", "bigstr", strings.Repeat("abcdefghij", 20000))
	do("SET", "ttl", "v", "PX", 500000)
	do("SETBIT", "bits", 100000, 1)
	for i := range 50 {
		do("PFADD", "hll", fmt.Sprintf("e%d", i))
	}
	do("RPUSH", "list", "a", "1", "-7", "b")
	for i := range 2000 {
		do("RPUSH", "biglist", fmt.Sprintf("element-%d", i), i)
	}
	do("SADD", "intset", 1, 2, 3, -100, 1<<40)
	do("SADD", "set", "a", "b", "c")
	for i := range 700 {
		do("SADD", "bigset", fmt.Sprintf("member-%d", i))
	}
	do("HSET", "hash", "f", "v", "n", 12)
	for i := range 700 {
		do("HSET", "bighash", fmt.Sprintf("field-%d", i), strings.Repeat("x", i%100))
	}
	do("ZADD", "zset", 1, "a", 2.5, "b", "-inf", "c", "+inf", "d")
	for i := range 300 {
		do("ZADD", "bigzset", float64(i)/3, fmt.Sprintf("m%d", i))
	}
	for i := range 250 {
		do("XADD", "stream", fmt.Sprintf("%d-1", i+1), "f", i, "g", "v")
	}
	do("XADD", "stream", "300-1", "other", "fields")
	do("XDEL", "stream", "5-1")
	do("XGROUP", "CREATE", "stream", "g1", "0")
	do("XGROUP", "CREATE", "stream", "g2", "$")
	do("XREADGROUP", "GROUP", "g1", "alice", "COUNT", 10, "STREAMS", "stream", ">")
	do("XREADGROUP", "GROUP", "g1", "bob", "COUNT", 5, "STREAMS", "stream", ">")
	do("XACK", "stream", "g1", "1-1")
	do("XGROUP", "CREATECONSUMER", "stream", "g2", "carol")
	do("XADD", "empty-stream", "1-1", "f", "v")
	do("XDEL", "empty-stream", "1-1")
	return []string{"str", "int", "bigstr", "ttl", "bits", "hll", "list", "biglist", "intset", "set",
		"bigset", "hash", "bighash", "zset", "bigzset", "stream", "empty-stream"}
}

func digestValue(t *testing.T, c *redis.Client, key string) string {
	t.Helper()
	v := dumpDo(t, c, "DEBUG", "DIGEST-VALUE", key)
	return fmt.Sprint(v)
}

// RESTORE of redis-server's DUMP payloads gives shardis the same values (DEBUG DIGEST-VALUE,
// TYPE, the expire), and shardis's DUMP of them restores into redis-server as the same values.
func TestDump_RedisPayloadsRoundTrip_SameDigests(t *testing.T) {
	rc, _ := startRedisDebug(t)
	s := testserver.Start(t, debugOn...)
	sc := s.Client(t)
	keys := dumpFixture(t, rc)
	for _, k := range keys {
		payload, err := rc.Do(testCtx, "DUMP", k).Text()
		if err != nil {
			t.Fatalf("redis DUMP %s: %v", k, err)
		}
		ttl := rc.PTTL(testCtx, k).Val().Milliseconds()
		if ttl < 0 {
			ttl = 0
		}
		if v, err := sc.Do(testCtx, "RESTORE", k, ttl, payload).Result(); err != nil || v != "OK" {
			t.Fatalf("shardis RESTORE %s: %v %v", k, v, err)
		}
		want := digestValue(t, rc, k)
		if got := digestValue(t, sc, k); got != want {
			t.Errorf("%s: shardis digest %s, redis %s", k, got, want)
		}
		if g, w := sc.Type(testCtx, k).Val(), rc.Type(testCtx, k).Val(); g != w {
			t.Errorf("%s: TYPE %s, want %s", k, g, w)
		}
		if pt := sc.PTTL(testCtx, k).Val().Milliseconds(); (ttl > 0) != (pt > 0) {
			t.Errorf("%s: PTTL %d after RESTORE with ttl %d", k, pt, ttl)
		}
		back, err := sc.Do(testCtx, "DUMP", k).Text()
		if err != nil {
			t.Fatalf("shardis DUMP %s: %v", k, err)
		}
		if v, err := rc.Do(testCtx, "RESTORE", k+":back", ttl, back).Result(); err != nil || v != "OK" {
			t.Fatalf("redis RESTORE of shardis's DUMP of %s: %v %v", k, v, err)
		}
		if got := digestValue(t, rc, k+":back"); got != want {
			t.Errorf("%s: redis digest of shardis's DUMP %s, want %s", k, got, want)
		}
	}
	// Where Redis's bytes do not depend on its history (hash table order, stream nodes), the
	// payloads are byte for byte Redis's.
	for _, k := range []string{"str", "int", "bigstr", "hll", "list", "biglist", "intset", "hash", "zset", "bigzset"} {
		if got, want := fmt.Sprint(dumpDo(t, sc, "DUMP", k)), fmt.Sprint(dumpDo(t, rc, "DUMP", k)); got != want {
			t.Errorf("DUMP %s differs from redis-server's (%d bytes, want %d)", k, len(got), len(want))
		}
	}
	// Replies that read the stream's groups agree too.
	for _, args := range [][]any{
		{"XINFO", "GROUPS", "stream"}, {"XPENDING", "stream", "g1"},
		{"XPENDING", "stream", "g1", "-", "+", 100},
	} {
		got, want := dumpDo(t, sc, args...), dumpDo(t, rc, args...)
		if len(args) > 3 { // XPENDING's extended form
			got, want = withoutIdle(got), withoutIdle(want)
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%v:\n got  %s\n want %s", args, got, want)
		}
	}
	expectNil(t, sc, "DUMP", "missing")
}

// withoutIdle blanks the idle times (the third field) in XPENDING's extended reply: they
// count milliseconds since delivery, which differ by when each server is asked.
func withoutIdle(reply any) any {
	entries, ok := reply.([]any)
	if !ok {
		return reply
	}
	for _, e := range entries {
		if fields, ok := e.([]any); ok && len(fields) == 4 {
			fields[2] = "idle"
		}
	}
	return reply
}

// A fragmented string (SETBIT far into it) dumps as Redis's string of its whole length.
func TestDump_FragmentedString_RestoresInRedis(t *testing.T) {
	rc, _ := startRedisDebug(t)
	s := testserver.Start(t, debugOn...)
	sc := s.Client(t)
	for _, c := range []*redis.Client{rc, sc} {
		dumpDo(t, c, "SETBIT", "b", 1<<20, 1)
		dumpDo(t, c, "SETRANGE", "b", 5000, "hello")
	}
	payload := dumpDo(t, sc, "DUMP", "b")
	dumpDo(t, rc, "RESTORE", "b2", 0, payload)
	if g, w := digestValue(t, rc, "b2"), digestValue(t, rc, "b"); g != w {
		t.Fatalf("digest %s, want %s", g, w)
	}
}

// withCRC gives body (a value's bytes) the footer of a DUMP payload: RDB version 10 and
// the CRC-64 of both.
func withCRC(body []byte) string {
	b := append(append([]byte(nil), body...), 10, 0)
	return string(binary.LittleEndian.AppendUint64(b, rdb.CRC64(0, b)))
}

// Every error of RESTORE, and what it leaves, as redis-server 7.0.15 answers: both servers get
// the same commands, their replies and the keys left are compared.
func TestRestore_Errors_MatchRedis(t *testing.T) {
	rc, _ := startRedisDebug(t)
	s := testserver.Start(t, debugOn...)
	sc := s.Client(t)
	for _, c := range []*redis.Client{rc, sc} {
		dumpDo(t, c, "SET", "exists", "v")
		dumpDo(t, c, "RPUSH", "list", "a", "b")
	}
	good := dumpDo(t, rc, "DUMP", "list").(string)
	badCRC := good[:len(good)-1] + string(good[len(good)-1]^1)
	newer := []byte(good)
	newer[len(newer)-10] = 11
	cases := [][]any{
		{"RESTORE", "k", 0},
		{"RESTORE", "exists", 0, good},
		{"RESTORE", "exists", -1, good},
		{"RESTORE", "k", -1, good},
		{"RESTORE", "k", "abc", good},
		{"RESTORE", "k", 0, badCRC},
		{"RESTORE", "k", 0, string(newer)},
		{"RESTORE", "k", 0, "x"},
		{"RESTORE", "k", 0, ""},
		{"RESTORE", "k", 0, withCRC([]byte{0x63, 1, 2})},           // unknown type
		{"RESTORE", "k", 0, withCRC([]byte{18, 0})},                // a list of no node
		{"RESTORE", "k", 0, withCRC([]byte{2, 2, 1, 'a', 1, 'a'})}, // a set with a duplicate
		{"RESTORE", "k", 0, good, "IDLETIME", -1},
		{"RESTORE", "k", 0, good, "IDLETIME", "x"},
		{"RESTORE", "k", 0, good, "FREQ", 256},
		{"RESTORE", "k", 0, good, "FREQ", -1},
		{"RESTORE", "k", 0, good, "FREQ", 5, "IDLETIME", 5},
		{"RESTORE", "k", 0, good, "IDLETIME"},
		{"RESTORE", "k", 0, good, "BOGUS"},
		{"RESTORE", "exists", 0, good, "BOGUS"},
		{"RESTORE", "k", 1, good, "ABSTTL"},
		{"RESTORE", "exists", 1, good, "ABSTTL", "REPLACE"},
		{"RESTORE", "k2", 0, good, "REPLACE", "ABSTTL", "IDLETIME", 100},
		{"RESTORE", "k3", 0, good, "FREQ", 100},
		{"RESTORE-ASKING", "k4", 0, good},
		{"RESTORE-ASKING", "k4", 0, good},
	}
	for _, args := range cases {
		gv, ge := sc.Do(testCtx, args...).Result()
		wv, we := rc.Do(testCtx, args...).Result()
		if fmt.Sprint(gv, ge) != fmt.Sprint(wv, we) {
			t.Errorf("%.60q: got %v %v, want %v %v", fmt.Sprint(args), gv, ge, wv, we)
		}
	}
	// Nothing else was written, and the server still serves.
	gk, wk := sc.Keys(testCtx, "*").Val(), rc.Keys(testCtx, "*").Val()
	slices.Sort(gk)
	slices.Sort(wk)
	if fmt.Sprint(gk) != fmt.Sprint(wk) {
		t.Errorf("keys %v, want %v", gk, wk)
	}
	expect(t, sc, "PONG", "PING")
}

// MIGRATE of 10,000 keys of every kind, shardis to redis-server (KEYS, COPY, then REPLACE,
// with AUTH) and back (redis-server's MIGRATE into shardis): both ends reach the same DEBUG
// DIGEST, and the source is emptied unless COPY.
func TestMigrate_TenThousandKeys_BothWays(t *testing.T) {
	rc, rport := startRedisDebug(t, "--requirepass", "secret")
	s := testserver.Start(t, debugOn...)
	sc := s.Client(t, func(o *redis.Options) { o.ReadTimeout = 2 * time.Minute })
	rc.Options().ReadTimeout = 2 * time.Minute
	sport := s.Addr[strings.LastIndexByte(s.Addr, ':')+1:]
	const n = 10000
	keys := make([]any, 0, n)
	pipe := sc.Pipeline()
	for i := range n {
		k := fmt.Sprintf("key:%d", i)
		keys = append(keys, k)
		switch i % 5 {
		case 0:
			pipe.HSet(testCtx, k, "f", i, "g", "v")
		case 1:
			pipe.RPush(testCtx, k, i, "x")
		case 2:
			pipe.ZAdd(testCtx, k, redis.Z{Score: float64(i), Member: "m"})
		case 3:
			pipe.Set(testCtx, k, i, 0)
		default:
			pipe.SAdd(testCtx, k, i, "a", "b")
		}
	}
	pipe.Expire(testCtx, "key:3", 1000*time.Second)
	if _, err := pipe.Exec(testCtx); err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprint(dumpDo(t, sc, "DEBUG", "DIGEST"))
	migrate := func(c *redis.Client, port any, opts ...any) (any, error) {
		args := append([]any{"MIGRATE", "127.0.0.1", port, "", 0, 10000}, opts...)
		return c.Do(testCtx, append(append(args, "KEYS"), keys...)...).Result()
	}
	if v, err := migrate(sc, rport, "COPY", "AUTH", "secret"); err != nil || v != "OK" {
		t.Fatalf("MIGRATE COPY: %v %v", v, err)
	}
	if got := fmt.Sprint(dumpDo(t, rc, "DEBUG", "DIGEST")); got != want {
		t.Fatalf("redis digest after MIGRATE COPY %s, want %s", got, want)
	}
	if got := sc.DBSize(testCtx).Val(); got != n {
		t.Fatalf("DBSIZE after COPY %d", got)
	}
	if ttl := rc.TTL(testCtx, "key:3").Val(); ttl < 990*time.Second {
		t.Fatalf("TTL of a migrated key %v", ttl)
	}
	_, err := migrate(sc, rport, "COPY", "AUTH", "secret")
	if err == nil || err.Error() != "ERR Target instance replied with error: BUSYKEY Target key name already exists." {
		t.Fatalf("MIGRATE onto existing keys: %v", err)
	}
	_, err = migrate(sc, rport, "REPLACE", "AUTH", "wrong")
	if err == nil || !strings.HasPrefix(err.Error(), "ERR Target instance replied with error: WRONGPASS") {
		t.Fatalf("MIGRATE with a wrong password: %v", err)
	}
	if v, err := migrate(sc, rport, "REPLACE", "AUTH2", "default", "secret"); err != nil || v != "OK" {
		t.Fatalf("MIGRATE REPLACE: %v %v", v, err)
	}
	if got := sc.DBSize(testCtx).Val(); got != 0 {
		t.Fatalf("DBSIZE after MIGRATE %d, want 0", got)
	}
	if got := fmt.Sprint(dumpDo(t, rc, "DEBUG", "DIGEST")); got != want {
		t.Fatalf("redis digest after MIGRATE %s, want %s", got, want)
	}
	// And back: redis-server's MIGRATE into shardis.
	if v, err := migrate(rc, sport); err != nil || v != "OK" {
		t.Fatalf("redis MIGRATE to shardis: %v %v", v, err)
	}
	if got := fmt.Sprint(dumpDo(t, sc, "DEBUG", "DIGEST")); got != want {
		t.Fatalf("shardis digest after redis's MIGRATE %s, want %s", got, want)
	}
	if got := rc.DBSize(testCtx).Val(); got != 0 {
		t.Fatalf("redis DBSIZE after MIGRATE %d, want 0", got)
	}
	// The one-key form, NOKEY, and the errors before any transfer, as redis-server answers.
	dumpDo(t, rc, "SET", "one", "1")
	dumpDo(t, sc, "SET", "one", "1")
	for _, args := range [][]any{
		{"MIGRATE", "127.0.0.1", rport, "missing", 0, 1000},
		{"MIGRATE", "127.0.0.1", 1, "one", 0, 1000},
		{"MIGRATE", "127.0.0.1", rport, "one", "x", 1000},
		{"MIGRATE", "127.0.0.1", rport, "one", 0, "x"},
		{"MIGRATE", "127.0.0.1", rport, "one", 0, 1000, "BOGUS"},
		{"MIGRATE", "127.0.0.1", rport, "one", 0, 1000, "KEYS", "one"},
		{"MIGRATE", "127.0.0.1", rport, "one", 0, 1000, "AUTH"},
		{"MIGRATE", "127.0.0.1", rport, "one", 0, 1000, "AUTH2", "u"},
	} {
		gv, ge := sc.Do(testCtx, args...).Result()
		wv, we := rc.Do(testCtx, args...).Result()
		if fmt.Sprint(gv, ge) != fmt.Sprint(wv, we) {
			t.Errorf("%v: got %v %v, want %v %v", args, gv, ge, wv, we)
		}
	}
	if v, err := sc.Do(testCtx, "MIGRATE", "127.0.0.1", rport, "one", 3, 1000, "AUTH", "secret").Result(); err != nil || v != "OK" {
		t.Fatalf("MIGRATE one key: %v %v", v, err)
	}
	expect(t, rc, "1", "EVAL", "redis.call('SELECT', 3) return redis.call('GET', 'one')", 0)
}

// SAVE with rdb-format both writes dir/dump.rdb besides the checkpoint: redis-check-rdb
// accepts it, a redis-server started on it reaches shardis's DEBUG DIGEST, and so does a
// shardis loading it at start (--load-rdb: server.AfterOpen with rdbstore.LoadFile).
func TestSave_RDBFormat_RedisAndShardisLoadIt(t *testing.T) {
	check, err := exec.LookPath("redis-check-rdb")
	if err != nil {
		t.Skip("redis-check-rdb is not installed")
	}
	s := testserver.Start(t, append([]string{"--rdb-format", "both"}, debugOn...)...)
	sc := s.Client(t, func(o *redis.Options) { o.ReadTimeout = 2 * time.Minute })
	dumpFixture(t, sc)
	dumpDo(t, sc, "SETBIT", "frag", 1<<22, 1)
	dumpDo(t, sc, "SETRANGE", "frag", 100, "some bytes")
	dumpDo(t, sc, "SET", "gone", "x", "PX", 1)
	dumpDo(t, sc, "FUNCTION", "LOAD", "#!lua name=lib\nredis.register_function('hi', function() return 'hi' end)")
	conn := sc.Conn()
	defer conn.Close()
	for _, args := range [][]any{{"SELECT", 3}, {"HSET", "db3", "f", "v"}, {"SET", "db3s", "x", "EX", 1000}, {"SELECT", 0}} {
		if err := conn.Do(testCtx, args...).Err(); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(10 * time.Millisecond) // "gone" expires: SAVE leaves it out
	want := fmt.Sprint(dumpDo(t, sc, "DEBUG", "DIGEST"))
	expect(t, sc, "OK", "SAVE")
	file := filepath.Join(s.Dir, "dump.rdb")
	if _, err := os.Stat(filepath.Join(s.Dir, "checkpoint")); err != nil {
		t.Fatalf("rdb-format both: no checkpoint: %v", err)
	}
	if out, err := exec.Command(check, file).CombinedOutput(); err != nil || !strings.Contains(string(out), "RDB looks OK") {
		t.Fatalf("redis-check-rdb: %v\n%s", err, out)
	}
	// BGSAVE writes it too, and INFO persistence says it ran. The expiry of "gone" is a
	// change too: it must be done before the BGSAVE counts what it saved.
	waitFor(t, func() bool {
		if _, err := sc.Get(testCtx, "gone").Result(); err != redis.Nil {
			return false
		}
		return strings.Contains(sc.Info(testCtx, "stats").Val(), "expired_keys:1")
	})
	expect(t, sc, "Background saving started", "BGSAVE")
	waitFor(t, func() bool {
		return strings.Contains(sc.Info(testCtx, "persistence").Val(), "rdb_bgsave_in_progress:0")
	})
	if info := sc.Info(testCtx, "persistence").Val(); !strings.Contains(info, "rdb_last_bgsave_status:ok") ||
		!strings.Contains(info, "rdb_changes_since_last_save:0") {
		t.Fatalf("INFO persistence after BGSAVE:\n%s", info)
	}

	rdir := t.TempDir()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(rdir, "dump.rdb"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	bin, _ := exec.LookPath("redis-server")
	port := testserver.FreePort(t)
	cmd := exec.Command(bin, "--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--save", "",
		"--appendonly", "no", "--dir", rdir, "--enable-debug-command", "yes")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	rc := redis.NewClient(&redis.Options{Addr: "127.0.0.1:" + strconv.Itoa(port), DisableIdentity: true, Protocol: 2, MaxRetries: -1})
	defer rc.Close()
	waitFor(t, func() bool { return rc.Ping(testCtx).Err() == nil })
	if got := fmt.Sprint(dumpDo(t, rc, "DEBUG", "DIGEST")); got != want {
		t.Fatalf("redis-server on shardis's dump.rdb: digest %s, want %s", got, want)
	}

	s2 := testserver.StartLoading(t, t.TempDir(), debugOn...)
	s2.Srv.State().AfterOpen = func() error {
		// The server answers LOADING while the file loads.
		if err := s2.Client(t).Get(testCtx, "str").Err(); err == nil || !strings.HasPrefix(err.Error(), "LOADING") {
			t.Errorf("GET while loading: %v", err)
		}
		_, err := rdbstore.LoadFile(file, s2.Store, rdbstore.LoadOptions{})
		return err
	}
	if err := s2.Load(); err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(dumpDo(t, s2.Client(t), "DEBUG", "DIGEST")); got != want {
		t.Fatalf("shardis loading dump.rdb: digest %s, want %s", got, want)
	}
	expect(t, s2.Client(t), "hi", "FCALL", "hi", 0)
	expect(t, rc, "hi", "FCALL", "hi", 0)
	// redis-server's own SAVE of that data loads into shardis to the same digest.
	dumpDo(t, rc, "SAVE")
	s3 := testserver.StartLoading(t, t.TempDir(), debugOn...)
	s3.Srv.State().AfterOpen = func() error {
		_, err := rdbstore.LoadFile(filepath.Join(rdir, "dump.rdb"), s3.Store, rdbstore.LoadOptions{})
		return err
	}
	if err := s3.Load(); err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(dumpDo(t, s3.Client(t), "DEBUG", "DIGEST")); got != want {
		t.Fatalf("shardis loading redis-server's dump.rdb: digest %s, want %s", got, want)
	}
	// Into a store that holds keys, the load is refused.
	if _, err := rdbstore.LoadFile(file, s2.Store, rdbstore.LoadOptions{}); err == nil || !strings.Contains(err.Error(), "empty") {
		t.Fatalf("load into a non-empty store: %v", err)
	}
}

// snapshotRDB writes st's keys as an RDB file with fixed aux fields, to compare two stores.
func snapshotRDB(t *testing.T, st *shard.Store) []byte {
	t.Helper()
	snap, err := st.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	defer snap.Close()
	var b bytes.Buffer
	if err := rdbstore.WriteRDB(&b, snap, rdbstore.WriteOptions{Format: rdb.DefaultOptions(), Aux: rdb.AuxInfo{CTime: 1}}); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// RESTORE logs itself (absolute TTL, REPLACE): a binlog replay (a replica, a restart) builds
// the same keys; its keyspace event is "restore".
func TestRestore_BinlogReplayAndEvent(t *testing.T) {
	s := testserver.Start(t, "--shards", "4", "--notify-keyspace-events", "KEA")
	c := s.Client(t)
	sub := c.Subscribe(testCtx, "__keyevent@0__:restore")
	defer sub.Close()
	if _, err := sub.Receive(testCtx); err != nil {
		t.Fatal(err)
	}
	keys := dumpFixture(t, c)
	for _, k := range keys {
		p := dumpDo(t, c, "DUMP", k)
		dumpDo(t, c, "RESTORE", k+":copy", 100000, p)
		dumpDo(t, c, "RESTORE", k, 0, p, "REPLACE")
	}
	msg, err := sub.ReceiveMessage(testCtx)
	if err != nil || msg.Payload != keys[0]+":copy" {
		t.Fatalf("restore event %v %v", msg, err)
	}
	dst, ex := testserver.ReplayTarget(t, 4)
	for id := range s.Store.NumShards() {
		if _, err := ex.ReplayShard(s.Store, id); err != nil {
			t.Fatalf("replay shard %d: %v", id, err)
		}
	}
	if got, want := snapshotRDB(t, dst), snapshotRDB(t, s.Store); !bytes.Equal(got, want) {
		t.Fatalf("the replayed store differs: %d bytes, want %d", len(got), len(want))
	}
}

// RESTORE's IDLETIME and FREQ set what OBJECT IDLETIME and FREQ answer, as in Redis.
func TestRestore_IdleTimeAndFreq_SetAccess(t *testing.T) {
	s := testserver.Start(t)
	c := s.Client(t)
	dumpDo(t, c, "SET", "k", "v")
	p := dumpDo(t, c, "DUMP", "k")
	dumpDo(t, c, "RESTORE", "idle", 0, p, "IDLETIME", 1000)
	if v := dumpDo(t, c, "OBJECT", "IDLETIME", "idle").(int64); v < 1000 || v > 1100 {
		t.Fatalf("OBJECT IDLETIME %d, want about 1000", v)
	}
	dumpDo(t, c, "CONFIG", "SET", "maxmemory-policy", "allkeys-lfu")
	dumpDo(t, c, "RESTORE", "freq", 0, p, "FREQ", 100)
	expect(t, c, int64(100), "OBJECT", "FREQ", "freq")
}

// MIGRATE inside MULTI/EXEC or a script is refused (it would wait for the shards its own
// transaction holds), and the server goes on serving.
func TestMigrate_InMultiOrScript_Refused(t *testing.T) {
	_, rport := startRedisDebug(t)
	s := testserver.Start(t)
	c := s.Client(t, func(o *redis.Options) { o.ReadTimeout = 20 * time.Second })
	dumpDo(t, c, "SET", "a", "1")
	pipe := c.TxPipeline()
	mig := pipe.Do(testCtx, "MIGRATE", "127.0.0.1", rport, "a", 0, 1000, "COPY")
	_, _ = pipe.Exec(testCtx)
	if err := mig.Err(); err == nil || err.Error() != "ERR MIGRATE is not allowed inside MULTI/EXEC or scripts in shardis" {
		t.Fatalf("MIGRATE in MULTI: %v", err)
	}
	_, err := c.Do(testCtx, "EVAL", "return redis.call('MIGRATE', '127.0.0.1', ARGV[1], 'a', '0', '1000', 'COPY')", 0, rport).Result()
	if err == nil || !strings.HasPrefix(err.Error(), "ERR MIGRATE is not allowed inside MULTI/EXEC or scripts in shardis") {
		t.Fatalf("MIGRATE in a script: %v", err)
	}
	expect(t, c, "OK", "MIGRATE", "127.0.0.1", rport, "a", 0, 1000, "COPY")
}

// Under an LRU or LFU maxmemory-policy the RDB file carries each key's idle time or LFU
// counter, as Redis's does, and loading it (redis-server or shardis) gives them back.
func TestSave_RDBFormat_KeepsIdleAndFreq(t *testing.T) {
	for _, tc := range []struct{ policy, opt, read string }{
		{"allkeys-lru", "IDLETIME", "IDLETIME"},
		{"allkeys-lfu", "FREQ", "FREQ"},
	} {
		s := testserver.Start(t, "--rdb-format", "rdb", "--maxmemory-policy", tc.policy)
		c := s.Client(t)
		dumpDo(t, c, "SET", "k", "v")
		p := dumpDo(t, c, "DUMP", "k")
		dumpDo(t, c, "RESTORE", "old", 0, p, tc.opt, 200)
		expect(t, c, "OK", "SAVE")
		rdir := t.TempDir()
		data, err := os.ReadFile(filepath.Join(s.Dir, "dump.rdb"))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(rdir, "dump.rdb"), data, 0o644); err != nil {
			t.Fatal(err)
		}
		rc, _ := startRedisDebugIn(t, rdir, "--maxmemory-policy", tc.policy)
		s2 := testserver.StartLoading(t, t.TempDir(), "--maxmemory-policy", tc.policy)
		s2.Srv.State().AfterOpen = func() error {
			_, err := rdbstore.LoadFile(filepath.Join(s.Dir, "dump.rdb"), s2.Store, rdbstore.LoadOptions{})
			return err
		}
		if err := s2.Load(); err != nil {
			t.Fatal(err)
		}
		for name, cl := range map[string]*redis.Client{"redis-server": rc, "shardis": s2.Client(t)} {
			v, err := cl.Do(testCtx, "OBJECT", tc.read, "old").Int64()
			if err != nil || v < 200 || v > 260 {
				t.Errorf("%s, %s: OBJECT %s of the loaded key = %d %v, want about 200", tc.policy, name, tc.read, v, err)
			}
		}
	}
}
