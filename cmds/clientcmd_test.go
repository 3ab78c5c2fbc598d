package cmds_test

import (
	"context"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"shardis/internal/testserver"
)

// clientOneConn returns a go-redis client that uses a single connection, so per-connection
// state (name, reply mode) set by one call is seen by the next.
func clientOneConn(t *testing.T, s *testserver.Server, opts ...func(*redis.Options)) *redis.Client {
	return s.Client(t, append([]func(*redis.Options){func(o *redis.Options) { o.PoolSize = 1 }}, opts...)...)
}

// clientField returns the value of field name in one CLIENT LIST/INFO line.
func clientField(t *testing.T, line, name string) string {
	t.Helper()
	for _, f := range strings.Fields(line) {
		if k, v, ok := strings.Cut(f, "="); ok && k == name {
			return v
		}
	}
	t.Fatalf("no field %q in %q", name, line)
	return ""
}

func TestClient_SetNameGetName(t *testing.T) {
	s := testserver.Start(t)
	c := clientOneConn(t, s)
	if v, err := c.Do(connCtx, "CLIENT", "GETNAME").Result(); err != redis.Nil {
		t.Fatalf("GETNAME before SETNAME = %v, %v; want nil", v, err)
	}
	if err := c.Do(connCtx, "CLIENT", "SETNAME", "job-7").Err(); err != nil {
		t.Fatal(err)
	}
	if v, err := c.Do(connCtx, "CLIENT", "GETNAME").Text(); err != nil || v != "job-7" {
		t.Fatalf("GETNAME = %q, %v", v, err)
	}
	err := c.Do(connCtx, "CLIENT", "SETNAME", "has space").Err()
	if err == nil || err.Error() != "ERR Client names cannot contain spaces, newlines or special characters." {
		t.Fatalf("SETNAME with a space: %v", err)
	}
	// An empty name clears it.
	if err := c.Do(connCtx, "CLIENT", "SETNAME", "").Err(); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Do(connCtx, "CLIENT", "GETNAME").Result(); err != redis.Nil {
		t.Fatalf("GETNAME after clearing: %v", err)
	}
}

func TestClient_ListAndInfo_Format(t *testing.T) {
	s := testserver.Start(t)
	a := clientOneConn(t, s)
	b := clientOneConn(t, s)
	if err := a.Do(connCtx, "CLIENT", "SETNAME", "alpha").Err(); err != nil {
		t.Fatal(err)
	}
	if err := b.Do(connCtx, "SELECT", "4").Err(); err != nil {
		t.Fatal(err)
	}
	if err := b.Do(connCtx, "CLIENT", "SETNAME", "beta").Err(); err != nil {
		t.Fatal(err)
	}
	list, err := a.ClientList(connCtx).Result()
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(list, "\n"), "\n")
	if len(lines) != 2 {
		t.Fatalf("CLIENT LIST has %d lines, want 2:\n%s", len(lines), list)
	}
	order := []string{"id", "addr", "laddr", "fd", "name", "age", "idle", "flags", "db", "sub", "psub", "ssub",
		"multi", "qbuf", "qbuf-free", "argv-mem", "multi-mem", "rbs", "rbp", "obl", "oll", "omem", "tot-mem",
		"events", "cmd", "user", "redir", "resp"}
	for _, l := range lines {
		fields := strings.Fields(l)
		if len(fields) != len(order) {
			t.Fatalf("line has %d fields, want %d: %q", len(fields), len(order), l)
		}
		for i, f := range fields {
			if k, _, _ := strings.Cut(f, "="); k != order[i] {
				t.Fatalf("field %d is %q, want %q: %q", i, k, order[i], l)
			}
		}
	}
	if clientField(t, lines[0], "name") != "alpha" || clientField(t, lines[1], "name") != "beta" {
		t.Fatalf("names wrong (list is ordered by id):\n%s", list)
	}
	if clientField(t, lines[1], "db") != "4" || clientField(t, lines[0], "cmd") != "client|list" {
		t.Fatalf("db/cmd wrong:\n%s", list)
	}

	// go-redis parses CLIENT INFO into a struct; every field must parse.
	info, err := b.ClientInfo(connCtx).Result()
	if err != nil {
		t.Fatal(err)
	}
	if info.Name != "beta" || info.DB != 4 || info.Resp != 2 || info.User != "default" || info.LastCmd != "client|info" {
		t.Fatalf("CLIENT INFO = %+v", info)
	}

	// ID filter, in the order given; TYPE filter.
	ida := clientField(t, lines[0], "id")
	idb := clientField(t, lines[1], "id")
	got, err := a.Do(connCtx, "CLIENT", "LIST", "ID", idb, "999999", ida).Text()
	if err != nil {
		t.Fatal(err)
	}
	if l := strings.Split(strings.TrimSuffix(got, "\n"), "\n"); len(l) != 2 ||
		clientField(t, l[0], "id") != idb || clientField(t, l[1], "id") != ida {
		t.Fatalf("CLIENT LIST ID %s 999999 %s =\n%s", idb, ida, got)
	}
	for typ, want := range map[string]int{"normal": 2, "NORMAL": 2, "pubsub": 0, "master": 0, "replica": 0, "slave": 0} {
		got, err := a.Do(connCtx, "CLIENT", "LIST", "TYPE", typ).Text()
		if err != nil {
			t.Fatal(err)
		}
		if n := strings.Count(got, "\n"); n != want {
			t.Errorf("CLIENT LIST TYPE %s: %d clients, want %d", typ, n, want)
		}
	}
}

