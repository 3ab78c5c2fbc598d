package shard

import (
	"math/rand/v2"
	"sync/atomic"

	"github.com/cespare/xxhash/v2"

	"shardis/codec"
)

// Access tracking for OBJECT IDLETIME, OBJECT FREQ and DEBUG OBJECT's lru fields.
//
// Redis keeps in every value a 24-bit "lru" field: with an LRU (or no-eviction) policy the
// LRU clock in seconds at the last access, with an LFU policy the time of the last decrement
// in minutes (16 bits) and a logarithmic access counter (8 bits). shardis keeps its values on
// disk, where recording every access would turn each read into a write, so each shard keeps
// that same field in memory, in a fixed table of accessSlots slots indexed by a hash of the
// (physical database, key) pair. A slot holds 40 bits of the hash, which tell whose field it
// is, and the 24-bit field. A key whose slot another key took since (or that nothing touched
// since start) is unknown: AccessField reports so, and OBJECT answers what is honest for it
// (docs/COMPATIBILITY.md). The table's size is fixed (accessSlots*8 bytes per shard), whatever
// the number of keys; Store.Close releases it.
//
// Any goroutine may touch a slot (the shard, views and peeks in the event loops): a slot is one
// atomic word, loaded and stored without a lock. Two touches of the same slot at once may lose
// one of them, which costs at most one LFU increment, never a torn value.

// accessSlots is the number of slots per shard (a power of two).
const accessSlots = 1 << 16

// Redis's constants (server.h): the LRU clock has 24 bits of seconds, LFU counters start at
// LFU_INIT_VAL and saturate at 255, the LFU time has 16 bits of minutes.
const (
	lruBits     = 24
	lruClockMax = 1<<lruBits - 1
	// LFUInitVal is the counter a new key starts with under an LFU policy.
	LFUInitVal = 5
)

type accessTable struct {
	slots [accessSlots]atomic.Uint64
}

// accessHash hashes a key with its physical database (SWAPDB swaps physical databases, and a
// key's field moves with them, as Redis's values do).
func accessHash(pdb int, key []byte) uint64 { return accessHashOf(xxhash.Sum64(key), pdb) }

// accessHashOf mixes the physical database into xxhash64(key).
func accessHashOf(keyHash uint64, pdb int) uint64 {
	return keyHash ^ (uint64(pdb)+1)*0x9E3779B97F4A7C15
}

// accessTag is the part of the hash a slot keeps; never 0, so an empty slot matches no key.
func accessTag(h uint64) uint64 { return h>>lruBits | 1 }

func (t *accessTable) slot(h uint64) *atomic.Uint64 { return &t.slots[h&(accessSlots-1)] }

// AccessPolicy is what the access fields record: LRU clock or LFU counter, and the LFU
// parameters (lfu-log-factor, lfu-decay-time). Set from the configuration.
type AccessPolicy struct {
	LFU       bool
	LogFactor int64
	DecayTime int64 // minutes per halving step; 0: never decays
}

// SetAccessPolicy changes what accesses record from now on (CONFIG SET maxmemory-policy,
// lfu-log-factor, lfu-decay-time). Fields recorded under the other kind read as that kind
// until touched again, as in Redis after switching policies.
func (s *Store) SetAccessPolicy(p AccessPolicy) { s.accessPolicy.Store(&p) }

func (s *Store) policy() *AccessPolicy {
	if p := s.accessPolicy.Load(); p != nil {
		return p
	}
	return &defaultAccessPolicy
}

var defaultAccessPolicy = AccessPolicy{LogFactor: 10, DecayTime: 1}

// LRUClock is Redis's LRU clock at nowMs: seconds, 24 bits.
func LRUClock(nowMs int64) uint32 { return uint32(nowMs/1000) & lruClockMax }

// lfuMinutes is Redis's LFU time at nowMs: minutes, 16 bits.
func lfuMinutes(nowMs int64) uint32 { return uint32(nowMs/60000) & 0xffff }

// LFUDecr returns the counter of an LFU field after the decay due at nowMs (Redis's
// LFUDecrAndReturn).
func LFUDecr(field uint32, nowMs int64, decayTime int64) uint32 {
	ldt, counter := field>>8, field&255
	if decayTime <= 0 {
		return counter
	}
	now := lfuMinutes(nowMs)
	elapsed := now - ldt
	if now < ldt {
		elapsed = 65535 - ldt + now
	}
	periods := uint32(int64(elapsed) / decayTime)
	if periods >= counter {
		return 0
	}
	return counter - periods
}

// lfuLogIncr increments a counter with a probability that falls as it grows (Redis's
// LFULogIncr).
func lfuLogIncr(counter uint32, logFactor int64) uint32 {
	if counter == 255 {
		return 255
	}
	base := float64(counter) - LFUInitVal
	if base < 0 {
		base = 0
	}
	if rand.Float64() < 1/(base*float64(logFactor)+1) {
		counter++
	}
	return counter
}

