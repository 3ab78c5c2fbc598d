package datatype

import (
	"errors"
	"math"
	"strconv"

	"shardis/codec"
	"shardis/shard"
)

// A string is its meta value alone: the value is stored in the meta (docs/ENCODING.md), so a
// GET is one point read and a string has no data keys. The meta's raw flag remembers that
// APPEND or SETRANGE built the value, so OBJECT ENCODING answers as Redis.

// ErrNotInteger: String.IncrBy met a value that is not an integer.
var ErrNotInteger = errors.New("datatype: value is not an integer or out of range")

// String is a string key opened in a transaction. The zero value is not usable; get one from
// LookupString or StringFromMeta. See the package comment for its lifetime.
type String struct {
	tx     *shard.Tx
	db     int
	key    []byte
	meta   codec.Meta
	exists bool
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

// Value returns the value (nil for a missing key). It is valid until the transaction commits.
func (s *String) Value() []byte { return s.meta.Value }

// Len returns the length of the value.
func (s *String) Len() int64 { return int64(len(s.meta.Value)) }

// Expire returns the expire time in unix ms (0: none).
func (s *String) Expire() int64 { return s.meta.Expire }

// put stores val (with the raw flag) keeping the expire time, creating the key if missing.
func (s *String) put(val []byte, raw bool) {
	s.meta = codec.Meta{Type: codec.TypeString, Value: val, Expire: s.meta.Expire, Raw: raw}
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

// Append appends add to the value and returns the new value, which the string keeps
// (freshly allocated; the caller must not change it). A missing key is created holding add;
// an existing one becomes raw, as APPEND makes it in Redis.
func (s *String) Append(add []byte) []byte {
	if !s.exists {
		s.put(add, false)
		return add
	}
	val := make([]byte, 0, len(s.meta.Value)+len(add))
	val = append(append(val, s.meta.Value...), add...)
	s.put(val, true)
	return val
}

// SetRange overwrites the value from offset (>= 0) with val (not empty), padding with zero
// bytes up to offset, and returns the new length. The value becomes raw; a missing key is
// created.
func (s *String) SetRange(offset int64, val []byte) int64 {
	n := max(int64(len(s.meta.Value)), offset+int64(len(val)))
	out := make([]byte, n)
	copy(out, s.meta.Value)
	copy(out[offset:], val)
	s.put(out, true)
	return n
}

// IncrBy adds delta to the integer value (0 for a missing key), keeping the expire time, and
// returns the result with its decimal form (newly allocated). It fails with ErrNotInteger or
// ErrOverflow, changing nothing.
func (s *String) IncrBy(delta int64) (n int64, val []byte, err error) {
	if s.exists {
		var ok bool
		if n, ok = codec.ParseInt(s.meta.Value); !ok {
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
