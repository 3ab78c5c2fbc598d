package replication

import (
	"bufio"
	"errors"
	"fmt"
	"log"
	"net"
	"strconv"
	"strings"
	"sync"
	"time"

	"shardis/codec"
	"shardis/server"
	"shardis/shard"
)

// link is a replica's connection to its master: made, handshaken, synced, then fed the
// master's binlog, and made again whenever it drops, until stop.
type link struct {
	r    *Replication
	host string
	port int

	stopCh   chan struct{}
	stopOnce sync.Once
	done     chan struct{}

	mu        sync.Mutex
	conn      net.Conn
	up        bool
	syncing   bool
	lastIO    time.Time
	downSince time.Time
	writeMu   sync.Mutex // the frame loop and the ACK ticker both write to conn

	// redis is what the link knows of a Redis master's stream (redismaster.go);
	// pendingMulti counts the bytes of a MULTI not applied yet.
	redis        redisMaster
	pendingMulti uint64

	// reshard is set while the master's shard count is not this server's (reshard.go).
	reshard *reshardState

	// failover, set for the link a master's FAILOVER makes to its target, sends PSYNC …
	// FAILOVER on the first session; it is settled (done or aborted) by that session.
	failover *failoverState
}

func newLink(r *Replication, host string, port int) *link {
	return &link{r: r, host: host, port: port, stopCh: make(chan struct{}), done: make(chan struct{}),
		downSince: time.Now()}
}

// stop ends the link without waiting for its goroutine (done is closed when it returned): a
// step it applies after stop applies nothing.
func (l *link) stop() {
	l.stopOnce.Do(func() { close(l.stopCh) })
	l.mu.Lock()
	if l.conn != nil {
		_ = l.conn.Close()
	}
	l.mu.Unlock()
}

func (l *link) stopped() bool {
	select {
	case <-l.stopCh:
		return true
	default:
		return false
	}
}

func (l *link) describe(in *server.ReplInfo, now time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	in.MasterHost, in.MasterPort = l.host, l.port
	if l.redis.active.Load() {
		in.RedisMasterOffset = int64(l.redis.offset.Load())
	} else if l.reshard != nil {
		in.RedisMasterOffset = int64(offset(l.reshard.seqs)) // the master's offset, too
	}
	in.LinkUp, in.SyncInProgress = l.up, l.syncing
	in.LastIOSecs, in.LinkDownSecs = -1, -1
	if !l.lastIO.IsZero() {
		in.LastIOSecs = int64(now.Sub(l.lastIO) / time.Second)
	}
	if !l.up {
		in.LinkDownSecs = int64(now.Sub(l.downSince) / time.Second)
	}
}

// run keeps the link up until stop: a session, and after it ends a pause and another.
func (l *link) run() {
	defer close(l.done)
	l.setMasterDown()
	// A replica applying by key knows its master's positions from its data: INFO and ROLE
	// show them (sentinel chooses whom to promote by them) before the first handshake.
	if seqs, err := l.r.masterPositions(); err == nil && seqs != nil {
		l.setReshard(seqs)
	}
	for !l.stopped() {
		err := l.session()
		if fo := l.failover; fo != nil {
			l.failover = nil
			if err != nil { // the target refused or could not be reached: stay master
				go l.r.abortFailover(fo, err.Error())
				return
			}
		}
		l.mu.Lock()
		if l.up {
			l.downSince = time.Now()
		}
		l.up, l.syncing = false, false
		l.conn = nil
		l.mu.Unlock()
		if l.stopped() {
			return
		}
		l.setMasterDown()
		log.Printf("Connection with master %s:%d lost or refused: %v", l.host, l.port, err)
		select {
		case <-l.stopCh:
			return
		case <-time.After(time.Second):
		}
	}
}

// setMasterDown refuses what replica-serve-stale-data no refuses while the link is down.
func (l *link) setMasterDown() {
	l.r.srv.SetMasterDown(l.r.srv.Config.Value("replica-serve-stale-data") == "no")
}

func (l *link) timeout() time.Duration {
	n, _ := strconv.Atoi(l.r.srv.Config.Value("repl-timeout"))
	return time.Duration(max(n, 1)) * time.Second
}

