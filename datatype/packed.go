package datatype

import (
	"bytes"
	"encoding/binary"
	"errors"
	"slices"

	"shardis/codec"
)

// Packed collections (docs/ENCODING.md). A small hash, set or sorted set keeps its elements in
// its meta value (codec.Meta.Packed, the elements in Meta.Value) instead of one data key each,
// so a command on it is one meta read and one meta write, served by the key cache. The
// elements are sorted by their bytes, as data keys are, so iteration order and SCAN cursors do
// not depend on the layout. Each entry is uvarint(len(elem)) | elem, and but for a set
// uvarint(len(val)) | val; a sorted set's entries are its data keys' elements and values.
// A lookup walks the entries in order and stops at the first one not below the element: no
// allocation, at most packMaxEntries steps.
//
// A packed collection is converted to data keys (unpack) by the write that takes it past
// the limits below, in the same transaction, so a crash leaves one form or the other. It is
// never packed again, as Redis never converts back.

// Limits of the packed form. They bound the meta's size (a write rewrites it whole): at most
// 128 elements of at most 64 bytes each (a hash's field and value each), or for a set Redis
// keeps as an intset, at most 512 integers.
const (
	packMaxEntries = 128
	packMaxElem    = 64
	packMaxInts    = 512
)

// packedEntry decodes the entry at the start of b: its element, its value (pairs) and its
// length. ok is false when b is empty or corrupt.
func packedEntry(b []byte, pairs bool) (elem, val []byte, n int, ok bool) {
	l, k := binary.Uvarint(b)
	if k <= 0 || uint64(len(b)-k) < l {
		return nil, nil, 0, false
	}
	elem, n = b[k:k+int(l)], k+int(l)
	if !pairs {
		return elem, nil, n, true
	}
	l, k = binary.Uvarint(b[n:])
	if k <= 0 || uint64(len(b)-n-k) < l {
		return nil, nil, 0, false
	}
	val = b[n+k : n+k+int(l)]
	return elem, val, n + k + int(l), true
}

// packedFind looks elem up in packed elements b: found, its entry is b[off:end] and val its
// value; not found, off is where its entry goes (end == off).
func packedFind(b []byte, pairs bool, elem []byte) (off, end int, val []byte, found bool) {
	for off < len(b) {
		e, v, n, ok := packedEntry(b[off:], pairs)
		if !ok {
			return len(b), len(b), nil, false
		}
		switch c := bytes.Compare(e, elem); {
		case c == 0:
			return off, off + n, v, true
		case c > 0:
			return off, off, nil, false
		}
		off += n
	}
	return off, off, nil, false
}

// appendPackedEntry appends the entry of elem (and val, for pairs) to b.
func appendPackedEntry(b []byte, pairs bool, elem, val []byte) []byte {
	b = binary.AppendUvarint(b, uint64(len(elem)))
	b = append(b, elem...)
	if pairs {
		b = binary.AppendUvarint(b, uint64(len(val)))
		b = append(b, val...)
	}
	return b
}

// packedIter walks packed elements in order.
type packedIter struct {
	all       []byte // every entry, for Seek
	rest      []byte // the entries after the current one
	elem, val []byte
	pairs     bool
	valid     bool
}

func newPackedIter(b []byte, pairs bool, lower []byte) *packedIter {
	x := &packedIter{all: b, pairs: pairs}
	x.seek(lower)
	return x
}

func (x *packedIter) next() {
	e, v, n, ok := packedEntry(x.rest, x.pairs)
	x.elem, x.val, x.valid = e, v, ok
	if ok {
		x.rest = x.rest[n:]
	}
}

// seek moves to the first element not below lower (nil: the first).
func (x *packedIter) seek(lower []byte) {
	off, _, _, _ := packedFind(x.all, x.pairs, lower)
	x.rest = x.all[off:]
	x.next()
}

// packedRange walks the packed entries in [lower, upper) in either direction, with Seek,
// as a RocksDB iterator over data keys does (elemIter); it holds the entries' positions.
type packedRange struct {
	ents    [][2][]byte // element, value; ascending
	i       int
	reverse bool
	plen    int // length of the data prefix of Seek's keys
}

