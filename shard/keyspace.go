package shard

import (
	"encoding/binary"
	"math/rand/v2"

	"shardis/codec"
)

// ScanKeys visits the live keys of logical db in held shard id in storage order (slot, then
// key), starting after position after (nil: from the start), until fn returns false. It
// returns the position of the last key visited, from which a later scan resumes, and whether
// the shard has no more keys. Expired keys are skipped, not deleted.
func (tx *Tx) ScanKeys(id, db int, after []byte, fn func(key []byte, m *codec.Meta) bool) (pos []byte, done bool) {
	p := tx.partOf(id)
	if p < 0 {
		tx.fail(ErrNotHeld)
		return nil, true
	}
	pdb := tx.pdb(p, db)
	lower, upper := codec.MetaDBRange(pdb)
	it := tx.iterPart(p, lower, upper, false)
	defer it.Close()
	if after != nil {
		it.Seek(append(append([]byte(nil), lower...), after...))
		if it.Valid() && string(it.Key()[2:]) == string(after) {
			it.Next()
		}
	}
	var m codec.Meta
	for ; it.Valid(); it.Next() {
		_, _, key, _ := codec.DecodeMetaKey(it.Key())
		if codec.DecodeMeta(it.Value(), &m) != nil {
			continue
		}
		if m.Expire != 0 && m.Expire <= tx.nowMs {
			continue
		}
		if !fn(key, &m) {
			return append([]byte(nil), it.Key()[2:]...), false
		}
	}
	if err := it.Err(); err != nil {
		tx.fail(err)
	}
	return nil, true
}

// RandomKey returns a random live key of logical db in held shard id: the first one at or
// after a random slot, wrapping around. ok is false when the shard has none (the empty key is
// a key, so nil alone cannot say that).
func (tx *Tx) RandomKey(id, db int) (key []byte, ok bool) {
	var start [2]byte
	binary.BigEndian.PutUint16(start[:], uint16(rand.IntN(codec.SlotCount)))
	pick := func(k []byte, _ *codec.Meta) bool {
		key, ok = append([]byte{}, k...), true
		return false
	}
	if _, done := tx.ScanKeys(id, db, start[:], pick); done && !ok {
		tx.ScanKeys(id, db, nil, pick)
	}
	return key, ok
}

// FlushDB deletes every key of logical db in held shard id in O(1): range deletes of its meta
// and data keys. TTL index entries are left behind; the TTL worker drops them as stale.
func (tx *Tx) FlushDB(id, db int) {
	p := tx.partOf(id)
	if p < 0 {
		tx.fail(ErrNotHeld)
		return
	}
	pdb := tx.pdb(p, db)
	tx.touchWatchedInDB(p, db, pdb)
	tx.noteFlushed()
	lower, upper := codec.MetaDBRange(pdb)
	tx.deleteRange(p, lower, upper)
	lower, upper = codec.DataDBRange(pdb)
	tx.deleteRange(p, lower, upper)
	sh, part := tx.shards[p], &tx.parts[p]
	part.keys[pdb] = -sh.keys[pdb].Load()
	part.expires[pdb] = -sh.expires[pdb].Load()
	part.countsDirty = true
	tx.readyWaitedIn(p, db)
}

// SwapDB swaps logical databases a and b in held shard id: only the map from logical to
// physical database changes, so it is O(1) whatever the size of either.
func (tx *Tx) SwapDB(id, a, b int) {
	p := tx.partOf(id)
	if p < 0 {
		tx.fail(ErrNotHeld)
		return
	}
	sh := tx.shards[p]
	pa, pb := sh.dbmap[a], sh.dbmap[b]
	tx.touchWatchedInDB(p, a, pa, pb)
	tx.touchWatchedInDB(p, b, pa, pb)
	sh.dbmap[a], sh.dbmap[b] = sh.dbmap[b], sh.dbmap[a]
	tx.parts[p].dbmapDirty = true
	tx.readyWaitedIn(p, a)
	tx.readyWaitedIn(p, b)
}
