package cmds_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"shardis/internal/testserver"
)

// The streams in testdata/acl were recorded from redis-server 7.0.15: ACL SETUSER's rules and
// errors, GETUSER/LIST/USERS/CAT/DRYRUN/GENPASS/LOG/HELP replies, AUTH and HELLO AUTH as a
// user, NOPERM for commands, keys (%R~ and %W~ too), channels, inside MULTI and in scripts,
// and the default user following CONFIG SET requirepass; scripts.cmds the checks options and
// scripts could route around (OBJECT and MEMORY USAGE keys, redis.call in EVAL and FCALL,
// channels from scripts, redis.acl_check_cmd's verdict). (Rules whose description lists
// several single commands are left out: Redis lists them in its hash table's order.)
func TestACL_MatchesRedis(t *testing.T) { replayRecorded(t, "testdata/acl") }

func aclCtx(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func mustDo(t *testing.T, ctx context.Context, c *redis.Client, args ...any) any {
	t.Helper()
	v, err := c.Do(ctx, args...).Result()
	if err != nil {
		t.Fatalf("%v: %v", args, err)
	}
	return v
}

// A go-redis client with a username authenticates with AUTH user pass (RESP2) or HELLO 3
// AUTH user pass (RESP3), and is then held to the user's key patterns.
func TestACL_ClientAuthAsUser(t *testing.T) {
	s := testserver.Start(t)
	ctx := aclCtx(t)
	admin := s.Client(t)
	mustDo(t, ctx, admin, "acl", "setuser", "alice", "on", ">secret", "~app:*", "+@all")
	mustDo(t, ctx, admin, "set", "other", "v")
	for _, proto := range []int{2, 3} {
		c := s.Client(t, func(o *redis.Options) { o.Username, o.Password, o.Protocol = "alice", "secret", proto })
		if who := mustDo(t, ctx, c, "acl", "whoami"); who != "alice" {
			t.Fatalf("RESP%d: ACL WHOAMI = %v, want alice", proto, who)
		}
		if err := c.Set(ctx, "app:1", "x", 0).Err(); err != nil {
			t.Fatalf("RESP%d: SET app:1: %v", proto, err)
		}
		err := c.Get(ctx, "other").Err()
		if err == nil || err.Error() != "NOPERM this user has no permissions to access one of the keys used as arguments" {
			t.Fatalf("RESP%d: GET other: %v", proto, err)
		}
		line := mustDo(t, ctx, c, "client", "info").(string)
		if !strings.Contains(line, " user=alice ") {
			t.Fatalf("RESP%d: CLIENT INFO has no user=alice: %q", proto, line)
		}
	}
	bad := s.Client(t, func(o *redis.Options) { o.Username, o.Password = "alice", "wrong" })
	if err := bad.Ping(ctx).Err(); err == nil || !strings.HasPrefix(err.Error(), "WRONGPASS") {
		t.Fatalf("wrong password: %v", err)
	}
}

// %R~ lets a command read but not write the keys it matches, %W~ the reverse; the access a
// command needs comes from its key specs (SET writes only, GET reads, LMOVE reads and
// writes its source).
func TestACL_ReadWriteKeyPatterns(t *testing.T) {
	s := testserver.Start(t)
	ctx := aclCtx(t)
	admin := s.Client(t)
	mustDo(t, ctx, admin, "acl", "setuser", "rw", "on", "nopass", "%R~r:*", "%W~w:*", "+@all")
	mustDo(t, ctx, admin, "set", "r:1", "v")
	mustDo(t, ctx, admin, "rpush", "r:list", "a")
	c := s.Client(t, func(o *redis.Options) { o.Username, o.Password = "rw", "x" })
	const keyErr = "NOPERM this user has no permissions to access one of the keys used as arguments"
	cases := []struct {
		args []any
		ok   bool
	}{
		{[]any{"get", "r:1"}, true},
		{[]any{"set", "r:1", "x"}, false},
		{[]any{"set", "w:1", "x"}, true},
		{[]any{"get", "w:1"}, false},
		{[]any{"exists", "w:1"}, true}, // EXISTS neither reads nor writes the value
		{[]any{"lmove", "r:list", "w:list", "left", "left"}, false},
		{[]any{"copy", "r:1", "w:2"}, true},
	}
	for _, tc := range cases {
		err := c.Do(ctx, tc.args...).Err()
		if err == redis.Nil {
			err = nil
		}
		if tc.ok && err != nil || !tc.ok && (err == nil || err.Error() != keyErr) {
			t.Errorf("%v: %v (want allowed: %v)", tc.args, err, tc.ok)
		}
	}
}

// Deleting a user closes its connections, as Redis does; other connections stay.
func TestACL_DeletedUserIsDisconnected(t *testing.T) {
	s := testserver.Start(t)
	ctx := aclCtx(t)
	admin := s.Client(t)
	mustDo(t, ctx, admin, "acl", "setuser", "bob", "on", ">pw", "~*", "+@all")
	rc := dialResp(t, s.Addr, false)
	if got := rc.do("auth", "bob", "pw"); got != "OK" {
		t.Fatalf("AUTH bob: %v", got)
	}
	if got := mustDo(t, ctx, admin, "acl", "deluser", "bob"); got != int64(1) {
		t.Fatalf("ACL DELUSER = %v", got)
	}
	_ = rc.c.SetReadDeadline(time.Now().Add(20 * time.Second))
	buf := make([]byte, 64)
	if n, err := rc.c.Read(buf); err == nil {
		t.Fatalf("bob's connection still open after ACL DELUSER: read %q", buf[:n])
	} else if ne, ok := err.(interface{ Timeout() bool }); ok && ne.Timeout() {
		t.Fatal("bob's connection still open 20s after ACL DELUSER")
	}
	if err := admin.Ping(ctx).Err(); err != nil {
		t.Fatalf("the default user's connection: %v", err)
	}
}

// ACL SAVE writes ACL LIST's lines to the aclfile; ACL LOAD reads them back (replacing every
// user, closing the connections of the users replaced), and a server started with the file
// has the same users.
func TestACL_SaveAndLoadFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "users.acl")
	if err := os.WriteFile(path, []byte("user default on nopass ~* &* +@all\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s := testserver.Start(t, "--aclfile", path)
	ctx := aclCtx(t)
	c := s.Client(t)
	mustDo(t, ctx, c, "acl", "setuser", "carol", "on", ">pw", "~c:*", "&news", "-@all", "+@read", "(+set ~s:*)")
	want := mustDo(t, ctx, c, "acl", "list")
	mustDo(t, ctx, c, "acl", "save")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := want.([]any)
	var b strings.Builder
	for _, l := range lines {
		b.WriteString(l.(string) + "\n")
	}
	if string(data) != b.String() {
		t.Fatalf("aclfile:\n%s\nwant ACL LIST's lines:\n%s", data, b.String())
	}
	mustDo(t, ctx, c, "acl", "deluser", "carol")
	mustDo(t, ctx, c, "acl", "load")
	if got := mustDo(t, ctx, c, "acl", "list"); strings.Join(toStrings(got), "\n") != strings.Join(toStrings(want), "\n") {
		t.Fatalf("after ACL LOAD: %v, want %v", got, want)
	}
	// A broken file changes nothing and says why.
	if err := os.WriteFile(path, []byte("user carol on +nosuch\nuser dave on\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	err = c.Do(ctx, "acl", "load").Err()
	if err == nil || !strings.Contains(err.Error(), path+":1: Unknown command or category name in ACL.") ||
		!strings.HasSuffix(err.Error(), "WARNING: ACL errors detected, no change to the previously active ACL rules was performed") {
		t.Fatalf("ACL LOAD of a broken file: %v", err)
	}
	if got := mustDo(t, ctx, c, "acl", "users"); strings.Join(toStrings(got), ",") != "carol,default" {
		t.Fatalf("users after a failed load: %v", got)
	}
}

func toStrings(v any) []string {
	var out []string
	for _, x := range v.([]any) {
		out = append(out, x.(string))
	}
	return out
}

// "user" lines in the config file (or --user on the command line) define users at start;
// requirepass then gives the default user its password, and CONFIG SET requirepass changes
// it, as Redis does.
func TestACL_UserDirectivesAndRequirePass(t *testing.T) {
	s := testserver.Start(t, "--requirepass", "adminpw", "--user", "svc", "on", ">svcpw", "~svc:*", "+@read", "+@write")
	ctx := aclCtx(t)
	anon := s.Client(t)
	if err := anon.Ping(ctx).Err(); err == nil || err.Error() != "NOAUTH Authentication required." {
		t.Fatalf("PING before AUTH: %v", err)
	}
	svc := s.Client(t, func(o *redis.Options) { o.Username, o.Password = "svc", "svcpw" })
	if err := svc.Set(ctx, "svc:1", "v", 0).Err(); err != nil {
		t.Fatalf("SET as svc: %v", err)
	}
	if err := svc.Do(ctx, "config", "get", "port").Err(); err == nil ||
		err.Error() != "NOPERM this user has no permissions to run the 'config|get' command" {
		t.Fatalf("CONFIG GET as svc: %v", err)
	}
	admin := s.Client(t, func(o *redis.Options) { o.Password = "adminpw" })
	mustDo(t, ctx, admin, "config", "set", "requirepass", "newpw")
	if err := s.Client(t, func(o *redis.Options) { o.Password = "adminpw" }).Ping(ctx).Err(); err == nil ||
		!strings.HasPrefix(err.Error(), "WRONGPASS") {
		t.Fatalf("the old requirepass still works: %v", err)
	}
	if err := s.Client(t, func(o *redis.Options) { o.Password = "newpw" }).Ping(ctx).Err(); err != nil {
		t.Fatalf("the new requirepass: %v", err)
	}
	mustDo(t, ctx, admin, "config", "set", "requirepass", "")
	if err := s.Client(t).Ping(ctx).Err(); err != nil {
		t.Fatalf("no requirepass: %v", err)
	}
}

// Denials land in ACL LOG with Redis's fields, like ones grouped into one entry with a count.
func TestACL_LogEntries(t *testing.T) {
	s := testserver.Start(t)
	ctx := aclCtx(t)
	admin := s.Client(t)
	mustDo(t, ctx, admin, "acl", "setuser", "eve", "on", ">pw", "~e:*", "+get")
	eve := s.Client(t, func(o *redis.Options) { o.Username, o.Password = "eve", "pw" })
	for range 2 {
		_ = eve.Get(ctx, "secret").Err()
	}
	_ = eve.Set(ctx, "e:1", "v", 0).Err()
	_ = admin.Do(ctx, "auth", "eve", "wrong").Err()
	entries := mustDo(t, ctx, admin, "acl", "log").([]any)
	if len(entries) != 3 {
		t.Fatalf("ACL LOG has %d entries, want 3: %v", len(entries), entries)
	}
	want := []map[string]any{
		{"count": int64(1), "reason": "auth", "context": "toplevel", "object": "auth", "username": "eve"},
		{"count": int64(1), "reason": "command", "context": "toplevel", "object": "set", "username": "eve"},
		{"count": int64(2), "reason": "key", "context": "toplevel", "object": "secret", "username": "eve"},
	}
	for i, e := range entries {
		fields := e.([]any)
		got := map[string]any{}
		for j := 0; j+1 < len(fields); j += 2 {
			got[fields[j].(string)] = fields[j+1]
		}
		for k, v := range want[i] {
			if got[k] != v {
				t.Errorf("entry %d: %s = %v, want %v", i, k, got[k], v)
			}
		}
		if ci, _ := got["client-info"].(string); !strings.HasPrefix(ci, "id=") {
			t.Errorf("entry %d: client-info %q", i, ci)
		}
	}
	if n := len(mustDo(t, ctx, admin, "acl", "log", "1").([]any)); n != 1 {
		t.Fatalf("ACL LOG 1 gave %d entries", n)
	}
	mustDo(t, ctx, admin, "acl", "log", "reset")
	if n := len(mustDo(t, ctx, admin, "acl", "log").([]any)); n != 0 {
		t.Fatalf("ACL LOG after RESET has %d entries", n)
	}
}

// Taking a channel away from a user closes its connections subscribed to it; a queued
// command no longer allowed at EXEC fails with Redis's NOPERM text; AUTH pipelined after a
// script runs after it, so the script is checked against the user it was sent as.
func TestACL_ChangesWhileConnected(t *testing.T) {
	s := testserver.Start(t)
	ctx := aclCtx(t)
	admin := s.Client(t)
	mustDo(t, ctx, admin, "acl", "setuser", "sub", "on", ">pw", "~*", "&news*", "+@all")

	rc := dialResp(t, s.Addr, false)
	rc.do("auth", "sub", "pw")
	rc.send("subscribe", "news1")
	rc.next()
	mustDo(t, ctx, admin, "acl", "setuser", "sub", "resetchannels", "&other")
	_ = rc.c.SetReadDeadline(time.Now().Add(20 * time.Second))
	buf := make([]byte, 64)
	if n, err := rc.c.Read(buf); err == nil {
		t.Fatalf("subscriber still open after its channel was taken away: read %q", buf[:n])
	}

	tx := dialResp(t, s.Addr, false)
	tx.do("auth", "sub", "pw")
	tx.do("multi")
	tx.do("incr", "n")
	mustDo(t, ctx, admin, "acl", "setuser", "sub", "-incr")
	got := tx.do("exec")
	reply, ok := got.([]any)
	want := "NOPERM ACLs rules changed between the moment the transaction was accumulated and the EXEC call. This command is no longer allowed for the following reason: no permission to execute the command or subcommand"
	if !ok || len(reply) != 1 || !strings.Contains(fmtAny(reply[0]), want) {
		t.Fatalf("EXEC after the permission was taken away: %#v", got)
	}

	mustDo(t, ctx, admin, "acl", "setuser", "sub", "-@scripting", "+eval")
	pipe := dialResp(t, s.Addr, false)
	pipe.do("auth", "sub", "pw")
	pipe.send("eval", "return redis.call('incr', 'n')", "0")
	pipe.send("auth", "default", "x")
	if r1, r2 := pipe.read(), pipe.read(); !strings.Contains(fmtAny(r1), "can't run this command or subcommand") || r2 != "OK" {
		t.Fatalf("a script pipelined before AUTH ran as the next user: %#v, %#v", r1, r2)
	}
}

func fmtAny(v any) string {
	s, _ := v.(string)
	return s
}

// SLOWLOG keeps no password: ACL SETUSER's user and rules, AUTH's arguments, HELLO AUTH's
// user and password and CONFIG SET's requirepass/masterauth/masteruser values are
// "(redacted)", as Redis keeps them.
func TestACL_SlowlogRedactsSecrets(t *testing.T) {
	s := testserver.Start(t)
	ctx := aclCtx(t)
	c := s.Client(t)
	mustDo(t, ctx, c, "config", "set", "slowlog-log-slower-than", "0")
	mustDo(t, ctx, c, "acl", "setuser", "x", "on", ">hunter2", "+@all")
	mustDo(t, ctx, c, "auth", "x", "hunter2")
	mustDo(t, ctx, c, "hello", "2", "auth", "x", "hunter2")
	mustDo(t, ctx, c, "config", "set", "masterauth", "hunter2", "maxclients", "10000")
	mustDo(t, ctx, c, "config", "set", "slowlog-log-slower-than", "-1")
	entries := mustDo(t, ctx, c, "slowlog", "get", "-1").([]any)
	var seen []string
	for _, e := range entries {
		var words []string
		for _, a := range e.([]any)[3].([]any) {
			words = append(words, a.(string))
		}
		seen = append(seen, strings.Join(words, " "))
	}
	all := strings.Join(seen, "\n")
	if strings.Contains(all, "hunter2") {
		t.Fatalf("SLOWLOG shows a password:\n%s", all)
	}
	for _, want := range []string{"acl setuser (redacted) (redacted) (redacted) (redacted)", "auth (redacted) (redacted)",
		"hello 2 auth (redacted) (redacted)", "config set masterauth (redacted) maxclients 10000"} {
		if !strings.Contains(all, want) {
			t.Errorf("SLOWLOG has no %q:\n%s", want, all)
		}
	}
}

// CLIENT KILL USER closes the connections of a user (and refuses a user that does not exist).
func TestACL_ClientKillUser(t *testing.T) {
	s := testserver.Start(t)
	ctx := aclCtx(t)
	admin := s.Client(t)
	mustDo(t, ctx, admin, "acl", "setuser", "k", "on", "nopass", "+@all", "~*")
	rc := dialResp(t, s.Addr, false)
	rc.do("auth", "k", "x")
	if got := mustDo(t, ctx, admin, "client", "kill", "user", "k"); got != int64(1) {
		t.Fatalf("CLIENT KILL USER k = %v", got)
	}
	if err := admin.Do(ctx, "client", "kill", "user", "nosuch").Err(); err == nil || err.Error() != "ERR No such user 'nosuch'" {
		t.Fatalf("CLIENT KILL USER nosuch: %v", err)
	}
	if err := admin.Ping(ctx).Err(); err != nil {
		t.Fatalf("the default user's connection was killed: %v", err)
	}
}

// MONITOR shows AUTH and HELLO with their secrets redacted, as Redis does, and no admin
// command (ACL SETUSER).
func TestACL_MonitorRedactsSecrets(t *testing.T) {
	s := testserver.Start(t)
	ctx := aclCtx(t)
	mon := testserver.Monitor(t, s.Addr)
	c := s.Client(t)
	mustDo(t, ctx, c, "acl", "setuser", "m", "on", ">hunter2", "+@all")
	mustDo(t, ctx, c, "auth", "m", "hunter2")
	mustDo(t, ctx, c, "hello", "2", "auth", "m", "hunter2")
	mustDo(t, ctx, c, "echo", "last")
	_ = mon.SetReadDeadline(time.Now().Add(20 * time.Second))
	var got strings.Builder
	buf := make([]byte, 4096)
	for !strings.Contains(got.String(), `"echo" "last"`) {
		n, err := mon.Read(buf)
		if err != nil {
			t.Fatalf("reading MONITOR: %v (so far %q)", err, got.String())
		}
		got.Write(buf[:n])
	}
	out := got.String()
	for _, want := range []string{`"auth" "(redacted)" "(redacted)"`, `"hello" "2" "auth" "(redacted)" "(redacted)"`} {
		if !strings.Contains(out, want) {
			t.Errorf("MONITOR has no %s:\n%s", want, out)
		}
	}
	if strings.Contains(out, "hunter2") || strings.Contains(out, "setuser") {
		t.Errorf("MONITOR shows a secret or an admin command:\n%s", out)
	}
}
