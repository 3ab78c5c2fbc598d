package datatype

import (
	"bytes"
	"math/rand/v2"
	"slices"

	"shardis/codec"
	"shardis/shard"
)

// A set is a collection whose data keys are its members, with empty values
// (docs/ENCODING.md). Members are stored, and walked, in byte order, which the multi-key
// operations use (a k-way merge for a union, a merge join for a difference).
//
// Storage keeps no rank index, so picking a member uniformly (Random, Sample, Draw) walks the
// set to a random position: O(N), where Redis is O(1).

// Set is a set key opened in a transaction. The zero value is not usable; get one from
// LookupSet, SetFromMeta or NewSet. See the package comment for its lifetime.
type Set struct{ c collection }

// LookupSet opens the set stored at key in logical db. A missing key gives an empty set
// (Exists false) that Add creates; a key of another type gives ErrWrongType.
func LookupSet(tx *shard.Tx, db int, key []byte) (Set, error) {
	c, err := lookup(tx, db, key, codec.TypeSet)
	return Set{c}, err
}

// SetFromMeta is LookupSet for a meta the caller has read itself (with Tx.MetaRead, say):
// exists false means the key is missing.
func SetFromMeta(tx *shard.Tx, db int, key []byte, m codec.Meta, exists bool) (Set, error) {
	c, err := fromMeta(tx, db, key, codec.TypeSet, m, exists)
	return Set{c}, err
}

// NewSet returns a new, empty set for key that replaces whatever key holds (of any type) when
// it is saved, or deletes key if it is saved empty: the destination of SINTERSTORE and its
// kind. Its members are written under a new version, so the key's old value can be read
// while the new one is built.
func NewSet(tx *shard.Tx, db int, key []byte) Set {
	s := Set{collection{tx: tx, db: db, key: key, typ: codec.TypeSet}}
	s.c.create()
	return s
}

// Exists reports whether the key holds the set (false for a missing key, until Save).
func (s *Set) Exists() bool { return s.c.exists }

// Len returns the number of members.
func (s *Set) Len() int64 { return int64(s.c.meta.Count) }

// Meta returns the set's meta as the handle holds it, including changes not yet saved. The
// caller must not modify it.
func (s *Set) Meta() *codec.Meta { return &s.c.meta }

// Key returns the key the set is stored at.
func (s *Set) Key() []byte { return s.c.key }

// Has reports whether member is in the set.
func (s *Set) Has(member []byte) bool {
	_, ok := s.c.get(member)
	return ok
}

// Add adds member and reports whether it was not in the set yet.
func (s *Set) Add(member []byte) bool {
	if s.Has(member) {
		return false
	}
	s.AddNew(member)
	return true
}

// AddNew adds a member the caller knows is not in the set, without reading: for a set built
// from distinct members (NewSet).
func (s *Set) AddNew(member []byte) {
	s.c.create()
	m := &s.c.meta
	n := m.Count + 1
	// Redis's intset ends with the first member that is not an integer, or past
	// set-max-intset-entries; the packed form lasts while it is an intset of at most
	// packMaxInts members, or holds at most packMaxEntries members of at most packMaxElem
	// bytes (every earlier member was checked the same way).
	if m.Compact && (!IsIntsetMember(member) || int64(n) > s.c.tx.EncodingLimits().SetIntEntries) {
		m.Compact = false
	}
	if m.Packed && !(m.Compact && n <= packMaxInts || n <= packMaxEntries && len(member) <= packMaxElem) {
		s.c.unpack()
	}
	s.c.put(member, nil)
	m.Count = n
}

// Remove removes member and reports whether it was in the set.
func (s *Set) Remove(member []byte) bool {
	if !s.Has(member) {
		return false
	}
	s.c.del(member)
	s.c.meta.Count--
	return true
}

