package cmds_test

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"shardis/internal/testserver"
)

var connCtx = context.Background()

// connRaw is a raw RESP connection for tests that check exact bytes or connection state.
type connRaw struct {
	t *testing.T
	c net.Conn
	r *bufio.Reader
}

func connDial(t *testing.T, addr string) *connRaw {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return &connRaw{t: t, c: c, r: bufio.NewReader(c)}
}

// send writes raw protocol bytes.
func (r *connRaw) send(s string) {
	r.t.Helper()
	if _, err := r.c.Write([]byte(s)); err != nil {
		r.t.Fatal(err)
	}
}

// cmd sends one command as a RESP array.
func (r *connRaw) cmd(args ...string) {
	r.t.Helper()
	var b strings.Builder
	b.WriteString("*" + strconv.Itoa(len(args)) + "\r\n")
	for _, a := range args {
		b.WriteString("$" + strconv.Itoa(len(a)) + "\r\n" + a + "\r\n")
	}
	r.send(b.String())
}

// read reads exactly n bytes within 5 seconds.
func (r *connRaw) read(n int) string {
	r.t.Helper()
	_ = r.c.SetReadDeadline(time.Now().Add(5 * time.Second))
	buf := make([]byte, n)
	if _, err := io.ReadFull(r.r, buf); err != nil {
		r.t.Fatalf("read %d bytes: %v (got %q)", n, err, buf)
	}
	return string(buf)
}

// expect reads len(want) bytes and compares them with want.
func (r *connRaw) expect(want string) {
	r.t.Helper()
	if got := r.read(len(want)); got != want {
		r.t.Fatalf("got %q, want %q", got, want)
	}
}

// do sends a command and checks the whole reply.
func (r *connRaw) do(want string, args ...string) {
	r.t.Helper()
	r.cmd(args...)
	r.expect(want)
}

// line reads one line without its CRLF.
func (r *connRaw) line() string {
	r.t.Helper()
	_ = r.c.SetReadDeadline(time.Now().Add(5 * time.Second))
	s, err := r.r.ReadString('\n')
	if err != nil {
		r.t.Fatalf("read line: %v (got %q)", err, s)
	}
	return strings.TrimSuffix(s, "\r\n")
}

// bulk reads a bulk string (or RESP3 verbatim string) reply and returns its text.
func (r *connRaw) bulk() string {
	r.t.Helper()
	h := r.line()
	if h == "" || (h[0] != '$' && h[0] != '=') {
		r.t.Fatalf("not a bulk reply: %q", h)
	}
	n, err := strconv.Atoi(h[1:])
	if err != nil {
		r.t.Fatalf("bad header %q", h)
	}
	s := r.read(n + 2)
	return s[:n]
}

// expectEOF checks that the server closes the connection without sending anything more.
func (r *connRaw) expectEOF() {
	r.t.Helper()
	_ = r.c.SetReadDeadline(time.Now().Add(5 * time.Second))
	b, err := r.r.ReadByte()
	if err == nil {
		rest, _ := r.r.Peek(r.r.Buffered())
		r.t.Fatalf("got %q, want the connection closed", append([]byte{b}, rest...))
	}
	if !errors.Is(err, io.EOF) && !strings.Contains(err.Error(), "reset") {
		r.t.Fatalf("got %v, want EOF", err)
	}
}

// expectSilence checks that nothing arrives for d.
func (r *connRaw) expectSilence(d time.Duration) {
	r.t.Helper()
	_ = r.c.SetReadDeadline(time.Now().Add(d))
	b, err := r.r.ReadByte()
	if err == nil {
		rest, _ := r.r.Peek(r.r.Buffered())
		r.t.Fatalf("got %q, want no reply", append([]byte{b}, rest...))
	}
	var ne net.Error
	if !errors.As(err, &ne) || !ne.Timeout() {
		r.t.Fatalf("got %v, want a read timeout", err)
	}
}

// connClientID asks the connection its CLIENT ID.
func (r *connRaw) clientID() int64 {
	r.t.Helper()
	r.cmd("CLIENT", "ID")
	l := r.line()
	id, err := strconv.ParseInt(strings.TrimPrefix(l, ":"), 10, 64)
	if err != nil || !strings.HasPrefix(l, ":") {
		r.t.Fatalf("CLIENT ID: %q", l)
	}
	return id
}

