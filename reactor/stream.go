package reactor

import (
	"log"
	"sync/atomic"
	"time"

	"github.com/valyala/bytebufferpool"

	"shardis/codec"
	"shardis/executor"
)

// Streamed replies. A command whose reply walks a big collection (HGETALL of a million
// fields) leaves a stream (executor.ReplyStream) in its slot instead of the whole reply. When the loop gets to
// that slot it starts a pump: a goroutine fills pieces of the reply from the stream, at most
// pumpAhead ahead of the socket, and the loop writes them while gnet's output buffer holds
// less than pumpHighWater. The server thus holds a few pieces of the reply, never the whole,
// and a slow reader slows only its own reply. Replies after the streamed one wait their turn.
const (
	pumpChunk     = 64 << 10 // bytes per piece (a little more: the last element is whole)
	pumpAhead     = 2        // pieces filled ahead of the socket
	pumpHighWater = 1 << 20  // output buffered in gnet above which the loop stops writing
	pumpPoll      = time.Millisecond
)

// pump produces one streamed reply. The loop owns the pump; the producer goroutine owns the
// stream and closes it when done, stopped or failed.
type pump struct {
	chunks chan *bytebufferpool.ByteBuffer // closed when the producer is finished
	stop   chan struct{}                   // closed by the loop when the connection goes
	err    error                           // why the reply was cut short; set before chunks closes
	queued atomic.Int64                    // bytes of the pieces filled and not yet written
}

func startPump(st executor.ReplyStream, resp3 bool, wake func()) *pump {
	p := &pump{chunks: make(chan *bytebufferpool.ByteBuffer, pumpAhead), stop: make(chan struct{})}
	go p.produce(st, resp3, wake)
	return p
}

func (p *pump) produce(st executor.ReplyStream, resp3 bool, wake func()) {
	defer func() {
		st.Close()
		close(p.chunks)
		wake() // the loop learns the end from the closed channel
	}()
	for {
		buf := bytebufferpool.Get()
		w := codec.Writer{Buf: buf.B[:0], RESP3: resp3}
		more, err := st.Fill(&w, pumpChunk)
		buf.B = w.Buf
		if err != nil {
			bytebufferpool.Put(buf)
			p.err = err
			return
		}
		p.queued.Add(int64(len(buf.B)))
		select {
		case p.chunks <- buf:
		case <-p.stop:
			bytebufferpool.Put(buf)
			return
		}
		if !more {
			return
		}
		wake()
	}
}

// pumpState is what pumpOut achieved.
type pumpState uint8

const (
	pumpWaiting pumpState = iota // for the producer or for the socket: a wake will come
	pumpDone                     // the streamed reply is out
	pumpFailed                   // the reply was cut short: the connection must close
)

// pumpOut writes the pieces that are ready while the socket keeps up.
func (cn *conn) pumpOut() pumpState {
	p := cn.pump
	for {
		if cn.gc.OutboundBuffered() >= pumpHighWater {
			cn.pollLater() // gnet has no "drained" callback: look again shortly
			return pumpWaiting
		}
		select {
		case buf, ok := <-p.chunks:
			if !ok {
				cn.pump = nil
				if p.err != nil {
					log.Printf("client %d: streamed reply cut short: %v", cn.client.ID, p.err)
					return pumpFailed
				}
				return pumpDone
			}
			_, _ = cn.gc.Write(buf.B) // gnet copies what the socket does not take
			p.queued.Add(-int64(len(buf.B)))
			cn.srv.state.Stats.NetOutputBytes.Add(int64(len(buf.B)))
			cn.srv.state.Stats.WritesProcessed.Add(1)
			bytebufferpool.Put(buf)
		default:
			return pumpWaiting // the producer wakes the loop when a piece is ready
		}
	}
}

func (cn *conn) pollLater() {
	if cn.poll == nil {
		cn.poll = time.AfterFunc(pumpPoll, cn.wake)
		return
	}
	cn.poll.Reset(pumpPoll)
}

// stopStreams ends what a closed connection was sending (loop only).
func (cn *conn) stopStreams() {
	cn.closed.Store(true)
	if cn.poll != nil {
		cn.poll.Stop()
	}
	if cn.pump != nil {
		close(cn.pump.stop)
		cn.pump = nil
	}
	if cn.busy && cn.b.done.Load() {
		cn.b.closeStreams()
	}
}
