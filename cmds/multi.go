package cmds

import (
	"slices"
	"time"

	"shardis/cmdspec"
	"shardis/codec"
	"shardis/server"
)

// Transactions: MULTI, EXEC, DISCARD, WATCH, UNWATCH, as Redis 7.0 has them.
//
// Queueing happens in the reactor as commands are dispatched: inside MULTI every command that
// is not TraitTxControl is checked (unknown, arity, auth, FlagNoMulti) and queued in the
// connection's server.Multi, or refused, which aborts the transaction. EXEC and DISCARD are
// TraitTakesQueue: the reactor detaches the transaction when they are dispatched and hands it
// to them in Ctx.Multi, so a pipeline may go on queueing a new MULTI while they wait their
// turn. EXEC routes to the shards of its queued commands (execRoute) and runs them holding
// all of them, in one transaction: one WriteBatch across those shards, which no other client
// sees in part. WATCH is a keyed command run in the shards owning its keys (shard.Watcher).

func init() {
	Register(
		&Command{Name: "multi", Arity: 1, Flags: []string{"noscript", "loading", "stale", "fast", "allow_busy"},
			ACL: []string{"fast", "transaction"}, Group: "transactions", Since: "1.2.0",
			Summary: "Mark the start of a transaction block", Complexity: "O(1)", Exec: ExecConn,
			Traits: TraitTxControl, Run: multiCommand},
		&Command{Name: "exec", Arity: 1, Flags: []string{"noscript", "loading", "stale", "skip_slowlog"},
			ACL: []string{"slow", "transaction"}, Group: "transactions", Since: "1.2.0",
			Summary:    "Execute all commands issued after MULTI",
			Complexity: "Depends on commands in the transaction",
			Traits:     TraitTxControl | TraitTakesQueue | TraitRunsQueue, Route: execRoute, Run: execCommand},
		&Command{Name: "discard", Arity: 1, Flags: []string{"noscript", "loading", "stale", "fast", "allow_busy"},
			ACL: []string{"fast", "transaction"}, Group: "transactions", Since: "2.0.0",
			Summary:    "Discard all commands issued after MULTI",
			Complexity: "O(N), when N is the number of queued commands", Exec: ExecServer,
			Traits: TraitTxControl | TraitTakesQueue, Run: discardCommand},
		&Command{Name: "watch", Arity: -2, Flags: []string{"noscript", "loading", "stale", "fast", "allow_busy"},
			ACL: []string{"fast", "transaction"}, Group: "transactions",
			Since: "2.2.0", Summary: "Watch the given keys to determine execution of the MULTI/EXEC block",
			Complexity: "O(1) for every key.", Syntax: "key [key ...]",
			KeySpecs: []cmdspec.KeySpec{{Flags: cmdspec.RO, Begin: cmdspec.Index(1), Find: cmdspec.Range(-1, 1, 0)}},
			Traits:   TraitTxControl, Run: watchCommand},
		&Command{Name: "unwatch", Arity: 1, Flags: []string{"noscript", "loading", "stale", "fast", "allow_busy"},
			ACL: []string{"fast", "transaction"}, Group: "transactions", Since: "2.2.0",
			Summary: "Forget about all watched keys", Complexity: "O(1)", Exec: ExecServer,
			Run: unwatchCommand},
	)
	OnConnReset(func(c *Ctx, _ *server.Server) {
		c.Client.Multi = nil
		c.Client.Unwatch()
	})
}

func multiCommand(c *Ctx) {
	if c.Multi != nil || c.Client.Multi != nil {
		c.Error("ERR MULTI calls can not be nested")
		return
	}
	c.Client.Multi = &server.Multi{}
	c.Client.Publish()
	c.W.OK()
}

func discardCommand(c *Ctx) {
	if c.Multi == nil {
		c.Error("ERR DISCARD without MULTI")
		return
	}
	c.Client.Unwatch()
	c.W.OK()
}

func watchCommand(c *Ctx) {
	if c.Multi != nil {
		c.Error("ERR WATCH inside MULTI is not allowed")
		return
	}
	w := c.Client.Watcher()
	for _, key := range c.Args[1:] {
		c.Tx.Watch(c.DB, key, w)
	}
	c.W.OK()
}

