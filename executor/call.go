package executor

import (
	"errors"
	"sync/atomic"
	"time"

	"shardis/cmds"
	"shardis/codec"
	"shardis/internal/memfree"
	"shardis/pubsub"
	"shardis/server"
	"shardis/shard"
)

// What the network side asks and hands over. The reactor knows no command: it asks the
// executor what a command needs (Command's questions), hands it each one as a Call, and has
// it run there, in a shard (Job), holding several shards (RunHolding), or in its own event
// loop (RunInLoop, Peek, View).

// Command is a command as the reactor sees it: the answers to what it needs to decide where
// and when the command runs. The zero Command names no command.
type Command struct{ c *cmds.Command }

// Lookup returns the command args name (args[0], any case; a subcommand when it has them).
func (e *Executor) Lookup(args [][]byte) Command { return Command{cmds.Lookup(args)} }

// Where a command runs.
type Where uint8

const (
	// InLoop: the connection's event loop runs it as soon as it is dispatched (connection
	// commands; and PUBLISH when nothing before it waits).
	InLoop Where = iota
	// InShard: the shard owning its keys runs it, or a coordinator holding those shards when
	// they are several.
	InShard
	// Alone: a coordinator runs it in order, holding no shard (INFO, CONFIG, …).
	Alone
	// Everywhere: it holds every shard (FLUSHALL, KEYS, …).
	Everywhere
)

// Where says where the command runs; queued says a command before it in the pipeline waits
// for a shard (then nothing runs in the loop ahead of it).
func (c Command) Where(queued bool) Where {
	switch c.c.Exec {
	case cmds.ExecConn:
		return InLoop
	case cmds.ExecServer:
		if !queued && c.c.Has(cmds.TraitLoopWhenIdle) {
			return InLoop // nothing before it waits: running it now is running it in order
		}
		return Alone
	case cmds.ExecAll:
		return Everywhere
	}
	return InShard
}

// Known reports whether the command exists (a container command with an unknown subcommand
// does not).
func (c Command) Known() bool { return c.c != nil && c.c.Runs() }

// AfterPending: it is dispatched only once every earlier command of the pipeline ran.
func (c Command) AfterPending() bool { return c.c != nil && c.c.Has(cmds.TraitAfterPending) }

// AlwaysReplies: it answers even under CLIENT REPLY OFF or SKIP.
func (c Command) AlwaysReplies() bool { return c.c != nil && c.c.Has(cmds.TraitAlwaysReplies) }

// RepliesWithPushes: its reply is pushes, sent even under CLIENT REPLY OFF or SKIP (its
// refusals are not).
func (c Command) RepliesWithPushes() bool { return c.c != nil && c.c.Has(cmds.TraitRepliesWithPushes) }

// TxControl: it runs at once inside MULTI instead of being queued.
func (c Command) TxControl() bool { return c.c.Has(cmds.TraitTxControl) }

// TakesQueue: it ends the connection's MULTI and takes its transaction (EXEC, DISCARD).
func (c Command) TakesQueue() bool { return c.c.Has(cmds.TraitTakesQueue) }

// RunsQueue: it runs the transaction it took (EXEC).
func (c Command) RunsQueue() bool { return c.c.Has(cmds.TraitRunsQueue) }

// PubSub: a pub/sub command, whose reply goes out in order with the connection's messages.
func (c Command) PubSub() bool { return c.c.Has(cmds.FlagPubSub) }

// SubscribedMode: allowed in RESP2's subscribed mode ((P|S)SUBSCRIBE, …); its reply goes out
// before the messages that arrived after it ran.
func (c Command) SubscribedMode() bool { return c.c.Has(cmds.TraitSubscribedMode) }

// KeepsCaching: CLIENT CACHING's flag survives it.
func (c Command) KeepsCaching() bool { return c.c.Has(cmds.TraitKeepsCaching) }

// OwnStep: it runs in a step of its own (see cmds.TraitOwnStep).
func (c Command) OwnStep() bool { return c.c.Has(cmds.TraitOwnStep) }

// MayBlock: it may block (BLPOP, …): what follows it waits until it is answered.
func (c Command) MayBlock() bool { return c.c.Has(cmds.FlagBlocking) }

