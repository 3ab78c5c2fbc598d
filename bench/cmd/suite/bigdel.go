package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"shardis/bench"
)

// The big-del profile deletes one hash of bigDelFields fields while 100 other clients run
// SET:GET 1:10 at pipeline 1, and compares their latency with a run of the same load without
// the DEL. A server that frees the elements while the client waits (redis-server's DEL, unlike
// UNLINK) stalls everyone behind it; shardis's DEL is one range delete.
const (
	bigDelKey    = "bigdel:hash"
	bigDelFields = 1_000_000
	// bigDelPerCommand fields go in one HSET while the hash is built.
	bigDelPerCommand = 1000
)

// delRun is the big-del profile on one server.
type delRun struct {
	server  string
	fill    time.Duration // building the hash
	base    bench.Summary // the other clients' totals, no DEL
	with    bench.Summary // the same load with the DEL half-way through
	delTime time.Duration // the DEL's own latency, as its client saw it
}

// delResult is the big-del profile on both servers.
type delResult struct {
	loadCmd string // the load's command line (server address and JSON path of the first run)
	runs    []delRun
}

// fillBigHash builds key with fields fields (HSET of bigDelPerCommand fields per command,
// up to 32 commands in flight) and checks HLEN.
func fillBigHash(ctx context.Context, addr, key string, fields int) (time.Duration, error) {
	c, err := net.DialTimeout("tcp", addr, 2*time.Second)
	if err != nil {
		return 0, err
	}
	defer c.Close()
	start := time.Now()
	_ = c.SetDeadline(start.Add(10 * time.Minute))
	stop := context.AfterFunc(ctx, func() { _ = c.SetDeadline(time.Now()) })
	defer stop()
	w, r := bufio.NewWriterSize(c, 64<<10), bufio.NewReader(c)
	commands := (fields + bigDelPerCommand - 1) / bigDelPerCommand
	const window = 32
	readOne := func() error {
		line, err := r.ReadString('\n')
		if err != nil {
			return err
		}
		if !strings.HasPrefix(line, ":") {
			return fmt.Errorf("HSET answered %q", strings.TrimSpace(line))
		}
		return nil
	}
	sent, read := 0, 0
	for sent < commands {
		n := min(bigDelPerCommand, fields-sent*bigDelPerCommand)
		fmt.Fprintf(w, "*%d\r\n$4\r\nHSET\r\n$%d\r\n%s\r\n", 2+2*n, len(key), key)
		for i := sent * bigDelPerCommand; i < sent*bigDelPerCommand+n; i++ {
			f := strconv.Itoa(i)
			fmt.Fprintf(w, "$%d\r\nf%s\r\n$%d\r\nv%s\r\n", len(f)+1, f, len(f)+1, f)
		}
		sent++
		if sent-read >= window || sent == commands {
			if err := w.Flush(); err != nil {
				return 0, err
			}
			for ; read < sent-window/2 || (sent == commands && read < sent); read++ {
				if err := readOne(); err != nil {
					return 0, err
				}
			}
		}
	}
	elapsed := time.Since(start)
	if got, err := command(addr, "HLEN", key); err != nil || got != ":"+strconv.Itoa(fields) {
		return 0, fmt.Errorf("HLEN %s after the fill: %q %v", key, got, err)
	}
	return elapsed, nil
}

