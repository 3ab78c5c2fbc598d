package replication

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"slices"
	"strconv"
	"strings"
	"time"

	"shardis/binlog"
	"shardis/executor"
	"shardis/server"
	"shardis/shard"
)

// A shardis replica whose shard count is not its master's cannot mirror the master's binlog
// shard by shard. It says its count (REPLCONF shardis-shards) and the master serves it the
// same stream with one difference: a full sync sends the snapshot as an RDB (frameRDB), which
// the replica loads by key into its own shards, then the snapshot's positions. Each binlog
// step after that (one shard's run of records, or a whole unit) is applied by key, in one
// commit over the replica's shards its keys touch (executor.ApplyUnit), and that commit also
// writes the master's positions after the step into each of those shards
// (stateMasterPositions). The replica's position is the largest of what its shards hold:
// steps commit one after the other, so every step up to that one is applied, and a link drop,
// a kill -9 or a restart resumes with a partial sync from there. Offsets shown outward are the
// master's (the sum of those positions), as a mirroring replica's are.
//
// Such a replica logs nothing of what it applies (its binlog is not its master's history), so
// it serves no replicas of its own and is no FAILOVER target; promoted (REPLICAOF NO ONE),
// it starts a new history with no replid2, so the old master's other replicas sync in full.

var (
	// stateMasterPositions (per shard, under replication's state prefix so that a snapshot
	// leaves it out): the master's positions after the last step a commit in this shard
	// applied.
	stateMasterPositions = append(slices.Clone(shard.StateReplication), 'm')

	errReshardedNoReplicas = "ERR this server replicates a master with another shard count " +
		"and cannot serve replicas: replicate from its master"
	errReshardedNoFailover = "ERR PSYNC FAILOVER: this replica's shard count differs from " +
		"its master's; promote it with REPLICAOF NO ONE"
)

// psyncReshard starts a feed for a shardis replica with another shard count: a partial sync
// when it names positions of this server's history that the binlog still holds after.
func (r *Replication) psyncReshard(f *feed, req server.PsyncRequest) string {
	if r.rdbFormat() == nil {
		return "ERR this server cannot write an RDB"
	}
	n := r.store.NumShards()
	r.mu.Lock()
	if !f.claim(req.ReplID) {
		r.mu.Unlock()
		return errPsyncTwice
	}
	f.reshard = true
	partial := len(f.masterPositions) == n && r.canContinue(req.ReplID, f.masterPositions)
	if partial {
		f.positions = f.masterPositions // run continues from them
	}
	r.mu.Unlock()
	f.state.Store("wait_bgsave")
	go f.run(partial)
	return ""
}

// sendReshardSnapshot sends sn as an RDB in frameRDB frames, then frameSyncDone with its
// positions.
func (f *feed) sendReshardSnapshot(sn *shard.Snapshot) error {
	format := f.r.rdbFormat()
	w := &feedWriter{send: func(b []byte) error {
		return f.send(append(appendFrameHead(make([]byte, 0, len(b)+12), frameRDB, len(b)), b...))
	}}
	seqs := sn.Seqs()
	opts := RDBWriteOptions{ReplID: f.r.srv.ReplID(), Offset: offset(seqs)}
	if err := format.WriteRDB(w, sn, opts); err != nil {
		return err
	}
	if err := w.flush(); err != nil {
		return err
	}
	body := appendPositions(nil, seqs)
	return f.send(append(appendFrameHead(nil, frameSyncDone, len(body)), body...))
}

// appendPositions appends count (uvarint) · each sequence (uvarint).
func appendPositions(b []byte, seqs []uint64) []byte {
	b = binary.AppendUvarint(b, uint64(len(seqs)))
	for _, s := range seqs {
		b = binary.AppendUvarint(b, s)
	}
	return b
}

func decodePositions(b []byte) ([]uint64, error) {
	d := decoder{b: b}
	n := d.uvarint()
	if d.err != nil || n == 0 || n > 1<<16 {
		return nil, errBadFrame
	}
	seqs := make([]uint64, n)
	for i := range seqs {
		seqs[i] = d.uvarint()
	}
	if !d.done() {
		return nil, errBadFrame
	}
	return seqs, nil
}

// ---- replica side ----

