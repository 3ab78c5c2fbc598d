package cmds_test

import (
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"

	"shardis/internal/testserver"
)

// startRedisDebug starts a reference redis-server with DEBUG enabled (DIGEST-VALUE).
func startRedisDebug(t *testing.T, extra ...string) (*redis.Client, int) {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		t.Skip("redis-server is not installed")
	}
	port := testserver.FreePort(t)
	args := append([]string{"--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--save", "",
		"--appendonly", "no", "--dir", t.TempDir(), "--enable-debug-command", "yes"}, extra...)
	cmd := exec.Command(bin, args...)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	rc := redis.NewClient(&redis.Options{Addr: "127.0.0.1:" + strconv.Itoa(port), DisableIdentity: true,
		Protocol: 2, MaxRetries: -1})
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
	// Replies that read the stream's groups agree too.
	for _, args := range [][]any{
		{"XINFO", "GROUPS", "stream"}, {"XPENDING", "stream", "g1"},
		{"XPENDING", "stream", "g1", "-", "+", 100},
	} {
		got, want := fmt.Sprint(dumpDo(t, sc, args...)), fmt.Sprint(dumpDo(t, rc, args...))
		if got != want {
			t.Errorf("%v:\n got  %s\n want %s", args, got, want)
		}
	}
	expectNil(t, sc, "DUMP", "missing")
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
