// Command suite is `make bench`: it builds bin/shardis and bin/shardis-bench, starts shardis
// and redis-server on free loopback ports with equivalent durability (fsync once a second),
// runs every profile with --vs (A = shardis, B = redis-server), stops both, and writes
// BENCHMARKS.md and docs/bench-pipeline.svg.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	"shardis/bench"
)

// profile is one load of the suite.
type profile struct {
	id    string
	title string
	args  []string // shardis-bench load options (servers, time and runs are added)
	// smallCache restarts shardis with a block cache far below the dataset (and empties
	// redis-server) before the profile.
	smallCache bool
	// bigDel: the load runs without and then with a DEL of a big hash (see bigdel.go),
	// on each server in turn instead of alternating.
	bigDel bool
	// depth > 0: a point of the pipeline chart.
	depth int
	note  string
}

func profiles() []profile {
	mix := func(depth int, extra ...string) []string {
		a := []string{"--ratio", "1:10", "-d", "32", "--key-minimum", "1", "--key-maximum", "100000",
			"--key-pattern", "R:R", "--pipeline", strconv.Itoa(depth)}
		return append(a, extra...)
	}
	// collIn is a load of cmds over keys prefix1..prefixN at pipeline depth.
	collIn := func(prefix string, keys, depth int, cmds ...string) []string {
		a := []string{"-R", "-d", "16", "--key-prefix", prefix, "--key-minimum", "1",
			"--key-maximum", strconv.Itoa(keys), "--pipeline", strconv.Itoa(depth)}
		for _, c := range cmds {
			a = append(a, "--command", c)
		}
		return a
	}
	coll := func(prefix string, cmds ...string) []string { return collIn(prefix, 10000, 1, cmds...) }
	coll16 := func(prefix string, cmds ...string) []string { return collIn(prefix, 10000, 16, cmds...) }
	return []profile{
		{id: "mix-p1", title: "SET:GET 1:10, 32 B values, 100 connections, pipeline 1", depth: 1,
			args: mix(1, "--prefill"), note: "Every key of the range is written once before measuring (--prefill), so GETs hit."},
		{id: "mix-p4", title: "SET:GET 1:10, 32 B values, 100 connections, pipeline 4", depth: 4, args: mix(4)},
		{id: "mix-p16", title: "SET:GET 1:10, 32 B values, 100 connections, pipeline 16", depth: 16, args: mix(16)},
		{id: "mix-p64", title: "SET:GET 1:10, 32 B values, 100 connections, pipeline 64", depth: 64, args: mix(64)},
		{id: "set-1k", title: "SET only, 1 KiB values, 100 connections, pipeline 1",
			args: []string{"--ratio", "1:0", "-d", "1024", "--key-prefix", "set1k-", "--key-minimum", "1", "--key-maximum", "100000", "--pipeline", "1"}},
		{id: "hset", title: "HSET (random 16 B field and value), 10k hashes, pipeline 1",
			args: coll("hash-", "HSET __key__ __data__ __data__")},
		{id: "lpush-rpop", title: "LPUSH / RPOP 1:1, 16 B values, 10k lists, pipeline 1",
			args: coll("list-", "LPUSH __key__ __data__", "RPOP __key__")},
		{id: "sadd", title: "SADD (random 16 B members), 10k sets, pipeline 1",
			args: coll("set-", "SADD __key__ __data__")},
		{id: "zadd", title: "ZADD (random 16 B members), 10k sorted sets, pipeline 1",
			args: coll("zset-", "ZADD __key__ 1 __data__")},
		{id: "zrange", title: "ZRANGE key 0 9 over the sorted sets ZADD built, pipeline 1",
			args: coll("zset-", "ZRANGE __key__ 0 9")},
		{id: "hset-p16", title: "HSET (random 16 B field and value), 10k hashes, pipeline 16",
			args: coll16("hash16-", "HSET __key__ __data__ __data__")},
		{id: "sadd-p16", title: "SADD (random 16 B members), 10k sets, pipeline 16",
			args: coll16("set16-", "SADD __key__ __data__")},
		{id: "zadd-p16", title: "ZADD (random 16 B members), 10k sorted sets, pipeline 16",
			args: coll16("zset16-", "ZADD __key__ 1 __data__")},
		{id: "lpush-p16", title: "LPUSH, 16 B values, 100 lists, pipeline 16",
			args: collIn("biglist-", 100, 16, "LPUSH __key__ __data__"),
			note: "100 lists, so that each grows to thousands of elements for the LRANGE profiles after it."},
		{id: "lrange-100", title: "LRANGE key 0 99 over the lists LPUSH built, pipeline 16",
			args: collIn("biglist-", 100, 16, "LRANGE __key__ 0 99")},
		{id: "lrange-600", title: "LRANGE key 0 599 over the same lists, pipeline 1",
			args: collIn("biglist-", 100, 1, "LRANGE __key__ 0 599")},
		{id: "lpush-rpop-p16", title: "LPUSH / RPOP 1:1 over the same lists (queues), pipeline 16",
			args: collIn("biglist-", 100, 16, "LPUSH __key__ __data__", "RPOP __key__")},
		{id: "multi-incr", title: "MULTI / INCR / EXEC (each client a transaction at a time), 10k counters, pipeline 1",
			args: coll("tx-", "MULTI", "INCR __key__", "EXEC"),
			note: "Every command is counted: a transaction is three of them."},
		{id: "big-del", title: "DEL of a 1,000,000-field hash while 100 clients run SET:GET 1:10 at pipeline 1",
			bigDel: true, args: mix(1)},
		{id: "big-get", title: "Random GETs over 200k × 1 KiB keys (~200 MB) with an 8 MB block cache and an 8 MB key cache, pipeline 1",
			smallCache: true,
			args: []string{"--ratio", "0:1", "-d", "1024", "--key-prefix", "big-", "--key-minimum", "1", "--key-maximum", "200000",
				"--key-pattern", "R:R", "--pipeline", "1", "--prefill"},
			note: "shardis restarted on a fresh directory with `--block-cache-size 8mb --key-cache-size 8mb " +
				"--write-buffer-size 16mb` (the small write buffer makes the prefill reach SST files instead of staying in " +
				"memtables); redis-server FLUSHALLed first. redis-server keeps everything in memory, so this shows the cost " +
				"of reading through RocksDB. The SST files are still in the OS page cache (this machine has the memory), " +
				"so a miss costs a block read, decompression and a copy, not a disk seek."},
	}
}

