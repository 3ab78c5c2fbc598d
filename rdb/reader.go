package rdb

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
)

var (
	// ErrVersion: a file of an RDB version this reader does not take (newer than Version).
	ErrVersion = errors.New("rdb: unsupported RDB format version")
	// ErrEmptyKey: a collection with no elements. Read skips such keys, as Redis 7.0 does when
	// it loads a file; in a DUMP payload (and from ReadValue) it is an error, which is also
	// ErrBadFormat, as Redis's RESTORE answers "Bad data format".
	ErrEmptyKey = fmt.Errorf("%w: empty key", ErrBadFormat)
)

// readChunk is how much of a string the reader allocates ahead of the bytes that arrive
// when it does not know how much input is left: a length prefix can claim anything.
const readChunk = 1 << 20

// Reader reads an RDB file (Read) or, through ReadPayload, a DUMP payload.
//
// What a Handler can rely on: every blob (listpack, ziplist, zipmap, intset, stream node)
// was validated whole before its key's BeginKey, with no field or member twice in it; a
// stream's entry ids ascend, its counts agree, and every pending entry belongs to exactly
// one consumer, though the error for a bad group may come after the group's calls. Key.Len
// is what the encoding claims before the elements arrive (checked against the bytes left
// in a payload, not in a file): size hints, not allocations. A field or member repeated
// across a value written element by element (LIST, SET, HASH, ZSET types) is not looked
// for here, as that would hold the value: Redis refuses it ("Bad data format"), and a
// Handler that stores the value sees the repeat and may return ErrBadFormat.
type Reader struct {
	br      *bufio.Reader
	off     int64
	crc     uint64
	sumCRC  bool
	left    int64 // bytes the input holds from off on when known (a payload); -1 if not
	version int
	payload bool // errors are a RESTORE's: truncation and modules are ErrBadFormat

	name, a, b, blob, lzf, tmp []byte // reused buffers: key name, two strings, one blob, LZF input, fill's
	num                        [2][]byte
	stream                     streamScratch
}

// NewReader reads from r. When r is a *bufio.Reader it is read directly and never past the
// RDB's last byte (the EOF opcode and, from version 5, the 8-byte checksum), so that what
// follows an RDB on a replication link stays in it; any other reader is buffered here.
func NewReader(r io.Reader) *Reader {
	br, ok := r.(*bufio.Reader)
	if !ok {
		br = bufio.NewReaderSize(r, 64<<10)
	}
	return &Reader{br: br, left: -1, version: Version}
}

// Offset is the number of bytes read so far.
func (r *Reader) Offset() int64 { return r.off }

// RDBVersion is the version of the file being read (Version until Read has read the header,
// or a payload's version in ReadPayload).
func (r *Reader) RDBVersion() int { return r.version }

