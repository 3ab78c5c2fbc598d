package reactor

import (
	"bytes"
	"errors"
	"log"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/panjf2000/gnet/v2"
	"github.com/valyala/bytebufferpool"

	"shardis/codec"
	"shardis/executor"
	"shardis/internal/memfree"
	"shardis/pubsub"
	"shardis/server"
)

// Batch bounds: a pipeline longer than this runs as several batches in sequence.
const (
	maxBatchCommands = 4096
	maxBatchBytes    = 4 << 20
)

// conn is one client connection, owned by its event loop.
type conn struct {
	// overSoft is when the output the connection holds was first seen over
	// client-output-buffer-limit's soft limit (zero: it is not); see outputOver.
	overSoft time.Time
	srv      *Server
	gc       gnet.Conn
	client   *server.Client
	b        batch
	busy     bool // a batch is in flight (loop-owned; the batch sets b.done when it ends)
	need     int  // bytes partial must hold before parsing can progress
	// partial holds the start of a command that has not fully arrived, moved out of gnet's
	// buffer (see read); loop-owned until a command parsed from it is dispatched, after which
	// its batch holds that memory.
	partial []byte
	parser  codec.Parser // resumes a partly received command where it stopped
	iov     [][]byte     // flush's writev list, reused
	// closeAfterFlush: a protocol error or QUIT ends the connection once replies are out.
	closeAfterFlush bool
	protoErr        string
	// holdRest: the batch ends at the command just dispatched (an EXEC whose transaction
	// changes the connection's state); the rest of the input waits for the next read.
	holdRest bool

	pump   *pump       // the streamed reply being sent, if any (see stream.go)
	drain  [][]byte    // the rest of a big reply being sent (drainOut); batch memory
	poll   *time.Timer // wakes the loop to look at a pump's socket again
	closed atomic.Bool // set by OnClose; a batch ending afterwards closes its streams
	// outOver: the replies reached client-output-buffer-limit while the batch was built or
	// ran; the connection is dropped once it is done, nothing more written (dropForOutput).
	outOver bool
	// unsentOut is the bytes of replies the connection holds beside gnet's buffer, not yet
	// written (the batch's slots, a big reply's rest, a pump's pieces), for CLIENT LIST omem.
	unsentOut atomic.Int64
	// inBuffered and outBuffered are the bytes gnet held for the connection, unread input and
	// unsent output, after the loop last handled it (CLIENT LIST qbuf and omem).
	inBuffered, outBuffered atomic.Int64

	// The reply of a one-command batch that finished outside the loop may be written to the
	// socket by the goroutine that finished it (batch.writeDirect), saving the loop's wake-up. fd is
	// the socket; sock guards it against the loop closing it (OnClose, before gnet closes the
	// fd, sets sockClosed) and against output queued through gnet from other goroutines
	// (asyncOut: MONITOR's feed, a replica's stream), after which replies always go
	// through the loop so they keep their order with it.
	fd         int
	sock       sync.Mutex
	sockClosed bool
	asyncOut   atomic.Bool
	// loopWaits: the loop saw the batch in flight with work of its own waiting (input left in
	// gnet, pushes, a pump): whoever finishes the batch must wake it even when it wrote the
	// replies itself. Set by the loop before it looks at done again; read by the finisher
	// after it set done, so one of the two always sees the other.
	loopWaits atomic.Bool
}

func (cn *conn) wake() {
	cn.srv.wakes.Add(1)
	_ = cn.gc.Wake(nil)
}

// onTraffic parses and dispatches what arrived, and writes the replies of a finished batch.
func (cn *conn) onTraffic() gnet.Action {
	for {
		if cn.busy {
			if !cn.b.done.Load() && !cn.waitForBatch() {
				return gnet.None
			}
			if act, finished := cn.flush(); act != gnet.None || !finished {
				return act
			}
		}
		if cn.client.Sub.Pending() {
			cn.writePushes()
		}
		if !cn.read() {
			return gnet.None
		}
		if cn.busy && !cn.b.done.Load() {
			if cn.gc.InboundBuffered() == 0 && len(cn.partial) == 0 && !cn.holdRest {
				return gnet.None // the next input wakes the loop, and finds the batch done
			}
			if !cn.waitForBatch() {
				return gnet.None
			}
		}
	}
}