// session connects, handshakes, syncs and applies the master's stream until an error.
func (l *link) session() error {
	addr := net.JoinHostPort(l.host, strconv.Itoa(l.port))
	conn, err := net.DialTimeout("tcp", addr, l.timeout())
	if err != nil {
		return err
	}
	l.mu.Lock()
	if l.stopped() {
		l.mu.Unlock()
		_ = conn.Close()
		return errors.New("stopped")
	}
	l.conn = conn
	l.mu.Unlock()
	defer conn.Close()
	br := bufio.NewReaderSize(conn, 1<<20)
	call := func(args ...string) (string, error) {
		_ = conn.SetDeadline(time.Now().Add(l.timeout()))
		if _, err := conn.Write(respCommand(args...)); err != nil {
			return "", err
		}
		line, err := br.ReadString('\n')
		return strings.TrimRight(line, "\r\n"), err
	}
	if reply, err := call("PING"); err != nil {
		return err
	} else if reply != "+PONG" && !strings.HasPrefix(reply, "-NOAUTH") && !strings.HasPrefix(reply, "-NOPERM") {
		return fmt.Errorf("master answered PING with %q", reply)
	}
	cfg := l.r.srv.Config
	if pass := cfg.Value("masterauth"); pass != "" {
		args := []string{"AUTH", pass}
		if user := cfg.Value("masteruser"); user != "" {
			args = []string{"AUTH", user, pass}
		}
		if reply, err := call(args...); err != nil {
			return err
		} else if reply != "+OK" {
			return fmt.Errorf("master refused AUTH: %s", reply)
		}
	}
	posConf, posOffset, err := l.reshardHandshake()
	if err != nil {
		return err
	}
	port := cfg.Port()
	if p, _ := strconv.Atoi(cfg.Value("replica-announce-port")); p != 0 {
		port = p
	}
	if ip := cfg.Value("replica-announce-ip"); ip != "" {
		if reply, err := call("REPLCONF", "ip-address", ip); err != nil {
			return err
		} else if reply != "+OK" {
			return fmt.Errorf("master answered ip-address with %q", reply)
		}
	}
	for _, args := range append([][]string{
		{"REPLCONF", "listening-port", strconv.Itoa(port)},
		{"REPLCONF", "capa", "eof", "capa", "psync2", "capa", "shardis"},
	}, posConf...) {
		if reply, err := call(args...); err != nil {
			return err
		} else if strings.HasPrefix(args[1], "shardis-") && strings.HasPrefix(reply, "-ERR Unrecognized REPLCONF option") {
			l.setReshard(nil)
			if l.failover != nil {
				return errors.New("the failover target is a redis-server")
			}
			return l.redisSession(conn, br, call)
		} else if reply != "+OK" {
			return fmt.Errorf("master answered %s with %q", args[1], reply)
		}
	}
	// A server with no history (nothing logged ever) asks for a full sync outright, as a
	// Redis without a cached master does; any other offers its history to continue.
	replid, off := l.r.srv.ReplID(), strconv.FormatUint(posOffset+1, 10)
	if posOffset == 0 {
		replid, off = "?", "-1"
	}
	args := []string{"PSYNC", replid, off}
	if l.failover != nil {
		args = []string{"PSYNC", l.r.srv.ReplID(), strconv.FormatUint(posOffset+1, 10), "FAILOVER"}
	}
	reply, err := call(args...)
	if err != nil {
		return err
	}
	fr := &frameReader{r: br}
	switch {
	case strings.HasPrefix(reply, "+FULLRESYNC "):
		fields := strings.Fields(reply)
		if len(fields) != 3 {
			return fmt.Errorf("bad FULLRESYNC line %q", reply)
		}
		if l.failover != nil {
			return fmt.Errorf("the failover target answered PSYNC FAILOVER with a full resync")
		}
		log.Printf("Full resync from master: %s:%s", fields[1], fields[2])
		if err := l.fullSync(conn, fr, fields[1]); err != nil {
			return err
		}
	case strings.HasPrefix(reply, "+CONTINUE"):
		log.Printf("Successful partial resynchronization with master.")
		if fo := l.failover; fo != nil {
			l.failover = nil
			l.r.failoverDone(fo)
		}
		if id := strings.TrimSpace(strings.TrimPrefix(reply, "+CONTINUE")); id != "" && id != l.r.srv.ReplID() {
			l.r.adoptMasterID(id) // the master changed history by a failover: we follow it
		}
	default:
		return fmt.Errorf("master refused PSYNC: %s", reply)
	}
	l.mu.Lock()
	l.up, l.lastIO = true, time.Now()
	l.mu.Unlock()
	l.r.srv.SetMasterDown(false)
	log.Printf("MASTER <-> REPLICA sync: Master accepted a Partial Resynchronization or finished a full one; link up")
	ackStop := make(chan struct{})
	defer close(ackStop)
	go l.ackEvery(conn, time.Second, ackStop, l.ack)
	if l.reshardSeqs() != nil {
		return l.applyReshard(conn, fr)
	}
	return l.apply(conn, fr)
}

