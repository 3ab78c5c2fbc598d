package replication

import (
	"bufio"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"log"
	"os"
	"slices"
	"strconv"
	"sync"
	"time"

	"shardis/binlog"
	"shardis/codec"
	"shardis/server"
	"shardis/shard"
)

// A replica that is not a shardis (a redis-server, `redis-cli --replica`, or `redis-cli --rdb`
// with REPLCONF rdb-only) gets what a Redis master sends: +FULLRESYNC (not for SYNC), an RDB
// of a snapshot of every shard, then the binlog after the snapshot as the commands Redis
// propagates: SELECT before the first command of another database, MULTI … EXEC around a
// unit, PING every repl-ping-replica-period and REPLCONF GETACK * when WAIT asks.
//
// Such a replica counts its offset in bytes of the stream, where this server's offset counts
// binlog records. The feed starts the replica at the snapshot's offset, as it does a shardis
// replica, and remembers, every so often, which byte offset ended at which binlog positions:
// an ACK of bytes is read back as the positions it covers, so WAIT, INFO's replica list,
// min-replicas and the binlog's retention treat both kinds of replica alike.
//
// Every sync of such a replica is a full one: its byte offset names no binlog position after a
// reconnection (docs/REPLICATION.md).

// RDBFormat is Redis's RDB format over the store: package rdbstore by default (rdbformat.go);
// SetRDBFormat replaces it.
type RDBFormat interface {
	// WriteRDB writes the snapshot as an RDB file whose aux fields carry the replication id
	// and offset; noData leaves out the keys and noFunctions the function libraries
	// (REPLCONF rdb-filter-only).
	WriteRDB(w io.Writer, sn *shard.Snapshot, opts RDBWriteOptions) error
	// LoadRDB loads an RDB read from r (it reads no byte past the file's end), keys and
	// function libraries, into the store through l's transaction (shard.Loader.Tx),
	// committing as it goes.
	LoadRDB(r *bufio.Reader, l *shard.Loader) error
}

// RDBWriteOptions is what a feed asks of an RDB.
type RDBWriteOptions struct {
	ReplID      string
	Offset      uint64
	NoData      bool
	NoFunctions bool
}

// SetRDBFormat gives replication Redis's RDB format; without it a Redis replica is refused.
func (r *Replication) SetRDBFormat(f RDBFormat) {
	r.mu.Lock()
	r.rdb = f
	r.mu.Unlock()
}

func (r *Replication) rdbFormat() RDBFormat {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.rdb
}

// offsetMark is where in a Redis replica's byte stream the binlog stood at seqs.
type offsetMark struct {
	bytes uint64
	seqs  []uint64
}

// maxOffsetMarks bounds the marks a feed keeps while its replica does not ACK: the oldest
// half goes when it is reached (an ACK older than every mark then moves nothing).
const maxOffsetMarks = 4096

// byteOffsets is a Redis replica's offset bookkeeping.
type byteOffsets struct {
	mu    sync.Mutex
	sent  uint64 // the byte offset after everything handed to the connection
	marks []offsetMark
}

func (b *byteOffsets) mark(sent uint64, seqs []uint64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.sent = sent
	if n := len(b.marks); n > 0 && slices.Equal(b.marks[n-1].seqs, seqs) {
		return // a PING or a SELECT moved the bytes only
	}
	if len(b.marks) >= maxOffsetMarks {
		b.marks = append(b.marks[:0], b.marks[len(b.marks)/2:]...)
	}
	b.marks = append(b.marks, offsetMark{bytes: sent, seqs: slices.Clone(seqs)})
}

// acked returns the positions that byte offset off covers, and drops the marks before it.
func (b *byteOffsets) acked(off uint64) ([]uint64, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	i, found := slices.BinarySearchFunc(b.marks, off, func(m offsetMark, off uint64) int {
		switch {
		case m.bytes < off:
			return -1
		case m.bytes > off:
			return 1
		}
		return 0
	})
	if !found {
		i-- // the last mark at or before off
	}
	if i < 0 {
		return nil, false
	}
	seqs := b.marks[i].seqs
	b.marks = b.marks[i:]
	return seqs, true
}

