package bench

import (
	"math"
	"math/rand/v2"
)

// Key patterns, as memtier_benchmark names them.
const (
	PatternRandom     = 'R' // uniform over [min, max]
	PatternSequential = 'S' // min, min+1, …, max, min, … (each client walks the whole range)
	PatternGaussian   = 'G' // normal around the median (default: middle of the range)
	PatternParallel   = 'P' // sequential over this client's own slice of the range
)

// validPattern reports whether p names a key pattern.
func validPattern(p byte) bool {
	switch p {
	case PatternRandom, PatternSequential, PatternGaussian, PatternParallel:
		return true
	}
	return false
}

// keyGen produces key ids for one command of one client.
type keyGen struct {
	pattern  byte
	min, max uint64 // the whole range, inclusive
	lo, hi   uint64 // the walked range: [min,max], or the client's slice for P
	next     uint64
	median   float64
	stddev   float64
	rng      *rand.Rand
}

// newKeyGen builds the generator of client index `client` of `clients`. median and stddev are
// used by G; 0 means the memtier defaults (middle of the range, range/6).
func newKeyGen(pattern byte, min, max uint64, client, clients int, median, stddev float64, rng *rand.Rand) *keyGen {
	g := &keyGen{pattern: pattern, min: min, max: max, lo: min, hi: max, rng: rng,
		median: median, stddev: stddev}
	if g.median == 0 {
		g.median = (float64(min) + float64(max)) / 2
	}
	if g.stddev == 0 {
		g.stddev = (float64(max) - float64(min)) / 6
	}
	if pattern == PatternParallel && sliceLen(min, max, client, clients) > 0 {
		// (A client left without keys, when there are more clients than keys, walks the
		// whole range.)
		g.lo, g.hi = sliceOf(min, max, client, clients)
	}
	g.next = g.lo
	return g
}

// sliceOf splits [min,max] into `parts` contiguous slices as equal as possible and returns
// slice i (the first slices get the remainder). A slice may be empty (lo > hi) when there are
// more parts than keys.
func sliceOf(min, max uint64, i, parts int) (lo, hi uint64) {
	n := max - min + 1
	per := n / uint64(parts)
	rem := n % uint64(parts)
	idx := uint64(i)
	lo = min + idx*per + minU64(idx, rem)
	size := per
	if idx < rem {
		size++
	}
	return lo, lo + size - 1
}

func minU64(a, b uint64) uint64 {
	if a < b {
		return a
	}
	return b
}

// sliceLen is the number of keys in slice i of sliceOf.
func sliceLen(min, max uint64, i, parts int) uint64 {
	n := max - min + 1
	size := n / uint64(parts)
	if uint64(i) < n%uint64(parts) {
		size++
	}
	return size
}

// Next returns the next key id.
func (g *keyGen) Next() uint64 {
	switch g.pattern {
	case PatternSequential, PatternParallel:
		k := g.next
		if g.next >= g.hi {
			g.next = g.lo
		} else {
			g.next++
		}
		return k
	case PatternGaussian:
		for try := 0; try < 16; try++ {
			x := math.Round(g.rng.NormFloat64()*g.stddev + g.median)
			if x >= float64(g.min) && x <= float64(g.max) {
				return uint64(x)
			}
		}
		return uint64(g.median)
	default:
		span := g.max - g.min + 1
		if span == 0 { // the full uint64 range
			return g.rng.Uint64()
		}
		return g.min + g.rng.Uint64N(span)
	}
}

// dataGen produces values: slices of one shared, read-only buffer, so a value costs nothing
// to make. With random data the slice starts at a random offset, so values differ.
type dataGen struct {
	buf      []byte
	min, max int
	random   bool
	rng      *rand.Rand
}

// newDataBuffer makes the shared value buffer: random alphanumerics, or 'x' repeated (memtier's
// default non-random data).
func newDataBuffer(maxSize int, random bool) []byte {
	n := maxSize
	if random {
		n = maxSize + 1<<20
	}
	b := make([]byte, n)
	if !random {
		for i := range b {
			b[i] = 'x'
		}
		return b
	}
	const alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	r := rand.New(rand.NewPCG(7, 11))
	for i := range b {
		b[i] = alphabet[r.IntN(len(alphabet))]
	}
	return b
}

// Next returns the next value.
func (d *dataGen) Next() []byte {
	size := d.min
	if d.max > d.min {
		size = d.min + d.rng.IntN(d.max-d.min+1)
	}
	if !d.random {
		return d.buf[:size]
	}
	off := d.rng.IntN(len(d.buf) - size + 1)
	return d.buf[off : off+size]
}