// fullSync loads the master's snapshot into every shard: the data is LOADING meanwhile. The
// master interleaves its shards' frames; each shard's are loaded by a goroutine of its own
// (shardLoader), so shards load in parallel.
func (l *link) fullSync(conn net.Conn, fr *frameReader, replid string) error {
	r := l.r
	l.mu.Lock()
	l.syncing = true
	l.mu.Unlock()
	r.dropReplicas() // their history is replaced: they sync again, from the new one
	r.srv.BeginSyncLoad()
	defer r.srv.EndSyncLoad()
	loader, err := r.store.StartLoad()
	if err != nil {
		return err
	}
	n := r.store.NumShards()
	loaders := newShardLoaders(loader, n)
	fail := func(err error) error {
		loaders.stop()
		loader.Abort()
		l.forgetHistory()
		return err
	}
	for {
		_ = conn.SetReadDeadline(time.Now().Add(l.timeout()))
		kind, payload, err := fr.next()
		if err != nil {
			return fail(err)
		}
		if err := loaders.failed(); err != nil {
			return fail(err)
		}
		d := decoder{b: payload}
		switch kind {
		case frameRDB: // the master's shard count is not ours: its snapshot comes by key
			if err := loaders.stop(); err != nil {
				return fail(err)
			}
			return l.reshardFullSync(conn, fr, payload, replid, loader)
		case frameKeys, frameShardDone:
			id := d.uvarint()
			if d.err == nil && id >= uint64(n) {
				d.err = errBadFrame
			}
			if d.err == nil {
				// The frame reader reuses its buffer: the shard's goroutine gets a copy.
				loaders.send(int(id), shardFrame{kind: kind, body: append([]byte(nil), d.b...)})
			}
		case frameSyncDone:
			if err := loaders.stop(); err != nil {
				return fail(err)
			}
			l.setReshard(nil)
			return l.finishFullSync(loader, replid)
		default:
			d.err = fmt.Errorf("%w: kind %q during a full sync", errBadFrame, kind)
		}
		if d.err != nil {
			return fail(d.err)
		}
	}
}

// shardFrame is a K or E frame's payload after its shard id.
type shardFrame struct {
	kind byte
	body []byte
}

// shardLoaders loads a full sync's frames, a goroutine per shard, each in its shard's own
// batch of the Loader. A shard's queue holds at most loadQueue frames (about 1 MB each), so
// what waits in memory stays bounded whatever the master sends.
type shardLoaders struct {
	queues  []chan shardFrame
	wg      sync.WaitGroup
	errOnce sync.Once
	err     error
	errSet  chan struct{}
	once    sync.Once
}

const loadQueue = 2

func newShardLoaders(loader *shard.Loader, n int) *shardLoaders {
	sl := &shardLoaders{queues: make([]chan shardFrame, n), errSet: make(chan struct{})}
	for id := range sl.queues {
		q := make(chan shardFrame, loadQueue)
		sl.queues[id] = q
		sl.wg.Add(1)
		go func() {
			defer sl.wg.Done()
			for f := range q {
				if sl.failed() != nil {
					continue // drain: the load is abandoned
				}
				if err := loadShardFrame(loader, id, f); err != nil {
					sl.fail(err)
				}
			}
		}()
	}
	return sl
}

