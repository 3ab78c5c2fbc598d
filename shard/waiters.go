package shard

import (
	"slices"
	"sync/atomic"

	"shardis/codec"
)

// Waiter is one blocked command (BLPOP, BLMOVE, BZPOPMIN, …) waiting for one of its keys to
// hold data. The shard owning each of its keys keeps it in a waiter table, a FIFO per key; a
// commit that writes a key with waiters makes it a candidate for serving (see NextReady).
//
// Lifetime: a Waiter is registered once (Tx.Block, by the holder of every key's shard) and
// leaves every table once, when it is claimed: whoever wins Claim (the holder serving it, its
// timeout, CLIENT UNBLOCK, a disconnect, Store.Close) must call Forget and then settle it with
// its owner. Nobody touches a claimed waiter but its claimer.
type Waiter struct {
	// Type is the type a key must hold to serve the waiter (a list for BLPOP, a sorted set for
	// BZPOPMIN): a key of another type leaves it waiting, as in Redis 7.0.
	Type codec.Type
	// Owner is what the waiter serves (the executor's blocked command); the shard package only
	// hands it back (NextReady's callers, Store.Close).
	Owner WaitOwner
	// Serves, when set, says whether key, of Type with meta m, serves the waiter (a blocked
	// XREAD waits for an id above its own, not just for a stream): nil serves with any.
	// It is called with the shard's waiter table locked, so it must only look at its
	// arguments.
	Serves func(key []byte, m codec.Meta) bool

	claimed atomic.Bool
	entries []waitEntry // set by Block, read by Forget once claimed
}

// WaitOwner is the blocked command behind a Waiter.
type WaitOwner interface {
	// Served is called once the transaction that served the waiter committed (err is the
	// commit's error), by the committing goroutine.
	Served(err error)
	// StoreClosed is called when Store.Close claimed the waiter: nothing will serve it.
	StoreClosed()
}

// waitEntry is the waiter's place in one shard's table.
type waitEntry struct {
	shard *Shard
	key   string // watchMapKey: logical db | key
}

// Claim reports whether the caller is the one to settle the waiter (CAS: exactly one wins).
func (w *Waiter) Claim() bool { return w.claimed.CompareAndSwap(false, true) }

// Claimed reports whether someone claimed the waiter.
func (w *Waiter) Claimed() bool { return w.claimed.Load() }

// Forget removes the claimed waiter from every table that holds it. Any goroutine may call it:
// the tables have their own lock.
func (w *Waiter) Forget() {
	for _, e := range w.entries {
		sh := e.shard
		sh.waitMu.Lock()
		list := slices.DeleteFunc(sh.waiters[e.key], func(o *Waiter) bool { return o == w })
		if len(list) == 0 {
			delete(sh.waiters, e.key)
		} else {
			sh.waiters[e.key] = list
		}
		sh.waitMu.Unlock()
		sh.nWaiters.Add(-1)
		sh.interest.Add(-1)
	}
	if len(w.entries) > 0 {
		w.entries[0].shard.store.blocked.Add(-1)
	}
	w.entries = nil
}

// Block registers w for keys of logical db, in the shards that own them (all held by the
// transaction). A key listed twice is registered once. The caller checked that none holds
// data: a write committed after this one serves w.
func (tx *Tx) Block(db int, keys [][]byte, w *Waiter) {
	for _, key := range keys {
		p := tx.part(key)
		if p < 0 {
			tx.fail(ErrNotHeld)
			continue
		}
		sh := tx.shards[p]
		mk := watchMapKey(db, key)
		if slices.ContainsFunc(w.entries, func(e waitEntry) bool { return e.shard == sh && e.key == mk }) {
			continue
		}
		w.entries = append(w.entries, waitEntry{shard: sh, key: mk})
		sh.waitMu.Lock()
		if sh.waiters == nil {
			sh.waiters = make(map[string][]*Waiter)
		}
		sh.waiters[mk] = append(sh.waiters[mk], w)
		sh.waitMu.Unlock()
		sh.nWaiters.Add(1)
		sh.interest.Add(1)
	}
	if len(w.entries) > 0 {
		tx.store.blocked.Add(1)
	}
}

// ReadyKey is a key a transaction wrote while its shard had waiters for it.
type ReadyKey struct {
	Shard int
	DB    int // logical
	Key   []byte
}

// NextReady returns the next key written since the last call whose shard has waiters for it
// (in the order the writes happened), and false when there is none. The executor serves each
// after a command (see executor's serveReady). Key stays valid until the commit.
func (tx *Tx) NextReady() (ReadyKey, bool) {
	for tx.readyNext < len(tx.touched) {
		t := &tx.touched[tx.readyNext]
		tx.readyNext++
		sh := tx.shards[t.p]
		if sh.nWaiters.Load() == 0 {
			continue
		}
		sh.waitMu.Lock()
		_, ok := sh.waiters[watchMapKey(t.db, []byte(t.key))]
		sh.waitMu.Unlock()
		if ok {
			return ReadyKey{Shard: sh.id, DB: t.db, Key: []byte(t.key)}, true
		}
	}
	return ReadyKey{}, false
}

