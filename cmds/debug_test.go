package cmds_test

import (
	"fmt"
	"math/rand/v2"
	"os/exec"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"shardis/cmds"
	"shardis/internal/testserver"
)

var debugOn = []string{"--enable-debug-command", "yes"}

// The replies of DEBUG's subcommands, recorded from redis-server 7.0.15 with
// enable-debug-command yes: DIGEST and DIGEST-VALUE of every type (so digests match Redis's
// for the same data), POPULATE, ERROR, PROTOCOL, RELOAD, the argument errors, and the
// subcommands shardis does not have.
func TestDebug_RepliesAsRedis(t *testing.T) { replayStreams(t, "testdata/debug", false, debugOn...) }

// DEBUG PROTOCOL's RESP3 types (attribute, push, map, set, double, big number, verbatim).
func TestDebug_RESP3RepliesAsRedis(t *testing.T) {
	replayStreams(t, "testdata/debug3", true, debugOn...)
}

// With the default enable-debug-command no, DEBUG is refused with Redis's error (after the
// arity check), inside MULTI too, which then aborts.
func TestDebug_RefusedByDefault(t *testing.T) { replayRecorded(t, "testdata/debugguard") }

// enable-debug-command local lets a loopback client run DEBUG; it is not settable at run time
// (immutable, as in Redis).
func TestDebug_LocalAllowsLoopback(t *testing.T) {
	s := testserver.Start(t, "--enable-debug-command", "local")
	r := connDial(t, s.Addr)
	r.do("+OK\r\n", "DEBUG", "SLEEP", "0")
	r.do("-ERR CONFIG SET failed (possibly related to argument 'enable-debug-command') - can't set immutable config\r\n",
		"CONFIG", "SET", "enable-debug-command", "yes")
}

func TestDebug_ProtectedAllowed(t *testing.T) {
	for _, tc := range []struct {
		setting, addr string
		unix, want    bool
	}{
		{"no", "127.0.0.1:5000", false, false},
		{"no", "", true, false},
		{"yes", "10.1.2.3:5000", false, true},
		{"local", "127.0.0.1:5000", false, true},
		{"local", "[::1]:5000", false, true},
		{"local", "", true, true},
		{"local", "10.1.2.3:5000", false, false},
		{"local", "127.0.0.2:5000", false, false}, // Redis's islocalClient: exactly 127.0.0.1 or ::1
	} {
		if got := cmds.ProtectedAllowed(tc.setting, tc.unix, tc.addr); got != tc.want {
			t.Errorf("ProtectedAllowed(%q, unix %v, %q) = %v", tc.setting, tc.unix, tc.addr, got)
		}
	}
}

// DEBUG HELP lists the subcommands that work, each of which is known (no "unknown
// subcommand" error for the name HELP shows); SLEEP sleeps and reads its number as strtod.
func TestDebug_HelpAndSleep(t *testing.T) {
	s := testserver.Start(t, debugOn...)
	c := s.Client(t)
	help, err := c.Do(testCtx, "DEBUG", "HELP").StringSlice()
	if err != nil {
		t.Fatal(err)
	}
	if len(help) < 10 || help[0] != "DEBUG <subcommand> [<arg> [value] [opt] ...]. Subcommands are:" ||
		help[len(help)-2] != "HELP" {
		t.Fatalf("DEBUG HELP: %q", help)
	}
	// Each subcommand HELP shows, called as its synopsis says ("0" for every <argument>, no
	// optional one), is known: it may fail on the value, never as an unknown subcommand.
	arg := regexp.MustCompile(`^<.*>$`)
	for _, line := range help[1 : len(help)-2] {
		if strings.HasPrefix(line, " ") {
			continue
		}
		args := []any{"DEBUG"}
		for i, f := range strings.Fields(line) {
			switch {
			case i == 0:
				args = append(args, f)
			case arg.MatchString(f):
				args = append(args, "0")
			}
		}
		if err := c.Do(testCtx, args...).Err(); err != nil && strings.Contains(err.Error(), "unknown subcommand") {
			t.Errorf("%v (HELP: %q): %v", args, line, err)
		}
	}
	start := time.Now()
	if err := c.Do(testCtx, "DEBUG", "SLEEP", "0.2").Err(); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d < 200*time.Millisecond {
		t.Fatalf("DEBUG SLEEP 0.2 returned after %v", d)
	}
	if err := c.Do(testCtx, "DEBUG", "SLEEP", "abc").Err(); err != nil { // strtod: no number is 0
		t.Fatal(err)
	}
}