// NarrowRoute: its shards are a guess and it may run again holding every shard (scripts).
func (c Command) NarrowRoute() bool { return c.c.Has(cmds.TraitNarrowRoute) }

// ReadOnly: it only reads data.
func (c Command) ReadOnly() bool { return c.c.IsReadOnly() }

// Routed: it picks its shards itself (SCAN by its cursor, EXEC by its queue), not by keys.
func (c Command) Routed() bool { return c.c.Route != nil }

// Peekable: the loop may answer it from committed state without its shard (GET).
func (c Command) Peekable() bool { return c.c.Peek != nil }

// Viewable: the loop may answer it through a read-only view of its shard: a keyed read that
// routes by its keys and reads no key it does not declare, or a write that tries a view first
// (cmds.TraitTriesView) and goes to its shard when it writes.
func (c Command) Viewable() bool {
	cmd := c.c
	return cmd.Exec == cmds.ExecKeyed && cmd.Route == nil && (cmd.IsReadOnly() || cmd.Has(cmds.TraitTriesView)) &&
		!cmd.Has(cmds.TraitReadsUndeclaredKeys)
}

// Hold reports whether cmd, sent by cl, must wait before it is admitted, and so stay in the
// input: CLIENT PAUSE holds it (until is when the pause ends, unix ms), or the store is still
// opening and it needs a shard (wake, when not nil, is called when loading ends). queued says
// a command before it in the pipeline waits for a shard.
func (e *Executor) Hold(cmd Command, args [][]byte, cl *server.Client, queued bool, nowMs int64, wake func()) (held bool, until int64) {
	c := cmd.c
	if c == nil {
		return false, 0
	}
	if c.Has(cmds.TraitAfterPending) && queued {
		return true, 0 // dispatched again once the batch ran (the loop reads on after a batch)
	}
	if !c.Runs() {
		return false, 0
	}
	// A pause holds every command (ALL) or those that may write (WRITE): by the flags the
	// call runs with (a no-writes script runs), an EXEC by its queued commands'.
	if pausing, until := e.srv.Paused(true, nowMs); pausing {
		all, _ := e.srv.Paused(false, nowMs)
		if all || c.Has(cmds.TraitRunsQueue) && cl.Multi != nil && cl.Multi.MayWrite || e.mayWrite(cmd, args, cl) {
			// A busy script's refusal comes before the pause, as in Redis: admission answers BUSY.
			if !c.Has(cmds.FlagAllowBusy) && e.srv.Busy.Error() != "" {
				cl.SetPauseHeld(false)
				return false, 0
			}
			// A blocked client for INFO and CLIENT LIST, whose command is the one it sent,
			// as Redis shows a postponed client.
			cl.SetPauseHeld(true)
			cl.Touch(&c.Name, nowMs)
			return true, until
		}
	}
	cl.SetPauseHeld(false)
	// While the store opens, a command allowed then (the loading flag) that needs a shard
	// (WATCH, EXEC) waits for it in the input: the shards run once it is open.
	if c.Has(cmds.FlagLoading) && c.NeedsShard() && e.srv.Loading() &&
		(wake == nil || e.srv.WaitLoaded(wake)) {
		return true, 0
	}
	return false, 0
}

// mayWrite reports whether cl's call of cmd with args may write or be replicated, by the
// flags it runs with (a script's or function's declared ones, see cmds.Command.CallFlags).
func (e *Executor) mayWrite(cmd Command, args [][]byte, cl *server.Client) bool {
	c := cmd.c
	if c.CallFlagsOf == nil {
		return c.MayWrite(nil)
	}
	ctx := cmds.Ctx{Args: args, DB: cl.DB, Client: cl, Keyspace: &e.keyspace, Cmd: c}
	return c.MayWrite(&ctx)
}

// AdmitClient is Admit for a connection's own command (FromClient).
func (e *Executor) AdmitClient(cmd Command, args [][]byte, cl *server.Client) string {
	return e.Admit(&cmds.AdmitRequest{From: cmds.FromClient, Cmd: cmd.c, Args: args, Client: cl})
}