// Read reads a whole RDB file: its header, every opcode and key, up to the EOF opcode and
// the checksum after it (version 5 on; a zero checksum was not computed and is not checked).
// Keys whose collection is empty are skipped. Key.ExpireAt is given as the file has it: an
// already expired key is the caller's to drop.
func (r *Reader) Read(h Handler) error {
	r.sumCRC, r.crc = true, 0
	hdr, err := r.fill(fileHeaderBytes)
	if err != nil {
		return err
	}
	if string(hdr[:len(fileMagic)]) != fileMagic {
		return fmt.Errorf("%w: not an RDB file (no REDIS signature)", ErrBadFormat)
	}
	ver := 0
	for _, c := range hdr[len(fileMagic):] {
		if c < '0' || c > '9' {
			return fmt.Errorf("%w: RDB version %q is not a number", ErrBadFormat, hdr[len(fileMagic):])
		}
		ver = ver*10 + int(c-'0')
	}
	if ver < 1 || ver > Version {
		return fmt.Errorf("%w: can't handle RDB format version %d (this reader takes 1 to %d)", ErrVersion, ver, Version)
	}
	r.version = ver

	k := Key{Idle: -1, Freq: -1}
	for {
		t, err := r.readByte()
		if err != nil {
			return err
		}
		switch t {
		case opcodeExpireTime:
			p, err := r.fill(4)
			if err != nil {
				return err
			}
			k.ExpireAt = int64(int32(binary.LittleEndian.Uint32(p))) * 1000
		case opcodeExpireTimeMs:
			p, err := r.fill(8)
			if err != nil {
				return err
			}
			k.ExpireAt = int64(binary.LittleEndian.Uint64(p))
		case opcodeFreq:
			c, err := r.readByte()
			if err != nil {
				return err
			}
			k.Freq = int(c)
		case opcodeIdle:
			n, err := r.readLen()
			if err != nil {
				return err
			}
			k.Idle = int64(min(n, math.MaxInt64))
		case opcodeEOF:
			return r.readChecksum()
		case opcodeSelectDB:
			n, err := r.readLen()
			if err != nil {
				return err
			}
			if n > math.MaxInt32 {
				return r.bad("database number %d", n)
			}
			k.DB = int(n)
			if err := h.SelectDB(k.DB); err != nil {
				return handlerErr(err)
			}
		case opcodeResizeDB:
			keys, err := r.readLen()
			if err != nil {
				return err
			}
			expires, err := r.readLen()
			if err != nil {
				return err
			}
			if err := h.ResizeDB(keys, expires); err != nil {
				return handlerErr(err)
			}
		case opcodeAux:
			if r.a, err = r.readString(r.a); err != nil {
				return err
			}
			if r.b, err = r.readString(r.b); err != nil {
				return err
			}
			if err := h.Aux(r.a, r.b); err != nil {
				return handlerErr(err)
			}
		case opcodeModuleAux:
			return fmt.Errorf("%w: module aux data at offset %d", ErrModule, r.off-1)
		case opcodeFunction2:
			if r.a, err = r.readString(r.a); err != nil {
				return err
			}
			if err := h.Function(r.a); err != nil {
				return handlerErr(err)
			}
		case opcodeFunction:
			code, err := r.readOldFunction()
			if err != nil {
				return err
			}
			if err := h.Function(code); err != nil {
				return handlerErr(err)
			}
		default:
			if r.name, err = r.readString(r.name); err != nil {
				return err
			}
			k.Name = r.name
			if err := r.ReadValue(t, k, h); err != nil && !errors.Is(err, ErrEmptyKey) {
				return err
			}
			k = Key{DB: k.DB, Idle: -1, Freq: -1}
			r.shrink()
		}
	}
}

// shrink drops buffers a big value grew, so that one big key does not keep its size
// allocated for the rest of the file.
func (r *Reader) shrink() {
	for _, b := range []*[]byte{&r.name, &r.a, &r.b, &r.blob, &r.lzf, &r.tmp, &r.stream.entry, &r.stream.master} {
		if cap(*b) > 4*readChunk {
			*b = nil
		}
	}
}

// readOldFunction reads a library as Redis 7.0's release candidates wrote it (name, engine,
// an optional description, code) and gives it the shebang FUNCTION LOAD takes, as Redis
// 7.0 does when it loads one.
func (r *Reader) readOldFunction() ([]byte, error) {
	var name, engine, code []byte
	var err error
	if name, err = r.readString(nil); err != nil {
		return nil, err
	}
	if engine, err = r.readString(nil); err != nil {
		return nil, err
	}
	hasDesc, err := r.readLen()
	if err != nil {
		return nil, err
	}
	if hasDesc != 0 { // the description, which the library code does not keep
		if r.b, err = r.readString(r.b); err != nil {
			return nil, err
		}
	}
	if code, err = r.readString(nil); err != nil {
		return nil, err
	}
	out := fmt.Appendf(nil, "#!%s name=%s\n", engine, name)
	return append(out, code...), nil
}

// readChecksum reads the 8 bytes after the EOF opcode (from version 5) and compares them
// with the CRC-64 of everything before them.
func (r *Reader) readChecksum() error {
	if r.version < 5 {
		return nil
	}
	want := r.crc
	r.sumCRC = false
	p, err := r.fill(8)
	if err != nil {
		return err
	}
	if got := binary.LittleEndian.Uint64(p); got != 0 && got != want {
		return fmt.Errorf("%w: the file says %#x, its bytes give %#x", ErrChecksum, got, want)
	}
	return nil
}

// ReadPayload reads a DUMP payload: one value, its RDB version and CRC-64. A payload too
// short, of a newer version or whose checksum differs is ErrBadPayload; anything else that
// is not a well-formed value (an empty collection included) is ErrBadFormat. The Handler
// gets BeginKey with Name nil, DB 0, ExpireAt 0, Idle and Freq -1, the elements, EndKey.
// Bytes between the value and the footer are ignored, as Redis ignores them.
func ReadPayload(payload []byte, h Handler) error {
	if len(payload) < payloadFooterBytes {
		return ErrBadPayload
	}
	footer := payload[len(payload)-payloadFooterBytes:]
	ver := int(binary.LittleEndian.Uint16(footer))
	if ver > Version || CRC64(0, payload[:len(payload)-8]) != binary.LittleEndian.Uint64(footer[2:]) {
		return ErrBadPayload
	}
	body := payload[:len(payload)-payloadFooterBytes]
	r := &Reader{br: bufio.NewReaderSize(bytes.NewReader(body), 4096), left: int64(len(body)),
		version: ver, payload: true}
	t, err := r.readByte()
	if err != nil {
		return err
	}
	if t > maxTypeRedis70Reads || t == 8 {
		return r.bad("unknown value type %d", t)
	}
	return r.ReadValue(t, Key{Idle: -1, Freq: -1}, h)
}

