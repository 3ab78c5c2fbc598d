package bench

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"time"
)

// Report is the --json-out document.
type Report struct {
	Tool        string         `json:"tool"`
	Args        []string       `json:"args"`
	Started     time.Time      `json:"started"`
	Runs        int            `json:"runs_per_server"`
	Order       []string       `json:"order"`
	Servers     []ServerReport `json:"servers"`
	RatioAB     []Ratio        `json:"ratio_a_b,omitempty"`
	Interrupted bool           `json:"interrupted,omitempty"`
	Error       string         `json:"error,omitempty"`
}

// ServerReport is everything measured against one server.
type ServerReport struct {
	Label   string       `json:"label"` // "A" or "B"
	Addr    string       `json:"addr"`
	Prefill *RunSummary  `json:"prefill,omitempty"`
	Runs    []RunSummary `json:"runs"`
	Median  RunSummary   `json:"median"`
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// Main runs shardis-bench with the given arguments (without the program name) and returns the
// exit status: 0, 1 when a server could not be reached or connections failed, 2 for a bad
// command line, 130 when ctx was cancelled (Ctrl-C) — what was measured is printed anyway.
func Main(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	cfg, err := ParseFlags(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		fmt.Fprintf(stderr, "shardis-bench: %v (see --help)\n", err)
		return 2
	}
	// memtier's threads are OS threads each driving its clients; here clients are goroutines
	// and --threads caps how many CPUs they may use at once.
	if cfg.Threads < runtime.NumCPU() {
		prev := runtime.GOMAXPROCS(cfg.Threads)
		defer runtime.GOMAXPROCS(prev)
	}
	overwrite := isTerminal(stderr)
	servers := []string{cfg.Addr()}
	if cfg.Vs != "" {
		servers = append(servers, cfg.Vs)
	}
	two := len(servers) == 2
	labels := []string{"A", "B"}
	rep := &Report{Tool: "shardis-bench", Args: cfg.Args, Started: time.Now().UTC(), Runs: cfg.Runs}
	for i, addr := range servers {
		rep.Servers = append(rep.Servers, ServerReport{Label: labels[i], Addr: addr})
	}
	status := 0
	fail := func(err error) {
		fmt.Fprintf(stderr, "shardis-bench: %v\n", err)
		if rep.Error == "" {
			rep.Error = err.Error()
		}
		status = 1
	}
	name := func(i int) string {
		if two {
			return labels[i] + " "
		}
		return ""
	}

	fmt.Fprintf(stdout, "shardis-bench: %d threads, %d connections per thread, pipeline %d, ", cfg.Threads, cfg.Clients, cfg.Pipeline)
	switch {
	case cfg.TestTime > 0:
		fmt.Fprintf(stdout, "%s per run\n", cfg.TestTime)
	case cfg.AllKeys:
		fmt.Fprintf(stdout, "every key of %d-%d\n", cfg.KeyMin, cfg.KeyMax)
	default:
		fmt.Fprintf(stdout, "%d requests per connection\n", cfg.Requests)
	}

	if cfg.Prefill {
		for i, addr := range servers {
			if ctx.Err() != nil {
				break
			}
			res, err := runLoad(ctx, cfg, addr, runOptions{label: "PREFILL " + name(i) + addr, progress: stderr,
				overwrite: overwrite, prefill: true})
			if err != nil {
				fail(err)
				break
			}
			s := res.Summarize()
			rep.Servers[i].Prefill = &s
			fmt.Fprintf(stdout, "prefill %s%s: %d keys %d-%d, %d requests in %.2f s (%.0f ops/sec), %d errors\n",
				name(i), addr, cfg.KeyMax-cfg.KeyMin+1, cfg.KeyMin, cfg.KeyMax, s.Totals.Ops, s.Seconds, s.Totals.OpsSec, s.Totals.Errors)
			if s.Totals.FirstError != "" {
				fmt.Fprintf(stdout, "  first error: %s\n", s.Totals.FirstError)
			}
			if len(res.ConnErrors) > 0 {
				fail(fmt.Errorf("prefill %s: connection errors: %v", addr, sortedConnErrors(res.ConnErrors)))
			}
		}
	}

	merged := make([][]*TypeStats, len(servers))
	if status == 0 {
		for _, si := range Schedule(cfg.Runs, two) {
			if ctx.Err() != nil {
				break
			}
			no := len(rep.Servers[si].Runs) + 1
			label := fmt.Sprintf("RUN #%d", no)
			if two {
				label += " " + labels[si]
			}
			rep.Order = append(rep.Order, labels[si])
			res, err := runLoad(ctx, cfg, servers[si], runOptions{label: label, progress: stderr, overwrite: overwrite})
			if err != nil {
				fail(err)
				break
			}
			s := res.Summarize()
			rep.Servers[si].Runs = append(rep.Servers[si].Runs, s)
			if len(res.ConnErrors) > 0 {
				status = 1
			}
			if cfg.Runs == 1 && !two {
				PrintTable(stdout, "ALL STATS", s)
			} else {
				fmt.Fprintf(stdout, "%s %s: %.2f ops/sec, avg %.3f p50 %.3f p99 %.3f msec, %d errors%s\n",
					label, servers[si], s.Totals.OpsSec, s.Totals.AvgMs, s.Totals.P50Ms, s.Totals.P99Ms, s.Totals.Errors,
					map[bool]string{true: " (interrupted)"}[s.Interrupted])
			}
			if merged[si] == nil {
				merged[si] = res.Types
			} else {
				for _, t := range res.Types {
					for _, m := range merged[si] {
						if m.Name == t.Name {
							m.merge(t)
						}
					}
				}
			}
		}
	}

	for i := range rep.Servers {
		sr := &rep.Servers[i]
		sr.Median = MedianRun(sr.Runs)
		if len(sr.Runs) > 1 || (two && len(sr.Runs) > 0) {
			PrintTable(stdout, fmt.Sprintf("ALL STATS %s%s (median of %d runs)", name(i), sr.Addr, len(sr.Runs)), sr.Median)
		}
	}
	if !cfg.HideHistogram {
		for i := range servers {
			if merged[i] != nil {
				if two {
					fmt.Fprintf(stdout, "\n%s %s:", labels[i], servers[i])
				}
				PrintHistogram(stdout, merged[i])
			}
		}
	}
	if two && len(rep.Servers[0].Runs) > 0 && len(rep.Servers[1].Runs) > 0 {
		rep.RatioAB = Ratios(rep.Servers[0].Median, rep.Servers[1].Median)
		PrintComparison(stdout, min(len(rep.Servers[0].Runs), len(rep.Servers[1].Runs)), rep.Servers[0].Median, rep.Servers[1].Median)
	}
	if ctx.Err() != nil {
		rep.Interrupted = true
		fmt.Fprintln(stdout, "interrupted")
		status = 130
	}
	if cfg.JSONOut != "" {
		b, err := json.MarshalIndent(rep, "", "  ")
		if err == nil {
			err = os.WriteFile(cfg.JSONOut, append(b, '\n'), 0o644)
		}
		if err != nil {
			fmt.Fprintf(stderr, "shardis-bench: json-out: %v\n", err)
			if status == 0 {
				status = 1
			}
		}
	}
	return status
}