// waitForBatch tells whoever finishes the batch in flight that the loop has work waiting
// for it, and reports whether it finished meanwhile (then the loop goes on at once).
func (cn *conn) waitForBatch() bool {
	cn.loopWaits.Store(true)
	return cn.b.done.Load()
}

// flush writes the replies of the finished batch, in order. A streamed reply goes out piece
// by piece as the socket takes it (see pump), so flush may stop before the batch is out:
// finished is false then, and the pump's producer or the poll timer wakes the loop to go on.
func (cn *conn) flush() (act gnet.Action, finished bool) {
	b := &cn.b
	if !b.counted {
		b.countUnsent() // answers the late reads too
	}
	// Looked at on every pass: a pump or a big reply waiting for the socket brings the loop
	// back here, which is where the soft limit's time runs out.
	if cn.outOver || b.limited && b.budget.Spent() || b.lim.active() && cn.outputOver(cn.heldOutput()) {
		return cn.dropForOutput(), false
	}
	defer cn.publishUnsent()
	if len(b.rest) > 0 { // what the socket did not take of the replies writeDirect wrote
		_, _ = cn.gc.Write(b.rest)
		b.unsent -= int64(len(b.rest))
		b.rest = b.rest[:0]
	}
	for {
		if cn.pump != nil {
			switch cn.pumpOut() {
			case pumpWaiting:
				return gnet.None, false
			case pumpFailed:
				return gnet.Close, false
			}
		}
		if len(cn.drain) > 0 && !cn.drainOut() {
			return gnet.None, false
		}
		// Up to and including the next streamed slot, or up to a big reply.
		end := b.flushed
		for end < len(b.slots) && b.slots[end].Stream == nil && !bigReply(&b.slots[end]) {
			end++
		}
		last := end == len(b.slots)
		big := !last && b.slots[end].Stream == nil
		if !last && !big {
			end++
		}
		var tail []byte
		if last && cn.protoErr != "" {
			tail = codec.AppendError(nil, "ERR "+cn.protoErr)
		}
		cn.writeReplies(b.slots[b.flushed:end], tail)
		b.flushed = end
		if last {
			break
		}
		if big {
			s := &b.slots[end]
			cn.drain = append(cn.drain[:0], s.Reply, s.after)
			b.flushed++
			continue
		}
		s := &b.slots[end-1]
		st := s.Stream
		s.Stream = nil
		if s.Suppress {
			st.Close()
			continue
		}
		cn.pump = startPump(st, s.RESP3, cn.wake)
	}
	b.reset()
	cn.busy = false
	if cn.closeAfterFlush {
		return gnet.Close, true
	}
	return gnet.None, true
}

// bigReply reports whether slot s's reply goes out piece by piece as the socket takes it
// (drainOut) rather than to gnet at once, which would copy what the socket did not take: a
// GET of a 100 MB value would be held twice.
func bigReply(s *slot) bool { return len(s.Reply) >= pumpHighWater && !s.Suppress }

// drainOut writes the pieces in cn.drain (a big reply and what follows it) while gnet holds
// less than pumpHighWater of output for the connection; it reports whether all went out.
// Otherwise the poll timer wakes the loop to go on, as for a streamed reply.
func (cn *conn) drainOut() bool {
	for len(cn.drain) > 0 {
		p := cn.drain[0]
		if len(p) == 0 {
			cn.drain[0] = nil
			cn.drain = cn.drain[1:]
			continue
		}
		held := cn.gc.OutboundBuffered()
		if held >= pumpHighWater {
			cn.pollLater()
			return false
		}
		k := min(len(p), pumpHighWater-held)
		_, _ = cn.gc.Write(p[:k])
		cn.srv.state.Stats.NetOutputBytes.Add(int64(k))
		cn.b.unsent -= int64(k)
		cn.drain[0] = p[k:]
	}
	return true
}

// Replies up to this size are copied into one pooled buffer and written at once; larger ones
// go out with writev straight from the command buffers, so a big reply is never held twice.
const copyRepliesBelow = 64 << 10