// ReadValue reads one value of type typ (the byte before a key in a file, the first byte
// of a payload) and hands it to h as key k, whose Kind and Len it fills in. An empty
// collection is ErrEmptyKey, and then h is not called.
func (r *Reader) ReadValue(typ byte, k Key, h Handler) error {
	switch typ {
	case TypeString:
		var err error
		if r.a, err = r.readString(r.a); err != nil {
			return err
		}
		k.Kind, k.Len = KindString, -1
		if err := h.BeginKey(k); err != nil {
			return handlerErr(err)
		}
		if err := h.String(r.a); err != nil {
			return handlerErr(err)
		}
		return handlerErr(h.EndKey())
	case TypeList, TypeSet, TypeZSet, TypeZSet2, TypeHash:
		return r.readCollection(typ, k, h)
	case TypeHashZipmap, TypeListZiplist, TypeSetIntset, TypeZSetZiplist, TypeHashZiplist,
		TypeHashListpack, TypeZSetListpack:
		return r.readBlobValue(typ, k, h)
	case TypeListQuicklist, TypeListQuicklist2:
		return r.readQuicklist(typ, k, h)
	case TypeStreamListpacks, TypeStreamListpacks2:
		return r.readStream(typ, k, h)
	case TypeModule, TypeModule2:
		if r.payload {
			return fmt.Errorf("%w: %w", ErrBadFormat, ErrModule)
		}
		return fmt.Errorf("%w: a module value at offset %d", ErrModule, r.off)
	}
	return r.bad("unknown value type %d", typ)
}

// readCollection reads the types that give their element count and then every element as
// a string (and a score for sorted sets).
func (r *Reader) readCollection(typ byte, k Key, h Handler) error {
	n, err := r.readLen()
	if err != nil {
		return err
	}
	if n == 0 {
		return ErrEmptyKey
	}
	minBytes := uint64(1) // what each element takes at the least
	switch typ {
	case TypeList:
		k.Kind = KindList
	case TypeSet:
		k.Kind = KindSet
	case TypeHash:
		k.Kind, minBytes = KindHash, 2
	default:
		k.Kind, minBytes = KindZSet, 2
	}
	if n > math.MaxInt64/minBytes || (r.left >= 0 && n*minBytes > uint64(r.left)) {
		return r.bad("%d elements claimed, %d bytes left", n, r.left)
	}
	k.Len = int64(n)
	if err := h.BeginKey(k); err != nil {
		return handlerErr(err)
	}
	for i := uint64(0); i < n; i++ {
		if r.a, err = r.readString(r.a); err != nil {
			return err
		}
		switch typ {
		case TypeList:
			err = h.ListElement(r.a)
		case TypeSet:
			err = h.SetMember(r.a)
		case TypeHash:
			if r.b, err = r.readString(r.b); err != nil {
				return err
			}
			err = h.HashField(r.a, r.b)
		default:
			score, rerr := r.readScore(typ)
			if rerr != nil {
				return rerr
			}
			err = h.ZSetMember(r.a, score)
		}
		if err != nil {
			return handlerErr(err)
		}
	}
	return handlerErr(h.EndKey())
}

// readScore reads a sorted set's score: binary (ZSET_2) or as text after a length byte,
// where 253, 254 and 255 stand for nan, +inf and -inf (ZSET). A NaN is refused, as Redis
// refuses it.
func (r *Reader) readScore(typ byte) (float64, error) {
	var f float64
	if typ == TypeZSet2 {
		p, err := r.fill(8)
		if err != nil {
			return 0, err
		}
		f = math.Float64frombits(binary.LittleEndian.Uint64(p))
	} else {
		n, err := r.readByte()
		if err != nil {
			return 0, err
		}
		switch n {
		case 253:
			f = math.NaN()
		case 254:
			f = math.Inf(1)
		case 255:
			f = math.Inf(-1)
		default:
			p, err := r.fill(int(n))
			if err != nil {
				return 0, err
			}
			if f, err = strconv.ParseFloat(string(p), 64); err != nil {
				return 0, r.bad("score %q is not a number", p)
			}
		}
	}
	if math.IsNaN(f) {
		return 0, r.bad("NaN score")
	}
	return f, nil
}

