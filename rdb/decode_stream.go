package rdb

import (
	"encoding/binary"
	"math"
	"sort"
	"strconv"
)

// A stream (t_stream.c): its nodes, each a 16-byte key (the node's master id, big endian)
// and a listpack; then its length, last id, [v2: first id, max deleted id, entries added],
// and its consumer groups: name, last id, [v2: entries read], the pending entries (raw
// 16-byte id, delivery time, delivery count) and the consumers (name, seen time, the ids of
// their pending entries).
//
// A node's listpack starts with a master entry: valid count, deleted count, the master
// field count, the master fields, 0. Then every entry: flags, ms and seq differences from
// the master id, [when the fields are not the master's: the field count, then field and
// value by turn | else the values], and the entry's element count before it ("lp-count").

const (
	streamItemDeleted    = 1
	streamItemSameFields = 2
)

func (a StreamID) less(b StreamID) bool { return a.Ms < b.Ms || a.Ms == b.Ms && a.Seq < b.Seq }

// streamScratch is the buffers a stream's reading reuses.
type streamScratch struct {
	master, entry []byte   // text of the master fields, of one entry's fields and values
	masterSpans   [][2]int // spans in master
	spans         [][2]int // spans in entry (or in master, for the same-fields entries' fields)
	fields        [][]byte
	pel           []StreamPending
	owned         []bool
}

// streamState follows the entries across the nodes of a stream.
type streamState struct {
	last    StreamID
	entries uint64
}

func (r *Reader) readStream(typ byte, k Key, h Handler) error {
	nodes, err := r.readLen()
	if err != nil {
		return err
	}
	k.Kind, k.Len = KindStream, -1
	if err := h.BeginKey(k); err != nil {
		return handlerErr(err)
	}
	var st streamState
	var prevNode StreamID
	for i := uint64(0); i < nodes; i++ {
		if r.a, err = r.readString(r.a); err != nil {
			return err
		}
		if len(r.a) != streamIDBytes {
			return r.bad("stream node key of %d bytes", len(r.a))
		}
		master := StreamID{binary.BigEndian.Uint64(r.a), binary.BigEndian.Uint64(r.a[8:])}
		if i > 0 && !prevNode.less(master) {
			return r.bad("stream node keys out of order")
		}
		prevNode = master
		if r.blob, err = r.readString(r.blob); err != nil {
			return err
		}
		if err := r.streamNode(master, r.blob, &st, h); err != nil {
			return err
		}
	}

	var m StreamMeta
	v2 := typ == TypeStreamListpacks2
	fields := []*uint64{&m.Length, &m.LastID.Ms, &m.LastID.Seq}
	if v2 {
		fields = append(fields, &m.FirstID.Ms, &m.FirstID.Seq, &m.MaxDeletedID.Ms, &m.MaxDeletedID.Seq, &m.EntriesAdded)
	}
	for _, f := range fields {
		if *f, err = r.readLen(); err != nil {
			return err
		}
	}
	if m.Length != st.entries {
		return r.bad("stream length %d, %d entries", m.Length, st.entries)
	}
	if st.entries > 0 && m.LastID.less(st.last) {
		return r.bad("stream last id below its last entry's")
	}
	if err := h.StreamMeta(m); err != nil {
		return handlerErr(err)
	}

	groups, err := r.readLen()
	if err != nil {
		return err
	}
	names := make(map[string]struct{})
	for i := uint64(0); i < groups; i++ {
		if r.a, err = r.readString(r.a); err != nil {
			return err
		}
		if _, dup := names[string(r.a)]; dup {
			return r.bad("consumer group %q twice", r.a)
		}
		names[string(r.a)] = struct{}{}
		if err := r.streamGroup(v2, h); err != nil {
			return err
		}
	}
	return handlerErr(h.EndKey())
}

