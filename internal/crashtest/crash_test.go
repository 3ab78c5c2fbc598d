// Package crashtest holds the durability tests of the server core: kill -9 and graceful
// restarts of a real shardis process, expiry reaching the disk, and binlog replay into a fresh
// store. It has no code of its own, only tests.
package crashtest

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/cespare/xxhash/v2"
	"github.com/redis/go-redis/v9"

	"shardis/codec"
	"shardis/internal/testserver"
)

// ---- the shardis binary, built once per test run ----

var (
	buildOnce sync.Once
	binDir    string
	binPath   string
	buildErr  error
)

func TestMain(m *testing.M) {
	code := m.Run()
	if binDir != "" {
		_ = os.RemoveAll(binDir)
	}
	os.Exit(code)
}

// shardisBinary builds the server from this tree (go build -o <tmp>/shardis shardis) the first
// time a test needs it, so the tests do not depend on a stale bin/shardis.
func shardisBinary(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		binDir, buildErr = os.MkdirTemp("", "crashtest-bin-")
		if buildErr != nil {
			return
		}
		binPath = filepath.Join(binDir, "shardis")
		goTool, err := exec.LookPath("go")
		if err != nil {
			goTool = "/usr/local/go/bin/go" // where the machines this runs on keep it
		}
		out, err := exec.Command(goTool, "build", "-o", binPath, "shardis").CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("go build shardis: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return binPath
}

// ---- a shardis process ----

// proc is a running shardis process on a loopback port.
type proc struct {
	cmd     *exec.Cmd
	addr    string
	out     *syncBuffer // stdout and stderr
	done    chan struct{}
	started time.Time
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// launchShardis starts the binary on data directory dir without waiting for it. The process is
// killed when the test ends if it is still running.
func launchShardis(t *testing.T, dir string, flags ...string) *proc {
	t.Helper()
	return launchShardisOn(t, testserver.FreePort(t), dir, flags...)
}

// launchShardisOn is launchShardis on a port of the caller's (a restart on the same address).
func launchShardisOn(t *testing.T, port int, dir string, flags ...string) *proc {
	t.Helper()
	args := append([]string{"--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--dir", dir,
		"--loops", "2", "--cpu-pin", "no"}, flags...)
	p := &proc{addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), out: &syncBuffer{}, done: make(chan struct{})}
	p.cmd = exec.Command(shardisBinary(t), args...)
	p.cmd.Stdout, p.cmd.Stderr = p.out, p.out
	p.started = time.Now()
	if err := p.cmd.Start(); err != nil {
		t.Fatalf("start shardis: %v", err)
	}
	go func() { _ = p.cmd.Wait(); close(p.done) }()
	t.Cleanup(func() {
		if !p.exited() {
			_ = p.cmd.Process.Kill()
			<-p.done
		}
	})
	return p
}

// startShardis starts the binary and waits until it answers PING; it returns the process and
// how long it took from exec to the first PONG.
func startShardis(t *testing.T, dir string, flags ...string) (*proc, time.Duration) {
	t.Helper()
	p := launchShardis(t, dir, flags...)
	d, err := p.waitReady(15 * time.Second)
	if err != nil {
		t.Fatalf("shardis did not become ready: %v\noutput:\n%s", err, p.out)
	}
	return p, d
}

func (p *proc) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// waitReady polls with a raw PING until +PONG arrives.
func (p *proc) waitReady(timeout time.Duration) (time.Duration, error) {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		if p.exited() {
			return 0, fmt.Errorf("exited with %v", p.cmd.ProcessState)
		}
		if c, err := net.DialTimeout("tcp", p.addr, 100*time.Millisecond); err == nil {
			_ = c.SetDeadline(time.Now().Add(time.Second))
			_, _ = c.Write([]byte("PING\r\n"))
			line, _ := bufio.NewReader(c).ReadString('\n')
			c.Close()
			if line == "+PONG\r\n" {
				return time.Since(p.started), nil
			}
		}
		time.Sleep(2 * time.Millisecond)
	}
	return 0, errors.New("timeout")
}

// kill9 kills the process with SIGKILL and waits for it to be gone.
func (p *proc) kill9(t *testing.T) {
	t.Helper()
	_ = p.cmd.Process.Signal(syscall.SIGKILL)
	<-p.done
}

