package shard

import "shardis/codec"

// Client-side caching (CLIENT TRACKING) needs to know every user key a commit changed, as
// Redis's signalModifiedKey tells its tracking table. The shard does not keep that table
// (package tracking does); it only reports, through a Tracker, what each successful commit
// wrote, at the same point WATCH watchers are marked (noteWrite), together with the keys
// tracking clients read in the same transaction, in the order the commands made them. While
// nobody tracks, the one atomic load of Shard.interest is all a write pays.

// Access is one access of a user key that client-side caching cares about, in a transaction's
// order: a write (or, with Flush, a FLUSHDB/FLUSHALL), or with Reader set a read by a
// tracking connection, which may then cache Key.
type Access struct {
	Key []byte
	// Client is the connection whose command made the access (0: none, e.g. the TTL worker).
	Client int64
	// Reader is the tracker's state of the reading connection (a read); nil for a write.
	Reader TrackingReader
	// Owner, for a write or a flush by a connection's own command, is where a frame that
	// must follow that command's reply goes (nil: the connection's queue).
	Owner ReplyTail
	Flush bool
}

// TrackingReader is a tracking connection's state as the tracker keeps it (tracking.Conn);
// the shard only carries it from the read to the tracker, in order with the writes.
type TrackingReader interface {
	// Remembers reports whether the connection remembers what it reads now (CLIENT TRACKING
	// on, in the default mode as CLIENT CACHING allows).
	Remembers(caching bool) bool
}

// ReplyTail is the place right after a command's reply, not yet sent (the reactor's slot): an
// invalidation a connection's own write causes for itself follows the write's reply there, as
// in Redis. AfterReply reports false when it cannot take the frame.
type ReplyTail interface {
	AfterReply(frame []byte) bool
}

// Tracker receives the accesses of committed transactions. Apply is called by the committing
// goroutine after the commit reached RocksDB and the key cache, before any of its commands'
// replies is released, with the accesses in order (a run of writes of one key by one command
// once). The accesses and their bytes are valid only during the call.
type Tracker interface {
	Apply(accesses []Access)
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

// SetWriter records the client whose command runs next in the transaction (0: none) and the
// place after that command's reply (where frames following the reply go; nil: none), so the
// keys it writes are reported with them (NOLOOP, the order of a connection's own
// invalidations). It costs two stores.
func (tx *Tx) SetWriter(id int64, tail ReplyTail) { tx.writer, tx.owner = id, tail }

// TrackRead records that tracking connection reader (the tracker's state, with id client)
// reads keys now; the tracker learns it in order with the transaction's writes. A view has no
// commit: its caller tells the tracker itself.
func (tx *Tx) TrackRead(keys [][]byte, client int64, reader TrackingReader) {
	for _, k := range keys {
		tx.tracked = append(tx.tracked, Access{Key: tx.trackCopy(k), Client: client, Reader: reader})
	}
}

func (tx *Tx) trackCopy(key []byte) []byte {
	at := len(tx.trackArena)
	tx.trackArena = append(tx.trackArena, key...)
	return tx.trackArena[at:len(tx.trackArena):len(tx.trackArena)]
}

// noteTracked records user key (of the raw key just written) for the tracker.
func (tx *Tx) noteTracked(key []byte) {
	owner := tx.owner
	if n := len(tx.tracked); n > 0 {
		if last := &tx.tracked[n-1]; last.Reader == nil && !last.Flush && last.Client == tx.writer &&
			last.Owner == owner && string(last.Key) == string(key) {
			return // the common case: several data keys of one collection
		}
	}
	tx.tracked = append(tx.tracked, Access{Key: tx.trackCopy(key), Client: tx.writer, Owner: owner})
}

// noteFlushed records that the transaction flushes a database, for the tracker.
func (tx *Tx) noteFlushed() {
	if !tx.store.tracking.Load() {
		return
	}
	owner := tx.owner
	if n := len(tx.tracked); n > 0 {
		if last := &tx.tracked[n-1]; last.Flush && last.Client == tx.writer && last.Owner == owner {
			return // FLUSHALL: every database of every shard, one flush
		}
	}
	tx.tracked = append(tx.tracked, Access{Client: tx.writer, Owner: owner, Flush: true})
}

// reportTracked hands the transaction's accesses to the tracker; the commit succeeded.
func (tx *Tx) reportTracked() {
	if tx.trackGen != tx.store.trackGen.Load() && tx.store.tracking.Load() {
		tx.trackAllWritten()
	}
	if len(tx.tracked) == 0 {
		return
	}
	if t := tx.store.tracker; t != nil {
		t.Apply(tx.tracked)
	}
}

// resetTracked empties what reportTracked reports.
func (tx *Tx) resetTracked() {
	clear(tx.tracked)
	tx.tracked = tx.tracked[:0]
	if cap(tx.trackArena) > 1<<20 {
		tx.trackArena = nil
	}
	tx.trackArena = tx.trackArena[:0]
	tx.writer, tx.owner = 0, nil
}

// trackAllWritten records every user key the transaction wrote, from its overlay and range
// deletes, for a transaction that began before tracking was switched on: noteWrite may have
// skipped some. The writers are unknown (0), so NOLOOP connections may hear of their own
// writes here.
func (tx *Tx) trackAllWritten() {
	seen := make(map[string]struct{})
	for _, a := range tx.tracked {
		if a.Reader == nil {
			seen[string(a.Key)] = struct{}{}
		}
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
		tx.tracked = append(tx.tracked, Access{Key: key})
	}
	for _, r := range tx.ranges {
		if len(r.lower) > 0 && r.lower[0] == codec.PrefixMeta {
			tx.tracked = append(tx.tracked, Access{Flush: true})
			break
		}
	}
}
