package datatype

import (
	"bytes"
	"sync"

	"shardis/codec"
	"shardis/shard"
)

// A list is the dense array of positions [Head, Tail) of its meta, kept in nodes of
// codec.ListNodeSlots positions (codec/listnode.go, docs/ENCODING.md): position seq is slot
// seq%N of node seq/N, and an element longer than codec.ListInlineMax has a data key of its
// own. A push rewrites its end node; a pop changes only the meta, and deletes a node when its
// last position goes (and a big element's key), so a queue leaves one tombstone per node, not
// one per element. Slots of a node outside [Head, Tail) are garbage that readers skip; the
// next rewrite of the node drops them. Index-based reads and writes (LINDEX, LSET, LRANGE) go
// straight to the node of Head+index. Operations that remove or insert in the middle (Insert,
// RemoveMatches) keep the array dense by moving the elements of the shorter side by one
// position, which is O(N) as it is in Redis.
//
// Changes to slots go to one decoded node held by the handle (listEdit), written back when a
// change goes to another node and by Save: the pushes of one LPUSH to a node are one write.

// List is a list key opened in a transaction. The zero value is not usable; get one from
// LookupList, ListFromMeta or NewList. See the package comment for its lifetime.
type List struct {
	c    collection
	edit *listEdit // the node being changed, nil if none
	gone [2]uint64 // the positions a pop or LREM of every element left stored, if any
}

// emptied notes that the positions [lo, hi) were all removed, their nodes left for Save's
// delete of the key.
func (l *List) emptied(lo, hi uint64) { l.gone = [2]uint64{lo, hi} }

// purge deletes the nodes and big elements of the positions an emptying left stored: for a
// list pushed to again in the same handle, or one that never existed before it, whose key's
// delete would not find them.
func (l *List) purge() {
	lo, hi := l.gone[0], l.gone[1]
	l.gone = [2]uint64{}
	l.walkKinds(lo, hi, func(seq uint64, kind byte, _ []byte) bool {
		if kind == codec.ListSlotBig {
			l.c.tx.DeleteData(l.c.key, l.bigKey(seq))
		}
		return true
	})
	for n := lo >> codec.ListNodeShift; n <= (hi-1)>>codec.ListNodeShift; n++ {
		l.c.tx.DeleteData(l.c.key, l.nodeKey(n))
	}
}

// listEdit is a node decoded for changes: its index and which slots were written since it was
// decoded (kept by a write-back in the middle of an operation, when the meta is not final).
// Its slots alias mem, which holds a copy of the node's value and of the values written since:
// the edit depends on nothing else, so it survives a commit in the middle of a command (an RDB
// load's flushes) and callers may reuse the buffers they pushed. mem is never reused: values
// read from the edit stay valid until the transaction commits.
type listEdit struct {
	idx     uint64
	node    codec.ListNode
	written uint64
	mem     []byte
	buf     []byte
}

// keep returns a copy of b in the edit's memory.
func (e *listEdit) keep(b []byte) []byte {
	n := len(e.mem)
	e.mem = append(e.mem, b...)
	return e.mem[n:len(e.mem):len(e.mem)]
}

var listEdits = sync.Pool{New: func() any { return new(listEdit) }}

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

// Save writes back the node being changed and the list's meta, or deletes the key when no
// element is left; it reports whether it deleted the key. Call it once after the changes of a
// command.
func (l *List) Save() (removed bool) {
	if l.c.meta.Count == 0 {
		l.discardEdit()
		if !l.c.exists && l.gone[1] > l.gone[0] {
			l.purge()
		}
	} else {
		l.flush(true)
	}
	return l.c.save()
}

// dataKey returns the data key with element part elem(b); it is valid until the next call.
func (l *List) prefixed() []byte {
	c := &l.c
	if c.buf == nil {
		c.buf = c.tx.DataPrefix(c.db, c.key, c.meta.Version)
		c.plen = len(c.buf)
	}
	return c.buf[:c.plen]
}

// nodeKey returns the data key of node n; it is valid until the next call.
func (l *List) nodeKey(n uint64) []byte {
	l.c.buf = codec.AppendListNodeElem(l.prefixed(), n)
	return l.c.buf
}

// bigKey returns the data key of the big element at seq; it is valid until the next call.
func (l *List) bigKey(seq uint64) []byte {
	l.c.buf = codec.AppendListBigElem(l.prefixed(), seq)
	return l.c.buf
}

