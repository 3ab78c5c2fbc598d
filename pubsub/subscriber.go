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

	mu     sync.Mutex
	queue  []byte // frames not yet handed to the connection
	waking bool   // wake was called and Drain has not run since
	closed bool   // overflowed or gone: deliveries are dropped
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

// over reports whether a queue of n bytes breaks the limit at now, given since, when it was
// first seen over the soft limit; it returns the new since. As in Redis, the first time over
// the soft limit only starts the clock.
func (l Limit) over(n int64, now, since time.Time) (bool, time.Time) {
	if l.Hard > 0 && n > l.Hard {
		return true, since
	}
	if l.Soft <= 0 || n <= l.Soft {
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

// Drain appends the queued frames to dst and empties the queue. Owning loop only.
func (s *Subscriber) Drain(dst []byte) []byte {
	s.mu.Lock()
	dst = append(dst, s.queue...)
	if cap(s.queue) > 64<<10 {
		s.queue = nil
	} else {
		s.queue = s.queue[:0]
	}
	s.waking = false
	s.pending.Store(false)
	s.mu.Unlock()
	return dst
}

// Queued returns the bytes waiting in the queue (CLIENT LIST omem).
func (s *Subscriber) Queued() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.queue)
}

// Close drops the queue; later deliveries are ignored. The connection calls it when it ends.
func (s *Subscriber) Close() {
	s.mu.Lock()
	s.closed = true
	s.queue = nil
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
	total := int64(len(s.queue) + size)
	var broken bool
	if broken, s.overSoft = s.limit().over(total, time.Now(), s.overSoft); broken {
		s.closed = true
		s.queue = nil
		s.pending.Store(false)
		s.mu.Unlock()
		s.overflow(total)
		return
	}
	s.queue = append(append(s.queue, head[:]...), body...)
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
