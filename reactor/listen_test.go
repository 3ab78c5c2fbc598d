package reactor_test

import (
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"shardis/config"
	"shardis/executor"
	"shardis/internal/testserver"
	"shardis/reactor"
	"shardis/server"
)

// A second server on a port another one serves is refused at start, naming the address:
// SO_REUSEPORT would otherwise let it bind beside the first and take half its connections.
func TestServer_Serve_RefusesAPortInUse(t *testing.T) {
	first := testserver.Start(t)
	cfg, err := config.Load([]string{"--port", strconv.Itoa(first.Config.Port()), "--bind", "127.0.0.1",
		"--dir", t.TempDir(), "--shards", "1", "--cpu-pin", "no"})
	if err != nil {
		t.Fatal(err)
	}
	st := testserver.OpenStore(t, cfg.Dir(), 1)
	state := server.New(cfg, st)
	second := reactor.New(state, executor.New(state))
	done := make(chan error, 1)
	go func() { done <- second.Serve() }()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), first.Addr) {
			t.Fatalf("Serve on a port in use: %v; want an error naming %s", err, first.Addr)
		}
	case <-second.Ready():
		second.Stop()
		t.Fatal("a second server started on a port in use")
	case <-time.After(60 * time.Second):
		t.Fatal("Serve neither failed nor started")
	}
	c := first.Client(t)
	if err := c.Ping(t.Context()).Err(); err != nil {
		t.Fatalf("the first server after the refused start: %v", err)
	}
}

// An address given with a leading '-' that does not exist on this host is skipped, as Redis
// skips it; the others serve.
func TestServer_Serve_SkipsUnavailableOptionalBindAddress(t *testing.T) {
	s := testserver.Start(t, "--bind", "127.0.0.1", "-10.255.255.1")
	c := s.Client(t)
	if got, err := c.ConfigGet(t.Context(), "bind").Result(); err != nil || got["bind"] != "127.0.0.1 -10.255.255.1" {
		t.Fatalf("CONFIG GET bind = %v, %v", got, err)
	}
}

// The same address without '-' stops the start, naming it.
func TestServer_Serve_RefusesUnavailableBindAddress(t *testing.T) {
	cfg, err := config.Load([]string{"--port", strconv.Itoa(testserver.FreePort(t)), "--bind", "127.0.0.1", "10.255.255.1",
		"--dir", t.TempDir(), "--shards", "1", "--cpu-pin", "no"})
	if err != nil {
		t.Fatal(err)
	}
	st := testserver.OpenStore(t, cfg.Dir(), 1)
	state := server.New(cfg, st)
	srv := reactor.New(state, executor.New(state))
	done := make(chan error, 1)
	go func() { done <- srv.Serve() }()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "10.255.255.1:") {
			t.Fatalf("Serve with an unavailable address: %v; want an error naming it", err)
		}
	case <-srv.Ready():
		srv.Stop()
		t.Fatal("started with an unavailable, non-optional bind address")
	case <-time.After(60 * time.Second):
		t.Fatal("Serve neither failed nor started")
	}
}

// unixsocket: clients connect through the socket, which has unixsocketperm's permissions.
func TestServer_Serve_UnixSocket(t *testing.T) {
	path := filepath.Join(t.TempDir(), "shardis.sock")
	s := testserver.Start(t, "--unixsocket", path, "--unixsocketperm", "700")
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode()&os.ModeSocket == 0 || st.Mode().Perm() != 0o700 {
		t.Fatalf("socket mode %v, want a socket with 0700", st.Mode())
	}
	c := redis.NewClient(&redis.Options{Network: "unix", Addr: path, DisableIdentity: true, Protocol: 2})
	defer c.Close()
	for i := range 3 {
		if err := c.Set(t.Context(), "k", i, 0).Err(); err != nil {
			t.Fatal(err)
		}
	}
	if got, err := s.Client(t).Get(t.Context(), "k").Result(); err != nil || got != "2" {
		t.Fatalf("GET over TCP after SETs over the unix socket: %q, %v", got, err)
	}
	// CLIENT LIST shows a unix socket client as Redis does: addr and laddr are the path, port 0.
	list, err := c.ClientList(t.Context()).Result()
	if err != nil || !strings.Contains(list, " addr="+path+":0 laddr="+path+":0 ") || !strings.Contains(list, " flags=U ") {
		t.Fatalf("CLIENT LIST over the unix socket: %q, %v", list, err)
	}
}

