// Package datatype holds the Redis data types over a shard transaction: how each type's
// elements are laid out in data keys (docs/ENCODING.md) and the operations on them. It is the
// layer under the command families of package cmds, as Kvrocks's src/types is under its
// src/commands: cmds parses arguments, writes replies, logs binlog records and publishes
// keyspace events; this package reads and writes the keys.
//
// A type is opened on a *shard.Tx with a Lookup function (LookupHash, LookupSet, LookupList,
// LookupZSet, LookupString), which reads the key's meta (expiring it lazily, as Tx.Meta does)
// and returns a handle by value; a key of another type gives ErrWrongType, which cmds
// answers with Redis's WRONGTYPE error. The …FromMeta forms take a meta the caller read
// itself (with Tx.MetaRead, say), and NewSet, NewList and NewZSet start the new value that a
// STORE command puts in place of whatever its destination held. A handle is meant to live in
// a local variable for the length of one command; it holds the meta (count, version, expire)
// and a buffer for data keys, so a command touching many elements builds each key without
// allocating. Handles are not safe for concurrent use, and neither is the Tx.
//
// Writes go into the transaction at once (read-your-writes), but a collection's meta (the
// element count) is written only by its handle's Save method: a command changes any number
// of elements, then saves once. Save deletes the key when the collection became empty, as
// Redis never keeps an empty collection. A string is its meta, so its writes need no Save.
//
// Unless a doc comment says otherwise, byte slices returned by this package (element values,
// iterator keys) alias the transaction's memory or RocksDB's: values read by point reads stay
// valid until the transaction commits, iterator results until the iterator moves; a packed
// hash's or set's (packed.go) until its handle next changes it. Callers that keep them longer
// copy them. Byte slices passed in are not retained after the call returns.
//
// The package imports shard and codec only; it knows nothing of connections, replies or the
// command table.
package datatype

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"slices"

	"shardis/codec"
	"shardis/shard"
)

// ErrWrongType is returned when a key holds a value of another type than the operation's.
// Command code answers it with Redis's "WRONGTYPE Operation against a key holding the wrong
// kind of value".
var ErrWrongType = errors.New("datatype: operation against a key holding the wrong kind of value")

// collection is the part every collection handle shares: the key, its meta, and a reusable
// data key buffer (the collection's data prefix followed by the element last asked for).
type collection struct {
	tx     *shard.Tx
	db     int
	key    []byte
	meta   codec.Meta
	exists bool
	typ    codec.Type
	buf    []byte // data prefix at meta.Version, then one element; nil until first needed
	plen   int
	// own says meta.Value (a packed collection's elements) is the handle's buffer, changed in
	// place, rather than the transaction's memory.
	own     bool
	scratch []byte // one packed entry being written
}

// lookup reads key's meta (Tx.Meta, which expires the key lazily) for a collection of type t.
func lookup(tx *shard.Tx, db int, key []byte, t codec.Type) (collection, error) {
	m, exists := tx.Meta(db, key)
	return fromMeta(tx, db, key, t, m, exists)
}

// fromMeta makes the handle of collection key of type t from a meta the caller read. A
// missing key (exists false) gives an empty collection; a key of another type ErrWrongType.
func fromMeta(tx *shard.Tx, db int, key []byte, t codec.Type, m codec.Meta, exists bool) (collection, error) {
	c := collection{tx: tx, db: db, key: key, typ: t}
	if !exists {
		return c, nil
	}
	if m.Type != t {
		return c, ErrWrongType
	}
	c.meta, c.exists = m, true
	return c, nil
}

// create gives a missing collection a new version, so it can take elements; Save then adds
// the key. It does nothing to an existing or already created one.
func (c *collection) create() {
	if c.exists || c.meta.Version != 0 {
		return
	}
	c.meta = codec.Meta{Type: c.typ, Version: c.tx.NewVersion(c.key)}
	switch c.typ {
	case codec.TypeList:
		c.meta.Head, c.meta.Tail = codec.ListInitialSeq, codec.ListInitialSeq
	case codec.TypeHash, codec.TypeSet:
		// Redis starts every hash as a listpack and every set as an intset, converting them
		// as the first elements require; so does the packed form (packed.go).
		c.meta.Packed, c.meta.Compact = true, true
		c.meta.Value, c.own = nil, true
	case codec.TypeZSet:
		// Redis starts a sorted set as a listpack too (zset-max-listpack-*).
		c.meta.Packed, c.meta.Compact, c.meta.Value, c.own = true, true, nil, true
	}
	c.buf = nil
}