// DEBUG OBJECT answers in Redis's shape, for each type; lru_seconds_idle is OBJECT IDLETIME.
func TestDebug_ObjectShape(t *testing.T) {
	s := testserver.Start(t, debugOn...)
	c := s.Client(t)
	c.Set(testCtx, "int", "42", 0)
	c.Set(testCtx, "str", "hello", 0)
	c.RPush(testCtx, "list", "a", "bb", "ccc")
	c.SAdd(testCtx, "set", "x")
	c.HSet(testCtx, "hash", "f", "v")
	c.ZAdd(testCtx, "zset", redis.Z{Score: 1, Member: "m"})
	common := `^Value at:0x[0-9a-f]+ refcount:%s encoding:%s serializedlength:[1-9][0-9]* lru:[0-9]+ lru_seconds_idle:[0-9]+%s$`
	for _, tc := range []struct{ key, refcount, encoding, extra string }{
		{"int", "2147483647", "int", ""},
		{"str", "1", "embstr", ""},
		{"list", "1", "quicklist", ` ql_nodes:1 ql_avg_node:3\.00 ql_listpack_max:-2 ql_compressed:0 ql_uncompressed_size:6`},
		{"set", "1", "hashtable", ""},
		{"hash", "1", "listpack", ""}, // as Redis 7.0 holds a small hash
		{"zset", "1", "listpack", ""},
	} {
		got, err := c.Do(testCtx, "DEBUG", "OBJECT", tc.key).Text()
		if err != nil {
			t.Fatal(err)
		}
		if !regexp.MustCompile(fmt.Sprintf(common, tc.refcount, tc.encoding, tc.extra)).MatchString(got) {
			t.Errorf("DEBUG OBJECT %s: %q", tc.key, got)
		}
	}
	// DEBUG LISTPACK prints a listpack hash (to the log here) and refuses any other value.
	if got, err := c.Do(testCtx, "DEBUG", "LISTPACK", "hash").Text(); err != nil || got != "Listpack structure printed on stdout" {
		t.Errorf("DEBUG LISTPACK hash: %q %v", got, err)
	}
	if err := c.Do(testCtx, "DEBUG", "LISTPACK", "set").Err(); err == nil || err.Error() != "ERR Not a listpack encoded object." {
		t.Errorf("DEBUG LISTPACK set: %v", err)
	}
	// DEBUG OBJECT does not touch the key: OBJECT IDLETIME is left as it was.
	if err := c.Do(testCtx, "DEBUG", "OBJECT", "str").Err(); err != nil {
		t.Fatal(err)
	}
}