func TestClient_List_Errors(t *testing.T) {
	s := testserver.Start(t)
	r := connDial(t, s.Addr)
	r.do("-ERR Unknown client type 'foo'\r\n", "CLIENT", "LIST", "TYPE", "foo")
	r.do("-ERR Invalid client ID\r\n", "CLIENT", "LIST", "ID", "1", "x")
	r.do("-ERR syntax error\r\n", "CLIENT", "LIST", "ID")
	r.do("-ERR syntax error\r\n", "CLIENT", "LIST", "TYPE", "normal", "ID", "1")
	r.do("-ERR wrong number of arguments for 'client|info' command\r\n", "CLIENT", "INFO", "x")
	r.do("-ERR unknown subcommand 'NOPE'. Try CLIENT HELP.\r\n", "CLIENT", "NOPE")
}

func TestClient_Info_Resp3Verbatim(t *testing.T) {
	s := testserver.Start(t)
	r := connDial(t, s.Addr)
	id := r.clientID()
	r.do(connHello(3, id), "HELLO", "3")
	r.cmd("CLIENT", "INFO")
	h := r.line()
	n, _ := strconv.Atoi(strings.TrimPrefix(h, "="))
	body := r.read(n + 2)
	if h[0] != '=' || !strings.HasPrefix(body, "txt:id="+strconv.FormatInt(id, 10)+" ") || !strings.HasSuffix(body, " resp=3\n\r\n") {
		t.Fatalf("CLIENT INFO in RESP3 = %q %q", h, body)
	}
}

func TestClient_Kill_ByIDClosesOtherConnection(t *testing.T) {
	s := testserver.Start(t)
	victim := connDial(t, s.Addr)
	id := victim.clientID()
	c := s.Client(t)
	n, err := c.Do(connCtx, "CLIENT", "KILL", "ID", strconv.FormatInt(id, 10)).Int()
	if err != nil || n != 1 {
		t.Fatalf("CLIENT KILL ID = %d, %v; want 1", n, err)
	}
	victim.expectEOF()
	// It is gone from the registry.
	n, err = c.Do(connCtx, "CLIENT", "KILL", "ID", strconv.FormatInt(id, 10)).Int()
	if err != nil || n != 0 {
		t.Fatalf("second CLIENT KILL ID = %d, %v; want 0", n, err)
	}
}

func TestClient_Kill_OldAddrForm(t *testing.T) {
	s := testserver.Start(t)
	victim := connDial(t, s.Addr)
	victim.clientID() // a round trip: the server has registered it
	addr := victim.c.LocalAddr().String()
	r := connDial(t, s.Addr)
	r.do("+OK\r\n", "CLIENT", "KILL", addr)
	victim.expectEOF()
	r.do("-ERR No such client\r\n", "CLIENT", "KILL", addr)
	r.do("-ERR No such client\r\n", "CLIENT", "KILL", "ID") // three arguments: an address
}