// packedView returns the packed entries for an iterator, which must not see the handle's later
// changes (a RocksDB iterator would not: Pop removes what it walks): a copy when the handle
// changes its buffer in place, else the transaction's bytes, which a change replaces.
func (c *collection) packedView() []byte {
	if c.own {
		return bytes.Clone(c.meta.Value)
	}
	return c.meta.Value
}

// pairs reports whether the collection's packed entries carry values (all but a set's).
func (c *collection) pairs() bool { return c.typ != codec.TypeSet }

// unpack converts a packed collection to data keys: each element becomes its data key under
// the collection's version, in the command's transaction (crash-atomic with the meta that
// Save writes without the flag).
func (c *collection) unpack() {
	if !c.meta.Packed {
		return
	}
	elems := c.meta.Value
	c.meta.Packed, c.meta.Value, c.own = false, nil, false
	// A corrupt entry ends the walk; the elements before it are kept.
	_ = packedWalk(elems, c.pairs(), func(elem, val []byte) error {
		c.put(elem, val)
		return nil
	})
}

// splice replaces the packed entries c.meta.Value[off:end] with entry, in place when the
// handle owns the buffer, else in a new one (meta.Value may alias the transaction's memory).
func (c *collection) splice(off, end int, entry []byte) {
	b := c.meta.Value
	if !c.own {
		nb := make([]byte, 0, len(b)-(end-off)+len(entry)+64)
		nb = append(append(append(nb, b[:off]...), entry...), b[end:]...)
		c.meta.Value, c.own = nb, true
		return
	}
	grow := len(entry) - (end - off)
	if grow > 0 {
		b = append(b, make([]byte, grow)...)
	}
	copy(b[off+len(entry):], b[end:len(c.meta.Value)])
	copy(b[off:], entry)
	c.meta.Value = b[:len(c.meta.Value)+grow]
}

// live reports whether the collection can hold elements: it exists or was created.
func (c *collection) live() bool { return c.exists || c.meta.Version != 0 }

// dataKey returns the data key of element elem. It is valid until the next call.
func (c *collection) dataKey(elem []byte) []byte {
	if c.buf == nil {
		c.buf = c.tx.DataPrefix(c.db, c.key, c.meta.Version)
		c.plen = len(c.buf)
	}
	c.buf = append(c.buf[:c.plen], elem...)
	return c.buf
}

func (c *collection) get(elem []byte) ([]byte, bool) {
	if !c.live() {
		return nil, false
	}
	if c.meta.Packed {
		_, _, val, found := packedFind(c.meta.Value, c.pairs(), elem)
		return val, found
	}
	return c.tx.GetData(c.key, c.dataKey(elem))
}

// put writes element elem with value val (copied). The caller keeps the count.
func (c *collection) put(elem, val []byte) {
	if c.meta.Packed {
		off, end, _, _ := packedFind(c.meta.Value, c.pairs(), elem)
		c.scratch = appendPackedEntry(c.scratch[:0], c.pairs(), elem, val)
		c.splice(off, end, c.scratch)
		return
	}
	c.tx.PutData(c.key, c.dataKey(elem), val)
}

// del deletes element elem. The caller keeps the count.
func (c *collection) del(elem []byte) {
	if c.meta.Packed {
		if off, end, _, found := packedFind(c.meta.Value, c.pairs(), elem); found {
			c.splice(off, end, nil)
		}
		return
	}
	c.tx.DeleteData(c.key, c.dataKey(elem))
}

// getRaw, putRaw and delRaw are get, put and del of the element of data key raw (built by
// dataKey): a packed collection's is raw's element part.
func (c *collection) getRaw(raw []byte) ([]byte, bool) {
	if c.meta.Packed {
		return c.get(raw[c.plen:])
	}
	return c.tx.GetData(c.key, raw)
}

func (c *collection) putRaw(raw, val []byte) {
	if c.meta.Packed {
		c.put(raw[c.plen:], val)
		return
	}
	c.tx.PutData(c.key, raw, val)
}

func (c *collection) delRaw(raw []byte) {
	if c.meta.Packed {
		c.del(raw[c.plen:])
		return
	}
	c.tx.DeleteData(c.key, raw)
}

