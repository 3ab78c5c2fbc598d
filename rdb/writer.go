package rdb

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"sync"
)

// Options is the configuration that decides how Redis encodes a value: the thresholds
// between its compact and its general encodings, and the file's compression and checksum.
// DefaultOptions gives Redis 7.0's defaults; the zero Options is a legal but unusual
// configuration (no compact encodings, no compression, no checksum).
type Options struct {
	HashMaxListpackEntries int // hash-max-listpack-entries
	HashMaxListpackValue   int // hash-max-listpack-value
	ZSetMaxListpackEntries int // zset-max-listpack-entries
	ZSetMaxListpackValue   int // zset-max-listpack-value
	SetMaxIntsetEntries    int // set-max-intset-entries
	ListMaxListpackSize    int // list-max-listpack-size: < 0 a node's size class, > 0 its entries
	ListCompressDepth      int // list-compress-depth
	// ListPackedThreshold: a list element of at least this many bytes is a node of its own
	// (a plain node); Redis's is 1 GiB (DEBUG QUICKLIST-PACKED-THRESHOLD). 0 means 1 GiB.
	ListPackedThreshold  int64
	StreamNodeMaxBytes   int  // stream-node-max-bytes
	StreamNodeMaxEntries int  // stream-node-max-entries
	Compression          bool // rdbcompression: LZF for strings over 20 bytes
	Checksum             bool // rdbchecksum: a file's CRC-64 (zeros when off); payloads always have one
}

// DefaultOptions is Redis 7.0's default configuration: its built-in defaults (config.c),
// which for hash-max-listpack-entries is 512, not the 128 of the redis.conf it ships.
func DefaultOptions() Options {
	return Options{
		HashMaxListpackEntries: 512,
		HashMaxListpackValue:   64,
		ZSetMaxListpackEntries: 128,
		ZSetMaxListpackValue:   64,
		SetMaxIntsetEntries:    512,
		ListMaxListpackSize:    -2,
		ListCompressDepth:      0,
		ListPackedThreshold:    1 << 30,
		StreamNodeMaxBytes:     4096,
		StreamNodeMaxEntries:   100,
		Compression:            true,
		Checksum:               true,
	}
}

// RedisVersion is the redis-ver a file says it was written by: the version shardis answers as.
const RedisVersion = "7.0.15"

// errSourceChanged: a source yielded another number of elements on its second walk.
var errSourceChanged = errors.New("rdb: source changed between walks")

// sink counts, checksums and (unless it only counts) writes the bytes. The first write error
// sticks: later writes do nothing and it is returned at the end.
type sink struct {
	out io.Writer // nil when only counting
	n   int64
	crc uint64
	sum bool
	err error
	one [1]byte // writeByte's buffer: a local would escape through the io.Writer
}

func (s *sink) write(p []byte) {
	if s.err != nil {
		return
	}
	s.n += int64(len(p))
	if s.sum {
		s.crc = CRC64(s.crc, p)
	}
	if s.out != nil {
		_, s.err = s.out.Write(p)
	}
}

func (s *sink) writeByte(b byte) {
	s.one[0] = b
	s.write(s.one[:])
}

// encoder writes values in Redis's encodings into a sink.
type encoder struct {
	s       *sink
	opts    Options
	lzf     *lzfCompressor // allocated at the first compression
	lzfOut  []byte
	lp      listpackBuilder
	scratch [16]byte
	name    []byte // a key's name, written after its type byte when hasName
	hasName bool
}

// writeType writes a value's type byte, and the key's name after it in a file.
func (e *encoder) writeType(t byte) {
	e.s.writeByte(t)
	if e.hasName {
		e.writeString(e.name)
		e.hasName = false
	}
}

func newEncoder(s *sink, opts Options) *encoder {
	if opts.ListPackedThreshold <= 0 {
		opts.ListPackedThreshold = 1 << 30
	}
	return &encoder{s: s, opts: opts}
}