func TestClient_Kill_FiltersAndSkipMe(t *testing.T) {
	s := testserver.Start(t)
	other := connDial(t, s.Addr)
	other.clientID()
	r := connDial(t, s.Addr)
	id := strconv.FormatInt(r.clientID(), 10)
	laddr := r.c.RemoteAddr().String()
	r.do(":0\r\n", "CLIENT", "KILL", "ID", id) // SKIPME yes by default
	r.do(":0\r\n", "CLIENT", "KILL", "TYPE", "pubsub")
	r.do(":0\r\n", "CLIENT", "KILL", "ADDR", "10.1.2.3:4", "LADDR", laddr)
	r.do(":1\r\n", "CLIENT", "KILL", "USER", "default", "ADDR", other.c.LocalAddr().String())
	other.expectEOF()
	// Killing oneself: the reply comes, then the connection closes and nothing after runs.
	r.cmd("CLIENT", "KILL", "ID", id, "SKIPME", "no")
	r.cmd("PING")
	r.expect(":1\r\n")
	r.expectEOF()
}

func TestClient_Kill_Errors(t *testing.T) {
	s := testserver.Start(t)
	r := connDial(t, s.Addr)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"ID", "0"}, "-ERR client-id should be greater than 0\r\n"},
		{[]string{"ID", "x"}, "-ERR client-id should be greater than 0\r\n"},
		{[]string{"TYPE", "foo"}, "-ERR Unknown client type 'foo'\r\n"},
		{[]string{"SKIPME", "maybe"}, "-ERR syntax error\r\n"},
		{[]string{"FOO", "bar"}, "-ERR syntax error\r\n"},
		{[]string{"ID", "1", "TYPE"}, "-ERR syntax error\r\n"},
		{[]string{"MAXAGE", "10"}, "-ERR syntax error\r\n"},
		{[]string{"USER", "nobody"}, "-ERR No such user 'nobody'\r\n"},
	} {
		r.do(tc.want, append([]string{"CLIENT", "KILL"}, tc.args...)...)
	}
	r.do("-ERR wrong number of arguments for 'client|kill' command\r\n", "CLIENT", "KILL")
}

func TestClient_Reply_OffAndSkip(t *testing.T) {
	s := testserver.Start(t)
	r := connDial(t, s.Addr)
	// SKIP drops the reply of the next command only.
	r.send("CLIENT REPLY SKIP\r\nECHO one\r\nECHO two\r\n")
	r.expect("$3\r\ntwo\r\n")
	// OFF sends nothing, for itself or what follows.
	r.send("CLIENT REPLY OFF\r\nECHO three\r\nSET k v\r\n")
	r.expectSilence(200 * time.Millisecond)
	// The command still ran.
	c := s.Client(t)
	if v, err := c.Get(connCtx, "k").Result(); err != nil || v != "v" {
		t.Fatalf("GET k = %q, %v: SET under CLIENT REPLY OFF did not run", v, err)
	}
	// SKIP while OFF changes nothing; ON brings the replies back.
	r.send("CLIENT REPLY SKIP\r\nECHO four\r\nCLIENT REPLY ON\r\nECHO five\r\nECHO six\r\n")
	got := r.read(len("$4\r\nfive\r\n$3\r\nsix\r\n"))
	if !strings.HasSuffix(got, "$3\r\nsix\r\n") {
		// Redis also sends CLIENT REPLY ON's own +OK first; read past it.
		got += r.read(len("+OK\r\n"))
	}
	if got != "$4\r\nfive\r\n$3\r\nsix\r\n" && got != "+OK\r\n$4\r\nfive\r\n$3\r\nsix\r\n" {
		t.Fatalf("after CLIENT REPLY ON: %q", got)
	}
	r.do("-ERR syntax error\r\n", "CLIENT", "REPLY", "maybe")
}

func TestClientPause_Write_DelaysWritesNotReads(t *testing.T) {
	s := testserver.Start(t)
	admin := s.Client(t)
	c := s.Client(t)
	if err := c.Set(connCtx, "paused:k", "old", 0).Err(); err != nil {
		t.Fatal(err)
	}
	const pause = 2 * time.Second
	start := time.Now()
	if err := admin.Do(connCtx, "CLIENT", "PAUSE", strconv.Itoa(int(pause/time.Millisecond)), "WRITE").Err(); err != nil {
		t.Fatal(err)
	}
	if v, err := c.Get(connCtx, "paused:k").Result(); err != nil || v != "old" {
		t.Fatalf("GET during pause = %q, %v", v, err)
	}
	if d := time.Since(start); d >= pause { // a read is not held back: it does not wait for the end
		t.Fatalf("GET took %v during a WRITE pause", d)
	}
	if err := c.Set(connCtx, "paused:k", "new", 0).Err(); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d < pause-50*time.Millisecond {
		t.Fatalf("SET finished after %v, before the %v pause ended", d, pause)
	}

	// UNPAUSE ends a pause at once: writes sent after it run without waiting.
	if err := admin.Do(connCtx, "CLIENT", "PAUSE", "60000", "WRITE").Err(); err != nil {
		t.Fatal(err)
	}
	if err := admin.Do(connCtx, "CLIENT", "UNPAUSE").Err(); err != nil {
		t.Fatal(err)
	}
	start = time.Now()
	if err := c.Set(connCtx, "paused:k", "newer", 0).Err(); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > 30*time.Second { // far from the 60 s pause: it did not wait for it
		t.Fatalf("SET after CLIENT UNPAUSE took %v", d)
	}
}

