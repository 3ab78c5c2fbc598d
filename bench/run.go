package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// TypeStats are the counters and latency histogram of one command type (Sets, Gets, or a
// --command name).
type TypeStats struct {
	Name      string
	CountHits bool // Gets of the SET:GET mix report hits and misses
	Ops       uint64
	Hits      uint64
	Misses    uint64
	Errors    uint64 // error replies
	BytesTx   uint64
	BytesRx   uint64
	Hist      *Histogram
	// FirstError is the text of the first error reply seen.
	FirstError string
}

func newTypeStats(name string, hits bool) *TypeStats {
	return &TypeStats{Name: name, CountHits: hits, Hist: NewHistogram()}
}

func (t *TypeStats) merge(o *TypeStats) {
	t.Ops += o.Ops
	t.Hits += o.Hits
	t.Misses += o.Misses
	t.Errors += o.Errors
	t.BytesTx += o.BytesTx
	t.BytesRx += o.BytesRx
	t.Hist.Merge(o.Hist)
	t.CountHits = t.CountHits || o.CountHits
	if t.FirstError == "" {
		t.FirstError = o.FirstError
	}
}

// Result is what one run measured against one server.
type Result struct {
	Addr     string
	Types    []*TypeStats
	Totals   *TypeStats
	Duration time.Duration
	// Interrupted: the run was stopped (Ctrl-C) before its end; the figures cover what ran.
	Interrupted bool
	// ConnErrors are connection failures (not error replies), "message" -> clients.
	ConnErrors map[string]int
}

// runOptions control one run.
type runOptions struct {
	label     string    // progress label: "RUN #1", "PREFILL"
	progress  io.Writer // nil: no progress line
	overwrite bool      // progress line redrawn in place (a terminal)
	prefill   bool
}

// inflight is a request sent and not yet answered.
type inflight struct {
	start int64 // ns since the run started
	op    int
	size  int
}

// client is one connection and its request generator. Only its own goroutine touches it,
// except the live counters the progress line reads.
type client struct {
	conn     net.Conn
	rr       *replyReader
	ops      []opSpec
	opType   []int // op index -> type index
	keys     []*keyGen
	data     *dataGen
	cyc      *cycle
	stats    []*TypeStats
	limit    uint64 // requests to send; 0: until stopped
	pipeline int
	prefix   []byte

	liveOps atomic.Uint64
	liveLat atomic.Uint64 // ns

	err error
}

// run is one measurement: all clients against one server.
type run struct {
	start    time.Time
	stopping atomic.Bool
}

func (r *run) now() int64 { return int64(time.Since(r.start)) }

// dialClient connects and, for RESP3, says HELLO 3.
func dialClient(ctx context.Context, addr string, protocol int) (net.Conn, *replyReader, error) {
	d := net.Dialer{Timeout: 5 * time.Second}
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, nil, err
	}
	rr := newReplyReader(conn, 64<<10)
	if protocol == 3 {
		conn.SetDeadline(time.Now().Add(5 * time.Second))
		if _, err := conn.Write(encodeCommand("HELLO", "3")); err != nil {
			conn.Close()
			return nil, nil, err
		}
		kind, _, msg, err := rr.read()
		if err == nil && kind == replyError {
			err = fmt.Errorf("HELLO 3: %s", msg)
		}
		if err != nil {
			conn.Close()
			return nil, nil, err
		}
		conn.SetDeadline(time.Time{})
	}
	return conn, rr, nil
}