func unwatchCommand(c *Ctx) {
	c.Client.Unwatch()
	c.W.OK()
}

// ExecAbortPrefix is what EXEC answers when its transaction was discarded: Redis's text is
// followed by the reason.
const ExecAbortPrefix = "EXECABORT Transaction discarded because of"

// execRoute returns the shards EXEC must hold: those of every queued command (all of them for
// a command that needs every shard or reads server-wide state) and those of the watched keys, so the check of the
// watched keys is atomic with the transaction. nil when it needs none: the transaction is
// empty, aborted, or made of commands that hold no shard.
func execRoute(c *Ctx, nShards int) []int {
	m := c.Multi
	if m == nil || m.Aborted || len(m.Commands) == 0 {
		return nil
	}
	var ids []int
	for _, args := range m.Commands {
		cmd := Lookup(args)
		if cmd == nil || !cmd.Runs() {
			continue // refused when queued: the transaction is aborted
		}
		switch cmd.Exec {
		case ExecAll, ExecServer:
			// ExecServer commands read server-wide state (DBSIZE, INFO keyspace): inside a
			// transaction they must see none of another client's writes half done.
			ids = ids[:0]
			for i := range nShards {
				ids = append(ids, i)
			}
			return ids
		case ExecKeyed:
			if cmd.Route != nil {
				// InTransaction as when it runs: a script's route is then every shard, since
				// EXEC cannot run its queue again should the script stray (narrowRoute).
				sub := Ctx{Args: args, DB: c.DB, Client: c.Client, Keyspace: c.Keyspace, Cmd: cmd,
					InTransaction: true}
				ids = append(ids, cmd.Route(&sub, nShards)...)
				continue
			}
			for _, k := range cmd.KeyArgs(args) {
				ids = append(ids, c.Keyspace.Store.ShardOf(k))
			}
		}
	}
	if len(ids) == 0 {
		return nil
	}
	if w := c.Client.Watch; w != nil {
		ids = w.Shards(ids)
	}
	slices.Sort(ids)
	return slices.Compact(ids) // one shard: EXEC runs in it like any one-shard command
}

// execCommand runs the transaction it took over: EXECABORT when a command was refused while
// queueing, the null reply when a watched key changed, else an array of every command's reply,
// errors included (a command that fails does not stop the others: there is no rollback).
func execCommand(c *Ctx) {
	m, cl := c.Multi, c.Client
	if m == nil {
		c.Error("ERR EXEC without MULTI")
		return
	}
	if m.Aborted {
		cl.Unwatch()
		c.Error(ExecAbortPrefix + " previous errors.")
		return
	}
	if w := cl.Watch; w != nil {
		dirty := w.Dirty(time.Now().UnixMilli())
		w.Unwatch()
		if dirty {
			c.W.NullArray()
			return
		}
	}
	c.W.ArrayLen(len(m.Commands))
	if c.Tx != nil {
		// What the commands log is applied together by replicas, even all in one shard.
		c.Tx.BeginUnit()
		defer c.Tx.EndUnit()
	}
	db := c.DB
	for _, args := range m.Commands {
		cmd := Lookup(args)
		if msg := c.Exec.Admit(&AdmitRequest{From: FromExec, Cmd: cmd, Args: args, Client: cl}); msg != "" {
			c.W.Error(msg)
			continue
		}
		sub := Ctx{Args: args, DB: db, W: codec.Writer{Buf: c.W.Buf, RESP3: c.W.RESP3}, Tx: c.Tx,
			Client: cl, Cmd: cmd, InTransaction: true, Origin: c.Origin, Caching: c.Caching}
		if cmd.Exec == ExecConn {
			cl.DB = db // SELECT inside the transaction moves the commands after it
		}
		if c.Tx != nil {
			c.Tx.StartCommand()
		}
		c.Exec.Run(&sub)
		c.W.Buf = sub.W.Buf
		if cmd.Exec == ExecConn {
			db = cl.DB
		}
	}
}
