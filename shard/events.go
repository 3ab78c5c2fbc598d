package shard

import (
	"shardis/codec"
	"shardis/pubsub"
)

// Keyspace events (Redis's keyspace notifications) are produced by commands as they write and
// published only once their transaction committed: a failed commit changed nothing, so it
// announces nothing. The shard treats an event's class as an opaque bit (package pubsub
// defines them); it only filters by the enabled classes and keeps order.

// EventExpired is the class of the "expired" event the shard itself produces (lazy expiry
// and the TTL walk).
const EventExpired = uint32(pubsub.Expired)

// EventKeyMiss is the class of the "keymiss" event of a read lookup that found nothing.
const EventKeyMiss = uint32(pubsub.KeyMiss)

// EventNew is the class of the "new" event SetMeta produces when it adds a key.
const EventNew = uint32(pubsub.New)

// Event is one keyspace event of a committed transaction. Key aliases the transaction's
// memory: it is valid only during the EventSink call.
type Event struct {
	Class uint32 // one class bit (pubsub.Class)
	Name  string // "set", "lpush", "expired", …
	DB    int    // logical database
	Key   []byte
	// Origin is what the command that made the event named as its origin (SetOrigin), or nil;
	// Pos is how long the command's reply was when the event was made. The sink delivers to the
	// origin's own subscription at that point of the reply, as Redis writes it.
	Origin pubsub.Origin
	Pos    int
}

// EventOrigin is the origin of a command's events: Of receives the messages the events make
// for the connection's own subscriptions (the reactor's reply slot), Reply is the writer of
// the command's reply.
type EventOrigin struct {
	Of    pubsub.Origin
	Reply *codec.Writer
}

// EventSink publishes the events of a transaction that committed, in the order they were
// made. It is called by the goroutine that committed, before any of the transaction's
// commands is reported done, so a subscriber's messages are queued before the writer's reply
// is sent.
type EventSink func(events []Event)

// SetEvents sets which event classes are produced (0: none; a write then pays one atomic
// load) and where they go. sink is set once, before traffic; classes may change at any time
// (CONFIG SET notify-keyspace-events).
func (s *Store) SetEvents(classes uint32, sink EventSink) {
	if sink != nil {
		s.eventSink = sink
	}
	s.eventClasses.Store(classes)
}

// EventClasses returns the classes of events currently produced.
func (s *Store) EventClasses() uint32 { return s.eventClasses.Load() }

// Notify records keyspace event name of class about key in logical db, if that class is
// enabled; it is published when the transaction commits. A view records events too (key
// misses of reads): they are published when the view's answer stands (see EndView).
func (tx *Tx) Notify(class uint32, name string, db int, key []byte) {
	if tx.store.eventClasses.Load()&class == 0 {
		return
	}
	// Keys share one buffer; an append that moves it leaves earlier keys in the old array,
	// which they keep alive.
	start := len(tx.eventKeys)
	tx.eventKeys = append(tx.eventKeys, key...)
	end := len(tx.eventKeys)
	ev := Event{Class: class, Name: name, DB: db, Key: tx.eventKeys[start:end:end], Origin: tx.origin.Of}
	if tx.origin.Reply != nil {
		ev.Pos = len(tx.origin.Reply.Buf)
	}
	tx.events = append(tx.events, ev)
}

// SetOrigin names the origin of the events the next command makes (the connection's reply
// slot, see Event.Origin) and returns the previous one, which the caller restores after the
// command: background work (the TTL walk) then makes events of no origin.
func (tx *Tx) SetOrigin(o EventOrigin) (prev EventOrigin) {
	prev, tx.origin = tx.origin, o
	return prev
}

// publishEvents hands the recorded events to the sink and forgets them.
func (tx *Tx) publishEvents() {
	if len(tx.events) > 0 && tx.store.eventSink != nil {
		tx.store.eventSink(tx.events)
	}
	tx.dropEvents()
}

// dropEvents forgets the recorded events (a failed commit, or after publishing them).
func (tx *Tx) dropEvents() {
	clear(tx.events)
	tx.events = tx.events[:0]
	if cap(tx.eventKeys) > 1<<20 {
		tx.eventKeys = nil
	}
	tx.eventKeys = tx.eventKeys[:0]
}
