package reactor

import (
	"slices"
	"sync/atomic"
	"time"

	"github.com/valyala/bytebufferpool"
	"golang.org/x/sys/unix"

	"shardis/executor"
	"shardis/pubsub"
)

// A batch is the commands parsed from one OnTraffic call of one connection. A connection has
// at most one batch in flight, which keeps its replies in order and leaves what arrives
// meanwhile in gnet's input buffer.
//
// The batch runs as a sequence of steps. A fanout step is a run of commands that each live in
// one shard: the batch posts one job per shard involved, each shard runs its commands in
// order, and the last to finish starts the next step. A coordinated step is one command that
// needs several shards (or all of them, or none but must run after what precedes it): a
// goroutine of its own acquires the shards in ascending order, runs it, commits atomically
// and goes on. When the last step finishes the batch is marked done and the connection's loop
// is woken to write the replies.
//
// Ownership: the loop owns the batch while building it and after done is set; in between,
// each slot is owned by the goroutine running its step.
type batch struct {
	conn    *conn
	arena   []byte   // copy of the input the arguments point into
	argv    [][]byte // every argument of every slot
	adopted int      // argv[:adopted] point into arena (see conn.adopt)
	slots   []slot
	steps   []step
	// jobs has one job per shard, made when the connection first needs that shard (job) and
	// reused; a job's slots are the ones of the current step.
	jobs    []*shardJob
	step    int
	flushed int // slots whose replies the loop has written (see conn.flush)
	// queued: a slot of this batch waits for a shard, so later commands must wait too (a
	// Peek may answer a read in the loop only while nothing before it is pending).
	queued bool
	// loop is the executor's scratch for the commands the loop answers itself (peek, view,
	// connection commands); coord is the coordinator's, and coordCalls its list of calls.
	loop       executor.Frame
	coord      *executor.Frame // made by the first coordinated step: most connections have none
	coordCalls []*executor.Call
	coordAt    []int    // the slot of each of coordCalls
	keyBuf     [][]byte // scratch for the key arguments when routing (executor.OneShard)
	// hasLate: some slot is a late read (slot.late); laterWrite is plan's scratch for them.
	hasLate    bool
	laterWrite []bool

	// pending counts what the current step still waits for: its jobs (a fanout), its
	// coordinator (a coordinated step), and a blocked command (see slot.Blocking).
	pending atomic.Int32
	done    atomic.Bool // every step finished; set before the loop is woken
	// abandon: the client left while a command of the batch was blocked; the rest of the
	// batch is dropped unrun, as Redis never reads what followed it. Written before pending
	// is decremented, read by whoever brings it to zero.
	abandon bool
	// strayedAt is the slot whose command strayed (Ctx.Strayed) in the current step, -1 for
	// none: it and the step's slots after it, which did not run, run again holding every
	// shard (rerunWide). Written by the one goroutine running that slot before pending is
	// decremented, read by whoever brings it to zero.
	strayedAt int

	// Output held for the client (see output.go). lim is the connection's
	// client-output-buffer-limit when the batch began; held, the replies the loop made for
	// it while dispatching; limited, its steps count their replies against budget (a hard
	// limit). Once the batch is done, unsent is what its slots hold that flush did not
	// write yet (counted: it was summed). Loop-owned, but for budget.
	lim     outputLimit
	held    int64
	limited bool
	budget  executor.OutputBudget
	counted bool
	unsent  int64

	// direct: the reply may be written by the goroutine that finishes the batch
	// (writeDirect); decided by the loop when the batch starts. rest is what the socket did
	// not take of them, which the loop writes.
	direct bool
	rest   []byte
}

