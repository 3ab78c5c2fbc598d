package binlog

import (
	"fmt"
	"sync"
)

// Unit ties together the records one commit wrote across several shards (an MSET, a RENAME
// or an EXEC whose keys live in several shards): a reader must apply all of them, from every
// shard, together or none. Each record of the unit carries it.
type Unit struct {
	ID     uint64 // unique in the store and increasing, across restarts too; 0: no unit
	Shards int    // how many shards hold records of the unit
	Count  int    // how many records of the unit this shard holds, at consecutive sequences
}

// UnitIDs hands out unit ids, unique in a store and increasing, across restarts too. Ids are
// reserved in blocks: before the first id of a new block goes out, reserve persists the
// block's end, and a store opened again starts above the end it finds, so no id is ever
// handed out twice whatever crashed, at the cost of one synchronous write per block.
//
// Next is called while the committing transaction holds its shards, so two units that share a
// shard get ids in the order they commit there, the order a reader applies them in. Safe for
// concurrent use.
type UnitIDs struct {
	mu       sync.Mutex
	last     uint64
	reserved uint64
	reserve  func(upTo uint64) error
}

// UnitBlock is how many ids one reservation covers.
const UnitBlock = 1 << 20

// NewUnitIDs returns ids above reserved (the end of the last block reserved, 0 for a new
// store); reserve persists the end of a new block and must be durable when it returns.
func NewUnitIDs(reserved uint64, reserve func(upTo uint64) error) *UnitIDs {
	return &UnitIDs{last: reserved, reserved: reserved, reserve: reserve}
}

// Next returns a new id, or the error of persisting a new block.
func (u *UnitIDs) Next() (uint64, error) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.last >= u.reserved {
		if err := u.reserve(u.last + UnitBlock); err != nil {
			return 0, fmt.Errorf("binlog: reserve unit ids: %w", err)
		}
		u.reserved = u.last + UnitBlock
	}
	u.last++
	return u.last, nil
}
