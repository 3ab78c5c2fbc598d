// Package testserver starts a real shardis server in-process on a free loopback port, for
// integration tests that talk to it through the real protocol.
package testserver

import (
	"bytes"
	"net"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"shardis/codec"
	"shardis/config"
	"shardis/executor"
	"shardis/reactor"
	"shardis/replication"
	"shardis/server"
	"shardis/shard"
)

// Server is a running server.
type Server struct {
	Addr   string
	Dir    string
	Config *config.Config
	Store  *shard.Store
	Srv    *reactor.Server
	done   chan error
	t      testing.TB
}

// Start starts a server with a fresh data directory and the given extra config flags
// (e.g. "--shards", "4"). It is stopped when the test ends.
func Start(t testing.TB, flags ...string) *Server {
	t.Helper()
	return StartIn(t, t.TempDir(), flags...)
}

// StartIn starts a server on data directory dir (for restart tests).
func StartIn(t testing.TB, dir string, flags ...string) *Server {
	t.Helper()
	s := start(t, dir, flags)
	if err := s.Load(); err != nil {
		t.Fatalf("open store: %v", err)
	}
	return s
}

// StartLoading starts a server on data directory dir whose store is not open yet: it listens
// and answers LOADING until the test calls Load, as main's server does while RocksDB opens.
func StartLoading(t testing.TB, dir string, flags ...string) *Server {
	t.Helper()
	return start(t, dir, flags)
}

// Load opens the store of a server started by StartLoading and ends its loading phase.
func (s *Server) Load() error { return s.Srv.State().Load() }

func start(t testing.TB, dir string, flags []string) *Server {
	t.Helper()
	port := FreePort(t)
	args := append([]string{"--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--dir", dir,
		"--shards", "4", "--loops", "2", "--cpu-pin", "no"}, flags...)
	cfg, err := config.Load(args)
	if err != nil {
		t.Fatalf("config: %v", err)
	}
	store, err := shard.New(shard.Options{
		Dir: cfg.Dir(), Shards: cfg.Shards(), Databases: cfg.Databases(),
		BlockCacheSize: cfg.BlockCacheSize(), KeyCacheSize: cfg.KeyCacheSize(), WriteBufferSize: 32 << 20,
		BlobMinSize: cfg.BlobMinSize(), DiskReserve: cfg.DiskReserve,
		Fsync: cfg.AppendFsync, Hz: cfg.Hz,
		Binlog: func() (int64, time.Duration) { return cfg.BinlogMaxEntries(), cfg.BinlogMaxAge() },
	})
	if err != nil {
		t.Fatalf("store: %v", err)
	}
	srv, err := newReactor(cfg, store)
	if err != nil {
		_ = store.Close()
		t.Fatalf("start: %v", err)
	}
	s := &Server{Addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), Dir: dir, Config: cfg,
		Store: store, Srv: srv, done: make(chan error, 1), t: t}
	go func() { s.done <- s.Srv.Serve() }()
	select {
	case <-s.Srv.Ready():
	case err := <-s.done:
		t.Fatalf("serve: %v", err)
	case <-time.After(10 * time.Second):
		t.Fatal("server did not start in 10s")
	}
	waitListening(t, s.Addr)
	t.Cleanup(s.Stop)
	// The probe connection is closed, but the event loop may not have seen it yet; a test
	// that counts clients (maxclients, CLIENT LIST) must not find it.
	for i := 0; s.Srv.State().Clients.Count() != 0; i++ {
		if i == 1000 {
			t.Fatal("the probe connection is still registered after 10s")
		}
		time.Sleep(10 * time.Millisecond)
	}
	return s
}

// Stop stops the server and closes its store (idempotent).
func (s *Server) Stop() {
	if s.Srv == nil {
		return
	}
	s.Srv.Stop()
	<-s.done
	if r := s.Srv.State().Replication; r != nil {
		r.Stop()
	}
	if err := s.Store.Close(); err != nil {
		s.t.Errorf("close store: %v", err)
	}
	s.Srv = nil
}

