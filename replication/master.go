package replication

import (
	"encoding/binary"
	"errors"
	"io"
	"log"
	"net"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"shardis/binlog"
	"shardis/server"
	"shardis/shard"
)

// feed is one replica as its master serves it: what REPLCONF told of it, then, after PSYNC, the
// goroutine sending it the snapshot and the binlog.
type feed struct {
	r  *Replication
	cl *server.Client
	// From REPLCONF, before PSYNC.
	port      int
	ip        string   // REPLCONF ip-address (replica-announce-ip), "" for the connection's
	shardis   bool     // REPLCONF capa shardis: a shardis replica, which takes this stream
	positions []uint64 // REPLCONF shardis-positions: the replica's last sequence per shard
	// REPLCONF shardis-shards: the replica's shard count (0: not said); when it is not this
	// server's, the replica applies the stream by key (reshard.go) from
	// shardis-master-positions, this server's positions it applied up to.
	shards          int
	masterPositions []uint64
	reshard         bool // PSYNC chose the by-key stream
	// A Redis replica's (redisfeed.go): REPLCONF capa eof, rdb-only, rdb-filter-only.
	capaEOF        bool
	rdbOnly        bool
	rdbNoData      bool
	rdbNoFunctions bool
	bytes          *byteOffsets // set by PSYNC for a Redis replica, before its goroutine starts

	started bool   // PSYNC ran (under r.mu)
	replid  string // the replication id PSYNC offered ("?": none)

	state    atomic.Value  // "wait_bgsave", "send_bulk", "online"
	acked    atomic.Value  // []uint64: the last ACK's positions
	ackedAt  atomic.Int64  // unix ms of the last ACK
	getack   chan struct{} // WAIT asks for an ACK now
	ackOnce  sync.Once
	firstAck chan struct{} // closed by the replica's first ACK
	stopped  chan struct{}
	stopOnce sync.Once
	inflight atomic.Int64  // bytes handed to the connection and not written yet
	drained  chan struct{} // a write completed
}

// maxInflight bounds what a feed hands the connection before the replica has read it: the
// rest stays in the binlog, so a slow replica costs the master no memory.
const maxInflight = 8 << 20

// stepChunk is how many records of one shard a step frame holds at most.
const stepChunk = 512

func (f *feed) stop() { f.stopOnce.Do(func() { close(f.stopped) }) }

func (f *feed) info(now time.Time) server.ReplicaInfo {
	ip, _, _ := net.SplitHostPort(f.cl.Addr)
	if f.ip != "" {
		ip = f.ip
	}
	in := server.ReplicaInfo{IP: ip, Port: f.port, State: "wait_bgsave"}
	if s, ok := f.state.Load().(string); ok {
		in.State = s
	}
	if seqs, ok := f.acked.Load().([]uint64); ok {
		in.Offset = offset(seqs)
	}
	if at := f.ackedAt.Load(); at > 0 {
		in.Lag = max(0, (now.UnixMilli()-at)/1000)
	}
	return in
}

// feedOf returns cl's feed, made on its first REPLCONF.
func (r *Replication) feedOf(cl *server.Client) *feed {
	r.mu.Lock()
	defer r.mu.Unlock()
	f := r.replicas[cl]
	if f == nil {
		f = &feed{r: r, cl: cl, getack: make(chan struct{}, 1), stopped: make(chan struct{}), firstAck: make(chan struct{}),
			drained: make(chan struct{}, 1)}
		r.replicas[cl] = f
		if !cl.OnGone(func() { r.dropFeed(f) }) {
			delete(r.replicas, cl)
		}
	}
	return f
}

func (r *Replication) dropFeed(f *feed) {
	f.stop()
	r.mu.Lock()
	if r.replicas[f.cl] == f {
		delete(r.replicas, f.cl)
	}
	r.mu.Unlock()
	r.wakeWaits()
}

// dropReplicas disconnects every replica (the server became a replica itself).
func (r *Replication) dropReplicas() {
	r.mu.Lock()
	feeds := make([]*feed, 0, len(r.replicas))
	for _, f := range r.replicas {
		feeds = append(feeds, f)
	}
	r.mu.Unlock()
	for _, f := range feeds {
		f.stop()
		f.cl.Kill()
	}
}

