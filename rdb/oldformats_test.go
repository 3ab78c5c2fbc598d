package rdb

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"slices"
	"strings"
	"testing"
)

// Builders of the encodings Redis 7.0 reads but no longer writes, written from the format
// descriptions in decode_*.go, so the reader is tested against inputs it did not produce.

// rdbBuf builds RDB bytes.
type rdbBuf struct{ b []byte }

func (w *rdbBuf) bytes(c ...byte) *rdbBuf { w.b = append(w.b, c...); return w }

func (w *rdbBuf) len(n uint64) *rdbBuf {
	switch {
	case n < 64:
		w.b = append(w.b, byte(n))
	case n < 16384:
		w.b = append(w.b, 0x40|byte(n>>8), byte(n))
	case n <= 0xffffffff:
		w.b = append(w.b, 0x80)
		w.b = binary.BigEndian.AppendUint32(w.b, uint32(n))
	default:
		w.b = append(w.b, 0x81)
		w.b = binary.BigEndian.AppendUint64(w.b, n)
	}
	return w
}

func (w *rdbBuf) str(s string) *rdbBuf { w.len(uint64(len(s))); w.b = append(w.b, s...); return w }

func (w *rdbBuf) u64le(v uint64) *rdbBuf { w.b = binary.LittleEndian.AppendUint64(w.b, v); return w }

func (w *rdbBuf) id(ms, seq uint64) *rdbBuf {
	w.b = binary.BigEndian.AppendUint64(w.b, ms)
	w.b = binary.BigEndian.AppendUint64(w.b, seq)
	return w
}

// finish appends the EOF opcode and, from version 5, the CRC-64.
func (w *rdbBuf) finish(version int) []byte {
	w.b = append(w.b, opcodeEOF)
	if version >= 5 {
		w.b = binary.LittleEndian.AppendUint64(w.b, CRC64(0, w.b))
	}
	return w.b
}

// ziplist builds a ziplist of strings and int64s, each integer in the narrowest encoding.
func ziplist(entries ...any) []byte {
	var body []byte
	prev, last := 0, ziplistHeaderBytes
	for _, e := range entries {
		var ent []byte
		if prev < 254 {
			ent = append(ent, byte(prev))
		} else {
			ent = binary.LittleEndian.AppendUint32(append(ent, 0xFE), uint32(prev))
		}
		switch v := e.(type) {
		case string:
			n := len(v)
			switch {
			case n < 64:
				ent = append(ent, byte(n))
			case n < 16384:
				ent = append(ent, 0x40|byte(n>>8), byte(n))
			default:
				ent = binary.BigEndian.AppendUint32(append(ent, 0x80), uint32(n))
			}
			ent = append(ent, v...)
		case int64:
			switch {
			case v >= 0 && v <= 12:
				ent = append(ent, 0xF1+byte(v))
			case v >= -128 && v <= 127:
				ent = append(ent, 0xFE, byte(v))
			case v >= -32768 && v <= 32767:
				ent = binary.LittleEndian.AppendUint16(append(ent, 0xC0), uint16(v))
			case v >= -(1<<23) && v < 1<<23:
				ent = append(ent, 0xF0, byte(v), byte(v>>8), byte(v>>16))
			case v >= -(1<<31) && v < 1<<31:
				ent = binary.LittleEndian.AppendUint32(append(ent, 0xD0), uint32(v))
			default:
				ent = binary.LittleEndian.AppendUint64(append(ent, 0xE0), uint64(v))
			}
		}
		last = ziplistHeaderBytes + len(body)
		body = append(body, ent...)
		prev = len(ent)
	}
	out := binary.LittleEndian.AppendUint32(nil, uint32(ziplistHeaderBytes+len(body)+1))
	out = binary.LittleEndian.AppendUint32(out, uint32(last))
	out = binary.LittleEndian.AppendUint16(out, uint16(len(entries)))
	return append(append(out, body...), ziplistEnd)
}

