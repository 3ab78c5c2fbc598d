// Package reactor runs the network side: gnet event loops (one SO_REUSEPORT listener each,
// with cpu-pin locked to an OS thread and pinned to a CPU), connections and their
// per-connection state, the batching of pipelined commands and the ordering of their replies.
package reactor

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log"
	"net"
	"os"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/panjf2000/gnet/v2"

	"shardis/executor"
	"shardis/pubsub"
	"shardis/server"
)

// Settings is the part of the configuration the network side reads (*config.Config has it).
// Each call reads the live value: a CONFIG SET applies to the next read.
type Settings interface {
	Port() int
	Bind() []string
	UnixSocket() (path string, perm os.FileMode)
	Loops() int
	CPUPin() bool
	ProtectedMode() bool
	MaxClients() int
	TCPKeepalive() time.Duration
	Timeout() time.Duration // idle clients are closed after it; 0: never
	ClientQueryBufferLimit() int64
	ProtoMaxBulkLen() int64
}

// Server is the network server. It implements gnet.EventHandler.
type Server struct {
	gnet.BuiltinEventEngine
	cfg   Settings
	state *server.Server
	exec  *executor.Executor
	pin   pinner

	eng gnet.Engine
	// protoAddrs are the addresses gnet runs the engine with: its engine registry's keys.
	protoAddrs []string
	ready      chan struct{}
	addr       string
	// unixLn is the unix socket listener (unixsocket), nil without one; unixPath its path.
	unixLn   *net.UnixListener
	unixPath string
	// loopsUp is closed at the first tick: gnet calls OnBoot before it registers its loops, so
	// handing a connection to a loop (the unix socket's Register) waits for it.
	loopsUp     chan struct{}
	loopsUpOnce sync.Once
	stopped     chan struct{}
	once        sync.Once
	// batches counts batches in flight, so Stop can wait for them before the store closes.
	batches sync.WaitGroup
	// wakes counts the connections' loop wake-ups (conn.wake), for the tests.
	wakes atomic.Int64
}

// New creates the network server of state, whose commands exec runs.
func New(state *server.Server, exec *executor.Executor) *Server {
	s := &Server{cfg: state.Config, state: state, exec: exec,
		ready: make(chan struct{}), loopsUp: make(chan struct{}), stopped: make(chan struct{})}
	state.Shutdown = func() { go s.Stop() }
	s.pin.enabled = s.cfg.CPUPin()
	return s
}

// State returns the server state commands see.
func (s *Server) State() *server.Server { return s.state }

// Serve listens on every bind address (and the unix socket, if configured) and serves until
// Stop. It returns when the loops end.
func (s *Server) Serve() error {
	port := s.cfg.Port()
	binds := s.cfg.Bind()
	unixPath, unixPerm := s.cfg.UnixSocket()
	var addrs []string
	if port != 0 { // port 0: no TCP listener, as in Redis
		var err error
		if addrs, err = tcpListeners(binds, port); err != nil {
			return err
		}
	}
	if len(addrs) == 0 && unixPath == "" {
		return errors.New("Configured to not listen anywhere, exiting.")
	}
	if unixPath != "" {
		ln, err := listenUnix(unixPath, unixPerm)
		if err != nil {
			return err
		}
		s.unixLn, s.unixPath = ln, unixPath
		defer func() { _ = ln.Close(); _ = os.Remove(unixPath) }()
	}
	if len(addrs) > 0 {
		s.addr = strings.SplitN(addrs[0], "://", 2)[1]
	} else {
		s.addr = unixPath
	}
	opts := []gnet.Option{
		gnet.WithNumEventLoop(s.cfg.Loops()),
		gnet.WithReusePort(true),
		gnet.WithReuseAddr(true),
		// A loop is locked to its thread only when it is pinned, because pinning holds only for
		// the thread. Locking has a price: gnet calls runtime.Gosched each time a loop runs out
		// of events, and for a locked goroutine that hands its P to another thread and back
		// (two futex wakes), once per request at low load (docs/PERFORMANCE.md).
		gnet.WithLockOSThread(s.pin.enabled),
		gnet.WithTCPNoDelay(gnet.TCPNoDelay),
		gnet.WithTicker(true),
		gnet.WithLoadBalancing(gnet.LeastConnections),
		gnet.WithLogger(gnetLogger{}), // we log our own start-up line
	}
	if len(addrs) == 0 {
		// gnet needs a listener of its own: a loopback one on a port the kernel picks, which
		// nobody is told about, while clients come through the unix socket.
		addrs = []string{"tcp4://127.0.0.1:0"}
	}
	s.protoAddrs = addrs
	if len(addrs) == 1 {
		return gnet.Run(s, addrs[0], opts...)
	}
	return gnet.Rotate(s, addrs, opts...)
}

