package codec

import (
	"encoding/binary"
	"math"
	"strconv"
)

// Streams on disk (docs/ENCODING.md, "Streams"). A stream is a collection: its meta carries
// the usual version and count (the number of entries) followed by the stream part
// (StreamMeta), and every piece of it is a data key under its version, told apart by the
// element's first byte:
//
//	StreamEntry    'e' · id (16)                                   -> entry (AppendStreamFields)
//	StreamGroup    'g' · group name                                -> group record
//	StreamConsumer 'c' · len(group) (4) · group · consumer name     -> consumer record
//	StreamPending  'p' · len(group) (4) · group · id (16)           -> pending entry (NACK)
//	StreamOwned    'q' · len(group) (4) · group · len(consumer) (4) · consumer · id (16) -> empty
//	StreamNode     'n' · master id (16)                            -> node record (see datatype)
//
// Entries sort by id, so a range read is one seek; groups and, within a group, consumers sort
// by name, the order in which Redis lists them; a group's pending entries sort by id, and so
// do each consumer's (the 'q' index, which XPENDING … consumer and XINFO CONSUMERS walk).
const (
	StreamEntry    byte = 'e'
	StreamGroup    byte = 'g'
	StreamConsumer byte = 'c'
	StreamPending  byte = 'p'
	StreamOwned    byte = 'q'
	// StreamNode is a record of the radix-tree node (listpack) Redis would keep the entries
	// from its master id on in: what `~` trimming removes depends on that layout.
	StreamNode byte = 'n'
)

// StreamID is a stream entry id, <ms>-<seq>.
type StreamID struct{ Ms, Seq uint64 }

// Predefined ids.
var (
	MinStreamID = StreamID{}
	MaxStreamID = StreamID{math.MaxUint64, math.MaxUint64}
)

// StreamIDLen is the length of an encoded id.
const StreamIDLen = 16

// Compare returns -1, 0 or +1 as id is below, equal to or above o.
func (id StreamID) Compare(o StreamID) int {
	switch {
	case id.Ms < o.Ms:
		return -1
	case id.Ms > o.Ms:
		return 1
	case id.Seq < o.Seq:
		return -1
	case id.Seq > o.Seq:
		return 1
	}
	return 0
}

// IsZero reports whether id is 0-0.
func (id StreamID) IsZero() bool { return id.Ms == 0 && id.Seq == 0 }

// Next returns the id right after id and false when id is the largest there is.
func (id StreamID) Next() (StreamID, bool) {
	switch {
	case id.Seq < math.MaxUint64:
		return StreamID{id.Ms, id.Seq + 1}, true
	case id.Ms < math.MaxUint64:
		return StreamID{id.Ms + 1, 0}, true
	}
	return id, false
}

// Prev returns the id right before id and false when id is 0-0.
func (id StreamID) Prev() (StreamID, bool) {
	switch {
	case id.Seq > 0:
		return StreamID{id.Ms, id.Seq - 1}, true
	case id.Ms > 0:
		return StreamID{id.Ms - 1, math.MaxUint64}, true
	}
	return id, false
}

// AppendText appends id as Redis prints it: <ms>-<seq>.
func (id StreamID) AppendText(b []byte) []byte {
	b = strconv.AppendUint(b, id.Ms, 10)
	b = append(b, '-')
	return strconv.AppendUint(b, id.Seq, 10)
}

// String returns id as Redis prints it.
func (id StreamID) String() string { return string(id.AppendText(nil)) }

// AppendStreamID appends the 16-byte big-endian encoding of id, which sorts as ids do.
func AppendStreamID(b []byte, id StreamID) []byte {
	b = binary.BigEndian.AppendUint64(b, id.Ms)
	return binary.BigEndian.AppendUint64(b, id.Seq)
}

// DecodeStreamID decodes the first 16 bytes of b (which must hold them).
func DecodeStreamID(b []byte) StreamID {
	return StreamID{binary.BigEndian.Uint64(b), binary.BigEndian.Uint64(b[8:16])}
}