// listpack builds a listpack of strings and int64s, each integer in the narrowest encoding.
func listpack(elems ...any) []byte {
	var body []byte
	for _, e := range elems {
		var enc []byte
		switch v := e.(type) {
		case string:
			n := len(v)
			switch {
			case n < 64:
				enc = append(enc, 0x80|byte(n))
			case n < 4096:
				enc = append(enc, 0xE0|byte(n>>8), byte(n))
			default:
				enc = binary.LittleEndian.AppendUint32(append(enc, 0xF0), uint32(n))
			}
			enc = append(enc, v...)
		case int64:
			switch {
			case v >= 0 && v <= 127:
				enc = append(enc, byte(v))
			case v >= -4096 && v < 4096:
				u := uint16(v) & 0x1fff
				enc = append(enc, 0xC0|byte(u>>8), byte(u))
			case v >= -32768 && v <= 32767:
				enc = binary.LittleEndian.AppendUint16(append(enc, 0xF1), uint16(v))
			case v >= -(1<<23) && v < 1<<23:
				enc = append(enc, 0xF2, byte(v), byte(v>>8), byte(v>>16))
			case v >= -(1<<31) && v < 1<<31:
				enc = binary.LittleEndian.AppendUint32(append(enc, 0xF3), uint32(v))
			default:
				enc = binary.LittleEndian.AppendUint64(append(enc, 0xF4), uint64(v))
			}
		}
		body = append(body, enc...)
		// The backlen: the entry's length, 7 bits a byte, most significant first, all bytes
		// but the first with the top bit set.
		l := len(enc)
		var groups []byte
		for {
			groups = append([]byte{byte(l & 127)}, groups...)
			l >>= 7
			if l == 0 {
				break
			}
		}
		for i := 1; i < len(groups); i++ {
			groups[i] |= 128
		}
		body = append(body, groups...)
	}
	out := binary.LittleEndian.AppendUint32(nil, uint32(listpackHeaderBytes+len(body)+1))
	out = binary.LittleEndian.AppendUint16(out, uint16(len(elems)))
	return append(append(out, body...), listpackEnd)
}

// zipmap builds a zipmap of field, value pairs, each value followed by free bytes.
func zipmap(free int, pairs ...string) []byte {
	out := []byte{byte(len(pairs) / 2)}
	zlen := func(n int) {
		if n < zipmapBigLen {
			out = append(out, byte(n))
		} else {
			out = binary.LittleEndian.AppendUint32(append(out, zipmapBigLen), uint32(n))
		}
	}
	for i := 0; i < len(pairs); i += 2 {
		zlen(len(pairs[i]))
		out = append(out, pairs[i]...)
		zlen(len(pairs[i+1]))
		out = append(out, byte(free))
		out = append(out, pairs[i+1]...)
		out = append(out, make([]byte, free)...)
	}
	return append(out, 0xFF)
}

