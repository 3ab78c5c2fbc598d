package server

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"shardis/acl"
	"shardis/config"
	"shardis/latency"
	"shardis/pubsub"
	"shardis/shard"
	"shardis/tracking"
)

// Server is what commands see of the whole server. main creates it and hands it to the
// reactor and the executor, which fill the hooks; every field is safe for concurrent use.
type Server struct {
	Store   *shard.Store
	Config  *config.Config
	Started time.Time
	RunID   string
	Port    int

	Clients Clients
	Stats   Stats
	// Errors counts error replies by prefix (INFO errorstats): the executor counts the
	// replies of commands that ran, the reactor those of commands it refused.
	Errors  ErrorStats
	Slowlog Slowlog
	// Latency is the latency monitor (LATENCY), fed by the executor.
	Latency latency.Monitor
	Cursors Cursors
	// PubSub is the channel registry (SUBSCRIBE, PUBLISH, keyspace notifications).
	PubSub pubsub.Registry
	// Tracking is the CLIENT TRACKING table (client-side caching); nil without a store.
	Tracking *tracking.Table

	// ACL is the server's users (ACL SETUSER, AUTH) and the ACL log.
	ACL acl.Registry

	// Busy says whether a script runs past busy-reply-threshold (the BUSY error).
	Busy ScriptBusy

	// Shutdown stops the server (SHUTDOWN); it returns once the server is stopping.
	Shutdown func()

	// Replication is the replication link and its replicas (package replication); main sets
	// it before serving.
	Replication Replication

	// pauseUntil/pauseAll: CLIENT PAUSE state, read by the reactor before dispatching.
	pauseUntil   atomic.Int64 // unix ms; 0: not paused
	pauseAll     atomic.Bool  // ALL (true) or WRITE (false)
	pauseMu      sync.Mutex   // serialises Pause's read-modify-write and guards pauseWaiters
	pauseWaiters []func()

	Saves Saves
	// AfterOpen, when set, runs in Load once the store is open and its shards run, before the
	// loading phase ends (main's --load-rdb loads an RDB file there).
	AfterOpen func() error

	// MemPeak is the highest used_memory INFO reported.
	MemPeak atomic.Int64

	// Rate samples INFO's counters for the instantaneous_* rates.
	Rate RateSampler

	load loadState
	// admission holds the Admit* bits (Admission).
	admission atomic.Uint32

	replID struct {
		mu sync.Mutex
		id string
	}
}

// Saves is the SAVE/BGSAVE state INFO persistence reports.
type Saves struct {
	Mu       sync.Mutex   // one checkpoint at a time
	Running  atomic.Bool  // a BGSAVE is running
	Started  atomic.Int64 // unix ms the running BGSAVE started
	LastSecs atomic.Int64 // duration of the last BGSAVE, seconds
	Ever     atomic.Bool  // a BGSAVE finished (else rdb_last_bgsave_time_sec is -1)
	Failed   atomic.Bool  // the last BGSAVE failed
	Count    atomic.Int64 // successful SAVE/BGSAVE count

	// BGREWRITEAOF (INFO's aof_* fields): it takes the same checkpoint, under Mu.
	Rewrite Rewrite
}

// Rewrite is BGREWRITEAOF's state.
type Rewrite struct {
	Running   atomic.Bool  // a rewrite is running
	Scheduled atomic.Bool  // a rewrite waits for the running BGSAVE
	Started   atomic.Int64 // unix ms the running rewrite started
	LastSecs  atomic.Int64 // duration of the last rewrite, seconds
	Ever      atomic.Bool  // a rewrite finished (else aof_last_rewrite_time_sec is -1)
	Failed    atomic.Bool  // the last rewrite failed
	Count     atomic.Int64 // rewrites started (aof_rewrites)
}

// ReplID returns the server's replication id, made once (as Redis does at startup).
func (s *Server) ReplID() string {
	s.replID.mu.Lock()
	defer s.replID.mu.Unlock()
	if s.replID.id == "" {
		s.replID.id = newReplID()
	}
	return s.replID.id
}

// SetReplID makes id the server's replication id (a replica takes its master's; a restarted
// server the one it persisted).
func (s *Server) SetReplID(id string) {
	s.replID.mu.Lock()
	defer s.replID.mu.Unlock()
	s.replID.id = id
}

// ChangeReplID gives the server a new replication id (DEBUG CHANGE-REPL-ID).
func (s *Server) ChangeReplID() {
	s.replID.mu.Lock()
	defer s.replID.mu.Unlock()
	s.replID.id = newReplID()
}

