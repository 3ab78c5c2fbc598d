package rdb

import (
	"bytes"
	"encoding/binary"
	"errors"
)

// Streams as Redis 7.0 writes them (RDB_TYPE_STREAM_LISTPACKS_2): the entries in nodes, each
// a 16-byte big-endian master id and a listpack, cut where XADD would start a new node; then
// the stream's length, last id, first id, max deleted id and entries added; then the consumer
// groups, each with its pending entries list and consumers.
//
// A node's listpack starts with its master entry: count of live entries, count of deleted
// ones (0 here), the number of master fields, the fields of the node's first entry, and a 0.
// Each entry follows as: flags, ms and seq less the master id's, (unless the flags say it has
// the master's fields: the number of fields and each field before its value) the values, and
// the number of listpack elements the entry took before this one.

const (
	streamFlagSameFields = 1 << 1
	streamListpackMax    = 1 << 30
)

// streamNodeBuilder builds one node at a time.
type streamNodeBuilder struct {
	maxBytes, maxEntries int
	open                 bool
	master               StreamID
	masterFields         [][]byte // slices of fieldBuf
	fieldBuf             []byte
	masterFieldsBytes    int // their listpack entries' bytes
	count                int
	body                 listpackBuilder // the entries after the master entry
}

func (e *encoder) newStreamNodeBuilder() *streamNodeBuilder {
	maxBytes := e.opts.StreamNodeMaxBytes
	if maxBytes <= 0 || maxBytes > streamListpackMax {
		maxBytes = streamListpackMax
	}
	b := &streamNodeBuilder{maxBytes: maxBytes, maxEntries: max(e.opts.StreamNodeMaxEntries, 0)}
	b.body.Reset()
	return b
}

// size is the open node's listpack bytes.
func (b *streamNodeBuilder) size() int {
	return listpackHeaderSize + ListpackIntEntryBytes(int64(b.count)) + ListpackIntEntryBytes(0) +
		ListpackIntEntryBytes(int64(len(b.masterFields))) + b.masterFieldsBytes + ListpackIntEntryBytes(0) +
		len(b.body.buf) - listpackHeaderSize + 1
}

// startsNode says whether XADD would put an entry with these fields in a new node.
func (b *streamNodeBuilder) startsNode(fields [][]byte) bool {
	if !b.open {
		return true
	}
	total := 0
	for _, f := range fields {
		total += len(f)
	}
	if b.size()+total >= b.maxBytes {
		return true
	}
	return b.maxEntries != 0 && b.count >= b.maxEntries
}

// add appends an entry, starting a node first when start is set.
func (b *streamNodeBuilder) add(id StreamID, fields [][]byte, start bool) {
	n := len(fields) / 2
	if start {
		b.open, b.master, b.count = true, id, 0
		b.body.Reset()
		b.fieldBuf = b.fieldBuf[:0]
		b.masterFields = b.masterFields[:0]
		b.masterFieldsBytes = 0
		for i := 0; i < n; i++ {
			b.fieldBuf = append(b.fieldBuf, fields[2*i]...)
			b.masterFieldsBytes += ListpackEntryBytes(fields[2*i])
		}
		off := 0
		for i := 0; i < n; i++ {
			l := len(fields[2*i])
			b.masterFields = append(b.masterFields, b.fieldBuf[off:off+l:off+l])
			off += l
		}
	}
	same := n == len(b.masterFields)
	for i := 0; same && i < n; i++ {
		same = bytes.Equal(fields[2*i], b.masterFields[i])
	}
	flags := int64(0)
	if same {
		flags = streamFlagSameFields
	}
	b.body.AppendInt(flags)
	b.body.AppendInt(int64(id.Ms - b.master.Ms))
	b.body.AppendInt(int64(id.Seq - b.master.Seq))
	if !same {
		b.body.AppendInt(int64(n))
	}
	for i := 0; i < n; i++ {
		if !same {
			b.body.AppendString(fields[2*i])
		}
		b.body.AppendString(fields[2*i+1])
	}
	lpCount := int64(n + 3)
	if !same {
		lpCount += int64(n + 1)
	}
	b.body.AppendInt(lpCount)
	b.count++
}

// listpack is the open node's listpack, built into lp.
func (b *streamNodeBuilder) listpack(lp *listpackBuilder) []byte {
	lp.Reset()
	lp.AppendInt(int64(b.count))
	lp.AppendInt(0)
	lp.AppendInt(int64(len(b.masterFields)))
	for _, f := range b.masterFields {
		lp.AppendString(f)
	}
	lp.AppendInt(0)
	lp.buf = append(lp.buf, b.body.buf[listpackHeaderSize:]...)
	lp.count += b.body.count
	return lp.Bytes()
}

