package bench

import (
	"fmt"
	"io"
	"math"
	"strings"
)

const tableWidth = 149

// PrintTable prints a run (or the medians of runs) in memtier_benchmark's ALL STATS layout, with
// a maximum latency and an error count added.
func PrintTable(w io.Writer, title string, s RunSummary) {
	fmt.Fprintf(w, "\n%s\n%s\n", title, strings.Repeat("=", tableWidth))
	fmt.Fprintf(w, "%-10s %12s %12s %12s %15s %15s %15s %15s %15s %12s %10s\n",
		"Type", "Ops/sec", "Hits/sec", "Misses/sec", "Avg. Latency", "p50 Latency", "p99 Latency",
		"p99.9 Latency", "Max Latency", "KB/sec", "Errors")
	fmt.Fprintln(w, strings.Repeat("-", tableWidth))
	row := func(t Summary) {
		hits, misses := "---", "---"
		if t.countHits {
			hits, misses = fmt.Sprintf("%.2f", t.HitsSec), fmt.Sprintf("%.2f", t.MissesSec)
		}
		fmt.Fprintf(w, "%-10s %12.2f %12s %12s %15.3f %15.3f %15.3f %15.3f %15.3f %12.2f %10d\n",
			t.Type, t.OpsSec, hits, misses, t.AvgMs, t.P50Ms, t.P99Ms, t.P999Ms, t.MaxMs, t.KBSec, t.Errors)
	}
	for _, t := range s.Types {
		row(t)
	}
	row(s.Totals)
	fmt.Fprintf(w, "(latencies in msec; %.2f s measured)\n", s.Seconds)
	for _, t := range s.Types {
		if t.Errors > 0 {
			fmt.Fprintf(w, "error replies: %s %d, first: %s\n", t.Type, t.Errors, t.FirstError)
		}
	}
	for _, e := range s.ConnErrors {
		fmt.Fprintf(w, "connection errors: %s\n", e)
	}
	if s.Interrupted {
		fmt.Fprintln(w, "interrupted: the figures cover what ran before the stop")
	}
}

// histogramLadder is the percentiles the latency distribution shows.
var histogramLadder = []float64{0, 10, 25, 50, 75, 90, 95, 99, 99.5, 99.9, 99.99, 100}

// PrintHistogram prints each type's latency distribution as "Type <= msec Percent".
func PrintHistogram(w io.Writer, types []*TypeStats) {
	fmt.Fprintf(w, "\nRequest Latency Distribution\n%-10s %12s %12s\n%s\n", "Type", "<= msec", "Percent",
		strings.Repeat("-", 36))
	for _, t := range types {
		if t.Hist.Count() == 0 {
			continue
		}
		for _, q := range histogramLadder {
			fmt.Fprintf(w, "%-10s %12.3f %12.3f\n", t.Name, ms(t.Hist.Percentile(q)), q)
		}
		fmt.Fprintln(w, "---")
	}
}

func fmtRatio(r NanFloat) string {
	if math.IsNaN(float64(r)) || math.IsInf(float64(r), 0) {
		return "n/a"
	}
	return fmt.Sprintf("%.2fx", float64(r))
}

// PrintComparison prints the medians of A and B side by side, and A/B per figure.
func PrintComparison(w io.Writer, runs int, a, b RunSummary) {
	order := make([]string, 0, 2*runs)
	for _, s := range Schedule(runs, true) {
		order = append(order, string(rune('A'+s)))
	}
	fmt.Fprintf(w, "\nA/B COMPARISON (median of %d run(s) per server; order %s)\n", runs, strings.Join(order, " "))
	fmt.Fprintf(w, "A = %s, B = %s\n%s\n", a.Server, b.Server, strings.Repeat("=", 110))
	fmt.Fprintf(w, "%-10s %-6s %14s %15s %15s %15s %15s %10s\n", "Type", "Server", "Ops/sec", "Avg. Latency",
		"p50 Latency", "p99 Latency", "p99.9 Latency", "Errors")
	fmt.Fprintln(w, strings.Repeat("-", 110))
	ratios := Ratios(a, b)
	find := func(s RunSummary, name string) (Summary, bool) {
		if name == "Totals" {
			return s.Totals, true
		}
		for _, t := range s.Types {
			if t.Type == name {
				return t, true
			}
		}
		return Summary{}, false
	}
	for ri, r := range ratios {
		name := r.Type
		if ri == len(ratios)-1 {
			name = "Totals"
		}
		for i, s := range []RunSummary{a, b} {
			if t, ok := find(s, name); ok {
				fmt.Fprintf(w, "%-10s %-6s %14.2f %15.3f %15.3f %15.3f %15.3f %10d\n", name, string(rune('A'+i)),
					t.OpsSec, t.AvgMs, t.P50Ms, t.P99Ms, t.P999Ms, t.Errors)
			}
		}
		fmt.Fprintf(w, "%-10s %-6s %14s %15s %15s %15s %15s\n", name, "A/B", fmtRatio(r.OpsSec),
			fmtRatio(r.AvgMs), fmtRatio(r.P50Ms), fmtRatio(r.P99Ms), fmtRatio(r.P999Ms))
	}
}
