package server

import (
	"shardis/acl"
	"shardis/pubsub"
	"shardis/shard"
	"shardis/tracking"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// ReplyMode is CLIENT REPLY's state.
type ReplyMode uint8

// CLIENT REPLY modes.
const (
	ReplyOn ReplyMode = iota
	ReplyOff
	ReplySkip // skip the reply of the next command only
)

// Client is one connection. Fields in the first group are owned by the connection's event
// loop; the atomics may be read from anywhere (CLIENT LIST, INFO).
type Client struct {
	ID      int64
	Addr    string
	LAddr   string
	FD      int
	Created time.Time
	Unix    bool // connected through the unix socket (CLIENT LIST flag U)

	// ---- owned by the event loop ----
	DB        int
	RESP3     bool
	Authed    bool
	ReplyMode ReplyMode
	NoEvict   bool
	NoTouch   bool
	Quitting  bool // QUIT: close once the replies before it are written
	Monitor   bool // MONITOR: the connection only receives the command feed
	// Multi is the transaction being queued since MULTI (nil outside one).
	Multi *Multi

	// TrackCaching is CLIENT CACHING's flag: it applies to the next command (to the whole
	// transaction when given before MULTI); the reactor hands it to that command (Ctx.Caching).
	TrackCaching bool

	// Watch holds the connection's WATCHed keys (nil before its first WATCH). It is safe for
	// concurrent use: WATCH fills it from the shards owning the keys.
	Watch *shard.Watcher

	// ---- readable from anywhere ----
	// Subscription counts, kept by the pub/sub commands; CLIENT LIST shows them (sub=, psub=,
	// ssub=, flag P) and CLIENT LIST/KILL TYPE PUBSUB selects clients with any.
	Subs, PSubs, SSubs atomic.Int32

	name     atomic.Pointer[string]
	libName  atomic.Pointer[string]
	libVer   atomic.Pointer[string]
	lastCmd  atomic.Pointer[string]
	lastSeen atomic.Int64 // unix ms of the last command
	dbPub    atomic.Int32
	resp     atomic.Int32
	flagsPub atomic.Uint32 // pubMonitor | pubNoEvict | …, published copy of the loop-owned flags
	multiPub atomic.Int32  // commands queued in MULTI, -1 outside one
	replica  atomic.Bool   // PSYNC or SYNC made it a replica's link (SetReplicaLink)

	// The command the client is blocked in (see SetBlocked), under blockMu; gone is set once
	// the connection closed, after which nothing may block.
	blockMu   sync.Mutex
	blocked   Unblocker
	gone      bool
	goneHooks []func() // OnGone's
	// pauseHeld: CLIENT PAUSE holds the command the client sent (INFO blocked_clients and
	// CLIENT LIST's flag b count it, as Redis counts a postponed client).
	pauseHeld atomic.Bool

	// Sub is the connection's pub/sub side (its subscriptions and the queue of messages
	// published to it), made by the reactor when the connection opens; the reactor's loop
	// drains its queue. See package pubsub.
	Sub *pubsub.Subscriber
	// Track is the connection's CLIENT TRACKING state, made with Sub by the reactor; see
	// package tracking.
	Track *tracking.Conn

	// user is the ACL user the connection is authenticated as (nil: unrestricted, for
	// clients made inside the server); AUTH and HELLO change it.
	user atomic.Pointer[acl.User]

	// Hooks set by the reactor, callable from any goroutine.
	Kill  func()               // close the connection
	Write func(p []byte) error // queue bytes for the client (MONITOR feed); p is copied
	// Send queues p for the client without copying it (p must not change until done) and
	// calls done once it was written or dropped: a replica's feed paces itself by it.
	Send    func(p []byte, done func()) error
	Buffers func() (query, output int)
}

// User returns the connection's ACL user, nil for an internal client (no restriction).
func (cl *Client) User() *acl.User { return cl.user.Load() }

// SetUser makes u the connection's ACL user.
func (cl *Client) SetUser(u *acl.User) { cl.user.Store(u) }

// UserName is the name CLIENT LIST shows: the user's, "default" for an internal client.
func (cl *Client) UserName() string {
	if u := cl.user.Load(); u != nil {
		return u.Name
	}
	return "default"
}

// Name returns CLIENT SETNAME's name.
func (cl *Client) Name() string { return loadString(&cl.name) }

// SetName sets the connection name.
func (cl *Client) SetName(s string) { cl.name.Store(&s) }

// SetLib records CLIENT SETINFO lib-name / lib-ver (empty arguments leave a field as is).
func (cl *Client) SetLib(name, ver *string) {
	if name != nil {
		cl.libName.Store(name)
	}
	if ver != nil {
		cl.libVer.Store(ver)
	}
}

// Touch records that the client ran the command named *cmd now. cmd must not change
// afterwards (a Command's Name): it is kept by reference, so touching allocates nothing.
func (cl *Client) Touch(cmd *string, nowMs int64) {
	if cl.lastSeen.Load() != nowMs {
		cl.lastSeen.Store(nowMs)
	}
	if cl.lastCmd.Load() != cmd {
		cl.lastCmd.Store(cmd)
	}
	cl.Publish()
}

// PubFlags are the published copy of a client's loop-owned flags (see Published).
type PubFlags uint32

// Bits of PubFlags.
const (
	PubMonitor PubFlags = 1 << iota
	PubNoEvict
	PubNoTouch
	PubClosing
	PubMulti
)

// Published returns the copies of the loop-owned state that Publish made: logical db,
// protocol version, flags and the number of commands queued in MULTI (-1 outside one).
// Other goroutines read these (CLIENT LIST).
func (cl *Client) Published() (db, resp int, flags PubFlags, multi int) {
	return int(cl.dbPub.Load()), int(cl.resp.Load()), PubFlags(cl.flagsPub.Load()), int(cl.multiPub.Load())
}

// TakeMulti ends the connection's MULTI and returns its transaction (nil outside one), for
// EXEC or DISCARD to run or drop in order.
func (cl *Client) TakeMulti() *Multi {
	m := cl.Multi
	cl.Multi = nil
	return m
}

// Attach gives a new connection's client its subscriber (the pub/sub queue the reactor
// drains), the CLIENT TRACKING state that publishes to it, and its WATCH state, made now
// rather than on the first WATCH, which runs in a shard and must not race the close.
func (cl *Client) Attach(sub *pubsub.Subscriber) {
	cl.Sub = sub
	cl.Track = tracking.NewConn(cl.ID, sub)
	cl.Watch = &shard.Watcher{}
}

// Watcher returns the connection's watcher, made on first use.
func (cl *Client) Watcher() *shard.Watcher {
	if cl.Watch == nil {
		cl.Watch = &shard.Watcher{}
	}
	return cl.Watch
}

// Unwatch forgets every WATCHed key.
func (cl *Client) Unwatch() {
	if cl.Watch != nil {
		cl.Watch.Unwatch()
	}
}

// Publish copies the loop-owned state that other goroutines report (db, protocol, flags) to
// its atomic copies. The event loop calls it on every command (Touch); commands that change
// that state call it again so CLIENT LIST from other connections sees the change at once.
// Only the loop writes the copies, so each is stored only when it changed: an atomic store
// is a locked instruction on x86, a load a plain one (four stores a command were 3% of the
// loop's CPU under pipelined SADD).
func (cl *Client) Publish() {
	storeInt32(&cl.dbPub, int32(cl.DB))
	if cl.RESP3 {
		storeInt32(&cl.resp, 3)
	} else {
		storeInt32(&cl.resp, 2)
	}
	var f PubFlags
	if cl.Monitor {
		f |= PubMonitor
	}
	if cl.NoEvict {
		f |= PubNoEvict
	}
	if cl.NoTouch {
		f |= PubNoTouch
	}
	if cl.Quitting {
		f |= PubClosing
	}
	if cl.Multi != nil {
		f |= PubMulti
		storeInt32(&cl.multiPub, int32(len(cl.Multi.Commands)))
	} else {
		storeInt32(&cl.multiPub, -1)
	}
	if cl.flagsPub.Load() != uint32(f) {
		cl.flagsPub.Store(uint32(f))
	}
}

// storeInt32 stores v in a when it holds something else (a has one writer: the loop).
func storeInt32(a *atomic.Int32, v int32) {
	if a.Load() != v {
		a.Store(v)
	}
}

// SetReplicaLink marks the connection as a replica's, once its PSYNC or SYNC was accepted:
// CLIENT LIST shows flag S and CLIENT LIST/KILL TYPE replica selects it.
func (cl *Client) SetReplicaLink() { cl.replica.Store(true) }

// ReplicaLink reports whether SetReplicaLink marked the connection.
func (cl *Client) ReplicaLink() bool { return cl.replica.Load() }

// PubSub reports whether the client has any subscription (CLIENT LIST flag P, TYPE pubsub).
func (cl *Client) PubSub() bool {
	return cl.Subs.Load() > 0 || cl.PSubs.Load() > 0 || cl.SSubs.Load() > 0
}

// UnblockReason says why a blocked command is woken without being served.
type UnblockReason uint8

// Reasons to unblock a client.
const (
	UnblockTimeout UnblockReason = iota // its timeout passed, or CLIENT UNBLOCK [TIMEOUT]
	UnblockError                        // CLIENT UNBLOCK ... ERROR
	UnblockGone                         // the connection closed: nobody reads the reply
)

// Unblocker is a blocked command (the executor's).
type Unblocker interface {
	// Unblock wakes the command with reason, unless something already settled it; it
	// reports whether this call did.
	Unblock(reason UnblockReason) bool
}

// SetBlocked records that the client is blocked in u. It reports false, recording nothing,
// when the connection is gone: the caller must then unblock u itself.
func (cl *Client) SetBlocked(u Unblocker) bool {
	cl.blockMu.Lock()
	defer cl.blockMu.Unlock()
	if cl.gone {
		return false
	}
	cl.blocked = u
	return true
}

// ClearBlocked records that u, if the client is blocked in it, ended.
func (cl *Client) ClearBlocked(u Unblocker) {
	cl.blockMu.Lock()
	if cl.blocked == u {
		cl.blocked = nil
	}
	cl.blockMu.Unlock()
}

// Blocked returns the command the client is blocked in, or nil.
func (cl *Client) Blocked() Unblocker {
	cl.blockMu.Lock()
	defer cl.blockMu.Unlock()
	return cl.blocked
}

// SetPauseHeld records whether CLIENT PAUSE holds the client's next command.
func (cl *Client) SetPauseHeld(held bool) {
	if cl.pauseHeld.Load() != held {
		cl.pauseHeld.Store(held)
	}
}

// PauseHeld reports whether CLIENT PAUSE holds the client's next command.
func (cl *Client) PauseHeld() bool { return cl.pauseHeld.Load() }

// Gone records that the connection closed and returns the command it is blocked in, if any,
// which the caller unblocks (UnblockGone). Nothing blocks for the client afterwards.
func (cl *Client) Gone() Unblocker {
	cl.blockMu.Lock()
	cl.gone = true
	hooks := cl.goneHooks
	cl.goneHooks = nil
	u := cl.blocked
	cl.blockMu.Unlock()
	for _, f := range hooks {
		f()
	}
	return u
}

// OnGone registers f to run once the connection closed (Gone), and reports false, registering
// nothing, when it already has: a replica's feed stops with its connection.
func (cl *Client) OnGone(f func()) bool {
	cl.blockMu.Lock()
	defer cl.blockMu.Unlock()
	if cl.gone {
		return false
	}
	cl.goneHooks = append(cl.goneHooks, f)
	return true
}

// SetLastCommand records the client's current command (a blocked command, so CLIENT LIST shows
// it rather than what was pipelined behind it). Any goroutine; cmd is kept by reference.
func (cl *Client) SetLastCommand(cmd *string) { cl.lastCmd.Store(cmd) }

// LastCommand returns the full name of the client's last command ("NULL" before any).
func (cl *Client) LastCommand() string { return loadString(&cl.lastCmd) }

// LibName and LibVer return what CLIENT SETINFO recorded.
func (cl *Client) LibName() string { return loadString(&cl.libName) }

// LibVer returns CLIENT SETINFO's lib-ver.
func (cl *Client) LibVer() string { return loadString(&cl.libVer) }

// LastSeen returns the unix ms of the client's last command (or its connection).
func (cl *Client) LastSeen() int64 { return cl.lastSeen.Load() }

func loadString(p *atomic.Pointer[string]) string {
	if s := p.Load(); s != nil {
		return *s
	}
	return ""
}

// Clients is the registry of open connections.
type Clients struct {
	mu       sync.Mutex
	byID     map[int64]*Client
	monitors []*Client
	nMonitor atomic.Int32 // len(monitors), read without the lock on every command
	nextID   atomic.Int64
}

// NewID returns the next client id (ids start at 1 and never repeat).
func (cs *Clients) NewID() int64 { return cs.nextID.Add(1) }

// Add registers cl.
func (cs *Clients) Add(cl *Client) {
	cs.mu.Lock()
	if cs.byID == nil {
		cs.byID = make(map[int64]*Client)
	}
	cs.byID[cl.ID] = cl
	cs.mu.Unlock()
}

// Remove unregisters cl.
func (cs *Clients) Remove(cl *Client) {
	cs.mu.Lock()
	delete(cs.byID, cl.ID)
	cs.monitors = slices.DeleteFunc(cs.monitors, func(m *Client) bool { return m == cl })
	cs.nMonitor.Store(int32(len(cs.monitors)))
	cs.mu.Unlock()
}

// Count returns the number of open connections.
func (cs *Clients) Count() int {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	return len(cs.byID)
}

// Get returns client id or nil.
func (cs *Clients) Get(id int64) *Client {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	return cs.byID[id]
}

// All returns the open connections ordered by id.
func (cs *Clients) All() []*Client {
	cs.mu.Lock()
	list := make([]*Client, 0, len(cs.byID))
	for _, cl := range cs.byID {
		list = append(list, cl)
	}
	cs.mu.Unlock()
	slices.SortFunc(list, func(a, b *Client) int { return int(a.ID - b.ID) })
	return list
}

// RemoveMonitor stops cl's command feed (RESET).
func (cs *Clients) RemoveMonitor(cl *Client) {
	cs.mu.Lock()
	cs.monitors = slices.DeleteFunc(cs.monitors, func(m *Client) bool { return m == cl })
	cs.nMonitor.Store(int32(len(cs.monitors)))
	cs.mu.Unlock()
}

// AddMonitor makes cl receive the command feed.
func (cs *Clients) AddMonitor(cl *Client) {
	cs.mu.Lock()
	cs.monitors = append(cs.monitors, cl)
	cs.nMonitor.Store(int32(len(cs.monitors)))
	cs.mu.Unlock()
}

// HasMonitors reports cheaply whether anyone is monitoring.
func (cs *Clients) HasMonitors() bool { return cs.nMonitor.Load() > 0 }

// Monitors returns the monitoring clients.
func (cs *Clients) Monitors() []*Client {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	return slices.Clone(cs.monitors)
}
