package shard

import "shardis/codec"

// Client-side caching (CLIENT TRACKING) needs to know every user key a commit changed, as
// Redis's signalModifiedKey tells its tracking table. The shard does not keep that table
// (package tracking does); it only reports, through a Tracker, what each successful commit
// wrote, at the same point WATCH watchers are marked (noteWrite). While nobody tracks, the
// one atomic load of Shard.interest is all a write pays.

// Written is one user key a commit changed and the client whose command changed it (0: no
// client, e.g. the TTL worker or binlog replay), for NOLOOP.
type Written struct {
	Key    []byte
	Writer int64
}

// Tracker receives what commits changed. Invalidate is called by the committing goroutine
// after the commit reached RocksDB and the key cache, before any of its commands' replies is
// released, with the keys in write order (each once per run of writes by one client) and
// flushed set when the transaction ran FLUSHDB or FLUSHALL. keys and their bytes are valid
// only during the call.
type Tracker interface {
	Invalidate(keys []Written, flushed bool)
}

// SetTracker installs the store's tracker (main wiring, before serving).
func (s *Store) SetTracker(t Tracker) { s.tracker = t }

// TrackWrites turns the reporting of written keys on or off. The tracker turns it on when the
// first client enables tracking and off when the last one disables it; calls must not
// overlap and must alternate (on, off, on, ...).
func (s *Store) TrackWrites(on bool) {
	d := int32(-1)
	if on {
		d = 1
	}
	s.tracking.Store(on)
	for _, sh := range s.shards {
		sh.interest.Add(d)
	}
	if on {
		// A transaction that began before this point may have written keys unrecorded;
		// its commit sees the generation move and reports every key it wrote.
		s.trackGen.Add(1)
	}
}

// SetWriter records the client whose command runs next in the transaction (0: none), so the
// keys it writes are reported with it (NOLOOP).
func (tx *Tx) SetWriter(id int64) { tx.writer = id }

// noteTracked records user key (of the raw key just written) for the tracker.
func (tx *Tx) noteTracked(key []byte) {
	if n := len(tx.tracked); n > 0 {
		if last := &tx.tracked[n-1]; last.Writer == tx.writer && string(last.Key) == string(key) {
			return // the common case: several data keys of one collection
		}
	}
	at := len(tx.trackArena)
	tx.trackArena = append(tx.trackArena, key...)
	tx.tracked = append(tx.tracked, Written{Key: tx.trackArena[at:len(tx.trackArena):len(tx.trackArena)], Writer: tx.writer})
}

// noteFlushed records that the transaction flushes a database, for the tracker.
func (tx *Tx) noteFlushed() {
	if tx.store.tracking.Load() {
		tx.trackFlush = true
	}
}

// reportTracked hands what the transaction wrote to the tracker; the commit succeeded.
func (tx *Tx) reportTracked() {
	if tx.trackGen != tx.store.trackGen.Load() && tx.store.tracking.Load() {
		tx.trackAllWritten()
	}
	if len(tx.tracked) == 0 && !tx.trackFlush {
		return
	}
	if t := tx.store.tracker; t != nil {
		t.Invalidate(tx.tracked, tx.trackFlush)
	}
}

// resetTracked empties what reportTracked reports.
func (tx *Tx) resetTracked() {
	clear(tx.tracked)
	tx.tracked = tx.tracked[:0]
	tx.trackFlush = false
	tx.writer = 0
	if cap(tx.trackArena) > 1<<20 {
		tx.trackArena = nil
	}
	tx.trackArena = tx.trackArena[:0]
}

// trackAllWritten records every user key the transaction wrote, from its overlay and range
// deletes, for a transaction that began before tracking was switched on: noteWrite may have
// skipped some. The writers are unknown (0), so NOLOOP connections may hear of their own
// writes here.
func (tx *Tx) trackAllWritten() {
	seen := make(map[string]struct{})
	for _, w := range tx.tracked {
		seen[string(w.Key)] = struct{}{}
	}
	for k, e := range tx.overlay {
		if !e.dirty {
			continue
		}
		_, key, ok := codec.UserKeyOf([]byte(k[2:]))
		if !ok {
			continue
		}
		if _, dup := seen[string(key)]; dup {
			continue
		}
		seen[string(key)] = struct{}{}
		tx.tracked = append(tx.tracked, Written{Key: key})
	}
	for _, r := range tx.ranges {
		if len(r.lower) > 0 && r.lower[0] == codec.PrefixMeta {
			tx.trackFlush = true
		}
	}
}
