package server

import (
	"sync/atomic"
	"time"
)

// Redis's BUSY errors: a script (EVAL) or a function (FCALL) runs past the busy threshold.
const (
	ErrBusyScript   = "BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE."
	ErrBusyFunction = "BUSY Redis is busy running a script. You can only call FUNCTION KILL or SHUTDOWN NOSAVE."
)

// ScriptBusy says whether a script runs past busy-reply-threshold, for the reactor to refuse
// the commands that would wait for its shards. A script holds every shard, so at most one
// runs at a time: the running script sets it when it starts and clears it when it ends
// (Start, Stop, from the goroutine running it); any goroutine reads it (Error).
type ScriptBusy struct {
	busyAt atomic.Int64 // unix ns the running script becomes busy; 0: no script runs
	fn     atomic.Bool  // the running script is a function
}

// Start records a script starting now that becomes busy after threshold.
func (b *ScriptBusy) Start(threshold time.Duration, function bool) {
	b.fn.Store(function)
	b.busyAt.Store(time.Now().Add(max(threshold, 1)).UnixNano())
}

// Stop records that the script ended.
func (b *ScriptBusy) Stop() { b.busyAt.Store(0) }

// Error returns the BUSY error when a script runs past the threshold, else "". It costs one
// atomic load when no script runs.
func (b *ScriptBusy) Error() string {
	at := b.busyAt.Load()
	if at == 0 || time.Now().UnixNano() < at {
		return ""
	}
	if b.fn.Load() {
		return ErrBusyFunction
	}
	return ErrBusyScript
}