// writeReplies writes the replies of slots, then tail. gnet copies what the socket does not
// take at once, so the buffers are free for reuse afterwards.
func (cn *conn) writeReplies(slots []slot, tail []byte) {
	total := len(tail)
	for i := range slots {
		if s := &slots[i]; !s.Suppress {
			total += len(s.Reply)
		}
		total += len(slots[i].after)
	}
	switch {
	case total == 0:
	case total < copyRepliesBelow:
		out := bytebufferpool.Get()
		for i := range slots {
			if s := &slots[i]; !s.Suppress {
				out.B = append(out.B, s.Reply...)
			}
			out.B = append(out.B, slots[i].after...)
		}
		out.B = append(out.B, tail...)
		_, _ = cn.gc.Write(out.B)
		bytebufferpool.Put(out)
	default:
		iov := cn.iov[:0]
		for i := range slots {
			if s := &slots[i]; !s.Suppress && len(s.Reply) > 0 {
				iov = append(iov, s.Reply)
			}
			if len(slots[i].after) > 0 {
				iov = append(iov, slots[i].after)
			}
		}
		if tail != nil {
			iov = append(iov, tail)
		}
		for rest := iov; len(rest) > 0; { // writev takes at most IOV_MAX (1024) buffers
			n := min(len(rest), 1024)
			_, _ = cn.gc.Writev(rest[:n])
			rest = rest[n:]
		}
		clear(iov)
		cn.iov = iov[:0]
	}
	if total > 0 {
		cn.srv.state.Stats.NetOutputBytes.Add(int64(total))
		cn.srv.state.Stats.WritesProcessed.Add(1)
		cn.b.unsent -= int64(total - len(tail))
	}
}

// pushHighWater is how much output gnet may hold for a subscriber before the loop stops
// moving its queued messages there: beyond it they wait in the subscriber's queue, which is
// bounded (client-output-buffer-limit), so a client that stops reading is disconnected
// rather than growing gnet's buffer without bound.
const pushHighWater = 1 << 20

// writePushes writes the messages queued for the connection (pub/sub, keyspace
// notifications) between batches, never inside a reply. Loop only.
func (cn *conn) writePushes() {
	for cn.client.Sub.Pending() {
		held := cn.gc.OutboundBuffered()
		if held >= pushHighWater {
			cn.pollLater() // gnet has no "drained" callback: look again shortly
			return
		}
		out := bytebufferpool.Get()
		out.B = cn.client.Sub.Drain(out.B, pushHighWater-held)
		if len(out.B) > 0 {
			_, _ = cn.gc.Write(out.B)
			cn.srv.state.Stats.NetOutputBytes.Add(int64(len(out.B)))
			cn.srv.state.Stats.WritesProcessed.Add(1)
		}
		bytebufferpool.Put(out)
	}
}