// slot is one command of a batch and its reply. Its Call is what the executor runs and
// answers into: the command, its arguments (current once adopt ran), database, protocol,
// MULTI state, CLIENT CACHING flag, whether the reply is suppressed (CLIENT REPLY OFF/SKIP),
// the reply and, when set, the stream that is the rest of it (the loop sends it piece by piece,
// see pump, and closes it; whoever drops the slot unsent must close it).
type slot struct {
	executor.Call
	argStart, argEnd int
	shard            int  // owning shard of a single-shard command, -1 otherwise
	finished         bool // already has its reply (ran in the loop, or was refused)
	blocked          bool // the command blocked: its reply comes through Unblocked
	late             bool // a read answered by Peek in the loop once the batch's steps are done
	// after are frames that follow the reply, sent even when the reply is suppressed: the
	// invalidations the command's own writes cause for the connection (AfterReply).
	after []byte
	// captured is how many bytes of reply are pub/sub messages the command made for the
	// connection's own subscriptions (Capture), inserted where Redis writes them.
	captured int
	b        *batch
}

// step is a range of slots run together.
type step struct {
	from, to    int
	coordinated bool  // one slot that runs in a coordinator goroutine
	shards      []int // shards a coordinated step holds
	// narrow: a coordinated step of commands with narrow routes (cmds.TraitNarrowRoute),
	// which it shares with no other kind. narrowShard: a fanout step holds a command with a
	// narrow route in this shard (-1: none), so only commands of that shard may follow it
	// in the step. Either way, when such a command strays, none of those after it ran yet:
	// they run again with it, holding every shard (rerunWide).
	narrow      bool
	narrowShard int
}

// shardJob is the part of a fanout step that runs in one shard: the executor's job of the
// step's calls there, and the slots they are.
type shardJob struct {
	executor.Job
	b     *batch
	slots []int
}

// Buffers a batch keeps for reuse are dropped when one request made them larger than this,
// so a single big value does not stay pinned to the connection.
const (
	maxKeptArena = 1 << 20
	maxKeptReply = 64 << 10
	maxKeptArgv  = 1 << 14 // arguments
)

func (b *batch) reset() {
	b.arena = b.arena[:0]
	if cap(b.arena) > maxKeptArena {
		b.arena = nil
	}
	clear(b.argv) // let go of the input they point into (a partial buffer of the connection)
	b.argv = b.argv[:0]
	if cap(b.argv) > maxKeptArgv {
		b.argv = nil
	}
	b.adopted = 0
	for i := range b.slots {
		if cap(b.slots[i].Reply) > maxKeptReply {
			b.slots[i].Reply = nil
		}
		b.slots[i].Reply = b.slots[i].Reply[:0]
		b.slots[i].after = b.slots[i].after[:0]
		b.slots[i].Stream = nil
		b.slots[i].Args, b.slots[i].Multi = nil, nil // pin neither the input nor a transaction
	}
	b.slots = b.slots[:0]
	b.steps = b.steps[:0]
	b.flushed = 0
	b.lim, b.held, b.limited, b.counted, b.unsent = outputLimit{}, 0, false, false, 0
	b.queued, b.hasLate, b.abandon = false, false, false
	b.strayedAt = -1
	b.step = 0
	b.done.Store(false)
	b.direct = false
	if cap(b.rest) > maxKeptReply {
		b.rest = nil
	}
	b.rest = b.rest[:0]
}

// closeStreams closes the streams of the slots not yet written. It may run twice, from the
// loop's OnClose and from the batch's end (Stream.Close is idempotent).
func (b *batch) closeStreams() {
	for i := b.flushed; i < len(b.slots); i++ {
		if st := b.slots[i].Stream; st != nil {
			st.Close()
		}
	}
}

func (b *batch) args(s *slot) [][]byte { return b.argv[s.argStart:s.argEnd] }

// addSlot appends a slot for args (already in b.argv[start:]) and returns it.
func (b *batch) addSlot(start int) *slot {
	if len(b.slots) < cap(b.slots) {
		b.slots = b.slots[:len(b.slots)+1]
		s := &b.slots[len(b.slots)-1]
		*s = slot{Call: executor.Call{Reply: s.Reply[:0]}, argStart: start, argEnd: len(b.argv), shard: -1, b: b}
		return s
	}
	b.slots = append(b.slots, slot{argStart: start, argEnd: len(b.argv), shard: -1, b: b})
	return &b.slots[len(b.slots)-1]
}

