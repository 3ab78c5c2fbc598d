package script

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
// server.ScriptBusy, which admission reads to refuse every client's command but the allow_busy
// ones once the script runs past busy-reply-threshold, as Redis does. As in Redis, the kill
// commands act on a script that has run for the busy threshold: sent earlier, they wait until
// then (in Redis the server reads them only then); a script that has written is UNKILLABLE,
// since shardis, like Redis, cannot undo its writes.

// defaultBusyThreshold applies where there is no config (internal callers).
const defaultBusyThreshold = 5 * time.Second

// The errors of Kill, as Redis replies them.
var (
	ErrNotBusy      = errors.New("NOTBUSY No scripts in execution right now.")
	ErrUnkillable   = errors.New("UNKILLABLE Sorry the script already executed write commands against the dataset. You can either wait the script termination or kill the server in a hard way using the SHUTDOWN NOSAVE command.")
	errBusyScript   = errors.New(server.ErrBusyScript)
	errBusyFunction = errors.New(server.ErrBusyFunction)
)

// Running is one run of a script or function, registered from Start until Finish. The
// goroutine running the script owns the registration (it calls Start, Invocation.Run and
// Finish); the kill commands, FUNCTION STATS and SHUTDOWN read it from other goroutines. The
// exported fields are set by Start and never change.
type Running struct {
	Name     string    // the script's SHA1 or the function's name
	Command  [][]byte  // the FCALL command (a copy), for FUNCTION STATS; nil for a script
	Function bool      // FCALL: FUNCTION KILL stops it, SCRIPT KILL refuses
	Started  time.Time // when Start registered it

	srv     *server.Server   // nil for internal callers
	busyAt  time.Time        // Started + busy-reply-threshold
	busy    *server.BusyMark // its mark in srv.Busy, which makes the server busy past busyAt
	done    chan struct{}    // closed when the script returned
	wrote   atomic.Bool      // it ran a write command: the kill commands refuse
	killed  atomic.Bool      // a kill command stopped it
	stopped atomic.Bool      // the server is stopping (StopAll): nothing of it may commit
	ctx     context.Context
	cancel  context.CancelFunc
}

var runningScripts struct {
	mu  sync.Mutex
	set map[*Running]struct{}
}

// busyThreshold returns srv's busy-reply-threshold.
func busyThreshold(srv *server.Server) time.Duration {
	if srv == nil || srv.Config == nil {
		return defaultBusyThreshold
	}
	return srv.Config.BusyReplyThreshold()
}

// Start registers a run of srv (nil for internal callers) named name, which makes srv busy
// (srv.Busy) once it runs past the threshold; command is FCALL's, copied for FUNCTION STATS
// when function. The caller must call Finish once the script returned. A run started after
// StopAll is stopped already.
func Start(srv *server.Server, name string, command [][]byte, function bool) *Running {
	ctx, cancel := context.WithCancel(context.Background())
	threshold := busyThreshold(srv)
	now := time.Now()
	rs := &Running{srv: srv, Started: now, busyAt: now.Add(threshold), Name: name,
		Function: function, done: make(chan struct{}), ctx: ctx, cancel: cancel}
	if function {
		for _, a := range command {
			rs.Command = append(rs.Command, bytes.Clone(a))
		}
	}
	runningScripts.mu.Lock()
	if runningScripts.set == nil {
		runningScripts.set = map[*Running]struct{}{}
	}
	runningScripts.set[rs] = struct{}{}
	runningScripts.mu.Unlock()
	if srv != nil {
		rs.busy = srv.Busy.Start(threshold, function)
		if srv.Busy.Halted() { // the server stopped: StopAll came before this script
			rs.stopped.Store(true)
			rs.killed.Store(true)
			cancel()
		}
	}
	return rs
}

// Finish unregisters the run and stops its busy mark.
func (rs *Running) Finish() {
	if rs.busy != nil {
		rs.srv.Busy.Stop(rs.busy)
	}
	runningScripts.mu.Lock()
	delete(runningScripts.set, rs)
	runningScripts.mu.Unlock()
	rs.cancel()
	close(rs.done)
}

// MarkWrote records that the script ran a write command: the kill commands can no longer stop
// it.
func (rs *Running) MarkWrote() { rs.wrote.Store(true) }

// Interrupt stops the script at its next instruction, whatever pcall it is in, without
// counting as a kill (a script that strayed beyond its shards: its reply is dropped).
func (rs *Running) Interrupt() { rs.cancel() }

// Killed reports whether a kill command or StopAll stopped the script.
func (rs *Running) Killed() bool { return rs.killed.Load() }

// Stopped reports whether the server stopped the script as it stops (StopAll): nothing the
// script did may commit.
func (rs *Running) Stopped() bool { return rs.stopped.Load() }

// Oldest returns srv's script running the longest, or nil.
func Oldest(srv *server.Server) *Running {
	runningScripts.mu.Lock()
	defer runningScripts.mu.Unlock()
	var oldest *Running
	for rs := range runningScripts.set {
		if rs.srv == srv && (oldest == nil || rs.Started.Before(oldest.Started)) {
			oldest = rs
		}
	}
	return oldest
}

// Busy returns srv's script running the longest if it ran past the busy threshold, or nil.
func Busy(srv *server.Server) *Running {
	rs := Oldest(srv)
	if rs == nil || time.Now().Before(rs.busyAt) {
		return nil
	}
	return rs
}

// Kill is SCRIPT KILL (function false) and FUNCTION KILL: it stops srv's oldest script once
// it ran past the busy threshold, waiting until then. The error is the command's reply, in
// Redis's order: ErrNotBusy when no script runs, ErrUnkillable when it wrote (whichever kill
// command), Redis's BUSY error when it is of the other kind.
func Kill(srv *server.Server, function bool) error {
	for {
		rs := Oldest(srv)
		if rs == nil {
			return ErrNotBusy
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
		if rs.wrote.Load() {
			return ErrUnkillable
		}
		if rs.Function != function {
			if rs.Function {
				return errBusyFunction
			}
			return errBusyScript
		}
		rs.killed.Store(true)
		rs.cancel()
		return nil
	}
}

// StopAll stops every script srv runs, as the server stops (SHUTDOWN NOSAVE, SIGTERM): each
// ends at its next instruction, Stopped, so that its caller fails its transaction and none of
// a script that had written commits half done; the server can then wait for its commands to
// end. Scripts started later are stopped at Start.
func StopAll(srv *server.Server) {
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
