// Package pubsub is the channel registry: who is subscribed to which channel, pattern and
// shard channel, and the delivery of published messages to every subscriber, whatever event
// loop its connection lives on. It knows nothing of connections: a Subscriber is a queue
// with a wake hook, which the reactor drains from the subscriber's own loop.
package pubsub

import (
	"slices"
	"strconv"
	"sync"
	"sync/atomic"

	"shardis/internal/glob"
)

// Registry holds every subscription. Its zero value is empty and ready; it is safe for
// concurrent use.
//
// Publish holds the read lock while it delivers, and (un)subscribing takes the write lock,
// so once an UNSUBSCRIBE returned no message reaches the subscriber for that channel, and a
// message published before a SUBSCRIBE returned is not delivered to it. Messages of one
// publisher reach each subscriber in publish order: its PUBLISHes run one after the other,
// and each appends to the subscriber's queue, which the subscriber's loop writes in order.
type Registry struct {
	mu     sync.RWMutex
	byName [numKinds]map[string][]*Subscriber
	// total counts subscriptions of every kind, so that a publish (or a keyspace
	// notification) with nobody listening costs one atomic load.
	total atomic.Int64
}

// Active reports whether anyone is subscribed to anything.
func (r *Registry) Active() bool { return r.total.Load() > 0 }

// Subscribe adds s to name of kind k and reports whether it was new.
func (r *Registry) Subscribe(s *Subscriber, k Kind, name string) (added bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !s.subs[k].add(name) {
		return false
	}
	if r.byName[k] == nil {
		r.byName[k] = make(map[string][]*Subscriber)
	}
	r.byName[k][name] = append(r.byName[k][name], s)
	r.total.Add(1)
	return true
}

// Unsubscribe removes s from name of kind k and reports whether it was subscribed.
func (r *Registry) Unsubscribe(s *Subscriber, k Kind, name string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.unsubscribeLocked(s, k, name)
}

func (r *Registry) unsubscribeLocked(s *Subscriber, k Kind, name string) bool {
	if !s.subs[k].remove(name) {
		return false
	}
	list := r.byName[k][name]
	if i := slices.Index(list, s); i >= 0 {
		list[i] = list[len(list)-1]
		list[len(list)-1] = nil
		list = list[:len(list)-1]
	}
	if len(list) == 0 {
		delete(r.byName[k], name)
	} else {
		r.byName[k][name] = list
	}
	r.total.Add(-1)
	return true
}

// Names returns s's subscriptions of kind k, oldest first.
func (r *Registry) Names(s *Subscriber, k Kind) []string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return slices.Clone(s.subs[k].list)
}

// Count returns s's number of subscriptions of kind k.
func (r *Registry) Count(s *Subscriber, k Kind) int {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return s.count(k)
}

// UnsubscribeAll removes every subscription of s (RESET, CLIENT KILL, the connection
// closing).
func (r *Registry) UnsubscribeAll(s *Subscriber) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for k := range numKinds {
		for _, name := range slices.Clone(s.subs[k].list) {
			r.unsubscribeLocked(s, k, name)
		}
	}
}

// Publish delivers message on channel to its subscribers and to the subscribers of every
// matching pattern, and returns the number of receivers as Redis counts them (a client
// matching through two patterns counts twice).
func (r *Registry) Publish(channel, message []byte) int { return r.publish(nil, 0, channel, message) }

// Origin is the command that published a message, when it matters: a message for the
// origin's own subscriber is handed to Capture instead of the subscriber's queue, with the
// length pos the command's reply had when it made the message, so it is written inside the
// reply where Redis writes it (Redis writes a client's pushes as its command makes them). The
// reactor's reply slot implements it; Capture is called by the goroutine that ran the command,
// while the slot is still its, in the order the messages were made.
type Origin interface {
	Subscriber() *Subscriber
	Capture(frame []byte, pos int)
}

// publish is Publish on behalf of origin (nil: none), whose reply was pos bytes long.
func (r *Registry) publish(origin Origin, pos int, channel, message []byte) int {
	if !r.Active() {
		return 0
	}
	r.mu.RLock()
	defer r.mu.RUnlock()
	n := 0
	if subs := r.byName[Channel][string(channel)]; len(subs) > 0 {
		body := make([]byte, 0, 32+len(channel)+len(message))
		body = appendBulk(body, "message")
		body = appendBulkBytes(body, channel)
		body = appendBulkBytes(body, message)
		for _, s := range subs {
			s.deliverFrom(origin, pos, 3, body)
		}
		n += len(subs)
	}
	var body []byte
	for pattern, subs := range r.byName[Pattern] {
		if !glob.MatchString(pattern, string(channel), false) {
			continue
		}
		body = appendBulk(body[:0], "pmessage")
		body = appendBulk(body, pattern)
		body = appendBulkBytes(body, channel)
		body = appendBulkBytes(body, message)
		for _, s := range subs {
			s.deliverFrom(origin, pos, 4, body)
		}
		n += len(subs)
	}
	return n
}

// PublishShard delivers message to the subscribers of shard channel (SPUBLISH).
func (r *Registry) PublishShard(channel, message []byte) int {
	if !r.Active() {
		return 0
	}
	r.mu.RLock()
	defer r.mu.RUnlock()
	subs := r.byName[ShardChannel][string(channel)]
	if len(subs) == 0 {
		return 0
	}
	body := make([]byte, 0, 32+len(channel)+len(message))
	body = appendBulk(body, "smessage")
	body = appendBulkBytes(body, channel)
	body = appendBulkBytes(body, message)
	for _, s := range subs {
		s.deliver(3, body)
	}
	return len(subs)
}

// Channels returns the names of kind k that have subscribers and match pattern (every name
// when pattern is nil), as PUBSUB CHANNELS and SHARDCHANNELS list them.
func (r *Registry) Channels(k Kind, pattern []byte) []string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	var out []string
	for name := range r.byName[k] {
		if pattern == nil || glob.MatchString(string(pattern), name, false) {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}

// NumSub returns the number of subscribers of name of kind k.
func (r *Registry) NumSub(k Kind, name []byte) int {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return len(r.byName[k][string(name)])
}

// NumPat returns the number of distinct patterns with subscribers (PUBSUB NUMPAT).
func (r *Registry) NumPat() int { return r.Len(Pattern) }

// Len returns the number of distinct names of kind k with subscribers (INFO's
// pubsub_channels, pubsub_patterns, pubsubshard_channels).
func (r *Registry) Len(k Kind) int {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return len(r.byName[k])
}

func appendBulk(b []byte, s string) []byte {
	b = append(b, '$')
	b = strconv.AppendInt(b, int64(len(s)), 10)
	b = append(b, '\r', '\n')
	b = append(b, s...)
	return append(b, '\r', '\n')
}

func appendBulkBytes(b []byte, s []byte) []byte {
	b = append(b, '$')
	b = strconv.AppendInt(b, int64(len(s)), 10)
	b = append(b, '\r', '\n')
	b = append(b, s...)
	return append(b, '\r', '\n')
}
