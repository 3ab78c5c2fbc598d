package shard

import (
	"fmt"
	"slices"
	"sync"
)

var barrierPool = sync.Pool{New: func() any {
	return &barrier{arrived: make(chan struct{}), release: make(chan struct{})}
}}

// Held is a set of shards parked for one coordinator, and the transaction spanning them.
type Held struct {
	store    *Store
	tx       *Tx
	barriers []*barrier
}

var txPool = sync.Pool{}

// Acquire parks the shards ids (any order, duplicates allowed) and returns them held, with a
// transaction spanning them. Shards are taken one at a time in ascending id, each only after
// the previous one parked, so two coordinators can never wait for each other. Each shard
// first commits what it was running, so the holder sees all earlier writes.
// The caller must be a goroutine of its own (never a shard's) and must call Release.
func (s *Store) Acquire(ids []int) *Held {
	ids = slices.Clone(ids)
	slices.Sort(ids)
	ids = slices.Compact(ids)
	h := &Held{store: s}
	shards := make([]*Shard, 0, len(ids))
	for _, id := range ids {
		b := barrierPool.Get().(*barrier)
		s.shards[id].inbox <- message{park: b}
		<-b.arrived
		h.barriers = append(h.barriers, b)
		shards = append(shards, s.shards[id])
	}
	tx, _ := txPool.Get().(*Tx)
	if tx == nil || tx.store != s {
		tx = newTx(s)
	}
	tx.begin(shards...)
	tx.bulk = false
	h.tx = tx
	return h
}

// AcquireAll parks every shard.
func (s *Store) AcquireAll() *Held {
	ids := make([]int, len(s.shards))
	for i := range ids {
		ids[i] = i
	}
	return s.Acquire(ids)
}

// Tx returns the transaction spanning the held shards.
func (h *Held) Tx() *Tx { return h.tx }

// Commit commits the writes made so far as one atomic batch across the held shards; the
// shards stay held. Call it between the commands of a transaction that must each be durable
// before the next runs; Release commits too.
func (h *Held) Commit() error { return h.tx.commitAndGoOn() }

// Release commits the held transaction atomically across every held shard and lets the
// shards go on. It returns the commit's error. When the transaction made a key ready whose
// first waiter needs shards it did not hold, Release serves it before returning, holding them.
func (h *Held) Release() error {
	err := h.tx.commit()
	if err != nil {
		err = fmt.Errorf("multi-shard %w", err)
	}
	deferred := h.tx.takeDeferred()
	defer h.store.serveDeferred(deferred)
	for _, b := range h.barriers {
		b.release <- struct{}{}
		barrierPool.Put(b)
	}
	h.barriers = nil
	h.tx.shards = h.tx.shards[:0]
	txPool.Put(h.tx)
	h.tx = nil
	return err
}
