// Package memfree gives the memory of a big buffer back to the operating system once it is
// released. Go's collector frees a dead buffer for reuse, but the runtime returns its pages to
// the system only slowly (the background scavenger), so one 512 MB value would leave the
// process that much bigger for minutes. A released buffer of at least Threshold bytes asks for
// debug.FreeOSMemory (a collection and a return of every free page) a little later, at most
// once per Interval: the callers' references are gone by then, and a stream of big values
// costs one forced collection per interval, not one per value.
package memfree

import (
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"
)

const (
	// Threshold is the smallest release worth a forced collection.
	Threshold = 16 << 20
	// Delay lets the releasing code path drop its last references first (a batch's replies
	// are written after its transaction committed).
	Delay = 100 * time.Millisecond
	// Interval is the least time between two forced returns.
	Interval = time.Second
)

var (
	mu      sync.Mutex
	pending bool
	last    time.Time
	// Returns counts the forced returns, for tests.
	Returns atomic.Int64
)

// Released reports that a buffer of n bytes is no longer used. It never blocks.
func Released(n int) {
	if n < Threshold {
		return
	}
	mu.Lock()
	defer mu.Unlock()
	if pending {
		return
	}
	pending = true
	wait := Delay
	if next := time.Until(last.Add(Interval)); next > wait {
		wait = next
	}
	time.AfterFunc(wait, run)
}

func run() {
	mu.Lock()
	pending, last = false, time.Now() // a release from now on asks for another return
	mu.Unlock()
	debug.FreeOSMemory()
	Returns.Add(1)
}
