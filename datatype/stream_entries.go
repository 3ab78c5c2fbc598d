package datatype

import (
	"encoding/binary"
	"errors"

	"shardis/codec"
	"shardis/rdb"
	"shardis/shard"
)

// Stream entries: each entry is a data key 'e' · id whose value is its fields and values
// (codec.AppendStreamFields). Beside them the stream keeps a record of every radix-tree node
// Redis would hold its entries in ('n' · master id): Redis stores a stream as listpacks of at
// most stream-node-max-entries entries (live or deleted) and about stream-node-max-bytes
// bytes, and `MAXLEN ~`/`MINID ~` trimming removes only whole nodes, so its replies depend on
// where the node boundaries fall. A node record holds what decides them: the live and
// deleted counts, the listpack's size in bytes as Redis encodes it, the id of the last entry
// ever put in it (deleted or not) and the master entry's fields. The entries of a node are
// those from its master id up to the next node's; entries Redis only marks as deleted are
// gone from disk here.

// Redis 7.0's defaults for the stream node limits (stream-node-max-entries and
// stream-node-max-bytes, which shardis accepts and keeps without effect).
const (
	StreamNodeMaxEntries = 100
	StreamNodeMaxBytes   = 4096
	// StreamTrimDefaultLimit is the LIMIT of a `~` trim that gives none.
	StreamTrimDefaultLimit = 100 * StreamNodeMaxEntries
	// streamMaxElementsSize is Redis's STREAM_LISTPACK_MAX_SIZE: the largest total size of
	// an entry's fields and values.
	streamMaxElementsSize = 1 << 30
)

// Errors of stream operations.
var (
	// ErrStreamIDTooSmall: the id is not above the stream's last id.
	ErrStreamIDTooSmall = errors.New("datatype: stream id equal or smaller than the top item")
	// ErrStreamTooLarge: an entry's fields and values exceed what Redis stores in one entry.
	ErrStreamTooLarge = errors.New("datatype: stream elements too large")
)

// streamNode is a node record (see above).
type streamNode struct {
	master        codec.StreamID
	live, deleted uint64
	bytes         uint64
	last          codec.StreamID
	fields        [][]byte // the master entry's fields
}

func (n *streamNode) encode() []byte {
	b := make([]byte, 0, 40+16*len(n.fields))
	b = binary.AppendUvarint(b, n.live)
	b = binary.AppendUvarint(b, n.deleted)
	b = binary.AppendUvarint(b, n.bytes)
	b = codec.AppendStreamID(b, n.last)
	b = binary.AppendUvarint(b, uint64(len(n.fields)))
	for _, f := range n.fields {
		b = binary.AppendUvarint(b, uint64(len(f)))
		b = append(b, f...)
	}
	return b
}

// decodeStreamNode decodes a node record; fields are copied only when withFields.
func decodeStreamNode(master codec.StreamID, v []byte, withFields bool) (streamNode, error) {
	n := streamNode{master: master}
	var k int
	next := func() uint64 {
		if k < 0 {
			return 0
		}
		x, m := binary.Uvarint(v[k:])
		if m <= 0 {
			k = -1
			return 0
		}
		k += m
		return x
	}
	n.live, n.deleted, n.bytes = next(), next(), next()
	if k < 0 || len(v)-k < 16 {
		return n, codec.ErrCorruptMeta
	}
	n.last = codec.DecodeStreamID(v[k:])
	k += 16
	nf := next()
	if k < 0 {
		return n, codec.ErrCorruptMeta
	}
	if !withFields {
		return n, nil
	}
	n.fields = make([][]byte, 0, min(nf, 64))
	for range nf {
		l := next()
		if k < 0 || l > uint64(len(v)-k) {
			return n, codec.ErrCorruptMeta
		}
		n.fields = append(n.fields, append([]byte(nil), v[k:k+int(l)]...))
		k += int(l)
	}
	return n, nil
}

// Listpack sizes are Redis's (package rdb, which writes listpacks).
func lpIntSize(v int64) uint64  { return uint64(rdb.ListpackIntEntryBytes(v)) }
func lpStrSize(s []byte) uint64 { return uint64(rdb.ListpackEntryBytes(s)) }

// ---- entries ----

// entryBound appends the element bounding entries from id on: 'e' · id.
func entryUpper(end codec.StreamID) []byte {
	if next, ok := end.Next(); ok {
		return entryElem(nil, next)
	}
	return []byte{codec.StreamEntry + 1}
}

