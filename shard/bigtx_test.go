package shard

import (
	"fmt"
	"runtime/debug"
	"testing"
)

// gcPercent reads the collector's setting.
func gcPercent() int {
	p := debug.SetGCPercent(100)
	debug.SetGCPercent(p)
	return p
}

// While a transaction holds bigTxEntries overlay entries the collector runs at bigTxGCPercent;
// the commit gives the setting back.
func TestTx_BigTransaction_LowersGCPercentUntilCommit(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	s := openTestStore(t, t.TempDir(), 1)
	var small, big int
	err := s.Do(0, func(tx *Tx) {
		for i := range bigTxEntries {
			tx.putRaw(0, fmt.Appendf(nil, "\x02k%d", i), nil)
			if i == bigTxEntries/2 {
				small = gcPercent()
			}
		}
		big = gcPercent()
	})
	if err != nil {
		t.Fatal(err)
	}
	if small != 100 || big != bigTxGCPercent || gcPercent() != 100 {
		t.Fatalf("GC percent %d half way, %d when big, %d after the commit; want 100, %d, 100",
			small, big, gcPercent(), bigTxGCPercent)
	}
}

// With the collector off (GOGC=off), a big transaction leaves it off.
func TestTx_BigTransaction_CollectorOff_StaysOff(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	s := openTestStore(t, t.TempDir(), 1)
	var during int
	err := s.Do(0, func(tx *Tx) {
		for i := range bigTxEntries {
			tx.putRaw(0, fmt.Appendf(nil, "\x02k%d", i), nil)
		}
		during = gcPercent()
	})
	if err != nil {
		t.Fatal(err)
	}
	if during != -1 || gcPercent() != -1 {
		t.Fatalf("GC percent %d during a big transaction and %d after, with the collector off", during, gcPercent())
	}
}