// readBlobValue reads the types held in one blob (listpack, ziplist, zipmap, intset): it
// validates the whole blob first, so the Handler gets nothing from a malformed one.
func (r *Reader) readBlobValue(typ byte, k Key, h Handler) error {
	var err error
	if r.blob, err = r.readString(r.blob); err != nil {
		return err
	}
	b := r.blob
	switch typ {
	case TypeSetIntset:
		width, count, err := checkIntset(b)
		if err != nil {
			return r.bad("intset integrity check failed")
		}
		k.Kind, k.Len = KindSet, int64(count)
		if err := h.BeginKey(k); err != nil {
			return handlerErr(err)
		}
		for i := 0; i < count; i++ {
			r.num[0] = strconv.AppendInt(r.num[0][:0], intsetAt(b, width, i), 10)
			if err := h.SetMember(r.num[0]); err != nil {
				return handlerErr(err)
			}
		}
		return handlerErr(h.EndKey())
	case TypeHashZipmap:
		n, err := checkZipmap(b)
		if err != nil {
			return r.bad("zipmap integrity check failed")
		}
		seen := make(map[string]struct{}, n)
		it := zipmapIter{b: b, pos: 1}
		for {
			f, _, ok, _ := it.next()
			if !ok {
				break
			}
			if _, dup := seen[string(f)]; dup {
				return r.bad("zipmap with a repeated field")
			}
			seen[string(f)] = struct{}{}
		}
		k.Kind, k.Len = KindHash, int64(n)
		if err := h.BeginKey(k); err != nil {
			return handlerErr(err)
		}
		it = zipmapIter{b: b, pos: 1}
		for {
			f, v, ok, _ := it.next()
			if !ok {
				break
			}
			if err := h.HashField(f, v); err != nil {
				return handlerErr(err)
			}
		}
		return handlerErr(h.EndKey())
	case TypeListZiplist:
		n, err := checkZiplist(b)
		if err != nil {
			return r.bad("list ziplist integrity check failed")
		}
		if n == 0 {
			return ErrEmptyKey
		}
		k.Kind, k.Len = KindList, int64(n)
		if err := h.BeginKey(k); err != nil {
			return handlerErr(err)
		}
		if err := r.emitList(b, false, h); err != nil {
			return err
		}
		return handlerErr(h.EndKey())
	}
	// The pair types: hash and sorted set, in a ziplist or a listpack.
	zl := typ == TypeZSetZiplist || typ == TypeHashZiplist
	var n int
	if zl {
		n, err = checkZiplist(b)
	} else {
		n, err = checkListpack(b)
	}
	if err != nil || n%2 != 0 {
		return r.bad("%s integrity check failed", blobName(zl))
	}
	if n == 0 {
		return ErrEmptyKey
	}
	zset := typ == TypeZSetZiplist || typ == TypeZSetListpack
	if err := r.checkPairs(b, zl, zset); err != nil {
		return err
	}
	k.Kind, k.Len = KindHash, int64(n/2)
	if zset {
		k.Kind = KindZSet
	}
	if err := h.BeginKey(k); err != nil {
		return handlerErr(err)
	}
	next := blobIter(b, zl)
	for {
		f, ok, _ := next()
		if !ok {
			break
		}
		v, _, _ := next()
		member := f.text(&r.num[0])
		if zset {
			score, _ := blobScore(v)
			err = h.ZSetMember(member, score)
		} else {
			err = h.HashField(member, v.text(&r.num[1]))
		}
		if err != nil {
			return handlerErr(err)
		}
	}
	return handlerErr(h.EndKey())
}

func blobName(ziplist bool) string {
	if ziplist {
		return "ziplist"
	}
	return "listpack"
}

// blobIter walks the elements of a validated ziplist or listpack.
func blobIter(b []byte, ziplist bool) func() (blobValue, bool, error) {
	if ziplist {
		it := newZiplistIter(b)
		return it.next
	}
	it := newListpackIter(b)
	return it.next
}