// nodeElem appends the element of the node record of master id: 'n' · id.
func nodeElem(b []byte, master codec.StreamID) []byte {
	return codec.AppendStreamID(append(b, codec.StreamNode), master)
}

// readNode reads the node record of master (with the tail's counters from the meta).
func (s *Stream) readNode(master codec.StreamID, withFields bool) (streamNode, error) {
	v, ok := s.c.get(nodeElem(nil, master))
	if !ok {
		return streamNode{}, codec.ErrCorruptMeta
	}
	n, err := decodeStreamNode(master, v, withFields)
	s.tailState(&n)
	return n, err
}

// isTail reports whether master is the last node's.
func (s *Stream) isTail(master codec.StreamID) bool {
	return s.sm.Nodes > 0 && master == s.sm.TailNode
}

// tailState gives n the counters the meta keeps when it is the last node.
func (s *Stream) tailState(n *streamNode) {
	if s.isTail(n.master) {
		n.live, n.deleted, n.bytes, n.last = s.sm.TailLive, s.sm.TailDeleted, s.sm.TailBytes, s.sm.TailLast
	}
}

// putNode writes n's counters: into the meta for the last node, into its record otherwise
// (the record then needs its fields).
func (s *Stream) putNode(n *streamNode) {
	if s.isTail(n.master) {
		s.sm.TailLive, s.sm.TailDeleted, s.sm.TailBytes, s.sm.TailLast = n.live, n.deleted, n.bytes, n.last
		return
	}
	s.c.put(nodeElem(nil, n.master), n.encode())
}

// makeTail makes the node record of master the last node, moving the previous last node's
// counters into its record first.
func (s *Stream) makeTail(master codec.StreamID) {
	if s.sm.Nodes > 0 && s.sm.TailNode != master {
		if old, err := s.readNode(s.sm.TailNode, true); err == nil {
			s.c.put(nodeElem(nil, old.master), old.encode())
		}
	}
}

// Add appends an entry with id (above the last id: the caller checked) and fields and values
// fv, creating the stream if missing.
func (s *Stream) Add(id codec.StreamID, fv [][]byte) error {
	var total uint64
	for _, x := range fv {
		total += uint64(len(x))
	}
	if total > streamMaxElementsSize {
		return ErrStreamTooLarge
	}
	if id.Compare(s.sm.LastID) <= 0 {
		return ErrStreamIDTooSmall
	}
	s.c.create()
	numfields := uint64(len(fv) / 2)
	hash := codec.StreamFieldsHash(fv)
	var n streamNode
	newNode := true
	if s.sm.Nodes > 0 {
		n = streamNode{master: s.sm.TailNode}
		s.tailState(&n)
		newNode = n.bytes+total >= StreamNodeMaxBytes || n.live+n.deleted >= StreamNodeMaxEntries
	}
	same := false
	if newNode {
		n = streamNode{master: id, live: 1, bytes: 7}
		n.bytes += lpIntSize(1) + lpIntSize(0) + lpIntSize(int64(numfields))
		for i := 0; i < len(fv); i += 2 {
			n.fields = append(n.fields, fv[i])
			n.bytes += lpStrSize(fv[i])
		}
		n.bytes += lpIntSize(0)
		same = true
		nodes := s.sm.Nodes
		s.makeTail(id)
		s.c.put(nodeElem(nil, id), n.encode()) // the master fields; the counters go in the meta
		s.sm.Nodes, s.sm.TailNode = nodes+1, id
		s.sm.TailFields, s.sm.TailFieldsHash = numfields, hash
	} else {
		n.bytes += lpIntSize(int64(n.live+1)) - lpIntSize(int64(n.live))
		n.live++
		same = numfields == s.sm.TailFields && hash == s.sm.TailFieldsHash
	}
	flags := int64(0)
	if same {
		flags = 2
	}
	n.bytes += lpIntSize(flags) + lpIntSize(int64(id.Ms-n.master.Ms)) + lpIntSize(int64(id.Seq-n.master.Seq))
	lpCount := int64(numfields) + 3
	if !same {
		n.bytes += lpIntSize(int64(numfields))
		lpCount += int64(numfields) + 1
	}
	for i := 0; i < len(fv); i += 2 {
		if !same {
			n.bytes += lpStrSize(fv[i])
		}
		n.bytes += lpStrSize(fv[i+1])
	}
	n.bytes += lpIntSize(lpCount)
	n.last = id
	s.putNode(&n)
	s.c.put(entryElem(nil, id), codec.AppendStreamFields(nil, fv))
	s.c.meta.Count++
	s.sm.EntriesAdded++
	s.sm.LastID = id
	if s.c.meta.Count == 1 {
		s.sm.FirstID = id
	}
	return nil
}