// Ready is closed once the server accepts connections.
func (s *Server) Ready() <-chan struct{} { return s.ready }

// Stopped is closed once the loops ended.
func (s *Server) Stopped() <-chan struct{} { return s.stopped }

// Stop stops accepting, closes every connection and returns once the loops ended and every
// batch in flight finished in its shards; the caller closes the store afterwards.
func (s *Server) Stop() {
	s.once.Do(func() {
		<-s.ready
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = s.eng.Stop(ctx)
		// gnet keeps every engine it ran in a registry by address, and only its deprecated
		// package-level Stop takes one out: without it a stopped server (and its store, through
		// the event handler) stays in memory for the process's life, which tests that start
		// many servers pay for. The engine is already stopped: this only forgets it.
		for _, a := range s.protoAddrs {
			//lint:ignore SA1019 the one way to drop the registry entry
			_ = gnet.Stop(ctx, a)
		}
	})
	<-s.stopped
	s.exec.StopScripts() // a script that never ends would hold its batch forever
	s.batches.Wait()
}

// OnBoot records the engine.
func (s *Server) OnBoot(eng gnet.Engine) gnet.Action {
	s.eng = eng
	if s.unixLn != nil {
		go s.acceptUnix(s.unixLn)
	}
	close(s.ready)
	return gnet.None
}

// OnShutdown fires when every loop ended.
func (s *Server) OnShutdown(gnet.Engine) { close(s.stopped) }

// OnOpen registers a connection, or refuses it over maxclients.
func (s *Server) OnOpen(c gnet.Conn) ([]byte, gnet.Action) {
	s.pin.pinCurrentThread()
	st := &s.state.Stats
	// As Redis 7.0: protected mode refuses remote clients while the default user takes no
	// password.
	pass := ""
	if !s.state.ACL.Default().NoPass() {
		pass = "set"
	}
	if refusedByProtectedMode(s.cfg.ProtectedMode(), pass, c.RemoteAddr()) {
		st.RejectedConnections.Add(1)
		return []byte(protectedModeRefusal), gnet.Close
	}
	if s.state.Clients.Count() >= s.cfg.MaxClients() {
		st.RejectedConnections.Add(1)
		return []byte("-ERR max number of clients reached\r\n"), gnet.Close
	}
	st.ConnectionsReceived.Add(1)
	cl := &server.Client{
		ID:      s.state.Clients.NewID(),
		Addr:    addrString(c.RemoteAddr()),
		LAddr:   addrString(c.LocalAddr()),
		FD:      c.Fd(),
		Created: time.Now(),
		Authed:  !s.state.ACL.AuthRequired(),
	}
	if ka := s.cfg.TCPKeepalive(); ka > 0 {
		if _, tcp := c.RemoteAddr().(*net.TCPAddr); tcp {
			_ = c.SetKeepAlivePeriod(ka)
		}
	}
	if _, unix := c.RemoteAddr().(*net.UnixAddr); unix {
		// As Redis shows a unix socket client: the socket's path, port 0.
		cl.Addr, cl.LAddr, cl.Unix = s.unixPath+":0", s.unixPath+":0", true
	}
	cl.SetUser(s.state.ACL.Default())
	cl.Touch(&noCommand, time.Now().UnixMilli())
	cn := &conn{srv: s, gc: c, client: cl, fd: c.Fd()}
	cn.b.conn = cn
	cn.b.strayedAt = -1
	cn.b.jobs = make([]*shardJob, s.exec.NumShards())
	cl.Kill = func() { _ = c.Close() }
	cl.Write = func(p []byte) error {
		cn.queuesOutput()
		return c.AsyncWrite(append([]byte(nil), p...), nil)
	}
	cl.Send = func(p []byte, done func()) error {
		cn.queuesOutput()
		return c.AsyncWrite(p, func(gc gnet.Conn, _ error) error {
			// gnet calls this once p is written or buffered: what it buffered is published
			// first, so a sender pacing itself by Buffers sees it (a replica's feed).
			cn.outBuffered.Store(int64(gc.OutboundBuffered()))
			done()
			return nil
		})
	}
	cl.Buffers = func() (int, int) {
		return int(cn.inBuffered.Load()), int(cn.outBuffered.Load()+cn.unsentOut.Load()) + cl.Sub.Queued()
	}
	cl.Attach(pubsub.NewSubscriber(cn.wake, s.state.PubSubLimit, func(n int64) {
		log.Printf("Client %s scheduled to be closed ASAP for overcoming of output buffer limits.",
			bytes.TrimSuffix(cl.AppendInfo(nil, false, time.Now()), []byte("\n")))
		cl.Kill()
	}))
	c.SetContext(cn)
	s.state.Clients.Add(cl)
	return nil, gnet.None
}