// read parses the buffered input into a batch and starts it. It reports whether it made
// progress (consumed input).
//
// Input leaves gnet's buffer as soon as the loop sees it: complete commands are copied into
// the batch arena (adopt), and the start of a command that has not fully arrived moves to
// cn.partial, which the next reads extend. Left in gnet, it would be copied again into a
// contiguous buffer on every read (gnet's Peek of a wrapped ring buffer): a command of
// many arguments streamed in small reads cost quadratic copying in the loop, stalling its
// other connections, and many times its size in memory.
func (cn *conn) read() bool {
	if cn.closeAfterFlush {
		return false
	}
	gc, srv := cn.gc, cn.srv
	n := gc.InboundBuffered()
	if int64(n+len(cn.partial)) > srv.cfg.ClientQueryBufferLimit() {
		cn.closeAfterFlush = true
		_ = gc.Close()
		return false
	}
	fromPartial := len(cn.partial) > 0
	if n == 0 && (!fromPartial || cn.need > 0) {
		return false // nothing new, and partial holds no complete command a pause held back
	}
	var buf []byte
	if n > 0 {
		in, err := gc.Peek(n)
		if err != nil {
			return false
		}
		buf = in
	}
	if fromPartial {
		if n > 0 {
			cn.partial = append(growFor(cn.partial, n, cn.need), buf...)
			cn.discard(n)
		}
		if len(cn.partial) < cn.need {
			return true // a big argument still arriving: nothing to parse yet
		}
		buf = cn.partial
	}
	b := &cn.b
	b.loop.ResetClock()
	if n > 0 {
		srv.state.Stats.ReadsProcessed.Add(1)
	}
	lim := codec.Limits{MaxBulkLen: srv.cfg.ProtoMaxBulkLen()}
	// While the commands parsed here are dispatched (those that run in the loop run then),
	// the query buffer is the input they came from, as Redis's querybuf holds a command while
	// it runs (CLIENT LIST shows qbuf=26 for itself); OnTraffic publishes what is left.
	cn.inBuffered.Store(int64(len(buf)))
	off := 0
	cn.holdRest = false
	cn.need = 0
	incomplete := false
	for len(b.slots) < maxBatchCommands && off < len(buf) && off < maxBatchBytes && !cn.closeAfterFlush {
		lim.Unauthenticated = !cn.client.Authed && srv.state.ACL.AuthRequired()
		start := len(b.argv)
		argv, used, need, err := cn.parser.ParseAppend(buf[off:], b.argv, lim)
		if err != nil {
			var pe *codec.ProtocolError
			if errors.As(err, &pe) {
				cn.protoErr = pe.Msg
			} else {
				cn.protoErr = "Protocol error: " + err.Error()
			}
			cn.closeAfterFlush = true
			off = len(buf)
			break
		}
		b.argv = argv
		if used == 0 {
			cn.need, incomplete = need, true
			break
		}
		if len(argv) == start {
			off += used
			continue
		}
		if !cn.dispatch(start) {
			b.argv = b.argv[:start] // paused: leave it in the input for later
			break
		}
		off += used
	}
	if fromPartial {
		cn.keepPartialTail(off)
	} else {
		cn.adopt(buf[:off])
		if off > 0 {
			cn.discard(off)
		}
		if incomplete && !cn.closeAfterFlush {
			rest := buf[off:]
			cn.partial = append(growFor(nil, len(rest), cn.need), rest...)
			cn.discard(len(rest))
		}
	}
	if len(b.slots) == 0 && !cn.closeAfterFlush {
		return off > 0 || incomplete
	}
	cn.busy = true
	cn.loopWaits.Store(false)
	b.direct = len(b.slots) == 1 && !cn.closeAfterFlush && cn.protoErr == "" && cn.pump == nil &&
		len(cn.drain) == 0 && cn.gc.OutboundBuffered() == 0 && !cn.asyncOut.Load()
	srv.batches.Add(1)
	b.plan(srv.exec.NumShards())
	b.run(inLoop)
	return true
}

// queryBuffered is the connection's query buffer as Redis's CLIENT LIST shows it (qbuf)
// between commands: gnet's unread input and the part of a command not yet parsed. Redis
// keeps only the argument being received (its bulk header parsed), so a command that is half
// sent shows the bytes of that argument that arrived, not the whole command.
func (cn *conn) queryBuffered() int64 {
	rest := cn.partial
	if p := cn.parser.Pending(); p >= 0 && p <= len(rest) {
		rest = rest[p:]
		if len(rest) > 0 && rest[0] == '$' {
			if i := bytes.Index(rest[:min(len(rest), 32)], []byte("\r\n")); i >= 0 {
				rest = rest[i+2:]
			}
		}
	}
	return int64(cn.gc.InboundBuffered() + len(rest))
}

// discard drops n bytes of gnet's input, which the connection consumed or moved.
func (cn *conn) discard(n int) {
	_, _ = cn.gc.Discard(n)
	cn.srv.state.Stats.NetInputBytes.Add(int64(n))
}

// keepPartialTail follows a parse of cn.partial that consumed its first off bytes. The
// arguments of the commands dispatched from them point into it, and the batch now owns that
// memory: the connection keeps only the rest, an incomplete command or input a pause held
// back. A small rest is copied, so the batch's bytes are not pinned by it; a big one stays in
// place (appending later writes past what the batch reads).
func (cn *conn) keepPartialTail(off int) {
	b := &cn.b
	b.adopted = len(b.argv) // the arguments from partial are private already
	switch rest := cn.partial[off:]; {
	case off == 0:
	case len(rest) == 0:
		memfree.Released(cap(cn.partial)) // the batch holds it until its replies are written
		cn.partial = nil
	case len(rest) < 64<<10:
		cn.partial = append(growFor(nil, len(rest), cn.need), rest...)
	default:
		cn.partial = rest
	}
}

