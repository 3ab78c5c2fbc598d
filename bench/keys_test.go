package bench

import (
	"math"
	"math/rand/v2"
	"testing"
)

func TestKeys_SequentialCoversRangeInOrderAndWraps(t *testing.T) {
	g := newKeyGen(PatternSequential, 10, 14, 3, 8, 0, 0, nil)
	var got []uint64
	for i := 0; i < 7; i++ {
		got = append(got, g.Next())
	}
	want := []uint64{10, 11, 12, 13, 14, 10, 11}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("got %v, want %v", got, want)
		}
	}
}

func TestKeys_ParallelSlicesPartitionTheRange(t *testing.T) {
	const clients = 7
	seen := map[uint64]int{}
	var total uint64
	for c := 0; c < clients; c++ {
		g := newKeyGen(PatternParallel, 100, 1099, c, clients, 0, 0, nil)
		n := sliceLen(100, 1099, c, clients)
		total += n
		prev := uint64(0)
		for i := uint64(0); i < n; i++ {
			k := g.Next()
			if i > 0 && k != prev+1 {
				t.Fatalf("client %d: %d after %d", c, k, prev)
			}
			prev = k
			seen[k]++
		}
	}
	if total != 1000 || len(seen) != 1000 {
		t.Fatalf("slices hold %d keys, %d distinct; want 1000", total, len(seen))
	}
	for k, n := range seen {
		if k < 100 || k > 1099 || n != 1 {
			t.Fatalf("key %d seen %d times", k, n)
		}
	}
	// More clients than keys: the extra clients get nothing.
	if sliceLen(1, 3, 3, 5) != 0 || sliceLen(1, 3, 2, 5) != 1 {
		t.Fatal("sliceLen with more clients than keys")
	}
}

func TestKeys_RandomStaysWithinBoundsAndCoversThem(t *testing.T) {
	g := newKeyGen(PatternRandom, 5, 24, 0, 1, 0, 0, rand.New(rand.NewPCG(9, 9)))
	seen := map[uint64]bool{}
	for i := 0; i < 10000; i++ {
		k := g.Next()
		if k < 5 || k > 24 {
			t.Fatalf("key %d outside 5-24", k)
		}
		seen[k] = true
	}
	if len(seen) != 20 {
		t.Fatalf("%d distinct keys of 20", len(seen))
	}
}

func TestKeys_GaussianConcentratedAroundTheMiddle(t *testing.T) {
	g := newKeyGen(PatternGaussian, 0, 9999, 0, 1, 0, 0, rand.New(rand.NewPCG(4, 4)))
	const n = 100000
	var within1, sum float64
	sd := 9999.0 / 6
	for i := 0; i < n; i++ {
		k := g.Next()
		if k > 9999 {
			t.Fatalf("key %d outside the range", k)
		}
		sum += float64(k)
		if math.Abs(float64(k)-4999.5) <= sd {
			within1++
		}
	}
	if mean := sum / n; math.Abs(mean-4999.5) > 50 {
		t.Errorf("mean %v, want about 4999.5", mean)
	}
	if frac := within1 / n; frac < 0.66 || frac > 0.70 {
		t.Errorf("%.3f within one stddev, want about 0.683", frac)
	}
	// Explicit median and stddev.
	g = newKeyGen(PatternGaussian, 0, 1000000, 0, 1, 100, 5, rand.New(rand.NewPCG(4, 5)))
	for i := 0; i < 1000; i++ {
		if k := g.Next(); k < 60 || k > 140 {
			t.Fatalf("key %d far from median 100 with stddev 5", k)
		}
	}
}
