// Package bench is shardis-bench: a memtier_benchmark-style load generator for Redis-protocol
// servers (flags, key patterns, ratios and report layout follow memtier_benchmark), with an
// A/B mode that runs the identical load against two servers in alternation.
package bench

import (
	"math"
	"math/bits"
)

// The histogram is log-linear: values below 2^histSubBits*2 have a bucket each; above that,
// every power of two is split into 2^histSubBits equal sub-buckets, so a bucket spans less than
// 1/128 (0.78%) of its values. That is HDR histogram's precision at two significant digits, with
// a fixed array: recording is an index computation and an increment, and merging is a sum.
const (
	histSubBits  = 7
	histSubCount = 1 << histSubBits
	// histBuckets covers values up to 2^38-1 ns (~275 s, exponent 30); larger values land in
	// the last bucket.
	histBuckets = 32 * histSubCount
)

// Histogram records latencies in nanoseconds. Not safe for concurrent use: each client owns
// its histograms and they are merged when the run ends.
type Histogram struct {
	counts []uint64
	total  uint64
	sum    float64 // ns; float so that billions of slow ops cannot overflow
	min    uint64
	max    uint64
}

// NewHistogram returns an empty histogram.
func NewHistogram() *Histogram {
	return &Histogram{counts: make([]uint64, histBuckets), min: math.MaxUint64}
}

// histIndex maps a value to its bucket.
func histIndex(v uint64) int {
	e := bits.Len64(v) - (histSubBits + 1)
	if e < 0 {
		e = 0
	}
	i := e*histSubCount + int(v>>uint(e))
	if i >= histBuckets {
		return histBuckets - 1
	}
	return i
}

// histBounds returns the smallest and largest value that map to bucket i.
func histBounds(i int) (lo, hi uint64) {
	if i < 2*histSubCount {
		return uint64(i), uint64(i)
	}
	e := uint(i/histSubCount - 1)
	m := uint64(i - int(e)*histSubCount)
	return m << e, (m+1)<<e - 1
}

// Record adds one value (ns).
func (h *Histogram) Record(v uint64) {
	h.counts[histIndex(v)]++
	h.total++
	h.sum += float64(v)
	if v < h.min {
		h.min = v
	}
	if v > h.max {
		h.max = v
	}
}

// Merge adds every value recorded in o.
func (h *Histogram) Merge(o *Histogram) {
	if o == nil || o.total == 0 {
		return
	}
	for i, c := range o.counts {
		h.counts[i] += c
	}
	h.total += o.total
	h.sum += o.sum
	if o.min < h.min {
		h.min = o.min
	}
	if o.max > h.max {
		h.max = o.max
	}
}

// Count is the number of recorded values.
func (h *Histogram) Count() uint64 { return h.total }

// Max is the largest recorded value (exact), 0 if empty.
func (h *Histogram) Max() uint64 { return h.max }

// Min is the smallest recorded value (exact), 0 if empty.
func (h *Histogram) Min() uint64 {
	if h.total == 0 {
		return 0
	}
	return h.min
}

// Mean is the exact average of the recorded values, 0 if empty.
func (h *Histogram) Mean() float64 {
	if h.total == 0 {
		return 0
	}
	return h.sum / float64(h.total)
}

// Percentile returns the value below or at which q percent (0-100) of the recorded values lie,
// as the highest value equivalent to that bucket (never above the exact maximum), like HDR.
func (h *Histogram) Percentile(q float64) uint64 {
	if h.total == 0 {
		return 0
	}
	if q <= 0 {
		return h.min
	}
	if q >= 100 {
		return h.max
	}
	rank := uint64(math.Ceil(q / 100 * float64(h.total)))
	if rank == 0 {
		rank = 1
	}
	var seen uint64
	for i, c := range h.counts {
		seen += c
		if seen >= rank {
			_, hi := histBounds(i)
			if hi > h.max {
				hi = h.max
			}
			if hi < h.min {
				hi = h.min
			}
			return hi
		}
	}
	return h.max
}
