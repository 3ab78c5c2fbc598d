package latency

import (
	"math/bits"
	"sync/atomic"
)

// Histogram is one command's latency distribution in nanoseconds, laid out as Redis's
// hdr_histogram with 1 ns to 1 s and 2 significant digits: values below 256 have a bucket
// each, above that every power of two is split into 128 equal buckets. Reported values and
// percentiles therefore match Redis's. Record is an index computation and an atomic add; the
// readers sum the counts they see, so a reading concurrent with Record may miss the newest
// calls, never count one twice.
type Histogram struct {
	counts [histLen]atomic.Uint64
}

const (
	histSubBits = 7
	histSub     = 1 << histSubBits // buckets per power of two above 256
	// MinValue and MaxValue bound what a histogram holds, in ns (Redis's
	// LATENCY_HISTOGRAM_MIN_VALUE and _MAX_VALUE): values outside are clamped.
	MinValue = 1
	MaxValue = 1_000_000_000
	// histLen is hdr_histogram's counts_len for that range: 23 powers of two past 256.
	histLen = 24 * histSub
)

func histIndex(v uint64) int {
	e := max(bits.Len64(v)-(histSubBits+1), 0)
	return e*histSub + int(v>>uint(e))
}

// bucketRange returns the lowest and highest value of bucket i.
func bucketRange(i int) (lo, hi uint64) {
	if i < 2*histSub {
		return uint64(i), uint64(i)
	}
	e := uint(i/histSub - 1)
	m := uint64(i - int(e)*histSub)
	return m << e, (m+1)<<e - 1
}

// Record adds one value in nanoseconds, clamped to [MinValue, MaxValue].
func (h *Histogram) Record(ns int64) {
	v := uint64(min(max(ns, MinValue), MaxValue))
	h.counts[histIndex(v)].Add(1)
}

// snapshot copies the counts and returns their total.
func (h *Histogram) snapshot(dst *[histLen]uint64) uint64 {
	var total uint64
	for i := range dst {
		dst[i] = h.counts[i].Load()
		total += dst[i]
	}
	return total
}

// Count returns how many values were recorded.
func (h *Histogram) Count() uint64 {
	var total uint64
	for i := range h.counts {
		total += h.counts[i].Load()
	}
	return total
}

// Percentiles returns, for each percentile p (0-100), the value in ns at or below which p% of
// the values lie, as hdr_value_at_percentile reports it (the highest value of its bucket; the
// lowest for p = 0). With no values every percentile is 0.
func (h *Histogram) Percentiles(ps []float64) []int64 {
	var counts [histLen]uint64
	total := h.snapshot(&counts)
	out := make([]int64, len(ps))
	if total == 0 {
		return out
	}
	for j, p := range ps {
		want := int64(min(p, 100)/100*float64(total) + 0.5)
		want = max(want, 1)
		var seen int64
		for i, c := range counts {
			seen += int64(c)
			if seen >= want {
				lo, hi := bucketRange(i)
				if p == 0 {
					out[j] = int64(lo)
				} else {
					out[j] = int64(hi)
				}
				break
			}
		}
	}
	return out
}

// Bucket is one line of LATENCY HISTOGRAM: how many calls took at most Micros microseconds.
type Bucket struct {
	Micros int64
	Count  uint64 // cumulative
}

// topMicros is the last bucket Redis reports, for values past 2^29 ns + one bucket: the highest
// value the histogram can hold, in µs.
const topMicros = (1<<30 - 1) / 1000

// CDF returns the cumulative distribution as Redis's LATENCY HISTOGRAM reports it: buckets
// at 1024 ns and every power of two after it (reported in µs, as the highest value equivalent
// to that level), only those whose cumulative count grew; and the total.
func (h *Histogram) CDF() (buckets []Bucket, total uint64) {
	var counts [histLen]uint64
	total = h.snapshot(&counts)
	var cum, prev uint64
	i := 0
	for level := uint64(1024); level <= MaxValue; level <<= 1 {
		last := histIndex(level)
		for ; i <= last; i++ {
			cum += counts[i]
		}
		if cum > prev {
			_, hi := bucketRange(last)
			buckets = append(buckets, Bucket{Micros: int64(hi / 1000), Count: cum})
			prev = cum
		}
	}
	if cum < total { // values beyond the last power of two below MaxValue
		buckets = append(buckets, Bucket{Micros: topMicros, Count: total})
	}
	return buckets, total
}