// runLoad runs cfg's load (or its prefill) against addr until the requests are sent, the test
// time is over or ctx is cancelled (then the result is marked Interrupted).
func runLoad(ctx context.Context, cfg *Config, addr string, opt runOptions) (*Result, error) {
	ops := cfg.ops()
	pipeline := cfg.Pipeline
	if opt.prefill {
		ops = []opSpec{cfg.prefillOp()}
		pipeline = cfg.PrefillPipeline
		if ops[0].tmpl.KeyCount() == 0 {
			return nil, fmt.Errorf("--prefill: %q has no %s", ops[0].tmpl.Text, keyPlaceholder)
		}
	}
	// Command types in order of first appearance.
	var types []*TypeStats
	typeIdx := map[string]int{}
	opType := make([]int, len(ops))
	for i, op := range ops {
		ti, ok := typeIdx[op.name]
		if !ok {
			ti = len(types)
			typeIdx[op.name] = ti
			types = append(types, newTypeStats(op.name, op.hits))
		}
		opType[i] = ti
	}

	n := cfg.TotalClients()
	buf := newDataBuffer(cfg.DataMax, cfg.RandomData)
	clients := make([]*client, n)
	var totalRequests uint64
	for i := range clients {
		rng := rand.New(rand.NewPCG(uint64(i)+1, 0x5eed))
		c := &client{ops: ops, opType: opType, cyc: newCycle(ops), pipeline: pipeline,
			prefix: []byte(cfg.KeyPrefix), limit: cfg.Requests,
			data: &dataGen{buf: buf, min: cfg.DataMin, max: cfg.DataMax, random: cfg.RandomData, rng: rng}}
		for _, op := range ops {
			c.keys = append(c.keys, newKeyGen(op.pattern, cfg.KeyMin, cfg.KeyMax, i, n, cfg.KeyMedian, cfg.KeyStddev, rng))
		}
		for _, t := range types {
			c.stats = append(c.stats, newTypeStats(t.Name, t.CountHits))
		}
		switch {
		case opt.prefill:
			k := uint64(ops[0].tmpl.KeyCount())
			c.limit = (sliceLen(cfg.KeyMin, cfg.KeyMax, i, n) + k - 1) / k
		case cfg.AllKeys:
			c.limit = sliceLen(cfg.KeyMin, cfg.KeyMax, i, n)
		case cfg.TestTime > 0:
			c.limit = 0
		}
		totalRequests += c.limit
		clients[i] = c
	}

	// Connect everyone before the clock starts.
	var wg sync.WaitGroup
	dialErrs := make([]error, n)
	for i, c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c.conn, c.rr, dialErrs[i] = dialClient(ctx, addr, cfg.Protocol)
		}()
	}
	wg.Wait()
	if err := errors.Join(dialErrs...); err != nil {
		for _, c := range clients {
			if c.conn != nil {
				c.conn.Close()
			}
		}
		return nil, fmt.Errorf("connect to %s: %w", addr, firstErr(dialErrs))
	}

	r := &run{start: time.Now()}
	res := &Result{Addr: addr, ConnErrors: map[string]int{}}
	done := make(chan struct{})
	for _, c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c.loop(r)
		}()
	}
	go func() { wg.Wait(); close(done) }()

	var timer <-chan time.Time
	if cfg.TestTime > 0 && !opt.prefill {
		t := time.NewTimer(cfg.TestTime)
		defer t.Stop()
		timer = t.C
	}
	stop := func(grace time.Duration) {
		r.stopping.Store(true)
		// Replies still in flight get a grace period; a hung server cannot hold the run.
		for _, c := range clients {
			c.conn.SetReadDeadline(time.Now().Add(grace))
		}
	}
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	var lastOps, lastLat uint64
	lastT := time.Duration(0)
	ctxDone := ctx.Done()
	progressShown := false
	showProgress := func() {
		var ops, lat uint64
		for _, c := range clients {
			ops += c.liveOps.Load()
			lat += c.liveLat.Load()
		}
		el := time.Since(r.start)
		pct := 0.0
		switch {
		case cfg.TestTime > 0 && !opt.prefill:
			pct = min(float64(el)/float64(cfg.TestTime)*100, 100)
		case totalRequests > 0:
			pct = float64(ops) / float64(totalRequests) * 100
		}
		line := progressLine(opt.label, pct, el, cfg.Threads, ops, lastOps, lat, lastLat, el-lastT)
		lastOps, lastLat, lastT = ops, lat, el
		if opt.overwrite {
			fmt.Fprintf(opt.progress, "\r%s\x1b[K", line)
		} else {
			fmt.Fprintln(opt.progress, line)
		}
		progressShown = true
	}
loop:
	for {
		select {
		case <-done:
			break loop
		case <-timer:
			timer = nil
			stop(10 * time.Second)
		case <-ctxDone:
			ctxDone = nil
			res.Interrupted = true
			stop(time.Second)
		case <-tick.C:
			if opt.progress != nil {
				showProgress()
			}
		}
	}
	res.Duration = time.Since(r.start)
	if opt.progress != nil && !progressShown {
		showProgress() // a run shorter than the first tick still reports once
	}
	if progressShown && opt.overwrite {
		fmt.Fprintln(opt.progress)
	}

	// Merge: clients into their thread, threads into the run.
	for ti, t := range types {
		for th := 0; th < cfg.Threads; th++ {
			thread := newTypeStats(t.Name, t.CountHits)
			for _, c := range clients[th*cfg.Clients : (th+1)*cfg.Clients] {
				thread.merge(c.stats[ti])
			}
			types[ti].merge(thread)
		}
	}
	for _, c := range clients {
		c.conn.Close()
		if c.err != nil {
			res.ConnErrors[c.err.Error()]++
		}
	}
	res.Types = types
	res.Totals = newTypeStats("Totals", false)
	for _, t := range types {
		res.Totals.merge(t)
	}
	res.Totals.FirstError = ""
	for _, t := range types {
		if t.FirstError != "" {
			res.Totals.FirstError = t.Name + ": " + t.FirstError
			break
		}
	}
	return res, nil
}

