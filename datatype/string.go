package datatype

import (
	"bytes"
	"errors"
	"math"
	"strconv"

	"shardis/codec"
	"shardis/shard"
)

// A string is its meta value alone (docs/ENCODING.md), so a GET is one point read and a
// string has no data keys, until it grows in place (SETRANGE, APPEND, SETBIT, BITFIELD) past
// codec.FragMin bytes (4 KiB): it is then fragmented, its bytes kept in data keys of
// codec.FragSize bytes (1 KiB) under a version, as a collection's elements are, and the meta
// holds its length. A missing
// fragment, and the bytes past a stored fragment's end, read as zeros, so a sparse bitmap
// costs what its set bits' fragments cost, and a write rewrites one fragment, not the string.
// SET (and whatever replaces the key) stores the value whole again; the old fragments go with
// their version, as a collection's data keys do. The meta's raw flag remembers that an
// in-place write built the value, so OBJECT ENCODING answers as Redis.

// ErrNotInteger: String.IncrBy met a value that is not an integer.
var ErrNotInteger = errors.New("datatype: value is not an integer or out of range")

// String is a string key opened in a transaction. The zero value is not usable; get one from
// LookupString or StringFromMeta. See the package comment for its lifetime.
type String struct {
	tx      *shard.Tx
	db      int
	key     []byte
	meta    codec.Meta
	exists  bool
	buf     []byte // data key buffer: the prefix at meta.Version, then a fragment index
	plen    int
	scratch []byte // one fragment being rewritten
}

// LookupString opens the string stored at key in logical db. A missing key gives an empty
// string (Exists false); a key of another type gives ErrWrongType.
func LookupString(tx *shard.Tx, db int, key []byte) (String, error) {
	m, exists := tx.Meta(db, key)
	return StringFromMeta(tx, db, key, m, exists)
}

// StringFromMeta is LookupString for a meta the caller has read itself (with Tx.MetaRead,
// say): exists false means the key is missing.
func StringFromMeta(tx *shard.Tx, db int, key []byte, m codec.Meta, exists bool) (String, error) {
	s := String{tx: tx, db: db, key: key}
	if !exists {
		return s, nil
	}
	if m.Type != codec.TypeString {
		return s, ErrWrongType
	}
	s.meta, s.exists = m, true
	return s, nil
}

// SetString stores val as the value of key in logical db, with expire (unix ms; 0: none),
// replacing whatever key holds, of any type. val must not change until the transaction
// commits (a big one is referenced, not copied: Tx.SetMeta).
func SetString(tx *shard.Tx, db int, key, val []byte, expire int64) {
	tx.SetMeta(db, key, &codec.Meta{Type: codec.TypeString, Value: val, Expire: expire})
}

// Exists reports whether the key holds a string.
func (s *String) Exists() bool { return s.exists }

// Fragmented reports whether the string's bytes are in fragments (Value then assembles them).
func (s *String) Fragmented() bool { return s.meta.Frag }

// Meta returns the string's meta (a fragmented one's holds its version and length).
func (s *String) Meta() codec.Meta { return s.meta }

// Value returns the value (nil for a missing key). It is valid until the transaction commits.
// A fragmented string is assembled into a new buffer of its whole length: code that may meet
// a big one reads it piecewise (ReadAt, Chunks) or streams it (Stream).
func (s *String) Value() []byte {
	if !s.meta.Frag {
		return s.meta.Value
	}
	out := make([]byte, s.meta.Count)
	s.ReadAt(out, 0)
	return out
}

// Len returns the length of the value.
func (s *String) Len() int64 {
	if s.meta.Frag {
		return int64(s.meta.Count)
	}
	return int64(len(s.meta.Value))
}

// Expire returns the expire time in unix ms (0: none).
func (s *String) Expire() int64 { return s.meta.Expire }

// put stores val whole (with the raw flag) keeping the expire time, creating the key if
// missing; a fragmented string's fragments go (SetMeta drops its version).
func (s *String) put(val []byte, raw bool) {
	s.meta = codec.Meta{Type: codec.TypeString, Value: val, Expire: s.meta.Expire, Raw: raw}
	s.buf = nil
	s.tx.SetMeta(s.db, s.key, &s.meta)
	s.exists = true
}

// Replace sets the value to val (unchanged until the commit: see SetString),
// keeping the expire time; a missing key is created without one.
func (s *String) Replace(val []byte) { s.put(val, false) }

// SetExpire sets the expire time (unix ms; 0: none) of an existing string.
func (s *String) SetExpire(when int64) {
	s.meta.Expire = when
	s.tx.SetMeta(s.db, s.key, &s.meta)
}

// MarkRaw makes an existing string raw, as Redis's in-place writers unshare it even when
// they change no byte, and reports whether that changed the meta.
func (s *String) MarkRaw() bool {
	if !s.exists || s.meta.Raw {
		return false
	}
	s.meta.Raw = true
	s.tx.SetMeta(s.db, s.key, &s.meta)
	return true
}