// connHello is the HELLO reply Redis 7.0 sends for proto on connection id.
func connHello(proto int, id int64) string {
	head := "*14\r\n"
	if proto == 3 {
		head = "%7\r\n"
	}
	return head + "$6\r\nserver\r\n$5\r\nredis\r\n$7\r\nversion\r\n$6\r\n7.0.15\r\n$5\r\nproto\r\n:" +
		strconv.Itoa(proto) + "\r\n$2\r\nid\r\n:" + strconv.FormatInt(id, 10) +
		"\r\n$4\r\nmode\r\n$10\r\nstandalone\r\n$4\r\nrole\r\n$6\r\nmaster\r\n$7\r\nmodules\r\n*0\r\n"
}

func TestHello_Resp3_SwitchesProtocol(t *testing.T) {
	s := testserver.Start(t)
	r := connDial(t, s.Addr)
	id := r.clientID()
	r.do(connHello(3, id), "HELLO", "3")
	r.do("_\r\n", "GET", "connection:missing")
	r.do("%1\r\n$2\r\nhz\r\n$2\r\n10\r\n", "CONFIG", "GET", "hz")
	// Without arguments HELLO reports the current protocol.
	r.do(connHello(3, id), "HELLO")
	r.do(connHello(2, id), "HELLO", "2")
	r.do("$-1\r\n", "GET", "connection:missing")
	r.do("*2\r\n$2\r\nhz\r\n$2\r\n10\r\n", "CONFIG", "GET", "hz")
}

func TestHello_SetName_SetsConnectionName(t *testing.T) {
	s := testserver.Start(t)
	r := connDial(t, s.Addr)
	id := r.clientID()
	r.do(connHello(2, id), "HELLO", "2", "SETNAME", "worker-1")
	r.do("$8\r\nworker-1\r\n", "CLIENT", "GETNAME")
}

func TestHello_Errors(t *testing.T) {
	s := testserver.Start(t)
	r := connDial(t, s.Addr)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"HELLO", "4"}, "-NOPROTO unsupported protocol version\r\n"},
		{[]string{"HELLO", "1"}, "-NOPROTO unsupported protocol version\r\n"},
		{[]string{"HELLO", "abc"}, "-ERR Protocol version is not an integer or out of range\r\n"},
		{[]string{"HELLO", "2", "FOO"}, "-ERR Syntax error in HELLO option 'FOO'\r\n"},
		{[]string{"HELLO", "2", "AUTH", "default"}, "-ERR Syntax error in HELLO option 'AUTH'\r\n"},
		{[]string{"HELLO", "2", "SETNAME", "a b"}, "-ERR Client names cannot contain spaces, newlines or special characters.\r\n"},
		{[]string{"HELLO", "2", "AUTH", "nobody", "x"}, "-WRONGPASS invalid username-password pair or user is disabled.\r\n"},
	} {
		r.do(tc.want, tc.args...)
	}
	// A failed HELLO leaves the protocol as it was.
	r.do("$-1\r\n", "GET", "connection:missing")
}

func TestAuth_RequirePass(t *testing.T) {
	s := testserver.Start(t, "--requirepass", "s3cret")
	r := connDial(t, s.Addr)
	r.do("-NOAUTH Authentication required.\r\n", "GET", "k")
	r.do("-NOAUTH HELLO must be called with the client already authenticated, otherwise the HELLO AUTH <user> <pass> option can be used to authenticate the client and select the RESP protocol version at the same time\r\n", "HELLO", "3")
	r.do("-WRONGPASS invalid username-password pair or user is disabled.\r\n", "AUTH", "wrong")
	r.do("-WRONGPASS invalid username-password pair or user is disabled.\r\n", "AUTH", "alice", "s3cret")
	r.do("-NOAUTH Authentication required.\r\n", "GET", "k")
	r.do("+OK\r\n", "AUTH", "s3cret")
	r.do("$-1\r\n", "GET", "k")

	r2 := connDial(t, s.Addr)
	r2.do("+OK\r\n", "AUTH", "default", "s3cret")
	r2.do("$-1\r\n", "GET", "k")

	// HELLO AUTH authenticates and switches protocol in one step.
	r3 := connDial(t, s.Addr)
	r3.do("-WRONGPASS invalid username-password pair or user is disabled.\r\n", "HELLO", "3", "AUTH", "default", "nope")
	r3.cmd("HELLO", "3", "AUTH", "default", "s3cret")
	hello := connHello(3, 0)
	idAt := strings.Index(hello, ":0\r\n")
	r3.expect(hello[:idAt+1])
	r3.line() // the id
	r3.expect(hello[idAt+4:])
	r3.do("_\r\n", "GET", "k")

	// go-redis authenticates with HELLO/AUTH when given the password.
	c := s.Client(t, func(o *redis.Options) { o.Password = "s3cret" })
	if err := c.Set(connCtx, "k", "v", 0).Err(); err != nil {
		t.Fatal(err)
	}
	bad := s.Client(t, func(o *redis.Options) { o.Password = "nope" })
	if err := bad.Ping(connCtx).Err(); err == nil || !strings.Contains(err.Error(), "WRONGPASS") {
		t.Fatalf("ping with a wrong password: %v, want WRONGPASS", err)
	}
}