// goProfile is what -profile asked for.
var goProfile struct{ kind, dir string }

// keepProfile copies the Go profile a stopped shardis wrote (main.go: <dir>/profile) to
// the profile directory as id.kind.pprof.
func keepProfile(s *server, root, id string) error {
	src := filepath.Join(s.dir, "profile", goProfile.kind+".pprof")
	raw, err := os.ReadFile(src)
	if err != nil {
		return fmt.Errorf("the Go profile of %s: %w", id, err)
	}
	dir := goProfile.dir
	if !filepath.IsAbs(dir) {
		dir = filepath.Join(root, dir)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	dst := filepath.Join(dir, id+"."+goProfile.kind+".pprof")
	fmt.Printf("suite: %s (go tool pprof bin/shardis %s)\n", dst, dst)
	return os.WriteFile(dst, raw, 0o644)
}

// runBench runs shardis-bench (args[0]) with its output on ours, and returns the report it
// wrote to jsonPath (nil if none) and what went wrong ("" if nothing). A run that failed
// may still have written what it measured. Cancelling ctx interrupts it as Ctrl-C would.
func runBench(ctx context.Context, args []string, jsonPath string) (*bench.Report, string) {
	cmd := exec.CommandContext(ctx, args[0], args[1:]...)
	cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
	cmd.WaitDelay = 10 * time.Second
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	var problems []string
	if err := cmd.Run(); err != nil {
		problems = append(problems, fmt.Sprintf("shardis-bench: %v", err))
	}
	raw, err := os.ReadFile(jsonPath)
	if err != nil {
		return nil, strings.Join(append(problems, err.Error()), "; ")
	}
	var rep bench.Report
	if err := json.Unmarshal(raw, &rep); err != nil {
		return nil, strings.Join(append(problems, fmt.Sprintf("%s: %v", jsonPath, err)), "; ")
	}
	if rep.Error != "" {
		problems = append(problems, rep.Error)
	}
	return &rep, strings.Join(problems, "; ")
}

// server is a running server process.
type server struct {
	name string
	args []string
	addr string
	dir  string
	log  string
	cmd  *exec.Cmd
	done chan error
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// command sends one command on a fresh connection and returns the first reply line.
func command(addr string, args ...string) (string, error) {
	c, err := net.DialTimeout("tcp", addr, 2*time.Second)
	if err != nil {
		return "", err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(60 * time.Second))
	var b strings.Builder
	fmt.Fprintf(&b, "*%d\r\n", len(args))
	for _, a := range args {
		fmt.Fprintf(&b, "$%d\r\n%s\r\n", len(a), a)
	}
	if _, err := io.WriteString(c, b.String()); err != nil {
		return "", err
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	return strings.TrimSpace(line), err
}

func startServer(name, bin string, args []string, dir string) (*server, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	s := &server{name: name, addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), dir: dir,
		log: dir + ".log", done: make(chan error, 1)}
	s.args = append([]string{bin, "--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--dir", dir}, args...)
	logf, err := os.Create(s.log)
	if err != nil {
		return nil, err
	}
	s.cmd = exec.Command(s.args[0], s.args[1:]...)
	s.cmd.Stdout, s.cmd.Stderr = logf, logf
	if err := s.cmd.Start(); err != nil {
		logf.Close()
		return nil, err
	}
	go func() { s.done <- s.cmd.Wait(); logf.Close() }()
	deadline := time.Now().Add(30 * time.Second)
	for {
		if r, err := command(s.addr, "PING"); err == nil && r == "+PONG" {
			return s, nil
		}
		select {
		case err := <-s.done:
			s.done <- err
			return nil, fmt.Errorf("%s exited at startup (%v); log %s:\n%s", name, err, s.log, tail(s.log, 10))
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			s.stop()
			return nil, fmt.Errorf("%s did not answer PING within 30 s; log %s", name, s.log)
		}
	}
}

func (s *server) alive() bool {
	select {
	case err := <-s.done:
		s.done <- err
		return false
	default:
	}
	r, err := command(s.addr, "PING")
	return err == nil && r == "+PONG"
}

// stop asks the server to exit (SIGTERM: both shut down gracefully) and kills it after 30 s.
func (s *server) stop() {
	if s == nil || s.cmd == nil || s.cmd.Process == nil {
		return
	}
	select {
	case err := <-s.done:
		s.done <- err
		return
	default:
	}
	s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-s.done:
		s.done <- err
	case <-time.After(30 * time.Second):
		s.cmd.Process.Kill()
		s.done <- <-s.done
	}
}

func tail(path string, n int) string {
	b, _ := os.ReadFile(path)
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// shellJoin renders a command line so it can be pasted into a shell.
func shellJoin(args []string) string {
	var out []string
	for _, a := range args {
		if a != "" && strings.IndexFunc(a, func(r rune) bool {
			return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./:=,@+", r))
		}) < 0 {
			out = append(out, a)
			continue
		}
		out = append(out, "'"+strings.ReplaceAll(a, "'", `'\''`)+"'")
	}
	return strings.Join(out, " ")
}

// result is what the suite keeps of one profile.
type result struct {
	p       profile
	command string
	report  *bench.Report
	del     *delResult // the big-del profile's, instead of report
	problem string     // a failure of the run itself (exit status, server crash)
}

type machine struct {
	CPUs      int
	CPUModel  string
	MemoryGB  float64
	Kernel    string
	Date      time.Time
	GoVersion string
	Redis     string
	Revision  string
}

func machineInfo(root string) machine {
	m := machine{CPUs: runtime.NumCPU(), Date: time.Now().UTC(), GoVersion: runtime.Version()}
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			if k, v, ok := strings.Cut(l, ":"); ok && strings.TrimSpace(k) == "model name" {
				m.CPUModel = strings.TrimSpace(v)
				break
			}
		}
	}
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			if f := strings.Fields(l); len(f) >= 2 && f[0] == "MemTotal:" {
				kb, _ := strconv.ParseFloat(f[1], 64)
				m.MemoryGB = kb / 1024 / 1024
			}
		}
	}
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		m.Kernel = strings.TrimSpace(string(b))
	}
	if out, err := exec.Command("redis-server", "--version").Output(); err == nil {
		for _, f := range strings.Fields(string(out)) {
			if v, ok := strings.CutPrefix(f, "v="); ok {
				m.Redis = v
			}
		}
	}
	if out, err := exec.Command("git", "-C", root, "rev-parse", "--short", "HEAD").Output(); err == nil {
		m.Revision = strings.TrimSpace(string(out))
		if st, err := exec.Command("git", "-C", root, "status", "--porcelain", "--untracked-files=no").Output(); err == nil && len(st) > 0 {
			m.Revision += " (with uncommitted changes)"
		}
	}
	return m
}