// Entry returns the value of entry id (codec.NewStreamFields reads it).
func (s *Stream) Entry(id codec.StreamID) ([]byte, bool) {
	return s.c.get(entryElem(nil, id))
}

// nodeOf returns the node record holding entry id: the last node whose master id is not
// above it.
func (s *Stream) nodeOf(id codec.StreamID) (streamNode, bool) {
	it := s.c.iter([]byte{codec.StreamNode}, entryUpperNode(id), true)
	defer it.Close()
	if !it.Valid() {
		return streamNode{}, false
	}
	elem := it.Elem()
	if len(elem) != 1+codec.StreamIDLen {
		return streamNode{}, false
	}
	n, err := decodeStreamNode(codec.DecodeStreamID(elem[1:]), it.Value(), false)
	s.tailState(&n)
	return n, err == nil
}

func entryUpperNode(id codec.StreamID) []byte {
	if next, ok := id.Next(); ok {
		return nodeElem(nil, next)
	}
	return []byte{codec.StreamNode + 1}
}

// Delete removes entry id (XDEL) and reports whether it existed. It updates the count, the
// node and the max deleted id; the caller fixes the first id with FixFirstID.
func (s *Stream) Delete(id codec.StreamID) bool {
	if !s.c.live() {
		return false
	}
	if _, ok := s.c.get(entryElem(nil, id)); !ok {
		return false
	}
	s.c.del(entryElem(nil, id))
	s.c.meta.Count--
	if n, ok := s.nodeOf(id); ok {
		if n.live <= 1 {
			s.removeNode(n.master)
		} else {
			n2, err := s.readNode(n.master, true)
			if err == nil {
				n2.bytes += lpIntSize(int64(n2.live-1)) - lpIntSize(int64(n2.live))
				n2.bytes += lpIntSize(int64(n2.deleted+1)) - lpIntSize(int64(n2.deleted))
				n2.live--
				n2.deleted++
				s.putNode(&n2)
			}
		}
	}
	if id.Compare(s.sm.MaxDeletedID) > 0 {
		s.sm.MaxDeletedID = id
	}
	return true
}

// removeNode deletes the record of node master (its entries are the caller's), keeping the
// meta's node count and tail.
func (s *Stream) removeNode(master codec.StreamID) {
	s.c.del(nodeElem(nil, master))
	s.sm.Nodes--
	if s.sm.Nodes == 0 {
		s.clearTail()
		return
	}
	if master != s.sm.TailNode {
		return
	}
	it := s.c.iter([]byte{codec.StreamNode}, nodeElem(nil, master), true)
	defer it.Close()
	if it.Valid() && len(it.Elem()) == 1+codec.StreamIDLen {
		s.setTail(codec.DecodeStreamID(it.Elem()[1:]), it.Value())
	}
}

// clearTail forgets the last node: there is none left.
func (s *Stream) clearTail() {
	s.sm.TailNode, s.sm.TailLast = codec.StreamID{}, codec.StreamID{}
	s.sm.TailLive, s.sm.TailDeleted, s.sm.TailBytes, s.sm.TailFields, s.sm.TailFieldsHash = 0, 0, 0, 0, 0
}

// setTail makes the node of master, whose record is v, the last one after the last was
// removed: its counters and fields move into the meta.
func (s *Stream) setTail(master codec.StreamID, v []byte) {
	n, err := decodeStreamNode(master, v, true)
	if err != nil {
		return
	}
	fv := make([][]byte, 0, 2*len(n.fields))
	for _, f := range n.fields {
		fv = append(fv, f, nil)
	}
	s.sm.TailNode = master
	s.sm.TailLive, s.sm.TailDeleted, s.sm.TailBytes, s.sm.TailLast = n.live, n.deleted, n.bytes, n.last
	s.sm.TailFields, s.sm.TailFieldsHash = uint64(len(n.fields)), codec.StreamFieldsHash(fv)
}

// FixFirstID sets the recorded first id after deletions: the first entry's, 0-0 when empty.
func (s *Stream) FixFirstID() {
	if s.c.meta.Count == 0 {
		s.sm.FirstID = codec.StreamID{}
		return
	}
	if id, ok := s.edge(false); ok {
		s.sm.FirstID = id
	}
}