// The protected-mode decision, as Redis 7.0 takes it: no password, protected mode on, and a TCP
// client from outside the loopback interface.
func TestRefusedByProtectedMode(t *testing.T) {
	remote := func(ip string) net.Addr { return &net.TCPAddr{IP: net.ParseIP(ip), Port: 40000} }
	for _, c := range []struct {
		protected bool
		password  string
		addr      net.Addr
		refused   bool
	}{
		{true, "", remote("192.0.2.7"), true},
		{true, "", remote("2001:db8::1"), true},
		{true, "", remote("127.0.0.1"), false},
		{true, "", remote("127.1.2.3"), false},
		{true, "", remote("::1"), false},
		{true, "", remote("::ffff:127.0.0.1"), false},
		{true, "", &net.UnixAddr{Name: "@", Net: "unix"}, false},
		{true, "secret", remote("192.0.2.7"), false},
		{false, "", remote("192.0.2.7"), false},
	} {
		if got := reactor.RefusedByProtectedMode(c.protected, c.password, c.addr); got != c.refused {
			t.Errorf("protected %v password %q from %v: refused %v, want %v", c.protected, c.password, c.addr, got, c.refused)
		}
	}
}

// The refusal is redis-server 7.0.15's, byte for byte (testdata recorded from a client that
// reached it through a non-loopback address).
func TestProtectedModeRefusal_IsRedisText(t *testing.T) {
	want, err := os.ReadFile("testdata/protected-mode-refusal.resp")
	if err != nil {
		t.Fatal(err)
	}
	if reactor.ProtectedModeRefusal != string(want) {
		t.Fatalf("refusal text differs from redis-server's:\n got %q\nwant %q", reactor.ProtectedModeRefusal, want)
	}
}

// tcp-keepalive is set on each new client connection, and CONFIG SET changes it for the next
// ones (0 turns it off).
func TestServer_TCPKeepalive(t *testing.T) {
	s := testserver.Start(t, "--tcp-keepalive", "120")
	keepalive := func() (on, idle int) {
		t.Helper()
		c, err := net.Dial("tcp", s.Addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		_ = c.SetDeadline(time.Now().Add(time.Minute))
		buf := make([]byte, 7)
		if _, err := c.Write([]byte("PING\r\n")); err != nil {
			t.Fatal(err)
		}
		if _, err := io.ReadFull(c, buf); err != nil || string(buf) != "+PONG\r\n" {
			t.Fatalf("PING: %q, %v", buf, err)
		}
		local := c.LocalAddr().String()
		for i := 0; ; i++ {
			for _, cl := range s.Srv.State().Clients.All() {
				if cl.Addr == local {
					on, err1 := syscall.GetsockoptInt(cl.FD, syscall.SOL_SOCKET, syscall.SO_KEEPALIVE)
					idle, err2 := syscall.GetsockoptInt(cl.FD, syscall.IPPROTO_TCP, syscall.TCP_KEEPIDLE)
					if err1 != nil || err2 != nil {
						t.Fatal(err1, err2)
					}
					return on, idle
				}
			}
			if i == 1000 {
				t.Fatal("the connection is not registered after 10s")
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	if on, idle := keepalive(); on == 0 || idle != 120 {
		t.Fatalf("tcp-keepalive 120: SO_KEEPALIVE %d, TCP_KEEPIDLE %d", on, idle)
	}
	if err := s.Client(t).ConfigSet(t.Context(), "tcp-keepalive", "0").Err(); err != nil {
		t.Fatal(err)
	}
	if on, _ := keepalive(); on != 0 {
		t.Fatalf("tcp-keepalive 0: SO_KEEPALIVE %d", on)
	}
}

// port 0 turns TCP off, as in Redis: the server serves on its unix socket only, and refuses to
// start with nowhere to listen.
func TestServer_Serve_PortZero(t *testing.T) {
	start := func(flags ...string) (*reactor.Server, chan error) {
		cfg, err := config.Load(append([]string{"--port", "0", "--dir", t.TempDir(), "--shards", "1",
			"--cpu-pin", "no"}, flags...))
		if err != nil {
			t.Fatal(err)
		}
		st := testserver.OpenStore(t, cfg.Dir(), 1)
		state := server.New(cfg, st)
		srv := reactor.New(state, executor.New(state))
		done := make(chan error, 1)
		go func() { done <- srv.Serve() }()
		return srv, done
	}
	srv, done := start()
	select {
	case err := <-done:
		if err == nil || err.Error() != "Configured to not listen anywhere, exiting." {
			t.Fatalf("port 0 without unixsocket: %v", err)
		}
	case <-srv.Ready():
		srv.Stop()
		t.Fatal("started with nowhere to listen")
	case <-time.After(60 * time.Second):
		t.Fatal("Serve neither failed nor started")
	}

	path := filepath.Join(t.TempDir(), "s.sock")
	srv, done = start("--unixsocket", path)
	select {
	case err := <-done:
		t.Fatalf("port 0 with unixsocket: %v", err)
	case <-srv.Ready():
	case <-time.After(60 * time.Second):
		t.Fatal("Serve did not start")
	}
	defer func() { srv.Stop(); <-done }()
	c := redis.NewClient(&redis.Options{Network: "unix", Addr: path, DisableIdentity: true, Protocol: 2})
	defer c.Close()
	if err := c.Ping(t.Context()).Err(); err != nil {
		t.Fatalf("PING over the unix socket: %v", err)
	}
}