// Replconf runs REPLCONF for cl: listening-port, ip-address, capa, ack, getack, and
// shardis-positions (a shardis replica's position per shard, sent before PSYNC).
func (r *Replication) Replconf(cl *server.Client, args []string) string {
	if len(args)%2 != 0 {
		return "ERR syntax error"
	}
	f := r.feedOf(cl)
	for i := 0; i < len(args); i += 2 {
		opt, val := strings.ToLower(args[i]), args[i+1]
		switch opt {
		case "listening-port":
			p, err := strconv.Atoi(val)
			if err != nil || p < 0 || p > 65535 {
				return "ERR value is not an integer or out of range"
			}
			f.port = p
		case "ip-address":
			f.ip = val
		case "capa":
			switch strings.ToLower(val) {
			case "shardis":
				f.shardis = true
			case "eof":
				f.capaEOF = true
			}
		case "shardis-positions":
			seqs, ok := parsePositions(val)
			if !ok {
				return "ERR invalid shardis-positions"
			}
			f.positions = seqs
		case "shardis-master-positions":
			seqs, ok := parsePositions(val)
			if !ok {
				return "ERR invalid shardis-master-positions"
			}
			f.masterPositions = seqs
		case "shardis-shards":
			n, err := strconv.Atoi(val)
			if err != nil || n < 1 {
				return "ERR invalid shardis-shards"
			}
			f.shards = n
		case "ack":
			// REPLCONF ACK <offset> [POS <positions>]: no reply, as in Redis. A shardis
			// replica gives its positions; a Redis replica's byte offset is read back as
			// the positions it covers.
			if i+3 < len(args) && strings.EqualFold(args[i+2], "pos") {
				if seqs, ok := parsePositions(args[i+3]); ok {
					f.acked.Store(seqs)
				}
			} else if off, err := strconv.ParseUint(val, 10, 64); err == nil {
				f.ackBytes(off)
			}
			f.ackedAt.Store(time.Now().UnixMilli())
			f.ackOnce.Do(func() { close(f.firstAck) })
			r.wakeWaits()
			return ""
		case "getack":
			return "" // a master's request; shardis replicas ACK on their own
		case "rdb-only":
			n, err := strconv.ParseInt(val, 10, 64)
			if err != nil {
				return "ERR value is not an integer or out of range"
			}
			if n < 0 || n > 1 {
				return "ERR value is out of range, must be positive"
			}
			f.rdbOnly = n == 1
		case "rdb-filter-only":
			// As Redis 7.0: "" is an empty RDB; "functions" keeps the libraries only.
			f.rdbNoData, f.rdbNoFunctions = true, true
			for _, filter := range strings.Fields(val) {
				if !strings.EqualFold(filter, "functions") {
					return "ERR Unsupported rdb-filter-only option: " + filter
				}
				f.rdbNoFunctions = false
			}
		default:
			return "ERR Unrecognized REPLCONF option: " + args[i]
		}
	}
	return "OK"
}

// parsePositions parses "seq,seq,…" (one per shard).
func parsePositions(s string) ([]uint64, bool) {
	parts := strings.Split(s, ",")
	seqs := make([]uint64, len(parts))
	for i, p := range parts {
		v, err := strconv.ParseUint(p, 10, 64)
		if err != nil {
			return nil, false
		}
		seqs[i] = v
	}
	return seqs, true
}

// formatPositions is parsePositions's inverse.
func formatPositions(seqs []uint64) string {
	var b []byte
	for i, s := range seqs {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendUint(b, s, 10)
	}
	return string(b)
}