// stop sends SIGTERM and waits (up to timeout) for the exit; it returns the exit code.
func (p *proc) stop(t *testing.T, timeout time.Duration) int {
	t.Helper()
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	return p.waitExit(t, timeout)
}

func (p *proc) waitExit(t *testing.T, timeout time.Duration) int {
	t.Helper()
	select {
	case <-p.done:
	case <-time.After(timeout):
		_ = p.cmd.Process.Kill()
		<-p.done
		t.Fatalf("shardis did not exit within %v; output:\n%s", timeout, p.out)
	}
	return p.cmd.ProcessState.ExitCode()
}

func (p *proc) client(t *testing.T) *redis.Client {
	c := redis.NewClient(&redis.Options{Addr: p.addr, DisableIdentity: true, Protocol: 2, MaxRetries: -1,
		PoolSize: 1, DialTimeout: time.Second, ReadTimeout: 5 * time.Second, WriteTimeout: 5 * time.Second})
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// isUnknownCommand reports whether err is the reply to a command the server does not have.
func isUnknownCommand(err error) bool {
	return err != nil && strings.HasPrefix(err.Error(), "ERR unknown command")
}

// shardOf4 is the server's routing for 4 shards (xxhash64 of the hash tag mod 4).
func shardOf4(key string) int { return int(xxhash.Sum64(codec.HashTag([]byte(key))) % 4) }

// ---- kill -9 ----

// kv is a key's state as the checker knows it.
type kv struct {
	val    string
	exists bool
}

// crashWriter owns a set of keys that no other goroutine writes, with exactly one command in
// flight at a time: after a crash each key must hold either the state of the last acknowledged
// command or that of the one in flight, and a group written by one MSET or DEL must be wholly
// one or the other.
type crashWriter struct {
	id       int
	singles  []string
	ctr      string
	bm       string   // a bitmap grown past 4 KiB by SETBIT and SETRANGE: a fragmented string
	group    []string // keys in different shards
	acked    map[string]kv
	inflight map[string]kv // what the command in flight would leave; nil: none
	seq      int
	acks     int
	rng      *rand.Rand
}

type crashFeatures struct{ incr, mset, del, bits bool }

func newCrashWriter(id int, seed uint64) *crashWriter {
	w := &crashWriter{id: id, ctr: fmt.Sprintf("w%d:ctr", id), bm: fmt.Sprintf("w%d:bm", id), acked: map[string]kv{}, rng: rand.New(rand.NewPCG(seed, uint64(id)))}
	for j := range 6 {
		w.singles = append(w.singles, fmt.Sprintf("w%d:s%d", id, j))
	}
	seen := map[int]bool{}
	for j := 0; len(w.group) < 4 && j < 1000; j++ {
		k := fmt.Sprintf("w%d:m%d", id, j)
		if sh := shardOf4(k); !seen[sh] {
			seen[sh] = true
			w.group = append(w.group, k)
		}
	}
	return w
}

func (w *crashWriter) keys() []string {
	return append(append(append([]string(nil), w.singles...), w.ctr, w.bm), w.group...)
}

// run issues commands until one fails. A network error (the kill) leaves the command in
// flight; an error reply is a bug and is returned.
func (w *crashWriter) run(ctx context.Context, c *redis.Client, f crashFeatures) error {
	for ctx.Err() == nil {
		w.seq++
		val := fmt.Sprintf("w%d:%d", w.id, w.seq)
		var args []any
		next := map[string]kv{}
		r := w.rng.IntN(100)
		switch {
		case r < 15 && f.incr:
			args = []any{"INCR", w.ctr}
			n, _ := strconv.Atoi(w.acked[w.ctr].val)
			next[w.ctr] = kv{strconv.Itoa(n + 1), true}
		case r < 35 && f.mset:
			args = []any{"MSET"}
			for _, k := range w.group {
				args = append(args, k, val)
				next[k] = kv{val, true}
			}
		case r < 42 && f.del:
			args = []any{"DEL"}
			for _, k := range w.group {
				args = append(args, k)
				next[k] = kv{}
			}
		case r < 52 && f.del:
			k := w.singles[w.rng.IntN(len(w.singles))]
			args = []any{"DEL", k}
			next[k] = kv{}
		case r < 62 && f.bits:
			cur := []byte(w.acked[w.bm].val)
			if w.rng.IntN(2) == 0 {
				off, on := w.rng.IntN(8*20000), w.rng.IntN(2)
				args = []any{"SETBIT", w.bm, off, on}
				if need := off/8 + 1; len(cur) < need {
					cur = append(cur, make([]byte, need-len(cur))...)
				}
				cur[off/8] = cur[off/8]&^(0x80>>(off%8)) | byte(on)<<(7-off%8)
			} else {
				off := w.rng.IntN(20000)
				args = []any{"SETRANGE", w.bm, off, val}
				if need := off + len(val); len(cur) < need {
					cur = append(cur, make([]byte, need-len(cur))...)
				}
				copy(cur[off:], val)
			}
			next[w.bm] = kv{string(cur), true}
		default:
			k := w.singles[w.rng.IntN(len(w.singles))]
			args = []any{"SET", k, val}
			next[k] = kv{val, true}
		}
		w.inflight = next
		res, err := c.Do(ctx, args...).Result()
		if err != nil {
			var rerr redis.Error
			if errors.As(err, &rerr) {
				return fmt.Errorf("writer %d: %v replied %v", w.id, args, err)
			}
			return nil // the server went away: the command stays in flight
		}
		if args[0] == "INCR" {
			n, _ := res.(int64)
			if want := next[w.ctr].val; strconv.FormatInt(n, 10) != want {
				return fmt.Errorf("writer %d: INCR replied %d, want %s", w.id, n, want)
			}
		}
		for k, s := range next {
			w.acked[k] = s
		}
		w.inflight = nil
		w.acks++
	}
	return nil
}

// verify reads every key back after a restart and checks it against the acknowledged and the
// in-flight states; then it adopts what it read as the acknowledged state.
func (w *crashWriter) verify(t *testing.T, ctx context.Context, c *redis.Client, cycle int) {
	t.Helper()
	actual := map[string]kv{}
	for _, k := range w.keys() {
		v, err := c.Get(ctx, k).Result()
		switch {
		case err == redis.Nil:
			actual[k] = kv{}
		case err != nil:
			t.Fatalf("cycle %d: GET %s: %v", cycle, k, err)
		default:
			actual[k] = kv{v, true}
		}
	}
	matches := func(states map[string]kv, keys []string) bool {
		for _, k := range keys {
			if actual[k] != states[k] {
				return false
			}
		}
		return true
	}
	check := func(keys []string, what string) {
		if matches(w.acked, keys) {
			return
		}
		if w.inflight != nil {
			touched := true
			for _, k := range keys {
				if _, ok := w.inflight[k]; !ok {
					touched = false
				}
			}
			merged := map[string]kv{}
			for _, k := range keys {
				merged[k] = w.acked[k]
				if s, ok := w.inflight[k]; ok {
					merged[k] = s
				}
			}
			if touched && matches(merged, keys) {
				return
			}
		}
		var got, want, fl []string
		for _, k := range keys {
			got = append(got, fmt.Sprintf("%s=%v", k, actual[k]))
			want = append(want, fmt.Sprintf("%s=%v", k, w.acked[k]))
			if s, ok := w.inflight[k]; ok {
				fl = append(fl, fmt.Sprintf("%s=%v", k, s))
			}
		}
		t.Errorf("cycle %d: writer %d %s after kill -9:\n got       %v\n acked     %v\n in flight %v",
			cycle, w.id, what, got, want, fl)
	}
	for _, k := range w.singles {
		check([]string{k}, "lost an acknowledged write")
	}
	check([]string{w.ctr}, "lost an acknowledged INCR")
	check([]string{w.bm}, "lost an acknowledged SETBIT or SETRANGE of its bitmap")
	check(w.group, "has a half-applied MSET/DEL or lost one")
	w.acked, w.inflight = actual, nil
}

// TestCrash_KillNineKeepsAcknowledgedWrites kills a server under write load with SIGKILL several
// times (appendfsync always) and checks after each restart that every acknowledged write
// survived and no multi-shard MSET or DEL is half applied.
func TestCrash_KillNineKeepsAcknowledgedWrites(t *testing.T) {
	shardisBinary(t) // build outside the timed part
	start := time.Now()
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 0))
	dir := t.TempDir()
	flags := []string{"--appendfsync", "always", "--shards", "4"}
	ctx := context.Background()

	const nWriters = 8
	writers := make([]*crashWriter, nWriters)
	for i := range writers {
		writers[i] = newCrashWriter(i, seed)
		if len(writers[i].group) < 2 {
			t.Fatalf("writer %d: no keys in distinct shards", i)
		}
	}

	p, _ := startShardis(t, dir, flags...)
	var f crashFeatures
	probe := p.client(t)
	f.incr = !isUnknownCommand(probe.Do(ctx, "INCR", "probe:ctr").Err())
	f.mset = !isUnknownCommand(probe.Do(ctx, "MSET", "probe:a", "1", "probe:b", "1").Err())
	f.del = !isUnknownCommand(probe.Do(ctx, "DEL", "probe:a", "probe:b").Err())
	f.bits = !isUnknownCommand(probe.Do(ctx, "SETBIT", "probe:bm", 1, 1).Err())
	if !f.incr || !f.mset || !f.del {
		t.Logf("commands not in the server yet, left out of the workload: INCR %v, MSET %v, DEL %v", !f.incr, !f.mset, !f.del)
	}

	const cycles = 4
	for cycle := range cycles {
		if cycle > 0 {
			p, _ = startShardis(t, dir, flags...)
			c := p.client(t)
			for _, w := range writers {
				w.verify(t, ctx, c, cycle)
			}
			if t.Failed() {
				t.FailNow()
			}
		}
		runCtx, cancel := context.WithCancel(ctx)
		var wg sync.WaitGroup
		errs := make(chan error, nWriters)
		before := 0
		for _, w := range writers {
			before += w.acks
			c := p.client(t)
			wg.Add(1)
			go func() { defer wg.Done(); errs <- w.run(runCtx, c, f) }()
		}
		time.Sleep(time.Duration(200+rng.IntN(500)) * time.Millisecond)
		p.kill9(t)
		wg.Wait()
		cancel()
		close(errs)
		for err := range errs {
			if err != nil {
				t.Error(err)
			}
		}
		after := 0
		for _, w := range writers {
			after += w.acks
		}
		t.Logf("cycle %d: %d writes acknowledged before kill -9", cycle, after-before)
		if after-before < nWriters {
			t.Fatalf("cycle %d: only %d writes acknowledged: the workload did not run", cycle, after-before)
		}
	}
	// The last restart: verify, stop cleanly and check the store's bookkeeping on disk.
	p, _ = startShardis(t, dir, flags...)
	c := p.client(t)
	for _, w := range writers {
		w.verify(t, ctx, c, cycles)
	}
	if code := p.stop(t, 10*time.Second); code != 0 {
		t.Fatalf("SIGTERM: exit code %d; output:\n%s", code, p.out)
	}
	st := testserver.OpenStore(t, dir, 4)
	checkStoreConsistent(t, st)
	t.Logf("%d cycles in %v", cycles, time.Since(start).Round(time.Millisecond))
}

