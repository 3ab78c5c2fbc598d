// Package executor runs commands. It is the one place a command's Run is called, whoever asks:
// a connection's batch (the reactor), EXEC's queued commands, a blocked client being served,
// binlog replay. Running a command means: guard it (a panic becomes an error reply and fails
// its transaction, never the process), and account for it (INFO commandstats and errorstats,
// keyspace hits and misses, SLOWLOG, MONITOR), as Redis's call() does.
package executor

import (
	"fmt"
	"log"
	"runtime/debug"
	"strconv"
	"time"

	"shardis/cmds"
	// The families that administer the server register their commands from a package of
	// their own; the executor, which runs every command, makes sure they are in the table.
	_ "shardis/admin"
	"shardis/codec"
	"shardis/server"
	"shardis/shard"
)

// Executor runs commands against the server's store. It holds no per-command state: every
// method may be called from any goroutine, each with its own Ctx.
type Executor struct {
	srv *server.Server
	// keyspace is what the commands of the data see of srv (cmds.Ctx.Keyspace); the rest
	// of the server is handed only to a command's RunServer.
	keyspace server.Keyspace
}

// New returns the executor of srv. It serves the store's blocked commands (see blocking.go).
func New(srv *server.Server) *Executor {
	e := &Executor{srv: srv, keyspace: srv.KeyspaceView()}
	if srv.Store != nil {
		srv.Store.SetReadyServer(e.serveDeferred)
	}
	return e
}

// Server returns the server state the executor runs commands with.
func (e *Executor) Server() *server.Server { return e.srv }

// Run runs c.Cmd with c (Args, DB, W, Tx, Client and Streamable set by the caller) and records
// its statistics. c.Keyspace and c.Exec are filled in here. With a transaction, only read commands
// count keyspace hits and misses, as in Redis.
//
// A command that blocks (c.Block) is registered as a waiter and recorded only once it is
// woken, as Redis does; c.Host then gets its reply. After a command outside a transaction,
// Run serves the blocked commands waiting for the keys it wrote, in the same transaction.
// A script that strayed (Ctx.Strayed) is not recorded: it runs again.
func (e *Executor) Run(c *cmds.Ctx) {
	c.Keyspace, c.Exec = &e.keyspace, e
	start := time.Now()
	if c.Tx != nil {
		c.Tx.TakeLookups() // count this command's lookups only
		defer c.Tx.SetReadLookups(c.Tx.SetReadLookups(c.Cmd.IsReadOnly()))
		defer c.Tx.SetTouch(c.Tx.SetTouch(c.Cmd.Touches(c.Client != nil && c.Client.NoTouch)))
		if c.Origin != nil { // EXEC's and scripts' commands keep their caller's
			defer c.Tx.SetOrigin(c.Tx.SetOrigin(shard.EventOrigin{Of: c.Origin, Reply: &c.W}))
		}
	}
	mark := len(c.W.Buf) // EXEC's commands append to its reply
	if c.Tx == nil {
		e.remember(c, true)
	}
	// The commands EXEC and scripts run write on behalf of the caller's command.
	top := c.Tx != nil && !c.InTransaction
	if top {
		tail, _ := c.Host.(shard.ReplyTail) // the reactor's slot; nil for other callers
		c.Tx.SetWriter(clientID(c.Client), tail)
	}
	// A script command (skip_monitor) inside EXEC is shown before the commands it runs, as
	// Redis shows it; the reactor shows one of its own when it dispatches it.
	feed := (c.InTransaction || c.Cmd.Has(cmds.TraitRunsQueue)) && e.srv.Clients.HasMonitors() && Monitored(c.Cmd)
	if feed && c.Cmd.Has(cmds.FlagSkipMonitor) {
		e.FeedMonitors(c.Client, c.DB, c.Cmd.LoggedArgs(c.Args))
	}
	e.runGuarded(c)
	if top {
		c.Tx.SetWriter(0, nil)
		if c.Strayed {
			return // a script that strayed runs again, holding every shard: that run counts
		}
	}
	if c.Tx != nil {
		// After the read, as Redis: the lazy expiry it made invalidates it first.
		e.remember(c, false)
	}
	if c.Block != nil {
		e.block(c)
		return
	}
	d := time.Since(start)
	if c.Tx != nil {
		if hits, misses := c.Tx.TakeLookups(); c.Cmd.IsReadOnly() {
			e.srv.Stats.KeyspaceHits.Add(hits)
			e.srv.Stats.KeyspaceMisses.Add(misses)
		}
	}
	e.Account(c.Cmd, c.Args, d, c.W.Buf[mark:], c.Client)
	// The reactor feeds MONITOR when it dispatches a command; the commands of a transaction
	// are shown as EXEC runs them, then EXEC itself, and a script's as it runs them (from
	// "lua"), each with the database it left, as Redis shows them.
	if feed && !c.Cmd.Has(cmds.FlagSkipMonitor) {
		db := c.DB
		if c.Client != nil && (c.Cmd.Exec == cmds.ExecConn || c.Multi != nil && c.Multi.ChangesConn) {
			db = c.Client.DB // SELECT moved it (EXEC's client owns it while EXEC runs)
		}
		if c.Caller != nil {
			e.feedMonitors(scriptAddr, db, c.Cmd.LoggedArgs(c.Args))
		} else {
			e.FeedMonitors(c.Client, db, c.Cmd.LoggedArgs(c.Args))
		}
	}
	// Blocked clients are served by the write that made their key ready, after the command
	// (after the whole transaction for EXEC's commands), in its transaction.
	if c.Tx != nil && !c.InTransaction && c.ReadyKey == nil {
		e.serveReady(c.Tx)
	}
}

