package bench

import (
	"math"
	"sort"
	"strconv"
	"time"
)

// Summary is one command type's figures in a run, as printed and written to JSON.
type Summary struct {
	Type       string  `json:"type"`
	Ops        uint64  `json:"ops"`
	OpsSec     float64 `json:"ops_sec"`
	HitsSec    float64 `json:"hits_sec"`
	MissesSec  float64 `json:"misses_sec"`
	AvgMs      float64 `json:"avg_ms"`
	P50Ms      float64 `json:"p50_ms"`
	P99Ms      float64 `json:"p99_ms"`
	P999Ms     float64 `json:"p99_9_ms"`
	MaxMs      float64 `json:"max_ms"`
	KBSec      float64 `json:"kb_sec"`
	Errors     uint64  `json:"errors"`
	FirstError string  `json:"first_error,omitempty"`
	countHits  bool
}

// RunSummary is one run against one server.
type RunSummary struct {
	Server      string    `json:"server"`
	Seconds     float64   `json:"seconds"`
	Interrupted bool      `json:"interrupted,omitempty"`
	ConnErrors  []string  `json:"connection_errors,omitempty"`
	Types       []Summary `json:"types"`
	Totals      Summary   `json:"totals"`
}

func ms(ns uint64) float64 { return float64(ns) / 1e6 }

// summarize computes a type's rates over the run's duration.
func summarize(t *TypeStats, d time.Duration) Summary {
	sec := d.Seconds()
	if sec <= 0 {
		sec = math.SmallestNonzeroFloat64
	}
	return Summary{
		Type: t.Name, Ops: t.Ops, OpsSec: float64(t.Ops) / sec,
		HitsSec: float64(t.Hits) / sec, MissesSec: float64(t.Misses) / sec,
		AvgMs: t.Hist.Mean() / 1e6, P50Ms: ms(t.Hist.Percentile(50)), P99Ms: ms(t.Hist.Percentile(99)),
		P999Ms: ms(t.Hist.Percentile(99.9)), MaxMs: ms(t.Hist.Max()),
		KBSec:  float64(t.BytesTx+t.BytesRx) / 1024 / sec,
		Errors: t.Errors, FirstError: t.FirstError, countHits: t.CountHits,
	}
}

// Summarize turns a Result into its RunSummary.
func (r *Result) Summarize() RunSummary {
	s := RunSummary{Server: r.Addr, Seconds: r.Duration.Seconds(), Interrupted: r.Interrupted,
		ConnErrors: sortedConnErrors(r.ConnErrors)}
	for _, t := range r.Types {
		s.Types = append(s.Types, summarize(t, r.Duration))
	}
	s.Totals = summarize(r.Totals, r.Duration)
	return s
}

// Schedule is the order of runs: with two servers A (0) and B (1), A B B A A B B A …, so that
// neither server always runs first (warm caches, background compaction, thermal drift even
// out); runs is the number of runs per server.
func Schedule(runs int, twoServers bool) []int {
	var out []int
	for i := 0; i < runs; i++ {
		switch {
		case !twoServers:
			out = append(out, 0)
		case i%2 == 0:
			out = append(out, 0, 1)
		default:
			out = append(out, 1, 0)
		}
	}
	return out
}

// Median of xs (the mean of the two middle values for an even count); 0 if empty.
func Median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	m := len(s) / 2
	if len(s)%2 == 1 {
		return s[m]
	}
	return (s[m-1] + s[m]) / 2
}