// writeLen is rdbSaveLen: 6 bits, 14 bits, or a marker byte and 32 or 64 bits big endian.
func (e *encoder) writeLen(n uint64) {
	b := e.scratch[:0]
	switch {
	case n < 1<<6:
		b = append(b, byte(n))
	case n < 1<<14:
		b = append(b, byte(n>>8)|lenEncoded14Bit<<6, byte(n))
	case n <= math.MaxUint32:
		b = append(b, lenEncoded32Bit)
		b = binary.BigEndian.AppendUint32(b, uint32(n))
	default:
		b = append(b, lenEncoded64Bit)
		b = binary.BigEndian.AppendUint64(b, n)
	}
	e.s.write(b)
}

// writeMillis is rdbSaveMillisecondTime: 8 bytes little endian.
func (e *encoder) writeMillis(ms int64) {
	e.s.write(binary.LittleEndian.AppendUint64(e.scratch[:0], uint64(ms)))
}

// writeBinaryDouble is rdbSaveBinaryDoubleValue: the IEEE 754 bits, little endian.
func (e *encoder) writeBinaryDouble(f float64) {
	e.s.write(binary.LittleEndian.AppendUint64(e.scratch[:0], math.Float64bits(f)))
}

// writeString is rdbSaveRawString: up to 11 bytes that read as an int32 go as an integer,
// over 20 bytes LZF-compressed when rdbcompression is on and it saves at least 4 bytes,
// else the length and the bytes.
func (e *encoder) writeString(s []byte) {
	if len(s) <= 11 {
		if v, ok := parseCanonicalInt(s); ok && v >= math.MinInt32 && v <= math.MaxInt32 {
			e.writeIntString(v)
			return
		}
	}
	if e.opts.Compression && len(s) > 20 {
		if out := e.compress(s, len(s)-4); out != nil {
			e.writeLZFBlob(out, len(s))
			return
		}
	}
	e.writeLen(uint64(len(s)))
	e.s.write(s)
}

// writeIntString is rdbEncodeInteger of a value that fits in 32 bits.
func (e *encoder) writeIntString(v int64) {
	b := e.scratch[:0]
	switch {
	case v >= math.MinInt8 && v <= math.MaxInt8:
		b = append(b, lenEncodedSpecial<<6|specialInt8, byte(v))
	case v >= math.MinInt16 && v <= math.MaxInt16:
		b = append(b, lenEncodedSpecial<<6|specialInt16, byte(v), byte(v>>8))
	default:
		b = append(b, lenEncodedSpecial<<6|specialInt32, byte(v), byte(v>>8), byte(v>>16), byte(v>>24))
	}
	e.s.write(b)
}

// compress is s LZF-compressed in at most limit bytes, or nil. The result is valid until the
// next call.
func (e *encoder) compress(s []byte, limit int) []byte {
	if limit <= 0 {
		return nil
	}
	if e.lzf == nil {
		e.lzf = lzfPool.Get().(*lzfCompressor)
	}
	if cap(e.lzfOut) < limit {
		e.lzfOut = make([]byte, limit)
	}
	out := e.lzfOut[:limit]
	n := e.lzf.compress(s, out)
	if cap(e.lzfOut) > 1<<20 {
		e.lzfOut = nil // do not keep a huge value's buffer beyond the call's result
	}
	if n == 0 {
		return nil
	}
	return out[:n]
}

// lzfPool keeps compressors (each a 512 KiB table) between values and writers.
var lzfPool = sync.Pool{New: func() any { return new(lzfCompressor) }}

// release returns the encoder's compressor to the pool; the encoder may still be used.
func (e *encoder) release() {
	if e.lzf != nil {
		lzfPool.Put(e.lzf)
		e.lzf = nil
	}
}

// writeLZFBlob is rdbSaveLzfBlob: the LZF marker, compressed and original lengths, the data.
func (e *encoder) writeLZFBlob(compressed []byte, originalLen int) {
	e.s.writeByte(lenEncodedSpecial<<6 | specialLZF)
	e.writeLen(uint64(len(compressed)))
	e.writeLen(uint64(originalLen))
	e.s.write(compressed)
}