func addrString(a net.Addr) string {
	if a == nil {
		return ""
	}
	return a.String()
}

// OnClose unregisters a connection.
func (s *Server) OnClose(c gnet.Conn, _ error) gnet.Action {
	if cn, ok := c.Context().(*conn); ok {
		cn.sock.Lock() // gnet closes the fd once this returns: no batch may write to it then
		cn.sockClosed = true
		cn.sock.Unlock()
		s.state.Clients.Remove(cn.client)
		cn.client.Watch.Close()
		s.state.PubSub.UnsubscribeAll(cn.client.Sub)
		s.state.Tracking.Disable(cn.client.Track)
		cn.client.Sub.Close()
		if u := cn.client.Gone(); u != nil {
			u.Unblock(server.UnblockGone) // its waiters leave every shard's table
		}
		cn.stopStreams()
		cn.releaseInput()
	}
	return gnet.None
}

// OnTraffic runs when input arrives or a batch of the connection finished.
func (s *Server) OnTraffic(c gnet.Conn) gnet.Action {
	cn, ok := c.Context().(*conn)
	if !ok {
		return gnet.Close
	}
	act := cn.onTraffic()
	// What gnet holds for the connection, for CLIENT LIST and INFO (read by other goroutines,
	// so the loop publishes it rather than letting them ask gnet).
	cn.inBuffered.Store(cn.queryBuffered())
	cn.outBuffered.Store(int64(c.OutboundBuffered()))
	return act
}

// OnTick closes idle clients (timeout).
func (s *Server) OnTick() (time.Duration, gnet.Action) {
	s.loopsUpOnce.Do(func() { close(s.loopsUp) })
	if t := s.cfg.Timeout(); t > 0 {
		deadline := time.Now().Add(-t).UnixMilli()
		for _, cl := range s.state.Clients.All() {
			if !cl.Monitor && cl.LastSeen() < deadline {
				cl.Kill()
			}
		}
	}
	return time.Second, gnet.None
}

// noCommand is what CLIENT LIST shows as the last command of a client that has sent none.
var noCommand = "NULL"

// Procs is the GOMAXPROCS the server wants with loops event loops on ncpu CPUs: a P per loop
// and one more per two CPUs (at least one) for the shard goroutines. A busy loop keeps its P
// (it is locked to its thread), so with one P per CPU a shard that was handed a write waits
// until a loop blocks in a syscall before it can run; the spare Ps let it run at once, and
// the kernel shares the CPUs. On 2 CPUs (3 Ps instead of 2) this cut SET p50 at pipeline 1
// from about 2.8x Redis's to about 2x and the overall p99 from 1.36-1.79x to 1.11-1.31x
// (shardis-bench --vs, SET:GET 1:10, 100 connections), with throughput unchanged within noise.
func Procs(loops, ncpu int) int { return loops + max(1, ncpu/2) }

// Addr returns the first listening address.
func (s *Server) Addr() string { return s.addr }

// String describes the server for logs.
func (s *Server) String() string {
	return fmt.Sprintf("shardis on %s, %d loops, %d shards, GOMAXPROCS %d", s.addr, s.cfg.Loops(), s.exec.NumShards(), runtime.GOMAXPROCS(0))
}

// gnetLogger passes gnet's warnings and errors to the standard logger and drops its chatter.
type gnetLogger struct{}

func (gnetLogger) Debugf(string, ...any)            {}
func (gnetLogger) Infof(string, ...any)             {}
func (gnetLogger) Warnf(format string, args ...any) { log.Printf("gnet: "+format, args...) }
func (gnetLogger) Errorf(format string, args ...any) {
	log.Printf("gnet: "+format, args...)
}
func (gnetLogger) Fatalf(format string, args ...any) { log.Fatalf("gnet: "+format, args...) }
