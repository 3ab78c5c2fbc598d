package executor

import (
	"bytes"
	"errors"
	"fmt"

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
	switch {
	case cmd == nil:
		return fmt.Errorf("apply: %s", cmds.UnknownCommandError(args))
	case cmd.Run == nil:
		return fmt.Errorf("apply: %s", cmds.UnknownSubcommandError(args))
	case !cmd.CheckArity(len(args)):
		return fmt.Errorf("apply: %s", cmds.ArityError(cmd))
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
	// A command that panics on a nil client (or anything else) must fail the replay, not
	// take the shard goroutine down with it.
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("apply: '%s' panicked: %v", cmd.Name, r)
		}
	}()
	tx.StartCommand()
	c := cmds.Ctx{Args: args, DB: db, W: codec.Writer{}, Tx: tx, Srv: e.srv, Exec: e, Cmd: cmd}
	cmd.Run(&c)
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
// Shards are independent: the records of one shard only ever touch that shard's keys, so
// shards may be replayed in any order or concurrently.
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