// plan groups the slots into steps. Consecutive commands that each need several shards
// share one coordinated step holding the union of their shards: a pipeline of MSETs acquires
// the shards once and commits once, and each command is still atomic (the step is). Commands
// with narrow routes (scripts) share steps only with each other, since such a step may run
// again. A command
// that holds no shard (ExecServer) always has a step of its own, as has one marked
// TraitOwnStep. A command that may block ends its step: what follows it waits until it is
// answered, as in Redis.
func (b *batch) plan(nShards int) {
	srv := b.conn.srv
	b.startBudget()
	if b.hasLate {
		b.planLate(nShards)
	}
	sealed := false // the last step ends with a command that may block, or runs alone
	for i := range b.slots {
		s := &b.slots[i]
		last := len(b.steps) - 1
		alone := !s.finished && s.Cmd.OwnStep()
		open := last >= 0 && !sealed && !alone
		sealed = !s.finished && (s.Cmd.MayBlock() || s.Cmd.OwnStep())
		if s.finished || s.shard >= 0 {
			narrowShard := -1
			if !s.finished && s.Cmd.NarrowRoute() {
				narrowShard = s.shard
			}
			if open && !b.steps[last].coordinated &&
				(s.finished || b.steps[last].narrowShard < 0 || b.steps[last].narrowShard == s.shard) {
				b.steps[last].to = i + 1
				if narrowShard >= 0 {
					b.steps[last].narrowShard = narrowShard
				}
				continue
			}
			if open && s.finished && b.steps[last].shards != nil {
				b.steps[last].to = i + 1
				continue
			}
			b.steps = append(b.steps, step{from: i, to: i + 1, narrowShard: narrowShard})
			continue
		}
		shards := srv.exec.ShardsOf(b.callOf(s), b.conn.client)
		narrow := s.Cmd.NarrowRoute()
		if open && b.steps[last].coordinated && b.steps[last].shards != nil && shards != nil &&
			b.steps[last].narrow == narrow {
			b.steps[last].to = i + 1
			b.steps[last].shards = append(b.steps[last].shards, shards...)
			continue
		}
		b.steps = append(b.steps, step{from: i, to: i + 1, coordinated: true, shards: shards, narrow: narrow,
			narrowShard: -1})
	}
}

// planLate decides which late reads (a Peek-able read behind a command that waits for a
// shard) are answered in the loop after the batch's steps: those whose shard no later command
// of the batch writes, and that no later multi-shard command follows. Reading committed
// state after everything before it finished, and before anything after it could touch its
// key, is what running it in order would have read. The others run in their shard, in order.
// A late read is marked finished so that no step runs it.
func (b *batch) planLate(nShards int) {
	if len(b.laterWrite) != nShards {
		b.laterWrite = make([]bool, nShards)
	}
	clear(b.laterWrite)
	laterAll := false
	for i := len(b.slots) - 1; i >= 0; i-- {
		s := &b.slots[i]
		switch {
		case s.late:
			if laterAll || b.laterWrite[s.shard] {
				s.late = false
			} else {
				s.finished = true
			}
		case s.finished:
		case s.shard < 0 || s.Cmd.NarrowRoute(): // a script may write anywhere
			laterAll = true
		case !s.Cmd.ReadOnly():
			b.laterWrite[s.shard] = true
		}
	}
}

// answerLate answers the late reads (loop only, once the steps are done), counting their
// replies as unsent; it stops at the one that takes the connection over its output limit.
func (b *batch) answerLate() {
	now := time.Now()
	b.hasLate = false
	for i := b.flushed; i < len(b.slots); i++ {
		if s := &b.slots[i]; s.late {
			s.late = false
			b.peek(s, now, true)
			b.unsent += replySize(s)
			if b.lim.active() && b.conn.outputOver(b.conn.heldOutput()) {
				b.conn.outOver = true
				return
			}
		}
	}
}