// Client returns a go-redis client for the server, closed when the test ends.
func (s *Server) Client(t testing.TB, opts ...func(*redis.Options)) *redis.Client {
	o := &redis.Options{Addr: s.Addr, DisableIdentity: true, Protocol: 2, MaxRetries: -1,
		ReadTimeout: 10 * time.Second, WriteTimeout: 10 * time.Second}
	for _, f := range opts {
		f(o)
	}
	c := redis.NewClient(o)
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// FreePort returns a loopback TCP port that was free a moment ago.
func FreePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("free port: %v", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

func waitListening(t testing.TB, addr string) {
	for range 200 {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.Close()
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("%s is not listening", addr)
}

// Raw sends raw bytes on a new connection and returns what arrives within wait.
func Raw(t testing.TB, addr string, payload []byte, wait time.Duration) []byte {
	t.Helper()
	return roundTrip(t, addr, payload, time.Now().Add(wait), func([]byte) bool { return false })
}

// roundTrip sends payload on a new connection and reads until done says what arrived is
// enough, the server closed, or deadline passed.
func roundTrip(t testing.TB, addr string, payload []byte, deadline time.Time, done func([]byte) bool) []byte {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Write(payload); err != nil {
		t.Fatal(err)
	}
	var out []byte
	buf := make([]byte, 64<<10)
	_ = c.SetReadDeadline(deadline)
	for !done(out) {
		n, err := c.Read(buf)
		out = append(out, buf[:n]...)
		if err != nil {
			break
		}
	}
	return out
}

// OpenStore opens the store in dir directly (no server), for tests that inspect what a server
// left on disk or replay into a fresh directory. It is closed when the test ends.
func OpenStore(t testing.TB, dir string, shards int) *shard.Store {
	t.Helper()
	st, err := shard.Open(shard.Options{Dir: dir, Shards: shards, Databases: 16, WriteBufferSize: 32 << 20})
	if err != nil {
		t.Fatalf("open store %s: %v", dir, err)
	}
	t.Cleanup(func() {
		if err := st.Close(); err != nil {
			t.Errorf("close store %s: %v", dir, err)
		}
	})
	return st
}

// newReactor wires a network server over store as main does.
func newReactor(cfg *config.Config, store *shard.Store) (*reactor.Server, error) {
	state := server.New(cfg, store)
	if err := state.LoadUsers(); err != nil {
		return nil, err
	}
	exec := executor.New(state)
	state.Replication = replication.New(state, exec)
	return reactor.New(state, exec), nil
}

// ReplayTarget opens a fresh store of the given shard count and an executor over it, as the
// target of a binlog replay. It is closed when the test ends.
func ReplayTarget(t testing.TB, shards int) (*shard.Store, *executor.Executor) {
	t.Helper()
	cfg, err := config.Load([]string{"--dir", t.TempDir(), "--shards", strconv.Itoa(shards)})
	if err != nil {
		t.Fatal(err)
	}
	st, err := shard.Open(shard.Options{Dir: cfg.Dir(), Shards: shards, Databases: 16, Hz: func() int { return 10 }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	return st, executor.New(&server.Server{Store: st, Config: cfg})
}

// MetaOf reads key's meta in logical db of st through its shard; the value is a copy.
func MetaOf(t testing.TB, st *shard.Store, db int, key string) (codec.Meta, bool) {
	t.Helper()
	var m codec.Meta
	var ok bool
	if err := st.Do(st.ShardOf([]byte(key)), func(tx *shard.Tx) {
		m, ok = tx.Meta(db, []byte(key))
		m.Value = bytes.Clone(m.Value)
	}); err != nil {
		t.Fatal(err)
	}
	return m, ok
}

// Exchange sends payload on a new connection and reads until want bytes arrived, the server
// closed, or a generous deadline passed: it waits for behaviour, not for a time (unlike Raw).
func Exchange(t testing.TB, addr string, payload []byte, want int) []byte {
	t.Helper()
	return roundTrip(t, addr, payload, time.Now().Add(60*time.Second), func(out []byte) bool { return len(out) >= want })
}

// ExchangeUntil is Exchange reading until what arrived ends with suffix.
func ExchangeUntil(t testing.TB, addr string, payload []byte, suffix string) []byte {
	t.Helper()
	return roundTrip(t, addr, payload, time.Now().Add(60*time.Second),
		func(out []byte) bool { return bytes.HasSuffix(out, []byte(suffix)) })
}

// Monitor opens a connection in MONITOR mode and returns it once the server said +OK.
func Monitor(t testing.TB, addr string) net.Conn {
	t.Helper()
	mon, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = mon.Close() })
	if _, err := mon.Write([]byte("MONITOR\r\n")); err != nil {
		t.Fatal(err)
	}
	_ = mon.SetReadDeadline(time.Now().Add(20 * time.Second))
	got := make([]byte, 0, 8)
	buf := make([]byte, 8)
	for !bytes.Contains(got, []byte("+OK\r\n")) {
		n, err := mon.Read(buf[:1]) // byte by byte: nothing of the feed is consumed here
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, buf[:n]...)
	}
	return mon
}
