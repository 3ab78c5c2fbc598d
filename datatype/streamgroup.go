package datatype

import (
	"bytes"
	"encoding/binary"

	"shardis/codec"
	"shardis/shard"
)

// Consumer groups of a stream (docs/ENCODING.md, "Streams"). Each group is a record under
// 'g' · name; its consumers, its pending entries list (PEL) and each consumer's index into
// the PEL are data keys under the group's scope ('c', 'p', 'q' · len(group) · group), so a
// command changes a group by point writes in its own transaction and a kill -9 loses no
// acknowledged change. Values:
//
//	group     last delivered id (16) · entries read (8, int64; -1 unknown) · pending (8) · consumers (8)
//	consumer  seen time (8, unix ms) · pending (8)
//	pending   delivery time (8, unix ms) · delivery count (8) · consumer name
//
// A Group is opened from its Stream for one command; it caches the consumers it touched and
// writes their records and its own on Save.

// InvalidEntriesRead is the entries-read value of a group whose count is unknown (Redis's
// SCG_INVALID_ENTRIES_READ).
const InvalidEntriesRead int64 = -1

const (
	groupRecordLen    = 40
	consumerRecordLen = 16
	pendingHeadLen    = 16
)

// Group is a consumer group opened in a transaction.
type Group struct {
	s    *Stream
	name []byte

	LastID      codec.StreamID
	EntriesRead int64
	pending     uint64
	consumers   uint64

	touched map[string]*Consumer // consumers read or changed by this command
	dirty   bool
	buf     []byte
}

// Consumer is a consumer of a group as the Group holds it.
type Consumer struct {
	Name     []byte
	SeenTime int64
	pending  uint64
	dirty    bool
	deleted  bool
}

// Pending returns the number of entries the consumer has pending.
func (c *Consumer) Pending() uint64 { return c.pending }

// NACK is a pending entry: delivered to Consumer, not yet acknowledged.
type NACK struct {
	DeliveryTime  int64
	DeliveryCount uint64
	Consumer      []byte
}

// Name returns the group's name.
func (g *Group) Name() []byte { return g.name }

// Pending returns the number of entries in the group's PEL.
func (g *Group) Pending() uint64 { return g.pending }

// Consumers returns the number of the group's consumers.
func (g *Group) Consumers() uint64 { return g.consumers }

// MarkDirty records that LastID or EntriesRead changed, for Save.
func (g *Group) MarkDirty() { g.dirty = true }

func decodeGroup(v []byte, g *Group) bool {
	if len(v) != groupRecordLen {
		return false
	}
	g.LastID = codec.DecodeStreamID(v)
	g.EntriesRead = int64(binary.BigEndian.Uint64(v[16:]))
	g.pending = binary.BigEndian.Uint64(v[24:])
	g.consumers = binary.BigEndian.Uint64(v[32:])
	return true
}

func (g *Group) record() []byte {
	b := codec.AppendStreamID(make([]byte, 0, groupRecordLen), g.LastID)
	b = binary.BigEndian.AppendUint64(b, uint64(g.EntriesRead))
	b = binary.BigEndian.AppendUint64(b, g.pending)
	return binary.BigEndian.AppendUint64(b, g.consumers)
}

// Group opens group name of the stream; ok is false when there is none.
func (s *Stream) Group(name []byte) (g *Group, ok bool) {
	if !s.c.live() {
		return nil, false
	}
	v, ok := s.c.get(groupElem(nil, name))
	if !ok {
		return nil, false
	}
	g = &Group{s: s, name: bytes.Clone(name)}
	if !decodeGroup(v, g) {
		s.c.tx.Fail(codec.ErrCorruptMeta)
		return nil, false
	}
	return g, true
}

