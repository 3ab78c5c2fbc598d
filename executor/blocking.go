package executor

import (
	"errors"
	"time"

	"shardis/cmds"
	"shardis/codec"
	"shardis/server"
	"shardis/shard"
)

// Blocked commands. A blocking command that finds its keys empty sets Ctx.Block; Run then
// registers a Blocked, whose shard.Waiter sits in the waiter table of every key's shard (all
// held by the running transaction, so no write can slip between the check and the wait).
// After every command that is not part of a transaction, Run serves the keys the command made
// ready (serveReady): for each, the waiters it serves in the order they blocked, each by running
// its command again through Run, with Ctx.ReadyKey, in the same transaction as the write. A
// waiter whose command needs a shard the transaction does not hold (BLMOVE to a key of another
// shard) is left to serveDeferred, which holds every shard needed once the transaction is
// committed.
//
// Exactly one party settles a Blocked: whoever wins its waiter's Claim (a serving transaction,
// the timeout, CLIENT UNBLOCK, the connection closing, Store.Close). It removes the waiter from
// every table and hands the reply to the host, once.

// Blocked is one command waiting for its keys. It is created by Run in the goroutine holding
// the command's shards and owned, once claimed, by the claimer. Its arguments alias the host's
// buffers, which stay put until the host gets the reply.
type Blocked struct {
	w      shard.Waiter
	e      *Executor
	cmd    *cmds.Command
	args   [][]byte
	db     int
	resp3  bool
	client *server.Client
	host   cmds.BlockHost
	dst    []byte // BLMOVE's destination: its shard is needed to serve
	ready  cmds.ReadyFunc
	state  any    // the command's BlockRequest.State, handed back when it is served
	reply  []byte // the host's reply buffer; the claimer writes the reply into it
	timer  *time.Timer
}

// block registers c's BlockRequest (see Ctx.Block); Run calls it in the goroutine holding the
// command's shards.
func (e *Executor) block(c *cmds.Ctx) {
	req := c.Block
	b := &Blocked{e: e, cmd: c.Cmd, args: c.Args, db: c.DB, resp3: c.W.RESP3, client: c.Client,
		host: c.Host, dst: req.Dst, ready: req.ReadyTx, reply: c.W.Buf[:0]}
	b.w.Type, b.w.Owner = req.Type, b
	b.state = req.State
	if req.Ready != nil {
		b.w.Serves = req.Ready
	}
	c.Host.Blocking()
	c.Tx.Block(c.DB, req.Keys, &b.w)
	if req.Timeout > 0 {
		b.timer = time.AfterFunc(time.Duration(req.Timeout)*time.Millisecond, b.timedOut)
	}
	if c.Client != nil {
		c.Client.SetLastCommand(&c.Cmd.Name)
		if !c.Client.SetBlocked(b) {
			b.Unblock(server.UnblockGone)
		}
	}
}

func (b *Blocked) timedOut() { b.unblock(server.UnblockTimeout, false) }

// Unblock wakes the command unless it was settled already (server.Unblocker): CLIENT UNBLOCK,
// a disconnect.
func (b *Blocked) Unblock(reason server.UnblockReason) bool { return b.unblock(reason, true) }

func (b *Blocked) unblock(reason server.UnblockReason, stopTimer bool) bool {
	if !b.w.Claim() {
		return false
	}
	if stopTimer && b.timer != nil {
		b.timer.Stop()
	}
	b.w.Forget()
	var reply []byte
	if reason != server.UnblockGone {
		w := codec.Writer{Buf: b.reply[:0], RESP3: b.resp3}
		if reason == server.UnblockError {
			w.Error("UNBLOCKED client unblocked via CLIENT UNBLOCK")
		} else {
			w.NullArray()
		}
		reply = w.Buf
		b.e.Account(b.cmd, b.args, 0, reply, b.client)
	}
	b.finish(reply)
	return true
}

