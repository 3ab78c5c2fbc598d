package server

import (
	"sync"
)

// Cursors maps SCAN cursors to positions. A SCAN position is a shard and a place in its key
// order, which does not fit Redis's integer cursor, so the server remembers positions and
// hands out numbers: cursor = id << cursorShardBits | shard. An id that was forgotten (the
// table keeps the newest maxCursors) restarts that shard from its beginning, which SCAN's
// guarantees allow (elements may be returned more than once).
type Cursors struct {
	mu     sync.Mutex
	byID   map[uint64][]byte
	order  []uint64 // ring of ids, oldest first, to evict
	nextID uint64
}

const (
	cursorShardBits = 12 // up to 4096 shards
	maxCursors      = 1 << 16
)

// Save remembers position pos in shard and returns its cursor.
func (c *Cursors) Save(shard int, pos []byte) uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.byID == nil {
		c.byID = make(map[uint64][]byte)
	}
	c.nextID++
	id := c.nextID
	c.byID[id] = append([]byte(nil), pos...)
	c.order = append(c.order, id)
	if len(c.order) > maxCursors {
		delete(c.byID, c.order[0])
		c.order = c.order[1:]
	}
	return id<<cursorShardBits | uint64(shard)
}

// IsStart reports whether cursor is the start of a shard (the shard is then its value), which
// needs no lookup.
func IsStart(cursor uint64) bool { return cursor>>cursorShardBits == 0 }

// StartOf returns the cursor that starts shard (nil position).
func StartOf(shard int) uint64 { return uint64(shard) }

// Load returns the shard and position of cursor (nil position: the shard's beginning).
func (c *Cursors) Load(cursor uint64) (shard int, pos []byte) {
	shard = int(cursor & (1<<cursorShardBits - 1))
	id := cursor >> cursorShardBits
	if id == 0 {
		return shard, nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return shard, c.byID[id]
}
