package bench

import (
	"math"
	"math/rand/v2"
	"testing"
)

func TestHistogram_BucketBoundsContainValueWithinOnePercent(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 200000; i++ {
		v := r.Uint64N(1 << uint(r.IntN(38)+1))
		idx := histIndex(v)
		lo, hi := histBounds(idx)
		if v < lo || v > hi {
			t.Fatalf("value %d in bucket %d [%d,%d]", v, idx, lo, hi)
		}
		if lo > 0 && float64(hi-lo)/float64(lo) > 0.01 {
			t.Fatalf("bucket %d [%d,%d] wider than 1%%", idx, lo, hi)
		}
	}
	// Buckets are contiguous: every bucket starts right after the previous one ends.
	for i := 1; i < histBuckets; i++ {
		_, prevHi := histBounds(i - 1)
		lo, _ := histBounds(i)
		if lo != prevHi+1 {
			t.Fatalf("bucket %d starts at %d, previous ends at %d", i, lo, prevHi)
		}
	}
}

func TestHistogram_PercentilesOfUniformValues(t *testing.T) {
	h := NewHistogram()
	// 1 µs .. 100 ms in 1 µs steps, shuffled order must not matter.
	const n = 100000
	perm := rand.New(rand.NewPCG(3, 4)).Perm(n)
	for _, p := range perm {
		h.Record(uint64(p+1) * 1000)
	}
	if h.Count() != n {
		t.Fatalf("count %d", h.Count())
	}
	for _, q := range []float64{1, 10, 50, 90, 99, 99.9} {
		want := q / 100 * n * 1000
		got := float64(h.Percentile(q))
		if math.Abs(got-want)/want > 0.01 {
			t.Errorf("p%v = %v, want %v ±1%%", q, got, want)
		}
	}
	if h.Percentile(0) != 1000 || h.Min() != 1000 {
		t.Errorf("p0 %d min %d, want 1000", h.Percentile(0), h.Min())
	}
	if h.Percentile(100) != n*1000 || h.Max() != n*1000 {
		t.Errorf("p100 %d max %d, want %d", h.Percentile(100), h.Max(), n*1000)
	}
	if want := float64(n+1) / 2 * 1000; math.Abs(h.Mean()-want) > 1e-6*want {
		t.Errorf("mean %v, want %v", h.Mean(), want)
	}
}

func TestHistogram_MergeEqualsRecordingEverything(t *testing.T) {
	a, b, all := NewHistogram(), NewHistogram(), NewHistogram()
	r := rand.New(rand.NewPCG(5, 6))
	for i := 0; i < 50000; i++ {
		v := uint64(r.ExpFloat64() * 1e6)
		all.Record(v)
		if i%3 == 0 {
			a.Record(v)
		} else {
			b.Record(v)
		}
	}
	a.Merge(b)
	a.Merge(nil)
	a.Merge(NewHistogram())
	if a.Count() != all.Count() || a.Max() != all.Max() || a.Min() != all.Min() {
		t.Fatalf("merged count/min/max %d/%d/%d, want %d/%d/%d", a.Count(), a.Min(), a.Max(), all.Count(), all.Min(), all.Max())
	}
	for _, q := range []float64{0, 25, 50, 99, 99.9, 99.99, 100} {
		if a.Percentile(q) != all.Percentile(q) {
			t.Errorf("p%v merged %d, direct %d", q, a.Percentile(q), all.Percentile(q))
		}
	}
	if math.Abs(a.Mean()-all.Mean()) > 1e-9*all.Mean() {
		t.Errorf("mean %v vs %v", a.Mean(), all.Mean())
	}
}

func TestHistogram_EmptyAndHugeValues(t *testing.T) {
	h := NewHistogram()
	if h.Percentile(50) != 0 || h.Mean() != 0 || h.Max() != 0 || h.Min() != 0 {
		t.Fatal("empty histogram not zero")
	}
	h.Record(math.MaxUint64 / 2) // beyond the last bucket: clamped there, max stays exact
	h.Record(5)
	if h.Max() != math.MaxUint64/2 {
		t.Errorf("max %d", h.Max())
	}
	if h.Percentile(100) != math.MaxUint64/2 || h.Percentile(50) != 5 {
		t.Errorf("p50 %d p100 %d", h.Percentile(50), h.Percentile(100))
	}
	if got := h.Percentile(99); got > h.Max() || got < 1<<37 {
		t.Errorf("p99 of a clamped value: %d", got)
	}
}