// runRedis serves a Redis replica (or an RDB-only client): always a full sync. sync is the
// SYNC command, which gets the RDB with no +FULLRESYNC line.
func (f *feed) runRedis(sync bool) {
	defer f.r.dropFeed(f)
	format := f.r.rdbFormat()
	if format == nil {
		f.cl.Kill()
		return
	}
	store := f.r.store
	if f.replid != "?" && !sync {
		f.r.statPartial(false)
	}
	f.r.srv.Stats.SyncFull.Add(1)
	sn, err := store.Snapshot()
	if err != nil {
		log.Printf("Replica %s: cannot take a snapshot for a full sync: %v", f.cl.Addr, err)
		f.cl.Kill()
		return
	}
	after := sn.Seqs()
	start := offset(after)
	f.acked.Store(slices.Clone(after))
	f.bytes.mark(start, after)
	if !sync {
		err = f.send([]byte("+FULLRESYNC " + f.r.srv.ReplID() + " " + strconv.FormatUint(start, 10) + "\r\n"))
	}
	f.state.Store("send_bulk")
	if err == nil {
		opts := RDBWriteOptions{ReplID: f.r.srv.ReplID(), Offset: start, NoData: f.rdbNoData, NoFunctions: f.rdbNoFunctions}
		err = f.sendRDB(format, sn, opts)
	}
	sn.Close()
	if err != nil {
		f.syncFailed(err)
		return
	}
	if f.rdbOnly {
		// As Redis: an RDB-only client gets the file and the connection is closed after it.
		f.waitDrained()
		log.Printf("RDB-only transfer to %s succeeded", f.cl.Addr)
		f.cl.Kill()
		return
	}
	log.Printf("Synchronization with replica %s succeeded", f.cl.Addr)
	f.state.Store("online")
	f.ackedAt.Store(time.Now().UnixMilli())
	if f.capaEOF && !f.awaitFirstAck() {
		return
	}
	f.streamRedis(after, start)
}

// awaitFirstAck waits for the replica's first ACK, which a Redis replica sends once it loaded
// an RDB sent between EOF marks: it finds the RDB's end by the mark being the last bytes it
// read, so nothing may follow the mark before (a Redis master waits too). It reports false
// if the feed stopped or the replica stayed silent past repl-timeout.
func (f *feed) awaitFirstAck() bool {
	check := time.NewTicker(time.Second)
	defer check.Stop()
	for {
		select {
		case <-f.firstAck:
			return true
		case <-f.stopped:
			return false
		case <-check.C:
			if f.timedOut() {
				return false
			}
		}
	}
}