// StoreClosed settles a waiter Store.Close claimed (shard.WaitOwner).
func (b *Blocked) StoreClosed() {
	if b.timer != nil {
		b.timer.Stop()
	}
	b.finish(nil)
}

// Served settles a waiter once the transaction that served it committed (shard.WaitOwner).
func (b *Blocked) Served(err error) {
	if err != nil {
		w := codec.Writer{Buf: b.reply[:0], RESP3: b.resp3}
		if errors.Is(err, shard.ErrNoSpace) || errors.Is(err, shard.ErrWriteFailed) {
			w.Error(server.DiskError) // the disk guard refused the commit, as FailReply answers
		} else {
			w.Error("ERR " + err.Error())
		}
		b.reply = w.Buf
	}
	b.finish(b.reply)
}

func (b *Blocked) finish(reply []byte) {
	if b.client != nil {
		b.client.ClearBlocked(b)
	}
	b.host.Unblocked(reply)
}

// serve runs the claimed command against tx, which holds the shards it needs, popping from
// key. The reply waits in b.reply until the commit (Served).
func (b *Blocked) serve(tx *shard.Tx, key []byte) {
	if b.timer != nil {
		b.timer.Stop()
	}
	tx.StartCommand()
	c := &cmds.Ctx{Args: b.args, DB: b.db, W: codec.Writer{Buf: b.reply[:0], RESP3: b.resp3},
		Tx: tx, Client: b.client, Cmd: b.cmd, ReadyKey: key, BlockState: b.state}
	b.e.Run(c)
	b.reply = c.W.Buf
	tx.Served(&b.w)
}

// serveReady serves the blocked commands waiting for keys the transaction wrote since the
// last call, in the order the keys were written; what serving writes (BLMOVE's push) is served
// in turn.
func (e *Executor) serveReady(tx *shard.Tx) {
	for {
		rk, ok := tx.NextReady()
		if !ok {
			return
		}
		e.serveKey(tx, rk)
	}
}

// serveKey serves the waiters of rk, oldest first, while it holds data of a type they wait for
// (or, for a waiter with a ready check, while the check says so: it may be served by the key's
// deletion).
func (e *Executor) serveKey(tx *shard.Tx, rk shard.ReadyKey) {
	for {
		m, ok := tx.Meta(rk.DB, rk.Key)
		w := tx.FirstWaiterFunc(rk, func(w *shard.Waiter) bool {
			if b, _ := w.Owner.(*Blocked); b != nil && b.ready != nil {
				return b.ready(tx, rk.DB, b.args, rk.Key)
			}
			return ok && w.Type == m.Type && (w.Serves == nil || w.Serves(rk.Key, m))
		})
		if w == nil {
			return
		}
		b := w.Owner.(*Blocked)
		if b.dst != nil && !tx.Holds(e.srv.Store.ShardOf(b.dst)) {
			tx.Defer(rk) // it is first in line: nobody behind it may go before
			return
		}
		if !w.Claim() {
			continue // settled meanwhile by its timeout or another shard; it leaves the table
		}
		w.Forget()
		b.serve(tx, rk.Key)
	}
}

// serveDeferred serves ready keys whose first waiter needed shards the transaction that made
// them ready did not hold (shard.ReadyServer). It holds the keys' shards and those of their
// waiters' destinations; the store calls it from a goroutine holding no shard.
func (e *Executor) serveDeferred(keys []shard.ReadyKey) {
	store := e.srv.Store
	var ids []int
	for _, rk := range keys {
		ids = append(ids, rk.Shard)
		for _, w := range store.WaitersOf(rk.Shard, rk.DB, rk.Key) {
			if b, ok := w.Owner.(*Blocked); ok && b.dst != nil {
				ids = append(ids, store.ShardOf(b.dst))
			}
		}
	}
	held := store.Acquire(ids)
	tx := held.Tx()
	for _, rk := range keys {
		e.serveKey(tx, rk)
	}
	e.serveReady(tx)
	_ = held.Release() // a commit error reaches the served waiters (Served)
}
