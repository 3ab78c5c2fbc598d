package cmds

import (
	"bytes"
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// SCRIPT KILL. A running script is registered here with the cancel function of the context
// its Lua state watches (gopher-lua checks it between instructions, so even a loop that calls
// nothing stops). As in Redis, SCRIPT KILL acts on a script that has run for the busy
// threshold: sent earlier, it waits until then (in Redis the server reads it only then); a
// script that has written is UNKILLABLE, since shardis, like Redis, cannot undo its writes.
//
// busy-reply-threshold is not a config parameter yet: Redis's default, 5 seconds, applies.

const scriptBusyThreshold = 5 * time.Second

// runningScript is one script being run. Owned by runScript, which registers it for the
// script's run and unregisters it after; SCRIPT KILL reads it from another goroutine.
type runningScript struct {
	start    time.Time
	name     string        // the script's SHA1 or the function's name
	command  [][]byte      // the EVAL or FCALL command (a copy), for FUNCTION STATS
	function bool          // FCALL: FUNCTION KILL stops it, SCRIPT KILL refuses
	done     chan struct{} // closed when the script returned
	wrote    atomic.Bool   // it ran a write command: SCRIPT KILL refuses
	killed   atomic.Bool   // SCRIPT KILL stopped it
	cancel   context.CancelFunc
}

var runningScripts struct {
	mu  sync.Mutex
	set map[*runningScript]struct{}
}

// startScript registers a script run and returns it with the context its VM must watch.
func startScript(name string, command [][]byte, function bool) (*runningScript, context.Context) {
	ctx, cancel := context.WithCancel(context.Background())
	rs := &runningScript{start: time.Now(), name: name, function: function,
		done: make(chan struct{}), cancel: cancel}
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
	return rs, ctx
}

// finish unregisters the run.
func (rs *runningScript) finish() {
	runningScripts.mu.Lock()
	delete(runningScripts.set, rs)
	runningScripts.mu.Unlock()
	rs.cancel()
	close(rs.done)
}

// oldestScript returns the script running the longest, or nil.
func oldestScript() *runningScript {
	runningScripts.mu.Lock()
	defer runningScripts.mu.Unlock()
	var oldest *runningScript
	for rs := range runningScripts.set {
		if oldest == nil || rs.start.Before(oldest.start) {
			oldest = rs
		}
	}
	return oldest
}

func scriptKill(c *Ctx) { killScript(c, false) }

func functionKill(c *Ctx) { killScript(c, true) }

// Redis's BUSY errors: a script runs past the busy threshold (errBusyScript) or a function
// does (errBusyFunction); SCRIPT KILL answers the second for a function, FUNCTION KILL the
// first for a script.
const (
	errBusyScript   = "BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE."
	errBusyFunction = "BUSY Redis is busy running a script. You can only call FUNCTION KILL or SHUTDOWN NOSAVE."
)

// killScript is SCRIPT KILL (function false) and FUNCTION KILL.
func killScript(c *Ctx, function bool) {
	for {
		rs := oldestScript()
		if rs == nil {
			c.Error("NOTBUSY No scripts in execution right now.")
			return
		}
		if wait := scriptBusyThreshold - time.Since(rs.start); wait > 0 {
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
				c.Error(errBusyFunction)
			} else {
				c.Error(errBusyScript)
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

// busyScript returns the script running the longest if it ran past the busy threshold, or nil.
func busyScript() *runningScript {
	rs := oldestScript()
	if rs == nil || time.Since(rs.start) < scriptBusyThreshold {
		return nil
	}
	return rs
}