// nodeValue reads node n as stored in the transaction (nil: missing).
func (l *List) nodeValue(n uint64) []byte {
	v, _ := l.c.tx.GetData(l.c.key, l.nodeKey(n))
	return v
}

// slot returns the kind of position seq's slot and, if inline, its element.
func (l *List) slot(seq uint64) (kind byte, elem []byte) {
	n, i := codec.ListNodeOf(seq)
	if e := l.edit; e != nil && e.idx == n {
		return e.node.Kind[i], e.node.Elem[i]
	}
	return codec.ListNodeSlot(l.nodeValue(n), i)
}

// element returns the element of a slot of kind kind at seq: elem itself, or the big
// element's value.
func (l *List) element(seq uint64, kind byte, elem []byte) []byte {
	if kind == codec.ListSlotBig {
		v, _ := l.c.tx.GetData(l.c.key, l.bigKey(seq))
		return v
	}
	return elem
}

// get returns the element at position seq (valid until the transaction commits).
func (l *List) get(seq uint64) []byte {
	k, e := l.slot(seq)
	return l.element(seq, k, e)
}

// editNode returns node n decoded for changes, writing back the one changed before.
func (l *List) editNode(n uint64) *listEdit {
	if e := l.edit; e != nil {
		if e.idx == n {
			return e
		}
		l.flush(false)
	}
	e := listEdits.Get().(*listEdit)
	e.idx, e.written = n, 0
	v := l.nodeValue(n)
	e.mem = make([]byte, 0, len(v)+128)
	if err := e.node.Decode(e.keep(v)); err != nil {
		l.c.tx.Fail(err)
	}
	l.edit = e
	return e
}

// flush writes back the node being changed. final says the meta is final (a Save, an LSET):
// slots outside [Head, Tail) are then dropped as garbage; in the middle of an operation only
// those never written since the node was decoded are kept too.
func (l *List) flush(final bool) {
	e := l.edit
	if e == nil {
		return
	}
	l.edit = nil
	m := &l.c.meta
	var keep uint64
	base := e.idx << codec.ListNodeShift
	for i := range codec.ListNodeSlots {
		seq := base + uint64(i)
		if e.node.Kind[i] != codec.ListSlotEmpty && (!final || e.written>>i&1 != 0 || seq >= m.Head && seq < m.Tail) {
			keep |= 1 << i
		}
	}
	if keep == 0 {
		l.c.tx.DeleteData(l.c.key, l.nodeKey(e.idx))
	} else {
		e.buf = codec.AppendListNode(e.buf[:0], &e.node, keep)
		l.c.tx.PutDataCached(l.c.key, l.nodeKey(e.idx), e.buf)
	}
	l.release(e)
}

// discardEdit drops the node being changed without writing it back.
func (l *List) discardEdit() {
	if e := l.edit; e != nil {
		l.edit = nil
		l.release(e)
	}
}

func (l *List) release(e *listEdit) {
	clear(e.node.Elem[:])
	e.mem = nil
	if cap(e.buf) > 64<<10 {
		e.buf = nil
	}
	listEdits.Put(e)
}

// put writes val at position seq: inline in its node, or under a key of its own.
func (l *List) put(seq uint64, val []byte) {
	_, i := codec.ListNodeOf(seq)
	e := l.editNode(seq >> codec.ListNodeShift)
	wasBig := e.node.Kind[i] == codec.ListSlotBig
	if len(val) > codec.ListInlineMax {
		e.node.Kind[i], e.node.Elem[i] = codec.ListSlotBig, nil
		l.c.tx.PutData(l.c.key, l.bigKey(seq), val)
	} else {
		e.node.Kind[i], e.node.Elem[i] = codec.ListSlotInline, e.keep(val)
		if wasBig {
			l.c.tx.DeleteData(l.c.key, l.bigKey(seq))
		}
	}
	e.written |= 1 << i
}

// del empties position seq's slot (and deletes its big element's key).
func (l *List) del(seq uint64) {
	_, i := codec.ListNodeOf(seq)
	e := l.editNode(seq >> codec.ListNodeShift)
	if e.node.Kind[i] == codec.ListSlotBig {
		l.c.tx.DeleteData(l.c.key, l.bigKey(seq))
	}
	e.node.Kind[i], e.node.Elem[i] = codec.ListSlotEmpty, nil
	e.written &^= 1 << i
}