func TestAuth_NoPasswordConfigured(t *testing.T) {
	s := testserver.Start(t)
	r := connDial(t, s.Addr)
	r.do("-ERR AUTH <password> called without any password configured for the default user. Are you sure your configuration is correct?\r\n", "AUTH", "x")
	r.do("+OK\r\n", "AUTH", "default", "anything")
	r.do("-WRONGPASS invalid username-password pair or user is disabled.\r\n", "AUTH", "bob", "x")
	r.do("-ERR syntax error\r\n", "AUTH", "a", "b", "c")
	r.do("-ERR wrong number of arguments for 'auth' command\r\n", "AUTH")
}

func TestQuit_RepliesOKAndCloses(t *testing.T) {
	s := testserver.Start(t)
	r := connDial(t, s.Addr)
	r.send("PING\r\nQUIT\r\nPING\r\n")
	r.expect("+PONG\r\n+OK\r\n")
	r.expectEOF()
}

func TestQuit_BeforeAuth(t *testing.T) {
	s := testserver.Start(t, "--requirepass", "pw")
	r := connDial(t, s.Addr)
	r.send("QUIT\r\n")
	r.expect("+OK\r\n")
	r.expectEOF()
}

func TestReset_RestoresConnectionDefaults(t *testing.T) {
	s := testserver.Start(t)
	r := connDial(t, s.Addr)
	id := r.clientID()
	r.do("+OK\r\n", "SELECT", "3")
	r.do("+OK\r\n", "CLIENT", "SETNAME", "before-reset")
	r.do("+OK\r\n", "CLIENT", "NO-EVICT", "on")
	r.do(connHello(3, id), "HELLO", "3")
	r.do("+RESET\r\n", "RESET")
	r.do("$-1\r\n", "CLIENT", "GETNAME") // RESP2 null: the protocol is back to 2
	r.cmd("CLIENT", "INFO")
	info := r.bulk()
	for _, want := range []string{" db=0 ", " flags=N ", " name= ", " resp=2\n"} {
		if !strings.Contains(info, want) {
			t.Errorf("CLIENT INFO after RESET = %q, want it to contain %q", info, want)
		}
	}
	if r.clientID() != id {
		t.Error("RESET changed the client id")
	}
}

func TestReset_RequirePass_NeedsAuthAgain(t *testing.T) {
	s := testserver.Start(t, "--requirepass", "pw")
	r := connDial(t, s.Addr)
	r.do("+OK\r\n", "AUTH", "pw")
	r.do("$-1\r\n", "GET", "k")
	r.do("+RESET\r\n", "RESET")
	r.do("-NOAUTH Authentication required.\r\n", "GET", "k")
}

func TestReset_EndsMonitor(t *testing.T) {
	s := testserver.Start(t)
	m := connDial(t, s.Addr)
	m.do("+OK\r\n", "MONITOR")
	m.do("+RESET\r\n", "RESET")
	c := s.Client(t)
	if err := c.Set(connCtx, "after-reset", "1", 0).Err(); err != nil {
		t.Fatal(err)
	}
	m.expectSilence(200 * time.Millisecond)
}

func TestPing_EchoReplies(t *testing.T) {
	s := testserver.Start(t)
	r := connDial(t, s.Addr)
	r.do("+PONG\r\n", "PING")
	r.do("$2\r\nhi\r\n", "PING", "hi")
	r.do("-ERR wrong number of arguments for 'ping' command\r\n", "PING", "a", "b")
	r.do("$3\r\nabc\r\n", "ECHO", "abc")
	r.do("-ERR wrong number of arguments for 'echo' command\r\n", "ECHO")
}