// peek answers c from committed state in the calling event loop (Command.Peek) and records it,
// returning when it ended. It reports false, having written and recorded nothing, when only
// the shard can answer.
func (e *Executor) peek(c *cmds.Ctx, start time.Time) (ok bool, end time.Time) {
	c.Keyspace, c.Exec = &e.keyspace, e
	e.remember(c, true)
	if !c.Cmd.Peek(c) {
		return false, time.Time{}
	}
	end = time.Now()
	e.Account(c.Cmd, c.Args, end.Sub(start), c.W.Buf, c.Client)
	return true, end
}

// view runs the read command c against a read-only view of shard id's committed state, in the
// calling event loop (shard.Store.View). It reports false, with c.W emptied and nothing
// recorded, when the command needed the shard (a write, a lazy expiry, a reply stream) or its
// reads may have straddled a commit: the command must then run in its shard. end is when it
// ended, either way.
func (e *Executor) view(c *cmds.Ctx, id int, start time.Time) (ok bool, end time.Time) {
	store := e.srv.Store
	tx := store.ViewAt(id, start)
	c.Tx, c.Keyspace, c.Exec = tx, &e.keyspace, e
	tx.SetReadLookups(c.Cmd.IsReadOnly())
	tx.SetTouch(c.Cmd.Touches(c.Client != nil && c.Client.NoTouch))
	e.remember(c, true)
	e.runGuarded(c)
	end = time.Now()
	d := end.Sub(start)
	hits, misses := tx.TakeLookups()
	if !store.EndView(tx) {
		if c.Stream != nil {
			c.Stream.Close()
			c.Stream = nil
		}
		c.W.Buf = c.W.Buf[:0]
		return false, end
	}
	if c.Cmd.IsReadOnly() { // a write's lookups are not counted, as Redis's lookupKeyWrite
		e.srv.Stats.KeyspaceHits.Add(hits)
		e.srv.Stats.KeyspaceMisses.Add(misses)
	}
	e.Account(c.Cmd, c.Args, d, c.W.Buf, c.Client)
	return true, end
}

// remember tells the tracking table the keys c reads when its client tracks its reads (CLIENT TRACKING, default mode, as CLIENT CACHING allows). A read answered in an event
// loop (immediate: a view or a peek) is remembered at once, before it reads: a write
// committed after the read then finds the client in the table, and one committed before it at
// worst invalidates a value the client already has fresh (the push goes out after the reply).
// A read in a shard's transaction is recorded after it ran, as Redis does, and remembered in
// order with the transaction's writes when it commits (Tx.TrackRead): no other write of its
// keys can come between. A read run by a script remembers the script's declared keys, as
// Redis 7.0 does (it looks at the caller's command), not the keys the read names; EVAL_RO
// itself remembers nothing (TraitNotTracked).
func (e *Executor) remember(c *cmds.Ctx, immediate bool) {
	cl := c.Client
	if !c.Cmd.IsReadOnly() || cl == nil || cl.Track == nil || c.Cmd.Has(cmds.TraitNotTracked) ||
		!cl.Track.Remembers(c.Caching) {
		return
	}
	keys := c.Cmd.KeyArgs(c.Args)
	if c.Caller != nil {
		keys = c.Caller.Cmd.KeyArgs(c.Caller.Args)
	}
	if immediate {
		e.srv.Tracking.Remember(cl.Track, keys)
	} else {
		c.Tx.TrackRead(keys, cl.ID, cl.Track)
	}
}

func clientID(cl *server.Client) int64 {
	if cl == nil {
		return 0
	}
	return cl.ID
}

