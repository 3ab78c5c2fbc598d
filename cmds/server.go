package cmds

import (
	"sync"
	"sync/atomic"
	"time"

	"shardis/config"
	"shardis/shard"
)

// Server is what commands see of the whole server. The reactor creates it and fills the
// hooks; every field is safe for concurrent use.
type Server struct {
	Store   *shard.Store
	Config  *config.Config
	Started time.Time
	RunID   string
	Port    int

	Clients Clients
	Stats   Stats
	Slowlog Slowlog
	Cursors Cursors

	// Shutdown stops the server (SHUTDOWN); it returns once the server is stopping.
	Shutdown func()

	// pauseUntil/pauseAll: CLIENT PAUSE state, read by the reactor before dispatching.
	pauseUntil   atomic.Int64 // unix ms; 0: not paused
	pauseAll     atomic.Bool  // ALL (true) or WRITE (false)
	pauseMu      sync.Mutex   // serialises Pause's read-modify-write and guards pauseWaiters
	pauseWaiters []func()

	bgsave sync.Mutex // one checkpoint at a time

	// SAVE/BGSAVE bookkeeping for INFO persistence.
	bgsaveRunning  atomic.Bool
	bgsaveStarted  atomic.Int64 // unix ms the running BGSAVE started
	bgsaveLastSecs atomic.Int64 // duration of the last BGSAVE, seconds
	bgsaveEver     atomic.Bool  // a BGSAVE finished (else rdb_last_bgsave_time_sec is -1)
	bgsaveFailed   atomic.Bool  // the last BGSAVE failed
	saves          atomic.Int64 // successful SAVE/BGSAVE count

	memPeak atomic.Int64 // highest used_memory INFO reported

	rate   rateSampler // instantaneous_* of INFO stats
	replID struct {
		once sync.Once
		id   string
	}
}

// Paused reports whether a command must wait for CLIENT UNPAUSE or the pause's end, and until
// when.
func (s *Server) Paused(cmd *Command, nowMs int64) (bool, int64) {
	until := s.pauseUntil.Load()
	if until == 0 || until <= nowMs {
		return false, 0
	}
	if s.pauseAll.Load() || cmd.IsWrite() || cmd.Name == "exec" {
		return true, until
	}
	return false, 0
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
	ResetAt             atomic.Int64 // unix ms of CONFIG RESETSTAT
}

// cmdStats are one command's INFO commandstats counters.
type cmdStats struct {
	calls, usec, rejected, failed atomic.Int64
}

// Record counts one call of cmd that took d; failed when it replied with an error.
func (cmd *Command) Record(d time.Duration, failed bool) {
	cmd.stats.calls.Add(1)
	cmd.stats.usec.Add(d.Microseconds())
	if failed {
		cmd.stats.failed.Add(1)
	}
}

// Stats returns the command's INFO commandstats counters.
func (cmd *Command) Stats() (calls, usec, rejected, failed int64) {
	st := cmd.stats
	if st == nil {
		return 0, 0, 0, 0
	}
	return st.calls.Load(), st.usec.Load(), st.rejected.Load(), st.failed.Load()
}

// Reject counts a call refused before it ran (arity, auth).
func (cmd *Command) Reject() { cmd.stats.rejected.Add(1) }

// ResetStats zeroes the statistics (CONFIG RESETSTAT).
func (s *Server) ResetStats() {
	for _, cmd := range table {
		resetCmdStats(cmd.stats)
		for _, sub := range cmd.Subs {
			resetCmdStats(sub.stats)
		}
	}
	st := &s.Stats
	for _, c := range []*atomic.Int64{&st.ConnectionsReceived, &st.RejectedConnections, &st.CommandsProcessed,
		&st.NetInputBytes, &st.NetOutputBytes, &st.KeyspaceHits, &st.KeyspaceMisses, &st.ErrorReplies} {
		c.Store(0)
	}
	st.ResetAt.Store(time.Now().UnixMilli())
	st.ExpiredAtReset.Store(s.Store.ExpiredKeys.Load())
	s.memPeak.Store(0)
}

func resetCmdStats(c *cmdStats) {
	c.calls.Store(0)
	c.usec.Store(0)
	c.rejected.Store(0)
	c.failed.Store(0)
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
