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

// ScriptBusy says whether a script runs past busy-reply-threshold: the server is then busy,
// and admission refuses every client's command but those flagged allow_busy, as Redis does.
// Scripts on disjoint shards run at the same time, so each running script has a slot: it
// takes one when it starts and frees it when it ends (Start, Stop, from the goroutine running
// it); any goroutine reads them (Error). While no script runs, Error is one atomic load.
type ScriptBusy struct {
	running atomic.Int32 // scripts running now
	halted  atomic.Bool  // the server is stopping: scripts that start now end at once
	mu      sync.Mutex   // serializes growing slots
	slots   atomic.Pointer[[]*BusySlot]
}

// BusySlot is one running script's: when it becomes busy, and whether it is a function.
type BusySlot struct {
	used atomic.Bool
	at   atomic.Int64 // unix ns; 0: not set yet or stopped
	fn   atomic.Bool
}

// take returns a free slot, marked used, making one when all are taken.
func (b *ScriptBusy) take() *BusySlot {
	if s := b.slots.Load(); s != nil {
		for _, sl := range *s {
			if sl.used.CompareAndSwap(false, true) {
				return sl
			}
		}
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	var grown []*BusySlot
	if s := b.slots.Load(); s != nil {
		for _, sl := range *s {
			if sl.used.CompareAndSwap(false, true) {
				return sl
			}
		}
		grown = append(grown, *s...)
	}
	sl := &BusySlot{}
	sl.used.Store(true)
	grown = append(grown, sl)
	b.slots.Store(&grown)
	return sl
}

// Start records a script starting now that becomes busy after threshold; the caller hands
// the slot to Stop when the script ended.
func (b *ScriptBusy) Start(threshold time.Duration, function bool) *BusySlot {
	sl := b.take()
	sl.fn.Store(function)
	sl.at.Store(time.Now().Add(max(threshold, 1)).UnixNano())
	b.running.Add(1)
	return sl
}

// Stop records that the script that took sl ended.
func (b *ScriptBusy) Stop(sl *BusySlot) {
	sl.at.Store(0)
	sl.used.Store(false)
	b.running.Add(-1)
}

// Halt records that the server is stopping (see Halted).
func (b *ScriptBusy) Halt() { b.halted.Store(true) }

// Halted reports whether the server is stopping: a script starting now must end at once.
func (b *ScriptBusy) Halted() bool { return b.halted.Load() }

// Running reports whether any script runs (one atomic load).
func (b *ScriptBusy) Running() bool { return b.running.Load() > 0 }

// Error returns the BUSY error of a script running past its threshold (the function's text
// for FCALL), else "".
func (b *ScriptBusy) Error() string {
	if !b.Running() {
		return ""
	}
	s := b.slots.Load()
	if s == nil {
		return ""
	}
	now := time.Now().UnixNano()
	for _, sl := range *s {
		if at := sl.at.Load(); at != 0 && now >= at {
			if sl.fn.Load() {
				return ErrBusyFunction
			}
			return ErrBusyScript
		}
	}
	return ""
}