func TestRead_OldEncodingsHandBuilt_AsTheFormatSays(t *testing.T) {
	long := strings.Repeat("L", 300)
	w := &rdbBuf{}
	w.bytes([]byte("REDIS0006")...)
	w.bytes(opcodeSelectDB).len(2)
	// EXPIRETIME in seconds (4 bytes, little endian) before a string.
	w.bytes(opcodeExpireTime, 0x10, 0x27, 0, 0).bytes(TypeString).str("secs").str("v")
	w.bytes(TypeListZiplist).str("zl-list").str(string(ziplist("a", long, int64(0), int64(12), int64(-100),
		int64(30000), int64(-8000000), int64(2000000000), int64(-9000000000000000000))))
	w.bytes(TypeHashZiplist).str("zl-hash").str(string(ziplist("f", "v", "n", int64(77))))
	w.bytes(TypeZSetZiplist).str("zl-zset").str(string(ziplist("a", "1.5", "b", int64(-3), "c", "inf")))
	w.bytes(TypeHashZipmap).str("zipmap").str(string(zipmap(2, "f1", "v1", "big", long)))
	w.bytes(TypeListQuicklist).str("ql1").len(3).str(string(ziplist("x", int64(1)))).
		str(string(ziplist())).str(string(ziplist("y")))
	// ZSET (version 1 scores): text after a length byte; 254 and 255 are +inf and -inf.
	w.bytes(TypeZSet).str("zset1").len(3).str("m1").bytes(3, '2', '.', '5').str("m2").bytes(254).
		str("m3").bytes(255)
	// An empty list: skipped, as Redis skips it.
	w.bytes(TypeList).str("empty").len(0)
	// The FUNCTION opcode of Redis 7.0's release candidates: name, engine, description, code.
	w.bytes(opcodeFunction).str("oldlib").str("LUA").len(1).str("a description").str("return 1")
	// A STREAM_LISTPACKS (version 1) stream: one node with a same-fields entry, a deleted one
	// and one with fields of its own; a group whose two pending entries one consumer holds.
	node := listpack(int64(2), int64(1), int64(2), "a", "b", int64(0),
		int64(streamItemSameFields), int64(0), int64(0), "x", "y", int64(5),
		int64(streamItemSameFields|streamItemDeleted), int64(0), int64(1), "p", "q", int64(5),
		int64(0), int64(1), int64(-1), int64(1), "c", int64(7), int64(6))
	w.bytes(TypeStreamListpacks).str("stream1").len(1)
	w.len(16).id(10, 1).str(string(node))
	w.len(2).len(11).len(0) // length, last id
	w.len(1).str("grp").len(10).len(1)
	w.len(2).id(10, 1).u64le(1234).len(2).id(11, 0).u64le(5678).len(1)
	w.len(1).str("cons").u64le(999).len(2).id(10, 1).id(11, 0)
	file := w.finish(6)

	rec := newRecorder()
	if err := NewReader(bytes.NewReader(file)).Read(rec); err != nil {
		t.Fatal(err)
	}
	want := map[string][]string{
		"2/secs":    {"kind string", "expire 10000000", `string "v"`},
		"2/zl-list": {"kind list", `list 000000 "a"`, `list 000001 "` + long + `"`, `list 000002 "0"`, `list 000003 "12"`, `list 000004 "-100"`, `list 000005 "30000"`, `list 000006 "-8000000"`, `list 000007 "2000000000"`, `list 000008 "-9000000000000000000"`},
		"2/zl-hash": {"kind hash", `hash "f" "v"`, `hash "n" "77"`},
		"2/zl-zset": {"kind zset", `zset "a" 1.5`, `zset "b" -3`, `zset "c" +Inf`},
		"2/zipmap":  {"kind hash", `hash "f1" "v1"`, `hash "big" "` + long + `"`},
		"2/ql1":     {"kind list", `list 000000 "x"`, `list 000001 "1"`, `list 000002 "y"`},
		"2/zset1":   {"kind zset", `zset "m1" 2.5`, `zset "m2" +Inf`, `zset "m3" -Inf`},
		"2/stream1": {"kind stream", `entry 10-1 ["a" "x" "b" "y"]`, `entry 11-0 ["c" "7"]`,
			"meta length 2 last 11-0", "meta2 first 0-0 maxdeleted 0-0 added 0",
			`group "grp" last 10-1 read -1 pending 2 consumers 1`,
			`gpending "grp" 10-1 time 1234 count 2`, `gpending "grp" 11-0 time 5678 count 1`,
			`consumer "grp" "cons" seen 999 pending 2`, `cpending "grp" "cons" 10-1`, `cpending "grp" "cons" 11-0`},
	}
	compareKeys(t, rec.keys, want, nil)
	if want := []string{"#!LUA name=oldlib\nreturn 1"}; !slices.Equal(rec.functions, want) {
		t.Errorf("functions %q, want %q", rec.functions, want)
	}
}

func TestRead_Version3NoChecksum_Read(t *testing.T) {
	w := &rdbBuf{}
	w.bytes([]byte("REDIS0003")...).bytes(TypeString).str("k").str("v")
	file := w.finish(3)
	rec := newRecorder()
	if err := NewReader(bytes.NewReader(file)).Read(rec); err != nil {
		t.Fatal(err)
	}
	compareKeys(t, rec.keys, map[string][]string{"0/k": {"kind string", `string "v"`}}, nil)
}

func TestRead_ModuleAux_ErrModule(t *testing.T) {
	w := &rdbBuf{}
	w.bytes([]byte("REDIS0010")...).bytes(opcodeModuleAux).len(12345).len(2).len(2)
	if err := NewReader(bytes.NewReader(w.finish(10))).Read(newRecorder()); !errors.Is(err, ErrModule) {
		t.Fatalf("err %v, want ErrModule", err)
	}
}

