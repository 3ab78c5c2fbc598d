package datatype

import (
	"bytes"

	"shardis/codec"
	"shardis/shard"
)

// A list is the dense array of positions [Head, Tail) of its meta; the element at position
// seq is data key codec.AppendListSeq(seq) (docs/ENCODING.md). Pushes grow the array at
// either end, pops shrink it, and index-based reads and writes (LINDEX, LSET, LRANGE) go
// straight to Head+index: O(1) seeks where Redis walks its quicklist. Operations that remove
// or insert in the middle (Insert, RemoveMatches) keep the array dense by moving the elements
// of the shorter side by one position, which is O(N) as it is in Redis.

// listPointReads is the longest run of positions read with point reads rather than an
// iterator: point reads are served by the shard's key cache once warm, and a RocksDB iterator
// costs a seek through uncached blocks; LRANGE of 10 runs about 2.5 times faster this way.
const listPointReads = 32

// listCachedReads is the longest run of positions read from the transaction and the key
// cache before an iterator takes over at the first one they do not know: LRANGE 0 99 of a
// list being pushed to is then map lookups, not a RocksDB iterator stepping through every
// memtable and table file.
const listCachedReads = 1024

// List is a list key opened in a transaction. The zero value is not usable; get one from
// LookupList, ListFromMeta or NewList. See the package comment for its lifetime.
type List struct {
	c collection
}

// LookupList opens the list stored at key in logical db. A missing key gives an empty list
// (Exists false) that Push creates; a key of another type gives ErrWrongType.
func LookupList(tx *shard.Tx, db int, key []byte) (List, error) {
	c, err := lookup(tx, db, key, codec.TypeList)
	return List{c: c}, err
}

// ListFromMeta is LookupList for a meta the caller has read itself: exists false means the
// key is missing.
func ListFromMeta(tx *shard.Tx, db int, key []byte, m codec.Meta, exists bool) (List, error) {
	c, err := fromMeta(tx, db, key, codec.TypeList, m, exists)
	return List{c: c}, err
}

// NewList returns a new, empty list for key that replaces whatever key holds (of any type,
// TTL included) when it is saved, or deletes key if it is saved empty (SORT … STORE).
func NewList(tx *shard.Tx, db int, key []byte) List {
	l := List{c: collection{tx: tx, db: db, key: key, typ: codec.TypeList}}
	l.c.create()
	return l
}

// Exists reports whether the key holds the list (false for a missing key, until Save).
func (l *List) Exists() bool { return l.c.exists }

// Len returns the number of elements.
func (l *List) Len() int64 { return int64(l.c.meta.Count) }

// Meta returns the list's meta as the handle holds it, including changes not yet saved. The
// caller must not modify it.
func (l *List) Meta() *codec.Meta { return &l.c.meta }

// Save writes the list's meta, or deletes the key when no element is left; it reports whether
// it deleted the key. Call it once after the changes of a command.
func (l *List) Save() (removed bool) { return l.c.save() }

// seqKey returns the data key of position seq; it is valid until the next call.
func (l *List) seqKey(seq uint64) []byte {
	c := &l.c
	if c.buf == nil {
		c.buf = c.tx.DataPrefix(c.db, c.key, c.meta.Version)
		c.plen = len(c.buf)
	}
	c.buf = codec.AppendListSeq(c.buf[:c.plen], seq)
	return c.buf
}

// get returns the element at position seq (valid until the transaction commits).
func (l *List) get(seq uint64) []byte {
	v, _ := l.c.tx.GetData(l.c.key, l.seqKey(seq))
	return v
}

// getAhead is get of the element at position seq for a pop from the head (left) or the
// tail: the elements the next pops take, up to the tail (left) or down to the head, are read
// along with it (shard.Tx.GetDataAhead).
func (l *List) getAhead(seq uint64, left bool) []byte {
	c := &l.c
	lo, hi := seq, min(c.meta.Tail, seq+listReadAhead)
	if !left {
		lo, hi = max(c.meta.Head, seq-min(seq, listReadAhead-1)), seq+1
	}
	raw := l.seqKey(seq) // sets c.plen
	var lower, upper [8]byte
	v, _ := c.tx.GetDataAhead(c.key, raw, c.plen, codec.AppendListSeq(lower[:0], lo), codec.AppendListSeq(upper[:0], hi))
	return v
}

// listReadAhead is how many elements a pop that reads RocksDB reads at once.
const listReadAhead = 64

// pushAt writes a pushed element, which the commit adds to the key cache.
func (l *List) pushAt(seq uint64, val []byte) { l.c.tx.PutDataCached(l.c.key, l.seqKey(seq), val) }

func (l *List) put(seq uint64, val []byte) { l.c.tx.PutData(l.c.key, l.seqKey(seq), val) }

