package server

import (
	"sync"
	"sync/atomic"
	"time"
)

// Redis's BUSY errors: a script (EVAL) or a function (FCALL) runs past the busy threshold.
const (
	ErrBusyScript   = "BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE."
	ErrBusyFunction = "BUSY Redis is busy running a script. You can only call FUNCTION KILL or SHUTDOWN NOSAVE."
)

// ScriptBusy says which shards are held by a script running past busy-reply-threshold, for the
// reactor to refuse the commands that would wait for them; clients of other shards go on. A
// shard is held by one script at most (a script runs holding its shards), so each shard has
// one mark: the running script sets its shards' marks when it starts and clears them when it
// ends (Start, Stop, from the goroutine running it); any goroutine reads them (Error).
type ScriptBusy struct {
	running atomic.Int32 // scripts running now; 0 makes Running one atomic load
	halted  atomic.Bool  // the server is stopping: scripts that start now end at once
	mu      sync.Mutex   // serializes growing marks
	marks   atomic.Pointer[[]*busyMark]
}

// busyMark is one shard's: when the script holding it becomes busy, and whether it is a
// function.
type busyMark struct {
	at atomic.Int64 // unix ns; 0: no script holds the shard
	fn atomic.Bool
}

// mark returns shard id's mark, making room for it.
func (b *ScriptBusy) mark(id int) *busyMark {
	if m := b.marks.Load(); m != nil && id < len(*m) {
		return (*m)[id]
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	var grown []*busyMark
	if m := b.marks.Load(); m != nil {
		if id < len(*m) {
			return (*m)[id]
		}
		grown = append(grown, *m...)
	}
	for len(grown) <= id {
		grown = append(grown, &busyMark{})
	}
	b.marks.Store(&grown)
	return grown[id]
}

// Start records a script starting now, holding shards, that becomes busy after threshold.
func (b *ScriptBusy) Start(shards []int, threshold time.Duration, function bool) {
	at := time.Now().Add(max(threshold, 1)).UnixNano()
	for _, id := range shards {
		m := b.mark(id)
		m.fn.Store(function)
		m.at.Store(at)
	}
	b.running.Add(1)
}

// Stop records that the script started with shards ended.
func (b *ScriptBusy) Stop(shards []int) {
	for _, id := range shards {
		b.mark(id).at.Store(0)
	}
	b.running.Add(-1)
}

// Halt records that the server is stopping (see Halted).
func (b *ScriptBusy) Halt() { b.halted.Store(true) }

// Halted reports whether the server is stopping: a script starting now must end at once.
func (b *ScriptBusy) Halted() bool { return b.halted.Load() }

// Running reports whether any script runs (one atomic load).
func (b *ScriptBusy) Running() bool { return b.running.Load() > 0 }

// Error returns the BUSY error when the script holding shard id runs past the threshold, else
// "". A negative id asks about every shard.
func (b *ScriptBusy) Error(id int) string {
	if !b.Running() {
		return ""
	}
	m := b.marks.Load()
	if m == nil {
		return ""
	}
	now := time.Now().UnixNano()
	for i, mk := range *m {
		if id >= 0 && i != id {
			continue
		}
		if at := mk.at.Load(); at != 0 && now >= at {
			if mk.fn.Load() {
				return ErrBusyFunction
			}
			return ErrBusyScript
		}
	}
	return ""
}