// Admitted records that cl's admitted command is the last it sent (CLIENT LIST's cmd=).
func (e *Executor) Admitted(cmd Command, cl *server.Client, nowMs int64) {
	cl.Touch(&cmd.c.Name, nowMs)
}

// Queue queues cl's admitted command inside its MULTI.
func (e *Executor) Queue(cmd Command, args [][]byte, cl *server.Client) {
	cl.Multi.Queue(args, e.mayWrite(cmd, args, cl), cmd.c.Exec == cmds.ExecConn)
	cl.Publish()
}

// Monitors reports whether MONITOR clients are to see cl's command as it is dispatched: there
// are some, and it is not one they never see (admin commands) or see later (EXEC, shown after
// the commands it ran; a script, shown as it starts running).
func (e *Executor) Monitors(cmd Command) bool {
	return e.srv.Clients.HasMonitors() && Monitored(cmd.c) && !cmd.c.HasAny(cmds.TraitRunsQueue|cmds.FlagSkipMonitor)
}

// Monitor shows cl's command to MONITOR clients (secret arguments redacted).
func (e *Executor) Monitor(cmd Command, args [][]byte, cl *server.Client) {
	e.FeedMonitors(cl, cl.DB, cmd.c.LoggedArgs(args))
}

// Shard returns the one shard cmd's args live in (0 for a keyless command), -1 when they are
// several or the command routes itself to several. scratch is reused for the keys.
func (e *Executor) Shard(cmd Command, args [][]byte, db int, cl *server.Client, multi *server.Multi, scratch *[][]byte) int {
	if cmd.c.Route != nil {
		ctx := cmds.Ctx{Args: args, DB: db, Client: cl, Keyspace: &e.keyspace, Cmd: cmd.c, Multi: multi}
		if ids := cmd.c.Route(&ctx, e.srv.Store.NumShards()); len(ids) == 1 {
			return ids[0]
		}
		return -1
	}
	return e.OneShard(cmd.c, args, scratch)
}

// ShardsOf returns the shards a coordinated command must hold (nil: none).
func (e *Executor) ShardsOf(c *Call, cl *server.Client) []int {
	return e.Shards(c.Cmd.c, c.Args, c.DB, cl, c.Multi)
}

// NumShards returns the store's shard count.
func (e *Executor) NumShards() int { return e.srv.Store.NumShards() }

// LoopReads says which reads the event loops may answer themselves, by the keyspace events
// enabled: a Peek reports none (a key miss, a lazy expiry), so it needs them all off; a view
// leaves a lazy expiry to the shard but would publish a key miss after the reply, so it needs
// "keymiss" off.
func (e *Executor) LoopReads() (peek, view bool) {
	events := e.srv.Store.EventClasses()
	return events == 0, events&shard.EventKeyMiss == 0
}

// StopScripts ends every running script of the server: one that never ends would hold its
// batch for ever.
func (e *Executor) StopScripts() { cmds.StopScripts(e.srv) }

// ReplyStream is the rest of a reply too big to build at once, which the reactor sends piece
// by piece (see shard.Stream). Whoever holds it closes it.
type ReplyStream interface {
	// Fill appends the next elements to w, up to about max bytes, and reports whether more
	// remain.
	Fill(w *codec.Writer, max int) (more bool, err error)
	Close()
}

// Call is one client command as it runs: what the reactor hands in, and the reply it gets
// back. The reactor owns it; the executor uses it only while running it, from the goroutine
// running it. Args must be current when it runs (the reactor moves the arguments it parsed
// into its own buffer after dispatch).
type Call struct {
	Cmd   Command
	Args  [][]byte
	DB    int
	RESP3 bool
	// Multi is, for a TxControl command, the connection's MULTI at dispatch, or the
	// transaction EXEC or DISCARD took (cmds.Ctx.Multi).
	Multi *server.Multi
	// Caching is CLIENT CACHING's flag as it stood at dispatch.
	Caching bool
	// Suppress: the reply is not sent (CLIENT REPLY OFF/SKIP), so it is never streamed.
	Suppress bool
	// Origin receives the messages the command's keyspace events make for the connection's
	// own subscriptions; Host, the reply of a command that blocks. Both may be nil.
	Origin pubsub.Origin
	Host   cmds.BlockHost

	// Reply is the reply, written from Reply[:0]; Stream, when set, is the rest of it, which
	// the holder sends and closes.
	Reply  []byte
	Stream ReplyStream

	// monitored: MONITOR was shown the command as it first started (a script command, which
	// Redis shows before the commands it runs; not again when it runs a second time).
	monitored bool
}