// CreateGroup adds group name with last delivered id last and entries read; ok is false when
// the group exists already. The stream must be live (Create); Save the stream after.
func (s *Stream) CreateGroup(name []byte, last codec.StreamID, entriesRead int64) (*Group, bool) {
	if _, ok := s.c.get(groupElem(nil, name)); ok {
		return nil, false
	}
	g := &Group{s: s, name: bytes.Clone(name), LastID: last, EntriesRead: entriesRead, dirty: true}
	s.sm.Groups++
	g.Save()
	return g, true
}

// DestroyGroup removes group name with its consumers and PEL and reports whether it existed.
// Save the stream after.
func (s *Stream) DestroyGroup(name []byte) bool {
	if !s.c.live() {
		return false
	}
	if _, ok := s.c.get(groupElem(nil, name)); !ok {
		return false
	}
	s.c.del(groupElem(nil, name))
	for _, kind := range []byte{codec.StreamConsumer, codec.StreamPending, codec.StreamOwned} {
		s.delScope(groupScoped(nil, kind, name))
	}
	if s.sm.Groups > 0 {
		s.sm.Groups--
	}
	return true
}

// delScope deletes every data key whose element starts with prefix.
func (s *Stream) delScope(prefix []byte) {
	it := s.c.iter(prefix, prefixEnd(prefix), false)
	var elems [][]byte
	for ; it.Valid(); it.Next() {
		elems = append(elems, bytes.Clone(it.Elem()))
	}
	it.Close()
	for _, e := range elems {
		s.c.del(e)
	}
}

// prefixEnd returns the smallest element above every element that starts with p (nil: none).
func prefixEnd(p []byte) []byte {
	e := bytes.Clone(p)
	for i := len(e) - 1; i >= 0; i-- {
		if e[i] < 0xff {
			e[i]++
			return e[:i+1]
		}
	}
	return nil
}

// GroupNames returns the names of the stream's groups in name order.
func (s *Stream) GroupNames() [][]byte {
	if !s.c.live() || s.sm.Groups == 0 {
		return nil
	}
	lo := []byte{codec.StreamGroup}
	it := s.c.iter(lo, prefixEnd(lo), false)
	defer it.Close()
	var out [][]byte
	for ; it.Valid(); it.Next() {
		out = append(out, bytes.Clone(it.Elem()[1:]))
	}
	return out
}

// Save writes the group's record and the records of the consumers it changed.
func (g *Group) Save() {
	for _, c := range g.touched {
		if c.deleted || !c.dirty {
			continue
		}
		g.s.c.put(consumerElem(g.buf[:0], g.name, c.Name), consumerRecord(c))
		c.dirty = false
	}
	if g.dirty {
		g.s.c.put(groupElem(g.buf[:0], g.name), g.record())
		g.dirty = false
	}
}

func consumerRecord(c *Consumer) []byte {
	b := binary.BigEndian.AppendUint64(make([]byte, 0, consumerRecordLen), uint64(c.SeenTime))
	return binary.BigEndian.AppendUint64(b, c.pending)
}

// Consumer returns consumer name of the group, or nil when it has none. With refresh its seen
// time becomes now (Redis's lookup without SLC_NO_REFRESH).
func (g *Group) Consumer(name []byte, refresh bool, now int64) *Consumer {
	c := g.loadConsumer(name)
	if c != nil && refresh {
		c.SeenTime = now
		c.dirty = true
	}
	return c
}

func (g *Group) loadConsumer(name []byte) *Consumer {
	if c, ok := g.touched[string(name)]; ok {
		if c.deleted {
			return nil
		}
		return c
	}
	v, ok := g.s.c.get(consumerElem(g.buf[:0], g.name, name))
	if !ok {
		return nil
	}
	if len(v) != consumerRecordLen {
		g.s.c.tx.Fail(codec.ErrCorruptMeta)
		return nil
	}
	c := &Consumer{Name: bytes.Clone(name), SeenTime: int64(binary.BigEndian.Uint64(v)),
		pending: binary.BigEndian.Uint64(v[8:])}
	g.remember(c)
	return c
}