func newPackedRange(b []byte, pairs bool, lower, upper []byte, reverse bool, plen int) *packedRange {
	x := &packedRange{reverse: reverse, plen: plen}
	_ = packedInRange(b, pairs, lower, upper, func(e, v []byte) error {
		x.ents = append(x.ents, [2][]byte{e, v})
		return nil
	})
	if reverse {
		x.i = len(x.ents) - 1
	}
	return x
}

func (x *packedRange) Valid() bool   { return x.i >= 0 && x.i < len(x.ents) }
func (x *packedRange) Elem() []byte  { return x.ents[x.i][0] }
func (x *packedRange) Value() []byte { return x.ents[x.i][1] }
func (x *packedRange) Close()        {}

func (x *packedRange) Next() {
	if x.reverse {
		x.i--
	} else {
		x.i++
	}
}

// Seek moves to the first element >= raw's (ascending) or the last <= it (descending).
func (x *packedRange) Seek(raw []byte) {
	target := raw[min(x.plen, len(raw)):]
	i, found := slices.BinarySearchFunc(x.ents, target, func(e [2][]byte, t []byte) int { return bytes.Compare(e[0], t) })
	if x.reverse && !found {
		i--
	}
	x.i = i
}

// packedWalk calls fn with every entry of b in order until it returns an error.
func packedWalk(b []byte, pairs bool, fn func(elem, val []byte) error) error {
	for len(b) > 0 {
		e, v, n, ok := packedEntry(b, pairs)
		if !ok {
			return codec.ErrCorruptMeta
		}
		if err := fn(e, v); err != nil {
			return err
		}
		b = b[n:]
	}
	return nil
}

// PackedScan is the ElemScan of a packed hash's or set's elements (m.Packed), which live in its
// meta: what DUMP and an RDB file read in place of its data keys.
func PackedScan(m *codec.Meta) ElemScan {
	pairs := m.Type != codec.TypeSet
	return func(lower, upper []byte, reverse bool, fn func(elem, val []byte) error) error {
		if !reverse {
			return packedInRange(m.Value, pairs, lower, upper, fn)
		}
		var es, vs [][]byte
		if err := packedInRange(m.Value, pairs, lower, upper, func(e, v []byte) error {
			es, vs = append(es, e), append(vs, v)
			return nil
		}); err != nil {
			return err
		}
		for i := len(es) - 1; i >= 0; i-- {
			if err := fn(es[i], vs[i]); err != nil {
				return err
			}
		}
		return nil
	}
}

// errPastUpper ends packedInRange's walk at the first entry not below upper.
var errPastUpper = errors.New("past the upper bound")

// packedInRange calls fn with the entries of b in [lower, upper) (nil: unbounded) in order,
// until fn returns an error; the entries are sorted, so it stops at upper.
func packedInRange(b []byte, pairs bool, lower, upper []byte, fn func(elem, val []byte) error) error {
	err := packedWalk(b, pairs, func(e, v []byte) error {
		if upper != nil && bytes.Compare(e, upper) >= 0 {
			return errPastUpper
		}
		if lower != nil && bytes.Compare(e, lower) < 0 {
			return nil
		}
		return fn(e, v)
	})
	if err == errPastUpper {
		return nil
	}
	return err
}

// packedCopy returns copies of the packed elements of m in [lower, upper), reversed or not, at
// most limit of them (< 0: all), as element, value, … for shard.Tx.StreamElems.
func packedCopy(m *codec.Meta, lower, upper []byte, reverse bool, limit int) [][]byte {
	var out [][]byte
	_ = PackedScan(m)(lower, upper, reverse, func(e, v []byte) error {
		if limit >= 0 && len(out) >= 2*limit {
			return errStop
		}
		out = append(out, bytes.Clone(e), bytes.Clone(v))
		return nil
	})
	return out
}

// IsIntsetMember reports whether Redis would hold member in an intset: the canonical decimal
// form of a signed 64-bit integer.
func IsIntsetMember(member []byte) bool {
	_, ok := codec.ParseInt(member)
	return ok
}