// checkPairs refuses a blob of pairs with a field (member) twice, or a sorted set's score
// that is not a number, as Redis's load does.
func (r *Reader) checkPairs(b []byte, ziplist, zset bool) error {
	seen := make(map[string]struct{})
	next := blobIter(b, ziplist)
	for {
		f, ok, _ := next()
		if !ok {
			return nil
		}
		v, _, _ := next()
		field := f.text(&r.num[0])
		if _, dup := seen[string(field)]; dup {
			return r.bad("%s with a repeated field", blobName(ziplist))
		}
		seen[string(field)] = struct{}{}
		if zset {
			if _, ok := blobScore(v); !ok {
				return r.bad("%s with a score that is not a number", blobName(ziplist))
			}
		}
	}
}

// blobScore is a sorted set's score as a listpack or ziplist holds it: an integer, or text.
func blobScore(v blobValue) (float64, bool) {
	if v.isInt {
		return float64(v.i), true
	}
	f, err := strconv.ParseFloat(string(v.s), 64)
	return f, err == nil && !math.IsNaN(f)
}

// emitList hands every element of a validated ziplist or listpack to h as a list element.
func (r *Reader) emitList(b []byte, listpack bool, h Handler) error {
	next := blobIter(b, !listpack)
	for {
		v, ok, _ := next()
		if !ok {
			return nil
		}
		if err := h.ListElement(v.text(&r.num[0])); err != nil {
			return handlerErr(err)
		}
	}
}

// readQuicklist reads a list as nodes: ziplists (QUICKLIST), or plain elements and
// listpacks (QUICKLIST_2). Empty nodes are skipped as Redis skips them; BeginKey waits for
// the first element, so a list with none is ErrEmptyKey before the Handler hears of it.
func (r *Reader) readQuicklist(typ byte, k Key, h Handler) error {
	nodes, err := r.readLen()
	if err != nil {
		return err
	}
	if nodes == 0 {
		return ErrEmptyKey
	}
	k.Kind, k.Len = KindList, -1
	begun := false
	for i := uint64(0); i < nodes; i++ {
		container := uint64(quicklistNodePacked)
		if typ == TypeListQuicklist2 {
			if container, err = r.readLen(); err != nil {
				return err
			}
			if container != quicklistNodePlain && container != quicklistNodePacked {
				return r.bad("quicklist node container %d", container)
			}
		}
		if r.blob, err = r.readString(r.blob); err != nil {
			return err
		}
		if len(r.blob) == 0 {
			return r.bad("empty quicklist node")
		}
		if container == quicklistNodePacked {
			var n int
			if typ == TypeListQuicklist2 {
				n, err = checkListpack(r.blob)
			} else {
				n, err = checkZiplist(r.blob)
			}
			if err != nil {
				return r.bad("quicklist node %s integrity check failed", blobName(typ == TypeListQuicklist))
			}
			if n == 0 {
				continue
			}
		}
		if !begun {
			if err := h.BeginKey(k); err != nil {
				return handlerErr(err)
			}
			begun = true
		}
		if container == quicklistNodePlain {
			if err := h.ListElement(r.blob); err != nil {
				return handlerErr(err)
			}
			continue
		}
		if err := r.emitList(r.blob, typ == TypeListQuicklist2, h); err != nil {
			return err
		}
	}
	if !begun {
		return ErrEmptyKey
	}
	return handlerErr(h.EndKey())
}

// handlerErr wraps an error a Handler returned (nil stays nil).
func handlerErr(err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("rdb: %w", err)
}

// bad is an ErrBadFormat saying what and where.
func (r *Reader) bad(format string, args ...any) error {
	return fmt.Errorf("%w: %s at offset %d", ErrBadFormat, fmt.Sprintf(format, args...), r.off)
}

// ioErr turns a read error into the reader's: the end of the input mid-value is
// ErrBadFormat (and io.ErrUnexpectedEOF); other errors pass through.
func (r *Reader) ioErr(err error) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return fmt.Errorf("%w: truncated at offset %d (%w)", ErrBadFormat, r.off, io.ErrUnexpectedEOF)
	}
	return fmt.Errorf("rdb: reading at offset %d: %w", r.off, err)
}

func (r *Reader) consumed(p []byte) {
	if r.sumCRC {
		r.crc = CRC64(r.crc, p)
	}
	r.off += int64(len(p))
	if r.left >= 0 {
		r.left -= int64(len(p))
	}
}

