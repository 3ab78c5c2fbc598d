package shard

import (
	"shardis/codec"
)

// Collections (hash, list, set, zset) keep their elements in data keys:
// codec.AppendDataPrefix(physical db, key, version) followed by the element. These methods
// route by the user key and map the logical db, so commands never see physical dbs.

// smallCollection is the size up to which a dropped collection's data keys are deleted one by
// one; a larger one is removed with a single range delete (O(1) to write, reclaimed by
// compaction), so DEL of a million elements costs what DEL of one does.
const smallCollection = 64

// DataPrefix returns the prefix of every data key of collection key (logical db) at version.
func (tx *Tx) DataPrefix(db int, key []byte, version uint64) []byte {
	p := max(tx.part(key), 0)
	// One allocation, with room for the element most callers append next.
	b := make([]byte, 0, codec.DataPrefixLen(len(key))+dataElemRoom)
	return codec.AppendDataPrefix(b, tx.pdb(p, db), key, version)
}

// dataElemRoom is the room DataPrefix leaves after the prefix for an element.
const dataElemRoom = 48

// PrefixEnd returns the smallest key greater than every key that starts with prefix.
func PrefixEnd(prefix []byte) []byte {
	end := append([]byte(nil), prefix...)
	for i := len(end) - 1; i >= 0; i-- {
		if end[i] != 0xff {
			end[i]++
			return end[:i+1]
		}
	}
	return nil // all 0xff: no upper bound
}

// GetData reads data key raw of the collection stored under user key key. The value is valid
// until the group commits.
func (tx *Tx) GetData(key, raw []byte) ([]byte, bool) {
	p := tx.part(key)
	if p < 0 {
		tx.fail(ErrNotHeld)
		return nil, false
	}
	return tx.getRaw(p, raw)
}

// PutData writes data key raw (val is copied).
func (tx *Tx) PutData(key, raw, val []byte) {
	p := tx.part(key)
	if p < 0 {
		tx.fail(ErrNotHeld)
		return
	}
	tx.putRaw(p, raw, val)
}

// PutDataCached is PutData of a value that the commit also adds to the key cache (a
// written data key is otherwise only updated there if cached), if it is among the last
// maxCachedPuts so written: a list's end nodes, which the next push, pop or LRANGE 0 99 then
// finds in memory.
func (tx *Tx) PutDataCached(key, raw, val []byte) {
	p := tx.part(key)
	if p < 0 {
		tx.fail(ErrNotHeld)
		return
	}
	if tx.needsShard() {
		return
	}
	start := len(tx.arena)
	tx.arena = append(tx.arena, val...)
	tx.putArenaEntry(p, raw, start, nil, true)
}

// DeleteData deletes data key raw.
func (tx *Tx) DeleteData(key, raw []byte) {
	p := tx.part(key)
	if p < 0 {
		tx.fail(ErrNotHeld)
		return
	}
	tx.deleteRaw(p, raw)
}

// IterateData walks the data keys of collection key at version whose element part lies in
// [lowerElem, upperElem) (nil: unbounded), ascending or descending. Iter.Key returns the whole
// raw key; cut the element with Elem.
func (tx *Tx) IterateData(db int, key []byte, version uint64, lowerElem, upperElem []byte, reverse bool) *Iter {
	prefix := tx.DataPrefix(db, key, version)
	lower := append(append([]byte(nil), prefix...), lowerElem...)
	var upper []byte
	if upperElem != nil {
		upper = append(append([]byte(nil), prefix...), upperElem...)
	} else {
		upper = PrefixEnd(prefix)
	}
	x := tx.Iterate(key, lower, upper, reverse)
	x.prefixLen = len(prefix)
	return x
}

// Elem returns the element part of the current data key of an IterateData walk.
func (x *Iter) Elem() []byte { return x.key[x.prefixLen:] }