// setStream sets c.Stream to st, nil when st is (a nil *shard.Stream is not a nil interface).
func (c *Call) setStream(st *shard.Stream) {
	if st == nil {
		c.Stream = nil
	} else {
		c.Stream = st
	}
}

// Frame is the scratch a caller keeps to run commands without allocating: the context a
// command's function receives escapes, so a fresh one per command would be allocated. One
// goroutine at a time uses a Frame.
type Frame struct {
	ctx     cmds.Ctx
	peekBuf []byte
	// budget, when set, bounds the reply bytes the calls run with this frame may produce
	// (see OutputBudget): unreported is what they produced since the frame last reported to
	// it, which it does once that reaches slice.
	budget     *OutputBudget
	unreported int64
	slice      int64
	// replyLimit, without a budget, is the Ctx.ReplyLimit of the calls run with this frame
	// (LimitReplies).
	replyLimit int64
	// ended is when the last call Peek or View answered with this frame finished: the clock
	// of the loop's next command of the same input (TakeClock), which saves reading the clock
	// twice per command answered in the loop.
	ended time.Time
}

// TakeClock returns the clock of the loop's next command: when the last command Peek or View
// answered with f ended, if one did since the last TakeClock or ResetClock, else now.
func (f *Frame) TakeClock() time.Time {
	t := f.ended
	if t.IsZero() {
		return time.Now()
	}
	f.ended = time.Time{}
	return t
}

// ResetClock forgets when the last command ended: the loop calls it before it parses new
// input, whose first command must read the clock afresh.
func (f *Frame) ResetClock() { f.ended = time.Time{} }

// LimitReplies sets the size past which a reply made with f would get its client dropped
// (Ctx.ReplyLimit; 0: none), for a frame without a budget: the loop's, whose caller checks
// each reply once made.
func (f *Frame) LimitReplies(n int64) { f.replyLimit = n }

// OutputBudget bounds the reply bytes a connection's commands may produce before they are
// sent: client-output-buffer-limit's hard limit, less what the connection already holds. The
// jobs and the coordinator of one pipeline share it; once it is spent, the commands after the
// one that spent it do not run (Redis stops reading a client it is to close for its output),
// and the caller drops the connection. The frames running the commands add their replies'
// sizes in plain fields and report to the shared count only every slice bytes, so a command
// costs no atomic operation while the limit is far.
type OutputBudget struct {
	used  atomic.Int64
	limit int64
}

// Reset starts the budget of a pipeline: the connection holds used bytes, limit is the most
// it may hold.
func (b *OutputBudget) Reset(used, limit int64) {
	b.used.Store(used)
	b.limit = limit
}

// Used returns the bytes reported so far.
func (b *OutputBudget) Used() int64 { return b.used.Load() }

// Spent reports whether the bytes reported reached the limit.
func (b *OutputBudget) Spent() bool { return b.used.Load() >= b.limit }

// SetBudget makes the calls run with f count against b (nil: no budget), reporting every
// slice bytes (0: after every reply). A frame's calls may produce up to slice bytes past the
// limit before they stop, so a caller sharing b between n frames gives each a slice of at
// most a fraction of b's room divided by n.
func (f *Frame) SetBudget(b *OutputBudget, slice int64) {
	f.budget, f.unreported, f.slice = b, 0, slice
}

// spend counts a reply of n bytes against the frame's budget (set) and reports whether the
// budget is spent: the calls after this one must not run.
func (f *Frame) spend(n int) bool {
	f.unreported += int64(n)
	if f.unreported < f.slice {
		return false
	}
	used := f.budget.used.Add(f.unreported)
	f.unreported = 0
	return used >= f.budget.limit
}

