package executor

import (
	"fmt"
	"slices"

	"shardis/cmds"
	"shardis/codec"
	"shardis/shard"
)

// Propagated is one command of a Redis master's replication stream, in the database its
// last SELECT chose.
type Propagated struct {
	DB   int
	Args [][]byte
}

// ApplyPropagated applies one unit of a Redis master's stream on its replica: one command, or
// the commands of one MULTI … EXEC, in one commit over the shards they touch, so no reader
// sees half of it. The commands run as the master's do on a Redis replica: admitted as
// replication (READONLY and the like do not apply), no key counting as expired (the master's
// DEL comes in the stream), nothing logged (a replica's binlog is not its own history).
// PUBLISH, which Redis propagates, reaches this server's subscribers.
//
// A command that fails (unknown here, refused, or replying with an error) does not stop the
// others, as on a Redis replica; the errors come back joined for the link to log. A storage
// error fails the whole unit.
func (e *Executor) ApplyPropagated(unit []Propagated) (replyErrs []error, err error) {
	return e.ApplyUnit(unit, UnitOptions{})
}

// UnitOptions is what a replication link adds to ApplyUnit.
type UnitOptions struct {
	// Stopped, when set, is asked once the unit holds its shards: true (the link stopped
	// meanwhile) applies nothing and fails with an error.
	Stopped func() bool
	// Commit, when set, is called with the transaction after the unit's commands ran, to
	// write what must commit with them (a replica's position in its master's stream); the
	// unit then always commits, in shard 0 when its commands touch no shard.
	Commit func(tx *shard.Tx)
}

// ApplyUnit is ApplyPropagated with options.
func (e *Executor) ApplyUnit(unit []Propagated, o UnitOptions) (replyErrs []error, err error) {
	var ids []int
	var tx []Propagated
	for _, p := range unit {
		cmd := cmds.Lookup(p.Args)
		if cmd == nil || !cmd.Runs() {
			replyErrs = append(replyErrs, fmt.Errorf("%s", cmds.UnknownCommandError(p.Args)))
			continue
		}
		if cmd.Exec == cmds.ExecServer || cmd.Exec == cmds.ExecConn {
			if cmd.Has(cmds.FlagPubSub) && cmd.RunServer != nil && cmd.CheckArity(len(p.Args)) {
				c := cmds.Ctx{Args: p.Args, DB: p.DB, W: codec.Writer{}, Keyspace: &e.keyspace, Exec: e, Cmd: cmd}
				e.runGuarded(&c) // PUBLISH: delivered here, nothing stored
			}
			continue
		}
		got := e.Shards(cmd, p.Args, p.DB, nil, nil)
		if len(got) == 0 {
			got = []int{0} // a keyless data command runs where keyless ones do
		}
		ids = append(ids, got...)
		tx = append(tx, p)
	}
	if len(tx) == 0 {
		if o.Commit == nil {
			return replyErrs, nil
		}
		ids = []int{0}
	}
	slices.Sort(ids)
	ids = slices.Compact(ids)
	stopped := false
	apply := func(t *shard.Tx) {
		if o.Stopped != nil && o.Stopped() {
			stopped = true
			t.Fail(errLinkStopped)
			return
		}
		t.SetApplying(true)
		if o.Commit != nil {
			defer func() {
				if t.Err() == nil {
					o.Commit(t)
				}
			}()
		}
		for _, p := range tx {
			if aerr := e.Apply(t, p.DB, p.Args); aerr != nil {
				if t.Err() != nil {
					return // storage: the commit fails
				}
				replyErrs = append(replyErrs, aerr)
			}
		}
	}
	if len(ids) == 1 {
		err = e.srv.Store.Do(ids[0], apply)
	} else {
		h := e.srv.Store.Acquire(ids)
		apply(h.Tx())
		err = h.Release()
	}
	if stopped {
		err = errLinkStopped
	}
	return replyErrs, err
}