// Save writes the set's meta, or deletes the key when no member is left; it reports whether
// it deleted the key. Call it once after the changes of a command.
func (s *Set) Save() (removed bool) { return s.c.save() }

// Drop deletes the whole set, the key with it, and reports whether the key existed.
func (s *Set) Drop() bool {
	s.c.meta.Count = 0
	return s.c.save()
}

// Iter walks the members from member lower (inclusive; nil: the first) in byte order. The
// iterator must be closed.
func (s *Set) Iter(lower []byte) SetIter {
	if !s.c.live() {
		return SetIter{}
	}
	if s.c.meta.Packed {
		return SetIter{p: newPackedIter(s.c.packedView(), false, lower)}
	}
	return SetIter{it: s.c.iter(lower, nil, false), s: s}
}

// Stream opens a reply stream over every member (shard.Tx.StreamData): emit gets each member
// and an empty value. It commits the transaction's earlier writes first.
func (s *Set) Stream(emit shard.EmitFunc) (*shard.Stream, error) {
	return s.c.stream(nil, nil, false, -1, emit)
}

// Members returns copies of every member, in byte order.
func (s *Set) Members() [][]byte {
	out := make([][]byte, 0, s.c.meta.Count)
	it := s.Iter(nil)
	for ; it.Valid(); it.Next() {
		out = append(out, bytes.Clone(it.Member()))
	}
	it.Close()
	return out
}

// At returns copies of the members at positions pos (ascending, repeats allowed; a repeated
// position shares its copy) in the same order: a walk from the first member, O(N).
func (s *Set) At(pos []uint64) [][]byte {
	out := make([][]byte, len(pos))
	s.c.walkAt(pos, func(i int, member, _ []byte) {
		if i > 0 && pos[i-1] == pos[i] {
			out[i] = out[i-1]
		} else {
			out[i] = bytes.Clone(member)
		}
	})
	return out
}

// Random returns a copy of a member chosen uniformly; the set must not be empty.
func (s *Set) Random() []byte { return s.At([]uint64{rand.Uint64N(s.c.meta.Count)})[0] }

// Sample returns copies of k distinct members chosen uniformly, 0 < k < Len, in random order.
func (s *Set) Sample(k uint64) [][]byte {
	out := s.At(SamplePositions(s.c.meta.Count, k))
	rand.Shuffle(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })
	return out
}

// Draw returns copies of k members drawn independently (repeats allowed), in random order;
// the set must not be empty. Only the members drawn are held.
func (s *Set) Draw(k uint64) [][]byte {
	pos := make([]uint64, k)
	for i := range pos {
		pos[i] = rand.Uint64N(s.c.meta.Count)
	}
	slices.Sort(pos)
	// Independent draws, sorted and then shuffled, are again independent draws.
	out := s.At(pos)
	rand.Shuffle(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })
	return out
}

// SetIter walks the members of a set in byte order. The zero SetIter (of a missing set) is
// empty. Member is valid until the iterator moves.
type SetIter struct {
	it *shard.Iter
	s  *Set        // for Seek's data key
	p  *packedIter // a packed set's
}

// Valid reports whether the iterator is at a member.
func (x SetIter) Valid() bool {
	if x.p != nil {
		return x.p.valid
	}
	return x.it != nil && x.it.Valid()
}

// Next moves to the next member.
func (x SetIter) Next() {
	if x.p != nil {
		x.p.next()
		return
	}
	x.it.Next()
}

// Member returns the current member.
func (x SetIter) Member() []byte {
	if x.p != nil {
		return x.p.elem
	}
	return x.it.Elem()
}

// Seek moves to the first member >= member. It uses the set handle's key buffer.
func (x SetIter) Seek(member []byte) {
	if x.p != nil {
		x.p.seek(member)
		return
	}
	x.it.Seek(x.s.c.dataKey(member))
}

// Close releases the iterator.
func (x SetIter) Close() {
	if x.it != nil {
		x.it.Close()
	}
}
