package datatype

import (
	"bytes"
	"errors"
	"math"
	"strconv"

	"shardis/codec"
	"shardis/shard"
)

// A hash is a collection whose data keys are its fields and whose data values are the field
// values (docs/ENCODING.md): HGET and HSET are point reads and writes, and the fields are
// stored, and walked, in byte order.

// Errors of hash operations.
var (
	// ErrHashNotInteger: HashIncrBy met a field whose value is not an integer.
	ErrHashNotInteger = errors.New("datatype: hash value is not an integer")
	// ErrOverflow: an increment would leave the range of a signed 64-bit integer.
	ErrOverflow = errors.New("datatype: increment or decrement would overflow")
)

// Hash is a hash key opened in a transaction. The zero value is not usable; get one from
// LookupHash or HashFromMeta. See the package comment for its lifetime.
type Hash struct {
	c collection
	// wrote says a field was written or deleted since the hash was opened: Save writes the
	// meta only then (see Set).
	wrote bool
}

// LookupHash opens the hash stored at key in logical db. A missing key gives an empty hash
// (Exists false) that Set creates; a key of another type gives ErrWrongType.
func LookupHash(tx *shard.Tx, db int, key []byte) (Hash, error) {
	c, err := lookup(tx, db, key, codec.TypeHash)
	return Hash{c: c}, err
}

// HashFromMeta is LookupHash for a meta the caller has read itself (with Tx.MetaRead, say):
// exists false means the key is missing.
func HashFromMeta(tx *shard.Tx, db int, key []byte, m codec.Meta, exists bool) (Hash, error) {
	c, err := fromMeta(tx, db, key, codec.TypeHash, m, exists)
	return Hash{c: c}, err
}

// Exists reports whether the key holds the hash (false for a missing key, until Save).
func (h *Hash) Exists() bool { return h.c.exists }

// Len returns the number of fields.
func (h *Hash) Len() int64 { return int64(h.c.meta.Count) }

// Meta returns the hash's meta as the handle holds it, including changes not yet saved. The
// caller must not modify it.
func (h *Hash) Meta() *codec.Meta { return &h.c.meta }

// Get returns the value of field. The value is valid until the transaction commits.
func (h *Hash) Get(field []byte) ([]byte, bool) { return h.c.get(field) }

// Set sets field to val (copied) and reports whether the field is new.
//
// A field that already holds val is not written again, and a Save after nothing but such Sets
// writes no meta: the stored bytes stay as they were (a pipeline of HSETs rewriting one field,
// redis-benchmark's, then costs one binlog record each and no memtable insert), while Save
// still marks the key written for WATCH and client-side caching (shard.Tx.NoteWritten), as
// Redis's HSET does.
func (h *Hash) Set(field, val []byte) (added bool) {
	h.checkLengths(field, val)
	old, found := h.c.get(field)
	if found && bytes.Equal(old, val) {
		return false
	}
	h.put(field, val, found)
	return !found
}

// put writes field, which existed or not.
func (h *Hash) put(field, val []byte, existed bool) {
	h.wrote = true
	h.c.create()
	n := h.c.meta.Count
	if !existed {
		n++
	}
	h.checkLengths(field, val)
	m := &h.c.meta
	if m.Compact && int64(n) > h.c.tx.EncodingLimits().HashEntries {
		m.Compact = false
	}
	if m.Packed && (!m.Compact || n > packMaxEntries) {
		h.c.unpack()
	}
	h.c.put(field, val)
	m.Count = n
}

// checkLengths ends Redis's listpack encoding of an existing hash when field or val is longer
// than hash-max-listpack-value, as Redis converts before it looks the field up (so even an
// HSET that changes nothing, or an HSETNX of a field that exists, converts), and unpacks the
// hash with it.
func (h *Hash) checkLengths(field, val []byte) {
	m := &h.c.meta
	if !h.c.live() || !m.Compact {
		return
	}
	lim := h.c.tx.EncodingLimits().HashValue
	if int64(len(field)) <= lim && int64(len(val)) <= lim {
		return
	}
	m.Compact = false
	h.wrote = true
	h.c.unpack()
}

