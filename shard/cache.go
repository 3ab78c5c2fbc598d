package shard

import (
	"sync"
	"sync/atomic"

	"shardis/codec"
)

// keyCache is a shard's cache of committed values of the keys it reads point-wise (meta keys,
// and the data keys commands read one by one). A hit answers a read without a RocksDB lookup,
// so GET and the existence check of SET on a hot key cost a map lookup.
//
// It holds committed state only: filled from RocksDB reads and written through after a
// successful commit, never from a transaction's pending writes. The shard's holder reads and
// writes it; the event loops read it too (Store.PeekMeta), so a RWMutex guards it: readers
// share it, and the holder takes it exclusively once per commit to write the commit through.
// Values are immutable (cap == len, never written in place), so a caller may keep one after
// the lock is released and the entry evicted.
//
// Eviction is CLOCK: a hit sets the entry's reference bit; the hand clears bits until it finds
// an entry without one. The budget counts key and value bytes plus a fixed overhead.
//
// A string meta whose value is long is not dropped at once: the hand first cuts it to its
// header (type and expire), which is all that SET needs of the value it overwrites, so a write
// load over more data than the cache holds still finds every key's existence and expire here
// (lookup with headOK) instead of reading RocksDB. Readers that need the value treat a cut entry as a miss.
type keyCache struct {
	mu     sync.RWMutex
	budget int64
	used   int64
	// headBytes is the part of used held by entries cut to their header. The hand passes
	// over them while they take at most a quarter of the budget: they are small, and once
	// dropped the next SET of their key reads RocksDB.
	headBytes int64
	index     map[string]int32 // key -> slot
	slots     []cacheSlot
	free      []int32
	hand      int
	// epoch counts the commits written through. A reader outside the shard that missed and
	// read RocksDB may insert what it read only if no commit came in between (see putIfEpoch).
	epoch uint64
}

type cacheSlot struct {
	key    string
	val    []byte
	exists bool   // false: the key is known to be absent
	ref    uint32 // CLOCK reference bit; set by readers under the read lock, hence atomic
	live   bool
	head   bool // val is only the meta header of a longer string value (see cutToHead)
}

// size is what the entry counts against the budget.
func (s *cacheSlot) size() int64 { return int64(len(s.key)+len(s.val)) + cacheEntryOverhead }

const cacheEntryOverhead = 64

func newKeyCache(budget int64) *keyCache {
	return &keyCache{budget: budget, index: make(map[string]int32)}
}

// get returns the cached state of key: val and exists, and whether the cache knew it.
func (c *keyCache) get(key []byte) (val []byte, exists, hit bool) { return c.lookup(key, false) }

// lookup is get; with headOK, for a caller that needs of a string's meta only its header, val
// may be just the header (codec.MetaHeaderLen bytes) of a value the cache no longer holds in
// full (see cutToHead).
func (c *keyCache) lookup(key []byte, headOK bool) (val []byte, exists, hit bool) {
	c.mu.RLock()
	val, exists, hit = c.getLocked(key, headOK)
	c.mu.RUnlock()
	return val, exists, hit
}

// getWithEpoch is get that also returns the epoch, for a reader outside the shard that will
// read RocksDB on a miss and then putIfEpoch: one lock instead of two.
func (c *keyCache) getWithEpoch(key []byte) (val []byte, exists, hit bool, epoch uint64) {
	c.mu.RLock()
	val, exists, hit = c.getLocked(key, false)
	epoch = c.epoch
	c.mu.RUnlock()
	return val, exists, hit, epoch
}

// getLocked is lookup for a caller holding c.mu (either way).
func (c *keyCache) getLocked(key []byte, headOK bool) (val []byte, exists, hit bool) {
	if c.budget <= 0 {
		return nil, false, false
	}
	i, ok := c.index[string(key)]
	if !ok {
		return nil, false, false
	}
	s := &c.slots[i]
	if s.head && !headOK {
		return nil, false, false
	}
	if atomic.LoadUint32(&s.ref) == 0 {
		atomic.StoreUint32(&s.ref, 1)
	}
	return s.val, s.exists, true
}

// snapshotEpoch returns the epoch, to be given to putIfEpoch after a RocksDB read.
func (c *keyCache) snapshotEpoch() uint64 {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.epoch
}