func TestClientPause_All_DelaysReads(t *testing.T) {
	s := testserver.Start(t)
	admin := s.Client(t)
	c := s.Client(t)
	if err := c.Ping(connCtx).Err(); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if err := admin.Do(connCtx, "CLIENT", "PAUSE", "400").Err(); err != nil {
		t.Fatal(err)
	}
	if err := c.Get(connCtx, "k").Err(); err != redis.Nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d < 350*time.Millisecond {
		t.Fatalf("GET finished after %v during a 400ms ALL pause", d)
	}
}

func TestClientPause_Errors(t *testing.T) {
	s := testserver.Start(t)
	r := connDial(t, s.Addr)
	r.do("-ERR timeout is not an integer or out of range\r\n", "CLIENT", "PAUSE", "abc")
	r.do("-ERR timeout is negative\r\n", "CLIENT", "PAUSE", "-1")
	r.do("-ERR CLIENT PAUSE mode must be WRITE or ALL\r\n", "CLIENT", "PAUSE", "10", "foo")
	r.do("-ERR CLIENT PAUSE mode must be WRITE or ALL\r\n", "CLIENT", "PAUSE", "abc", "foo")
	r.do("-ERR unknown subcommand or wrong number of arguments for 'pause'. Try CLIENT HELP.\r\n", "client", "pause", "10", "ALL", "x")
	r.do("+OK\r\n", "CLIENT", "PAUSE", "0")
	r.do("+OK\r\n", "CLIENT", "UNPAUSE")
}

func TestClient_SetInfo(t *testing.T) {
	s := testserver.Start(t)
	r := connDial(t, s.Addr)
	r.do("+OK\r\n", "CLIENT", "SETINFO", "LIB-NAME", "mylib")
	r.do("+OK\r\n", "CLIENT", "SETINFO", "lib-ver", "1.2.3")
	r.do("-ERR Unrecognized option 'lib-foo'\r\n", "CLIENT", "SETINFO", "lib-foo", "x")
	r.do("-ERR lib-name cannot contain spaces, newlines or special characters.\r\n", "CLIENT", "SETINFO", "lib-name", "a b")
	// go-redis sends CLIENT SETINFO on connect unless told not to; with RESP3 it uses HELLO 3.
	for _, proto := range []int{2, 3} {
		c := s.Client(t, func(o *redis.Options) { o.DisableIdentity = false; o.Protocol = proto })
		if err := c.Set(connCtx, "lib", "x", 0).Err(); err != nil {
			t.Fatalf("protocol %d: %v", proto, err)
		}
		info, err := c.ClientInfo(connCtx).Result()
		if err != nil || info.Resp != proto {
			t.Fatalf("protocol %d: CLIENT INFO = %+v, %v", proto, info, err)
		}
	}
}

func TestClient_NoEvictNoTouch_Flags(t *testing.T) {
	s := testserver.Start(t)
	c := clientOneConn(t, s)
	for _, args := range [][]any{{"CLIENT", "NO-EVICT", "on"}, {"CLIENT", "NO-TOUCH", "ON"}} {
		if err := c.Do(connCtx, args...).Err(); err != nil {
			t.Fatal(err)
		}
	}
	line, err := c.Do(connCtx, "CLIENT", "INFO").Text()
	if err != nil || clientField(t, line, "flags") != "eT" {
		t.Fatalf("CLIENT INFO = %q, %v; want flags=eT", line, err)
	}
	for _, args := range [][]any{{"CLIENT", "NO-EVICT", "off"}, {"CLIENT", "NO-TOUCH", "off"}} {
		if err := c.Do(connCtx, args...).Err(); err != nil {
			t.Fatal(err)
		}
	}
	line, _ = c.Do(connCtx, "CLIENT", "INFO").Text()
	if clientField(t, line, "flags") != "N" {
		t.Fatalf("CLIENT INFO = %q; want flags=N", line)
	}
	if err := c.Do(connCtx, "CLIENT", "NO-EVICT", "maybe").Err(); err == nil || err.Error() != "ERR syntax error" {
		t.Fatalf("NO-EVICT maybe: %v", err)
	}
}

