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
// and the default user following CONFIG SET requirepass. (Rules whose description lists
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