// streamGroup reads a group whose name is in r.a: the group's pending entries are held
// (they are checked against its consumers'), then handed over with the group.
func (r *Reader) streamGroup(v2 bool, h Handler) error {
	g := StreamGroup{Name: r.a, EntriesRead: -1}
	var err error
	if g.LastID.Ms, err = r.readLen(); err != nil {
		return err
	}
	if g.LastID.Seq, err = r.readLen(); err != nil {
		return err
	}
	if v2 {
		n, err := r.readLen()
		if err != nil {
			return err
		}
		g.EntriesRead = int64(n) // Redis writes -1 (unknown) as the 64-bit length 2^64-1
	}
	n, err := r.readLen()
	if err != nil {
		return err
	}
	sc := &r.stream
	sc.pel = sc.pel[:0]
	for i := uint64(0); i < n; i++ {
		p, err := r.fill(streamIDBytes)
		if err != nil {
			return err
		}
		pe := StreamPending{ID: StreamID{binary.BigEndian.Uint64(p), binary.BigEndian.Uint64(p[8:])}}
		if len(sc.pel) > 0 && !sc.pel[len(sc.pel)-1].ID.less(pe.ID) {
			return r.bad("consumer group pending entries out of order")
		}
		if p, err = r.fill(8); err != nil {
			return err
		}
		pe.DeliveryTime = int64(binary.LittleEndian.Uint64(p))
		if pe.DeliveryCount, err = r.readLen(); err != nil {
			return err
		}
		sc.pel = append(sc.pel, pe)
	}
	consumers, err := r.readLen()
	if err != nil {
		return err
	}
	if consumers > math.MaxInt64 || r.left >= 0 && consumers > uint64(r.left) {
		return r.bad("%d consumers claimed", consumers)
	}
	g.Pending, g.Consumers = int64(len(sc.pel)), int64(consumers)
	if err := h.StreamGroup(g); err != nil {
		return handlerErr(err)
	}
	for _, pe := range sc.pel {
		if err := h.StreamGroupPending(pe); err != nil {
			return handlerErr(err)
		}
	}
	sc.owned = append(sc.owned[:0], make([]bool, len(sc.pel))...)
	names := make(map[string]struct{})
	for i := uint64(0); i < consumers; i++ {
		if r.b, err = r.readString(r.b); err != nil {
			return err
		}
		if _, dup := names[string(r.b)]; dup {
			return r.bad("consumer %q twice in a group", r.b)
		}
		names[string(r.b)] = struct{}{}
		c := StreamConsumer{Name: r.b}
		p, err := r.fill(8)
		if err != nil {
			return err
		}
		c.SeenTime = int64(binary.LittleEndian.Uint64(p))
		n, err := r.readLen()
		if err != nil {
			return err
		}
		if n > uint64(len(sc.pel)) {
			return r.bad("consumer with more pending entries than its group")
		}
		c.Pending = int64(n)
		if err := h.StreamConsumer(c); err != nil {
			return handlerErr(err)
		}
		var prev StreamID
		for j := uint64(0); j < n; j++ {
			p, err := r.fill(streamIDBytes)
			if err != nil {
				return err
			}
			id := StreamID{binary.BigEndian.Uint64(p), binary.BigEndian.Uint64(p[8:])}
			if j > 0 && !prev.less(id) {
				return r.bad("consumer pending entries out of order")
			}
			prev = id
			at := sort.Search(len(sc.pel), func(i int) bool { return !sc.pel[i].ID.less(id) })
			if at == len(sc.pel) || sc.pel[at].ID != id {
				return r.bad("consumer entry not found in the group's pending entries")
			}
			if sc.owned[at] {
				return r.bad("a pending entry of two consumers")
			}
			sc.owned[at] = true
			if err := h.StreamConsumerPending(id); err != nil {
				return handlerErr(err)
			}
		}
	}
	for _, owned := range sc.owned {
		if !owned {
			return r.bad("a pending entry without a consumer")
		}
	}
	return nil
}