// loadShardFrame writes one frame of shard id into loader.
func loadShardFrame(loader *shard.Loader, id int, f shardFrame) error {
	d := decoder{b: f.body}
	if f.kind == frameShardDone {
		seq := d.uvarint()
		if !d.done() {
			return errBadFrame
		}
		return loader.FinishShard(id, seq)
	}
	for d.err == nil && len(d.b) > 0 {
		k := d.bytes()
		v := d.bytes()
		if d.err == nil {
			d.err = loader.Put(id, k, v)
		}
	}
	return d.err
}

func (sl *shardLoaders) fail(err error) {
	sl.errOnce.Do(func() {
		sl.err = err
		close(sl.errSet)
	})
}

// failed returns the first error a shard's goroutine met, if any yet.
func (sl *shardLoaders) failed() error {
	select {
	case <-sl.errSet:
		return sl.err
	default:
		return nil
	}
}

// send queues f to shard id's goroutine, waiting while its queue is full (unless a shard
// failed: the load is abandoned then).
func (sl *shardLoaders) send(id int, f shardFrame) {
	select {
	case sl.queues[id] <- f:
	case <-sl.errSet:
	}
}

// stop waits until every queued frame is loaded and the goroutines returned, and returns the
// first error. It is idempotent.
func (sl *shardLoaders) stop() error {
	sl.once.Do(func() {
		for _, q := range sl.queues {
			close(q)
		}
		sl.wg.Wait()
	})
	return sl.failed()
}

// finishFullSync ends a full sync whose data is all in loader: the server takes the master's
// replication id as its own, with no older history, and what keeps state about the data
// reads it again.
func (l *link) finishFullSync(loader *shard.Loader, replid string) error {
	r := l.r
	if err := loader.Finish(); err != nil {
		l.forgetHistory()
		return err
	}
	if l.stopped() {
		return errors.New("the link stopped")
	}
	r.srv.SetReplID(replid)
	r.mu.Lock()
	r.replid2, r.second = "", nil
	r.mu.Unlock()
	if err := r.persist(); err != nil {
		return err
	}
	r.exec.DataReplaced()
	l.mu.Lock()
	l.syncing = false
	l.mu.Unlock()
	log.Printf("MASTER <-> REPLICA sync: Finished with success")
	return nil
}

// forgetHistory gives the server a new replication id after a full sync failed half way: half
// a snapshot is no history, so the next PSYNC asks for a full sync. A link already stopped
// leaves the id alone (the server may have been promoted meanwhile).
func (l *link) forgetHistory() {
	if !l.stopped() {
		l.r.srv.ChangeReplID()
	}
}

// adoptMasterID takes the master's new replication id after it changed history (a failover
// that promoted it): this replica's history is its history.
func (r *Replication) adoptMasterID(id string) {
	r.mu.Lock()
	r.replid2 = r.srv.ReplID()
	r.second = r.store.LastSeqs()
	r.mu.Unlock()
	r.srv.SetReplID(id)
	if err := r.persist(); err != nil {
		log.Printf("%v", err)
	}
}

// Steps of one shard are queued to their shard without waiting for the commit, so shards
// apply in parallel and a shard commits many steps at once; these bound what is queued and not
// committed yet.
const (
	maxQueuedSteps = 256
	maxQueuedBytes = 64 << 20
)

// applier queues a link's steps and collects their commits.
type applier struct {
	results chan error
	sizes   chan int // the payload size of each queued step, in queue order
	steps   int
	bytes   int
	failed  error
}

func newApplier() *applier {
	return &applier{results: make(chan error, maxQueuedSteps), sizes: make(chan int, maxQueuedSteps)}
}

// collect takes one commit's result, waiting for it.
func (a *applier) collect() {
	err := <-a.results
	a.steps--
	a.bytes -= <-a.sizes
	if err != nil && a.failed == nil {
		a.failed = err
	}
}

// poll takes the results that are in without waiting.
func (a *applier) poll() {
	for a.steps > 0 {
		select {
		case err := <-a.results:
			a.steps--
			a.bytes -= <-a.sizes
			if err != nil && a.failed == nil {
				a.failed = err
			}
		default:
			return
		}
	}
}

