package shard

import (
	"bytes"
	"slices"

	"github.com/linxGnu/grocksdb"

	"shardis/binlog"
)

// Iter walks the raw keys of one held shard in [lower, upper), merging what RocksDB holds with
// the transaction's own uncommitted writes, so a command sees its group's writes in scans as
// it does in point reads.
//
// Key and Value alias memory that is valid until the next call to Next; Close must be called
// (RocksDB aborts at shutdown on a leaked iterator).
type Iter struct {
	tx        *Tx
	p         int
	reverse   bool
	db        batchReader // RocksDB's entries, read in batches
	pending   []pendingKV // dirty overlay entries in range, in walk order
	next      int
	key       []byte
	val       []byte
	valid     bool
	fromDB    bool // the current entry is the RocksDB iterator's, which Next must step past
	prefixLen int  // IterateData: length of the collection's prefix (see Elem)
	keysCF    bool // walking the keys' family (false: the binlog's), which has pending writes
}

type pendingKV struct {
	key, val []byte
	exists   bool
}

// Iterate starts a walk over [lower, upper) of the shard that owns routeKey (nil routeKey:
// the first held shard), ascending or, with reverse, descending.
func (tx *Tx) Iterate(routeKey []byte, lower, upper []byte, reverse bool) *Iter {
	p := 0
	if routeKey != nil {
		p = tx.part(routeKey)
	}
	return tx.iterPart(max(p, 0), lower, upper, reverse)
}

// IterateShard is Iterate on held shard id.
func (tx *Tx) IterateShard(id int, lower, upper []byte, reverse bool) *Iter {
	return tx.iterPart(max(tx.partOf(id), 0), lower, upper, reverse)
}

// IterateBinlog walks the binlog of held shard id from sequence from on; Key is a binlog key
// (binlog.KeySeq). Records this transaction wrote are not shown: they go straight into its
// WriteBatch and become visible at the commit.
func (tx *Tx) IterateBinlog(id int, from uint64) *Iter {
	binlogIterators.Add(1)
	p := max(tx.partOf(id), 0)
	return tx.iterCF(p, tx.shards[p].logCF, binlog.AppendKey(nil, from), []byte{binlog.Prefix + 1}, false)
}

func (tx *Tx) iterPart(p int, lower, upper []byte, reverse bool) *Iter {
	return tx.iterCF(p, tx.shards[p].cf, lower, upper, reverse)
}

// iterCF walks [lower, upper) of column family cf of held part p. The transaction's pending
// writes and range deletes are merged in for the keys' family; the binlog has none.
func (tx *Tx) iterCF(p int, cf *grocksdb.ColumnFamilyHandle, lower, upper []byte, reverse bool) *Iter {
	x := &Iter{tx: tx, p: p, reverse: reverse, keysCF: cf == tx.shards[p].cf}
	for k, e := range tx.overlay {
		if !x.keysCF {
			break
		}
		if !e.dirty || int(k[0])<<8|int(k[1]) != p {
			continue
		}
		raw := k[2:]
		if raw < string(lower) || (upper != nil && raw >= string(upper)) {
			continue
		}
		x.pending = append(x.pending, pendingKV{key: []byte(raw), val: tx.joinTail(k, e), exists: e.exists})
	}
	slices.SortFunc(x.pending, func(a, b pendingKV) int {
		if reverse {
			return bytes.Compare(b.key, a.key)
		}
		return bytes.Compare(a.key, b.key)
	})
	x.db = openBatchReader(tx.store.db, cf, lower, upper, reverse)
	x.settle()
	return x
}

// Seek moves to the first key >= target (ascending) or <= target (descending).
func (x *Iter) Seek(target []byte) {
	if x.reverse {
		x.next, _ = slices.BinarySearchFunc(x.pending, target, func(a pendingKV, t []byte) int { return bytes.Compare(t, a.key) })
	} else {
		x.next, _ = slices.BinarySearchFunc(x.pending, target, func(a pendingKV, t []byte) int { return bytes.Compare(a.key, t) })
	}
	x.db.seek(target)
	x.settle()
}

// Valid reports whether the iterator is at an entry.
func (x *Iter) Valid() bool { return x.valid }

// Key returns the current raw key.
func (x *Iter) Key() []byte { return x.key }

// Value returns the current value.
func (x *Iter) Value() []byte { return x.val }

// Next moves to the next entry.
func (x *Iter) Next() {
	if x.valid && x.fromDB {
		x.step()
	}
	x.settle()
}

// settle positions key/val on the next visible entry at or after the current positions.
func (x *Iter) settle() {
	x.valid = false
	for {
		dbOK := x.db.valid()
		var dk []byte
		if dbOK {
			dk = x.db.key()
		}
		if x.next < len(x.pending) {
			pk := x.pending[x.next]
			c := 1
			if dbOK {
				c = bytes.Compare(dk, pk.key)
				if x.reverse {
					c = -c
				}
			}
			if c >= 0 { // pending entry comes first or shadows the same key
				x.next++
				if c == 0 {
					x.step()
				}
				if !pk.exists {
					continue
				}
				x.key, x.val, x.valid, x.fromDB = pk.key, pk.val, true, false
				return
			}
		}
		if !dbOK {
			return
		}
		if x.keysCF && x.tx.inRangeDel(x.p, dk) {
			x.step()
			continue
		}
		x.key, x.val, x.valid, x.fromDB = dk, x.db.val(), true, true
		return
	}
}

func (x *Iter) step() { x.db.next() }

// Err returns the iterator's storage error, if any.
func (x *Iter) Err() error { return x.db.err() }

// Close releases the iterator.
func (x *Iter) Close() {
	x.db.close()
}