// Malformed blobs of every kind: refused, the Handler told nothing of the key.
func TestReadPayload_MalformedBlobs_ErrBadFormatBeforeBeginKey(t *testing.T) {
	zl := ziplist("a", "b")
	zlBadPrev := slices.Clone(zl)
	zlBadPrev[ziplistHeaderBytes+3] = 9 // the second entry's prevlen
	lp := listpack("a", "b")
	lpBadBacklen := slices.Clone(lp)
	lpBadBacklen[listpackHeaderBytes+2] = 5
	intset := []byte{2, 0, 0, 0, 2, 0, 0, 0, 5, 0, 3, 0} // 5 then 3: not ascending
	for name, body := range map[string][]byte{
		"ziplist-prevlen":      new(rdbBuf).bytes(TypeHashZiplist).str(string(zlBadPrev)).b,
		"ziplist-count":        new(rdbBuf).bytes(TypeListZiplist).str(string(append(slices.Clone(zl[:8]), append([]byte{5, 0}, zl[10:]...)...))).b,
		"ziplist-odd-pairs":    new(rdbBuf).bytes(TypeHashZiplist).str(string(ziplist("a", "b", "c"))).b,
		"ziplist-dup-field":    new(rdbBuf).bytes(TypeHashZiplist).str(string(ziplist("a", "b", "a", "c"))).b,
		"zset-ziplist-score":   new(rdbBuf).bytes(TypeZSetZiplist).str(string(ziplist("a", "x"))).b,
		"listpack-backlen":     new(rdbBuf).bytes(TypeHashListpack).str(string(lpBadBacklen)).b,
		"listpack-bytes":       new(rdbBuf).bytes(TypeHashListpack).str(string(lp[:len(lp)-1])).b,
		"listpack-dup":         new(rdbBuf).bytes(TypeZSetListpack).str(string(listpack("a", int64(1), "a", int64(2)))).b,
		"listpack-nan":         new(rdbBuf).bytes(TypeZSetListpack).str(string(listpack("a", "nan"))).b,
		"intset-order":         new(rdbBuf).bytes(TypeSetIntset).str(string(intset)).b,
		"intset-empty":         new(rdbBuf).bytes(TypeSetIntset).str(string(intset[:8])).b,
		"zipmap-dup":           new(rdbBuf).bytes(TypeHashZipmap).str(string(zipmap(0, "a", "1", "a", "2"))).b,
		"zipmap-empty":         new(rdbBuf).bytes(TypeHashZipmap).str(string(zipmap(0))).b,
		"quicklist2-container": new(rdbBuf).bytes(TypeListQuicklist2).len(1).len(3).str("x").b,
		"lzf-short":            {TypeString, 0xC3, 2, 10, 0x01, 'a'},
		"unknown-type":         {8, 0},
	} {
		rec := newRecorder()
		if err := ReadPayload(withFooter(body, Version), rec); !errors.Is(err, ErrBadFormat) {
			t.Errorf("%s: err %v, want ErrBadFormat", name, err)
		}
		if rec.began != 0 {
			t.Errorf("%s: BeginKey called", name)
		}
	}
}

// streamPayload is a STREAM_LISTPACKS_2 payload with one node (entries 1-1 and 1-2) and the
// group part given.
func streamPayload(groups func(w *rdbBuf)) []byte {
	node := listpack(int64(2), int64(0), int64(1), "f", int64(0),
		int64(streamItemSameFields), int64(0), int64(0), "a", int64(4),
		int64(streamItemSameFields), int64(0), int64(1), "b", int64(4))
	w := new(rdbBuf).bytes(TypeStreamListpacks2).len(1).len(16).id(1, 1).str(string(node))
	w.len(2).len(1).len(2).len(1).len(1).len(0).len(0).len(2) // length, last, first, max deleted, added
	groups(w)
	return withFooter(w.b, Version)
}

func TestReadPayload_StreamGroupsMalformed_ErrBadFormat(t *testing.T) {
	ok := streamPayload(func(w *rdbBuf) {
		w.len(1).str("g").len(1).len(2).len(2)
		w.len(2).id(1, 1).u64le(1).len(1).id(1, 2).u64le(1).len(1)
		w.len(1).str("c").u64le(1).len(2).id(1, 1).id(1, 2)
	})
	if err := ReadPayload(ok, newRecorder()); err != nil {
		t.Fatalf("the well-formed stream: %v", err)
	}
	for name, groups := range map[string]func(w *rdbBuf){
		"consumer-id-not-pending": func(w *rdbBuf) {
			w.len(1).str("g").len(1).len(2).len(2).len(1).id(1, 1).u64le(1).len(1)
			w.len(1).str("c").u64le(1).len(1).id(1, 2)
		},
		"pending-without-consumer": func(w *rdbBuf) {
			w.len(1).str("g").len(1).len(2).len(2).len(1).id(1, 1).u64le(1).len(1).len(0)
		},
		"two-consumers-one-entry": func(w *rdbBuf) {
			w.len(1).str("g").len(1).len(2).len(2).len(1).id(1, 1).u64le(1).len(1)
			w.len(2).str("c").u64le(1).len(1).id(1, 1).str("d").u64le(1).len(1).id(1, 1)
		},
		"pending-out-of-order": func(w *rdbBuf) {
			w.len(1).str("g").len(1).len(2).len(2)
			w.len(2).id(1, 2).u64le(1).len(1).id(1, 1).u64le(1).len(1).len(0)
		},
		"group-twice": func(w *rdbBuf) {
			w.len(2).str("g").len(1).len(2).len(2).len(0).len(0).str("g").len(1).len(2).len(2).len(0).len(0)
		},
		"consumer-twice": func(w *rdbBuf) {
			w.len(1).str("g").len(1).len(2).len(2).len(0)
			w.len(2).str("c").u64le(1).len(0).str("c").u64le(1).len(0)
		},
	} {
		if err := ReadPayload(streamPayload(groups), newRecorder()); !errors.Is(err, ErrBadFormat) {
			t.Errorf("%s: err %v, want ErrBadFormat", name, err)
		}
	}
}