// SetNX sets field to val only if the field does not exist, and reports whether it did.
//
// Unlike Redis, which ends a listpack encoding for a long field or value before it looks the
// field up, SetNX of a field that exists changes nothing: HSETNX tries a read-only view first
// and saves nothing when the field exists.
func (h *Hash) SetNX(field, val []byte) bool {
	if _, found := h.c.get(field); found {
		return false
	}
	h.put(field, val, false)
	return true
}

// Delete removes field and reports whether it existed.
func (h *Hash) Delete(field []byte) bool {
	if _, found := h.c.get(field); !found {
		return false
	}
	h.wrote = true
	h.c.del(field)
	h.c.meta.Count--
	return true
}

// IncrBy adds incr to the integer value of field (0 when missing), sets the field to the
// result and returns it with its decimal form (val, newly allocated). It fails with
// ErrHashNotInteger or ErrOverflow, changing nothing.
func (h *Hash) IncrBy(field []byte, incr int64) (n int64, val []byte, err error) {
	cur, found := h.c.get(field)
	if found {
		var ok bool
		if n, ok = codec.ParseInt(cur); !ok {
			return 0, nil, ErrHashNotInteger
		}
	}
	if (incr < 0 && n < 0 && incr < math.MinInt64-n) || (incr > 0 && n > 0 && incr > math.MaxInt64-n) {
		return 0, nil, ErrOverflow
	}
	n += incr
	val = strconv.AppendInt(nil, n, 10)
	h.put(field, val, found)
	return n, val, nil
}

// Save writes the hash's meta, or deletes the key when no field is left; it reports whether
// it deleted the key. Call it once after the changes of a command.
// A hash that exists and had no field written or deleted is only marked written.
func (h *Hash) Save() (removed bool) {
	if h.c.exists && !h.wrote {
		h.c.tx.NoteWritten(h.c.db, h.c.key)
		return false
	}
	return h.c.save()
}

// Iter walks the fields from field lower (inclusive; nil: the first) in byte order. The
// iterator must be closed.
func (h *Hash) Iter(lower []byte) HashIter {
	if !h.c.live() {
		return HashIter{}
	}
	if h.c.meta.Packed {
		return HashIter{p: newPackedIter(h.c.packedView(), true, lower)}
	}
	return HashIter{it: h.c.iter(lower, nil, false)}
}

// At calls fn(i, field, val) for the field at each position pos[i] (pos ascending, repeats
// allowed) in field order: a walk from the first field, O(N). field and val are valid only
// during the call.
func (h *Hash) At(pos []uint64, fn func(i int, field, val []byte)) { h.c.walkAt(pos, fn) }

// Stream opens a reply stream over every field (shard.Tx.StreamData): emit gets each field
// and its value. It commits the transaction's earlier writes first.
func (h *Hash) Stream(emit shard.EmitFunc) (*shard.Stream, error) {
	return h.c.stream(nil, nil, false, -1, emit)
}

// HashIter walks the fields of a hash in byte order. The zero HashIter (of a missing hash) is
// empty. Field and Value are valid until the iterator moves.
type HashIter struct {
	it *shard.Iter
	p  *packedIter // a packed hash's
}

// Valid reports whether the iterator is at a field.
func (x HashIter) Valid() bool {
	if x.p != nil {
		return x.p.valid
	}
	return x.it != nil && x.it.Valid()
}

// Next moves to the next field.
func (x HashIter) Next() {
	if x.p != nil {
		x.p.next()
		return
	}
	x.it.Next()
}

// Field returns the current field.
func (x HashIter) Field() []byte {
	if x.p != nil {
		return x.p.elem
	}
	return x.it.Elem()
}

// Value returns the current field's value.
func (x HashIter) Value() []byte {
	if x.p != nil {
		return x.p.val
	}
	return x.it.Value()
}

// Close releases the iterator.
func (x HashIter) Close() {
	if x.it != nil {
		x.it.Close()
	}
}
