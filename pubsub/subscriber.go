package pubsub

import (
	"sync"
	"sync/atomic"
	"time"
)

// Kind is one of the three subscription spaces Redis keeps apart.
type Kind uint8

// Subscription kinds.
const (
	Channel      Kind = iota // SUBSCRIBE
	Pattern                  // PSUBSCRIBE
	ShardChannel             // SSUBSCRIBE
	numKinds
)

// Subscriber is one connection's side of pub/sub: the subscriptions it holds and the queue
// of messages published to it that its connection has not written yet.
//
// Ownership: the connection's event loop creates it (with the hooks) and is the only one to
// Drain it; any goroutine may deliver to it (PUBLISH, keyspace notifications). Its
// subscription sets are changed only by the Registry under the registry's lock. The queue is
// bounded: a delivery that would take it past Limit closes the subscriber, drops the queue
// and calls Overflow once (the reactor disconnects the client and logs it), so a subscriber
// that stops reading never makes the server's memory grow without bound.
type Subscriber struct {
	// RESP3 says how messages are framed for it (push frames rather than arrays). The
	// connection keeps it equal to its protocol.
	RESP3 atomic.Bool

	wake     func()        // asks the owning loop to Drain; called once per empty->non-empty
	limit    func() Limit  // the queue's limits (client-output-buffer-limit pubsub)
	overflow func(n int64) // the queue would hold n bytes: the subscriber is closed

	mu sync.Mutex
	// queue holds the frames not yet handed to the connection, oldest first, in chunks of
	// about queueChunk bytes (a frame is never split): a long queue grows without copying
	// itself, and the connection takes it a few chunks at a time (Drain's max).
	queue  [][]byte
	queued int  // bytes in queue
	waking bool // wake was called and Drain has not run since
	closed bool // overflowed or gone: deliveries are dropped
	// overSoft is when the queue was first seen over the soft limit (zero: it is not).
	overSoft time.Time
	pending  atomic.Bool

	// subscriptions by kind, in the order they were made (UNSUBSCRIBE without arguments
	// answers them in that order); guarded by the Registry's lock.
	subs [numKinds]orderedSet
}

// Limit bounds a subscriber's queue as Redis's client-output-buffer-limit does: past Hard
// bytes, or past Soft bytes for longer than SoftFor, the subscriber is closed. 0 disables a
// limit.
type Limit struct {
	Hard, Soft int64
	SoftFor    time.Duration
}

// replyBuffer is the size of a Redis client's own reply buffer, which its output limit does not
// count: only what is queued past it.
const replyBuffer = 16 << 10

// over reports whether a queue of n bytes breaks the limit at now, given since, when it was
// first seen over the soft limit; it returns the new since. As in Redis, the bytes past its
// reply buffer count, reaching a limit breaks it, and the first time at the soft limit only
// starts the clock.
func (l Limit) over(n int64, now, since time.Time) (bool, time.Time) {
	n -= replyBuffer
	if l.Hard > 0 && n >= l.Hard {
		return true, since
	}
	if l.Soft <= 0 || n < l.Soft {
		return false, time.Time{}
	}
	if since.IsZero() {
		return false, now
	}
	return now.Sub(since) > l.SoftFor, since
}

// NewSubscriber returns a subscriber whose deliveries call wake when its queue becomes
// non-empty, and overflow when the queue would break limit().
func NewSubscriber(wake func(), limit func() Limit, overflow func(n int64)) *Subscriber {
	return &Subscriber{wake: wake, limit: limit, overflow: overflow}
}

// Pending reports cheaply whether messages wait in the queue.
func (s *Subscriber) Pending() bool { return s.pending.Load() }

// queueChunk is the most a chunk of a queue grows to by appending frames (a bigger frame
// gets a chunk of its own).
const queueChunk = 64 << 10

// DrainAll is Drain's max for "everything queued".
const DrainAll = int(^uint(0) >> 1)

// Drain appends queued frames to dst, oldest first, whole chunks until it appended at least
// max bytes or the queue is empty, and removes them from the queue. Owning loop only; while
// frames remain (Pending), the loop calls it again.
func (s *Subscriber) Drain(dst []byte, max int) []byte {
	s.mu.Lock()
	took, n := 0, 0
	for took < len(s.queue) && n < max {
		n += len(s.queue[took])
		dst = append(dst, s.queue[took]...)
		took++
	}
	clear(s.queue[:took])
	s.queue = s.queue[took:]
	s.queued -= n
	if len(s.queue) == 0 {
		s.queue = nil
		s.waking = false
		s.pending.Store(false)
	}
	s.mu.Unlock()
	return dst
}

// Queued returns the bytes waiting in the queue (CLIENT LIST omem).
func (s *Subscriber) Queued() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.queued
}

// Close drops the queue; later deliveries are ignored. The connection calls it when it ends.
func (s *Subscriber) Close() {
	s.mu.Lock()
	s.closed = true
	s.queue, s.queued = nil, 0
	s.pending.Store(false)
	s.mu.Unlock()
}

// Count returns the number of subscriptions of kind k. Callers hold no lock: the counts are
// only for the subscriber's own connection, which is the only one changing them.
func (s *Subscriber) count(k Kind) int { return len(s.subs[k].list) }

// deliverFrom is deliver, except that a frame for origin's own subscriber goes to origin.
func (s *Subscriber) deliverFrom(origin Origin, pos int, n byte, body []byte) {
	if origin != nil && origin.Subscriber() == s {
		head := s.head(n)
		origin.Capture(append(head[:], body...), pos)
		return
	}
	s.deliver(n, body)
}

// head is the header of a frame of n elements: an array (RESP2) or a push (RESP3).
func (s *Subscriber) head(n byte) [4]byte {
	head := [4]byte{'*', '0' + n, '\r', '\n'}
	if s.RESP3.Load() {
		head[0] = '>'
	}
	return head
}

// deliver queues one frame: an array (RESP2) or a push (RESP3) of n elements whose encoded
// elements are body.
func (s *Subscriber) deliver(n byte, body []byte) {
	head := s.head(n)
	size := len(head) + len(body)
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	total := int64(s.queued + size)
	var broken bool
	if broken, s.overSoft = s.limit().over(total, time.Now(), s.overSoft); broken {
		s.closed = true
		s.queue, s.queued = nil, 0
		s.pending.Store(false)
		s.mu.Unlock()
		s.overflow(total)
		return
	}
	if last := len(s.queue) - 1; last >= 0 && len(s.queue[last])+size <= queueChunk {
		s.queue[last] = append(append(s.queue[last], head[:]...), body...) // grows as a slice does
	} else {
		chunk := make([]byte, 0, size)
		s.queue = append(s.queue, append(append(chunk, head[:]...), body...))
	}
	s.queued += size
	s.pending.Store(true)
	wake := !s.waking
	s.waking = true
	s.mu.Unlock()
	if wake {
		s.wake()
	}
}

// orderedSet is a set of names that remembers insertion order.
type orderedSet struct {
	index map[string]int
	list  []string
}

func (o *orderedSet) add(name string) bool {
	if _, ok := o.index[name]; ok {
		return false
	}
	if o.index == nil {
		o.index = make(map[string]int)
	}
	o.index[name] = len(o.list)
	o.list = append(o.list, name)
	return true
}

func (o *orderedSet) remove(name string) bool {
	i, ok := o.index[name]
	if !ok {
		return false
	}
	delete(o.index, name)
	copy(o.list[i:], o.list[i+1:])
	o.list = o.list[:len(o.list)-1]
	for j := i; j < len(o.list); j++ {
		o.index[o.list[j]] = j
	}
	return true
}
