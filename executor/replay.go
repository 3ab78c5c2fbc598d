package executor

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"

	"shardis/binlog"
	"shardis/cmds"
	"shardis/codec"
	"shardis/shard"
)

// Apply runs one binlog record's command (args[0] is its name) in logical database db against
// tx, with no client, and discards the reply. It is how a replica or a replay re-creates a
// write from the binlog. It returns an error when the command is unknown, is not a data
// command, touches a key outside the shards tx holds, replied with an error or met a storage
// error; nothing is rolled back in that case.
//
// Replay is per shard: a whole-shard record (FLUSHDB, FLUSHALL, SWAPDB) applies only to the
// shards tx holds, which is what those commands do anyway since they walk c.Tx.Shards().
func (e *Executor) Apply(tx *shard.Tx, db int, args [][]byte) (err error) {
	if len(args) == 0 {
		return errors.New("apply: empty record")
	}
	cmd := cmds.Lookup(args)
	if msg := e.Admit(&cmds.AdmitRequest{From: cmds.FromReplication, Cmd: cmd, Args: args}); msg != "" {
		return fmt.Errorf("apply: %s", msg)
	}
	switch {
	case cmd.Exec == cmds.ExecConn || cmd.Exec == cmds.ExecServer:
		// Such commands never reach the binlog: they have no transaction to write with.
		return fmt.Errorf("apply: '%s' is not a data command", cmd.Name)
	case db < 0 || db >= tx.Store().Databases():
		return fmt.Errorf("apply: ERR DB index is out of range")
	}
	held := tx.Shards()
	for _, k := range cmd.KeyArgs(args) {
		if !applyHolds(held, tx.Store().ShardOf(k)) {
			return fmt.Errorf("apply: '%s' key %q lives in shard %d, outside the shards held %v",
				cmd.Name, k, tx.Store().ShardOf(k), held)
		}
	}
	// Through the executor's guard, as every command runs: one that panics (on a nil client,
	// or anything else) fails the replay and its transaction, not the shard goroutine. A
	// replayed record is not a client's command: it is not counted in the statistics.
	tx.StartCommand()
	c := cmds.Ctx{Args: args, DB: db, W: codec.Writer{}, Tx: tx, Keyspace: &e.keyspace, Exec: e, Cmd: cmd}
	e.runGuarded(&c)
	if reply := c.W.Buf; len(reply) > 0 && reply[0] == '-' {
		return fmt.Errorf("apply: '%s' replied %s", cmd.Name, bytes.TrimRight(reply[1:], "\r\n"))
	}
	if err := tx.Err(); err != nil {
		return fmt.Errorf("apply: '%s': %w", cmd.Name, err)
	}
	return nil
}

func applyHolds(held []int, id int) bool {
	for _, h := range held {
		if h == id {
			return true
		}
	}
	return false
}

// replayChunk bounds how many records one replay step reads and then applies in one group
// commit, so a long binlog is neither held in memory whole nor committed record by record.
const replayChunk = 512

// ReplayShard applies every record of shard id's binlog in src, in sequence order, to the same
// shard of the executor's store (which must have the same shard count), through the command
// table. It returns how many records it applied; on error it stops at
// the failing record, whose sequence the error names. src and dst must be different stores.
//
// The records of one shard only ever touch that shard's keys, so replaying every shard, in
// any order, ends with the same data. A unit's records (see binlog.Unit) are applied as this
// shard's part alone, so until every shard is replayed the destination may hold part of a
// multi-shard write; Replay keeps units whole.
func (e *Executor) ReplayShard(src *shard.Store, id int) (n int, err error) {
	dst := e.srv.Store
	if src.NumShards() != dst.NumShards() {
		return 0, fmt.Errorf("replay: source has %d shards, destination %d", src.NumShards(), dst.NumShards())
	}
	next := uint64(0)
	for {
		recs, err := src.ReadBinlog(id, next, replayChunk)
		if err != nil {
			return n, fmt.Errorf("replay: %w", err)
		}
		if len(recs) == 0 {
			return n, nil
		}
		var applyErr error
		err = dst.Do(id, func(tx *shard.Tx) {
			for _, r := range recs {
				if err := e.Apply(tx, r.DB, r.Args); err != nil {
					applyErr = fmt.Errorf("replay: shard %d record %d %q: %w", id, r.Seq, r.Args, err)
					return
				}
				n++
			}
		})
		if applyErr != nil {
			return n, applyErr
		}
		if err != nil {
			return n, fmt.Errorf("replay: shard %d commit: %w", id, err)
		}
		next = recs[len(recs)-1].Seq + 1
	}
}