// growFor returns p with room for n more bytes. The capacity doubles from what arrived, and
// never passes need, the size the parser knows the command has (a big argument being
// received): the memory follows the bytes that came, never the length a bulk header
// announced, so a client that announces 512 MB and sends a few KB costs a few KB. A big
// argument is copied a logarithmic number of times, amortised O(n), as it grows.
func growFor(p []byte, n, need int) []byte {
	want := len(p) + n
	if want <= cap(p) {
		return p
	}
	c := max(want, 2*cap(p), 512)
	if need > want && 2*c > need {
		c = need // the next doubling would pass it: this one is the last
	}
	grown := make([]byte, len(p), c)
	copy(grown, p)
	return grown
}

// releaseInput lets go of the connection's partial buffer (the connection closed), and has
// a big one given back to the system (see memfree).
func (cn *conn) releaseInput() {
	n := cap(cn.partial)
	cn.partial, cn.need = nil, 0
	memfree.Released(n)
}

// adopt copies the consumed input into the batch arena and points every argument that
// aliases it there: gnet reuses its buffer once OnTraffic returns, and the batch runs later in
// other goroutines. Only what was consumed is copied, once. Arguments outside in (inline
// arguments that needed unescaping) are already private.
func (cn *conn) adopt(in []byte) {
	b := &cn.b
	if len(in) == 0 {
		return
	}
	base := len(b.arena)
	b.arena = append(b.arena, in...)
	lo := uintptr(unsafe.Pointer(unsafe.SliceData(in)))
	for i, a := range b.argv[b.adopted:] {
		if len(a) == 0 {
			continue
		}
		p := uintptr(unsafe.Pointer(unsafe.SliceData(a)))
		if p >= lo && p < lo+uintptr(len(in)) {
			o := base + int(p-lo)
			b.argv[b.adopted+i] = b.arena[o : o+len(a) : o+len(a)]
		}
	}
	b.adopted = len(b.argv)
}