// edge returns the id of the first (last: rev) entry.
func (s *Stream) edge(rev bool) (codec.StreamID, bool) {
	if !s.c.live() || s.c.meta.Count == 0 {
		return codec.StreamID{}, false
	}
	it := s.c.iter([]byte{codec.StreamEntry}, []byte{codec.StreamEntry + 1}, rev)
	defer it.Close()
	if !it.Valid() {
		return codec.StreamID{}, false
	}
	return codec.DecodeStreamID(it.Elem()[1:]), true
}

// LastEntryID returns the id of the last entry (Redis's last valid id), false when empty.
func (s *Stream) LastEntryID() (codec.StreamID, bool) { return s.edge(true) }

// Trim strategies.
const (
	TrimNone = iota
	TrimMaxLen
	TrimMinID
)

// TrimArgs is a trimming request (XTRIM, XADD's MAXLEN/MINID).
type TrimArgs struct {
	Strategy int
	Approx   bool  // `~`: remove whole nodes only
	Limit    int64 // at most this many entries (0: no limit)
	MaxLen   uint64
	MinID    codec.StreamID
}

// Trim trims the stream as Redis's streamTrim does and returns the number of entries
// removed. Nodes left with no live entry are removed whole even when that removes no entry
// (RemovedNodes tells): the stream changed, and its meta must be saved. It walks the node records from the head; the whole nodes it removes go with one
// range delete of their entries and one of their records, however many they are, so
// trimming a million entries holds none of them.
func (s *Stream) Trim(a TrimArgs) int64 {
	s.removedNodes = 0
	if a.Strategy == TrimNone || !s.c.live() || s.sm.Nodes == 0 {
		return 0
	}
	var deleted int64
	var removed uint64 // whole nodes removed, from the head
	var first []byte   // the first removed node's master id ('n' · id), nil for none
	var partial *streamNode
	var partialEnd []byte // the entry element bounding the partial node, nil: the stream's end
	var keptMaster []byte // the first node kept, nil when all went
	left := s.c.meta.Count
	it := s.c.iter([]byte{codec.StreamNode}, []byte{codec.StreamNode + 1}, false)
	for ; it.Valid(); it.Next() {
		if len(it.Elem()) != 1+codec.StreamIDLen {
			break
		}
		n, err := decodeStreamNode(codec.DecodeStreamID(it.Elem()[1:]), it.Value(), false)
		if err != nil {
			break
		}
		s.tailState(&n)
		stop := a.Strategy == TrimMaxLen && left <= a.MaxLen ||
			a.Limit != 0 && deleted+int64(n.live) > a.Limit
		remove := false
		if !stop {
			if a.Strategy == TrimMaxLen {
				remove = left-n.live >= a.MaxLen
			} else {
				remove = n.last.Compare(a.MinID) < 0
			}
		}
		if remove {
			if first == nil {
				first = append([]byte(nil), it.Elem()...)
			}
			removed++
			left -= n.live
			deleted += int64(n.live)
			continue
		}
		keptMaster = append([]byte(nil), it.Elem()...)
		if !stop && !a.Approx {
			partial = &n
			it.Next()
			if it.Valid() && len(it.Elem()) == 1+codec.StreamIDLen {
				partialEnd = entryElem(nil, codec.DecodeStreamID(it.Elem()[1:]))
			}
		}
		break
	}
	it.Close()
	s.removedNodes = removed
	if removed > 0 {
		lower := entryElem(nil, codec.DecodeStreamID(first[1:]))
		upper := []byte{codec.StreamEntry + 1}
		nodeUpper := []byte{codec.StreamNode + 1}
		if keptMaster != nil {
			upper = entryElem(nil, codec.DecodeStreamID(keptMaster[1:]))
			nodeUpper = keptMaster
		}
		s.deleteEntries(lower, upper, s.c.meta.Count-left)
		s.deleteRange(first, nodeUpper, removed)
		s.sm.Nodes -= removed
		if s.sm.Nodes == 0 {
			s.clearTail()
		}
		s.c.meta.Count = left
	}
	if partial != nil {
		deleted += s.trimWithin(a, partial, partialEnd)
	}
	if s.c.meta.Count == 0 {
		s.sm.FirstID = codec.StreamID{}
	} else if deleted > 0 {
		s.FixFirstID()
	}
	return deleted
}

