// Package memfree gives the memory of a big buffer back to the operating system once it is
// released. Go's collector frees a dead buffer for reuse, but the runtime returns its pages to
// the system only slowly (the background scavenger), so one 512 MB value would leave the
// process that much bigger for minutes. A buffer of at least Threshold bytes reported
// released asks for debug.FreeOSMemory (a collection, and a return of every free page) a
// little later, at most once per Interval.
//
// The report comes where the buffer's last user is known to finish soon, not where it does
// (a batch's input is let go once its replies are written; a big reply once the socket took
// it, which takes seconds for a slow reader): a return that collected less than half of what
// was reported is tried again an Interval later, for up to Window after the last report.
package memfree

import (
	"runtime/debug"
	"runtime/metrics"
	"sync"
	"sync/atomic"
	"time"
)

const (
	// Threshold is the smallest release worth a forced collection.
	Threshold = 16 << 20
	// Delay lets the reporting code path drop its last references first.
	Delay = 100 * time.Millisecond
	// Interval is the least time between two forced returns.
	Interval = time.Second
	// Window is how long after the last report returns are retried.
	Window = 10 * time.Second
)

var (
	mu      sync.Mutex
	pending bool      // a timer is armed
	due     time.Time // when the armed timer should return memory
	until   time.Time // the end of the retries
	want    int       // the most reported since the last return that collected it
	high    uint64    // the heap's objects when reported (the most since that return)
	last    time.Time // the last return
	// Returns counts the forced returns, for tests.
	Returns atomic.Int64
)

// Released reports that a buffer of n bytes is no longer used, or soon will not be. It never
// blocks.
func Released(n int) {
	if n < Threshold {
		return
	}
	mu.Lock()
	defer mu.Unlock()
	now := time.Now()
	due, until, want = now.Add(Delay), now.Add(Window), max(want, n)
	high = max(high, heapObjects())
	if next := last.Add(Interval); next.After(due) {
		due = next
	}
	if !pending {
		pending = true
		time.AfterFunc(time.Until(due), run)
	}
}

func run() {
	mu.Lock()
	if wait := time.Until(due); wait > 0 { // reported again since the timer was armed
		time.AfterFunc(wait, run)
		mu.Unlock()
		return
	}
	mu.Unlock()
	debug.FreeOSMemory()
	Returns.Add(1)
	live := heapObjects()
	mu.Lock()
	defer mu.Unlock()
	last = time.Now()
	if live+uint64(want/2) <= high || !last.Before(until) {
		pending, want, high = false, 0, 0 // a report from now on arms a return again
		return
	}
	due = last.Add(Interval)
	time.AfterFunc(Interval, run)
}

// heapObjects returns the bytes of the heap's objects, live or not yet collected.
func heapObjects() uint64 {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return s[0].Value.Uint64()
}
