package shard

import (
	"slices"
	"sync"
	"sync/atomic"

	"shardis/codec"
)

// Watcher is one connection's WATCH state: the keys it watches and whether any of them changed
// since. The shard that owns a watched key keeps an entry for it, and every write of the key
// (any command, lazy expiry, the TTL worker, FLUSHDB, SWAPDB) marks the watcher dirty as the
// write is made: a shard where nobody watches pays one atomic load per write (Shard.nWatches).
//
// A Watcher is safe for concurrent use: WATCH registers keys from the shards that own them
// while the connection's loop may unwatch (RESET, a disconnect).
type Watcher struct {
	mu      sync.Mutex
	entries []*watchEntry
	closed  bool // the connection is gone: Watch registers nothing more
	dirty   atomic.Bool
}

// watchEntry is one watched key, kept both by its Watcher and by the shard owning the key.
// expired and expireAt are guarded by the shard's watchMu.
type watchEntry struct {
	w     *Watcher
	shard *Shard
	db    int // logical
	key   string
	// expireAt is the key's expire time at WATCH (0: none): once it passes, EXEC fails even if
	// nothing deleted the key yet, as in Redis 7.0.
	expireAt int64
	// expired: the key was already logically expired at WATCH. Its deletion (lazy or active
	// expiry) is then no change; any other write is.
	expired bool
}

func watchMapKey(db int, key []byte) string {
	return string(append([]byte{byte(db)}, key...))
}

// Watch registers w for key in logical db (WATCH), noting whether the key is already
// expired. It does not expire the key. The caller holds key's shard.
func (tx *Tx) Watch(db int, key []byte, w *Watcher) {
	p := tx.part(key)
	if p < 0 {
		tx.fail(ErrNotHeld)
		return
	}
	sh := tx.shards[p]
	var exp int64
	if v, ok := tx.getMetaHead(p, codec.AppendMetaKey(nil, tx.pdb(p, db), key)); ok {
		exp = codec.MetaExpire(v)
	}
	e := &watchEntry{w: w, shard: sh, db: db, key: string(key), expireAt: exp,
		expired: exp != 0 && exp <= tx.nowMs}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return
	}
	for _, o := range w.entries {
		if o.shard == sh && o.db == db && o.key == e.key {
			return // watched already
		}
	}
	w.entries = append(w.entries, e)
	mk := watchMapKey(db, key)
	sh.watchMu.Lock()
	if sh.watches == nil {
		sh.watches = make(map[string][]*watchEntry)
	}
	sh.watches[mk] = append(sh.watches[mk], e)
	sh.nWatches.Add(1)
	sh.interest.Add(1)
	sh.watchMu.Unlock()
}

// Dirty reports whether a watched key changed since it was watched, or its expire time (as
// of WATCH) has passed at nowMs: EXEC must then fail.
func (w *Watcher) Dirty(nowMs int64) bool {
	if w.dirty.Load() {
		return true
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, e := range w.entries {
		e.shard.watchMu.Lock()
		passed := !e.expired && e.expireAt != 0 && e.expireAt <= nowMs
		e.shard.watchMu.Unlock()
		if passed {
			return true
		}
	}
	return false
}

// Watching reports whether w watches any key.
func (w *Watcher) Watching() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.entries) > 0
}

// Shards appends the ids of the shards owning w's keys to ids (EXEC holds them too, so its
// check is atomic with the writes to those keys).
func (w *Watcher) Shards(ids []int) []int {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, e := range w.entries {
		ids = append(ids, e.shard.id)
	}
	return ids
}

// Unwatch forgets every watched key and clears the dirty mark (UNWATCH, EXEC, DISCARD).
func (w *Watcher) Unwatch() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.unwatchLocked()
}

// Close unwatches everything and makes later Watch calls no-ops: the connection is gone, and
// a WATCH of it still running in a shard must not leave an entry behind.
func (w *Watcher) Close() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.closed = true
	w.unwatchLocked()
}

func (w *Watcher) unwatchLocked() {
	for _, e := range w.entries {
		sh := e.shard
		mk := watchMapKey(e.db, []byte(e.key))
		sh.watchMu.Lock()
		list := slices.DeleteFunc(sh.watches[mk], func(o *watchEntry) bool { return o == e })
		if len(list) == 0 {
			delete(sh.watches, mk)
		} else {
			sh.watches[mk] = list
		}
		sh.nWatches.Add(-1)
		sh.interest.Add(-1)
		sh.watchMu.Unlock()
	}
	clear(w.entries)
	w.entries = w.entries[:0]
	w.dirty.Store(false)
}