// trimWithin deletes entries of node n from its start (the node Trim could not remove
// whole), up to end (nil: the stream's end), as an exact trim does, and returns how many.
func (s *Stream) trimWithin(a TrimArgs, n *streamNode, end []byte) int64 {
	if end == nil {
		end = []byte{codec.StreamEntry + 1}
	}
	var doomed [][]byte
	left := s.c.meta.Count
	it := s.c.iter(entryElem(nil, n.master), end, false)
	for ; it.Valid(); it.Next() {
		if a.Strategy == TrimMaxLen {
			if left <= a.MaxLen {
				break
			}
		} else if codec.DecodeStreamID(it.Elem()[1:]).Compare(a.MinID) >= 0 {
			break
		}
		doomed = append(doomed, append([]byte(nil), it.Elem()...))
		left--
	}
	it.Close()
	k := uint64(len(doomed))
	if k == 0 {
		return 0
	}
	for _, e := range doomed {
		s.c.del(e)
	}
	if n2, err := s.readNode(n.master, true); err == nil {
		n2.bytes += lpIntSize(int64(n2.live-k)) - lpIntSize(int64(n2.live))
		n2.bytes += lpIntSize(int64(n2.deleted+k)) - lpIntSize(int64(n2.deleted))
		n2.live -= k
		n2.deleted += k
		s.putNode(&n2)
	}
	s.c.meta.Count -= k
	return int64(k)
}

// deleteEntries deletes the entries in [lower, upper), of which there are n.
func (s *Stream) deleteEntries(lower, upper []byte, n uint64) {
	if n > 0 {
		s.deleteRange(lower, upper, n)
	}
}

// rangeDeleteMin is the number of keys from which a trim deletes them with one range delete
// rather than one by one: a range delete of live keys empties the shard's key cache (see
// shard.Tx.DeleteDataRange), worth it only for big trims.
const rangeDeleteMin = 1024

// deleteRange deletes the data keys whose elements lie in [lower, upper), of which there
// are n: one by one when few, with a range delete otherwise.
func (s *Stream) deleteRange(lower, upper []byte, n uint64) {
	if n > rangeDeleteMin {
		lo := append([]byte(nil), s.c.dataKey(lower)...)
		s.c.tx.DeleteDataRange(s.c.key, lo, append([]byte(nil), s.c.dataKey(upper)...))
		return
	}
	var doomed [][]byte
	it := s.c.iter(lower, upper, false)
	for ; it.Valid(); it.Next() {
		doomed = append(doomed, append([]byte(nil), it.Elem()...))
	}
	it.Close()
	for _, e := range doomed {
		s.c.del(e)
	}
}

// Range walks the entries with ids in [start, end], ascending or descending (rev). The
// iterator must be closed.
func (s *Stream) Range(start, end codec.StreamID, rev bool) StreamIter {
	if !s.c.live() || start.Compare(end) > 0 {
		return StreamIter{}
	}
	return StreamIter{s.c.iter(entryElem(nil, start), entryUpper(end), rev)}
}

// StreamRange opens a reply stream over the entries with ids in [start, end] (see Range),
// at most limit of them (< 0: all): emit gets 'e' · id and the entry's value. It commits the
// transaction's earlier writes first.
func (s *Stream) StreamRange(start, end codec.StreamID, rev bool, limit int, emit shard.EmitFunc) (*shard.Stream, error) {
	return s.c.stream(entryElem(nil, start), entryUpper(end), rev, limit, emit)
}

// CountRange counts the entries in [start, end], stopping at max (> 0).
func (s *Stream) CountRange(start, end codec.StreamID, max uint64) uint64 {
	if start.Compare(end) > 0 {
		return 0
	}
	if start.IsZero() && end == codec.MaxStreamID {
		return min(s.c.meta.Count, max)
	}
	it := s.Range(start, end, false)
	defer it.Close()
	var n uint64
	for ; it.Valid() && n < max; it.Next() {
		n++
	}
	return n
}

// StreamIter walks stream entries. The zero StreamIter is empty.
type StreamIter struct{ it *shard.Iter }

// Valid reports whether the iterator is at an entry.
func (x StreamIter) Valid() bool { return x.it != nil && x.it.Valid() }

// Next moves to the next entry.
func (x StreamIter) Next() { x.it.Next() }

// ID returns the current entry's id.
func (x StreamIter) ID() codec.StreamID { return codec.DecodeStreamID(x.it.Elem()[1:]) }

// Value returns the current entry's value (codec.NewStreamFields reads it), valid until the
// iterator moves.
func (x StreamIter) Value() []byte { return x.it.Value() }

// Close releases the iterator.
func (x StreamIter) Close() {
	if x.it != nil {
		x.it.Close()
	}
}

// RemovedNodes returns how many whole nodes the last Trim removed.
func (s *Stream) RemovedNodes() uint64 { return s.removedNodes }