func streamIDKey(dst []byte, id StreamID) []byte {
	dst = binary.BigEndian.AppendUint64(dst, id.Ms)
	return binary.BigEndian.AppendUint64(dst, id.Seq)
}

var errStreamFields = errors.New("rdb: a stream entry's fields are not field, value pairs")

func (e *encoder) writeStream(src StreamSource) error {
	// First walk: how many nodes.
	nb := e.newStreamNodeBuilder()
	var nodes, entries int64
	err := src.Entries(func(id StreamID, fields [][]byte) error {
		if len(fields)%2 != 0 || len(fields) == 0 {
			return errStreamFields
		}
		start := nb.startsNode(fields)
		if start {
			nodes++
		}
		nb.add(id, fields, start)
		entries++
		return nil
	})
	if err != nil {
		return err
	}
	e.writeType(TypeStreamListpacks2)
	e.writeLen(uint64(nodes))

	// Second walk: each node when the next one starts.
	nb = e.newStreamNodeBuilder()
	var lp listpackBuilder
	var key [streamIDBytes]byte
	flush := func() {
		if nb.open {
			e.writeString(streamIDKey(key[:0], nb.master))
			e.writeString(nb.listpack(&lp))
		}
	}
	var seenNodes, seen int64
	err = src.Entries(func(id StreamID, fields [][]byte) error {
		if len(fields)%2 != 0 || len(fields) == 0 {
			return errStreamFields
		}
		start := nb.startsNode(fields)
		if start {
			flush()
			seenNodes++
		}
		nb.add(id, fields, start)
		seen++
		if seen > entries || seenNodes > nodes {
			return errSourceChanged
		}
		return e.s.err
	})
	if err != nil {
		return err
	}
	flush()
	if seen != entries || seenNodes != nodes {
		return errSourceChanged
	}

	m := src.Meta()
	e.writeLen(uint64(entries))
	for _, id := range []StreamID{m.LastID, m.FirstID, m.MaxDeletedID} {
		e.writeLen(id.Ms)
		e.writeLen(id.Seq)
	}
	e.writeLen(m.EntriesAdded)
	return e.writeStreamGroups(src)
}

// writeStreamGroups writes the groups. Their heads (and each group's consumers' heads) are
// collected first so that the source is never walked inside one of its own walks; pending
// entries lists, which may be long, are walked twice (count, then write).
func (e *encoder) writeStreamGroups(src StreamSource) error {
	type group struct {
		name        []byte
		lastID      StreamID
		entriesRead int64
	}
	var groups []group
	err := src.Groups(func(g StreamGroup) error {
		groups = append(groups, group{bytes.Clone(g.Name), g.LastID, g.EntriesRead})
		return nil
	})
	if err != nil {
		return err
	}
	e.writeLen(uint64(len(groups)))
	var idKey [streamIDBytes]byte
	for _, g := range groups {
		e.writeString(g.name)
		e.writeLen(g.lastID.Ms)
		e.writeLen(g.lastID.Seq)
		e.writeLen(uint64(g.entriesRead))

		var pending int64
		if err := src.GroupPending(g.name, func(StreamPending) error { pending++; return nil }); err != nil {
			return err
		}
		e.writeLen(uint64(pending))
		err := e.eachCounted(pending, func(count func() error) error {
			return src.GroupPending(g.name, func(p StreamPending) error {
				e.s.write(streamIDKey(idKey[:0], p.ID))
				e.writeMillis(p.DeliveryTime)
				e.writeLen(p.DeliveryCount)
				return count()
			})
		})
		if err != nil {
			return err
		}

		type consumer struct {
			name     []byte
			seenTime int64
		}
		var consumers []consumer
		err = src.Consumers(g.name, func(c StreamConsumer) error {
			consumers = append(consumers, consumer{bytes.Clone(c.Name), c.SeenTime})
			return nil
		})
		if err != nil {
			return err
		}
		e.writeLen(uint64(len(consumers)))
		for _, c := range consumers {
			e.writeString(c.name)
			e.writeMillis(c.seenTime)
			var ids int64
			if err := src.ConsumerPending(g.name, c.name, func(StreamID) error { ids++; return nil }); err != nil {
				return err
			}
			e.writeLen(uint64(ids))
			err := e.eachCounted(ids, func(count func() error) error {
				return src.ConsumerPending(g.name, c.name, func(id StreamID) error {
					e.s.write(streamIDKey(idKey[:0], id))
					return count()
				})
			})
			if err != nil {
				return err
			}
		}
	}
	return e.s.err
}
