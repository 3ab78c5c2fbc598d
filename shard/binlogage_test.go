package shard

import (
	"fmt"
	"testing"
	"time"

	"shardis/binlog"
)

func TestBinlogAges_CutBefore(t *testing.T) {
	var a binlogAges
	a.note(11, 1_000_100) // records 1-10 written by 1,000.1 s
	a.note(15, 1_000_900) // same second: replaces the mark
	a.note(21, 1_002_000) // records 15-20 by 1,002.0 s
	a.note(31, 1_005_500)
	if len(a.marks) != 3 {
		t.Fatalf("marks %v: want one per second", a.marks)
	}
	for _, c := range []struct {
		oldest int64
		want   uint64
	}{
		{1_000_000, 0},  // nothing is that old
		{1_000_900, 0},  // records up to 14 include one written at 1,000.9 s: keep them
		{1_000_901, 15}, // 1-14 all older
		{1_004_000, 21},
		{1_006_000, 31},
	} {
		if got := a.cutBefore(c.oldest); got != c.want {
			t.Errorf("cutBefore(%d) = %d, want %d", c.oldest, got, c.want)
		}
	}
	a.forget(21)
	if got := a.cutBefore(1_006_000); got != 31 || len(a.marks) != 1 {
		t.Fatalf("after forget(21): cut %d, marks %v", got, a.marks)
	}
}

// A clock that steps back must not make a mark claim records are older than they are.
func TestBinlogAges_ClockStepsBack(t *testing.T) {
	var a binlogAges
	a.note(11, 2_000_000)
	a.note(21, 1_000_000) // records 11-20 logged after the clock went back
	if got := a.cutBefore(1_500_000); got != 0 {
		t.Fatalf("cutBefore = %d: records 1-10 were written at 2,000 s", got)
	}
}

// Retention by age drops what is older than the window and keeps the rest, reading the
// marks instead of the binlog; after a restart the records written before it are known to be
// no newer than the newest of them.
func TestTrimBinlog_ByAge(t *testing.T) {
	dir := t.TempDir()
	s := openTestStore(t, dir, 1)
	logN := func(s *Store, n int) {
		for i := range n {
			_ = s.Do(0, func(tx *Tx) { tx.Log(0, []byte("k"), []byte("SET"), []byte("k"), fmt.Appendf(nil, "%d", i)) })
		}
	}
	logN(s, 10)
	time.Sleep(1100 * time.Millisecond) // the next records fall in another second
	logN(s, 10)
	if n, err := s.Shard(0).TrimBinlog(0, 600*time.Millisecond); err != nil || n != 10 {
		t.Fatalf("trim = %d, %v; want the 10 records older than 600 ms", n, err)
	}
	if first, last := s.Shard(0).BinlogRange(); first != 11 || last != 20 {
		t.Fatalf("range after trim %d..%d", first, last)
	}
	if n, _ := s.Shard(0).TrimBinlog(0, time.Hour); n != 0 {
		t.Fatalf("a one-hour window trimmed %d", n)
	}

	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = openTestStore(t, dir, 1)
	if n, _ := s.Shard(0).TrimBinlog(0, 600*time.Millisecond); n != 0 {
		t.Fatalf("right after the restart trimmed %d: the newest record is younger than the window", n)
	}
	time.Sleep(700 * time.Millisecond)
	if n, _ := s.Shard(0).TrimBinlog(0, 600*time.Millisecond); n != 9 {
		t.Fatalf("trim after the window = %d, want 9 (the newest record always stays)", n)
	}
	// The binlog still reads back in order through its vector memtable.
	var seqs []uint64
	_ = s.Do(0, func(tx *Tx) {
		it := tx.IterateBinlog(0, 0)
		defer it.Close()
		for ; it.Valid(); it.Next() {
			seq, _ := binlog.KeySeq(it.Key())
			seqs = append(seqs, seq)
		}
	})
	if fmt.Sprint(seqs) != "[20]" {
		t.Fatalf("records left %v, want [20]", seqs)
	}
}

// A binlog kept for ever must not grow the marks for ever: past the bound half of them go,
// and the cut stays on the safe side.
func TestBinlogAges_BoundedWhenNeverTrimmed(t *testing.T) {
	var a binlogAges
	for i := range 3 * maxAgeMarks {
		a.note(uint64(i+2), int64(i)*1000) // record i+1 written at second i
	}
	if len(a.marks) > maxAgeMarks {
		t.Fatalf("%d marks, bound %d", len(a.marks), maxAgeMarks)
	}
	for _, oldest := range []int64{500, 70_000_500, 150_000_000} {
		cut := a.cutBefore(oldest)
		// Records before cut were all written before oldest: record r at second r-1.
		if cut > 0 && int64(cut-2)*1000 >= oldest {
			t.Fatalf("cutBefore(%d) = %d drops record %d written at %d", oldest, cut, cut-1, int64(cut-2)*1000)
		}
		if oldest >= 70_000_500 && cut == 0 {
			t.Fatalf("cutBefore(%d) = 0: the coarser marks should still cut", oldest)
		}
	}
}