func (g *Group) remember(c *Consumer) {
	if g.touched == nil {
		g.touched = make(map[string]*Consumer)
	}
	g.touched[string(c.Name)] = c
}

// CreateConsumer adds consumer name, seen now, and reports false (and the existing one) when
// the group has it already.
func (g *Group) CreateConsumer(name []byte, now int64) (*Consumer, bool) {
	if c := g.loadConsumer(name); c != nil {
		return c, false
	}
	c := &Consumer{Name: bytes.Clone(name), SeenTime: now, dirty: true}
	g.remember(c)
	g.consumers++
	g.dirty = true
	return c, true
}

// DeleteConsumer removes consumer name and its pending entries (from the group's PEL too) and
// returns how many it had; ok is false when there is no such consumer.
func (g *Group) DeleteConsumer(name []byte) (pending uint64, ok bool) {
	c := g.loadConsumer(name)
	if c == nil {
		return 0, false
	}
	for _, id := range g.OwnedIDs(name, codec.MinStreamID, codec.MaxStreamID, 0) {
		g.s.c.del(pendingElem(g.buf[:0], g.name, id))
		g.s.c.del(ownedElem(g.buf[:0], g.name, name, id))
		g.pending--
	}
	g.s.c.del(consumerElem(g.buf[:0], g.name, name))
	c.deleted = true
	g.consumers--
	g.dirty = true
	return c.pending, true
}

// ConsumerNames returns the names of the group's consumers in name order.
func (g *Group) ConsumerNames() [][]byte {
	lo := groupScoped(nil, codec.StreamConsumer, g.name)
	it := g.s.c.iter(lo, prefixEnd(lo), false)
	defer it.Close()
	var out [][]byte
	for ; it.Valid(); it.Next() {
		out = append(out, bytes.Clone(it.Elem()[len(lo):]))
	}
	return out
}

// NACK returns the pending entry of id, ok false when id is not pending.
func (g *Group) NACK(id codec.StreamID) (n NACK, ok bool) {
	v, ok := g.s.c.get(pendingElem(g.buf[:0], g.name, id))
	if !ok {
		return n, false
	}
	return decodeNACK(v)
}

func decodeNACK(v []byte) (n NACK, ok bool) {
	if len(v) < pendingHeadLen {
		return n, false
	}
	n.DeliveryTime = int64(binary.BigEndian.Uint64(v))
	n.DeliveryCount = binary.BigEndian.Uint64(v[8:])
	n.Consumer = bytes.Clone(v[16:])
	return n, true
}

func nackValue(n *NACK) []byte {
	b := binary.BigEndian.AppendUint64(make([]byte, 0, pendingHeadLen+len(n.Consumer)), uint64(n.DeliveryTime))
	b = binary.BigEndian.AppendUint64(b, n.DeliveryCount)
	return append(b, n.Consumer...)
}

// SetNACK makes id pending with n, owned by n.Consumer (a consumer of the group, loaded or
// created through the Group), moving it from its previous owner, if any.
func (g *Group) SetNACK(id codec.StreamID, n NACK) {
	old, had := g.NACK(id)
	if had && !bytes.Equal(old.Consumer, n.Consumer) {
		if oc := g.loadConsumer(old.Consumer); oc != nil {
			oc.pending--
			oc.dirty = true
		}
		g.s.c.del(ownedElem(g.buf[:0], g.name, old.Consumer, id))
	}
	if !had || !bytes.Equal(old.Consumer, n.Consumer) {
		if c := g.loadConsumer(n.Consumer); c != nil {
			c.pending++
			c.dirty = true
		}
		g.s.c.put(ownedElem(g.buf[:0], g.name, n.Consumer, id), nil)
	}
	if !had {
		g.pending++
		g.dirty = true
	}
	g.s.c.put(pendingElem(g.buf[:0], g.name, id), nackValue(&n))
}