// Account records one run of cmd that took d and replied reply: commandstats, the error count
// and the slowlog.
func (e *Executor) Account(cmd *cmds.Command, args [][]byte, d time.Duration, reply []byte, cl *server.Client) {
	// Also errorstats by prefix, the latency histogram (latency-tracking) and the latency
	// monitor's command / fast-command events (latency-monitor-threshold).
	srv := e.srv
	failed := len(reply) > 0 && reply[0] == '-'
	srv.Stats.CommandsProcessed.Add(1)
	cmd.Record(d, failed)
	if failed {
		srv.Stats.ErrorReplies.Add(1)
		srv.Errors.Count(reply)
	}
	if srv.Config.LatencyTracking() {
		cmd.RecordLatency(d)
	}
	if limit := srv.Config.LatencyThreshold(); limit > 0 && d.Milliseconds() >= limit {
		event := "command"
		if cmd.Has(cmds.FlagFast) {
			event = "fast-command"
		}
		srv.Latency.Add(event, d.Milliseconds(), time.Now().Unix())
	}
	if cmd.Has(cmds.FlagSkipSlowlog) {
		return
	}
	if limit := srv.Config.SlowlogSlowerThan(); limit >= 0 && d.Microseconds() >= limit {
		srv.Slowlog.Add(cmd.LoggedArgs(args), d, cl, srv.Config.SlowlogMaxLen())
	}
}

// refused records a command refused before it ran (unknown, wrong arity, NOAUTH, a queue-time
// error): cmd, when known, counts a rejected call, the error count goes up and errorstats
// counts msg's code.
func (e *Executor) refused(cmd *cmds.Command, msg string) {
	if cmd != nil {
		cmd.Reject()
	}
	e.srv.Stats.ErrorReplies.Add(1)
	e.srv.Errors.Count([]byte(msg))
}

// runGuarded runs the command; a panic (a bug, never a client's fault) becomes an error reply
// and fails the command's transaction, so the half-done writes of the group are not committed
// and every command of the group is answered with the error: nothing unacknowledged lands.
func (e *Executor) runGuarded(c *cmds.Ctx) {
	defer func() {
		if r := recover(); r != nil {
			log.Printf("panic in %s: %v\n%s", c.Cmd.Name, r, debug.Stack())
			err := fmt.Errorf("internal error in '%s'", c.Cmd.Name)
			if c.Tx != nil {
				c.Tx.Fail(err)
			}
			if c.Stream != nil {
				c.Stream.Close()
				c.Stream = nil
			}
			c.W.Buf = c.W.Buf[:0]
			c.W.Error("ERR " + err.Error())
		}
	}()
	if c.Cmd.RunServer != nil {
		c.Cmd.RunServer(c, e.srv)
		return
	}
	c.Cmd.Run(c)
}

// ---- MONITOR ----

// Monitored reports whether MONITOR shows cmd at all: admin commands are never shown, as in
// Redis (secret arguments are shown redacted: Command.LoggedArgs); a script command
// (skip_monitor) is shown before it runs, where the others are shown once they ran.
func Monitored(cmd *cmds.Command) bool {
	return cmd != nil && !cmd.Has(cmds.FlagAdmin)
}

// scriptAddr is where MONITOR says a script's commands come from, as Redis.
const scriptAddr = "lua"

// FeedMonitors sends the command args, run by cl in db, to every MONITOR client.
func (e *Executor) FeedMonitors(cl *server.Client, db int, args [][]byte) {
	addr := ""
	if cl != nil {
		addr = cl.Addr
	}
	e.feedMonitors(addr, db, args)
}

// feedMonitors sends the command args, run from addr in db, to every MONITOR client.
func (e *Executor) feedMonitors(addr string, db int, args [][]byte) {
	line := monitorLine(addr, db, args)
	for _, m := range e.srv.Clients.Monitors() {
		_ = m.Write(line)
	}
}

// monitorLine formats a command for MONITOR as Redis does.
func monitorLine(addr string, db int, args [][]byte) []byte {
	now := time.Now()
	b := []byte{'+'}
	b = strconv.AppendInt(b, now.Unix(), 10)
	b = append(b, '.')
	us := strconv.Itoa(now.Nanosecond() / 1000)
	for range 6 - len(us) {
		b = append(b, '0')
	}
	b = append(b, us...)
	b = append(b, " ["...)
	b = strconv.AppendInt(b, int64(db), 10)
	b = append(b, ' ')
	b = append(b, addr...)
	b = append(b, ']')
	for _, a := range args {
		b = append(b, ' ')
		b = codec.AppendRepr(b, a)
	}
	return append(b, '\r', '\n')
}
