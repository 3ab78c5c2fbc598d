package binlog

import (
	"testing"
)

func TestAges_CutBefore(t *testing.T) {
	var a Ages
	a.Note(11, 1_000_100) // records 1-10 written by 1,000.1 s
	a.Note(15, 1_000_900) // same second: replaces the mark
	a.Note(21, 1_002_000) // records 15-20 by 1,002.0 s
	a.Note(31, 1_005_500)
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
		if got := a.CutBefore(c.oldest); got != c.want {
			t.Errorf("CutBefore(%d) = %d, want %d", c.oldest, got, c.want)
		}
	}
	a.Forget(21)
	if got := a.CutBefore(1_006_000); got != 31 || len(a.marks) != 1 {
		t.Fatalf("after Forget(21): cut %d, marks %v", got, a.marks)
	}
}

// A clock that steps back must not make a mark claim records are older than they are.
func TestAges_ClockStepsBack(t *testing.T) {
	var a Ages
	a.Note(11, 2_000_000)
	a.Note(21, 1_000_000) // records 11-20 logged after the clock went back
	if got := a.CutBefore(1_500_000); got != 0 {
		t.Fatalf("cutBefore = %d: records 1-10 were written at 2,000 s", got)
	}
}

// A binlog kept for ever must not grow the marks for ever: past the bound half of them go,
// and the cut stays on the safe side.
func TestAges_BoundedWhenNeverTrimmed(t *testing.T) {
	var a Ages
	for i := range 3 * maxAgeMarks {
		a.Note(uint64(i+2), int64(i)*1000) // record i+1 written at second i
	}
	if len(a.marks) > maxAgeMarks {
		t.Fatalf("%d marks, bound %d", len(a.marks), maxAgeMarks)
	}
	for _, oldest := range []int64{500, 70_000_500, 150_000_000} {
		cut := a.CutBefore(oldest)
		// Records before cut were all written before oldest: record r at second r-1.
		if cut > 0 && int64(cut-2)*1000 >= oldest {
			t.Fatalf("CutBefore(%d) = %d drops record %d written at %d", oldest, cut, cut-1, int64(cut-2)*1000)
		}
		if oldest >= 70_000_500 && cut == 0 {
			t.Fatalf("CutBefore(%d) = 0: the coarser marks should still cut", oldest)
		}
	}
}
