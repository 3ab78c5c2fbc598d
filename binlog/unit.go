package binlog

import "sync/atomic"

// Unit ties together the records one commit wrote across several shards (an MSET, a RENAME
// or an EXEC whose keys live in several shards): a reader must apply all of them, from every
// shard, together or none. Each record of the unit carries it.
type Unit struct {
	ID     uint64 // unique in the store and increasing, across restarts too; 0: no unit
	Shards int    // how many shards hold records of the unit
	Count  int    // how many records of the unit this shard holds, at consecutive sequences
}

// UnitIDs hands out unit ids. A store has one; at open it learns with Seen the newest id
// each of its shards committed, so ids keep increasing across restarts. Next is called while
// the committing transaction holds its shards, so two units that share a shard get ids in the
// order they commit there, the order a reader applies them in. Safe for concurrent use.
type UnitIDs struct{ last atomic.Uint64 }

// Seen makes every later id larger than id.
func (u *UnitIDs) Seen(id uint64) {
	for {
		last := u.last.Load()
		if id <= last || u.last.CompareAndSwap(last, id) {
			return
		}
	}
}

// Next returns a new id.
func (u *UnitIDs) Next() uint64 { return u.last.Add(1) }