func TestClient_IDHelpTracking(t *testing.T) {
	s := testserver.Start(t)
	r := connDial(t, s.Addr)
	a, b := r.clientID(), connDial(t, s.Addr).clientID()
	if a <= 0 || b <= a {
		t.Fatalf("client ids %d then %d: want increasing", a, b)
	}
	r.cmd("CLIENT", "HELP")
	if h := r.line(); !strings.HasPrefix(h, "*") {
		t.Fatalf("CLIENT HELP header %q", h)
	}
	if l := r.line(); l != "+CLIENT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:" {
		t.Fatalf("CLIENT HELP first line %q", l)
	}
	r.c.Close()
	r = connDial(t, s.Addr)
	r.do(":-1\r\n", "CLIENT", "GETREDIR")
	r.do("*6\r\n$5\r\nflags\r\n*1\r\n$3\r\noff\r\n$8\r\nredirect\r\n:-1\r\n$8\r\nprefixes\r\n*0\r\n", "CLIENT", "TRACKINGINFO")
}

// clientLine returns the CLIENT LIST line of the client named name.
func clientLine(t *testing.T, c *redis.Client, name string) string {
	t.Helper()
	line, list := findClient(t, c, name)
	if line == "" {
		t.Fatalf("no client named %q in %q", name, list)
	}
	return line
}

// findClient returns the CLIENT LIST line of the client named name ("" when there is none)
// and the whole list.
func findClient(t *testing.T, c *redis.Client, name string) (line, list string) {
	t.Helper()
	list, err := c.ClientList(context.Background()).Result()
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(list, "\n") {
		if strings.Contains(line, " name="+name+" ") {
			return line, list
		}
	}
	return "", list
}

// CLIENT LIST's qbuf is the input a client sent that is not parsed yet, omem the
// output it has not read (pub/sub queue included), tot-mem their sum; INFO's
// client_recent_max_*_buffer are the largest of them.
func TestClientList_QbufAndOmemAreWhatTheServerHolds(t *testing.T) {
	s := testserver.Start(t)
	ctx := context.Background()
	c := s.Client(t)
	if err := c.ConfigSet(ctx, "client-output-buffer-limit", "pubsub 512mb 256mb 60").Err(); err != nil {
		t.Fatal(err)
	}
	partial, err := net.Dial("tcp", s.Addr)
	if err != nil {
		t.Fatal(err)
	}
	defer partial.Close()
	// A SET whose value has not arrived yet: 60 bytes of the 1000 announced.
	if _, err := partial.Write([]byte("CLIENT SETNAME partial\r\n*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$1000\r\n" + strings.Repeat("v", 60))); err != nil {
		t.Fatal(err)
	}
	deaf, err := net.Dial("tcp", s.Addr)
	if err != nil {
		t.Fatal(err)
	}
	defer deaf.Close()
	if _, err := deaf.Write([]byte("CLIENT SETNAME deaf\r\nSUBSCRIBE ch\r\n")); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool { return c.PubSubNumSub(ctx, "ch").Val()["ch"] == 1 })
	waitFor(t, func() bool { // the server may not have read the partial command yet
		line, _ := findClient(t, c, "partial")
		if line == "" {
			return false
		}
		q, _ := strconv.Atoi(clientField(t, line, "qbuf"))
		return q > 0
	})
	line := clientLine(t, c, "partial")
	if q := clientField(t, line, "qbuf"); q != "60" { // the value's bytes so far, as Redis
		t.Fatalf("qbuf = %s, want 60: %s", q, line)
	}
	// 20 MB for a subscriber that reads nothing: the kernel takes a few MB, the rest is ours.
	msg := strings.Repeat("m", 1<<20)
	for range 20 {
		if err := c.Publish(ctx, "ch", msg).Err(); err != nil {
			t.Fatal(err)
		}
	}
	var omem int
	waitFor(t, func() bool {
		omem, _ = strconv.Atoi(clientField(t, clientLine(t, c, "deaf"), "omem"))
		return omem >= 8<<20
	})
	line = clientLine(t, c, "deaf")
	tot, _ := strconv.Atoi(clientField(t, line, "tot-mem"))
	if tot < omem {
		t.Fatalf("tot-mem %d < omem %d: %s", tot, omem, line)
	}
	info := c.Info(ctx, "clients").Val()
	if !strings.Contains(info, "client_recent_max_input_buffer:60\r\n") {
		t.Fatalf("INFO clients: %s", info)
	}
	for _, l := range strings.Split(info, "\r\n") {
		if v, ok := strings.CutPrefix(l, "client_recent_max_output_buffer:"); ok {
			if n, _ := strconv.Atoi(v); n < 8<<20 {
				t.Fatalf("client_recent_max_output_buffer = %s, want the deaf subscriber's", v)
			}
		}
	}
}