func (l *List) del(seq uint64) { l.c.tx.DeleteData(l.c.key, l.seqKey(seq)) }

// position resolves a (possibly negative) index to a position; ok is false out of range.
func (l *List) position(idx int64) (uint64, bool) {
	if idx < 0 {
		idx += l.Len()
	}
	if idx < 0 || idx >= l.Len() {
		return 0, false
	}
	return l.c.meta.Head + uint64(idx), true
}

// Push adds val (copied) at the head (left) or the tail.
func (l *List) Push(val []byte, left bool) {
	l.c.create()
	m := &l.c.meta
	if left {
		m.Head--
		l.pushAt(m.Head, val)
	} else {
		l.pushAt(m.Tail, val)
		m.Tail++
	}
	m.Count++
}

// Index returns the element at index idx (negative: from the tail), one point read. The value
// is valid until the transaction commits.
func (l *List) Index(idx int64) ([]byte, bool) {
	seq, ok := l.position(idx)
	if !ok {
		return nil, false
	}
	return l.get(seq), true
}

// Set replaces the element at index idx (negative: from the tail) with val and reports
// whether idx was in range.
func (l *List) Set(idx int64, val []byte) bool {
	seq, ok := l.position(idx)
	if ok {
		l.put(seq, val)
	}
	return ok
}

// walk hands fn the positions [lo, hi) and their elements, ascending or descending, until fn
// returns false. val is valid only during the call. fn may write positions it has already
// been given: the walk reads what the list held when it started.
func (l *List) walk(lo, hi uint64, reverse bool, fn func(seq uint64, val []byte) bool) {
	if lo >= hi || !l.c.live() {
		return
	}
	if hi-lo <= listPointReads {
		for i := uint64(0); i < hi-lo; i++ {
			seq := lo + i
			if reverse {
				seq = hi - 1 - i
			}
			if !fn(seq, l.get(seq)) {
				return
			}
		}
		return
	}
	if hi-lo <= listCachedReads {
		// From memory for as long as the transaction or the key cache knows the elements
		// (pushes add theirs to the cache), then from an iterator.
		for lo < hi {
			seq := lo
			if reverse {
				seq = hi - 1
			}
			v, exists, known := l.c.tx.CachedData(l.c.key, l.seqKey(seq))
			if !known {
				break
			}
			if exists && !fn(seq, v) {
				return
			}
			if reverse {
				hi--
			} else {
				lo++
			}
		}
		if lo >= hi {
			return
		}
	}
	it := l.c.iter(codec.AppendListSeq(nil, lo), codec.AppendListSeq(nil, hi), reverse)
	defer it.Close()
	for ; it.Valid(); it.Next() {
		if !fn(codec.ListSeq(it.Elem()), it.Value()) {
			return
		}
	}
}

// Range calls fn with the elements at indices [off, off+n) (0 <= off, off+n <= Len), in order
// or, with reverse, from the last one, until fn returns false. val is valid only during the
// call. It returns how many elements fn was given: fewer than n only if fn stopped (or the
// list is corrupt).
func (l *List) Range(off, n int64, reverse bool, fn func(val []byte) bool) (sent int64) {
	lo := l.c.meta.Head + uint64(off)
	l.walk(lo, lo+uint64(n), reverse, func(_ uint64, val []byte) bool {
		sent++
		return fn(val)
	})
	return sent
}

// Stream opens a reply stream over the elements at indices [off, off+n)
// (shard.Tx.StreamData): emit gets each element as its value. It commits the transaction's
// earlier writes first.
func (l *List) Stream(off, n int64, emit shard.EmitFunc) (*shard.Stream, error) {
	lo := l.c.meta.Head + uint64(off)
	return l.c.stream(codec.AppendListSeq(nil, lo), codec.AppendListSeq(nil, lo+uint64(n)), false, -1, emit)
}

// Pop removes n elements (1 <= n <= Len) from the head (left) or the tail and hands each to fn
// in pop order (val valid only during the call). It returns how many fn was given: n, unless
// the list is corrupt. When every element goes, the data keys are left to Save, which drops
// them all at once with the key.
func (l *List) Pop(n uint64, left bool, fn func(val []byte)) (sent uint64) {
	m := &l.c.meta
	all := n == m.Count
	lo := m.Tail - n
	if left {
		lo = m.Head
	}
	l.walk(lo, lo+n, !left, func(seq uint64, val []byte) bool {
		fn(val)
		if !all {
			l.del(seq)
		}
		sent++
		return true
	})
	if left {
		m.Head += n
	} else {
		m.Tail -= n
	}
	m.Count -= n
	return sent
}