// Append appends add to the value and returns the new length. A missing key is created
// holding add (whole, as SET stores it); an existing one becomes raw, as APPEND makes it in
// Redis.
func (s *String) Append(add []byte) int64 {
	if !s.exists {
		s.put(add, false)
		return int64(len(add))
	}
	s.WriteAt(s.Len(), add)
	return s.Len()
}

// SetRange overwrites the value from offset (>= 0) with val, padding with zero bytes up to
// offset, and returns the new length. The value becomes raw; a missing key is created.
//
// A whole string that already holds val at offset is only made raw, not rewritten (nor
// fragmented): the binlog's SETRANGE that carries an HLL's raw encoding (cmds/hyperloglog.go)
// must leave a 12 KB HLL whole on a replay or a replica, as it is on the master.
func (s *String) SetRange(offset int64, val []byte) int64 {
	if v := s.meta.Value; s.exists && !s.meta.Frag && offset+int64(len(val)) <= int64(len(v)) &&
		bytes.Equal(v[offset:offset+int64(len(val))], val) {
		s.MarkRaw()
		return s.Len()
	}
	s.WriteAt(offset, val)
	return s.Len()
}

// Grow pads the value with zero bytes to at least n bytes (creating a missing key), as
// Redis's bit commands make room for the farthest bit they write. The value becomes raw.
func (s *String) Grow(n int64) { s.WriteAt(n, nil) }

// WriteAt writes p at offset off (>= 0), padding with zero bytes up to off and creating a
// missing key; the value becomes raw. A whole string that would grow past codec.FragMin
// bytes (or, not growing, is longer than wholeRewriteMax) is fragmented first; a fragmented
// one rewrites only the fragments p touches.
func (s *String) WriteAt(off int64, p []byte) {
	n := max(s.Len(), off+int64(len(p)))
	fragmented := false
	if !s.meta.Frag {
		if n <= int64(codec.FragMin) || n == s.Len() && n <= wholeRewriteMax {
			out := make([]byte, n)
			copy(out, s.meta.Value)
			copy(out[off:], p)
			s.put(out, true)
			return
		}
		s.fragment()
		fragmented = true
	}
	s.writeFrags(off, p)
	if fragmented || !s.exists || s.meta.Count != uint64(n) || !s.meta.Raw {
		s.meta.Count, s.meta.Raw = uint64(n), true
		s.tx.SetMeta(s.db, s.key, &s.meta)
		s.exists = true
	}
}

// wholeRewriteMax is the largest whole string an in-place write that does not grow it
// rewrites whole instead of fragmenting it: a dense HyperLogLog (12 KiB), whose cached count
// the binlog carries as a SETRANGE, stays whole on a replay or a replica as on the master.
const wholeRewriteMax = 16 << 10

// fragment turns a whole string into a fragmented one of the same bytes, under a new version
// (written to the meta by the caller).
func (s *String) fragment() {
	old := s.meta.Value
	s.meta = codec.Meta{Type: codec.TypeString, Frag: true, Raw: true, Expire: s.meta.Expire,
		Version: s.tx.NewVersion(s.key), Count: uint64(len(old))}
	s.buf = nil
	s.writeFrags(0, old)
}

// fragKey returns the data key of fragment i; valid until the next call.
func (s *String) fragKey(i int64) []byte {
	if s.buf == nil {
		s.buf = s.tx.DataPrefix(s.db, s.key, s.meta.Version)
		s.plen = len(s.buf)
	}
	s.buf = codec.AppendFragIndex(s.buf[:s.plen], uint32(i))
	return s.buf
}

// writeFrags writes p at off into the fragments it covers: each is read, changed and written
// back without its trailing zero bytes (deleted when nothing is left).
func (s *String) writeFrags(off int64, p []byte) {
	f := int64(codec.FragSize)
	for len(p) > 0 {
		i, in := off/f, off%f
		k := min(int64(len(p)), f-in)
		cur, _ := s.tx.GetData(s.key, s.fragKey(i))
		need := max(int64(len(cur)), in+k)
		if int64(cap(s.scratch)) < need {
			s.scratch = make([]byte, f)
		}
		b := s.scratch[:need]
		copy(b, cur)
		clear(b[len(cur):])
		copy(b[in:], p[:k])
		b = trimZeros(b)
		switch {
		case len(b) > 0:
			s.tx.PutData(s.key, s.fragKey(i), b)
		case len(cur) > 0:
			s.tx.DeleteData(s.key, s.fragKey(i))
		}
		off += k
		p = p[k:]
	}
}

// trimZeros cuts b's trailing zero bytes.
func trimZeros(b []byte) []byte {
	n := len(b)
	for n > 0 && b[n-1] == 0 {
		n--
	}
	return b[:n]
}

// ReadAt copies the bytes [off, off+len(p)) of the value into p; bytes past its end read as
// zeros.
func (s *String) ReadAt(p []byte, off int64) {
	clear(p)
	s.Chunks(off, off+int64(len(p)), func(at int64, b []byte) bool {
		copy(p[at-off:], b)
		return true
	})
}

// pointReadFragments is the span of fragments up to which Chunks reads each one by its key.
const pointReadFragments = 4096

