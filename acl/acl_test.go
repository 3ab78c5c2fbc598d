package acl

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// testTable is a small command table: get (read string), set (write string), hget (read
// hash), hset (write hash), config with get and set (admin), auth (no_auth), select.
func testTable() *Table {
	bit := func(names ...string) uint64 {
		var b uint64
		for _, n := range names {
			b |= CategoryBit(n)
		}
		return b
	}
	config := &Command{Name: "config", Subs: []*Command{
		{Name: "config|get", Categories: bit("admin", "slow")},
		{Name: "config|set", Categories: bit("admin", "slow", "dangerous")},
	}}
	return NewTable([]*Command{
		{Name: "get", Categories: bit("read", "string", "fast")},
		{Name: "set", Categories: bit("write", "string", "slow")},
		{Name: "hget", Categories: bit("read", "hash", "fast")},
		{Name: "hset", Categories: bit("write", "hash", "fast")},
		{Name: "auth", Categories: bit("fast", "connection"), NoAuth: true},
		{Name: "select", Categories: bit("fast", "connection")},
		config,
	})
}

func TestMain(m *testing.M) {
	SetCommands(testTable)
	os.Exit(m.Run())
}

func setUser(t *testing.T, r *Registry, name string, ops ...string) *User {
	t.Helper()
	u, _, err := r.SetUser(name, ops)
	if err != nil {
		t.Fatalf("SETUSER %s %v: %v", name, ops, err)
	}
	return u
}

func args(s string) [][]byte {
	var out [][]byte
	for _, f := range strings.Fields(s) {
		out = append(out, []byte(f))
	}
	return out
}

// The describer gives the rules back as Redis writes them: categories that fit, then single
// commands, then first arguments.
func TestDescribe(t *testing.T) {
	var r Registry
	cases := []struct {
		ops  []string
		want string
	}{
		{nil, "off resetchannels -@all"},
		{[]string{"on", "~*", "&*", "+@all"}, "on ~* &* +@all"},
		{[]string{"reset", "+@string", "-set"}, "off sanitize-payload resetchannels -@all +get"},
		{[]string{"reset", "+@all", "-config|set", "-@hash"}, "off sanitize-payload resetchannels +@all -@hash -@dangerous"},
		{[]string{"reset", "+@read", "+@write"}, "off sanitize-payload resetchannels -@all +@read +@write"},
		{[]string{"reset", "+select|0", "+select|1", "%R~a*", "~b", "%W~b", "&c"}, "off sanitize-payload %R~a* ~b resetchannels &c -@all +select|0 +select|1"},
		{[]string{"reset", "(+get ~x)", "clearselectors", "(+set ~y)"}, "off sanitize-payload resetchannels -@all (~y resetchannels -@all +set)"},
	}
	for _, tc := range cases {
		u := setUser(t, &r, "u", tc.ops...)
		if got := u.Describe(); got != tc.want {
			t.Errorf("%v: %q, want %q", tc.ops, got, tc.want)
		}
	}
}

func TestRuleErrors(t *testing.T) {
	var r Registry
	cases := map[string]string{
		"+nosuch":        errUnknownCommand,
		"+@nosuch":       errUnknownCommand,
		"-config|nosuch": errUnknownCommand,
		"+config|get|x":  errFirstArgOfSub,
		"+select|":       errRuleSyntax,
		"%X~a":           errRuleSyntax,
		"!abc":           errBadHash,
		"<nope":          errNoSuchPass,
		"bogus":          errRuleSyntax,
		"(+get bogus)":   errRuleSyntax,
	}
	for op, want := range cases {
		_, _, err := r.SetUser("u", []string{op})
		if re, ok := err.(*RuleError); !ok || re.Msg != want || re.Rule != op {
			t.Errorf("%s: %v, want %q", op, err, want)
		}
	}
	if _, _, err := r.SetUser("u", []string{"~*", "~a"}); err == nil || err.Error() != errKeyAfterAll {
		t.Errorf("~a after ~*: %v", err)
	}
	// A failed SETUSER changes nothing.
	setUser(t, &r, "v", "on", "+get")
	if _, _, err := r.SetUser("v", []string{"+set", "+nosuch"}); err == nil {
		t.Fatal("no error")
	}
	if got := r.Get("v").Describe(); got != "on resetchannels -@all +get" {
		t.Fatalf("after a failed SETUSER: %q", got)
	}
}

