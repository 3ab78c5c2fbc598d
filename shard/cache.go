package shard

// keyCache is a shard's cache of committed values of the keys it reads point-wise (meta keys,
// and the data keys commands read one by one). A hit answers a read without a RocksDB lookup,
// so GET and the existence check of SET on a hot key cost a map lookup.
//
// It holds committed state only: filled from RocksDB reads and written through after a
// successful commit, never from a transaction's pending writes. Only the holder of the shard
// touches it, so it has no lock. Values are immutable (cap == len, never written in place),
// so a caller may keep one while the entry is evicted.
//
// Eviction is CLOCK: a hit sets the entry's reference bit; the hand clears bits until it finds
// an entry without one. The budget counts key and value bytes plus a fixed overhead.
type keyCache struct {
	budget int64
	used   int64
	index  map[string]int32 // key -> slot
	slots  []cacheSlot
	free   []int32
	hand   int
}

type cacheSlot struct {
	key    string
	val    []byte
	exists bool // false: the key is known to be absent
	ref    bool
	live   bool
}

const cacheEntryOverhead = 64

func newKeyCache(budget int64) *keyCache {
	return &keyCache{budget: budget, index: make(map[string]int32)}
}

// get returns the cached state of key: val and exists, and whether the cache knew it.
func (c *keyCache) get(key []byte) (val []byte, exists, hit bool) {
	if c.budget <= 0 {
		return nil, false, false
	}
	i, ok := c.index[string(key)]
	if !ok {
		return nil, false, false
	}
	s := &c.slots[i]
	s.ref = true
	return s.val, s.exists, true
}

// put records the committed state of key (val is copied) and reports whether the cache holds
// it now. With insert false it only updates an entry that is already cached.
func (c *keyCache) put(key, val []byte, exists, insert bool) bool {
	if c.budget <= 0 {
		return false
	}
	size := int64(len(key)+len(val)) + cacheEntryOverhead
	if i, ok := c.index[string(key)]; ok {
		s := &c.slots[i]
		if size > c.budget/8 { // grew too big to keep
			c.drop(i)
			return false
		}
		c.used += int64(len(val) - len(s.val))
		s.val, s.exists, s.ref = clip(val), exists, true
		c.evict()
		return true
	}
	if !insert || size > c.budget/8 { // one huge value must not flush the whole cache
		return false
	}
	slot := cacheSlot{key: string(key), val: clip(val), exists: exists, live: true}
	var i int32
	if n := len(c.free); n > 0 {
		i = c.free[n-1]
		c.free = c.free[:n-1]
		c.slots[i] = slot
	} else {
		i = int32(len(c.slots))
		c.slots = append(c.slots, slot)
	}
	c.index[slot.key] = i
	c.used += size
	c.evict()
	_, ok := c.index[slot.key] // a tiny budget may have evicted it at once
	return ok
}

// drop removes slot i.
func (c *keyCache) drop(i int32) {
	s := &c.slots[i]
	c.used -= int64(len(s.key)+len(s.val)) + cacheEntryOverhead
	delete(c.index, s.key)
	*s = cacheSlot{}
	c.free = append(c.free, i)
}

// clip copies v into memory of its own with cap == len, so nobody can append into it.
func clip(v []byte) []byte {
	if v == nil {
		return nil
	}
	out := make([]byte, len(v))
	copy(out, v)
	return out
}

// evict frees entries until the cache is within budget.
func (c *keyCache) evict() {
	for c.used > c.budget && len(c.index) > 0 {
		if c.hand >= len(c.slots) {
			c.hand = 0
		}
		s := &c.slots[c.hand]
		switch {
		case !s.live:
		case s.ref:
			s.ref = false
		default:
			c.drop(int32(c.hand))
		}
		c.hand++
	}
}

// clear forgets everything (after a range delete of keys the cache may hold).
func (c *keyCache) clear() {
	clear(c.index)
	c.slots, c.free, c.used, c.hand = c.slots[:0], c.free[:0], 0, 0
}

// setBudget changes the budget, evicting at once if it shrank.
func (c *keyCache) setBudget(b int64) {
	c.budget = b
	if b <= 0 {
		c.clear()
		return
	}
	c.evict()
}