// dropNodes deletes the nodes that held positions of [oldHead, oldTail) and hold none of
// [Head, Tail) any more, after a pop or a trim. An emptied list's are left to Save, which drops
// them with the key.
func (l *List) dropNodes(oldHead, oldTail uint64) {
	m := &l.c.meta
	if m.Count == 0 || oldHead >= oldTail {
		return
	}
	first, last := oldHead>>codec.ListNodeShift, (oldTail-1)>>codec.ListNodeShift
	keepFirst, keepLast := m.Head>>codec.ListNodeShift, (m.Tail-1)>>codec.ListNodeShift
	drop := func(n uint64) {
		if e := l.edit; e != nil && e.idx == n {
			l.discardEdit()
		}
		l.c.tx.DeleteData(l.c.key, l.nodeKey(n))
	}
	for n := first; n < keepFirst && n <= last; n++ {
		drop(n)
	}
	for n := max(keepLast+1, first); n <= last && n > keepLast; n++ {
		drop(n)
	}
}

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
	if m.Count == 0 && l.gone[1] > l.gone[0] {
		l.purge() // emptied by this handle: its nodes are still there
		m.Head, m.Tail = codec.ListInitialSeq, codec.ListInitialSeq
	}
	seq := m.Tail
	if left {
		m.Head--
		seq = m.Head
	} else {
		m.Tail++
	}
	m.Count++
	l.put(seq, val)
}

// Index returns the element at index idx (negative: from the tail): one node read. The value
// is valid until the transaction commits.
func (l *List) Index(idx int64) ([]byte, bool) {
	seq, ok := l.position(idx)
	if !ok {
		return nil, false
	}
	return l.get(seq), true
}

// Set replaces the element at index idx (negative: from the tail) with val and reports
// whether idx was in range. It writes the node at once: LSET needs no Save.
func (l *List) Set(idx int64, val []byte) bool {
	seq, ok := l.position(idx)
	if ok {
		l.put(seq, val)
		l.flush(true)
	}
	return ok
}

// walk hands fn the positions [lo, hi), their slots' kinds and their elements, ascending or
// descending, until fn returns false. val is valid until the transaction commits. fn may
// write positions it has already been given: each node is read as it was when the walk
// reached it.
func (l *List) walk(lo, hi uint64, reverse bool, fn func(seq uint64, kind byte, val []byte) bool) {
	if lo >= hi || !l.c.live() {
		return
	}
	var cur uint64
	var nv []byte
	have := false
	for i := uint64(0); i < hi-lo; i++ {
		seq := lo + i
		if reverse {
			seq = hi - 1 - i
		}
		n, slot := codec.ListNodeOf(seq)
		if !have || n != cur {
			if e := l.edit; e != nil && e.idx == n {
				l.flush(false)
			}
			cur, nv, have = n, l.nodeValue(n), true
		}
		k, e := codec.ListNodeSlot(nv, slot)
		if !fn(seq, k, l.element(seq, k, e)) {
			return
		}
	}
}

// Range calls fn with the elements at indices [off, off+n) (0 <= off, off+n <= Len), in order
// or, with reverse, from the last one, until fn returns false. val is valid until the
// transaction commits. It returns how many elements fn was given: fewer than n only if fn
// stopped.
func (l *List) Range(off, n int64, reverse bool, fn func(val []byte) bool) (sent int64) {
	lo := l.c.meta.Head + uint64(off)
	l.walk(lo, lo+uint64(n), reverse, func(_ uint64, _ byte, val []byte) bool {
		sent++
		return fn(val)
	})
	return sent
}

// Stream opens a reply stream over the elements at indices [off, off+n)
// (shard.Tx.StreamData): emit gets each element as its value. It commits the transaction's
// earlier writes first.
func (l *List) Stream(off, n int64, emit shard.EmitFunc) (*shard.Stream, error) {
	l.flush(true)
	lo := l.c.meta.Head + uint64(off)
	hi := lo + uint64(n)
	sc := &listScan{lo: lo, hi: hi}
	var w *codec.Writer
	sc.out = func(val []byte) error {
		emit(w, nil, val)
		return nil
	}
	return l.c.stream(codec.AppendListNodeElem(nil, lo>>codec.ListNodeShift),
		codec.AppendListNodeElem(nil, (hi-1)>>codec.ListNodeShift+1), false, -1,
		func(wr *codec.Writer, elem, val []byte) {
			w = wr
			_ = sc.feed(elem, val)
		})
}

