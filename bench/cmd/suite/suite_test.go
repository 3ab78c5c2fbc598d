package main

import (
	"encoding/xml"
	"io"
	"strings"
	"testing"
	"time"

	"shardis/bench"
)

func TestSuite_SVGIsWellFormedWithBothSeries(t *testing.T) {
	m := machine{CPUs: 2, CPUModel: "Xeon <test> & co", Redis: "7.0.15", Date: time.Unix(0, 0).UTC()}
	svg := renderSVG([]chartPoint{{1, 10000, 20000}, {4, 30000, 50000}, {16, 60000, 90000}, {64, 80000, 120000}}, m)
	d := xml.NewDecoder(strings.NewReader(svg))
	polylines := 0
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("not well-formed: %v\n%s", err, svg)
		}
		if se, ok := tok.(xml.StartElement); ok && se.Name.Local == "polyline" {
			polylines++
			for _, a := range se.Attr {
				if a.Name.Local == "points" && len(strings.Fields(a.Value)) != 4 {
					t.Errorf("polyline with %q", a.Value)
				}
			}
		}
	}
	if polylines != 2 || !strings.Contains(svg, ">64<") || !strings.Contains(svg, "120,000") {
		t.Fatalf("chart:\n%s", svg)
	}
}

func TestSuite_NiceCeilAndShellJoin(t *testing.T) {
	for _, c := range [][2]float64{{0, 1}, {7, 10}, {11, 20}, {230000, 250000}, {1000, 1000}, {41000, 50000}} {
		if got := niceCeil(c[0]); got != c[1] {
			t.Errorf("niceCeil(%v) = %v, want %v", c[0], got, c[1])
		}
	}
	got := shellJoin([]string{"bin/x", "--save", "", "--command", "HSET __key__ f", "it's", "a=b:1"})
	if want := `bin/x --save '' --command 'HSET __key__ f' 'it'\''s' a=b:1`; got != want {
		t.Errorf("shellJoin = %s, want %s", got, want)
	}
	if fmtOps(1234567.4) != "1,234,567" || fmtOps(999) != "999" || fmtOps(1000) != "1,000" {
		t.Errorf("fmtOps: %s %s %s", fmtOps(1234567.4), fmtOps(999), fmtOps(1000))
	}
}

func TestSuite_MarkdownHasTablesRatiosAndErrors(t *testing.T) {
	sum := func(ops, p99 float64, errs uint64, first string) bench.RunSummary {
		ty := bench.Summary{Type: "HSET", OpsSec: ops, P50Ms: 0.5, P99Ms: p99, Errors: errs, FirstError: first}
		tot := ty
		tot.Type = "Totals"
		return bench.RunSummary{Types: []bench.Summary{ty}, Totals: tot}
	}
	a, b := sum(5000, 2, 7, "ERR unknown command 'HSET'"), sum(10000, 1, 0, "")
	rep := &bench.Report{Servers: []bench.ServerReport{{Label: "A", Median: a, Runs: []bench.RunSummary{a}},
		{Label: "B", Median: b, Runs: []bench.RunSummary{b}}}, RatioAB: bench.Ratios(a, b)}
	ok := result{p: profiles()[5], command: "bin/shardis-bench ...", report: rep}
	failed := result{p: profile{id: "x", title: "broken"}, command: "c", problem: "shardis exited: boom"}
	md := renderMarkdown(machine{CPUs: 2, CPUModel: "Xeon", Redis: "7.0.15"}, 1, 2, 2, 50, []string{"bin/shardis --port 1"},
		[]result{ok, failed}, 3*time.Second)
	for _, want := range []string{"| [hset](#hset) | 5,000 | 10,000 | 0.50x |", "| HSET | **ratio** | **0.50x** |",
		"ERR unknown command 'HSET'", "**Problem:** shardis exited: boom", "| CPUs (nproc) | 2 |", "bin/shardis --port 1"} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q:\n%s", want, md)
		}
	}
	if strings.Contains(md, "bench-pipeline.svg)") {
		t.Errorf("chart referenced without pipeline results")
	}
}