// writeValue writes v's type byte and value, in the encoding Redis 7.0 would give it.
func (e *encoder) writeValue(v Source) error {
	switch v.Kind {
	case KindString:
		e.writeType(TypeString)
		e.writeString(v.String)
		return nil
	case KindList:
		if v.List == nil {
			return errors.New("rdb: list source is nil")
		}
		return e.writeList(v.List)
	case KindSet:
		if v.Set == nil {
			return errors.New("rdb: set source is nil")
		}
		return e.writeSet(v.Set)
	case KindHash:
		if v.Hash == nil {
			return errors.New("rdb: hash source is nil")
		}
		return e.writeHash(v.Hash)
	case KindZSet:
		if v.ZSet == nil {
			return errors.New("rdb: zset source is nil")
		}
		return e.writeZSet(v.ZSet)
	case KindStream:
		if v.Stream == nil {
			return errors.New("rdb: stream source is nil")
		}
		return e.writeStream(v.Stream)
	}
	return fmt.Errorf("rdb: cannot write a value of kind %v", v.Kind)
}

// writeSet: an intset when every member is an integer and there are at most
// set-max-intset-entries of them (7.0 has no listpack sets), else RDB_TYPE_SET.
func (e *encoder) writeSet(src ElementSource) error {
	var n int64
	allInts := true
	var ints []int64
	limit := min(int64(e.opts.SetMaxIntsetEntries), 1<<30) // Redis caps it at 2^30 (t_set.c)
	err := src.Each(func(m []byte) error {
		n++
		if allInts && n <= limit {
			v, ok := parseCanonicalInt(m)
			if !ok {
				allInts, ints = false, nil
			} else {
				ints = append(ints, v)
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	if allInts && n <= limit {
		e.writeType(TypeSetIntset)
		e.writeString(intsetBytes(ints))
		return nil
	}
	e.writeType(TypeSet)
	e.writeLen(uint64(n))
	return e.eachCounted(n, func(fn func() error) error {
		return src.Each(func(m []byte) error { e.writeString(m); return fn() })
	})
}

// eachCounted runs walk, whose callback must call count once per element, and fails when the
// walk yields other than n elements or the sink failed.
func (e *encoder) eachCounted(n int64, walk func(count func() error) error) error {
	var seen int64
	err := walk(func() error {
		seen++
		if seen > n {
			return errSourceChanged
		}
		return e.s.err
	})
	if err != nil {
		return err
	}
	if seen != n {
		return errSourceChanged
	}
	return nil
}

// writeHash: a listpack of field, value, … when there are at most hash-max-listpack-entries
// fields and no field or value is longer than hash-max-listpack-value, else RDB_TYPE_HASH.
func (e *encoder) writeHash(src PairSource) error {
	var n int64
	maxLen := 0
	err := src.Each(func(f, v []byte) error {
		n++
		maxLen = max(maxLen, len(f), len(v))
		return nil
	})
	if err != nil {
		return err
	}
	if n <= int64(e.opts.HashMaxListpackEntries) && maxLen <= e.opts.HashMaxListpackValue {
		e.lp.Reset()
		err := e.eachCounted(n, func(count func() error) error {
			return src.Each(func(f, v []byte) error {
				e.lp.AppendString(f)
				e.lp.AppendString(v)
				return count()
			})
		})
		if err != nil {
			return err
		}
		e.writeType(TypeHashListpack)
		e.writeString(e.lp.Bytes())
		return nil
	}
	e.writeType(TypeHash)
	e.writeLen(uint64(n))
	return e.eachCounted(n, func(count func() error) error {
		return src.Each(func(f, v []byte) error {
			e.writeString(f)
			e.writeString(v)
			return count()
		})
	})
}

// ReverseScoredSource is a ScoredSource that can also walk its members in descending order,
// as Redis writes a skiplist-encoded sorted set (RDB_TYPE_ZSET_2): given one, the writer's
// bytes are Redis's and loading it inserts each member at the head of the skiplist.
type ReverseScoredSource interface {
	ScoredSource
	EachReverse(fn func(member []byte, score float64) error) error
}

// writeZSet: a listpack of member, score, … when there are at most zset-max-listpack-entries
// members and none is longer than zset-max-listpack-value, else RDB_TYPE_ZSET_2.
func (e *encoder) writeZSet(src ScoredSource) error {
	var n int64
	maxLen := 0
	err := src.Each(func(m []byte, _ float64) error {
		n++
		maxLen = max(maxLen, len(m))
		return nil
	})
	if err != nil {
		return err
	}
	if n <= int64(e.opts.ZSetMaxListpackEntries) && maxLen <= e.opts.ZSetMaxListpackValue {
		e.lp.Reset()
		var buf [32]byte
		err := e.eachCounted(n, func(count func() error) error {
			return src.Each(func(m []byte, score float64) error {
				e.lp.AppendString(m)
				if v, ok := doubleToInt64(score); ok {
					e.lp.AppendInt(v)
				} else {
					e.lp.AppendString(formatScore(buf[:0], score))
				}
				return count()
			})
		})
		if err != nil {
			return err
		}
		e.writeType(TypeZSetListpack)
		e.writeString(e.lp.Bytes())
		return nil
	}
	e.writeType(TypeZSet2)
	e.writeLen(uint64(n))
	each := src.Each
	if r, ok := src.(ReverseScoredSource); ok {
		each = r.EachReverse
	}
	return e.eachCounted(n, func(count func() error) error {
		return each(func(m []byte, score float64) error {
			e.writeString(m)
			e.writeBinaryDouble(score)
			return count()
		})
	})
}

// doubleToInt64 is Redis's double2ll: d as an integer when it is one within ±2^62.
func doubleToInt64(d float64) (int64, bool) {
	if d < -(1<<62) || d > 1<<62 || d != math.Trunc(d) {
		return 0, false
	}
	return int64(d), true
}

// formatScore is Redis's d2string for a score that is not an integer within ±2^62.
func formatScore(dst []byte, d float64) []byte {
	switch {
	case math.IsNaN(d):
		return append(dst, "nan"...)
	case math.IsInf(d, 1):
		return append(dst, "inf"...)
	case math.IsInf(d, -1):
		return append(dst, "-inf"...)
	}
	return strconv.AppendFloat(dst, d, 'g', 17, 64)
}

// Writer writes an RDB file: NewWriter writes the header, then Aux fields, functions, and
// for each database SelectDB, ResizeDB and its keys; Close writes the end. Output is
// buffered; the Writer does not close w. Methods after an error return that error.
type Writer struct {
	s      sink
	bw     *bufio.Writer
	enc    *encoder
	closed bool
}

// NewWriter starts a version-10 file ("REDIS0010") on w.
func NewWriter(w io.Writer, opts Options) *Writer {
	bw := bufio.NewWriterSize(w, 64<<10)
	wr := &Writer{s: sink{out: bw, sum: opts.Checksum}, bw: bw}
	wr.enc = newEncoder(&wr.s, opts)
	wr.s.write([]byte(fmt.Sprintf("%s%04d", fileMagic, Version)))
	return wr
}

// Written is the number of bytes written so far (buffered ones included).
func (w *Writer) Written() int64 { return w.s.n }

func (w *Writer) check() error {
	if w.closed {
		return errors.New("rdb: writer is closed")
	}
	return w.s.err
}

// Aux writes an RDB_OPCODE_AUX field.
func (w *Writer) Aux(key, value string) error {
	if err := w.check(); err != nil {
		return err
	}
	w.s.writeByte(opcodeAux)
	w.enc.writeString([]byte(key))
	w.enc.writeString([]byte(value))
	return w.s.err
}

// AuxInfo is what Redis says of itself at the start of a file (rdbSaveInfoAuxFields).
type AuxInfo struct {
	RedisVer  string // "" is RedisVersion
	RedisBits int    // 0 is 64
	CTime     int64  // unix seconds the file was made
	UsedMem   int64
	// Repl: write repl-stream-db, repl-id and repl-offset (Redis does when the file is for a
	// replica or the server has replication info to keep).
	Repl         bool
	ReplStreamDB int
	ReplID       string
	ReplOffset   int64
	AOFBase      bool // the file is an AOF's base (aof-base 1)
}

// InfoAux writes the aux fields Redis 7.0 puts first, in its order.
func (w *Writer) InfoAux(info AuxInfo) error {
	ver, bits := info.RedisVer, info.RedisBits
	if ver == "" {
		ver = RedisVersion
	}
	if bits == 0 {
		bits = 64
	}
	itoa := func(v int64) string { return strconv.FormatInt(v, 10) }
	fields := []string{"redis-ver", ver, "redis-bits", itoa(int64(bits)), "ctime", itoa(info.CTime),
		"used-mem", itoa(info.UsedMem)}
	if info.Repl {
		fields = append(fields, "repl-stream-db", itoa(int64(info.ReplStreamDB)), "repl-id", info.ReplID,
			"repl-offset", itoa(info.ReplOffset))
	}
	fields = append(fields, "aof-base", itoa(int64(b2i(info.AOFBase))))
	for i := 0; i < len(fields); i += 2 {
		if err := w.Aux(fields[i], fields[i+1]); err != nil {
			return err
		}
	}
	return nil
}

// Function writes one library's code (RDB_OPCODE_FUNCTION2), as FUNCTION LOAD takes it.
func (w *Writer) Function(code []byte) error {
	if err := w.check(); err != nil {
		return err
	}
	w.s.writeByte(opcodeFunction2)
	w.enc.writeString(code)
	return w.s.err
}

// SelectDB starts the keys of database db.
func (w *Writer) SelectDB(db int) error {
	if err := w.check(); err != nil {
		return err
	}
	if db < 0 {
		return fmt.Errorf("rdb: database %d", db)
	}
	w.s.writeByte(opcodeSelectDB)
	w.enc.writeLen(uint64(db))
	return w.s.err
}

// ResizeDB writes the size hint of the database just selected.
func (w *Writer) ResizeDB(keys, expires uint64) error {
	if err := w.check(); err != nil {
		return err
	}
	w.s.writeByte(opcodeResizeDB)
	w.enc.writeLen(keys)
	w.enc.writeLen(expires)
	return w.s.err
}

// WriteKey writes one key: its expire time when k.ExpireAt > 0, its LRU idle time when
// k.Idle >= 0 and its LFU counter when k.Freq >= 0 (Redis writes IDLE under an LRU
// maxmemory-policy and FREQ under an LFU one, neither otherwise: see EvictionFields), then
// the value's type, k.Name and the value. k.DB, k.Kind and k.Len are not used.
func (w *Writer) WriteKey(k Key, v Source) error {
	if err := w.check(); err != nil {
		return err
	}
	if k.ExpireAt > 0 {
		w.s.writeByte(opcodeExpireTimeMs)
		w.enc.writeMillis(k.ExpireAt)
	}
	if k.Idle >= 0 {
		w.s.writeByte(opcodeIdle)
		w.enc.writeLen(uint64(k.Idle))
	}
	if k.Freq >= 0 {
		w.s.writeByte(opcodeFreq)
		w.s.writeByte(byte(min(k.Freq, 255)))
	}
	// The name goes between the type byte and the value; the type is chosen by the value's
	// first walk, so the encoder writes the name when it writes the type.
	w.enc.name, w.enc.hasName = k.Name, true
	defer func() { w.enc.name, w.enc.hasName = nil, false }()
	if err := w.enc.writeValue(v); err != nil {
		if w.s.err == nil {
			w.s.err = err
		}
		return err
	}
	return w.s.err
}

// Close writes RDB_OPCODE_EOF and the CRC-64 of everything before it (zeros when
// Options.Checksum is off) and flushes. It does not close the io.Writer.
func (w *Writer) Close() error {
	if err := w.check(); err != nil {
		return err
	}
	w.enc.release()
	w.s.writeByte(opcodeEOF)
	crc := w.s.crc
	w.s.write(binary.LittleEndian.AppendUint64(nil, crc))
	w.closed = true
	if w.s.err != nil {
		return w.s.err
	}
	return w.bw.Flush()
}

// EvictionFields says which of a key's eviction data Redis 7.0 writes under a
// maxmemory-policy: the LRU idle time under volatile-lru and allkeys-lru, the LFU counter
// under volatile-lfu and allkeys-lfu, neither under the others.
func EvictionFields(maxmemoryPolicy string) (idle, freq bool) {
	switch maxmemoryPolicy {
	case "volatile-lru", "allkeys-lru":
		return true, false
	case "volatile-lfu", "allkeys-lfu":
		return false, true
	}
	return false, false
}