// listScan turns a list's data keys in key order (each node, then the big elements of its
// slots) into its elements at positions [lo, hi), for walks over an iterator: DUMP, an RDB
// file, a streamed LRANGE.
type listScan struct {
	lo, hi uint64
	out    func(val []byte) error
	node   []byte // the current node's value (a copy)
	next   uint64 // the next position to hand out
	end    uint64 // the end of the current node's positions in [lo, hi)
}

// feed takes the next data key in key order.
func (s *listScan) feed(elem, val []byte) error {
	node, seq, big, ok := codec.ParseListElem(elem)
	if !ok {
		return codec.ErrCorruptListNode
	}
	if !big {
		s.node = append(s.node[:0], val...)
		s.next = max(s.lo, node<<codec.ListNodeShift)
		s.end = min(s.hi, (node+1)<<codec.ListNodeShift)
		return s.emitInline()
	}
	if seq != s.next || s.next >= s.end {
		return nil // a big element of a position out of range
	}
	if k, _ := codec.ListNodeSlot(s.node, int(seq&(codec.ListNodeSlots-1))); k != codec.ListSlotBig {
		return nil
	}
	if err := s.out(val); err != nil {
		return err
	}
	s.next++
	return s.emitInline()
}

// emitInline hands out the current node's elements from next up to the first big one.
func (s *listScan) emitInline() error {
	for ; s.next < s.end; s.next++ {
		k, e := codec.ListNodeSlot(s.node, int(s.next&(codec.ListNodeSlots-1)))
		if k == codec.ListSlotBig {
			return nil
		}
		if k == codec.ListSlotEmpty {
			continue // a hole would be corruption: skip it
		}
		if err := s.out(e); err != nil {
			return err
		}
	}
	return nil
}