// elemIter walks a collection's elements in [lower, upper): the data keys' (a *shard.Iter)
// or a packed collection's entries (packedRange). Seek takes a data key (dataKey's).
type elemIter interface {
	Valid() bool
	Next()
	Elem() []byte
	Value() []byte
	Seek(raw []byte)
	Close()
}

// elems walks the elements in [lower, upper) (nil: unbounded), packed or not.
func (c *collection) elems(lower, upper []byte, reverse bool) elemIter {
	if c.meta.Packed {
		c.dataKey(nil) // Seek's keys are data keys: their prefix length
		return newPackedRange(c.packedView(), c.pairs(), lower, upper, reverse, c.plen)
	}
	return c.iter(lower, upper, reverse)
}

// iter walks the data keys whose element lies in [lower, upper) (nil: unbounded).
func (c *collection) iter(lower, upper []byte, reverse bool) *shard.Iter {
	return c.tx.IterateData(c.db, c.key, c.meta.Version, lower, upper, reverse)
}

// save writes the meta, or deletes the key when the collection is empty, and reports whether
// it deleted the key.
func (c *collection) save() (removed bool) {
	if c.meta.Count == 0 {
		removed = c.tx.Delete(c.db, c.key)
		c.exists = false
		return removed
	}
	c.tx.SetMeta(c.db, c.key, &c.meta)
	c.exists = true
	return false
}

// stream opens a reply stream over the data keys in [lower, upper); see shard.Tx.StreamData.
func (c *collection) stream(lower, upper []byte, reverse bool, limit int, emit shard.EmitFunc) (*shard.Stream, error) {
	if c.meta.Packed {
		return c.tx.StreamElems(packedCopy(&c.meta, lower, upper, reverse, limit), emit), c.tx.Err()
	}
	return c.tx.StreamData(c.db, c.key, c.meta.Version, lower, upper, reverse, limit, emit)
}

// walkAt calls fn(i, elem, val) for every position pos[i] of the collection's data keys in
// key order, pos ascending (repeats allowed), walking forward from the first element to the
// last position asked for. elem and val are valid only during the call. (Walking backward to
// positions in the upper half was tried: a reverse step costs several forward ones in
// RocksDB, so it lost on average.)
func (c *collection) walkAt(pos []uint64, fn func(i int, elem, val []byte)) {
	if len(pos) == 0 || !c.live() {
		return
	}
	if c.meta.Packed {
		i := 0
		p := uint64(0)
		_ = packedWalk(c.meta.Value, c.pairs(), func(elem, val []byte) error {
			for ; i < len(pos) && pos[i] == p; i++ {
				fn(i, elem, val)
			}
			p++
			if i == len(pos) {
				return errStop
			}
			return nil
		})
		return
	}
	it := c.iter(nil, nil, false)
	defer it.Close()
	i := 0
	for p := uint64(0); it.Valid() && i < len(pos); it.Next() {
		for ; i < len(pos) && pos[i] == p; i++ {
			fn(i, it.Elem(), it.Value())
		}
		p++
	}
}

// Encoding returns the encoding Redis 7.0 would report for a hash, set or sorted set with
// meta m (OBJECT ENCODING); "" for other types. The compact flag says Redis's limits were
// never passed (a meta written before the flag existed lacks it too): a hash's or sorted
// set's listpack, a set's intset; without it hashtable, or skiplist for a sorted set.
func Encoding(m *codec.Meta) string {
	switch {
	case m.Type != codec.TypeHash && m.Type != codec.TypeSet && m.Type != codec.TypeZSet:
		return ""
	case !m.Compact && m.Type == codec.TypeZSet:
		return "skiplist"
	case !m.Compact:
		return "hashtable"
	case m.Type == codec.TypeSet:
		return "intset"
	default:
		return "listpack"
	}
}

// errStop ends a walk early.
var errStop = errors.New("stop")

// SamplePositions draws k distinct positions out of [0, n) uniformly (Floyd's algorithm) and
// returns them ascending. k must not exceed n.
func SamplePositions(n, k uint64) []uint64 {
	chosen := make(map[uint64]struct{}, k)
	out := make([]uint64, 0, k)
	for j := n - k; j < n; j++ {
		t := rand.Uint64N(j + 1)
		if _, dup := chosen[t]; dup {
			t = j
		}
		chosen[t] = struct{}{}
		out = append(out, t)
	}
	slices.Sort(out)
	return out
}