// Psync serves PSYNC for replica cl: a partial sync when the replica's history is this
// server's (its replication id, or the one before a failover up to where it ended) and the
// binlog still holds every record after its position, else a full sync. The reply line and the
// stream go to cl from the feed's goroutine.
func (r *Replication) Psync(cl *server.Client, req server.PsyncRequest) string {
	replid, failover := req.ReplID, req.Failover
	if failover {
		// The master this server replicates hands over (its FAILOVER): take over first.
		r.mu.Lock()
		replica := r.link != nil
		r.mu.Unlock()
		if !replica {
			return "ERR PSYNC FAILOVER can't be sent to a master."
		}
		if replid != r.srv.ReplID() {
			return "ERR PSYNC FAILOVER replid must match my replid."
		}
		if r.resharded.Load() {
			return errReshardedNoFailover
		}
		log.Printf("Failover request received for replid %s.", replid)
		if err := r.ReplicaOf("", 0); err != nil {
			return "ERR " + err.Error()
		}
	}
	if r.failoverStateName() != failoverNone {
		return "NOMASTERLINK Can't SYNC while failing over"
	}
	if r.resharded.Load() {
		return errReshardedNoReplicas
	}
	f := r.feedOf(cl)
	if !f.shardis {
		return r.psyncRedis(f, req)
	}
	n := r.store.NumShards()
	if f.shards != 0 && f.shards != n {
		return r.psyncReshard(f, req)
	}
	if f.positions != nil && len(f.positions) != n {
		return "ERR the replica has " + strconv.Itoa(len(f.positions)) + " shards and this master " +
			strconv.Itoa(n) + ": start the replica with --shards " + strconv.Itoa(n)
	}
	r.mu.Lock()
	if !f.claim(replid) {
		r.mu.Unlock()
		return errPsyncTwice
	}
	partial := f.positions != nil && r.canContinue(replid, f.positions)
	r.mu.Unlock()
	f.state.Store("wait_bgsave")
	go f.run(partial)
	return ""
}

// errPsyncTwice answers a second PSYNC (or SYNC) on a connection that already has a feed.
const errPsyncTwice = "ERR PSYNC already ran on this connection"

// claim makes f the feed of a PSYNC naming history replid, and reports false when one ran on
// its connection already. r.mu is held.
func (f *feed) claim(replid string) bool {
	if f.started {
		return false
	}
	f.started, f.replid = true, replid
	return true
}

// syncFailed ends a feed whose full sync failed: a stopped feed's connection is gone already.
func (f *feed) syncFailed(err error) {
	if !errors.Is(err, errStopped) {
		log.Printf("Replica %s: full sync failed: %v", f.cl.Addr, err)
		f.cl.Kill()
	}
}

// canContinue reports whether a replica at positions of history replid can continue with a
// partial sync. r.mu is held.
func (r *Replication) canContinue(replid string, positions []uint64) bool {
	switch {
	case replid == r.srv.ReplID():
	case replid == r.replid2 && r.second != nil:
		for i, p := range positions {
			if p > r.second[i] {
				return false // the replica saw records the old master logged after the failover point
			}
		}
	default:
		return false
	}
	for i, p := range positions {
		first, last := r.store.Shard(i).BinlogRange()
		if p > last {
			return false
		}
		if p < last && (first == 0 || p+1 < first) {
			return false // the records after p were trimmed
		}
	}
	return true
}

// run sends the replica its stream until the connection or the feed stops.
func (f *feed) run(partial bool) {
	defer f.r.dropFeed(f)
	store := f.r.store
	var after []uint64
	if partial {
		after = slices.Clone(f.positions)
		if err := f.send([]byte("+CONTINUE " + f.r.srv.ReplID() + "\r\n")); err != nil {
			return
		}
		f.r.statPartial(true)
	} else {
		if f.replid != "?" {
			f.r.statPartial(false) // as Redis: a replica that asked for a full sync is no failed partial one
		}
		f.r.srv.Stats.SyncFull.Add(1)
		sn, err := store.Snapshot()
		if err != nil {
			log.Printf("Replica %s: cannot take a snapshot for a full sync: %v", f.cl.Addr, err)
			f.cl.Kill()
			return
		}
		after = sn.Seqs()
		f.acked.Store(slices.Clone(after)) // the binlog after the snapshot stays for it
		line := "+FULLRESYNC " + f.r.srv.ReplID() + " " + strconv.FormatUint(offset(after), 10) + "\r\n"
		f.state.Store("send_bulk")
		err = f.send([]byte(line))
		if err == nil && f.reshard {
			err = f.sendReshardSnapshot(sn)
		} else if err == nil {
			err = f.sendSnapshot(sn)
		}
		sn.Close()
		if err != nil {
			f.syncFailed(err)
			return
		}
		log.Printf("Synchronization with replica %s succeeded", f.cl.Addr)
	}
	f.state.Store("online")
	f.acked.Store(slices.Clone(after))
	f.ackedAt.Store(time.Now().UnixMilli())
	f.stream(after)
}

