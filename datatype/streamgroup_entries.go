package datatype

import (
	"shardis/codec"
	"shardis/shard"
)

// Entry reads the consumer group commands need: whether an entry exists, its value, and a
// walk from an id up.

// EntryValue returns the value of entry id (codec.AppendStreamFields), ok false when the
// stream has no such entry.
func (s *Stream) EntryValue(id codec.StreamID) ([]byte, bool) {
	return s.c.get(entryElem(nil, id))
}

// EntryRange walks the entries with ids in [from, to], forward or backward (reverse).
type EntryRange struct {
	it *shard.Iter
}

// EntriesBetween opens an EntryRange; it must be closed.
func (s *Stream) EntriesBetween(from, to codec.StreamID, reverse bool) EntryRange {
	if !s.c.live() || from.Compare(to) > 0 {
		return EntryRange{}
	}
	return EntryRange{s.c.iter(entryElem(nil, from), append(entryElem(nil, to), 0), reverse)}
}

// Valid reports whether the walk is at an entry.
func (r EntryRange) Valid() bool { return r.it != nil && r.it.Valid() }

// Next moves to the next entry.
func (r EntryRange) Next() { r.it.Next() }

// ID returns the current entry's id.
func (r EntryRange) ID() codec.StreamID { return codec.DecodeStreamID(r.it.Elem()[1:]) }

// Value returns the current entry's value (valid until the walk moves).
func (r EntryRange) Value() []byte { return r.it.Value() }

// Close releases the walk.
func (r EntryRange) Close() {
	if r.it != nil {
		r.it.Close()
	}
}