// touch records an access to a key that exists (Redis's lookupKey: the LRU clock, or the LFU
// counter decayed then incremented). It stores only when the field changes, so repeated reads
// of a hot key in the same second write nothing.
func (s *Store) touch(sh *Shard, h uint64, nowMs int64) {
	t := sh.access.Load()
	if t == nil {
		return // closed
	}
	slot, tag := t.slot(h), accessTag(h)
	old := slot.Load()
	p := s.policy()
	var field uint32
	if !p.LFU {
		field = LRUClock(nowMs)
	} else {
		counter := uint32(LFUInitVal)
		if old>>lruBits == tag {
			counter = LFUDecr(uint32(old&lruClockMax), nowMs, p.DecayTime)
		}
		field = lfuMinutes(nowMs)<<8 | lfuLogIncr(counter, p.LogFactor)
	}
	if v := tag<<lruBits | uint64(field); v != old {
		slot.Store(v)
	}
}

// created records a key that a write made anew: the LRU clock now, or a fresh LFU counter.
func (s *Store) created(sh *Shard, pdb int, key []byte, nowMs int64) {
	t := sh.access.Load()
	if t == nil {
		return // closed
	}
	h := accessHash(pdb, key)
	field := LRUClock(nowMs)
	if s.policy().LFU {
		field = lfuMinutes(nowMs)<<8 | LFUInitVal
	}
	t.slot(h).Store(accessTag(h)<<lruBits | uint64(field))
}

// accessField returns a key's 24-bit field, or false when the table does not know the key.
func (sh *Shard) accessField(pdb int, key []byte) (uint32, bool) {
	t := sh.access.Load()
	if t == nil {
		return 0, false
	}
	h := accessHash(pdb, key)
	v := t.slot(h).Load()
	if v>>lruBits != accessTag(h) {
		return 0, false
	}
	return uint32(v & lruClockMax), true
}

// TouchKey records an access to a key of logical database db that a read found outside any
// transaction (GET answered in the event loop).
func (s *Store) TouchKey(db int, key []byte, nowMs int64) {
	// The shard's hash is the key's own when the key has no hash tag: one hash, not two.
	tag := codec.HashTag(key)
	th := xxhash.Sum64(tag)
	kh := th
	if len(tag) != len(key) {
		kh = xxhash.Sum64(key)
	}
	sh := s.shards[th%uint64(len(s.shards))]
	s.touch(sh, accessHashOf(kh, int(sh.dbmapPub[db].Load())), nowMs)
}

// AccessField returns the access field (Redis's 24-bit lru) of key in logical database db, as
// the transaction's shard records it, and whether the shard knows the key.
func (tx *Tx) AccessField(db int, key []byte) (uint32, bool) {
	p := tx.part(key)
	if p < 0 {
		return 0, false
	}
	return tx.shards[p].accessField(tx.pdb(p, db), key)
}

// AccessPolicy returns what accesses record now.
func (s *Store) AccessPolicy() AccessPolicy { return *s.policy() }

// SetTouch says whether the next command's lookups record an access (Redis's lookups without
// LOOKUP_NOTOUCH; off for EXISTS, TYPE, TTL, OBJECT, … and for CLIENT NO-TOUCH clients) and
// returns the previous setting.
func (tx *Tx) SetTouch(touch bool) (prev bool) {
	prev, tx.noTouch = !tx.noTouch, !touch
	tx.lastTouch = 0
	return prev
}

// touchKey records the command's access to a key it found (Meta: each lookup counts, as in
// Redis) or wrote over (SetMeta: counted only when the command did not just look it up, as
// Redis's SET looks the key up once and HSET too), unless the command does not touch.
func (tx *Tx) touchKey(p, pdb int, key []byte, write bool) {
	if tx.noTouch {
		return
	}
	h := accessHash(pdb, key)
	if write && h == tx.lastTouch {
		return // the command's lookup of the key counted it already
	}
	tx.lastTouch = h
	tx.store.touch(tx.shards[p], h, tx.nowMs)
}

// SetAccess gives key (logical database db), which the transaction just wrote, the access
// field RESTORE's IDLETIME or FREQ (or an RDB file's) ask for, as Redis's objectSetLRUOrLFU:
// under an LFU policy freq (0-255) is the counter, under an LRU one the last access is idle
// seconds ago; the other, and -1, leave the field as the write set it.
func (tx *Tx) SetAccess(db int, key []byte, idle int64, freq int) {
	p := tx.part(key)
	if p < 0 {
		return
	}
	t := tx.shards[p].access.Load()
	if t == nil {
		return
	}
	var field uint32
	switch lfu := tx.store.policy().LFU; {
	case lfu && freq >= 0:
		field = lfuMinutes(tx.nowMs)<<8 | uint32(min(freq, 255))
	case !lfu && idle >= 0:
		abs := int64(LRUClock(tx.nowMs)) - idle%(lruClockMax+1)
		if abs < 0 {
			abs += lruClockMax
		}
		field = uint32(abs)
	default:
		return
	}
	h := accessHash(tx.pdb(p, db), key)
	t.slot(h).Store(accessTag(h)<<lruBits | uint64(field))
}