// Ack removes id from the PEL and reports whether it was pending.
func (g *Group) Ack(id codec.StreamID) bool {
	n, ok := g.NACK(id)
	if !ok {
		return false
	}
	g.s.c.del(pendingElem(g.buf[:0], g.name, id))
	g.s.c.del(ownedElem(g.buf[:0], g.name, n.Consumer, id))
	if c := g.loadConsumer(n.Consumer); c != nil {
		c.pending--
		c.dirty = true
	}
	g.pending--
	g.dirty = true
	return true
}

// PELIter walks pending entries in id order.
type PELIter struct {
	it    *shard.Iter
	plen  int
	group *Group
	owner []byte // set: a consumer's index, whose values are looked up in the group's PEL
}

// PEL walks the group's pending entries with ids in [from, to].
func (g *Group) PEL(from, to codec.StreamID) *PELIter {
	lo := pendingElem(nil, g.name, from)
	hi := pendingElem(nil, g.name, to)
	hi = append(hi, 0)
	return &PELIter{it: g.s.c.iter(lo, hi, false), plen: len(lo) - codec.StreamIDLen, group: g}
}

// OwnedPEL walks the pending entries of consumer with ids in [from, to].
func (g *Group) OwnedPEL(consumer []byte, from, to codec.StreamID) *PELIter {
	lo := ownedElem(nil, g.name, consumer, from)
	hi := append(ownedElem(nil, g.name, consumer, to), 0)
	return &PELIter{it: g.s.c.iter(lo, hi, false), plen: len(lo) - codec.StreamIDLen, group: g,
		owner: bytes.Clone(consumer)}
}

// Valid reports whether the iterator is at an entry.
func (x *PELIter) Valid() bool { return x.it.Valid() }

// Next moves to the next entry.
func (x *PELIter) Next() { x.it.Next() }

// ID returns the current entry's id.
func (x *PELIter) ID() codec.StreamID { return codec.DecodeStreamID(x.it.Elem()[x.plen:]) }

// NACK returns the current entry.
func (x *PELIter) NACK() NACK {
	if x.owner != nil {
		n, _ := x.group.NACK(x.ID())
		return n
	}
	n, _ := decodeNACK(x.it.Value())
	return n
}

// Close releases the iterator.
func (x *PELIter) Close() { x.it.Close() }

// OwnedIDs returns the ids consumer has pending in [from, to], at most count of them (0: all).
func (g *Group) OwnedIDs(consumer []byte, from, to codec.StreamID, count int) []codec.StreamID {
	it := g.OwnedPEL(consumer, from, to)
	defer it.Close()
	var out []codec.StreamID
	for ; it.Valid() && (count == 0 || len(out) < count); it.Next() {
		out = append(out, it.ID())
	}
	return out
}

// FirstLastPending returns the smallest and largest pending ids (the PEL must not be empty).
func (g *Group) FirstLastPending() (first, last codec.StreamID) {
	lo := groupScoped(nil, codec.StreamPending, g.name)
	hi := prefixEnd(lo)
	it := g.s.c.iter(lo, hi, false)
	if it.Valid() {
		first = codec.DecodeStreamID(it.Elem()[len(lo):])
	}
	it.Close()
	it = g.s.c.iter(lo, hi, true)
	if it.Valid() {
		last = codec.DecodeStreamID(it.Elem()[len(lo):])
	}
	it.Close()
	return first, last
}

// EntryValue returns a copy of the value of entry id, ok false when the stream has none. It
// seeks rather than reading the key point-wise: an entry removed by a whole-node trim (one
// range delete) may linger in the shard's key cache, which range deletes of data keys do not
// clear, but never in an iterator.
func (s *Stream) EntryValue(id codec.StreamID) ([]byte, bool) {
	r := s.Range(id, id, false)
	defer r.Close()
	if !r.Valid() {
		return nil, false
	}
	return bytes.Clone(r.Value()), true
}