// SET-ACTIVE-EXPIRE 0 stops the TTL workers' deletions (the expired key stays counted by
// DBSIZE, while reads no longer see it); 1 lets them delete it.
func TestDebug_SetActiveExpire(t *testing.T) {
	s := testserver.Start(t, append(debugOn, "--hz", "100")...)
	c := s.Client(t)
	if err := c.Do(testCtx, "DEBUG", "SET-ACTIVE-EXPIRE", "0").Err(); err != nil {
		t.Fatal(err)
	}
	c.Set(testCtx, "k", "v", 20*time.Millisecond)
	// Several TTL passes (hz 100) after the key expired: none deletes it.
	time.Sleep(300 * time.Millisecond)
	if n := c.DBSize(testCtx).Val(); n != 1 {
		t.Fatalf("DBSIZE %d with active expiry off, want the expired key still there", n)
	}
	if err := c.Do(testCtx, "DEBUG", "SET-ACTIVE-EXPIRE", "1").Err(); err != nil {
		t.Fatal(err)
	}
	for i := 0; c.DBSize(testCtx).Val() != 0; i++ {
		if i == 1000 {
			t.Fatal("the TTL worker did not delete the expired key after SET-ACTIVE-EXPIRE 1")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// RELOAD and LOADAOF keep the dataset (its digest is the same), which a restart reads back;
// POPULATE's keys are durable; CHANGE-REPL-ID gives INFO a new master_replid.
func TestDebug_ReloadPopulateAndReplID(t *testing.T) {
	dir := t.TempDir()
	s := testserver.StartIn(t, dir, debugOn...)
	c := s.Client(t)
	c.HSet(testCtx, "h", "f", "v")
	c.ZAdd(testCtx, "z", redis.Z{Score: 2.5, Member: "m"})
	if err := c.Do(testCtx, "DEBUG", "POPULATE", "1000", "p", "16").Err(); err != nil {
		t.Fatal(err)
	}
	if n := c.DBSize(testCtx).Val(); n != 1002 {
		t.Fatalf("DBSIZE after POPULATE 1000: %d", n)
	}
	before := c.Do(testCtx, "DEBUG", "DIGEST").String()
	for _, sub := range []string{"RELOAD", "LOADAOF"} {
		if err := c.Do(testCtx, "DEBUG", sub).Err(); err != nil {
			t.Fatalf("DEBUG %s: %v", sub, err)
		}
		if after := c.Do(testCtx, "DEBUG", "DIGEST").String(); after != before {
			t.Fatalf("DEBUG %s changed the digest: %s, then %s", sub, before, after)
		}
	}
	id := func(c *redis.Client) string {
		_, f := infoParse(t, c.Info(testCtx, "replication").Val())
		return f["master_replid"]
	}
	old := id(c)
	if err := c.Do(testCtx, "DEBUG", "CHANGE-REPL-ID").Err(); err != nil {
		t.Fatal(err)
	}
	if now := id(c); now == old || len(now) != 40 {
		t.Fatalf("master_replid %q after CHANGE-REPL-ID (was %q)", now, old)
	}
	s.Stop()
	s = testserver.StartIn(t, dir, debugOn...)
	c = s.Client(t)
	if after := c.Do(testCtx, "DEBUG", "DIGEST").String(); after != before {
		t.Fatalf("the digest after a restart: %s, before %s", after, before)
	}
	if v := c.Get(testCtx, "p:999").Val(); v != "value:999\x00\x00\x00\x00\x00\x00\x00" {
		t.Fatalf("p:999 = %q", v)
	}
}

// DEBUG DIGEST and DIGEST-VALUE give redis-server 7.0.15's digests for the same data: the same
// random commands over every type (integer-looking and binary values, scores of every kind,
// expiries, two databases, SWAPDB) sent to both, then the whole dataset's digest and each
// key's compared.
func TestDebug_DigestMatchesRedis(t *testing.T) {
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		t.Skip("redis-server is not installed")
	}
	port := testserver.FreePort(t)
	cmd := exec.Command(bin, "--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--save", "",
		"--appendonly", "no", "--dir", t.TempDir(), "--enable-debug-command", "yes")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	rc := redis.NewClient(&redis.Options{Addr: "127.0.0.1:" + strconv.Itoa(port), DisableIdentity: true,
		Protocol: 2, MaxRetries: -1})
	defer rc.Close()
	waitFor(t, func() bool { return rc.Ping(testCtx).Err() == nil })
	s := testserver.Start(t, debugOn...)
	// One connection each: SELECT must stay on it.
	rconn, sconn := rc.Conn(), s.Client(t).Conn()
	defer rconn.Close()
	defer sconn.Close()

	rnd := rand.New(rand.NewPCG(7, 7))
	key := func() string { return fmt.Sprintf("k%d", rnd.IntN(24)) }
	member := func() string {
		switch rnd.IntN(4) {
		case 0:
			return strconv.Itoa(rnd.IntN(1000) - 500) // integer-looking: Redis's intsets, listpack integers
		case 1:
			return string([]byte{0, byte(rnd.IntN(256)), '\n', 0xff})
		}
		return fmt.Sprintf("m%d", rnd.IntN(40))
	}
	score := func() string {
		switch rnd.IntN(5) {
		case 0:
			return strconv.Itoa(rnd.IntN(100) - 50)
		case 1:
			return "inf"
		case 2:
			return fmt.Sprintf("%g", rnd.NormFloat64()*1e20)
		}
		return fmt.Sprintf("%.3f", rnd.Float64()*10-5)
	}
	for i := range 3000 {
		var args []any
		switch rnd.IntN(16) {
		case 0:
			args = []any{"SET", key(), member()}
		case 1:
			args = []any{"APPEND", key(), member()}
		case 2:
			args = []any{"INCRBY", key(), rnd.IntN(100)}
		case 3:
			args = []any{"HSET", key(), member(), member()}
		case 4:
			args = []any{"HDEL", key(), member()}
		case 5:
			args = []any{"RPUSH", key(), member(), member()}
		case 6:
			args = []any{"LPUSH", key(), member()}
		case 7:
			args = []any{"LPOP", key()}
		case 8:
			args = []any{"SADD", key(), member(), member()}
		case 9:
			args = []any{"SREM", key(), member()}
		case 10:
			args = []any{"ZADD", key(), score(), member()}
		case 11:
			args = []any{"ZREM", key(), member()}
		case 12:
			args = []any{"EXPIRE", key(), 1000 + rnd.IntN(1000)}
		case 13:
			args = []any{"DEL", key()}
		case 14:
			args = []any{"SELECT", rnd.IntN(2)}
		default:
			if i%500 == 0 {
				args = []any{"SWAPDB", 0, 1}
			} else {
				args = []any{"ZINCRBY", key(), score(), member()}
			}
		}
		rerr := rconn.Do(testCtx, args...).Err()
		serr := sconn.Do(testCtx, args...).Err()
		if (rerr == nil) != (serr == nil) {
			t.Fatalf("%v: redis-server %v, shardis %v", args, rerr, serr)
		}
	}
	digest := func(c *redis.Conn, args ...any) string {
		t.Helper()
		v, err := c.Do(testCtx, args...).Result()
		if err != nil {
			t.Fatal(err)
		}
		return fmt.Sprint(v)
	}
	if r, s := digest(rconn, "DEBUG", "DIGEST"), digest(sconn, "DEBUG", "DIGEST"); r != s || r == strings.Repeat("0", 40) {
		t.Errorf("DEBUG DIGEST: redis-server %s, shardis %s", r, s)
	}
	for db := range 2 {
		rconn.Do(testCtx, "SELECT", db)
		sconn.Do(testCtx, "SELECT", db)
		args := []any{"DEBUG", "DIGEST-VALUE"}
		for k := range 24 {
			args = append(args, fmt.Sprintf("k%d", k))
		}
		if r, s := digest(rconn, args...), digest(sconn, args...); r != s {
			t.Errorf("db %d DEBUG DIGEST-VALUE:\nredis-server %s\nshardis      %s", db, r, s)
		}
	}
}

// POPULATE with values of megabytes gives each key its own value: a big value is referenced
// by the transaction until the commit, so the buffer of one key must not be reused for the
// next.
func TestDebug_PopulateBigValuesEachKeyItsOwn(t *testing.T) {
	s := testserver.Start(t, debugOn...)
	c := s.Client(t)
	if err := c.Do(testCtx, "DEBUG", "POPULATE", "3", "big", strconv.Itoa(2<<20)).Err(); err != nil {
		t.Fatal(err)
	}
	for j := range 3 {
		key := "big:" + strconv.Itoa(j)
		if got := c.GetRange(testCtx, key, 0, 7).Val(); got != "value:"+strconv.Itoa(j)+"\x00" {
			t.Errorf("%s starts with %q", key, got)
		}
		if n := c.StrLen(testCtx, key).Val(); n != 2<<20 {
			t.Errorf("%s is %d bytes long", key, n)
		}
	}
}

// DEBUG POPULATE commits as it goes: 200,000 values of 1,000 bytes (190 MB) held for one commit
// grew the heap by twice that; now by a few of its commits' worth. Every key is there after.
func TestDebug_PopulateManyBigValues_HeapBounded(t *testing.T) {
	// The key cache keeps what commits wrote, up to its size: small, so that the heap's growth
	// is what the command holds.
	s := testserver.Start(t, append(debugOn, "--key-cache-size", "1mb")...)
	c := s.Client(t, func(o *redis.Options) { o.ReadTimeout = 5 * time.Minute })
	const n, size = 200_000, 1000
	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	stop := heapPeak()
	err := c.Do(testCtx, "DEBUG", "POPULATE", n, "p", size).Err()
	peak := stop()
	if err != nil {
		t.Fatal(err)
	}
	growth := int64(peak) - int64(before.HeapAlloc)
	t.Logf("heap peak growth %.1f MB for %d MB of values (live before %d MB)", float64(growth)/(1<<20), n*size>>20, before.HeapAlloc>>20)
	// Held for one commit, the values alone would grow it by twice their 190 MB; the bound
	// leaves room for what other tests of the package allocate meanwhile (122 MB seen once).
	if growth > 250<<20 {
		t.Errorf("the heap grew by %d MB during DEBUG POPULATE of %d MB", growth>>20, n*size>>20)
	}
	if got := c.DBSize(testCtx).Val(); got != n {
		t.Fatalf("DBSIZE %d, want %d", got, n)
	}
	if got := c.StrLen(testCtx, "p:199999").Val(); got != size {
		t.Fatalf("STRLEN p:199999 = %d", got)
	}
}
