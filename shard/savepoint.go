package shard

// Savepoints let one command of a transaction be undone while the commands before it stay:
// a script that holds only its declared keys' shards and finds it needs another (it strays,
// cmds.Ctx.Strayed) runs in a shard's group transaction beside other clients' commands, which
// must still commit. Save marks where the transaction is; RollbackTo forgets everything written
// since (overlay, WriteBatch, binlog sequence, key counts, range deletes, events, tracking,
// ready keys); Forget drops the mark when the command ended well.
//
// What a savepoint does not undo, because it is not the transaction's: WATCH marks (noteWrite
// marks watchers at once: a watcher's EXEC fails, as it would once the command runs again),
// the shard's version counter (only ever moves forward), values the shard's key cache took
// from disk, and the store's dirty counter.
//
// One savepoint at a time; the transaction's owner calls all three.

// Savepoint is the state of a transaction at Save.
type Savepoint struct {
	undo       int // len(tx.undo) at Save
	ranges     int
	events     int
	eventKeys  int
	tracked    int
	trackArena int
	touched    int
	unitLog    unitMark
	parts      []partMark
}

// partMark is one held shard's bookkeeping at Save.
type partMark struct {
	keys, expires []int64
	countsDirty   bool
	nextSeq       uint64
	logMaxMs      int64
}

// undoEntry is the overlay's state of one key before a write made after Save.
type undoEntry struct {
	key  string
	prev entry
	had  bool
}

// Save marks the transaction's state; writes from now on can be undone (RollbackTo) until
// Forget. sp is the caller's, reused between saves.
func (tx *Tx) Save(sp *Savepoint) {
	tx.saving = true
	tx.undo = tx.undo[:0]
	sp.undo = 0
	sp.ranges, sp.events, sp.eventKeys = len(tx.ranges), len(tx.events), len(tx.eventKeys)
	sp.tracked, sp.trackArena, sp.touched = len(tx.tracked), len(tx.trackArena), len(tx.touched)
	sp.unitLog = tx.unitPos()
	for len(sp.parts) < len(tx.parts) {
		sp.parts = append(sp.parts, partMark{})
	}
	sp.parts = sp.parts[:len(tx.parts)]
	for i := range tx.parts {
		p, m := &tx.parts[i], &sp.parts[i]
		m.keys = append(m.keys[:0], p.keys...)
		m.expires = append(m.expires[:0], p.expires...)
		m.countsDirty, m.nextSeq, m.logMaxMs = p.countsDirty, p.nextSeq, p.logMaxMs
	}
	if tx.wb != nil {
		tx.wb.SetSavePoint()
	}
}

// Forget ends the savepoint, keeping what was written since Save.
func (tx *Tx) Forget(sp *Savepoint) {
	if !tx.saving {
		return
	}
	tx.saving = false
	for _, u := range tx.undo {
		if e, ok := tx.overlay[u.key]; ok && e.noted {
			e.noted = false
			tx.overlay[u.key] = e
		}
	}
	clear(tx.undo)
	tx.undo = tx.undo[:0]
	if tx.wb != nil {
		if err := tx.wb.PopSavePoint(); err != nil {
			tx.fail(err)
		}
	}
}

// RollbackTo undoes everything written since Save and ends the savepoint.
func (tx *Tx) RollbackTo(sp *Savepoint) {
	if !tx.saving {
		return
	}
	tx.saving = false
	for i := len(tx.undo) - 1; i >= sp.undo; i-- {
		u := &tx.undo[i]
		if u.had {
			tx.overlay[u.key] = u.prev
		} else {
			delete(tx.overlay, u.key)
		}
	}
	clear(tx.undo)
	tx.undo = tx.undo[:0]
	if tx.wb != nil {
		if err := tx.wb.RollbackToSavePoint(); err != nil {
			tx.fail(err)
		}
	}
	tx.ranges = tx.ranges[:sp.ranges]
	clear(tx.events[sp.events:])
	tx.events, tx.eventKeys = tx.events[:sp.events], tx.eventKeys[:sp.eventKeys]
	clear(tx.tracked[sp.tracked:])
	tx.tracked, tx.trackArena = tx.tracked[:sp.tracked], tx.trackArena[:sp.trackArena]
	clear(tx.touched[sp.touched:])
	tx.touched = tx.touched[:sp.touched]
	tx.readyNext = min(tx.readyNext, sp.touched)
	tx.truncateUnit(sp.unitLog)
	for i := range sp.parts {
		p, m := &tx.parts[i], &sp.parts[i]
		copy(p.keys, m.keys)
		copy(p.expires, m.expires)
		p.countsDirty, p.nextSeq, p.logMaxMs = m.countsDirty, m.nextSeq, m.logMaxMs
	}
}

// noteUndo records overlay key k's state before a write, while a savepoint is active.
// A key already noted since Save needs nothing more: its state before Save is in tx.undo.
func (tx *Tx) noteUndo(k string) {
	prev, had := tx.overlay[k]
	if had && prev.noted {
		return
	}
	tx.undo = append(tx.undo, undoEntry{key: k, prev: prev, had: had})
}
