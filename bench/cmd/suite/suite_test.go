package main

import (
	"context"
	"encoding/xml"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"shardis/bench"
	"shardis/internal/testserver"
)

func TestSuite_SVGIsWellFormedWithBothSeries(t *testing.T) {
	m := machine{CPUs: 2, CPUModel: "Xeon <test> & co", Redis: "7.0.15", Date: time.Unix(0, 0).UTC()}
	svg := renderSVG([]chartPoint{{1, 10000, 20000}, {4, 30000, 50000}, {16, 60000, 90000}, {64, 80000, 120000}}, m, "shardis")
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
	md := renderMarkdown(machine{CPUs: 2, CPUModel: "Xeon", Redis: "7.0.15"}, 1, 2, 2, 50,
		[]pass{{build: build{name: "debian", desc: debianDesc}, serverCmds: []string{"bin/shardis --port 1"}, results: []result{ok, failed}}},
		3*time.Second)
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

func TestSuite_BigDel_FillsTheHashAndTimesItsDel(t *testing.T) {
	s := testserver.Start(t)
	// 2,500 fields: two full HSETs and a partial one.
	if _, err := fillBigHash(context.Background(), s.Addr, "h", 2500); err != nil {
		t.Fatal(err)
	}
	if got, err := command(s.Addr, "HGET", "h", "f2499"); err != nil || got != "$5" {
		t.Fatalf("HGET h f2499: %q %v", got, err)
	}
	if d, err := timedDel(s.Addr, "h", 0); err != nil || d <= 0 {
		t.Fatalf("timedDel: %v %v", d, err)
	}
	if got, _ := command(s.Addr, "EXISTS", "h"); got != ":0" {
		t.Fatalf("EXISTS h after the DEL: %q", got)
	}
	if _, err := timedDel(s.Addr, "h", 0); err == nil || !strings.Contains(err.Error(), `":0"`) {
		t.Fatalf("DEL of a missing hash: %v, want the :0 reply reported", err)
	}
}

func TestSuite_MarkdownBigDel(t *testing.T) {
	run := func(server string, baseP99, withP99, withMax float64, del time.Duration) delRun {
		return delRun{server: server, fill: 2 * time.Second, delTime: del,
			base: bench.Summary{OpsSec: 70000, P99Ms: baseP99, MaxMs: 9}, with: bench.Summary{OpsSec: 60000, P99Ms: withP99, MaxMs: withMax}}
	}
	r := result{p: profile{id: "big-del", title: "DEL of a big hash", bigDel: true}, del: &delResult{loadCmd: "bin/shardis-bench -p 1",
		runs: []delRun{run("shardis", 5, 5.5, 12, 2300*time.Microsecond), run("redis-server", 3, 3.2, 464.4, 461*time.Millisecond)}}}
	md := renderMarkdown(machine{CPUs: 2}, 1, 1, 2, 50, []pass{{results: []result{r}}}, time.Second)
	for _, want := range []string{"| [big-del](#big-del) | 60,000 | 60,000 | 1.00x |",
		"| shardis | 70,000 → 60,000 |", "| 5.000 → 5.500 |", "| 9.0 → 464.4 | 461.0 | 2.0 s |", "bin/shardis-bench -p 1"} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q:\n%s", want, md)
		}
	}
}

func TestSuite_KeepProfile_CopiesTheServersGoProfile(t *testing.T) {
	root, data := t.TempDir(), t.TempDir()
	if err := os.MkdirAll(filepath.Join(data, "profile"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(data, "profile", "cpu.pprof"), []byte("pprof bytes"), 0o644); err != nil {
		t.Fatal(err)
	}
	saved := goProfile
	t.Cleanup(func() { goProfile = saved })
	goProfile.kind, goProfile.dir = "cpu", "profiles"
	if err := keepProfile(&server{dir: data}, root, "set-1k"); err != nil {
		t.Fatal(err)
	}
	if got, err := os.ReadFile(filepath.Join(root, "profiles", "set-1k.cpu.pprof")); err != nil || string(got) != "pprof bytes" {
		t.Fatalf("kept profile: %q %v", got, err)
	}
	goProfile.kind = "mutex" // the server wrote no mutex profile
	if err := keepProfile(&server{dir: data}, root, "set-1k"); err == nil {
		t.Fatal("a missing profile was not reported")
	}
}

// Two builds: each gets its summary and profiles, later ones with their own anchors, and a table
// puts their ratios side by side.
func TestSuite_MarkdownTwoBuilds(t *testing.T) {
	sum := func(ops float64) bench.RunSummary {
		tot := bench.Summary{Type: "Totals", OpsSec: ops}
		return bench.RunSummary{Types: []bench.Summary{{Type: "SET", OpsSec: ops}}, Totals: tot}
	}
	res := func(a, b float64) result {
		ra, rb := sum(a), sum(b)
		rep := &bench.Report{Servers: []bench.ServerReport{{Median: ra, Runs: []bench.RunSummary{ra}},
			{Median: rb, Runs: []bench.RunSummary{rb}}}, RatioAB: bench.Ratios(ra, rb)}
		return result{p: profiles()[4], command: "c", report: rep}
	}
	md := renderMarkdown(machine{CPUs: 2}, 1, 1, 2, 50, []pass{
		{build: build{name: "release", desc: "release build 7.8.3-2"}, results: []result{res(900, 1000)}},
		{build: build{name: "debian", desc: debianDesc}, results: []result{res(600, 1000)}},
	}, time.Second)
	for _, want := range []string{
		"| shardis build 1 | release build 7.8.3-2 |", "| shardis build 2 | " + debianDesc + " |",
		"| profile | release | debian |", "| set-1k | 0.90x | 0.60x |",
		"## Summary: release build 7.8.3-2", "## Summary: " + debianDesc,
		"| [set-1k](#set-1k) | 900 |", "| [set-1k](#debian-set-1k) | 600 |",
		`<a id="set-1k"></a>`, `<a id="debian-set-1k"></a>`,
	} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q:\n%s", want, md)
		}
	}
}