// waitDrained waits until the connection wrote everything handed to it, or the feed stopped.
func (f *feed) waitDrained() {
	for f.inflight.Load() > 0 {
		select {
		case <-f.drained:
		case <-f.stopped:
			return
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// feedWriter hands what is written to send in chunks of rdbChunk bytes; send owns each
// chunk it is given.
type feedWriter struct {
	send func([]byte) error
	buf  []byte
}

const rdbChunk = 1 << 20

func (w *feedWriter) Write(p []byte) (int, error) {
	written := len(p)
	for len(p) > 0 {
		if w.buf == nil {
			w.buf = make([]byte, 0, rdbChunk)
		}
		k := min(len(p), rdbChunk-len(w.buf))
		w.buf = append(w.buf, p[:k]...)
		p = p[k:]
		if len(w.buf) == rdbChunk {
			if err := w.flush(); err != nil {
				return 0, err
			}
		}
	}
	return written, nil
}

func (w *feedWriter) flush() error {
	if len(w.buf) == 0 {
		return nil
	}
	b := w.buf
	w.buf = nil
	return w.send(b)
}

// sendRDB sends the snapshot as an RDB: streamed between EOF marks to a replica that said
// `capa eof` (every Redis since 2.8.18 and redis-cli do), else written to a temporary file
// first, since the bulk's length comes before its bytes.
func (f *feed) sendRDB(format RDBFormat, sn *shard.Snapshot, opts RDBWriteOptions) error {
	if f.capaEOF {
		mark := eofMark()
		if err := f.send([]byte("$EOF:" + mark + "\r\n")); err != nil {
			return err
		}
		w := &feedWriter{send: f.send}
		if err := format.WriteRDB(w, sn, opts); err != nil {
			return err
		}
		if err := w.flush(); err != nil {
			return err
		}
		return f.send([]byte(mark))
	}
	dir := f.r.srv.Config.Value("dir")
	tmp, err := os.CreateTemp(dir, "temp-sync-*.rdb")
	if err != nil {
		return fmt.Errorf("a file for the RDB: %w", err)
	}
	defer os.Remove(tmp.Name())
	defer tmp.Close()
	bw := bufio.NewWriterSize(tmp, 1<<20)
	if err := format.WriteRDB(bw, sn, opts); err != nil {
		return err
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	size, err := tmp.Seek(0, io.SeekCurrent)
	if err != nil {
		return err
	}
	if _, err := tmp.Seek(0, io.SeekStart); err != nil {
		return err
	}
	if err := f.send([]byte("$" + strconv.FormatInt(size, 10) + "\r\n")); err != nil {
		return err
	}
	for {
		chunk := make([]byte, rdbChunk)
		n, err := io.ReadFull(tmp, chunk)
		if n > 0 {
			if err := f.send(chunk[:n]); err != nil {
				return err
			}
		}
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// eofMark is 40 random characters, as Redis's diskless sync delimits an RDB with.
func eofMark() string {
	const alphabet = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
	b := make([]byte, 40)
	_, _ = rand.Read(b)
	for i := range b {
		b[i] = alphabet[int(b[i])%len(alphabet)]
	}
	return string(b)
}

// redisStream turns binlog steps into the commands a Redis replica applies.
type redisStream struct {
	db   int // the database the replica's master client is in; -1 before the first SELECT
	seqs []uint64
	w    codec.Writer
}

// appendStep appends the commands of step: a unit inside MULTI … EXEC, each record preceded
// by a SELECT when its database is not the last one's.
func (s *redisStream) appendStep(step binlog.Step) {
	unit := step.Unit != 0
	if unit {
		// As Redis: the SELECT of the unit's first command comes before its MULTI.
		if len(step.Parts) > 0 && len(step.Parts[0].Entries) > 0 {
			if db := step.Parts[0].Entries[0].DB; db != s.db {
				s.command([]byte("SELECT"), []byte(strconv.Itoa(db)))
				s.db = db
			}
		}
		s.command([]byte("MULTI"))
	}
	// A unit's FLUSHALL or SWAPDB, logged in each of its shards, is sent once (unitCommands).
	for _, c := range unitCommands(step) {
		if c.DB != s.db {
			s.command([]byte("SELECT"), []byte(strconv.Itoa(c.DB)))
			s.db = c.DB
		}
		s.command(c.Args...)
	}
	for _, p := range step.Parts {
		if n := len(p.Entries); n > 0 && p.Shard < len(s.seqs) {
			s.seqs[p.Shard] = p.Entries[n-1].Seq
		}
	}
	if unit {
		s.command([]byte("EXEC"))
	}
}

func (s *redisStream) command(args ...[]byte) {
	s.w.ArrayLen(len(args))
	for _, a := range args {
		s.w.Bulk(a)
	}
}

var (
	redisPing   = []byte("*1\r\n$4\r\nPING\r\n")
	redisGetAck = []byte("*3\r\n$8\r\nREPLCONF\r\n$6\r\nGETACK\r\n$1\r\n*\r\n")
)

// streamRedis sends the binlog after positions after as Redis commands, from byte offset
// start, until the connection or the feed stops.
func (f *feed) streamRedis(after []uint64, start uint64) {
	s := &redisStream{db: -1, seqs: slices.Clone(after)}
	sent := start
	emit := func(p []byte) error {
		if err := f.send(p); err != nil {
			return err
		}
		sent += uint64(len(p))
		f.bytes.mark(sent, s.seqs)
		return nil
	}
	f.streamSteps(after, func(step binlog.Step) error {
		s.w.Buf = nil // the connection owns what was sent
		s.appendStep(step)
		return emit(s.w.Buf)
	}, func(ask bool) error {
		if ask {
			return emit(redisGetAck)
		}
		return emit(redisPing)
	})
}

// ackBytes records a Redis replica's REPLCONF ACK <offset>.
func (f *feed) ackBytes(off uint64) {
	if f.bytes == nil {
		return
	}
	if seqs, ok := f.bytes.acked(off); ok {
		f.acked.Store(slices.Clone(seqs))
	}
}

// psyncRedis starts a Redis replica's full sync (PSYNC or SYNC from a replica that did not
// say capa shardis).
func (r *Replication) psyncRedis(f *feed, req server.PsyncRequest) string {
	if r.rdbFormat() == nil {
		return "ERR this server cannot write an RDB"
	}
	r.mu.Lock()
	if !f.claim(req.ReplID) {
		r.mu.Unlock()
		return errPsyncTwice
	}
	f.bytes = &byteOffsets{}
	r.mu.Unlock()
	f.state.Store("wait_bgsave")
	go f.runRedis(req.Sync)
	return ""
}