// PopOne removes and returns the element at the head (left) or the tail of a non-empty list;
// the value is valid until the transaction commits. The last element's data key is left to
// Save's delete of the key, as Pop's.
func (l *List) PopOne(left bool) []byte {
	m := &l.c.meta
	seq := m.Tail - 1
	if left {
		seq = m.Head
		m.Head++
	} else {
		m.Tail--
	}
	m.Count--
	v := l.getAhead(seq, left)
	if m.Count > 0 {
		l.del(seq)
	}
	return v
}

// Insert puts elem before or after the first element equal to pivot, found from the head
// (O(P), P its index), and reports whether the pivot was found. It opens a gap by moving the
// shorter side of the list one position outwards: O(min(P, N-P)) writes, where Redis inserts
// into a quicklist node in O(1) once it found the pivot.
func (l *List) Insert(pivot, elem []byte, before bool) bool {
	m := &l.c.meta
	var at uint64 // position of the pivot
	found := false
	l.walk(m.Head, m.Tail, false, func(seq uint64, val []byte) bool {
		if bytes.Equal(val, pivot) {
			at, found = seq, true
			return false
		}
		return true
	})
	if !found {
		return false
	}
	i := at - m.Head // index the new element takes
	if !before {
		i++
	}
	if i < m.Count-i {
		// Move [0, i) one position towards the head.
		l.walk(m.Head, m.Head+i, false, func(seq uint64, val []byte) bool {
			l.put(seq-1, val)
			return true
		})
		m.Head--
		l.put(m.Head+i, elem)
	} else {
		// Move [i, N) one position towards the tail.
		l.walk(m.Head+i, m.Tail, true, func(seq uint64, val []byte) bool {
			l.put(seq+1, val)
			return true
		})
		l.put(m.Head+i, elem)
		m.Tail++
	}
	m.Count++
	return true
}

// RemoveMatches removes elements equal to elem, as LREM count: the first count from the head
// (count > 0), the last -count from the tail (count < 0), or all (0), and returns how many it
// removed.
//
// It finds them scanning from the head (count >= 0) or the tail, up to the last one removed
// (index L in scan order, first one F), then closes the gaps by moving whichever side moves
// fewer elements: the ones after F towards the scan start, or the ones up to L towards the far
// end. O(L + min(N-F, L)) reads plus as many writes, where Redis unlinks in place: the writes
// are the extra cost of keeping positions dense.
func (l *List) RemoveMatches(elem []byte, count int64) int64 {
	m := &l.c.meta
	fromHead := count >= 0
	limit := uint64(count) // 0: all
	if !fromHead {
		limit = uint64(-count) // -MinInt64 wraps to MinInt64: 1<<63, all in practice
	}
	n := m.Count
	head, tail := m.Head, m.Tail
	// seqOf maps an index in scan order to its position; walkIdx walks indices [a, b) in scan
	// order, or against it with back.
	seqOf := func(j uint64) uint64 {
		if fromHead {
			return head + j
		}
		return tail - 1 - j
	}
	idxOf := func(seq uint64) uint64 {
		if fromHead {
			return seq - head
		}
		return tail - 1 - seq
	}
	walkIdx := func(a, b uint64, back bool, fn func(j uint64, val []byte) bool) {
		lo, hi := head+a, head+b
		if !fromHead {
			lo, hi = tail-b, tail-a
		}
		l.walk(lo, hi, fromHead == back, func(seq uint64, val []byte) bool { return fn(idxOf(seq), val) })
	}
	var first, last, removed uint64
	walkIdx(0, n, false, func(j uint64, val []byte) bool {
		if !bytes.Equal(val, elem) {
			return true
		}
		if removed == 0 {
			first = j
		}
		last = j
		removed++
		return limit == 0 || removed < limit
	})
	if removed == 0 {
		return 0
	}
	if removed < n {
		if n-first <= last+1 {
			// Move the kept elements after F towards the scan start; free the far end.
			w, seen := first, uint64(0)
			walkIdx(first, n, false, func(j uint64, val []byte) bool {
				if seen < removed && bytes.Equal(val, elem) {
					seen++
					return true
				}
				if j != w {
					l.put(seqOf(w), val)
				}
				w++
				return true
			})
			for j := n - removed; j < n; j++ {
				l.del(seqOf(j))
			}
			if fromHead {
				m.Tail -= removed
			} else {
				m.Head += removed
			}
		} else {
			// Move the kept elements up to L towards the far end; free the scan start.
			w := last
			walkIdx(0, last+1, true, func(j uint64, val []byte) bool {
				if bytes.Equal(val, elem) { // every match up to L is removed
					return true
				}
				if j != w {
					l.put(seqOf(w), val)
				}
				w--
				return true
			})
			for j := uint64(0); j < removed; j++ {
				l.del(seqOf(j))
			}
			if fromHead {
				m.Head += removed
			} else {
				m.Tail -= removed
			}
		}
	}
	m.Count -= removed
	return int64(removed)
}