// TestCrash_OtherShardCountRefused checks that a data directory made with 4 shards is not opened
// with another shard count: the process exits non-zero saying so, and the data is untouched.
func TestCrash_OtherShardCountRefused(t *testing.T) {
	dir := t.TempDir()
	p, _ := startShardis(t, dir, "--shards", "4")
	ctx := context.Background()
	if err := p.client(t).Set(ctx, "k", "v", 0).Err(); err != nil {
		t.Fatal(err)
	}
	if code := p.stop(t, 10*time.Second); code != 0 {
		t.Fatalf("SIGTERM: exit code %d; output:\n%s", code, p.out)
	}
	for _, n := range []string{"8", "1"} {
		q := launchShardis(t, dir, "--shards", n)
		code := q.waitExit(t, 15*time.Second)
		out := q.out.String()
		if code == 0 {
			t.Fatalf("--shards %s on a 4-shard directory: exit code 0; output:\n%s", n, out)
		}
		if !strings.Contains(out, "shards") || !strings.Contains(out, "--shards 4") {
			t.Fatalf("--shards %s: message does not say the directory needs 4 shards:\n%s", n, out)
		}
	}
	p, _ = startShardis(t, dir, "--shards", "4")
	if v, err := p.client(t).Get(ctx, "k").Result(); err != nil || v != "v" {
		t.Fatalf("after the refused opens, GET k = %q, %v; want v", v, err)
	}
}
