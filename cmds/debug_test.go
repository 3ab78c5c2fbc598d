package cmds_test

import (
	"fmt"
	"regexp"
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
		{"list", "1", "quicklist", ` ql_nodes:3 ql_avg_node:1\.00 ql_listpack_max:-2 ql_compressed:0 ql_uncompressed_size:6`},
		{"set", "1", "hashtable", ""},
		{"hash", "1", "hashtable", ""},
		{"zset", "1", "skiplist", ""},
	} {
		got, err := c.Do(testCtx, "DEBUG", "OBJECT", tc.key).Text()
		if err != nil {
			t.Fatal(err)
		}
		if !regexp.MustCompile(fmt.Sprintf(common, tc.refcount, tc.encoding, tc.extra)).MatchString(got) {
			t.Errorf("DEBUG OBJECT %s: %q", tc.key, got)
		}
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