func TestCheck(t *testing.T) {
	var r Registry
	tab := Commands()
	u := setUser(t, &r, "u", "on", "+get", "+set", "+select|0", "%R~r*", "%W~w*", "&ch*", "(+hget ~h*)")
	req := func(line string, keys []KeyRef, chans []ChannelRef) *Request {
		a := args(line)
		cmd := tab.Lookup(string(a[0]))
		if len(a) > 1 && tab.Lookup(string(a[0])+"|"+string(a[1])) != nil {
			cmd = tab.Lookup(string(a[0]) + "|" + string(a[1]))
		}
		return &Request{Cmd: cmd, Args: a, HasKeys: keys != nil, Keys: keys, Channels: chans}
	}
	read := []KeyRef{{Pos: 1, Perm: PermRead}}
	write := []KeyRef{{Pos: 1, Perm: PermWrite}}
	cases := []struct {
		r    *Request
		want Reason
		pos  int
	}{
		{req("get r1", read, nil), Allowed, 0},
		{req("get w1", read, nil), DeniedKey, 1},
		{req("set w1 v", write, nil), Allowed, 0},
		{req("set r1 v", write, nil), DeniedKey, 1},
		{req("hget h1 f", read, nil), Allowed, 0},   // the selector allows it
		{req("hget x1 f", read, nil), DeniedKey, 1}, // the selector's key, the root's command
		{req("hset h1 f v", write, nil), DeniedCommand, 0},
		{req("select 0", nil, nil), Allowed, 0},
		{req("select 1", nil, nil), DeniedCommand, 0},
		{req("auth a b", nil, nil), Allowed, 0}, // no_auth
		{req("config get x", nil, nil), DeniedCommand, 0},
		{req("get ch1", nil, []ChannelRef{{Pos: 1}}), Allowed, 0},
		{req("get x", nil, []ChannelRef{{Pos: 1}}), DeniedChannel, 1},
		{req("get ch*", nil, []ChannelRef{{Pos: 1, Pattern: true}}), Allowed, 0},
		{req("get ch1*", nil, []ChannelRef{{Pos: 1, Pattern: true}}), DeniedChannel, 1},
	}
	for _, tc := range cases {
		why, pos := u.Check(tc.r)
		if why != tc.want || pos != tc.pos {
			t.Errorf("%s: %v at %d, want %v at %d", tc.r.Args, why, pos, tc.want, tc.pos)
		}
	}
	if r.Default().Unrestricted() != true || u.Unrestricted() {
		t.Fatal("Unrestricted")
	}
}

func TestAuthenticateAndRequirePass(t *testing.T) {
	var r Registry
	if r.AuthRequired() {
		t.Fatal("a new registry requires AUTH")
	}
	r.SetRequirePass("pw")
	if !r.AuthRequired() || r.Authenticate([]byte("default"), []byte("pw")) == nil ||
		r.Authenticate([]byte("default"), []byte("no")) != nil {
		t.Fatal("requirepass pw")
	}
	setUser(t, &r, "a", ">x")
	if r.Authenticate([]byte("a"), []byte("x")) != nil {
		t.Fatal("an off user authenticated")
	}
	setUser(t, &r, "a", "on")
	if r.Authenticate([]byte("a"), []byte("x")) == nil {
		t.Fatal("an on user did not authenticate")
	}
	r.SetRequirePass("")
	if r.AuthRequired() {
		t.Fatal("requirepass cleared, AUTH still required")
	}
}

func TestFileRoundTrip(t *testing.T) {
	var r Registry
	setUser(t, &r, "a", "on", ">x", "%R~k*", "&c", "+@read", "(+set ~w*)")
	path := filepath.Join(t.TempDir(), "users.acl")
	if err := r.SaveFile(path); err != nil {
		t.Fatal(err)
	}
	var r2 Registry
	if _, err := r2.LoadFile(path); err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"a", "default"} {
		if got, want := r2.Get(n).Describe(), r.Get(n).Describe(); got != want {
			t.Errorf("%s: %q, want %q", n, got, want)
		}
	}
	if err := os.WriteFile(path, []byte("user a on\nuser a off\nbogus\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := r2.LoadFile(path)
	if err == nil || !strings.Contains(err.Error(), "Duplicate user 'a' found on line 2") ||
		!strings.Contains(err.Error(), ":3: should start with user keyword followed by the username.") {
		t.Fatalf("broken file: %v", err)
	}
}

func TestLogGroupsAndTrims(t *testing.T) {
	var l Log
	e := LogEntry{Reason: DeniedKey, Context: ContextToplevel, Object: "k", Username: "u", TimeMs: 1000}
	l.Add(e, 2)
	l.Add(e, 2)
	if got := l.Entries(10); len(got) != 1 || got[0].Count != 2 {
		t.Fatalf("like entries: %+v", got)
	}
	e.Object = "k2"
	l.Add(e, 2)
	e.Object = "k3"
	l.Add(e, 2)
	got := l.Entries(10)
	if len(got) != 2 || got[0].Object != "k3" || got[1].Object != "k2" {
		t.Fatalf("trimmed log: %+v", got)
	}
}

// BenchmarkUnrestricted is what a connection of the default user pays per command: one
// atomic load and a bool.
func BenchmarkUnrestricted(b *testing.B) {
	var r Registry
	u := r.Default()
	n := 0
	for range b.N {
		if !u.Unrestricted() {
			n++
		}
	}
	if n != 0 {
		b.Fatal("the default user is restricted")
	}
}

// BenchmarkCheck_KeyPattern is a restricted user's check of a one-key read.
func BenchmarkCheck_KeyPattern(b *testing.B) {
	var r Registry
	u, _, _ := r.SetUser("u", []string{"on", "+get", "~app:*"})
	req := &Request{Cmd: Commands().Lookup("get"), Args: args("get app:42"), HasKeys: true,
		Keys: []KeyRef{{Pos: 1, Perm: PermRead}}}
	for range b.N {
		if why, _ := u.Check(req); why != Allowed {
			b.Fatal(why)
		}
	}
}