// origin says which goroutine runs a batch's steps.
type origin uint8

const (
	inLoop        origin = iota // the connection's event loop: must not block on shards
	inShard                     // a shard goroutine: must not block on another shard's inbox
	inCoordinator               // a goroutine of the batch's own: may block
)

// run executes the steps from b.step on. The loop calls it to start the batch; after that,
// whichever goroutine finished the previous step calls it. A coordinated step always runs in
// a coordinator goroutine, because acquiring shards blocks.
func (b *batch) run(from origin) {
	for b.step < len(b.steps) {
		st := &b.steps[b.step]
		if st.coordinated {
			if from != inCoordinator {
				go b.run(inCoordinator)
				return
			}
			b.pending.Store(1)
			b.runCoordinated(st)
			if b.pending.Add(-1) != 0 {
				return // a command blocked: whoever wakes it goes on (slot.Unblocked)
			}
			b.nextStep()
			continue
		}
		if b.postFanout(st, from == inShard) {
			return // the last job to finish continues
		}
		b.step++
	}
	wrote := from != inLoop && b.writeDirect()
	b.done.Store(true)
	if b.conn.closed.Load() {
		b.closeStreams() // the connection went while the batch ran: nobody will send them
	}
	if from != inLoop && (!wrote || b.conn.loopWaits.Load()) {
		b.conn.wake() // the loop writes the replies; in the loop, onTraffic does it at once
	}
	b.conn.srv.batches.Done()
}

// postFanout posts the step's jobs and reports whether any was posted.
func (b *batch) postFanout(st *step, fromShard bool) bool {
	for _, j := range b.jobs {
		if j != nil {
			j.slots = j.slots[:0]
			j.Reset()
		}
	}
	var posted int32
	for i := st.from; i < st.to; i++ {
		s := &b.slots[i]
		if s.finished {
			continue
		}
		j := b.job(s.shard)
		if len(j.slots) == 0 {
			posted++
		}
		j.slots = append(j.slots, i)
		b.prepare(s)
		j.Add(&s.Call)
	}
	if posted == 0 {
		return false
	}
	budget, slice := b.budgetFor(int(posted))
	for _, j := range b.jobs {
		if j != nil && len(j.slots) > 0 {
			j.SetBudget(budget, slice)
		}
	}
	b.pending.Store(posted)
	// Once the last job is posted the step may finish at any moment and the next step reuse
	// b.jobs, so nothing of b is read after the last post.
	for _, j := range b.jobs {
		if j == nil || len(j.slots) == 0 {
			continue
		}
		posted--
		last := posted == 0
		j.Post(fromShard)
		if last {
			break
		}
	}
	return true
}

// job returns the batch's job for shard id, made the first time the connection needs that
// shard: a connection that never reaches a shard (idle in a pool, or answered by the loop)
// holds no job, a few hundred bytes each.
func (b *batch) job(id int) *shardJob {
	j := b.jobs[id]
	if j == nil {
		j = &shardJob{b: b}
		j.Job = b.conn.srv.exec.NewJob(id, b.conn.client, j)
		b.jobs[id] = j
	}
	return j
}

// JobDone is called after the group holding the job committed (executor.JobOwner). A call
// that strayed and the rest of the job follow it in the step and run again (rerunWide).
func (j *shardJob) JobDone(err error, strayed int) {
	b := j.b
	if strayed >= 0 {
		b.strayedAt = j.slots[strayed]
	}
	if err != nil {
		for _, i := range j.slots {
			if s := &b.slots[i]; !s.blocked { // a blocked slot's reply comes from its waiter
				executor.FailReply(&s.Call, err)
			}
		}
	}
	if b.pending.Add(-1) == 0 {
		b.nextStep()
		b.run(inShard)
	}
}