// timedDel sends DEL key on a connection of its own after wait and returns how long the
// reply took.
func timedDel(addr, key string, wait time.Duration) (time.Duration, error) {
	time.Sleep(wait)
	c, err := net.DialTimeout("tcp", addr, 2*time.Second)
	if err != nil {
		return 0, err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(2 * time.Minute))
	start := time.Now()
	if _, err := fmt.Fprintf(c, "*2\r\n$3\r\nDEL\r\n$%d\r\n%s\r\n", len(key), key); err != nil {
		return 0, err
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	d := time.Since(start)
	if err != nil {
		return 0, err
	}
	if strings.TrimSpace(line) != ":1" {
		return 0, fmt.Errorf("DEL %s answered %q", key, strings.TrimSpace(line))
	}
	return d, nil
}

// runLoad runs shardis-bench once against addr and returns its totals.
func runLoad(ctx context.Context, benchArgs []string, addr, jsonPath string) (bench.Summary, []string, error) {
	host, port, _ := net.SplitHostPort(addr)
	args := append(append([]string{}, benchArgs[0], "-s", host, "-p", port, "--json-out", jsonPath), benchArgs[1:]...)
	rep, problem := runBench(ctx, args, jsonPath)
	if problem != "" {
		return bench.Summary{}, args, errors.New(problem)
	}
	if len(rep.Servers) == 0 {
		return bench.Summary{}, args, fmt.Errorf("shardis-bench measured nothing (%s)", jsonPath)
	}
	return rep.Servers[0].Median.Totals, args, nil
}

// runBigDel runs the big-del profile on one server: build the hash, measure the load without
// and then with the DEL.
func runBigDel(ctx context.Context, label, addr, tmp string, benchArgs []string, benchTime float64) (delRun, string, error) {
	run := delRun{server: label}
	fmt.Printf("big-del: building %s with %d fields on %s\n", bigDelKey, bigDelFields, label)
	var err error
	if run.fill, err = fillBigHash(ctx, addr, bigDelKey, bigDelFields); err != nil {
		return run, "", fmt.Errorf("%s: %w", label, err)
	}
	fmt.Printf("big-del: built in %.1f s; the load without DEL\n", run.fill.Seconds())
	jsonPath := filepath.Join(tmp, "big-del-"+label+".json")
	var args []string
	if run.base, args, err = runLoad(ctx, benchArgs, addr, jsonPath); err != nil {
		return run, "", fmt.Errorf("%s: %w", label, err)
	}
	fmt.Printf("big-del: the load with DEL %s after %.1f s\n", bigDelKey, benchTime/2)
	type delDone struct {
		d   time.Duration
		err error
	}
	done := make(chan delDone, 1)
	go func() {
		// The load connects in well under a second; half its time in, it is at full speed.
		d, err := timedDel(addr, bigDelKey, time.Duration((benchTime/2+0.5)*float64(time.Second)))
		done <- delDone{d, err}
	}()
	run.with, _, err = runLoad(ctx, benchArgs, addr, jsonPath)
	del := <-done
	if err != nil {
		return run, "", fmt.Errorf("%s: %w", label, err)
	}
	if del.err != nil {
		return run, "", fmt.Errorf("%s: %w", label, del.err)
	}
	run.delTime = del.d
	return run, shellJoin(args), nil
}

// renderBigDel writes the big-del profile's table.
func renderBigDel(p func(string, ...any), d *delResult) {
	p("The other clients' load, once without and once with `DEL %s` (%s fields, built with HSET of %d fields each) ",
		bigDelKey, fmtOps(bigDelFields), bigDelPerCommand)
	p("sent half-way through the run on a connection of its own:\n\n```sh\n%s\n```\n\n", d.loadCmd)
	p("| server | ops/s without → with | p50 ms | p99 ms | p99.9 ms | max ms | DEL ms | building the hash |\n")
	p("|---|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, r := range d.runs {
		p("| %s | %s → %s | %.3f → %.3f | %.3f → %.3f | %.3f → %.3f | %.1f → %.1f | %.1f | %.1f s |\n", r.server,
			fmtOps(r.base.OpsSec), fmtOps(r.with.OpsSec), r.base.P50Ms, r.with.P50Ms, r.base.P99Ms, r.with.P99Ms,
			r.base.P999Ms, r.with.P999Ms, r.base.MaxMs, r.with.MaxMs, float64(r.delTime.Microseconds())/1000, r.fill.Seconds())
	}
	p("\n")
}
