package datatype

import (
	"encoding/binary"

	"shardis/codec"
	"shardis/shard"
)

// A stream is a collection whose meta also holds the stream part (codec.StreamMeta: last id,
// max deleted id, entries added, first id, group count) and whose data keys hold its entries,
// consumer groups, consumers and pending entries, each kind under its own first byte
// (codec/stream.go, docs/ENCODING.md "Streams"). Unlike the other collections, a stream may
// exist with no entries (XGROUP CREATE … MKSTREAM, XDEL of the last entry, XTRIM MAXLEN 0), so
// Save never deletes the key; commands that remove the stream delete the key.

// Stream is a stream key opened in a transaction. The zero value is not usable; get one from
// LookupStream or StreamFromMeta. See the package comment for its lifetime.
type Stream struct {
	c  collection
	sm codec.StreamMeta
	// removedNodes is how many whole nodes the last Trim removed.
	removedNodes uint64
}

// LookupStream opens the stream stored at key in logical db. A missing key gives an empty
// stream (Exists false) that Create makes; a key of another type gives ErrWrongType.
func LookupStream(tx *shard.Tx, db int, key []byte) (Stream, error) {
	c, err := lookup(tx, db, key, codec.TypeStream)
	return streamOf(c, err)
}

// StreamFromMeta is LookupStream for a meta the caller has read itself: exists false means
// the key is missing.
func StreamFromMeta(tx *shard.Tx, db int, key []byte, m codec.Meta, exists bool) (Stream, error) {
	c, err := fromMeta(tx, db, key, codec.TypeStream, m, exists)
	return streamOf(c, err)
}

func streamOf(c collection, err error) (Stream, error) {
	s := Stream{c: c}
	if err != nil || !c.exists {
		return s, err
	}
	if err := codec.DecodeStreamMeta(c.meta.Value, &s.sm); err != nil {
		return s, err
	}
	s.c.meta.Value = nil // decoded into sm; Save encodes it afresh
	return s, nil
}

// Exists reports whether the key holds the stream (false for a missing key, until Save).
func (s *Stream) Exists() bool { return s.c.exists }

// Create makes a missing stream live, so it can take entries and groups; Save then adds the
// key. It does nothing to an existing one.
func (s *Stream) Create() { s.c.create() }

// Len returns the number of entries.
func (s *Stream) Len() uint64 { return s.c.meta.Count }

// Info returns the stream part of the meta as the handle holds it, including changes not yet
// saved. The caller may change it; Save writes it.
func (s *Stream) Info() *codec.StreamMeta { return &s.sm }

// Meta returns the stream's meta (version, count, expire) as the handle holds it. Its Value
// is not set: the stream part is Info. The caller must not modify it.
func (s *Stream) Meta() *codec.Meta { return &s.c.meta }

// Save writes the meta with the stream part. An empty stream stays (see the type comment).
func (s *Stream) Save() {
	if !s.c.live() {
		return
	}
	m := s.c.meta
	m.Value = codec.AppendStreamMeta(make([]byte, 0, codec.StreamMetaLen), &s.sm)
	s.c.tx.SetMeta(s.c.db, s.c.key, &m)
	s.c.exists = true
}

// entryElem appends the element of entry id to b: 'e' · id.
func entryElem(b []byte, id codec.StreamID) []byte {
	return codec.AppendStreamID(append(b, codec.StreamEntry), id)
}

// groupElem appends the element of group name's record to b: 'g' · name.
func groupElem(b []byte, group []byte) []byte {
	return append(append(b, codec.StreamGroup), group...)
}

// groupScoped appends kind · len(group) · group to b: the start of every consumer, pending
// and owned element of the group.
func groupScoped(b []byte, kind byte, group []byte) []byte {
	b = append(b, kind)
	b = binary.BigEndian.AppendUint32(b, uint32(len(group)))
	return append(b, group...)
}

// consumerElem appends the element of a consumer's record: 'c' · len(group) · group · name.
func consumerElem(b []byte, group, consumer []byte) []byte {
	return append(groupScoped(b, codec.StreamConsumer, group), consumer...)
}

// pendingElem appends the element of a group's pending entry: 'p' · len(group) · group · id.
func pendingElem(b []byte, group []byte, id codec.StreamID) []byte {
	return codec.AppendStreamID(groupScoped(b, codec.StreamPending, group), id)
}

// ownedElem appends the element of a consumer's pending index entry:
// 'q' · len(group) · group · len(consumer) · consumer · id.
func ownedElem(b []byte, group, consumer []byte, id codec.StreamID) []byte {
	b = groupScoped(b, codec.StreamOwned, group)
	b = binary.BigEndian.AppendUint32(b, uint32(len(consumer)))
	b = append(b, consumer...)
	return codec.AppendStreamID(b, id)
}
