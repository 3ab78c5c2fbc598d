package cmds_test

import (
	"bytes"
	"fmt"
	"strconv"
	"testing"

	"github.com/redis/go-redis/v9"

	"shardis/codec"
	"shardis/internal/testserver"
	"shardis/shard"
)

// The replies of PFADD, PFCOUNT, PFMERGE, PFDEBUG and PFSELFTEST, their errors (other types,
// strings that are not HLLs, corrupt HLLs), the cache, TTLs, MULTI and scripts, recorded from
// redis-server 7.0.15 (testdata/hll).
func TestHLL_Replies_MatchRedis(t *testing.T) { replayRecorded(t, "testdata/hll") }

// pfaddAll adds n elements to key in batches of 1000.
func pfaddAll(t *testing.T, c *redis.Client, key string, n int) {
	t.Helper()
	for i := 0; i < n; i += 1000 {
		batch := make([]any, 0, 1000)
		for j := i; j < min(i+1000, n); j++ {
			batch = append(batch, fmt.Sprintf("visitor:%d", j))
		}
		if err := c.PFAdd(testCtx, key, batch...).Err(); err != nil {
			t.Fatal(err)
		}
	}
}

// An HLL of 50,000 elements built on redis-server and moved here with GET and SET gives
// Redis's PFCOUNT (and the same bytes once the count is cached); built here by PFADD it has
// Redis's bytes. The same for a sparse one of 300 elements.
func TestHLL_MovedFromRedis_SameCountAndBytes(t *testing.T) {
	rc := startRedis(t)
	sc := testserver.Start(t).Client(t)
	for _, n := range []int{300, 50000} {
		key := "visitors" + strconv.Itoa(n)
		pfaddAll(t, rc, key, n)
		pfaddAll(t, sc, key, n)
		fromRedis, err := rc.Get(testCtx, key).Bytes()
		if err != nil {
			t.Fatal(err)
		}
		built, err := sc.Get(testCtx, key).Bytes()
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(built, fromRedis) {
			t.Fatalf("%d elements: PFADD here made %d bytes unlike Redis's %d", n, len(built), len(fromRedis))
		}
		moved := "moved" + strconv.Itoa(n)
		if err := sc.Set(testCtx, moved, fromRedis, 0).Err(); err != nil {
			t.Fatal(err)
		}
		want := rc.PFCount(testCtx, key).Val()
		if got, err := sc.PFCount(testCtx, moved).Result(); err != nil || got != want {
			t.Fatalf("%d elements: PFCOUNT of Redis's bytes = %d, %v; Redis says %d", n, got, err, want)
		}
		cached, _ := rc.Get(testCtx, key).Bytes()
		if got, _ := sc.Get(testCtx, moved).Bytes(); !bytes.Equal(got, cached) {
			t.Fatalf("%d elements: the cached count was not written as Redis writes it", n)
		}
		if got := sc.PFCount(testCtx, key, moved).Val(); got != want {
			t.Fatalf("%d elements: PFCOUNT of both = %d, want %d", n, got, want)
		}
	}
}

// Replaying the binlog of every PF write reproduces the same bytes, expire times and raw
// flags, even where the replaying server's hll-sparse-max-bytes differs from the one the
// writes ran under (a sparse HLL is logged whole).
func TestHLL_BinlogReplay_ReproducesBytes(t *testing.T) {
	s := testserver.Start(t)
	c := s.Client(t)
	for _, cmd := range [][]any{
		{"PFADD", "tiny", "a"}, {"PFADD", "empty"}, {"PFADD", "sparse", "a", "b", "c", "d"},
		{"PFCOUNT", "sparse"}, {"PFADD", "ttl", "x"}, {"EXPIRE", "ttl", 1000}, {"PFADD", "ttl", "y", "z"},
		{"PFMERGE", "ttl", "sparse"}, {"PFMERGE", "m", "sparse", "tiny", "nosuch"}, {"PFDEBUG", "TODENSE", "tiny"},
		{"PFADD", "tiny", "q"}, {"PFCOUNT", "tiny"}, {"PFADD", "tiny", "q"},
		{"CONFIG", "SET", "hll-sparse-max-bytes", "60"}, {"PFADD", "early", "1", "2", "3", "4", "5", "6", "7", "8", "9", "10", "11", "12", "13", "14", "15", "16", "17", "18", "19", "20"},
		{"PFMERGE", "m2", "sparse", "m"}, {"CONFIG", "SET", "hll-sparse-max-bytes", "3000"},
	} {
		if err := c.Do(testCtx, cmd...).Err(); err != nil {
			t.Fatalf("%v: %v", cmd, err)
		}
	}
	pfaddAll(t, c, "dense", 5000)
	c.PFCount(testCtx, "dense")
	pfaddAll(t, c, "dense", 5100)
	dst, dstSrv := testserver.ReplayTarget(t, 4)
	for id := range s.Store.NumShards() {
		if _, err := dstSrv.ReplayShard(s.Store, id); err != nil {
			t.Fatalf("shard %d: %v", id, err)
		}
	}
	dump := func(st *shard.Store) map[string]string {
		out := map[string]string{}
		for id := range st.NumShards() {
			if err := st.Do(id, func(tx *shard.Tx) {
				tx.ScanKeys(id, 0, nil, func(key []byte, m *codec.Meta) bool {
					out[string(key)] = fmt.Sprintf("%s %x exp=%d raw=%v", m.Type, m.Value, m.Expire, m.Raw)
					return true
				})
			}); err != nil {
				t.Fatal(err)
			}
		}
		return out
	}
	want, got := dump(s.Store), dump(dst)
	if len(want) != 8 {
		t.Fatalf("source holds %d keys, want 8", len(want))
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: replayed %.120s, want %.120s", k, got[k], v)
		}
	}
}

// A client tracking an HLL is told when another's PFADD or PFMERGE changes it and when a
// PFCOUNT writes its cached count (Redis signals the key modified), not when a PFCOUNT of
// several keys reads it, nor when a PFADD changes no register.
func TestHLL_Tracking_InvalidatesOnWritesOnly(t *testing.T) {
	s := testserver.Start(t)
	a := dialResp(t, s.Addr, true)
	b := dialResp(t, s.Addr, false)
	a.do("CLIENT", "TRACKING", "ON")
	b.do("PFADD", "h", "x", "y")
	b.do("PFADD", "other", "z")
	for _, step := range []struct {
		cmd  []string
		told bool
	}{
		{[]string{"PFCOUNT", "h"}, true}, // the cache was stale: written
		{[]string{"PFCOUNT", "h"}, false},
		{[]string{"PFCOUNT", "h", "other"}, false},
		{[]string{"PFADD", "h", "x"}, false},
		{[]string{"PFADD", "h", "new"}, true},
		{[]string{"PFMERGE", "h", "other"}, true},
	} {
		a.do("GET", "h")
		a.sync()
		b.do(step.cmd...)
		got := invalidated(t, a.sync())
		if told := len(got) == 1 && got[0] == "h"; told != step.told || len(got) > 1 {
			t.Fatalf("%v: invalidations %#v, want told=%v", step.cmd, got, step.told)
		}
	}
}