// nextStep moves on once the current step finished: to the next step, or past the last when
// the client left while blocked or the replies reached the output limit (the loop drops the
// connection).
func (b *batch) nextStep() {
	if b.abandon || b.limited && b.budget.Spent() {
		b.step = len(b.steps)
		return
	}
	if b.strayedAt >= 0 {
		b.rerunWide()
	}
	b.step++
}

// rerunWide ends the current step at the slot that strayed and puts that slot and the rest
// of the step, none of which ran, in a step of their own after it, holding every shard.
func (b *batch) rerunWide() {
	st := &b.steps[b.step]
	rerun := step{from: b.strayedAt, to: st.to, coordinated: true, shards: b.conn.srv.exec.AllShards(),
		narrow: true, narrowShard: -1}
	st.to = b.strayedAt
	b.steps = slices.Insert(b.steps, b.step+1, rerun)
	b.strayedAt = -1
}

// AfterReply queues frame to follow the slot's reply (shard.ReplyTail), from the goroutine
// committing the command's transaction, before the batch ends. It refuses a blocked or
// streamed command, whose reply is not in the slot: the frame then takes the queue.
func (s *slot) AfterReply(frame []byte) bool {
	if s.blocked || s.Stream != nil {
		return false
	}
	s.after = append(s.after, frame...)
	return true
}

// Blocking is called when the slot's command is about to block (cmds.BlockHost), by the
// goroutine running its step: the step now also waits for the command's reply.
func (s *slot) Blocking() {
	s.blocked = true
	s.b.pending.Add(1)
}

// Unblocked receives the blocked command's reply (cmds.BlockHost), from any goroutine; nil
// when the client is gone. The last thing the step waited for moves the batch on.
func (s *slot) Unblocked(reply []byte) {
	b := s.b
	s.Reply = reply
	if reply == nil {
		b.abandon = true
	}
	if b.pending.Add(-1) == 0 {
		b.nextStep()
		b.run(inShard)
	}
}

// runCoordinated runs a coordinated step's commands holding its shards (none for a
// command that holds none), and commits them as one atomic batch. It stops at a command that
// strayed, whose writes were rolled back: what ran before it commits, and it runs again with
// the rest of the step holding every shard (rerunWide).
func (b *batch) runCoordinated(st *step) {
	calls, at := b.coordCalls[:0], b.coordAt[:0]
	for i := st.from; i < st.to; i++ {
		if s := &b.slots[i]; !s.finished {
			b.prepare(s)
			calls, at = append(calls, &s.Call), append(at, i)
		}
	}
	b.coordCalls, b.coordAt = calls, at
	if b.coord == nil {
		b.coord = new(executor.Frame)
	}
	b.coord.SetBudget(b.budgetFor(1))
	strayed, err := b.conn.srv.exec.RunHolding(b.coord, st.shards, calls, b.conn.client)
	if strayed >= 0 {
		b.strayedAt = at[strayed]
	}
	if err != nil {
		for _, i := range at {
			if s := &b.slots[i]; !s.blocked {
				executor.FailReply(&s.Call, err)
			}
		}
	}
	clear(calls)
}

// peek tries to answer slot s in the loop from committed state (executor.Peek). Its
// arguments still point into gnet's buffer, which is fine: a Peek copies what it replies.
func (b *batch) peek(s *slot, start time.Time, late bool) bool {
	b.prepare(s)
	if !b.conn.srv.exec.Peek(&b.loop, &s.Call, b.conn.client, start, late) {
		return false
	}
	s.finished = true
	return true
}

// view tries to answer slot s in the loop with a read-only view of its shard's committed
// state (executor.View). It reports false, with nothing written, when the command needs its
// shard. Its arguments still point into gnet's buffer; commands copy what they keep.
func (b *batch) view(s *slot, start time.Time) bool {
	b.prepare(s)
	if !b.conn.srv.exec.View(&b.loop, &s.Call, b.conn.client, s.shard, start) {
		return false
	}
	s.finished = true
	return true
}

// callOf returns slot s's call, prepared.
func (b *batch) callOf(s *slot) *executor.Call {
	b.prepare(s)
	return &s.Call
}