// Pop removes n elements (1 <= n <= Len) from the head (left) or the tail and hands each to fn
// in pop order (val valid only during the call). It returns how many fn was given: n, unless
// the list is corrupt. Only the meta changes, and the nodes emptied and big elements popped
// are deleted; when every element goes, Save drops the data with the key.
func (l *List) Pop(n uint64, left bool, fn func(val []byte)) (sent uint64) {
	m := &l.c.meta
	oldHead, oldTail := m.Head, m.Tail
	lo := m.Tail - n
	if left {
		lo = m.Head
	}
	l.walk(lo, lo+n, !left, func(seq uint64, kind byte, val []byte) bool {
		fn(val)
		if kind == codec.ListSlotBig {
			l.c.tx.DeleteData(l.c.key, l.bigKey(seq))
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
	if m.Count == 0 {
		l.emptied(oldHead, oldTail)
	}
	l.dropNodes(oldHead, oldTail)
	return sent
}

// PopOne removes and returns the element at the head (left) or the tail of a non-empty list;
// the value is valid until the transaction commits. It reads one node and writes nothing but
// the meta, unless the node empties (deleted) or the element is big (its key deleted).
func (l *List) PopOne(left bool) []byte {
	m := &l.c.meta
	oldHead, oldTail := m.Head, m.Tail
	seq := m.Tail - 1
	if left {
		seq = m.Head
		m.Head++
	} else {
		m.Tail--
	}
	m.Count--
	if m.Count == 0 {
		l.emptied(oldHead, oldTail)
	}
	k, e := l.slot(seq)
	v := l.element(seq, k, e)
	if k == codec.ListSlotBig {
		l.c.tx.DeleteData(l.c.key, l.bigKey(seq))
	}
	l.dropNodes(oldHead, oldTail)
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
	l.walk(m.Head, m.Tail, false, func(seq uint64, _ byte, val []byte) bool {
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
		l.walk(m.Head, m.Head+i, false, func(seq uint64, _ byte, val []byte) bool {
			l.put(seq-1, val)
			return true
		})
		m.Head--
		l.put(m.Head+i, elem)
	} else {
		// Move [i, N) one position towards the tail.
		l.walk(m.Head+i, m.Tail, true, func(seq uint64, _ byte, val []byte) bool {
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
		l.walk(lo, hi, fromHead == back, func(seq uint64, _ byte, val []byte) bool { return fn(idxOf(seq), val) })
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
	if m.Count == 0 {
		l.emptied(head, tail)
	}
	l.dropNodes(head, tail)
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
// the rest, saving the list (or deleting the key). It moves Head and Tail, deleting the
// nodes left out and the big elements removed or, when fewer elements are kept than
// removed, copies the kept ones under a new version and drops the old one whole:
// O(min(kept, removed)) where Redis is O(removed).
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
		l.discardEdit()
		l.c.tx.Delete(l.c.db, l.c.key)
		l.c.exists, l.c.meta, l.c.buf = false, codec.Meta{}, nil // a later Push starts a new list
		return TrimAll
	case uint64(kept) < ltrim+rtrim:
		l.flush(true)
		nm := *m
		nm.Version = l.c.tx.NewVersion(l.c.key)
		nm.Head, nm.Tail, nm.Count = codec.ListInitialSeq, codec.ListInitialSeq+uint64(kept), uint64(kept)
		nl := List{c: collection{tx: l.c.tx, db: l.c.db, key: l.c.key, typ: codec.TypeList, meta: nm, exists: true}}
		from := m.Head + ltrim
		l.walk(from, m.Tail-rtrim, false, func(seq uint64, _ byte, val []byte) bool {
			nl.put(nm.Head+seq-from, val)
			return true
		})
		*l = nl
		l.Save() // drops the old version's data keys
	default:
		oldHead, oldTail := m.Head, m.Tail
		forget := func(seq uint64, kind byte, _ []byte) bool {
			if kind == codec.ListSlotBig {
				l.c.tx.DeleteData(l.c.key, l.bigKey(seq))
			}
			return true
		}
		l.walkKinds(m.Head, m.Head+ltrim, forget)
		l.walkKinds(m.Tail-rtrim, m.Tail, forget)
		m.Head += ltrim
		m.Tail -= rtrim
		m.Count = uint64(kept)
		l.dropNodes(oldHead, oldTail)
		l.Save()
	}
	return TrimSome
}

// walkKinds is walk without reading big elements: fn gets a nil val for them.
func (l *List) walkKinds(lo, hi uint64, fn func(seq uint64, kind byte, val []byte) bool) {
	l.flush(false)
	var cur uint64
	var nv []byte
	have := false
	for seq := lo; seq < hi; seq++ {
		n, slot := codec.ListNodeOf(seq)
		if !have || n != cur {
			cur, nv, have = n, l.nodeValue(n), true
		}
		k, e := codec.ListNodeSlot(nv, slot)
		if !fn(seq, k, e) {
			return
		}
	}
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
	l.walk(lo, hi, fromTail, func(seq uint64, _ byte, val []byte) bool {
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
// towards the head, one node read per node. The iterator must be closed.
func (l *List) Iter(from int64, reverse bool) ListIter {
	if !l.c.live() || from >= l.Len() {
		return ListIter{}
	}
	l.flush(true)
	m := &l.c.meta
	x := ListIter{l: l, reverse: reverse, left: m.Count - uint64(from)}
	x.seq = m.Head + uint64(from)
	if reverse {
		x.seq = m.Tail - 1 - uint64(from)
	}
	x.load()
	return x
}

// ListIter walks the elements of a list. The zero ListIter (of a missing list) is empty.
// Value is valid until the transaction commits.
type ListIter struct {
	l       *List
	reverse bool
	seq     uint64 // the current position
	left    uint64 // positions left, the current one included
	node    uint64
	nv      []byte
	have    bool
	val     []byte
}

func (x *ListIter) load() {
	if x.left == 0 {
		return
	}
	n, slot := codec.ListNodeOf(x.seq)
	if !x.have || n != x.node {
		x.node, x.nv, x.have = n, x.l.nodeValue(n), true
	}
	k, e := codec.ListNodeSlot(x.nv, slot)
	x.val = x.l.element(x.seq, k, e)
}

// Valid reports whether the iterator is at an element.
func (x *ListIter) Valid() bool { return x.left > 0 }

// Next moves to the next element.
func (x *ListIter) Next() {
	x.left--
	if x.reverse {
		x.seq--
	} else {
		x.seq++
	}
	x.load()
}

// Value returns the current element.
func (x *ListIter) Value() []byte { return x.val }

// Close releases the iterator.
func (x *ListIter) Close() {}