func firstErr(errs []error) error {
	for _, e := range errs {
		if e != nil {
			return e
		}
	}
	return nil
}

// progressLine formats memtier's once-a-second status line.
func progressLine(label string, pct float64, el time.Duration, threads int, ops, lastOps, lat, lastLat uint64, dt time.Duration) string {
	if pct > 100 {
		pct = 100
	}
	cur, avg := 0.0, 0.0
	if dt > 0 {
		cur = float64(ops-lastOps) / dt.Seconds()
	}
	if el > 0 {
		avg = float64(ops) / el.Seconds()
	}
	curLat, avgLat := 0.0, 0.0
	if ops > lastOps {
		curLat = float64(lat-lastLat) / float64(ops-lastOps) / 1e6
	}
	if ops > 0 {
		avgLat = float64(lat) / float64(ops) / 1e6
	}
	return fmt.Sprintf("[%s %3.0f%%, %3d secs] %d threads: %11d ops, %8.0f (avg: %8.0f) ops/sec, %.2f (avg: %.2f) msec latency",
		label, pct, int(el.Seconds()), threads, ops, cur, avg, curLat, avgLat)
}

// loop keeps up to `pipeline` requests in flight: it tops the pipeline up, writes every new
// request in one write, then handles every reply already received before writing again.
func (c *client) loop(r *run) {
	ring := make([]inflight, c.pipeline)
	wbuf := make([]byte, 0, 16<<10)
	var scratch []byte
	head, n := 0, 0
	var sent uint64
	for {
		queued := 0
		for n < c.pipeline && (c.limit == 0 || sent < c.limit) && !r.stopping.Load() {
			oi := c.cyc.next()
			before := len(wbuf)
			wbuf, scratch = c.ops[oi].tmpl.appendRequest(wbuf, scratch, c.prefix, c.keys[oi], c.data)
			ring[(head+n)%c.pipeline] = inflight{op: oi, size: len(wbuf) - before}
			n++
			sent++
			queued++
		}
		if queued > 0 {
			t := r.now()
			for i := n - queued; i < n; i++ {
				ring[(head+i)%c.pipeline].start = t
			}
			if _, err := c.conn.Write(wbuf); err != nil {
				c.fail(r, err)
				return
			}
			if cap(wbuf) > 1<<20 {
				wbuf = make([]byte, 0, 16<<10)
			}
			wbuf = wbuf[:0]
		}
		if n == 0 {
			return
		}
		for {
			kind, size, msg, err := c.rr.read()
			if err != nil {
				c.fail(r, err)
				return
			}
			lat := r.now() - ring[head].start
			if lat < 0 {
				lat = 0
			}
			f := ring[head]
			head = (head + 1) % c.pipeline
			n--
			st := c.stats[c.opType[f.op]]
			st.Ops++
			st.Hist.Record(uint64(lat))
			st.BytesTx += uint64(f.size)
			st.BytesRx += uint64(size)
			switch {
			case kind == replyNil && st.CountHits:
				st.Misses++
			case kind == replyValue && st.CountHits:
				st.Hits++
			case kind == replyError:
				st.Errors++
				if st.FirstError == "" {
					st.FirstError = msg
				}
			}
			c.liveOps.Add(1)
			c.liveLat.Add(uint64(lat))
			if n == 0 || c.rr.buffered() == 0 {
				break
			}
		}
	}
}

// fail records a connection failure, unless it is the read deadline of a stopping run.
func (c *client) fail(r *run, err error) {
	if r.stopping.Load() && errors.Is(err, os.ErrDeadlineExceeded) {
		return
	}
	msg := err.Error()
	// "read tcp 127.0.0.1:1234->127.0.0.1:6379: ..." differs per connection; keep the cause.
	if i := strings.LastIndex(msg, ": "); i >= 0 && strings.Contains(msg[:i], "->") {
		msg = msg[i+2:]
	}
	c.err = errors.New(msg)
}

// sortedConnErrors lists connection errors as "N clients: message", sorted.
func sortedConnErrors(m map[string]int) []string {
	var out []string
	for k, v := range m {
		out = append(out, fmt.Sprintf("%d clients: %s", v, k))
	}
	sort.Strings(out)
	return out
}