func newReplID() string {
	b := make([]byte, 20)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// RateSampler turns INFO's counters into the instantaneous_* rates. shardis has no server
// cron sampling them, so the rate is measured between INFO calls: over the interval since the
// previous sample, once it is at least rateMinInterval old.
type RateSampler struct {
	mu                   sync.Mutex
	at                   time.Time
	ops, in, out         int64
	opsRate, inKB, outKB float64
}

const rateMinInterval = 100 * time.Millisecond

// Sample returns the rates of commands per second and input and output KB per second, given
// the counters now.
func (r *RateSampler) Sample(now time.Time, ops, in, out int64) (float64, float64, float64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.at.IsZero() {
		r.at, r.ops, r.in, r.out = now, ops, in, out
		return 0, 0, 0
	}
	if d := now.Sub(r.at); d >= rateMinInterval {
		secs := d.Seconds()
		r.opsRate = float64(max(ops-r.ops, 0)) / secs
		r.inKB = float64(max(in-r.in, 0)) / secs / 1024
		r.outKB = float64(max(out-r.out, 0)) / secs / 1024
		r.at, r.ops, r.in, r.out = now, ops, in, out
	}
	return r.opsRate, r.inKB, r.outKB
}

// New returns the state of a server over store with configuration cfg.
func New(cfg *config.Config, store *shard.Store) *Server {
	id := make([]byte, 20)
	_, _ = rand.Read(id)
	s := &Server{Store: store, Config: cfg, Started: time.Now(), RunID: hex.EncodeToString(id), Port: cfg.Port()}
	if store != nil {
		// A store not open yet is opened by Load, while the server answers LOADING.
		if !store.Opened() {
			s.admission.Or(AdmitLoading)
		}
		store.SetDiskHook(func(low bool) {
			if low {
				s.admission.Or(AdmitDiskError)
			} else {
				s.admission.And(^AdmitDiskError)
			}
		})
		if store.DiskLow() {
			s.admission.Or(AdmitDiskError)
		}
		store.SetExpirePass(s.expirePassed)
		store.SetEvents(eventClasses(cfg.NotifyKeyspaceEvents()), s.publishEvents)
		cfg.OnChange("notify-keyspace-events", func() {
			store.SetEvents(eventClasses(cfg.NotifyKeyspaceEvents()), nil)
		})
		s.Tracking = tracking.NewTable(store, s.trackingTarget, cfg.TrackingTableMaxKeys)
		store.SetTracker(s.Tracking)
		cfg.OnChange("tracking-table-max-keys", s.Tracking.Trim)
		setAccess := func() { store.SetAccessPolicy(AccessPolicyOf(cfg)) }
		setAccess()
		for _, name := range []string{"maxmemory-policy", "lfu-log-factor", "lfu-decay-time"} {
			cfg.OnChange(name, setAccess)
		}
		setLimits := func() { store.SetEncodingLimits(EncodingLimitsOf(cfg)) }
		setLimits()
		for _, name := range []string{"hash-max-listpack-entries", "hash-max-listpack-value", "set-max-intset-entries",
			"zset-max-listpack-entries", "zset-max-listpack-value"} {
			cfg.OnChange(name, setLimits)
		}
	}
	if cfg != nil {
		s.ACL.PubsubAll = cfg.ACLPubsubAllChannels
		s.ACL.SetRequirePass(cfg.RequirePass())
		cfg.OnChange("requirepass", func() { s.ACL.SetRequirePass(cfg.RequirePass()) })
		cfg.SetUserLines(func() []string {
			if cfg.ACLFile() != "" {
				return nil // the users live in the aclfile (ACL SAVE)
			}
			var lines []string
			for _, u := range s.ACL.Users() {
				lines = append(lines, "user "+u.Name+" "+u.Describe())
			}
			return lines
		})
	}
	return s
}

// EncodingLimitsOf is what hash and set writes follow under cfg: Redis's listpack and intset
// limits (shard.EncodingLimits).
func EncodingLimitsOf(cfg *config.Config) shard.EncodingLimits {
	num := func(name string) int64 {
		n, _ := strconv.ParseInt(cfg.Value(name), 10, 64)
		return n
	}
	return shard.EncodingLimits{HashEntries: num("hash-max-listpack-entries"),
		HashValue: num("hash-max-listpack-value"), SetIntEntries: num("set-max-intset-entries"),
		ZSetEntries: num("zset-max-listpack-entries"), ZSetValue: num("zset-max-listpack-value")}
}

// AccessPolicyOf is what key accesses record under cfg: an LFU counter with an LFU
// maxmemory-policy (allkeys-lfu, volatile-lfu), else the LRU clock, as in Redis. shardis
// evicts nothing: the policy only chooses what OBJECT FREQ and IDLETIME can answer.
func AccessPolicyOf(cfg *config.Config) shard.AccessPolicy {
	num := func(name string) int64 {
		n, _ := strconv.ParseInt(cfg.Value(name), 10, 64)
		return n
	}
	return shard.AccessPolicy{
		LFU:       strings.HasSuffix(cfg.Value("maxmemory-policy"), "-lfu"),
		LogFactor: num("lfu-log-factor"),
		DecayTime: num("lfu-decay-time"),
	}
}

// eventClasses is what the store produces for notify-keyspace-events c: nothing unless
// events go to a keyspace or a keyevent channel, as in Redis.
func eventClasses(c pubsub.Class) uint32 {
	if c&(pubsub.Keyspace|pubsub.Keyevent) == 0 {
		return 0
	}
	return uint32(c)
}

// publishEvents publishes the keyspace events of a committed transaction (shard.EventSink)
// on their __keyspace@<db>__ and __keyevent@<db>__ channels, as notify-keyspace-events says.
func (s *Server) publishEvents(events []shard.Event) {
	enabled := s.Config.NotifyKeyspaceEvents()
	for _, ev := range events {
		s.PubSub.Notify(ev.Origin, ev.Pos, enabled, ev.Name, ev.DB, ev.Key)
	}
}

// trackingTarget finds the connection a tracking client redirects its invalidations to.
func (s *Server) trackingTarget(id int64) (tracking.Target, bool) {
	cl := s.Clients.Get(id)
	if cl == nil || cl.Sub == nil {
		return tracking.Target{}, false
	}
	return tracking.Target{Sub: cl.Sub, Subscribed: cl.PubSub()}, true
}

// Paused reports whether a command must wait for CLIENT UNPAUSE or the pause's end, and until
// when. mayWrite says whether the command may write or replicate (CLIENT PAUSE WRITE holds
// back only those).
func (s *Server) Paused(mayWrite bool, nowMs int64) (bool, int64) {
	until := s.pauseUntil.Load()
	if until == 0 || until <= nowMs {
		return false, 0
	}
	if s.pauseAll.Load() || mayWrite {
		return true, until
	}
	return false, 0
}

// Keyspace is what a command of the data (cmds.Ctx.Keyspace) may use beyond its transaction:
// the store, for routing, the database count and the loops' reads; SCAN's cursors; the
// keyspace hit and miss counters; when the server started (OBJECT IDLETIME's clock); and the
// largest string a client may build. The clients, users, configuration and the rest of the
// server are handed only to the commands that administer them (cmds.Command.RunServer).
type Keyspace struct {
	Store      *shard.Store
	Cursors    *Cursors
	Stats      *Stats
	Started    time.Time
	MaxBulkLen func() int64 // proto-max-bulk-len; nil: Redis's default
	// HLLSparseMaxBytes is hll-sparse-max-bytes; nil: Redis's default.
	HLLSparseMaxBytes func() int64
}

// KeyspaceView returns the part of s the commands of the data see.
func (s *Server) KeyspaceView() Keyspace {
	k := Keyspace{Store: s.Store, Cursors: &s.Cursors, Stats: &s.Stats, Started: s.Started}
	if s.Config != nil {
		k.MaxBulkLen = s.Config.ProtoMaxBulkLen
		k.HLLSparseMaxBytes = s.Config.HLLSparseMaxBytes
	}
	return k
}

// Stats are the server-wide counters INFO reports.
type Stats struct {
	ConnectionsReceived atomic.Int64
	RejectedConnections atomic.Int64
	CommandsProcessed   atomic.Int64
	NetInputBytes       atomic.Int64
	NetOutputBytes      atomic.Int64
	ExpiredAtReset      atomic.Int64 // Store.ExpiredKeys when CONFIG RESETSTAT ran
	KeyspaceHits        atomic.Int64
	KeyspaceMisses      atomic.Int64
	ErrorReplies        atomic.Int64
	ReadsProcessed      atomic.Int64 // reads of a connection's input (INFO total_reads_processed)
	WritesProcessed     atomic.Int64 // writes of replies and pushes to a connection
	ResetAt             atomic.Int64 // unix ms of CONFIG RESETSTAT
	// Replication (INFO stats): full syncs served, partial syncs accepted and refused.
	SyncFull, SyncPartialOK, SyncPartialErr atomic.Int64
}

// ResetStats zeroes the server's statistics (CONFIG RESETSTAT; the command table's own
// counters are reset by cmds).
func (s *Server) ResetStats() {
	st := &s.Stats
	for _, c := range []*atomic.Int64{&st.ConnectionsReceived, &st.RejectedConnections, &st.CommandsProcessed,
		&st.NetInputBytes, &st.NetOutputBytes, &st.KeyspaceHits, &st.KeyspaceMisses, &st.ErrorReplies,
		&st.ReadsProcessed, &st.WritesProcessed, &st.SyncFull, &st.SyncPartialOK, &st.SyncPartialErr} {
		c.Store(0)
	}
	st.ResetAt.Store(time.Now().UnixMilli())
	st.ExpiredAtReset.Store(s.Store.ExpiredKeys.Load())
	s.MemPeak.Store(0)
	s.Errors.Reset()
}

// Pause holds back commands until unix ms until: every command with all, else writes only
// (CLIENT PAUSE). As in Redis, a pause already in effect is only ever extended and made
// stricter: the later end and the stricter mode win.
func (s *Server) Pause(until int64, all bool) {
	s.pauseMu.Lock()
	defer s.pauseMu.Unlock()
	cur := s.pauseUntil.Load()
	if cur > time.Now().UnixMilli() {
		all = all || s.pauseAll.Load()
		until = max(until, cur)
	}
	if until <= 0 {
		return
	}
	s.pauseAll.Store(all)
	s.pauseUntil.Store(until)
}

// Unpause ends a pause (CLIENT UNPAUSE) and wakes the connections it held back.
func (s *Server) Unpause() {
	s.pauseMu.Lock()
	s.pauseUntil.Store(0)
	waiters := s.pauseWaiters
	s.pauseWaiters = nil
	s.pauseMu.Unlock()
	for _, wake := range waiters {
		wake()
	}
}

// WaitUnpause registers wake to be called by Unpause: a connection holding back a command
// for the pause. (The connection also sets a timer for the pause's end.)
func (s *Server) WaitUnpause(wake func()) {
	s.pauseMu.Lock()
	s.pauseWaiters = append(s.pauseWaiters, wake)
	s.pauseMu.Unlock()
}

// LoadUsers applies the config's "user" lines, then its aclfile, as Redis does at start-up
// (after requirepass, which New applied to the default user). Defining users both ways is
// refused, as in Redis.
func (s *Server) LoadUsers() error {
	cfg := s.Config
	if cfg.ACLFile() != "" && len(cfg.Users()) > 0 {
		return errors.New("Configuring Redis with users defined in redis.conf and at the same setting an ACL file path is invalid. This setup is very likely to lead to configuration errors and security holes, please define either an ACL file or declare users directly in your redis.conf, but not both.")
	}
	if err := s.ACL.LoadConfigured(cfg.Users()); err != nil {
		return fmt.Errorf("Critical error while loading ACLs: %v", err)
	}
	if f := cfg.ACLFile(); f != "" {
		if _, err := s.ACL.LoadFile(f); err != nil {
			return fmt.Errorf("Aborting Redis startup because of ACL errors: %v", err)
		}
	}
	return nil
}

// OutputLimit returns client-output-buffer-limit for a connection, of its pubsub class when
// it is subscribed, else of the normal class (there are no replicas): the bytes of output it
// may hold (hard), or hold for longer than softFor (soft); 0 is no limit.
func (s *Server) OutputLimit(subscribed bool) (hard, soft int64, softFor time.Duration) {
	class := config.ClassNormal
	if subscribed {
		class = config.ClassPubSub
	}
	l := s.Config.OutputLimit(class)
	return l.Hard, l.Soft, time.Duration(l.SoftSeconds) * time.Second
}

// PubSubLimit returns client-output-buffer-limit's pubsub class, the bound of a subscriber's
// queue.
func (s *Server) PubSubLimit() pubsub.Limit {
	l := s.Config.OutputLimit(config.ClassPubSub)
	return pubsub.Limit{Hard: l.Hard, Soft: l.Soft, SoftFor: time.Duration(l.SoftSeconds) * time.Second}
}