// readyWaitedIn records for NextReady every key of logical db that waiters of part p wait for,
// after SWAPDB or FLUSHDB changed what the db holds: a key that holds data now serves its
// waiters (Redis serves them after SWAPDB), and a stream that went wakes its blocked
// XREADGROUPs with an error (Redis's scanDatabaseForDeletedStreams); serving checks each.
func (tx *Tx) readyWaitedIn(p, db int) {
	sh := tx.shards[p]
	if sh.nWaiters.Load() == 0 {
		return
	}
	var keys []string
	sh.waitMu.Lock()
	for mk := range sh.waiters {
		if mk[0] == byte(db) {
			keys = append(keys, mk[1:])
		}
	}
	sh.waitMu.Unlock()
	pdb := sh.dbmap[db]
	for _, k := range keys {
		tx.noteReady(p, pdb, []byte(k))
	}
}

// FirstWaiter returns the waiter that has waited longest for rk among those not yet claimed
// that a key of type t serves, or nil.
func (tx *Tx) FirstWaiter(rk ReadyKey, t codec.Type) *Waiter {
	return tx.FirstServed(rk, codec.Meta{Type: t})
}

// FirstServed returns the waiter that has waited longest for rk among those not yet claimed
// that the key, whose meta is m, serves (its type, and Waiter.Serves), or nil.
func (tx *Tx) FirstServed(rk ReadyKey, m codec.Meta) *Waiter {
	sh := tx.store.shards[rk.Shard]
	sh.waitMu.Lock()
	defer sh.waitMu.Unlock()
	for _, w := range sh.waiters[watchMapKey(rk.DB, rk.Key)] {
		if w.Type == m.Type && !w.claimed.Load() && (w.Serves == nil || w.Serves(rk.Key, m)) {
			return w
		}
	}
	return nil
}

// FirstWaiterFunc returns the waiter that has waited longest for rk among those not yet
// claimed for which servable reports true, or nil. servable runs without the table's lock, so
// it may read the transaction.
func (tx *Tx) FirstWaiterFunc(rk ReadyKey, servable func(w *Waiter) bool) *Waiter {
	sh := tx.store.shards[rk.Shard]
	sh.waitMu.Lock()
	list := slices.Clone(sh.waiters[watchMapKey(rk.DB, rk.Key)])
	sh.waitMu.Unlock()
	for _, w := range list {
		if !w.claimed.Load() && servable(w) {
			return w
		}
	}
	return nil
}

// Holds reports whether the transaction holds shard id.
func (tx *Tx) Holds(id int) bool { return tx.partOf(id) >= 0 }

// Served records that w, claimed and forgotten, was served by this transaction: its owner is
// told once the transaction commits.
func (tx *Tx) Served(w *Waiter) { tx.served = append(tx.served, w) }

// Defer records that rk is ready but serving its first waiter needs shards this transaction
// does not hold: whoever commits the transaction hands it to the store's ReadyServer once the
// shards are free (see Store.SetReadyServer).
func (tx *Tx) Defer(rk ReadyKey) {
	for _, d := range tx.deferred {
		if d.Shard == rk.Shard && d.DB == rk.DB && string(d.Key) == string(rk.Key) {
			return
		}
	}
	rk.Key = slices.Clone(rk.Key)
	tx.deferred = append(tx.deferred, rk)
}

// settleServed tells the owners of the waiters this transaction served how its commit went.
func (tx *Tx) settleServed(err error) {
	if len(tx.served) == 0 {
		return
	}
	served := tx.served
	tx.served = nil // an owner's Served may start work that reuses this shard's transaction
	for _, w := range served {
		w.Owner.Served(err)
	}
}

// takeDeferred returns the keys deferred by the committed transaction and forgets them.
func (tx *Tx) takeDeferred() []ReadyKey {
	d := tx.deferred
	tx.deferred = nil
	return d
}

// ReadyServer serves deferred ready keys (see Tx.Defer): it acquires the shards it needs, so
// it runs in a goroutine that holds none.
type ReadyServer func(keys []ReadyKey)

// SetReadyServer installs the function that serves deferred ready keys (the executor's).
func (s *Store) SetReadyServer(f ReadyServer) { s.readyServer = f }

// serveDeferred hands keys to the ready server, in the calling goroutine, which holds no
// shard.
func (s *Store) serveDeferred(keys []ReadyKey) {
	if len(keys) > 0 && s.readyServer != nil {
		s.readyServer(keys)
	}
}

// WaitersOf returns the waiters registered for key in logical db of shard id, oldest first (a
// copy). For tests and for the shards a deferred serve must hold.
func (s *Store) WaitersOf(id, db int, key []byte) []*Waiter {
	sh := s.shards[id]
	sh.waitMu.Lock()
	defer sh.waitMu.Unlock()
	return slices.Clone(sh.waiters[watchMapKey(db, key)])
}

// Blocked returns the number of registered waiters (INFO blocked_clients) and of keys with
// waiters, over every shard and database (total_blocking_keys).
func (s *Store) Blocked() (waiters, keys int) {
	for _, sh := range s.shards {
		sh.waitMu.Lock()
		keys += len(sh.waiters)
		sh.waitMu.Unlock()
	}
	return int(s.blocked.Load()), keys
}

// closeWaiters settles every waiter still registered: Store.Close, once the shards stopped.
func (s *Store) closeWaiters() {
	var all []*Waiter
	for _, sh := range s.shards {
		sh.waitMu.Lock()
		for _, list := range sh.waiters {
			all = append(all, list...)
		}
		sh.waitMu.Unlock()
	}
	for _, w := range all {
		if w.Claim() {
			w.Forget()
			w.Owner.StoreClosed()
		}
	}
}
