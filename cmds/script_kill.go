package cmds

import (
	"bytes"
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"shardis/server"
)

// SCRIPT KILL, FUNCTION KILL and the busy state. A running script is registered here with the
// cancel function of the context its Lua state watches (gopher-lua checks it between
// instructions, so even a loop that calls nothing stops), and with its server's
// server.ScriptBusy, which the reactor reads to refuse commands needing one of its shards once
// the script runs past busy-reply-threshold. As in Redis, the kill commands act on a script that
// has run for the busy threshold: sent earlier, they wait until then (in Redis the server
// reads them only then); a script that has written is UNKILLABLE, since shardis, like Redis,
// cannot undo its writes.

// defaultBusyThreshold applies where there is no config (internal callers).
const defaultBusyThreshold = 5 * time.Second

// runningScript is one script being run. Owned by runLua, which registers it for the
// script's run and unregisters it after; the kill commands and FUNCTION STATS read it from
// other goroutines.
type runningScript struct {
	srv      *server.Server // nil for internal callers
	start    time.Time
	busyAt   time.Time     // start + busy-reply-threshold
	name     string        // the script's SHA1 or the function's name
	command  [][]byte      // the FCALL command (a copy), for FUNCTION STATS
	function bool          // FCALL: FUNCTION KILL stops it, SCRIPT KILL refuses
	shards   []int         // the shards it holds, whose clients get BUSY past busyAt
	done     chan struct{} // closed when the script returned
	wrote    atomic.Bool   // it ran a write command: the kill commands refuse
	killed   atomic.Bool   // a kill command stopped it
	stopped  atomic.Bool   // the server is stopping (StopScripts): nothing of it may commit
	cancel   context.CancelFunc
}

var runningScripts struct {
	mu  sync.Mutex
	set map[*runningScript]struct{}
}

// busyThreshold returns srv's busy-reply-threshold.
func busyThreshold(srv *server.Server) time.Duration {
	if srv == nil || srv.Config == nil {
		return defaultBusyThreshold
	}
	return srv.Config.BusyReplyThreshold()
}

// startScript registers a script run of srv holding shards and returns it with the context its
// VM must watch.
func startScript(srv *server.Server, name string, command [][]byte, function bool, shards []int) (*runningScript, context.Context) {
	ctx, cancel := context.WithCancel(context.Background())
	threshold := busyThreshold(srv)
	now := time.Now()
	rs := &runningScript{srv: srv, start: now, busyAt: now.Add(threshold), name: name,
		function: function, shards: shards, done: make(chan struct{}), cancel: cancel}
	if function {
		for _, a := range command {
			rs.command = append(rs.command, bytes.Clone(a))
		}
	}
	runningScripts.mu.Lock()
	if runningScripts.set == nil {
		runningScripts.set = map[*runningScript]struct{}{}
	}
	runningScripts.set[rs] = struct{}{}
	runningScripts.mu.Unlock()
	if srv != nil {
		srv.Busy.Start(shards, threshold, function)
		if srv.Busy.Halted() { // the server stopped: StopScripts came before this script
			rs.stopped.Store(true)
			rs.killed.Store(true)
			cancel()
		}
	}
	return rs, ctx
}

// finish unregisters the run.
func (rs *runningScript) finish() {
	if rs.srv != nil {
		rs.srv.Busy.Stop(rs.shards)
	}
	runningScripts.mu.Lock()
	delete(runningScripts.set, rs)
	runningScripts.mu.Unlock()
	rs.cancel()
	close(rs.done)
}

// oldestScript returns srv's script running the longest, or nil.
func oldestScript(srv *server.Server) *runningScript {
	runningScripts.mu.Lock()
	defer runningScripts.mu.Unlock()
	var oldest *runningScript
	for rs := range runningScripts.set {
		if rs.srv == srv && (oldest == nil || rs.start.Before(oldest.start)) {
			oldest = rs
		}
	}
	return oldest
}

// busyScript returns srv's script running the longest if it ran past the busy threshold, or nil.
func busyScript(srv *server.Server) *runningScript {
	rs := oldestScript(srv)
	if rs == nil || time.Now().Before(rs.busyAt) {
		return nil
	}
	return rs
}

func scriptKill(c *Ctx) { killScript(c, false) }

func functionKill(c *Ctx) { killScript(c, true) }

// killScript is SCRIPT KILL (function false) and FUNCTION KILL.
func killScript(c *Ctx, function bool) {
	for {
		rs := oldestScript(c.Srv)
		if rs == nil {
			c.Error("NOTBUSY No scripts in execution right now.")
			return
		}
		if wait := time.Until(rs.busyAt); wait > 0 {
			timer := time.NewTimer(wait)
			select {
			case <-timer.C:
			case <-rs.done:
				timer.Stop()
			}
			continue
		}
		if rs.function != function {
			if rs.function {
				c.Error(server.ErrBusyFunction)
			} else {
				c.Error(server.ErrBusyScript)
			}
			return
		}
		if rs.wrote.Load() {
			c.Error("UNKILLABLE Sorry the script already executed write commands against the dataset. You can either wait the script termination or kill the server in a hard way using the SHUTDOWN NOSAVE command.")
			return
		}
		rs.killed.Store(true)
		rs.cancel()
		c.W.OK()
		return
	}
}

// StopScripts stops every script srv runs, as the server stops (SHUTDOWN NOSAVE, SIGTERM):
// each ends at its next instruction and fails its transaction, so that none of a script that
// had written commits half done; the server can then wait for its commands to end.
func StopScripts(srv *server.Server) {
	srv.Busy.Halt()
	runningScripts.mu.Lock()
	defer runningScripts.mu.Unlock()
	for rs := range runningScripts.set {
		if rs.srv == srv {
			rs.stopped.Store(true)
			rs.killed.Store(true)
			rs.cancel()
		}
	}
}

// errServerStopping fails the transaction of a script the stopping server ended.
var errServerStopping = errors.New("server is shutting down")