// TrimResult says what Trim did.
type TrimResult int

const (
	TrimNothing TrimResult = iota // every element was in range: nothing changed
	TrimSome                      // elements were removed and the list saved
	TrimAll                       // no element was in range: the key was deleted
)

// Trim keeps the off..off+kept-1 indices (0 <= off, off+kept <= Len; kept 0: none) and removes
// the rest, saving the list (or deleting the key). It deletes the removed positions one by
// one or, when fewer elements are kept than removed, copies the kept ones under a new version
// and drops the old one whole: O(min(kept, removed)) where Redis is O(removed).
func (l *List) Trim(off, kept int64) TrimResult {
	m := &l.c.meta
	ltrim, rtrim := uint64(off), m.Count-uint64(off)-uint64(kept)
	if kept == 0 {
		ltrim, rtrim = m.Count, 0
	}
	switch {
	case ltrim+rtrim == 0:
		return TrimNothing
	case kept == 0:
		l.c.tx.Delete(l.c.db, l.c.key)
		l.c.exists = false
		return TrimAll
	case uint64(kept) < ltrim+rtrim:
		nm := *m
		nm.Version = l.c.tx.NewVersion(l.c.key)
		nm.Head, nm.Tail, nm.Count = codec.ListInitialSeq, codec.ListInitialSeq+uint64(kept), uint64(kept)
		nl := List{c: collection{tx: l.c.tx, db: l.c.db, key: l.c.key, typ: codec.TypeList, meta: nm, exists: true}}
		from := m.Head + ltrim
		l.walk(from, m.Tail-rtrim, false, func(seq uint64, val []byte) bool {
			nl.put(nm.Head+seq-from, val)
			return true
		})
		*l = nl
		l.c.save() // drops the old version's data keys
	default:
		for s := m.Head; s < m.Head+ltrim; s++ {
			l.del(s)
		}
		for s := m.Tail - rtrim; s < m.Tail; s++ {
			l.del(s)
		}
		m.Head += ltrim
		m.Tail -= rtrim
		m.Count = uint64(kept)
		l.c.save()
	}
	return TrimSome
}

// Positions returns the indices of the elements equal to elem, as LPOS: scanning from the
// head or (rank < 0) the tail, at most maxlen elements (0: all), skipping the first |rank|-1
// matches, and collecting up to count indices (0: all; -1: only the first, as LPOS without
// COUNT).
func (l *List) Positions(elem []byte, rank, count, maxlen int64) []int64 {
	m := &l.c.meta
	fromTail := rank < 0
	if fromTail {
		rank = -rank // -MinInt64 stays negative: every match counts, as in Redis
	}
	lo, hi := m.Head, m.Tail
	if maxlen > 0 && uint64(maxlen) < m.Count {
		if fromTail {
			lo = hi - uint64(maxlen)
		} else {
			hi = lo + uint64(maxlen)
		}
	}
	var found []int64
	var matches int64
	l.walk(lo, hi, fromTail, func(seq uint64, val []byte) bool {
		if !bytes.Equal(val, elem) {
			return true
		}
		matches++
		if matches < rank {
			return true
		}
		found = append(found, int64(seq-m.Head))
		if count == -1 {
			return false
		}
		return count == 0 || matches-rank+1 < count
	})
	return found
}

// Iter walks the elements from index from in order or, with reverse, from index Len-1-from
// towards the head. The iterator must be closed.
func (l *List) Iter(from int64, reverse bool) ListIter {
	if !l.c.live() {
		return ListIter{}
	}
	m := &l.c.meta
	if m.Tail-m.Head != m.Count { // not dense (never expected): count the elements skipped
		x := ListIter{l.c.iter(nil, nil, reverse)}
		for ; from > 0 && x.Valid(); from-- {
			x.Next()
		}
		return x
	}
	var lower, upper []byte
	if reverse {
		upper = codec.AppendListSeq(nil, m.Tail-uint64(from))
	} else {
		lower = codec.AppendListSeq(nil, m.Head+uint64(from))
	}
	return ListIter{l.c.iter(lower, upper, reverse)}
}

// ListIter walks the elements of a list. The zero ListIter (of a missing list) is empty.
// Value is valid until the iterator moves.
type ListIter struct{ it *shard.Iter }

// Valid reports whether the iterator is at an element.
func (x ListIter) Valid() bool { return x.it != nil && x.it.Valid() }

// Next moves to the next element.
func (x ListIter) Next() { x.it.Next() }

// Value returns the current element.
func (x ListIter) Value() []byte { return x.it.Value() }

// Close releases the iterator.
func (x ListIter) Close() {
	if x.it != nil {
		x.it.Close()
	}
}