// prepare makes slot s's call current before it runs: its arguments (adopt may have moved
// them), and the slot as the receiver of its messages and of its reply if it blocks.
func (b *batch) prepare(s *slot) {
	s.Args = b.args(s)
	s.Origin, s.Host = s, s
}

// Subscriber is the connection's subscriber (pubsub.Origin).
func (s *slot) Subscriber() *pubsub.Subscriber { return s.b.conn.client.Sub }

// Capture puts a message the slot's command made for its own connection into the reply at
// pos, the reply's length when the command made it (pubsub.Origin). It runs in the goroutine
// that ran the command, once the command wrote its whole reply and before the slot is done;
// messages come in the order they were made, so earlier ones shift pos by what they took.
func (s *slot) Capture(frame []byte, pos int) {
	at := min(pos+s.captured, len(s.Reply))
	s.Reply = slices.Insert(s.Reply, at, frame...)
	s.captured += len(frame)
}

// writeDirect writes the replies of the finished batch to the socket from the goroutine that
// finished it, instead of waking the loop to write them (an eventfd write, a loop wake-up and
// its polls). Only a plain batch of one command qualifies (see conn.read): nothing held in
// gnet for the connection when it began, no streamed or big reply, no late reads (answered
// in the loop), no output limit. Batches of several commands (pipelines) still go through
// the loop: a shard writing each of its group's replies itself delayed its next commit
// (mix-p16 0.56x and 0.72x with every batch written this way; docs/PERFORMANCE.md).
// What the socket does not take goes to rest, which the loop writes first when it next
// handles the connection. It reports whether it wrote everything (then the loop has
// nothing to write).
func (b *batch) writeDirect() bool {
	if !b.direct || b.hasLate || b.limited || b.lim.active() || b.flushed != 0 {
		return false
	}
	total := 0
	for i := range b.slots {
		s := &b.slots[i]
		if s.Stream != nil || bigReply(s) {
			return false
		}
		if !s.Suppress {
			total += len(s.Reply)
		}
		total += len(s.after)
	}
	cn := b.conn
	out := bytebufferpool.Get()
	defer bytebufferpool.Put(out)
	for i := range b.slots {
		if s := &b.slots[i]; !s.Suppress {
			out.B = append(out.B, s.Reply...)
		}
		out.B = append(out.B, b.slots[i].after...)
	}
	cn.sock.Lock()
	if cn.sockClosed || cn.asyncOut.Load() {
		cn.sock.Unlock()
		return false
	}
	// Everything but the write first: a client that reads the reply may send its next
	// command at once, and a loop that finds the batch not yet done then must be woken.
	b.release()
	if total > 0 {
		st := &cn.srv.state.Stats
		st.NetOutputBytes.Add(int64(total))
		st.WritesProcessed.Add(1)
	}
	n := 0
	if total > 0 {
		var err error
		n, err = unix.Write(cn.fd, out.B)
		if err != nil {
			n = 0
			if err != unix.EAGAIN {
				n = total // the socket failed: the loop's read finds out and closes it
			}
		}
	}
	cn.sock.Unlock()
	if n < total {
		b.rest = append(b.rest[:0], out.B[n:]...)
	}
	b.flushed, b.counted, b.unsent = len(b.slots), true, int64(total-n)
	return n == total
}

// release lets go of what reset would not keep once the replies are written: the loop
// resets the batch only when it next handles the connection, for a client waiting for this
// reply its next command, and a big value's input must not stay held until then.
func (b *batch) release() {
	if cap(b.arena) > maxKeptArena {
		b.arena = nil
	}
	clear(b.argv)
	if cap(b.argv) > maxKeptArgv {
		b.argv = nil
	}
	for i := range b.slots {
		s := &b.slots[i]
		s.Args, s.Multi = nil, nil
		if cap(s.Reply) > maxKeptReply {
			s.Reply = nil
		}
	}
}