// Replay applies every shard's binlog of src to the executor's store (same shard count) and
// returns how many records it applied. Runs of one shard's records that stand alone are
// applied as ReplayShard does, a chunk per commit in that shard; the records of a unit (one
// multi-shard write, binlog.Unit) are applied in one transaction over the unit's shards, one
// commit, so the destination never holds part of a unit: when a record of the unit fails, or
// ctx ends, none of it is applied. It stops at the first error, which names the record, and
// between steps when ctx is done (returning ctx's error). src and dst must be different stores.
func (e *Executor) Replay(ctx context.Context, src binlog.Source) (n int, err error) {
	dst := e.srv.Store
	if src.NumShards() != dst.NumShards() {
		return 0, fmt.Errorf("replay: source has %d shards, destination %d", src.NumShards(), dst.NumShards())
	}
	a := binlog.NewAssembler(src, replayChunk)
	for {
		if err := ctx.Err(); err != nil {
			return n, err
		}
		step, err := a.Next()
		if errors.Is(err, io.EOF) {
			return n, nil
		}
		if err != nil {
			return n, fmt.Errorf("replay: %w", err)
		}
		if step.Unit == 0 {
			applied, err := e.replayRun(step.Parts[0])
			n += applied
			if err != nil {
				return n, err
			}
			continue
		}
		if err := e.replayUnit(ctx, step); err != nil {
			return n, err
		}
		n += step.Records()
	}
}

// replayRun applies one shard's records that stand alone in one commit in that shard. A
// failing record stops the run; the records before it are committed.
func (e *Executor) replayRun(p binlog.Part) (n int, err error) {
	var applyErr error
	err = e.srv.Store.Do(p.Shard, func(tx *shard.Tx) {
		for _, r := range p.Entries {
			if err := e.Apply(tx, r.DB, r.Args); err != nil {
				applyErr = fmt.Errorf("replay: shard %d record %d %q: %w", p.Shard, r.Seq, r.Args, err)
				return
			}
			n++
		}
	})
	if applyErr != nil {
		return n, applyErr
	}
	if err != nil {
		return 0, fmt.Errorf("replay: shard %d commit: %w", p.Shard, err)
	}
	return n, nil
}

// replayUnit applies every record of one unit in one transaction over its shards. Each
// shard's records run confined to that shard, as they ran when they were logged (a FLUSHDB
// in shard 1's part flushes shard 1 only). Any failure fails the commit: nothing is applied.
func (e *Executor) replayUnit(ctx context.Context, step binlog.Step) error {
	ids := make([]int, len(step.Parts))
	for i, p := range step.Parts {
		ids[i] = p.Shard
	}
	h := e.srv.Store.Acquire(ids)
	tx := h.Tx()
	var applyErr error
parts:
	for _, p := range step.Parts {
		tx.Confine(p.Shard)
		for _, r := range p.Entries {
			if err := e.Apply(tx, r.DB, r.Args); err != nil {
				applyErr = fmt.Errorf("replay: unit %d, shard %d record %d %q: %w", step.Unit, p.Shard, r.Seq, r.Args, err)
				break parts
			}
		}
	}
	tx.Confine(-1)
	if applyErr == nil {
		applyErr = ctx.Err()
	}
	if applyErr != nil {
		tx.Fail(applyErr)
	}
	if err := h.Release(); err != nil {
		if applyErr != nil {
			return applyErr
		}
		return fmt.Errorf("replay: unit %d: %w", step.Unit, err)
	}
	return nil
}

