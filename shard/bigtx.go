package shard

import (
	"runtime/debug"
	"sync"
)

// A big transaction (a script's million writes) keeps its overlay live until it commits, and
// Go's collector lets the heap grow to twice what is live before it collects: the overlay's
// garbage-free growth costs its size again in room. While any transaction holds at least
// bigTxEntries overlay entries, the collector runs at bigTxGCPercent instead, so the heap's
// peak is about a quarter more than the overlay rather than double.

const (
	bigTxEntries   = 1 << 16
	bigTxGCPercent = 25
)

var bigTxs struct {
	mu      sync.Mutex
	n       int // transactions counted big
	prevGC  int // the GC percent before the first of them
	lowered bool
}

// noteBig counts tx as big once its overlay reaches bigTxEntries.
func (tx *Tx) noteBig() {
	if tx.big || len(tx.overlay) < bigTxEntries || tx.view {
		return
	}
	tx.big = true
	bigTxs.mu.Lock()
	defer bigTxs.mu.Unlock()
	if bigTxs.n++; bigTxs.n == 1 {
		prev := debug.SetGCPercent(bigTxGCPercent)
		if prev <= bigTxGCPercent { // already as low, or off (-1): leave it
			debug.SetGCPercent(prev)
			return
		}
		bigTxs.prevGC, bigTxs.lowered = prev, true
	}
}

// endBig uncounts tx when it was big (at its reset).
func (tx *Tx) endBig() {
	if !tx.big {
		return
	}
	tx.big = false
	bigTxs.mu.Lock()
	defer bigTxs.mu.Unlock()
	if bigTxs.n--; bigTxs.n == 0 && bigTxs.lowered {
		debug.SetGCPercent(bigTxs.prevGC)
		bigTxs.lowered = false
	}
}