// fill reads n bytes and returns them; the slice is valid until the next read. Up to the
// bufio.Reader's size it reads in place; beyond, into a buffer of the Reader's own.
func (r *Reader) fill(n int) ([]byte, error) {
	if r.left >= 0 && int64(n) > r.left {
		return nil, r.ioErr(io.ErrUnexpectedEOF)
	}
	if n > r.br.Size() {
		var err error
		r.tmp, err = r.readRaw(r.tmp, uint64(n))
		return r.tmp, err
	}
	p, err := r.br.Peek(n)
	if err != nil {
		return nil, r.ioErr(err)
	}
	r.consumed(p)
	_, _ = r.br.Discard(n)
	return p, nil
}

func (r *Reader) readByte() (byte, error) {
	p, err := r.fill(1)
	if err != nil {
		return 0, err
	}
	return p[0], nil
}

// readLenOrEncoding reads a length, or (encoded true) the number of a special string encoding.
func (r *Reader) readLenOrEncoding() (n uint64, encoded bool, err error) {
	c, err := r.readByte()
	if err != nil {
		return 0, false, err
	}
	switch c >> 6 {
	case lenEncoded6Bit:
		return uint64(c & 0x3f), false, nil
	case lenEncoded14Bit:
		d, err := r.readByte()
		if err != nil {
			return 0, false, err
		}
		return uint64(c&0x3f)<<8 | uint64(d), false, nil
	case lenEncodedSpecial:
		return uint64(c & 0x3f), true, nil
	}
	switch c {
	case lenEncoded32Bit:
		p, err := r.fill(4)
		if err != nil {
			return 0, false, err
		}
		return uint64(binary.BigEndian.Uint32(p)), false, nil
	case lenEncoded64Bit:
		p, err := r.fill(8)
		if err != nil {
			return 0, false, err
		}
		return binary.BigEndian.Uint64(p), false, nil
	}
	return 0, false, r.bad("unknown length encoding %#x", c)
}

func (r *Reader) readLen() (uint64, error) {
	n, encoded, err := r.readLenOrEncoding()
	if err == nil && encoded {
		return 0, r.bad("a string encoding where a length belongs")
	}
	return n, err
}

// readString reads a string in any of its encodings into dst (reused) and returns it:
// integers come out as decimal text, LZF decompressed.
func (r *Reader) readString(dst []byte) ([]byte, error) {
	n, encoded, err := r.readLenOrEncoding()
	if err != nil {
		return dst[:0], err
	}
	if !encoded {
		return r.readRaw(dst, n)
	}
	switch n {
	case specialInt8, specialInt16, specialInt32:
		w := 1 << n
		p, err := r.fill(w)
		if err != nil {
			return dst[:0], err
		}
		var v int64
		switch w {
		case 1:
			v = int64(int8(p[0]))
		case 2:
			v = int64(int16(binary.LittleEndian.Uint16(p)))
		default:
			v = int64(int32(binary.LittleEndian.Uint32(p)))
		}
		return strconv.AppendInt(dst[:0], v, 10), nil
	case specialLZF:
		clen, err := r.readLen()
		if err != nil {
			return dst[:0], err
		}
		ulen, err := r.readLen()
		if err != nil {
			return dst[:0], err
		}
		if clen == 0 || ulen == 0 || clen > math.MaxInt64/lzfMaxRatio || ulen > clen*lzfMaxRatio {
			return dst[:0], r.bad("LZF string of %d bytes claims %d", clen, ulen)
		}
		if r.lzf, err = r.readRaw(r.lzf, clen); err != nil {
			return dst[:0], err
		}
		dst = slices.Grow(dst[:0], int(ulen))[:ulen]
		if lzfDecompress(dst, r.lzf) != nil {
			return dst[:0], r.bad("invalid LZF compressed string")
		}
		return dst, nil
	}
	return dst[:0], r.bad("unknown string encoding %d", n)
}

// readRaw reads n bytes into dst (reused). When the input's size is not known it grows dst
// as the bytes arrive, so a length prefix that lies costs at most a chunk.
func (r *Reader) readRaw(dst []byte, n uint64) ([]byte, error) {
	dst = dst[:0]
	if r.left >= 0 && n > uint64(r.left) || n > math.MaxInt {
		return dst, r.ioErr(io.ErrUnexpectedEOF)
	}
	for uint64(len(dst)) < n {
		k := int(n) - len(dst)
		if r.left < 0 {
			k = min(k, max(readChunk, len(dst)))
		}
		have := len(dst)
		dst = slices.Grow(dst, k)[:have+k]
		if _, err := io.ReadFull(r.br, dst[have:]); err != nil {
			return dst[:0], r.ioErr(err)
		}
		r.consumed(dst[have:])
	}
	return dst, nil
}