// dispatchCommand classifies the command in b.argv[start:]: it refuses it, runs it now
// (connection commands), or adds it to the batch for its shard. It returns false when CLIENT
// PAUSE holds the command back. Connection commands run here, before adopt, with arguments in
// gnet's buffer: they must not keep them. (dispatch wraps it, counting its reply.)
func (cn *conn) dispatchCommand(start int) bool {
	b, srv, cl := &cn.b, cn.srv, cn.client
	if cn.holdRest {
		return false // behind an EXEC that changes the connection: parsed once it ran
	}
	args := b.argv[start:]
	exec := srv.exec
	cmd := exec.Lookup(args)
	clock := b.loop.TakeClock() // the end of the command before it in this input, if answered here
	now := clock.UnixMilli()
	var wake func()
	if len(b.slots) == 0 {
		wake = cn.wake // nothing of this batch runs to read the input again: wake when it may
	}
	if held, until := exec.Hold(cmd, args, cl, b.queued, now, wake); held {
		if until > 0 && wake != nil {
			cn.wakeAt(until)
		}
		return false
	}
	s := b.addSlot(start)
	s.DB, s.RESP3 = cl.DB, cl.RESP3
	// CLIENT REPLY ON and RESET always answer (OFF and SKIP silence themselves). Pushes go
	// out whatever the mode, as Redis sends them: a (un)subscribe's confirmations too.
	// A refusal is silenced whatever the command, and any command uses up a SKIP (CLIENT
	// REPLY sets the mode again).
	quiet := false
	switch cl.ReplyMode {
	case server.ReplyOff:
		quiet = true
	case server.ReplySkip:
		quiet = true
		cl.ReplyMode = server.ReplyOn
	}
	s.Suppress = quiet && !cmd.AlwaysReplies() && !cmd.RepliesWithPushes()
	if msg := exec.AdmitClient(cmd, args, cl); msg != "" {
		s.Suppress = quiet
		w := codec.Writer{Buf: s.Reply[:0], RESP3: s.RESP3}
		w.Error(msg)
		s.Reply, s.finished = w.Buf, true
		return true
	}
	s.Cmd = cmd
	exec.Admitted(cmd, cl, now)
	if cl.TrackCaching {
		// CLIENT CACHING applies to this command (to the transaction when it is MULTI).
		s.Caching = true
		defer cn.useCaching(cmd)
	}
	if cl.Multi != nil && !cmd.TxControl() {
		exec.Queue(cmd, args, cl)
		if cl.Multi.Size() > srv.cfg.ClientQueryBufferLimit() {
			// What a client queues is input the server holds: bounded like its query buffer.
			log.Printf("closing client %s: its MULTI holds %d bytes, over client-query-buffer-limit", cl.Addr, cl.Multi.Size())
			cn.closeAfterFlush = true
			_ = cn.gc.Close()
			s.finished, s.Suppress = true, true // queued, never run: the transaction dies here
			return true
		}
		s.Reply, s.finished = append(s.Reply[:0], "+QUEUED\r\n"...), true
		return true
	}
	if cmd.TxControl() {
		s.Multi = cl.Multi
		if cmd.TakesQueue() {
			cl.TakeMulti()
			cl.Publish()
			if cmd.RunsQueue() && s.Multi != nil && s.Multi.ChangesConn {
				cn.holdRest = true
			}
		}
	}
	// MONITOR sees a command once it ran, as in Redis: a connection command here, the others
	// when dispatched (they run in order in their shards), a transaction's as EXEC runs them
	// (the executor feeds those).
	where := cmd.Where(b.queued)
	feed := exec.Monitors(cmd)
	if feed && where != executor.InLoop {
		exec.Monitor(cmd, args, cl)
	}
	switch where {
	case executor.InLoop:
		// Messages queued for the connection before a pub/sub command ran go out before its
		// reply, as Redis writes them: none arrives after the UNSUBSCRIBE that ended them.
		// A PUBLISH to the publisher's own subscription (RESP3) writes the message before
		// the reply too; a (un)subscribe's reply goes before what arrived after it ran.
		var pushed []byte
		pubsubCmd := cmd.PubSub() && !s.Suppress
		if pubsubCmd && cl.Sub.Pending() {
			pushed = cl.Sub.Drain(nil, pubsub.DrainAll)
		}
		b.prepare(s)
		exec.RunInLoop(&b.loop, &s.Call, cl)
		if pubsubCmd && !cmd.SubscribedMode() && cl.Sub.Pending() {
			pushed = cl.Sub.Drain(pushed, pubsub.DrainAll)
		}
		if pushed != nil {
			s.Reply = append(pushed, s.Reply...)
		}
		s.finished = true
		if feed {
			exec.Monitor(cmd, args, cl)
		}
		if cl.Quitting {
			cn.closeAfterFlush = true // QUIT: nothing after it runs
		}
	case executor.InShard:
		s.shard = exec.Shard(cmd, args, s.DB, cl, s.Multi, &b.keyBuf)
		if cmd.Routed() {
			break
		}
		peek, view := exec.LoopReads()
		if cmd.Peekable() && s.shard >= 0 && peek {
			if !b.queued && b.peek(s, clock, false) {
				return true
			}
			if b.queued { // plan decides whether it can be answered once the rest is done
				s.late, b.hasLate = true, true
				return true
			}
		} else if s.shard >= 0 && !b.queued && view && cmd.Viewable() && b.view(s, clock) {
			return true
		}
	case executor.Everywhere:
		if exec.NumShards() == 1 {
			s.shard = 0
		}
	}
	if !s.finished {
		b.queued = true
	}
	return true
}

// useCaching ends CLIENT CACHING's flag after cmd was dispatched, as Redis does after any
// command but CLIENT's and those of a transaction being queued (MULTI included).
func (cn *conn) useCaching(cmd executor.Command) {
	if cl := cn.client; cl.Multi == nil && !cmd.KeepsCaching() {
		cl.TrackCaching = false
	}
}

// wakeAt schedules a wake of the connection at unix ms until, or at CLIENT UNPAUSE.
func (cn *conn) wakeAt(until int64) {
	cn.srv.state.WaitUnpause(cn.wake)
	time.AfterFunc(time.Until(time.UnixMilli(until))+time.Millisecond, cn.wake)
}

// queuesOutput notes that output for the connection goes through gnet's queue from another
// goroutine (AsyncWrite): from then on its replies go through the loop too, so they stay in
// order with that output.
func (cn *conn) queuesOutput() {
	if !cn.asyncOut.Load() {
		cn.sock.Lock()
		cn.asyncOut.Store(true)
		cn.sock.Unlock()
	}
}