// prepare fills f's context for c run by cl against tx (nil for none).
func (f *Frame) prepare(c *Call, cl *server.Client, tx *shard.Tx) *cmds.Ctx {
	ctx := &f.ctx
	*ctx = cmds.Ctx{
		Args:    c.Args,
		DB:      c.DB,
		W:       codec.Writer{Buf: c.Reply[:0], RESP3: c.RESP3},
		Tx:      tx,
		Client:  cl,
		Cmd:     c.Cmd.c,
		Multi:   c.Multi,
		Caching: c.Caching,
		Origin:  c.Origin,
	}
	if b := f.budget; b != nil {
		ctx.ReplyLimit = int(max(1, b.limit-b.used.Load()-f.unreported))
	} else {
		ctx.ReplyLimit = int(f.replyLimit)
	}
	return ctx
}

// maxKeptPeekBuf is the largest value read buffer a frame keeps for the next Peek.
const maxKeptPeekBuf = 64 << 10

// done lets go of what the context points into once a call ran: a frame lives as long as its
// connection, and the arguments it kept (one slice of a 512 MB SET's input is enough) or a
// big reply would stay in memory until the next command.
func (f *Frame) done() {
	f.ctx.Args, f.ctx.W.Buf, f.ctx.PeekBuf, f.ctx.Stream = nil, nil, nil, nil
	if n := cap(f.peekBuf); n > maxKeptPeekBuf {
		f.peekBuf = nil
		memfree.Released(n) // and the reply made from it, once written
	}
}

// run runs c against tx (nil: a command that holds no shard) and reports whether it strayed
// (cmds.Ctx.Strayed): its reply is to be dropped, it runs again holding every shard.
func (e *Executor) run(f *Frame, c *Call, cl *server.Client, tx *shard.Tx) (strayed bool) {
	ctx := f.prepare(c, cl, tx)
	ctx.Streamable = tx != nil && !c.Suppress
	if tx != nil && c.Host != nil {
		ctx.Host = c.Host // a command of the connection's own may block
	}
	if !c.monitored && ctx.Cmd.Has(cmds.FlagSkipMonitor) && e.srv.Clients.HasMonitors() && Monitored(ctx.Cmd) {
		c.monitored = true
		e.FeedMonitors(cl, c.DB, ctx.Cmd.LoggedArgs(c.Args))
	}
	e.Run(ctx)
	if ctx.Block != nil {
		return false // blocked: its reply comes through Host, maybe already did
	}
	c.Reply = ctx.W.Buf
	c.setStream(ctx.Stream)
	strayed = ctx.Strayed
	f.done()
	return strayed
}

// RunInLoop runs c, a command that holds no shard, in the calling goroutine.
func (e *Executor) RunInLoop(f *Frame, c *Call, cl *server.Client) { e.run(f, c, cl, nil) }

// Peek answers c in the calling event loop from committed state (a Peekable command). It
// reports false, having written nothing, when only the shard can answer; with late (the rest
// of the batch ran first) it always answers. c's arguments may still point into the network
// buffer: a Peek copies what it replies.
func (e *Executor) Peek(f *Frame, c *Call, cl *server.Client, start time.Time, late bool) bool {
	ctx := f.prepare(c, cl, nil)
	ctx.PeekBuf, ctx.NowMs, ctx.LatePeek = f.peekBuf, start.UnixMilli(), late
	ok, end := e.peek(ctx, start)
	f.ended = end
	f.peekBuf = ctx.PeekBuf
	if ok {
		c.Reply = ctx.W.Buf
	}
	f.done()
	return ok
}

// View answers c in the calling event loop through a read-only view of shard id's committed
// state (a Viewable command). It reports false, with nothing written, when the command needs
// its shard. start is when the loop took the command (its clock, as for Peek).
func (e *Executor) View(f *Frame, c *Call, cl *server.Client, id int, start time.Time) bool {
	ctx := f.prepare(c, cl, nil)
	ctx.Streamable = !c.Suppress
	ok, end := e.view(ctx, id, start)
	f.ended = end
	if ok {
		c.Reply = ctx.W.Buf
		c.setStream(ctx.Stream)
	} else {
		c.Reply = ctx.W.Buf[:0]
	}
	f.done()
	return ok
}

// Job is the part of a pipeline step that runs in one shard: its calls, in order, in the
// shard's transaction (a shard.Job). The reactor keeps one per shard per connection and fills
// it for each step.
type Job struct {
	e      *Executor
	shard  int
	client *server.Client
	owner  JobOwner
	calls  []*Call
	frame  Frame
	// strayed is the index in calls of the call that strayed, -1 for none.
	strayed int
}