// putIfEpoch inserts what a reader outside the shard read from RocksDB, unless a commit was
// written through since it took epoch: that commit may have changed the key after the read,
// and a stale entry would never be corrected.
func (c *keyCache) putIfEpoch(key, val []byte, exists bool, epoch uint64) {
	c.mu.Lock()
	if c.epoch == epoch {
		c.putLocked(key, val, exists, true)
	}
	c.mu.Unlock()
}

// put records the committed state of key (val is copied). It returns the cached copy and
// whether the cache holds it now. With insert false it only updates an entry that is cached.
func (c *keyCache) put(key, val []byte, exists, insert bool) ([]byte, bool) {
	c.mu.Lock()
	v, ok := c.putLocked(key, val, exists, insert)
	c.mu.Unlock()
	return v, ok
}

// putLocked is put for the holder of c.mu.
func (c *keyCache) putLocked(key, val []byte, exists, insert bool) ([]byte, bool) {
	if c.budget <= 0 {
		return nil, false
	}
	size := int64(len(key)+len(val)) + cacheEntryOverhead
	if i, ok := c.index[string(key)]; ok {
		s := &c.slots[i]
		if size > c.budget/8 { // grew too big to keep
			c.drop(i)
			return nil, false
		}
		c.used += int64(len(val) - len(s.val))
		if s.head {
			c.headBytes -= s.size()
		}
		s.val, s.exists, s.ref, s.head = clip(val), exists, 1, false
		v := s.val
		c.evict()
		return v, true
	}
	if !insert || size > c.budget/8 { // one huge value must not flush the whole cache
		return nil, false
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
	// A tiny budget may have evicted it at once (drop clears the slot; evict reuses none).
	return slot.val, c.slots[i].live
}

// putBigLocked is putLocked of a written meta key whose value is head followed by tail (see
// entry.tail). A value too big to keep is not joined only to be dropped: the cache forgets
// the key.
func (c *keyCache) putBigLocked(key, head, tail []byte) {
	if c.budget <= 0 {
		return
	}
	if int64(len(key)+len(head)+len(tail))+cacheEntryOverhead > c.budget/8 {
		if i, ok := c.index[string(key)]; ok {
			c.drop(i)
		}
		return
	}
	v := make([]byte, 0, len(head)+len(tail))
	c.putLocked(key, append(append(v, head...), tail...), true, true)
}

// drop removes slot i.
func (c *keyCache) drop(i int32) {
	s := &c.slots[i]
	c.used -= s.size()
	if s.head {
		c.headBytes -= s.size()
	}
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
		case s.head && c.headBytes <= c.budget/4:
		case s.ref != 0:
			s.ref = 0
		case c.cutToHead(s):
		default:
			c.drop(int32(c.hand))
		}
		c.hand++
	}
}

// minCutValue is the shortest string value worth cutting to its header rather than dropping.
const minCutValue = 128

// cutToHead cuts the string meta in s to its header, if it is long enough to be worth it, and
// reports whether it did. The entry stays unreferenced, so the next pass drops it unless it
// is used meanwhile.
func (c *keyCache) cutToHead(s *cacheSlot) bool {
	if s.head || !s.exists || len(s.key) == 0 || s.key[0] != codec.PrefixMeta ||
		len(s.val) < codec.MetaHeaderLen+minCutValue || codec.MetaType(s.val) != codec.TypeString {
		return false
	}
	c.used -= int64(len(s.val) - codec.MetaHeaderLen)
	s.val, s.head = clip(s.val[:codec.MetaHeaderLen]), true
	c.headBytes += s.size()
	return true
}

// clear forgets everything (after a range delete of keys the cache may hold). The caller
// holds c.mu.
func (c *keyCache) clear() {
	// The slots' keys and values go with them (a truncated slice would keep them reachable),
	// and so does the room of a cache that held many keys: an empty cache holds nothing.
	if len(c.index) > maxKeptCacheRoom {
		c.index = make(map[string]int32)
	} else {
		clear(c.index)
	}
	clear(c.slots)
	if cap(c.slots) > maxKeptCacheRoom {
		c.slots, c.free = nil, nil
	}
	c.slots, c.free, c.used, c.hand, c.headBytes = c.slots[:0], c.free[:0], 0, 0, 0
}

// maxKeptCacheRoom is the most entries an emptied cache keeps room for.
const maxKeptCacheRoom = 4096

// setBudget changes the budget, evicting at once if it shrank.
func (c *keyCache) setBudget(b int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.budget = b
	if b <= 0 {
		c.clear()
		return
	}
	c.evict()
}