// ---- the transaction's side ----

// Writes mark watchers as they happen, not at commit: a later command of the same group (an
// EXEC of another connection, run in the same shard transaction) must already see the mark.
// A commit that then fails leaves a watcher marked for a change that did not land, which only
// costs its client a retry.

// touch is a user key a transaction wrote while its shard had waiters: NextReady serves them.
type touch struct {
	p       int
	db, pdb int // logical and physical
	key     string
}

// noteWrite marks the watchers of the user key that raw key of part p belongs to, and records
// the key for the shard's waiters and for client-side caching (tracked.go), when the part's
// shard has any of them (one atomic load when it has none): deleted says the write deletes raw.
func (tx *Tx) noteWrite(p int, raw []byte, deleted bool) {
	sh := tx.shards[p]
	if sh.interest.Load() == 0 {
		return
	}
	pdb, key, ok := codec.UserKeyOf(raw)
	if !ok {
		return
	}
	if tx.store.tracking.Load() {
		tx.noteTracked(key)
	}
	// A key's deletion (its meta's) is noted too: a blocked XREADGROUP is woken by it.
	if sh.nWaiters.Load() > 0 && (!deleted || raw[0] == codec.PrefixMeta) {
		tx.noteReady(p, pdb, key)
	}
	if sh.nWatches.Load() == 0 {
		return
	}
	metaDeleted := deleted && raw[0] == codec.PrefixMeta
	dataDeleted := deleted && raw[0] == codec.PrefixData
	sh.watchMu.Lock()
	defer sh.watchMu.Unlock()
	for _, e := range sh.watches[watchMapKey(sh.logicalDB(pdb), key)] {
		if e.expired {
			// The key was already expired at WATCH: deleting it (lazy or active expiry, a
			// DEL) is no change, and it is then simply absent with no expire time left to
			// pass. Creating it again is a change.
			switch {
			case metaDeleted:
				e.expired, e.expireAt = false, 0
				continue
			case dataDeleted:
				continue
			}
		}
		e.w.dirty.Store(true)
	}
}

// touchWatchedInDB marks the watchers of every watched key of logical db in part p that
// exists in one of the physical dbs pdbs: what FLUSHDB (the db's own) and SWAPDB (both)
// change, as Redis counts it. The caller runs it before the change.
func (tx *Tx) touchWatchedInDB(p, db int, pdbs ...int) {
	sh := tx.shards[p]
	if sh.nWatches.Load() == 0 {
		return
	}
	var keys []string
	sh.watchMu.Lock()
	for mk := range sh.watches {
		if mk[0] == byte(db) {
			keys = append(keys, mk[1:])
		}
	}
	sh.watchMu.Unlock()
	for _, k := range keys {
		for _, pdb := range pdbs {
			if _, ok := tx.getMetaHead(p, codec.AppendMetaKey(nil, pdb, []byte(k))); ok {
				sh.watchMu.Lock()
				for _, e := range sh.watches[watchMapKey(db, []byte(k))] {
					e.w.dirty.Store(true)
				}
				sh.watchMu.Unlock()
				break
			}
		}
	}
}

// noteReady records that user key of part p (physical db pdb) was written, for NextReady.
func (tx *Tx) noteReady(p, pdb int, key []byte) {
	if n := len(tx.touched); n > 0 {
		if last := &tx.touched[n-1]; last.p == p && last.pdb == pdb && last.key == string(key) {
			return // the common case: several data keys of one collection
		}
	}
	tx.touched = append(tx.touched, touch{p: p, db: tx.shards[p].logicalDB(pdb), pdb: pdb, key: string(key)})
}

// NoteWritten marks key of logical db written without writing anything: for a command whose
// write leaves the stored bytes as they were (HSET of a field to the value it holds), which
// Redis still counts as a change of the key for WATCH, client-side caching and blocked
// clients. It costs one atomic load when the key's shard has none of those.
func (tx *Tx) NoteWritten(db int, key []byte) {
	p := tx.part(key)
	if p < 0 {
		tx.fail(ErrNotHeld)
		return
	}
	if tx.needsShard() || tx.shards[p].interest.Load() == 0 {
		return
	}
	tx.noteWrite(p, codec.AppendMetaKey(nil, tx.pdb(p, db), key), false)
}