// pin is what retention must keep of shard id's binlog: the records after the oldest
// position a connected replica acknowledged (shard.Store.SetBinlogPin).
func (r *Replication) pin(id int) (uint64, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	var oldest uint64
	found := false
	for _, f := range r.replicas {
		seqs, ok := f.acked.Load().([]uint64)
		if !ok || id >= len(seqs) {
			continue
		}
		if !found || seqs[id] < oldest {
			oldest, found = seqs[id], true
		}
	}
	return oldest, found
}

// errStopped: the feed was stopped (the connection closed, or the server became a replica).
var errStopped = errors.New("replication: feed stopped")

// send hands p to the connection once fewer than maxInflight bytes wait there: handed over
// and not written yet, or written to gnet's buffer for the socket and not sent (a replica
// that reads slowly). Until then the rest waits where it is (RocksDB, the binlog).
func (f *feed) send(p []byte) error {
	for f.waiting() > maxInflight {
		select {
		case <-f.drained:
		case <-f.stopped:
			return errStopped
		case <-time.After(10 * time.Millisecond):
			// gnet's buffer shrinks as the socket takes it, unseen: an empty write makes the
			// connection publish its size again.
			if f.inflight.Load() == 0 {
				if err := f.cl.Send(nil, f.written(0)); err != nil {
					return err
				}
			}
			if f.state.Load() == "online" && f.timedOut() {
				return errStopped
			}
		}
	}
	n := int64(len(p))
	f.inflight.Add(n)
	if err := f.cl.Send(p, f.written(n)); err != nil {
		f.inflight.Add(-n)
		return err
	}
	select {
	case <-f.stopped:
		return errStopped
	default:
		return nil
	}
}

// waiting returns the bytes sent to the replica that its socket has not taken yet.
func (f *feed) waiting() int64 {
	var out int
	if f.cl.Buffers != nil {
		_, out = f.cl.Buffers()
	}
	return f.inflight.Load() + int64(out)
}

// written returns the callback of a Send of n bytes.
func (f *feed) written(n int64) func() {
	return func() {
		f.inflight.Add(-n)
		select {
		case f.drained <- struct{}{}:
		default:
		}
	}
}

// snapshotChunk is how much of a shard's snapshot one frame carries.
const snapshotChunk = 1 << 20

// sendSnapshot sends every shard's keys in sn: up to min(shards, CPUs/2) shards are read at
// once (one at least; the other half of the cores stays with the clients), each by a
// goroutine of its own, their frames of about snapshotChunk bytes interleaved
// on the connection; a shard's E frame follows its last K frame, and F follows every shard's.
// The readers hand their frames to this goroutine through a queue of one frame per reader,
// so what waits in memory stays bounded (the rest waits in RocksDB), and it paces them to
// repl-fullsync-max-rate.
func (f *feed) sendSnapshot(sn *shard.Snapshot) error {
	n := f.r.store.NumShards()
	readers := max(1, min(n, runtime.NumCPU()/2))
	frames := make(chan []byte, readers)
	quit := make(chan struct{})
	var next atomic.Int64
	var readErr error
	var errOnce sync.Once
	var wg sync.WaitGroup
	for range readers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			emit := func(frame []byte) error {
				select {
				case frames <- frame:
					return nil
				case <-quit:
					return errStopped
				}
			}
			for {
				id := int(next.Add(1) - 1)
				if id >= n {
					return
				}
				if err := walkShardFrames(sn, id, f.frameSize, emit); err != nil {
					errOnce.Do(func() { readErr = err })
					return
				}
			}
		}()
	}
	go func() {
		wg.Wait()
		close(frames)
	}()
	pace := newPacer(f.r.fullSyncMaxRate)
	var err error
	for frame := range frames {
		if err != nil {
			continue // drain what the readers queued before they saw quit
		}
		if err = pace.wait(len(frame), f.stopped); err == nil {
			err = f.send(frame)
		}
		if err != nil {
			close(quit)
		}
	}
	if err != nil {
		return err
	}
	if readErr != nil {
		return readErr
	}
	return f.send(appendFrameHead(nil, frameSyncDone, 0))
}