// medianOf takes the median of every figure of the same type across runs, each figure on its
// own (the median p99 need not come from the median-throughput run).
func medianOf(runs []Summary) Summary {
	if len(runs) == 0 {
		return Summary{}
	}
	pick := func(f func(Summary) float64) float64 {
		xs := make([]float64, len(runs))
		for i, r := range runs {
			xs[i] = f(r)
		}
		return Median(xs)
	}
	out := Summary{Type: runs[0].Type, countHits: runs[0].countHits}
	out.Ops = uint64(pick(func(s Summary) float64 { return float64(s.Ops) }))
	out.OpsSec = pick(func(s Summary) float64 { return s.OpsSec })
	out.HitsSec = pick(func(s Summary) float64 { return s.HitsSec })
	out.MissesSec = pick(func(s Summary) float64 { return s.MissesSec })
	out.AvgMs = pick(func(s Summary) float64 { return s.AvgMs })
	out.P50Ms = pick(func(s Summary) float64 { return s.P50Ms })
	out.P99Ms = pick(func(s Summary) float64 { return s.P99Ms })
	out.P999Ms = pick(func(s Summary) float64 { return s.P999Ms })
	out.MaxMs = pick(func(s Summary) float64 { return s.MaxMs })
	out.KBSec = pick(func(s Summary) float64 { return s.KBSec })
	out.Errors = uint64(pick(func(s Summary) float64 { return float64(s.Errors) }))
	for _, r := range runs {
		if r.FirstError != "" {
			out.FirstError = r.FirstError
			break
		}
	}
	return out
}

// MedianRun is the per-figure median of a server's runs, type by type.
func MedianRun(runs []RunSummary) RunSummary {
	if len(runs) == 0 {
		return RunSummary{}
	}
	out := RunSummary{Server: runs[0].Server}
	var secs []float64
	byType := map[string][]Summary{}
	var order []string
	var totals []Summary
	for _, r := range runs {
		secs = append(secs, r.Seconds)
		out.Interrupted = out.Interrupted || r.Interrupted
		out.ConnErrors = append(out.ConnErrors, r.ConnErrors...)
		for _, t := range r.Types {
			if _, ok := byType[t.Type]; !ok {
				order = append(order, t.Type)
			}
			byType[t.Type] = append(byType[t.Type], t)
		}
		totals = append(totals, r.Totals)
	}
	out.Seconds = Median(secs)
	for _, name := range order {
		out.Types = append(out.Types, medianOf(byType[name]))
	}
	out.Totals = medianOf(totals)
	return out
}

// Ratio is A's figure divided by B's for the comparison; NaN (null in JSON) when B's is 0.
type Ratio struct {
	Type   string   `json:"type"`
	OpsSec NanFloat `json:"ops_sec"`
	AvgMs  NanFloat `json:"avg_ms"`
	P50Ms  NanFloat `json:"p50_ms"`
	P99Ms  NanFloat `json:"p99_ms"`
	P999Ms NanFloat `json:"p99_9_ms"`
}

// NanFloat is a float64 that encodes NaN and infinities as JSON null.
type NanFloat float64

// MarshalJSON implements json.Marshaler.
func (f NanFloat) MarshalJSON() ([]byte, error) {
	v := float64(f)
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return []byte("null"), nil
	}
	return strconv.AppendFloat(nil, v, 'g', -1, 64), nil
}

// UnmarshalJSON implements json.Unmarshaler (null reads as NaN).
func (f *NanFloat) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		*f = NanFloat(math.NaN())
		return nil
	}
	v, err := strconv.ParseFloat(string(b), 64)
	*f = NanFloat(v)
	return err
}

func div(a, b float64) NanFloat {
	if b == 0 {
		return NanFloat(math.NaN())
	}
	return NanFloat(a / b)
}

// Ratios compares A's medians with B's, type by type (types of A missing in B are left out)
// and for the totals (last).
func Ratios(a, b RunSummary) []Ratio {
	one := func(x, y Summary) Ratio {
		return Ratio{Type: x.Type, OpsSec: div(x.OpsSec, y.OpsSec), AvgMs: div(x.AvgMs, y.AvgMs),
			P50Ms: div(x.P50Ms, y.P50Ms), P99Ms: div(x.P99Ms, y.P99Ms), P999Ms: div(x.P999Ms, y.P999Ms)}
	}
	var out []Ratio
	for _, x := range a.Types {
		for _, y := range b.Types {
			if x.Type == y.Type {
				out = append(out, one(x, y))
			}
		}
	}
	return append(out, one(a.Totals, b.Totals))
}