// dropData removes the data keys of the collection whose meta value is val, stored under key in
// physical db pdb of part p: point deletes for a small one, one range delete for a large one.
func (tx *Tx) dropData(p, pdb int, key, val []byte) {
	var m codec.Meta
	if codec.DecodeMeta(val, &m) != nil || m.Type == codec.TypeString && !m.Frag || m.Packed {
		return // no data keys
	}
	prefix := codec.AppendDataPrefix(nil, pdb, key, m.Version)
	end := PrefixEnd(prefix)
	// A fragmented string's Count is its length: it has at most one data key per FragSize.
	n := m.Count
	if m.Frag {
		n /= uint64(codec.FragSize)
	}
	if n > smallCollection {
		tx.deleteRange(p, prefix, end)
		return
	}
	if m.Type == codec.TypeList && m.Tail-m.Head == m.Count && m.Count > 0 {
		// A list's nodes and big elements are found from its positions [Head, Tail), without
		// an iterator, which would step over the tombstones of every node and big element a
		// queue ever popped (an RPOP emptying a list that had held 300,000 took 270 ms).
		var node codec.ListNode
		for n := m.Head >> codec.ListNodeShift; n <= (m.Tail-1)>>codec.ListNodeShift; n++ {
			nk := codec.AppendListNodeElem(prefix, n)
			v, _ := tx.getRaw(p, nk)
			if node.Decode(v) == nil {
				for i, k := range node.Kind {
					seq := n<<codec.ListNodeShift + uint64(i)
					if k == codec.ListSlotBig && seq >= m.Head && seq < m.Tail {
						tx.deleteRaw(p, codec.AppendListBigElem(prefix, seq))
					}
				}
			}
			tx.deleteRaw(p, codec.AppendListNodeElem(prefix, n))
		}
		return
	}
	it := tx.iterPart(p, prefix, end, false)
	var doomed [][]byte
	for ; it.Valid(); it.Next() {
		doomed = append(doomed, append([]byte(nil), it.Key()...))
	}
	it.Close()
	for _, k := range doomed {
		tx.deleteRaw(p, k)
	}
}

// CopyData copies every data key of collection srcKey (logical db srcDB, srcVersion) to
// collection dstKey (dstDB, dstVersion), which may live in another held shard. The caller
// writes the destination's meta. It is O(elements), as RENAME and COPY of a collection are.
func (tx *Tx) CopyData(srcDB int, srcKey []byte, srcVersion uint64, dstDB int, dstKey []byte, dstVersion uint64) {
	dp := tx.part(dstKey)
	if dp < 0 {
		tx.fail(ErrNotHeld)
		return
	}
	dstPrefix := tx.DataPrefix(dstDB, dstKey, dstVersion)
	type kv struct{ k, v []byte }
	var pending []kv
	it := tx.IterateData(srcDB, srcKey, srcVersion, nil, nil, false)
	for ; it.Valid(); it.Next() {
		k := append(append([]byte(nil), dstPrefix...), it.Elem()...)
		pending = append(pending, kv{k, append([]byte(nil), it.Value()...)})
		if len(pending) == 1024 { // bound memory: flush into the batch as we go
			for _, e := range pending {
				tx.putRaw(dp, e.k, e.v)
			}
			pending = pending[:0]
		}
	}
	it.Close()
	for _, e := range pending {
		tx.putRaw(dp, e.k, e.v)
	}
}

// DeleteDataRange deletes the data keys in [lowerRaw, upperRaw) of the collection stored
// under user key key, with one range delete (a stream trimming many whole nodes). Those keys
// belong to the live version and may be in the shard's key cache, which has no order to find
// them by: the commit empties the cache, so the caller keeps this for big ranges.
func (tx *Tx) DeleteDataRange(key, lowerRaw, upperRaw []byte) {
	p := tx.part(key)
	if p < 0 {
		tx.fail(ErrNotHeld)
		return
	}
	n := len(tx.ranges)
	tx.deleteRange(p, lowerRaw, upperRaw)
	if len(tx.ranges) > n {
		tx.ranges[n].live = true
	}
}