// Chunks calls fn, in order, with the stored bytes of the value that lie in [from, to): at
// is the offset of b[0]. The bytes no call covers are zeros (a fragmented string's missing
// fragments, the ends of its short ones). fn returns false to stop; b is valid only during
// the call.
func (s *String) Chunks(from, to int64, fn func(at int64, b []byte) bool) {
	from, to = max(from, 0), min(to, s.Len())
	if from >= to {
		return
	}
	if !s.meta.Frag {
		fn(from, s.meta.Value[from:to])
		return
	}
	f := int64(codec.FragSize)
	first, last := from/f, (to-1)/f
	emit := func(i int64, v []byte) bool {
		start := i * f
		lo, hi := max(from, start), min(to, start+int64(len(v)))
		if lo >= hi {
			return true
		}
		return fn(lo, v[lo-start:hi-start])
	}
	// Up to 4 MB, a point read per fragment. An iterator over fragments that SETBIT rewrote
	// often must step over every older version still in the memtable: BITCOUNT of a 1 MB
	// bitmap right after 400,000 SETBITs on it ran 40 times a second with the iterator, 2,200
	// with point reads (and 2,700 against 2,000 on a fresh one). Beyond, a sparse string's
	// missing fragments would cost a read each: the iterator skips them.
	if last-first < pointReadFragments {
		for i := first; i <= last; i++ {
			if v, ok := s.tx.GetData(s.key, s.fragKey(i)); ok && !emit(i, v) {
				return
			}
		}
		return
	}
	lower := codec.AppendFragIndex(nil, uint32(first))
	var upper []byte
	if last+1 <= math.MaxUint32 {
		upper = codec.AppendFragIndex(nil, uint32(last+1))
	}
	it := s.tx.IterateData(s.db, s.key, s.meta.Version, lower, upper, false)
	defer it.Close()
	for ; it.Valid(); it.Next() {
		if i, ok := codec.FragIndex(it.Elem()); ok && !emit(int64(i), it.Value()) {
			return
		}
	}
}

// Stream opens a reply stream of the fragmented string's bytes followed by CRLF (the bulk
// header is the caller's): GET of a big bitmap is never built whole. See shard.Tx.StreamString.
func (s *String) Stream() (*shard.Stream, error) {
	return s.tx.StreamString(s.db, s.key, s.meta.Version, int64(s.meta.Count), codec.FragSize)
}

// StringWriter builds a new raw string of a known length that replaces whatever its key
// holds (without an expire), written in ascending, non-overlapping pieces (BITOP's result).
// The key keeps its old value until Close, so the sources it is computed from may include it.
type StringWriter struct {
	s     String
	whole []byte // the value of a string short enough to be stored whole
}

// NewStringWriter starts a string of n > 0 bytes (zeros until written) for key in logical db.
func NewStringWriter(tx *shard.Tx, db int, key []byte, n int64) *StringWriter {
	w := &StringWriter{s: String{tx: tx, db: db, key: key}}
	if n <= int64(codec.FragMin) {
		w.whole = make([]byte, n)
		w.s.meta = codec.Meta{Type: codec.TypeString, Raw: true}
		return w
	}
	w.s.meta = codec.Meta{Type: codec.TypeString, Raw: true, Frag: true, Count: uint64(n),
		Version: tx.NewVersion(key)}
	return w
}

// WriteAt writes p at off; pieces come in ascending order and never overlap.
func (w *StringWriter) WriteAt(off int64, p []byte) {
	if w.whole != nil {
		copy(w.whole[off:], p)
		return
	}
	f := int64(codec.FragSize)
	for len(p) > 0 {
		i, in := off/f, off%f
		k := min(int64(len(p)), f-in)
		if in == 0 && k == f { // a whole fragment: nothing to merge with
			if b := trimZeros(p[:k]); len(b) > 0 {
				w.s.tx.PutData(w.s.key, w.s.fragKey(i), b)
			}
		} else {
			w.s.writeFrags(off, p[:k])
		}
		off += k
		p = p[k:]
	}
}

// Close writes the meta (dropping what the key held) and returns the string's handle.
func (w *StringWriter) Close() String {
	if w.whole != nil {
		w.s.meta.Value = w.whole
	}
	w.s.tx.SetMeta(w.s.db, w.s.key, &w.s.meta)
	w.s.exists = true
	return w.s
}

// IncrBy adds delta to the integer value (0 for a missing key), keeping the expire time, and
// returns the result with its decimal form (newly allocated). It fails with ErrNotInteger or
// ErrOverflow, changing nothing.
func (s *String) IncrBy(delta int64) (n int64, val []byte, err error) {
	if s.exists {
		var ok bool
		if n, ok = codec.ParseInt(s.meta.Value); !ok || s.meta.Frag {
			return 0, nil, ErrNotInteger
		}
	}
	if (delta < 0 && n < 0 && delta < math.MinInt64-n) || (delta > 0 && n > 0 && delta > math.MaxInt64-n) {
		return 0, nil, ErrOverflow
	}
	n += delta
	val = strconv.AppendInt(nil, n, 10)
	s.put(val, false)
	return n, val, nil
}