func main() {
	benchTime := flag.Float64("time", 8, "seconds per measured run (BENCH_TIME)")
	runs := flag.Int("runs", 2, "runs per server and profile, alternating A B B A")
	root := flag.String("root", ".", "repository root")
	threads := flag.Int("threads", 2, "load generator threads")
	clients := flag.Int("clients", 50, "connections per thread")
	only := flag.String("only", "", "comma-separated profile ids to run (default: all)")
	buildSpec := flag.String("builds", "auto", "which RocksDB builds of shardis to measure, in order: release, debian, "+
		"both as release,debian; auto = release,debian when make release's library is cached, else debian (BENCH_BUILDS)")
	flag.StringVar(&goProfile.kind, "profile", "", "cpu, mem, block or mutex: run shardis with --profile KIND, restarted "+
		"for every load profile, and keep its Go profile as PROFILE-DIR/ID.KIND.pprof")
	flag.StringVar(&goProfile.dir, "profile-dir", "profiles", "where -profile puts the profiles (relative to -root)")
	flag.Parse()
	if *benchTime <= 0 || *runs < 1 {
		fmt.Fprintln(os.Stderr, "suite: -time and -runs must be positive")
		os.Exit(2)
	}
	switch goProfile.kind {
	case "", "cpu", "mem", "block", "mutex":
	default:
		fmt.Fprintf(os.Stderr, "suite: -profile %q: want cpu, mem, block or mutex\n", goProfile.kind)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := suite(ctx, *root, *buildSpec, *benchTime, *runs, *threads, *clients, *only); err != nil {
		fmt.Fprintf(os.Stderr, "suite: %v\n", err)
		if errors.Is(err, context.Canceled) {
			os.Exit(130)
		}
		os.Exit(1)
	}
}

func suite(ctx context.Context, root, buildSpec string, benchTime float64, runs, threads, clients int, only string) error {
	root, err := filepath.Abs(root)
	if err != nil {
		return err
	}
	goBin := os.Getenv("GO")
	if goBin == "" {
		goBin = "go"
	}
	builds, err := selectBuilds(root, buildSpec)
	if err != nil {
		return err
	}
	benchBin := filepath.Join(root, "bin", "shardis-bench")
	for _, b := range builds {
		if err := b.compile(ctx, goBin, root); err != nil {
			return err
		}
	}
	cmd := exec.CommandContext(ctx, goBin, "build", "-o", benchBin, "./bench/cmd/shardis-bench")
	cmd.Dir, cmd.Stdout, cmd.Stderr = root, os.Stdout, os.Stderr
	fmt.Printf("suite: %s\n", shellJoin(cmd.Args))
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("build: %w", err)
	}
	redisBin, err := exec.LookPath("redis-server")
	if err != nil {
		return fmt.Errorf("redis-server not installed (make deps installs it)")
	}
	tmp, err := os.MkdirTemp("", "shardis-bench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	mach := machineInfo(root)

	start := time.Now()
	var passes []pass
	for i, b := range builds {
		ps, err := runPass(ctx, b, i, root, filepath.Join(tmp, b.name), benchBin, redisBin, benchTime, runs, threads, clients, only)
		if err != nil {
			return fmt.Errorf("%s build: %w", b.name, err)
		}
		passes = append(passes, ps)
	}
	elapsed := time.Since(start)

	md := renderMarkdown(mach, benchTime, runs, threads, clients, passes, elapsed)
	if err := os.WriteFile(filepath.Join(root, "BENCHMARKS.md"), []byte(md), 0o644); err != nil {
		return err
	}
	if pts := chartPoints(passes[0].results); len(pts) > 0 {
		if err := os.MkdirAll(filepath.Join(root, "docs"), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(root, "docs", "bench-pipeline.svg"), []byte(renderSVG(pts, mach, "shardis ("+passes[0].build.name+" build)")), 0o644); err != nil {
			return err
		}
	}
	fmt.Printf("\nsuite: wrote %s and docs/bench-pipeline.svg in %s\n", filepath.Join(root, "BENCHMARKS.md"), elapsed.Round(time.Second))
	return nil
}

// pass is the whole suite run against one build of shardis, beside its own redis-server.
type pass struct {
	build      build
	serverCmds []string
	results    []result
}

// runPass runs every profile (or those of only) on a fresh shardis of build bld and a fresh
// redis-server, in directories under tmp. index is the pass's place in the suite: the first
// keeps the profile ids as its Go profiles' names, later ones prefix the build's name.
func runPass(ctx context.Context, bld build, index int, root, tmp, benchBin, redisBin string, benchTime float64,
	runs, threads, clients int, only string) (pass, error) {
	ps := pass{build: bld}
	shardisBin := bld.bin
	shardisArgs := []string{"--appendfsync", "everysec", "--cpu-pin", "no"}
	if goProfile.kind != "" {
		shardisArgs = append(shardisArgs, "--profile", goProfile.kind)
	}
	redisArgs := []string{"--appendonly", "yes", "--appendfsync", "everysec", "--save", ""}
	gen := 0
	startShardis := func(extra ...string) (*server, error) {
		gen++
		return startServer("shardis", shardisBin, append(append([]string{}, shardisArgs...), extra...),
			filepath.Join(tmp, fmt.Sprintf("shardis-%d", gen)))
	}
	a, err := startShardis()
	if err != nil {
		return ps, err
	}
	defer func() { a.stop() }()
	b, err := startServer("redis-server", redisBin, redisArgs, filepath.Join(tmp, "redis"))
	if err != nil {
		return ps, err
	}
	defer b.stop()
	serverCmds := []string{shellJoin(a.args), shellJoin(b.args)}

	var results []result
	// keepGoProfile stops shardis after a profile run with -profile, which makes it write its
	// Go profile, and keeps the file; the next profile starts a fresh shardis.
	keepGoProfile := func(res *result) {
		if goProfile.kind == "" {
			return
		}
		a.stop()
		if err := keepProfile(a, root, bld.profileName(index, res.p.id)); err != nil {
			res.problem = strings.TrimPrefix(res.problem+"; "+err.Error(), "; ")
		}
	}
	want := map[string]bool{}
	for _, id := range strings.Split(only, ",") {
		if id != "" {
			want[id] = true
		}
	}
	for _, p := range profiles() {
		if len(want) > 0 && !want[p.id] {
			continue
		}
		if ctx.Err() != nil {
			return ps, ctx.Err()
		}
		switch {
		case p.smallCache:
			a.stop()
			if a, err = startShardis("--block-cache-size", "8mb", "--key-cache-size", "8mb", "--write-buffer-size", "16mb"); err != nil {
				return ps, err
			}
			serverCmds = append(serverCmds, shellJoin(a.args))
			if r, err := command(b.addr, "FLUSHALL"); err != nil || r != "+OK" {
				return ps, fmt.Errorf("redis-server FLUSHALL: %q %v", r, err)
			}
		case goProfile.kind != "" && len(results) > 0:
			// A Go profile per load profile: a fresh shardis for each (the first is fresh).
			if a, err = startShardis(); err != nil {
				return ps, err
			}
			serverCmds = append(serverCmds, shellJoin(a.args))
		}
		if p.bigDel {
			res := result{p: p, del: &delResult{}}
			fmt.Printf("\n=== %s: %s\n", p.id, p.title)
			loadArgs := append([]string{benchBin, "-t", strconv.Itoa(threads), "-c", strconv.Itoa(clients),
				"--test-time", strconv.FormatFloat(benchTime, 'f', -1, 64), "--runs", "1", "--hide-histogram"}, p.args...)
			for _, s := range []*server{a, b} {
				run, cmdline, err := runBigDel(ctx, s.name, s.addr, tmp, loadArgs, benchTime)
				if ctx.Err() != nil {
					return ps, ctx.Err()
				}
				if err != nil {
					res.problem = strings.TrimPrefix(res.problem+"; "+err.Error(), "; ")
					continue
				}
				if res.del.loadCmd == "" {
					res.del.loadCmd = cmdline
				}
				res.del.runs = append(res.del.runs, run)
			}
			if !a.alive() || !b.alive() {
				return ps, fmt.Errorf("a server exited during %s; logs %s %s", p.id, a.log, b.log)
			}
			keepGoProfile(&res)
			results = append(results, res)
			continue
		}
		host, port, _ := net.SplitHostPort(a.addr)
		jsonPath := filepath.Join(tmp, p.id+".json")
		args := append([]string{benchBin, "-s", host, "-p", port, "--vs", b.addr, "-t", strconv.Itoa(threads),
			"-c", strconv.Itoa(clients), "--test-time", strconv.FormatFloat(benchTime, 'f', -1, 64),
			"--runs", strconv.Itoa(runs), "--hide-histogram", "--json-out", jsonPath}, p.args...)
		res := result{p: p, command: shellJoin(args)}
		fmt.Printf("\n=== %s: %s\n%s\n", p.id, p.title, res.command)
		res.report, res.problem = runBench(ctx, args, jsonPath)
		if ctx.Err() != nil {
			return ps, ctx.Err()
		}
		// A server that died is reported and replaced, so the remaining profiles still run.
		if !a.alive() {
			res.problem = strings.TrimPrefix(res.problem+"; shardis exited: "+tail(a.log, 3), "; ")
			a.stop()
			if a, err = startShardis(); err != nil {
				return ps, err
			}
			serverCmds = append(serverCmds, shellJoin(a.args))
		}
		if !b.alive() {
			return ps, fmt.Errorf("redis-server exited during %s; log:\n%s", p.id, tail(b.log, 10))
		}
		keepGoProfile(&res)
		results = append(results, res)
	}
	a.stop()
	b.stop()
	ps.serverCmds, ps.results = serverCmds, results
	return ps, nil
}