// Under CLIENT REPLY OFF or SKIP, Redis still sends what is pushed: the (un)subscribe
// confirmations and the messages; errors and other replies stay silent (testdata/replyoff).
func TestClient_Reply_OffSendsPubSubConfirmations(t *testing.T) {
	replayRecorded(t, "testdata/replyoff")
}

func TestClient_Reply_OffSendsPubSubConfirmationsRESP3(t *testing.T) {
	replayRecordedRESP3(t, "testdata/replyoff/resp3")
}

// CLIENT PAUSE WRITE holds what may write or be replicated by the flags a call runs with, as
// Redis 7.0 does: a no-writes script or function runs; a script or function declaring writes
// (even through a _RO command) and PUBLISH are held. A held client counts in INFO
// blocked_clients and shows flag b.
func TestClientPause_Write_HoldsByCallFlags(t *testing.T) {
	s := testserver.Start(t)
	admin := connDial(t, s.Addr)
	admin.cmd("FUNCTION", "LOAD", "#!lua name=lib\n"+
		"redis.register_function{function_name='nw', callback=function() return 1 end, flags={'no-writes'}}\n"+
		"redis.register_function('w', function() return 2 end)")
	admin.expect("$3\r\nlib\r\n")
	admin.do("+OK\r\n", "CLIENT", "PAUSE", "60000", "WRITE")
	t.Cleanup(func() { admin.do("+OK\r\n", "CLIENT", "UNPAUSE") })

	run := [][]string{
		{"EVAL", "#!lua flags=no-writes\nreturn 1", "0"},
		{"EVAL_RO", "#!lua flags=no-writes\nreturn 1", "0"},
		{"EVAL_RO", "return 1", "0"},
		{"FCALL", "nw", "0"},
		{"FCALL_RO", "nw", "0"},
	}
	for _, args := range run {
		r := connDial(t, s.Addr)
		r.cmd(args...)
		r.expect(":1\r\n")
	}
	held := [][]string{
		{"PUBLISH", "ch", "m"},
		{"SPUBLISH", "ch", "m"},
		{"EVAL", "return 1", "0"},
		{"EVAL", "#!lua\nreturn 1", "0"},
		{"EVAL_RO", "#!lua\nreturn 1", "0"},
		{"FCALL", "w", "0"},
		{"FCALL_RO", "w", "0"},
	}
	var conns []*connRaw
	for _, args := range held {
		r := connDial(t, s.Addr)
		r.cmd(args...)
		conns = append(conns, r)
	}
	want := "blocked_clients:" + strconv.Itoa(len(held))
	var info string
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		admin.cmd("INFO", "clients")
		if info = admin.bulk(); strings.Contains(info, want+"\r\n") {
			break
		}
	}
	if !strings.Contains(info, want+"\r\n") {
		t.Fatalf("INFO clients while %d clients are held:\n%s", len(held), info)
	}
	admin.cmd("CLIENT", "LIST")
	if list := admin.bulk(); strings.Count(list, " flags=b ") != len(held) {
		t.Fatalf("CLIENT LIST shows %d clients with flag b, want %d:\n%s", strings.Count(list, " flags=b "), len(held), list)
	}
	for _, r := range conns {
		r.expectSilence(10 * time.Millisecond)
	}
	admin.do("+OK\r\n", "CLIENT", "UNPAUSE")
	for i, r := range conns {
		if got := r.line(); got == "" || got[0] == '-' && held[i][0] != "FCALL_RO" && held[i][0] != "EVAL_RO" {
			t.Fatalf("%v after UNPAUSE: %q", held[i], got)
		}
	}
}
