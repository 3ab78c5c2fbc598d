package main

import (
	"fmt"
	"math"
	"strings"
	"time"

	"shardis/bench"
)

func fmtOps(x float64) string {
	s := fmt.Sprintf("%.0f", x)
	// Thousands separators make 6- and 7-digit figures readable.
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 && s[i-1] != '-' {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

func fmtX(r bench.NanFloat) string {
	if math.IsNaN(float64(r)) || math.IsInf(float64(r), 0) {
		return "n/a"
	}
	return fmt.Sprintf("%.2fx", float64(r))
}

func findType(s bench.RunSummary, name string) (bench.Summary, bool) {
	if name == "Totals" {
		return s.Totals, true
	}
	for _, t := range s.Types {
		if t.Type == name {
			return t, true
		}
	}
	return bench.Summary{}, false
}

func renderMarkdown(m machine, benchTime float64, runs, threads, clients int, passes []pass, elapsed time.Duration) string {
	var b strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	redis := "redis-server"
	if m.Redis != "" {
		redis = "redis-server " + m.Redis
	}
	p("# Benchmarks\n\n")
	p("shardis (A) against %s (B) under the identical load, measured by `make bench` ", redis)
	p("(`bench/cmd/suite` driving `bin/shardis-bench`, a memtier_benchmark-style load generator). ")
	p("Generated %s in %s with BENCH_TIME=%g s per run.\n\n", m.Date.Format("2006-01-02 15:04 UTC"), elapsed.Round(time.Second), benchTime)
	p("> **Read with care.** The load generator and both servers share one %d-CPU machine, and other work may run on it ", m.CPUs)
	p("at the same time: absolute figures are noisy and low; compare A with B within one profile (their runs alternate, ")
	p("A B B A …, so both see the same conditions), not with other machines.\n\n")

	p("## Machine\n\n| | |\n|---|---|\n")
	p("| CPUs (nproc) | %d |\n| CPU model | %s |\n| memory | %.1f GiB |\n| kernel | %s |\n", m.CPUs, m.CPUModel, m.MemoryGB, m.Kernel)
	p("| date | %s |\n| Go | %s |\n| redis-server | %s |\n| shardis revision | %s |\n", m.Date.Format(time.RFC3339), m.GoVersion, m.Redis, m.Revision)
	for i, ps := range passes {
		p("| shardis build %d | %s |\n", i+1, ps.build.desc)
	}
	p("\n")

	p("## Method\n\n")
	p("- Both servers listen on loopback and fsync their log once a second: shardis with `--appendfsync everysec` ")
	p("(RocksDB WAL), redis-server with `--appendonly yes --appendfsync everysec --save ''`. Each starts on a fresh ")
	p("temporary directory; the profiles run in the order below on the same two servers (except where noted).\n")
	if len(passes) > 1 {
		p("- The suite runs once per build of shardis, each time beside a fresh redis-server, in the order of the ")
		p("builds above; each build has its own summary and profiles below.\n")
	}
	p("- Load: %d threads × %d connections = %d connections. Each profile runs %d time(s) per server for %g s, ",
		threads, clients, threads*clients, runs, benchTime)
	p("alternating A B B A …; every figure is the median of that server's runs. Latency is measured by the client, ")
	p("from writing a request to reading its reply (with pipelining it includes the wait behind earlier requests).\n")
	p("- ratio = shardis ÷ redis-server: above 1 for ops/s means shardis is faster; above 1 for latency means shardis is slower.\n")
	p("- Error replies are counted, not fatal: a command shardis does not implement yet shows up as errors.\n")
	if goProfile.kind != "" {
		p("- shardis ran with `--profile %s` (a fresh server per profile), which costs it some speed.\n", goProfile.kind)
	}
	p("\n")
	p("Servers (temporary directories and free ports of this run):\n\n```sh\n")
	for _, ps := range passes {
		for _, c := range ps.serverCmds {
			p("%s\n", c)
		}
	}
	p("```\n\n")

	if len(passes) > 1 {
		renderBuildRatios(p, passes)
	}
	for i, ps := range passes {
		renderSummary(p, ps, passTitle(passes, i), anchorPrefix(i, ps))
	}
	for i, ps := range passes {
		renderProfiles(p, ps, passTitle(passes, i), anchorPrefix(i, ps), redis)
	}
	if pts := chartPoints(passes[0].results); len(pts) > 0 {
		p("## Pipeline depth\n\nSET:GET 1:10, 32 B values, 100 connections; median ops/s per depth (shardis: %s).\n\n", passes[0].build.desc)
		p("![ops/s against pipeline depth](docs/bench-pipeline.svg)\n\n")
		for i, ps := range passes {
			if pts := chartPoints(ps.results); len(pts) > 0 {
				if len(passes) > 1 {
					p("%s:\n\n", passTitle(passes, i))
				}
				renderPipelineTable(p, pts)
			}
		}
	}
	p("Regenerate with `make bench` (`BENCH_TIME=2 make bench` for a quick pass).\n")
	return b.String()
}

// printer appends formatted text to the document being rendered.
type printer func(format string, args ...any)

// passTitle names a pass in headings: the build, when the document holds more than one.
func passTitle(passes []pass, i int) string {
	if len(passes) == 1 {
		return ""
	}
	return passes[i].build.desc
}

// anchorPrefix keeps the anchors of the first pass as the bare profile ids (links to
// BENCHMARKS.md#mix-p1 keep working) and prefixes later passes' with their build's name.
func anchorPrefix(i int, ps pass) string {
	if i == 0 {
		return ""
	}
	return ps.build.name + "-"
}

// renderBuildRatios puts each build's ops/s ratio against redis-server side by side.
func renderBuildRatios(p printer, passes []pass) {
	p("## Builds side by side\n\nops/s ratio shardis ÷ redis-server per build (each against its own redis-server run):\n\n| profile |")
	for _, ps := range passes {
		p(" %s |", ps.build.name)
	}
	p("\n|---|%s\n", strings.Repeat("---:|", len(passes)))
	for _, r := range passes[0].results {
		p("| %s |", r.p.id)
		for _, ps := range passes {
			ratio := "–"
			for _, o := range ps.results {
				if o.p.id == r.p.id {
					ratio = opsRatio(o)
				}
			}
			p(" %s |", ratio)
		}
		p("\n")
	}
	p("\n")
}

// opsRatio is a result's ops/s ratio of shardis to redis-server, or "n/a".
func opsRatio(r result) string {
	if r.del != nil && len(r.del.runs) == 2 {
		return fmtX(bench.NanFloat(r.del.runs[0].with.OpsSec / r.del.runs[1].with.OpsSec))
	}
	if r.report != nil && len(r.report.RatioAB) > 0 {
		return fmtX(r.report.RatioAB[len(r.report.RatioAB)-1].OpsSec)
	}
	return "n/a"
}

func heading(level, title, build string) string {
	if build == "" {
		return level + " " + title + "\n\n"
	}
	return level + " " + title + ": " + build + "\n\n"
}

func renderSummary(p printer, ps pass, build, anchor string) {
	p("%s", heading("##", "Summary", build))
	p("| profile | shardis ops/s | redis ops/s | ratio | shardis p50 ms | redis p50 ms | shardis p99 ms | redis p99 ms | errors (A / B) |\n")
	p("|---|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, r := range ps.results {
		if r.del != nil && len(r.del.runs) == 2 {
			a, bb := r.del.runs[0].with, r.del.runs[1].with
			p("| [%s](#%s%s) | %s | %s | %s | %.3f | %.3f | %.3f | %.3f | %d / %d |\n", r.p.id, anchor, r.p.id, fmtOps(a.OpsSec), fmtOps(bb.OpsSec),
				opsRatio(r), a.P50Ms, bb.P50Ms, a.P99Ms, bb.P99Ms, a.Errors, bb.Errors)
			continue
		}
		if r.report == nil || len(r.report.Servers) < 2 {
			p("| %s | – | – | – | – | – | – | – | %s |\n", r.p.id, "failed")
			continue
		}
		a, bb := r.report.Servers[0].Median.Totals, r.report.Servers[1].Median.Totals
		p("| [%s](#%s%s) | %s | %s | %s | %.3f | %.3f | %.3f | %.3f | %d / %d |\n", r.p.id, anchor, r.p.id, fmtOps(a.OpsSec), fmtOps(bb.OpsSec),
			opsRatio(r), a.P50Ms, bb.P50Ms, a.P99Ms, bb.P99Ms, a.Errors, bb.Errors)
	}
	p("\n")
}

func renderProfiles(p printer, ps pass, build, anchor, redis string) {
	p("%s", heading("##", "Profiles", build))
	for _, r := range ps.results {
		if r.del != nil {
			p("<a id=\"%s%s\"></a>\n### %s: %s\n\n", anchor, r.p.id, r.p.id, r.p.title)
			if r.problem != "" {
				p("**Problem:** %s\n\n", strings.ReplaceAll(r.problem, "\n", " "))
			}
			renderBigDel(p, r.del)
			continue
		}
		p("<a id=\"%s%s\"></a>\n### %s: %s\n\n```sh\n%s\n```\n\n", anchor, r.p.id, r.p.id, r.p.title, r.command)
		if r.p.note != "" {
			p("%s\n\n", r.p.note)
		}
		if r.problem != "" {
			p("**Problem:** %s\n\n", strings.ReplaceAll(r.problem, "\n", " "))
		}
		if r.report == nil || len(r.report.Servers) < 2 {
			p("No results.\n\n")
			continue
		}
		a, bb := r.report.Servers[0], r.report.Servers[1]
		p("| type | server | ops/s | avg ms | p50 ms | p99 ms | p99.9 ms | errors |\n|---|---|---:|---:|---:|---:|---:|---:|\n")
		ratios := r.report.RatioAB
		if len(ratios) == 2 {
			// One command type: its rows would repeat as the totals.
			ratios = ratios[:1]
		}
		for _, ra := range ratios {
			for _, s := range []struct {
				label string
				sr    bench.ServerReport
			}{{"shardis", a}, {redis, bb}} {
				if t, ok := findType(s.sr.Median, ra.Type); ok {
					p("| %s | %s | %s | %.3f | %.3f | %.3f | %.3f | %d |\n", ra.Type, s.label, fmtOps(t.OpsSec), t.AvgMs, t.P50Ms, t.P99Ms, t.P999Ms, t.Errors)
				}
			}
			p("| %s | **ratio** | **%s** | %s | %s | %s | %s | |\n", ra.Type, fmtX(ra.OpsSec), fmtX(ra.AvgMs), fmtX(ra.P50Ms), fmtX(ra.P99Ms), fmtX(ra.P999Ms))
		}
		p("\n")
		for _, s := range []struct {
			label string
			sr    bench.ServerReport
		}{{"shardis", a}, {redis, bb}} {
			if s.sr.Prefill != nil {
				p("- prefill %s: %s keys in %.1f s (%s ops/s), %d errors\n", s.label, fmtOps(float64(s.sr.Prefill.Totals.Ops)),
					s.sr.Prefill.Seconds, fmtOps(s.sr.Prefill.Totals.OpsSec), s.sr.Prefill.Totals.Errors)
			}
			for _, t := range s.sr.Median.Types {
				if t.Errors > 0 {
					p("- %s %s: %d error replies per run (median), first: `%s`\n", s.label, t.Type, t.Errors, t.FirstError)
				}
			}
			for _, e := range s.sr.Median.ConnErrors {
				p("- %s connection errors: %s\n", s.label, e)
			}
		}
		p("\n")
	}

}

func renderPipelineTable(p printer, pts []chartPoint) {
	p("| pipeline | shardis ops/s | redis ops/s | ratio |\n|---:|---:|---:|---:|\n")
	for _, pt := range pts {
		ratio := "n/a"
		if pt.b > 0 {
			ratio = fmt.Sprintf("%.2fx", pt.a/pt.b)
		}
		p("| %d | %s | %s | %s |\n", pt.depth, fmtOps(pt.a), fmtOps(pt.b), ratio)
	}
	p("\n")
}

type chartPoint struct {
	depth int
	a, b  float64 // ops/s of shardis and redis-server
}

// chartPoints are the pipeline-sweep profiles that produced results for both servers.
func chartPoints(results []result) []chartPoint {
	var pts []chartPoint
	for _, r := range results {
		if r.p.depth > 0 && r.report != nil && len(r.report.Servers) == 2 && len(r.report.Servers[1].Runs) > 0 {
			pts = append(pts, chartPoint{depth: r.p.depth, a: r.report.Servers[0].Median.Totals.OpsSec,
				b: r.report.Servers[1].Median.Totals.OpsSec})
		}
	}
	return pts
}

// niceCeil rounds x up to 1, 2, 2.5 or 5 times a power of ten, for the axis maximum.
func niceCeil(x float64) float64 {
	if x <= 0 {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(x)))
	for _, m := range []float64{1, 2, 2.5, 5, 10} {
		if m*p >= x {
			return m * p
		}
	}
	return 10 * p
}

// renderSVG draws ops/s against pipeline depth for both servers: a plain SVG line chart, the
// depths evenly spaced (they grow by 4×, so the axis is logarithmic).
func renderSVG(pts []chartPoint, m machine, shardisLabel string) string {
	const (
		w, h                     = 720, 440
		left, right, top, bottom = 90, 30, 60, 70
	)
	maxY := 0.0
	for _, pt := range pts {
		maxY = math.Max(maxY, math.Max(pt.a, pt.b))
	}
	maxY = niceCeil(maxY * 1.05)
	pw, ph := float64(w-left-right), float64(h-top-bottom)
	x := func(i int) float64 {
		if len(pts) == 1 {
			return float64(left) + pw/2
		}
		return float64(left) + pw*float64(i)/float64(len(pts)-1)
	}
	y := func(v float64) float64 { return float64(top) + ph*(1-v/maxY) }
	var b strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	p(`<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="12">`+"\n", w, h, w, h)
	p(`<rect width="%d" height="%d" fill="white"/>`+"\n", w, h)
	p(`<text x="%d" y="26" font-size="16" text-anchor="middle">ops/s against pipeline depth (SET:GET 1:10, 32 B, 100 connections)</text>`+"\n", w/2)
	// Grid and y axis labels.
	for i := 0; i <= 5; i++ {
		v := maxY * float64(i) / 5
		yy := y(v)
		p(`<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#ddd"/>`+"\n", left, yy, w-right, yy)
		p(`<text x="%d" y="%.1f" text-anchor="end" dominant-baseline="middle">%s</text>`+"\n", left-8, yy, fmtOps(v))
	}
	p(`<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="black"/>`+"\n", left, top, left, h-bottom)
	p(`<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="black"/>`+"\n", left, h-bottom, w-right, h-bottom)
	for i, pt := range pts {
		p(`<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="black"/>`+"\n", x(i), h-bottom, x(i), h-bottom+5)
		p(`<text x="%.1f" y="%d" text-anchor="middle">%d</text>`+"\n", x(i), h-bottom+20, pt.depth)
	}
	p(`<text x="%d" y="%d" text-anchor="middle">pipeline depth (requests in flight per connection)</text>`+"\n", left+int(pw/2), h-bottom+42)
	p(`<text transform="translate(20 %d) rotate(-90)" text-anchor="middle">ops/s (median)</text>`+"\n", top+int(ph/2))
	series := []struct {
		name  string
		color string
		get   func(chartPoint) float64
		dy    float64
	}{
		{shardisLabel, "#d62728", func(c chartPoint) float64 { return c.a }, -10},
		{"redis-server " + m.Redis, "#1f77b4", func(c chartPoint) float64 { return c.b }, 18},
	}
	for si, s := range series {
		var coords []string
		for i, pt := range pts {
			coords = append(coords, fmt.Sprintf("%.1f,%.1f", x(i), y(s.get(pt))))
		}
		p(`<polyline fill="none" stroke="%s" stroke-width="2.5" points="%s"/>`+"\n", s.color, strings.Join(coords, " "))
		for i, pt := range pts {
			p(`<circle cx="%.1f" cy="%.1f" r="4" fill="%s"/>`+"\n", x(i), y(s.get(pt)), s.color)
			p(`<text x="%.1f" y="%.1f" text-anchor="middle" fill="%s" font-size="11">%s</text>`+"\n", x(i), y(s.get(pt))+s.dy, s.color, fmtOps(s.get(pt)))
		}
		ly := top + 8 + si*20
		p(`<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="%s" stroke-width="2.5"/>`+"\n", left+16, ly, left+40, ly, s.color)
		p(`<text x="%d" y="%d" dominant-baseline="middle">%s</text>`+"\n", left+48, ly, s.name)
	}
	p(`<text x="%d" y="%d" text-anchor="end" font-size="10" fill="#666">%d CPUs, %s, %s; load generator and servers on one machine</text>`+"\n",
		w-right, h-8, m.CPUs, xmlEscape(m.CPUModel), m.Date.Format("2006-01-02"))
	p("</svg>\n")
	return b.String()
}

func xmlEscape(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;").Replace(s)
}