// errLinkStopped: a step reached its shards after its link stopped.
var errLinkStopped = errors.New("replica: the link to the master stopped")

// ApplyMirrored applies one step of a master's binlog on a replica (binlog.Assembler's Step:
// one shard's records that stand alone, or a whole unit) in one commit, storing each record
// at the master's sequence (shard.Tx.Mirror) with its effect, so the replica's binlog is a
// copy of the master's and its positions are its replication position. raw[i][j] is the
// encoded record of step.Parts[i].Entries[j]. Nothing of the step is applied when it fails,
// nor when stopped, checked once the step holds its shards, reports true (the server stopped
// being a replica of that master meanwhile).
func (e *Executor) ApplyMirrored(step binlog.Step, raw [][][]byte, stopped func() bool) error {
	m := mirrored{e: e, step: step, raw: raw, stopped: stopped}
	var err error
	if len(step.Parts) == 1 {
		err = e.srv.Store.Do(step.Parts[0].Shard, m.apply)
	} else {
		ids := make([]int, len(step.Parts))
		for i, p := range step.Parts {
			ids[i] = p.Shard
		}
		h := e.srv.Store.Acquire(ids)
		m.apply(h.Tx())
		err = h.Release()
	}
	if m.err != nil {
		return m.err
	}
	return err
}

// PostMirrored is ApplyMirrored for a step of one shard, without waiting: the step is queued
// to its shard and done is called, from the shard's goroutine (it must not block), with the
// commit's error once it committed. Steps queued to one shard apply in the order queued, and
// a unit applied after them (ApplyMirrored holds its shards) after them too; a step whose
// predecessor in its shard failed fails as well (Tx.Mirror keeps the master's sequence), so
// the replica's position never skips a record. The caller must not reuse raw's bytes until done.
func (e *Executor) PostMirrored(step binlog.Step, raw [][][]byte, stopped func() bool, done func(error)) {
	e.srv.Store.Shard(step.Parts[0].Shard).Post(&mirrored{e: e, step: step, raw: raw, stopped: stopped, done: done})
}

// mirrored is one step of a master's binlog being applied.
type mirrored struct {
	e       *Executor
	step    binlog.Step
	raw     [][][]byte
	stopped func() bool
	done    func(error) // PostMirrored's
	err     error       // what applying (not committing) met
}

func (m *mirrored) Run(tx *shard.Tx) { m.apply(tx) }

func (m *mirrored) Done(err error) {
	if m.err != nil {
		err = m.err
	}
	m.done(err)
}

func (m *mirrored) apply(tx *shard.Tx) {
	if m.stopped() {
		m.err = errLinkStopped
		return
	}
	tx.SetApplying(true)
	for i, p := range m.step.Parts {
		if len(m.step.Parts) > 1 {
			tx.Confine(p.Shard)
		}
		for j, r := range p.Entries {
			if err := m.e.Apply(tx, r.DB, r.Args); err != nil {
				m.err = fmt.Errorf("replica: shard %d record %d %q: %w", p.Shard, r.Seq, r.Args, err)
				break
			}
			if err := tx.Mirror(p.Shard, r.Seq, m.raw[i][j]); err != nil {
				m.err = err
				break
			}
		}
		if m.err != nil {
			break
		}
	}
	tx.Confine(-1)
	if m.err != nil {
		tx.Fail(m.err)
	}
}

// DataReplaced tells what keeps state about the data that a replica's full sync replaced it
// all: the function libraries are read again, and every client caching keys (CLIENT
// TRACKING) is told to drop everything, as after a FLUSHALL.
func (e *Executor) DataReplaced() {
	cmds.ReloadFunctions(e.srv.Store)
	if e.srv.Tracking != nil {
		e.srv.Tracking.Apply([]shard.Access{{Flush: true}})
	}
}