// frameSize returns how big the next K frame may grow: snapshotChunk, or half a second's
// worth of repl-fullsync-max-rate when that is less (16 KB at least), so that a slow rate
// still sends the replica something well within its repl-timeout.
func (f *feed) frameSize() int {
	if rate := f.r.fullSyncMaxRate(); rate > 0 {
		return int(max(16<<10, min(snapshotChunk, rate/2)))
	}
	return snapshotChunk
}

// walkShardFrames hands emit shard id's keys in sn as K frames of about size() bytes, then
// its E frame.
func walkShardFrames(sn *shard.Snapshot, id int, size func() int, emit func([]byte) error) error {
	var body []byte
	limit := size()
	flush := func() error {
		if len(body) == 0 {
			return nil
		}
		frame := appendFrameHead(make([]byte, 0, len(body)+12), frameKeys, len(body))
		frame = append(frame, body...)
		body = body[:0]
		limit = size()
		return emit(frame)
	}
	err := sn.Walk(id, func(k, v []byte) error {
		if len(body) == 0 {
			if cap(body) < snapshotChunk {
				body = make([]byte, 0, snapshotChunk+len(k)+len(v)+32)
			}
			body = binary.AppendUvarint(body, uint64(id))
		}
		body = binary.AppendUvarint(body, uint64(len(k)))
		body = append(body, k...)
		body = binary.AppendUvarint(body, uint64(len(v)))
		body = append(body, v...)
		if len(body) >= limit {
			return flush()
		}
		return nil
	})
	if err == nil {
		err = flush()
	}
	if err != nil {
		return err
	}
	done := binary.AppendUvarint(nil, uint64(id))
	done = binary.AppendUvarint(done, sn.Seq(id))
	return emit(append(appendFrameHead(nil, frameShardDone, len(done)), done...))
}

// fullSyncMaxRate returns repl-fullsync-max-rate: the bytes per second a full sync sends at
// most (0: no limit).
func (r *Replication) fullSyncMaxRate() int64 {
	return r.srv.Config.FullSyncMaxRate()
}

// pacer spaces a stream's writes so that it sends at most rate() bytes a second; a rate that
// changes (CONFIG SET) applies from the next write.
type pacer struct {
	rate  func() int64
	cur   int64     // the rate the current run is paced at
	start time.Time // when the current run began
	sent  int64     // bytes sent in the current run
}

func newPacer(rate func() int64) *pacer { return &pacer{rate: rate} }

// wait returns once n more bytes may go, or errStopped if stop closes first.
func (p *pacer) wait(n int, stop <-chan struct{}) error {
	rate := p.rate()
	if rate <= 0 {
		p.cur = 0
		return nil
	}
	now := time.Now()
	if rate != p.cur {
		p.cur, p.start, p.sent = rate, now, 0
	}
	// The bytes sent so far may go by start + sent/rate: wait for that moment.
	due := p.start.Add(time.Duration(float64(p.sent) / float64(rate) * float64(time.Second)))
	if now.Sub(due) > time.Second {
		// The stream fell behind the rate (a slow replica): what it did not use is not saved
		// up for a burst later.
		p.start, p.sent, due = now, 0, now
	}
	p.sent += int64(n)
	if d := due.Sub(now); d > 0 && !sleepUnless(d, stop) {
		return errStopped
	}
	return nil
}

// sleepUnless sleeps for d and reports true, or false as soon as stop closes.
func sleepUnless(d time.Duration, stop <-chan struct{}) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-stop:
		return false
	}
}

// stream sends the binlog after positions after, step by step as the master commits, and a
// ping every repl-ping-replica-period (at once when WAIT asks for ACKs).
func (f *feed) stream(after []uint64) {
	var enc stepEncoder
	f.streamSteps(after, func(step binlog.Step) error {
		frame, err := enc.appendStep(nil, step) // a new frame: the connection owns it until sent
		if err == nil {
			err = f.send(frame)
		}
		return err
	}, f.sendPing)
}