func TestReadPayload_StreamEntriesMalformed_ErrBadFormat(t *testing.T) {
	node := func(elems ...any) []byte {
		w := new(rdbBuf).bytes(TypeStreamListpacks2).len(1).len(16).id(5, 5).str(string(listpack(elems...)))
		w.len(1).len(9).len(9).len(5).len(5).len(0).len(0).len(1).len(0)
		return withFooter(w.b, Version)
	}
	if err := ReadPayload(node(int64(1), int64(0), int64(1), "f", int64(0),
		int64(streamItemSameFields), int64(0), int64(0), "a", int64(4)), newRecorder()); err != nil {
		t.Fatalf("the well-formed stream: %v", err)
	}
	for name, p := range map[string][]byte{
		"lp-count": node(int64(1), int64(0), int64(1), "f", int64(0),
			int64(streamItemSameFields), int64(0), int64(0), "a", int64(3)),
		"below-master-id": node(int64(1), int64(0), int64(1), "f", int64(0),
			int64(streamItemSameFields), int64(0), int64(-1), "a", int64(4)),
		"count-says-two": node(int64(2), int64(0), int64(1), "f", int64(0),
			int64(streamItemSameFields), int64(0), int64(0), "a", int64(4)),
		"no-zero-terminator": node(int64(1), int64(0), int64(1), "f", int64(1),
			int64(streamItemSameFields), int64(0), int64(0), "a", int64(4)),
		"trailing-element": node(int64(1), int64(0), int64(1), "f", int64(0),
			int64(streamItemSameFields), int64(0), int64(0), "a", int64(4), "extra"),
		"node-key-short": withFooter(new(rdbBuf).bytes(TypeStreamListpacks2).len(1).str("short").b, Version),
		"flag-not-a-number": node(int64(1), int64(0), int64(1), "f", int64(0),
			"x", int64(0), int64(0), "a", int64(4)),
	} {
		if err := ReadPayload(p, newRecorder()); !errors.Is(err, ErrBadFormat) {
			t.Errorf("%s: err %v, want ErrBadFormat", name, err)
		}
	}
}

// A ZSET score's text is up to 252 bytes: more than the smallest bufio.Reader a caller may
// hand over holds.
func TestRead_LongScoreTextThroughSmallBufio_Read(t *testing.T) {
	score := "1.0000000000000000000000000000005"
	w := &rdbBuf{}
	w.bytes([]byte("REDIS0007")...).bytes(TypeZSet).str("z").len(1).str("m").bytes(byte(len(score)))
	w.bytes([]byte(score)...)
	file := w.finish(7)
	rec := newRecorder()
	if err := NewReader(bufio.NewReaderSize(bytes.NewReader(file), 16)).Read(rec); err != nil {
		t.Fatal(err)
	}
	compareKeys(t, rec.keys, map[string][]string{"0/z": {"kind zset", `zset "m" 1`}}, nil)
}

// One big value must not keep its buffer for the rest of the file.
func TestRead_BigValueThenSmall_BufferReleased(t *testing.T) {
	w := &rdbBuf{}
	w.bytes([]byte("REDIS0010")...).bytes(TypeString).str("big").str(strings.Repeat("b", 10*readChunk))
	w.bytes(TypeString).str("small").str("s")
	r := NewReader(bytes.NewReader(w.finish(10)))
	if err := r.Read(newRecorder()); err != nil {
		t.Fatal(err)
	}
	if cap(r.a) > 4*readChunk {
		t.Fatalf("the reader keeps a %d-byte buffer", cap(r.a))
	}
}