// streamNode validates one node's listpack as Redis's deep sanitization does (and that its
// entries' ids ascend, and its counts are right) and hands its live entries to h.
func (r *Reader) streamNode(master StreamID, lp []byte, st *streamState, h Handler) error {
	if _, err := checkListpack(lp); err != nil {
		return r.bad("stream listpack integrity check failed")
	}
	bad := func() error { return r.bad("stream node listpack malformed") }
	it := newListpackIter(lp)
	next := func() (blobValue, error) {
		v, ok, err := it.next()
		if err != nil || !ok {
			return v, bad()
		}
		return v, nil
	}
	integer := func() (int64, error) {
		v, err := next()
		if err != nil {
			return 0, err
		}
		n, ok := v.integer()
		if !ok {
			return 0, bad()
		}
		return n, nil
	}
	sc := &r.stream
	// appendText copies an element's text to buf and records its span.
	appendText := func(buf []byte, spans [][2]int) ([]byte, [][2]int, error) {
		v, err := next()
		if err != nil {
			return buf, spans, err
		}
		start := len(buf)
		if v.isInt {
			buf = appendIntText(buf, v.i)
		} else {
			buf = append(buf, v.s...)
		}
		return buf, append(spans, [2]int{start, len(buf)}), nil
	}

	var hdr [3]int64 // valid entries, deleted entries, master fields
	for i := range hdr {
		n, err := integer()
		if err != nil {
			return err
		}
		if n < 0 || n > int64(len(lp)) { // every one is an element of at least 2 bytes
			return bad()
		}
		hdr[i] = n
	}
	var err error
	sc.master, sc.masterSpans = sc.master[:0], sc.masterSpans[:0]
	for i := int64(0); i < hdr[2]; i++ {
		if sc.master, sc.masterSpans, err = appendText(sc.master, sc.masterSpans); err != nil {
			return err
		}
	}
	if zero, err := integer(); err != nil || zero != 0 {
		return bad()
	}
	live := int64(0)
	for e := int64(0); e < hdr[0]+hdr[1]; e++ {
		flags, err := integer()
		if err != nil {
			return err
		}
		msDiff, err := integer()
		if err != nil {
			return err
		}
		seqDiff, err := integer()
		if err != nil {
			return err
		}
		id := StreamID{master.Ms + uint64(msDiff), master.Seq + uint64(seqDiff)}
		sc.entry, sc.spans = sc.entry[:0], sc.spans[:0]
		var want int64
		if flags&streamItemSameFields != 0 {
			for i := int64(0); i < hdr[2]; i++ {
				if sc.entry, sc.spans, err = appendText(sc.entry, sc.spans); err != nil {
					return err
				}
			}
			want = hdr[2] + 3
		} else {
			nf, err := integer()
			if err != nil {
				return err
			}
			if nf < 0 || nf > int64(len(lp)) {
				return bad()
			}
			for i := int64(0); i < 2*nf; i++ {
				if sc.entry, sc.spans, err = appendText(sc.entry, sc.spans); err != nil {
					return err
				}
			}
			want = 2*nf + 4
		}
		if lpCount, err := integer(); err != nil || lpCount != want {
			return bad()
		}
		if flags&streamItemDeleted != 0 {
			continue
		}
		live++
		if st.entries > 0 && !st.last.less(id) || id.less(master) {
			return r.bad("stream entry ids out of order")
		}
		st.last = id
		st.entries++
		sc.fields = sc.fields[:0]
		if flags&streamItemSameFields != 0 {
			for i, s := range sc.spans {
				m := sc.masterSpans[i]
				sc.fields = append(sc.fields, sc.master[m[0]:m[1]], sc.entry[s[0]:s[1]])
			}
		} else {
			for _, s := range sc.spans {
				sc.fields = append(sc.fields, sc.entry[s[0]:s[1]])
			}
		}
		if err := h.StreamEntry(id, sc.fields); err != nil {
			return handlerErr(err)
		}
	}
	if live != hdr[0] {
		return r.bad("stream node counts %d entries, holds %d", hdr[0], live)
	}
	if _, ok, _ := it.next(); ok {
		return bad()
	}
	return nil
}

func appendIntText(buf []byte, v int64) []byte { return strconv.AppendInt(buf, v, 10) }