// drain waits for every queued step and returns the first failure.
func (a *applier) drain() error {
	for a.steps > 0 {
		a.collect()
	}
	return a.failed
}

// apply reads the master's frames and applies each step, until an error. It returns once
// every step it queued committed or failed, so the next session's positions are final.
func (l *link) apply(conn net.Conn, fr *frameReader) error {
	n := l.r.store.NumShards()
	ap := newApplier()
	err := l.applyFrames(conn, fr, n, ap)
	if derr := ap.drain(); err == nil {
		err = derr
	}
	return err
}

// heard records that the master was just heard from (INFO's master_last_io_seconds_ago).
func (l *link) heard() {
	l.mu.Lock()
	l.lastIO = time.Now()
	l.mu.Unlock()
}

// nextFrame reads the master's next frame, waiting at most the link's timeout, and records
// that the master was heard from when one came.
func (l *link) nextFrame(conn net.Conn, fr *frameReader) (kind byte, payload []byte, err error) {
	_ = conn.SetReadDeadline(time.Now().Add(l.timeout()))
	if kind, payload, err = fr.next(); err == nil {
		l.heard()
	}
	return kind, payload, err
}

func (l *link) applyFrames(conn net.Conn, fr *frameReader, n int, ap *applier) error {
	for {
		ap.poll()
		if ap.failed != nil {
			return ap.failed
		}
		kind, payload, err := l.nextFrame(conn, fr)
		if err != nil {
			return err
		}
		switch kind {
		case frameStep:
			if len(payload) > maxQueuedBytes {
				// One step alone fills the queue: apply it when the queue is empty.
				if err := ap.drain(); err != nil {
					return err
				}
			}
			// The frame reader reuses its buffer; a queued step keeps its own bytes.
			own := append([]byte(nil), payload...)
			step, raw, err := decodeStep(own, n)
			if err != nil {
				return err
			}
			if len(step.Parts) != 1 {
				// A unit holds its shards, which orders it after the steps queued there.
				if err := l.r.exec.ApplyMirrored(step, raw, l.stopped); err != nil {
					return err
				}
				continue
			}
			for ap.steps >= maxQueuedSteps || (ap.steps > 0 && ap.bytes+len(own) > maxQueuedBytes) {
				ap.collect()
			}
			ap.steps++
			ap.bytes += len(own)
			ap.sizes <- len(own)
			results := ap.results
			l.r.exec.PostMirrored(step, raw, l.stopped, func(err error) { results <- err })
		case framePing:
			d := decoder{b: payload}
			d.uvarint()
			if len(d.b) == 1 && d.b[0] == 1 {
				// WAIT asked: the ACK tells what is committed, so the queue goes first.
				if err := ap.drain(); err != nil {
					return err
				}
				if err := l.ack(conn); err != nil {
					return err
				}
			}
		default:
			return fmt.Errorf("%w: kind %q", errBadFrame, kind)
		}
	}
}

// ack tells the master what the replica applied: REPLCONF ACK <offset> POS <positions>.
func (l *link) ack(conn net.Conn) error {
	seqs := l.reshardSeqs() // a master with another shard count: its positions
	if seqs == nil {
		seqs = l.r.store.LastSeqs()
	}
	msg := respCommand("REPLCONF", "ACK", strconv.FormatUint(offset(seqs), 10), "POS", formatPositions(seqs))
	l.writeMu.Lock()
	defer l.writeMu.Unlock()
	_ = conn.SetWriteDeadline(time.Now().Add(l.timeout()))
	_, err := conn.Write(msg)
	return err
}

// ackEvery sends ack every interval until stop closes or a send fails.
func (l *link) ackEvery(conn net.Conn, every time.Duration, stop <-chan struct{}, ack func(net.Conn) error) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
			if ack(conn) != nil {
				return
			}
		}
	}
}

// respCommand encodes args as a RESP command.
func respCommand(args ...string) []byte {
	var w codec.Writer
	w.ArrayLen(len(args))
	for _, a := range args {
		w.BulkString(a)
	}
	return w.Buf
}