// streamSteps reads the binlog after positions after and hands each step to sendStep as the
// master commits, and calls ping every repl-ping-replica-period while idle (ask: at once,
// for WAIT's ACKs), until the connection or the feed stops, or a send fails.
func (f *feed) streamSteps(after []uint64, sendStep func(binlog.Step) error, ping func(ask bool) error) {
	store := f.r.store
	a := binlog.NewAssemblerAfter(store, stepChunk, after)
	period := time.Duration(max(1, f.r.pingPeriod())) * time.Second
	pings := time.NewTicker(period)
	defer pings.Stop()
	check := time.NewTicker(time.Second)
	defer check.Stop()
	for {
		changed := store.LogChanged()
		step, err := a.Next()
		if errors.Is(err, io.EOF) {
			var ask bool
			select {
			case <-changed:
				continue
			case <-check.C:
				if f.timedOut() {
					return
				}
				continue
			case <-pings.C:
			case <-f.getack:
				ask = true
			case <-f.stopped:
				return
			}
			if ping(ask) != nil {
				return
			}
			continue
		}
		if err != nil {
			log.Printf("Replica %s: cannot read the binlog: %v", f.cl.Addr, err)
			f.cl.Kill()
			return
		}
		if sendStep(step) != nil || f.timedOut() {
			return
		}
	}
}

// timedOut drops a replica that has not acknowledged anything for repl-timeout seconds (a
// partition, a dead host): as Redis, the master closes the connection, and the replica, once
// it can, connects again and continues with a partial sync.
func (f *feed) timedOut() bool {
	limit, _ := strconv.ParseInt(f.r.srv.Config.Value("repl-timeout"), 10, 64)
	if limit <= 0 || time.Now().UnixMilli()-f.ackedAt.Load() <= limit*1000 {
		return false
	}
	log.Printf("Disconnecting timedout replica (streaming sync): %s", f.cl.Addr)
	f.cl.Kill()
	return true
}

func (f *feed) sendPing(ask bool) error {
	body := binary.AppendUvarint(nil, offset(f.r.store.LastSeqs()))
	flag := byte(0)
	if ask {
		flag = 1
	}
	body = append(body, flag)
	return f.send(append(appendFrameHead(nil, framePing, len(body)), body...))
}

func (r *Replication) pingPeriod() int {
	n, _ := strconv.Atoi(r.srv.Config.Value("repl-ping-replica-period"))
	return n
}

func (r *Replication) statPartial(ok bool) {
	if ok {
		r.srv.Stats.SyncPartialOK.Add(1)
	} else {
		r.srv.Stats.SyncPartialErr.Add(1)
	}
}

// ---- WAIT ----

// waiter is one WAIT: it needs n replicas at or past target in every shard.
type waiter struct {
	n      int
	target []uint64
	wake   chan struct{}
}

func (r *Replication) wakeWaits() {
	r.mu.Lock()
	for w := range r.waits {
		select {
		case w.wake <- struct{}{}:
		default:
		}
	}
	r.mu.Unlock()
}

// caughtUp counts the replicas whose last ACK covers target.
func (r *Replication) caughtUp(target []uint64) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, f := range r.replicas {
		seqs, ok := f.acked.Load().([]uint64)
		if !ok || !f.started || len(seqs) != len(target) {
			continue
		}
		covers := true
		for i := range target {
			if seqs[i] < target[i] {
				covers = false
				break
			}
		}
		if covers {
			n++
		}
	}
	return n
}

// Wait blocks until n replicas acknowledged everything committed before the call, timeout
// passed (0: no limit) or cancel closed, and returns how many did.
func (r *Replication) Wait(n int, timeout time.Duration, cancel <-chan struct{}) int {
	target := r.store.LastSeqs()
	if got := r.caughtUp(target); got >= n || r.store.Replica() {
		return got
	}
	w := &waiter{n: n, target: target, wake: make(chan struct{}, 1)}
	r.mu.Lock()
	r.waits[w] = struct{}{}
	for _, f := range r.replicas {
		select {
		case f.getack <- struct{}{}:
		default:
		}
	}
	r.mu.Unlock()
	defer func() {
		r.mu.Lock()
		delete(r.waits, w)
		r.mu.Unlock()
	}()
	var expired <-chan time.Time
	if timeout > 0 {
		t := time.NewTimer(timeout)
		defer t.Stop()
		expired = t.C
	}
	for {
		select {
		case <-w.wake:
			if got := r.caughtUp(target); got >= n {
				return got
			}
		case <-expired:
			return r.caughtUp(target)
		case <-cancel:
			return r.caughtUp(target)
		}
	}
}