// ParseStreamID parses the text of an id as Redis's streamParseID does: "<ms>" or
// "<ms>-<seq>", both unsigned 64-bit decimals. A missing sequence is missingSeq. With strict,
// "<ms>-*" is accepted too and reported by seqGiven false (for XADD); otherwise seqGiven is
// always true. "-" and "+" are left to the caller, whose meaning of them differs by command.
func ParseStreamID(b []byte, missingSeq uint64, strict bool) (id StreamID, seqGiven, ok bool) {
	if len(b) > 127 || len(b) == 0 {
		return id, false, false
	}
	dash := -1
	for i, c := range b {
		if c == '-' {
			dash = i
			break
		}
	}
	if dash < 0 {
		ms, ok := parseUint64(b)
		return StreamID{ms, missingSeq}, true, ok
	}
	ms, ok := parseUint64(b[:dash])
	if !ok {
		return id, false, false
	}
	rest := b[dash+1:]
	if strict && len(rest) == 1 && rest[0] == '*' {
		return StreamID{Ms: ms}, false, true
	}
	seq, ok := parseUint64(rest)
	return StreamID{ms, seq}, true, ok
}

// parseUint64 parses a decimal as Redis's string2ull: a canonical signed 64-bit integer
// (string2ll) that is not negative, or else what strtoull accepts whole: leading white space,
// an optional sign (a minus negates modulo 2^64), at least one digit, no overflow.
func parseUint64(b []byte) (uint64, bool) {
	if v, ok := ParseInt(b); ok {
		return uint64(v), v >= 0
	}
	i := 0
	for i < len(b) && (b[i] == ' ' || b[i] >= '\t' && b[i] <= '\r') {
		i++
	}
	neg := false
	if i < len(b) && (b[i] == '+' || b[i] == '-') {
		neg = b[i] == '-'
		i++
	}
	if i == len(b) {
		return 0, false
	}
	var v uint64
	for ; i < len(b); i++ {
		c := b[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		d := uint64(c - '0')
		if v > (math.MaxUint64-d)/10 {
			return 0, false
		}
		v = v*10 + d
	}
	if neg {
		v = -v
	}
	return v, true
}

// StreamMeta is the stream part of a stream's meta value, after version and count:
// last id (16) · max deleted id (16) · entries added (8) · first id (16) · groups (8) ·
// nodes (8) · tail node (16) · tail live (8) · tail deleted (8) · tail bytes (8) · tail last
// (16) · tail fields (8) · tail fields hash (8).
type StreamMeta struct {
	LastID       StreamID // the largest id ever added (XADD, XSETID), 0-0 for a new stream
	MaxDeletedID StreamID // the largest id deleted by XDEL or trimming (XSETID MAXDELETEDID)
	EntriesAdded uint64   // entries ever added (XSETID ENTRIESADDED)
	FirstID      StreamID // the first entry's id, 0-0 when empty (Redis's recorded first id)
	Groups       uint64   // number of consumer groups
	Nodes        uint64   // number of node records (StreamNode), Redis's radix-tree keys
	TailNode     StreamID // the master id of the last node, when Nodes > 0
	// The last node's counters, kept here rather than in its record so that XADD, which
	// changes them, writes no record: its live and deleted entries, its size as Redis's
	// listpack, the id of the last entry put in it, and its master entry's number of fields
	// and their hash (StreamFieldsHash), which tell whether an entry has the same fields.
	TailLive, TailDeleted, TailBytes uint64
	TailLast                         StreamID
	TailFields, TailFieldsHash       uint64
}

// StreamMetaLen is the length of an encoded StreamMeta.
const StreamMetaLen = 144

// AppendStreamMeta appends the encoding of s (StreamMetaLen bytes).
func AppendStreamMeta(b []byte, s *StreamMeta) []byte {
	b = AppendStreamID(b, s.LastID)
	b = AppendStreamID(b, s.MaxDeletedID)
	b = binary.BigEndian.AppendUint64(b, s.EntriesAdded)
	b = AppendStreamID(b, s.FirstID)
	b = binary.BigEndian.AppendUint64(b, s.Groups)
	b = binary.BigEndian.AppendUint64(b, s.Nodes)
	b = AppendStreamID(b, s.TailNode)
	b = binary.BigEndian.AppendUint64(b, s.TailLive)
	b = binary.BigEndian.AppendUint64(b, s.TailDeleted)
	b = binary.BigEndian.AppendUint64(b, s.TailBytes)
	b = AppendStreamID(b, s.TailLast)
	b = binary.BigEndian.AppendUint64(b, s.TailFields)
	return binary.BigEndian.AppendUint64(b, s.TailFieldsHash)
}

// StreamFieldsHash hashes the field names of fv (field, value, field, value…): FNV-1a 64 of
// each name's uvarint length and bytes.
func StreamFieldsHash(fv [][]byte) uint64 {
	h := uint64(14695981039346656037)
	var lb [binary.MaxVarintLen64]byte
	mix := func(p []byte) {
		for _, c := range p {
			h ^= uint64(c)
			h *= 1099511628211
		}
	}
	for i := 0; i < len(fv); i += 2 {
		mix(lb[:binary.PutUvarint(lb[:], uint64(len(fv[i])))])
		mix(fv[i])
	}
	return h
}

// DecodeStreamMeta decodes a stream meta's Value into s.
func DecodeStreamMeta(v []byte, s *StreamMeta) error {
	if len(v) != StreamMetaLen {
		return ErrCorruptMeta
	}
	s.LastID = DecodeStreamID(v[0:16])
	s.MaxDeletedID = DecodeStreamID(v[16:32])
	s.EntriesAdded = binary.BigEndian.Uint64(v[32:40])
	s.FirstID = DecodeStreamID(v[40:56])
	s.Groups = binary.BigEndian.Uint64(v[56:64])
	s.Nodes = binary.BigEndian.Uint64(v[64:72])
	s.TailNode = DecodeStreamID(v[72:88])
	s.TailLive = binary.BigEndian.Uint64(v[88:96])
	s.TailDeleted = binary.BigEndian.Uint64(v[96:104])
	s.TailBytes = binary.BigEndian.Uint64(v[104:112])
	s.TailLast = DecodeStreamID(v[112:128])
	s.TailFields = binary.BigEndian.Uint64(v[128:136])
	s.TailFieldsHash = binary.BigEndian.Uint64(v[136:144])
	return nil
}

// AppendStreamFields appends the value of an entry with field/value pairs fv (field, value,
// field, value…): uvarint(number of pairs) then, for each of the 2n strings, uvarint(length)
// and the bytes.
func AppendStreamFields(b []byte, fv [][]byte) []byte {
	b = binary.AppendUvarint(b, uint64(len(fv)/2))
	for _, s := range fv {
		b = binary.AppendUvarint(b, uint64(len(s)))
		b = append(b, s...)
	}
	return b
}

// StreamFields iterates the field/value pairs of an entry value. Field and Value alias it.
type StreamFields struct {
	rest         []byte
	left         uint64
	Field, Value []byte
}

// NewStreamFields starts iterating entry value v; Len gives the number of pairs.
func NewStreamFields(v []byte) (StreamFields, error) {
	n, k := binary.Uvarint(v)
	if k <= 0 || n > uint64(len(v)) {
		return StreamFields{}, ErrCorruptMeta
	}
	return StreamFields{rest: v[k:], left: n}, nil
}

// Len returns the number of pairs not yet read.
func (f *StreamFields) Len() int { return int(f.left) }

// Next reads the next pair into Field and Value and reports whether there was one.
func (f *StreamFields) Next() bool {
	if f.left == 0 {
		return false
	}
	var ok bool
	if f.Field, ok = f.str(); !ok {
		return false
	}
	if f.Value, ok = f.str(); !ok {
		return false
	}
	f.left--
	return true
}

func (f *StreamFields) str() ([]byte, bool) {
	n, k := binary.Uvarint(f.rest)
	if k <= 0 || n > uint64(len(f.rest)-k) {
		f.left = 0
		return nil, false
	}
	s := f.rest[k : k+int(n)]
	f.rest = f.rest[k+int(n):]
	return s, true
}