// masterPositions reads the master's positions a replica with another shard count applied up
// to: the largest each shard's commits recorded, nil when none did (this replica mirrors its
// master, or has no history).
func (r *Replication) masterPositions() ([]uint64, error) {
	var out []uint64
	for id := range r.store.NumShards() {
		err := r.store.ReadStatePrefix(id, stateMasterPositions, func(name, val []byte) {
			if len(name) != 0 {
				return
			}
			seqs, err := decodePositions(val)
			switch {
			case err != nil:
			case out == nil:
				out = seqs
			case len(seqs) == len(out):
				for i, s := range seqs {
					out[i] = max(out[i], s)
				}
			}
		})
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// clearMasterPositions forgets, in every shard, the positions in a master's stream that a
// replica applying by key keeps (this file's, and a Redis master's offset, redismaster.go):
// the server was promoted and takes writes of its own.
func (r *Replication) clearMasterPositions() error {
	for id := range r.store.NumShards() {
		if err := r.store.Do(id, func(tx *shard.Tx) {
			tx.DeleteState(id, stateMasterPositions)
			tx.DeleteState(id, stateRedisPosition)
		}); err != nil {
			return err
		}
	}
	return nil
}

// reshardState is a link's position in a master with another shard count: the master's
// positions applied so far.
type reshardState struct {
	seqs []uint64 // the link's goroutine writes; others read a copy under link.mu
}

func (l *link) reshardSeqs() []uint64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.reshard == nil {
		return nil
	}
	return slices.Clone(l.reshard.seqs)
}

func (l *link) setReshard(seqs []uint64) {
	l.mu.Lock()
	if seqs == nil {
		l.reshard = nil
	} else {
		l.reshard = &reshardState{seqs: seqs}
	}
	l.mu.Unlock()
	l.r.resharded.Store(seqs != nil)
}

// rdbFrames reads the RDB of frameRDB frames, until the frame after them, which it keeps.
type rdbFrames struct {
	l    *link
	conn net.Conn
	fr   *frameReader
	cur  []byte
	kind byte // the frame after the RDB (0: not read yet)
	end  []byte
}

func (rf *rdbFrames) Read(p []byte) (int, error) {
	for len(rf.cur) == 0 {
		if rf.kind != 0 {
			return 0, io.EOF
		}
		_ = rf.conn.SetReadDeadline(time.Now().Add(rf.l.timeout()))
		kind, payload, err := rf.fr.next()
		if err != nil {
			return 0, err
		}
		if kind != frameRDB {
			rf.kind, rf.end = kind, slices.Clone(payload)
			return 0, io.EOF
		}
		rf.cur = payload
	}
	n := copy(p, rf.cur)
	rf.cur = rf.cur[n:]
	return n, nil
}

// reshardFullSync loads a master's snapshot sent as an RDB (its first frame's payload is
// first), then records the master's positions in every shard.
func (l *link) reshardFullSync(conn net.Conn, fr *frameReader, first []byte, replid string, loader *shard.Loader) error {
	r := l.r
	format := r.rdbFormat()
	if format == nil {
		loader.Abort()
		return errors.New("the master sends an RDB and this build cannot load one")
	}
	rf := &rdbFrames{l: l, conn: conn, fr: fr, cur: first}
	br := bufio.NewReaderSize(rf, 1<<20)
	err := format.LoadRDB(br, loader)
	if err == nil {
		_, err = io.Copy(io.Discard, br) // the frame after the RDB
	}
	var seqs []uint64
	if err == nil {
		if rf.kind != frameSyncDone {
			err = fmt.Errorf("%w: kind %q after the RDB", errBadFrame, rf.kind)
		} else {
			seqs, err = decodePositions(rf.end)
		}
	}
	for id := 0; err == nil && id < r.store.NumShards(); id++ {
		err = loader.FinishShard(id, 0)
	}
	if err != nil {
		loader.Abort()
		l.forgetHistory()
		return fmt.Errorf("loading the master's snapshot: %w", err)
	}
	// The positions go in before the load ends: a crash after it finds data and positions.
	tx := loader.Tx()
	val := appendPositions(nil, seqs)
	for _, id := range tx.Shards() {
		tx.PutState(id, stateMasterPositions, val)
	}
	if err := l.finishFullSync(loader, replid); err != nil {
		return err
	}
	l.setReshard(seqs)
	return nil
}

// Steps the replica has already received are applied together, in one commit, up to these
// bounds: a replica that fell behind catches up with fewer, larger commits. Each step is whole
// in the commit, so no reader sees part of one.
const (
	reshardBatchSteps = 256
	reshardBatchBytes = 4 << 20
)

// applyReshard applies the master's steps by key until an error.
func (l *link) applyReshard(conn net.Conn, fr *frameReader) error {
	seqs := l.reshardSeqs()
	var batch []executor.Propagated
	batchBytes, batchSteps := 0, 0
	flush := func() error {
		if batchSteps == 0 {
			return nil
		}
		val := appendPositions(nil, seqs)
		replyErrs, err := l.r.exec.ApplyUnit(batch, executor.UnitOptions{
			Stopped: l.stopped,
			Commit: func(tx *shard.Tx) {
				for _, id := range tx.Shards() {
					tx.PutState(id, stateMasterPositions, val)
				}
			},
		})
		for _, e := range replyErrs {
			log.Printf("Replica: a record of the master failed here: %v", e)
		}
		batch, batchBytes, batchSteps = nil, 0, 0
		if err != nil {
			return err
		}
		l.mu.Lock()
		l.reshard.seqs = slices.Clone(seqs)
		l.mu.Unlock()
		return nil
	}
	for {
		if fr.r.Buffered() == 0 || batchSteps >= reshardBatchSteps || batchBytes >= reshardBatchBytes {
			// Nothing more has arrived (or the batch is full): apply what was received.
			if err := flush(); err != nil {
				return err
			}
		}
		kind, payload, err := l.nextFrame(conn, fr)
		if err != nil {
			if ferr := flush(); ferr != nil {
				return ferr
			}
			return err
		}
		switch kind {
		case frameStep:
			// The frame reader reuses its buffer; a batched step keeps its own bytes.
			own := slices.Clone(payload)
			step, _, err := decodeStep(own, len(seqs))
			if err != nil {
				return err
			}
			for _, p := range step.Parts {
				for _, e := range p.Entries {
					if e.Seq != seqs[p.Shard]+1 {
						return fmt.Errorf("%w: master shard %d record %d after %d", shard.ErrMirrorOrder, p.Shard, e.Seq, seqs[p.Shard])
					}
					seqs[p.Shard] = e.Seq
				}
			}
			batch = append(batch, unitCommands(step)...)
			batchBytes += len(own)
			batchSteps++
		case framePing:
			if err := flush(); err != nil {
				return err
			}
			d := decoder{b: payload}
			d.uvarint()
			if len(d.b) == 1 && d.b[0] == 1 {
				if err := l.ack(conn); err != nil {
					return err
				}
			}
		default:
			return fmt.Errorf("%w: kind %q", errBadFrame, kind)
		}
	}
}

// unitCommands turns a step into the commands that do what it did, for a replica that applies
// them by key (this one, or a Redis replica, redisfeed.go). A unit's whole-keyspace
// records (FLUSHDB, FLUSHALL, SWAPDB) are logged once in each of its shards, at the same
// place among that shard's keyed records: they are applied once, after what every shard
// logged before them and before what it logged after (the keyed records of two shards
// touch different keys, so their order between two such records does not matter).
func unitCommands(step binlog.Step) []executor.Propagated {
	var out []executor.Propagated
	if len(step.Parts) == 1 {
		for _, e := range step.Parts[0].Entries {
			out = append(out, executor.Propagated{DB: e.DB, Args: e.Args})
		}
		return out
	}
	pos := make([]int, len(step.Parts)) // each part's next entry
	for {
		progressed := false
		var barrier *binlog.Entry
		for i, p := range step.Parts {
			for pos[i] < len(p.Entries) && !wholeKeyspace(p.Entries[pos[i]].Args) {
				e := p.Entries[pos[i]]
				out = append(out, executor.Propagated{DB: e.DB, Args: e.Args})
				pos[i]++
				progressed = true
			}
			if pos[i] < len(p.Entries) {
				if barrier == nil {
					barrier = &p.Entries[pos[i]]
				}
				pos[i]++ // the same record in each part: applied once, below
				progressed = true
			}
		}
		if barrier != nil {
			out = append(out, executor.Propagated{DB: barrier.DB, Args: barrier.Args})
		}
		if !progressed {
			return out
		}
	}
}

// wholeKeyspace reports whether a record is one a multi-shard write logs in each shard.
func wholeKeyspace(args [][]byte) bool {
	if len(args) == 0 {
		return false
	}
	switch strings.ToLower(string(args[0])) {
	case "flushdb", "flushall", "swapdb":
		return true
	}
	return false
}

// reshardHandshake returns the REPLCONF a replica sends about its position: its own positions
// when it mirrors its master (or has no history), else the master's it applied up to, and
// the PSYNC offset that goes with them.
func (l *link) reshardHandshake() (conf [][]string, psyncOffset uint64, err error) {
	store := l.r.store
	masterSeqs, err := l.r.masterPositions()
	if err != nil {
		return nil, 0, err
	}
	conf = [][]string{{"REPLCONF", "shardis-shards", strconv.Itoa(store.NumShards())}}
	if masterSeqs != nil {
		l.setReshard(masterSeqs)
		return append(conf, []string{"REPLCONF", "shardis-master-positions", formatPositions(masterSeqs)}), offset(masterSeqs), nil
	}
	l.setReshard(nil)
	positions := store.LastSeqs()
	return append(conf, []string{"REPLCONF", "shardis-positions", formatPositions(positions)}), offset(positions), nil
}
