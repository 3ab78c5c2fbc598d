package reactor

import (
	"bytes"
	"log"
	"time"

	"github.com/panjf2000/gnet/v2"

	"shardis/executor"
	"shardis/internal/memfree"
)

// client-output-buffer-limit. What a connection holds for a client is counted by bytes as
// Redis counts its output buffer: what gnet holds, plus the replies its batch produced and
// has not written (its slots, the rest of a big reply, a streamed reply's pieces). It is
// checked as replies are produced:
//
//   - in the loop, as each command is dispatched (a GET answered at once from committed
//     state, a connection command, a refusal): past the hard limit the rest of the input is
//     not parsed, so nothing after that command runs;
//   - in the shards, as the batch's jobs and coordinator run their commands, against an
//     executor.OutputBudget: past the hard limit the commands after the one that reached it do
//     not run (a fanout's jobs in other shards stop at their next report, see
//     Frame.SetBudget), and no later step runs;
//   - in the loop, as the late reads are answered and whenever flush looks at the batch
//     again while the socket is slow (the soft limit's time).
//
// A connection over its limit is dropped at once, nothing more written, its replies let go
// and the memory handed back to the system (memfree.Released). Redis does the same: a client
// flagged CLOSE_ASAP has no more of its input processed and no more output written.

// outputLimit is one connection class's client-output-buffer-limit (0: none).
type outputLimit struct {
	hard, soft int64
	softFor    time.Duration
}

func (l *outputLimit) active() bool { return l.hard > 0 || l.soft > 0 }

// replyBuffer is the size of a Redis client's own reply buffer, which its output limit does
// not count (only the reply list past it): replies of up to 16 KiB pass whatever the limit
// (with "normal 5 6 7", a GET of a 16,300-byte value is answered, one of 16,400 drops the
// client).
const replyBuffer = 16 << 10

// outputLimit returns the limit of the connection's class, pubsub while it is subscribed,
// normal otherwise, as bounds on what the connection holds: Redis's plus its reply buffer.
func (cn *conn) outputLimit() outputLimit {
	hard, soft, softFor := cn.srv.state.OutputLimit(cn.client.PubSub())
	if hard > 0 {
		hard += replyBuffer
	}
	if soft > 0 {
		soft += replyBuffer
	}
	return outputLimit{hard: hard, soft: soft, softFor: softFor}
}

// outputSlice is the least a frame running a batch's commands adds up before it reports to
// the batch's output budget (executor.Frame.SetBudget).
const outputSlice = 16 << 10

// dispatch dispatches the command in b.argv[start:] (dispatchCommand) and counts the reply the
// loop made for it, if any. Past the hard limit, or the soft one for too long, the connection
// is to be dropped once the commands dispatched before it ran: the rest of the input is not
// parsed (closeAfterFlush).
func (cn *conn) dispatch(start int) bool {
	b := &cn.b
	if len(b.slots) == 0 { // a new batch: the limit it is held to
		b.lim, b.held = cn.outputLimit(), 0
	}
	if b.lim.hard > 0 { // what a reply made in the loop may take (Ctx.ReplyLimit)
		b.loop.LimitReplies(max(1, b.lim.hard-int64(cn.gc.OutboundBuffered())-b.held))
	} else {
		b.loop.LimitReplies(0)
	}
	if !cn.dispatchCommand(start) {
		return false
	}
	if !b.lim.active() {
		return true
	}
	s := &b.slots[len(b.slots)-1]
	if !s.finished {
		return true
	}
	b.held += replySize(s)
	if cn.outputOver(int64(cn.gc.OutboundBuffered()) + b.held) {
		cn.outOver, cn.closeAfterFlush = true, true
	}
	return true
}

// replySize is what slot s's reply (as far as it was made) takes in the output.
func replySize(s *slot) int64 {
	n := len(s.after)
	if !s.Suppress {
		n += len(s.Reply)
	}
	return int64(n)
}

// outputOver reports whether a connection holding held bytes of output is over its limit,
// and keeps the soft limit's clock: as in Redis, the first time over the soft limit starts it,
// and the connection is over once it stayed over for longer than the soft seconds.
func (cn *conn) outputOver(held int64) bool {
	l := &cn.b.lim
	over := l.hard > 0 && held >= l.hard
	switch {
	case over:
	case l.soft == 0 || held < l.soft:
		cn.overSoft = time.Time{}
	case cn.overSoft.IsZero():
		cn.overSoft = time.Now()
	default:
		over = time.Since(cn.overSoft) > l.softFor
	}
	return over
}

// startBudget readies the output budget of the batch's steps (loop, before they run): the
// hard limit, less what gnet and the replies made in the loop hold. A batch cut short in the
// loop (outOver) runs what was dispatched, all of it before the command that reached the
// limit, unbounded.
func (b *batch) startBudget() {
	cn := b.conn
	b.limited = b.lim.hard > 0 && !cn.outOver
	if b.limited {
		b.budget.Reset(int64(cn.gc.OutboundBuffered())+b.held, b.lim.hard)
	}
	cn.unsentOut.Store(b.held)
}

// budgetFor returns the budget and reporting slice for the frames of a step run by n of
// them: each may run up to a slice past the limit before it looks, so together they overrun
// the room left by at most a quarter of it.
func (b *batch) budgetFor(n int) (*executor.OutputBudget, int64) {
	if !b.limited {
		return nil, 0
	}
	room := b.lim.hard - b.budget.Used()
	return &b.budget, max(outputSlice, room/int64(4*n))
}

// countUnsent sums the replies of the finished batch, which it holds until flush writes them
// (loop, once per batch), then answers the late reads, counting their replies as they are
// made.
func (b *batch) countUnsent() {
	b.counted = true
	var n int64
	for i := b.flushed; i < len(b.slots); i++ {
		n += replySize(&b.slots[i])
	}
	b.unsent = n
	if b.hasLate {
		b.answerLate()
	}
}

// heldOutput is what the connection holds for its client (loop only): gnet's buffer and the
// batch's unsent replies, a streamed reply's pieces.
func (cn *conn) heldOutput() int64 {
	n := int64(cn.gc.OutboundBuffered())
	if cn.busy {
		n += cn.b.unsent
	}
	if cn.pump != nil {
		n += cn.pump.queued.Load()
	}
	return n
}

// publishUnsent publishes what the connection holds beside gnet's buffer (CLIENT LIST omem).
func (cn *conn) publishUnsent() {
	var n int64
	if cn.busy {
		n = cn.b.unsent
	}
	if cn.pump != nil {
		n += cn.pump.queued.Load()
	}
	cn.unsentOut.Store(n)
}

// dropForOutput logs that the connection goes for its output, as Redis does, lets go of
// what it held and returns the action that closes it (loop, the batch done).
func (cn *conn) dropForOutput() gnet.Action {
	held := cn.heldOutput()
	cn.unsentOut.Store(held - int64(cn.gc.OutboundBuffered()))
	cn.outBuffered.Store(int64(cn.gc.OutboundBuffered()))
	log.Printf("Client %s scheduled to be closed ASAP for overcoming of output buffer limits.",
		bytes.TrimSuffix(cn.client.AppendInfo(nil, false, time.Now()), []byte("\n")))
	b := &cn.b
	b.closeStreams()
	if cn.pump != nil {
		close(cn.pump.stop)
		cn.pump = nil
	}
	clear(cn.drain)
	cn.drain = nil
	b.reset()
	cn.busy = false
	cn.unsentOut.Store(0)
	memfree.Released(int(held)) // its replies are garbage once the loop lets go of them
	return gnet.Close
}