// JobOwner learns that a job's group committed (err: it did not, and no call of the job
// took effect); strayed is the index of the call that strayed (it and the calls after it did
// not run), -1 for none.
type JobOwner interface {
	JobDone(err error, strayed int)
}

// NewJob returns the job of cl's commands in shard id, which reports to owner. The caller
// keeps it in place (a field or a slice element it does not copy afterwards), so a connection
// makes its jobs once, with no allocation of their own.
func (e *Executor) NewJob(id int, cl *server.Client, owner JobOwner) Job {
	return Job{e: e, shard: id, client: cl, owner: owner, strayed: -1}
}

// Reset empties the job for the next step.
func (j *Job) Reset() {
	clear(j.calls)
	j.calls = j.calls[:0]
	j.strayed = -1
}

// Add appends c to the job's calls.
func (j *Job) Add(c *Call) { j.calls = append(j.calls, c) }

// Len returns how many calls the job has.
func (j *Job) Len() int { return len(j.calls) }

// Post hands the job to its shard. fromShard says the caller is a shard goroutine, which
// must not block on another shard's full inbox: the post then waits in a goroutine of its
// own. Once posted, the job belongs to the shard until its owner hears JobDone.
func (j *Job) Post(fromShard bool) {
	sh := j.e.srv.Store.Shard(j.shard)
	if !fromShard {
		sh.Post(j)
	} else if !sh.TryPost(j) {
		go sh.Post(j)
	}
}

// SetBudget makes the job's calls count their replies against b (nil: none); see
// Frame.SetBudget.
func (j *Job) SetBudget(b *OutputBudget, slice int64) { j.frame.SetBudget(b, slice) }

// Run runs the job's calls in the shard (shard.Job). It stops at a call that strayed, and
// after the call that spent the job's output budget (the rest do not run).
func (j *Job) Run(tx *shard.Tx) {
	f := &j.frame
	for n, c := range j.calls {
		if n > 0 {
			tx.StartCommand()
		}
		if j.e.run(f, c, j.client, tx) {
			j.strayed = n
			return
		}
		if f.budget != nil && f.spend(len(c.Reply)) {
			return
		}
	}
}

// Done is called once the group holding the job committed (shard.Job).
func (j *Job) Done(err error) { j.owner.JobDone(err, j.strayed) }

// RunHolding runs calls, in order, holding shards, and commits them as one atomic batch
// (nil shards: the one call runs holding none). It stops at a call that strayed, whose
// writes were rolled back: what ran before it commits; strayed is its index (-1 for none),
// and it and the calls after it run again, holding every shard. It stops too after the call
// that spent f's output budget (SetBudget): the rest do not run. err says the commit failed:
// no call took effect (FailReply answers those that did not block).
func (e *Executor) RunHolding(f *Frame, shards []int, calls []*Call, cl *server.Client) (strayed int, err error) {
	if shards == nil {
		for _, c := range calls { // one: a command that holds no shard has a step of its own
			e.run(f, c, cl, nil)
		}
		return -1, nil
	}
	held := e.srv.Store.Acquire(shards)
	tx := held.Tx()
	strayed = -1
	for i, c := range calls {
		tx.StartCommand()
		if e.run(f, c, cl, tx) {
			strayed = i
			break
		}
		if f.budget != nil && f.spend(len(c.Reply)) {
			break
		}
	}
	return strayed, held.Release()
}

// FailReply replaces c's reply with the error of a failed commit: Redis's MISCONF when the
// disk guard refused it, else the error.
func FailReply(c *Call, err error) {
	if c.Stream != nil {
		c.Stream.Close()
		c.Stream = nil
	}
	w := codec.Writer{Buf: c.Reply[:0], RESP3: c.RESP3}
	if errors.Is(err, shard.ErrNoSpace) || errors.Is(err, shard.ErrWriteFailed) {
		w.Error(server.DiskError) // the disk guard refused the commit
	} else {
		w.Error("ERR " + err.Error())
	}
	c.Reply = w.Buf
}
