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

// ScriptBusy says whether a script runs past busy-reply-threshold: the server is then busy,
// and admission refuses every client's command but those flagged allow_busy, as Redis does.
// Scripts on disjoint shards run at the same time: each has a BusyMark, whose timer counts it
// busy once the threshold passed, until it stops. Error, asked for every command, is one
// atomic load and reads no clock; the timer is paid by each script run instead.
type ScriptBusy struct {
	busy   atomic.Int64 // busy scripts in the low 32 bits, busy functions in the high ones
	halted atomic.Bool  // the server is stopping: scripts that start now end at once
}

// BusyMark is one running script's, from Start to Stop.
type BusyMark struct {
	b     *ScriptBusy
	unit  int64        // what it adds to b.busy: 1 for a script, 1<<32 for a function
	state atomic.Int32 // markRunning, markBusy, markStopped
	timer *time.Timer
}

const (
	markRunning = iota
	markBusy
	markStopped
)

// Start records a script starting now that becomes busy after threshold; the caller hands
// the mark to Stop when the script ended.
func (b *ScriptBusy) Start(threshold time.Duration, function bool) *BusyMark {
	m := &BusyMark{b: b, unit: 1}
	if function {
		m.unit = 1 << 32
	}
	m.timer = time.AfterFunc(max(threshold, 1), m.expire)
	return m
}

// expire counts the script busy, unless it stopped first.
func (m *BusyMark) expire() {
	if m.state.CompareAndSwap(markRunning, markBusy) {
		m.b.busy.Add(m.unit)
	}
}

// Stop records that the script that took m ended.
func (b *ScriptBusy) Stop(m *BusyMark) {
	m.timer.Stop()
	if m.state.Swap(markStopped) == markBusy {
		b.busy.Add(-m.unit)
	}
}

// Halt records that the server is stopping (see Halted).
func (b *ScriptBusy) Halt() { b.halted.Store(true) }

// Halted reports whether the server is stopping: a script starting now must end at once.
func (b *ScriptBusy) Halted() bool { return b.halted.Load() }

// Error returns the BUSY error of a script running past its threshold (the function's text
// when a function is), else "". One atomic load.
func (b *ScriptBusy) Error() string {
	switch v := b.busy.Load(); {
	case v == 0:
		return ""
	case v>>32 != 0:
		return ErrBusyFunction
	}
	return ErrBusyScript
}
