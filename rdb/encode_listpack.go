package rdb

import (
	"encoding/binary"
	"math"
)

// Listpacks as Redis 7.0 builds them (listpack.c): a 6-byte header (total bytes, 32 bits,
// and element count, 16 bits, both little endian; the count saturates at 65535), the
// entries, and 0xFF. An entry is its encoding and data followed by its backlen (the length
// of encoding and data, written so that it can be read backwards). A string that is the
// canonical decimal of an int64 is stored as an integer, as lpAppend stores it.

const (
	listpackHeaderSize = 6
	listpackTerminator = 0xFF
	listpackEmptyBytes = listpackHeaderSize + 1
	listpackCountMax   = 65535
)

// parseCanonicalInt is lpStringToInt64 and string2ll: s is an int64 written as Redis writes
// one (no sign but '-', no leading zero, no "-0", no spaces).
func parseCanonicalInt(s []byte) (int64, bool) {
	if len(s) == 0 || len(s) > 20 {
		return 0, false
	}
	if len(s) == 1 && s[0] == '0' {
		return 0, true
	}
	neg := s[0] == '-'
	digits := s
	if neg {
		digits = s[1:]
	}
	if len(digits) == 0 || digits[0] < '1' || digits[0] > '9' {
		return 0, false
	}
	var v uint64
	for _, c := range digits {
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
		if v > 1<<63 {
			return 0, false
		}
		return int64(-v), true
	}
	if v > math.MaxInt64 {
		return 0, false
	}
	return int64(v), true
}

// listpackIntBytes is the size of an integer entry's encoding and data.
func listpackIntBytes(v int64) int {
	switch {
	case v >= 0 && v <= 127:
		return 1
	case v >= -4096 && v <= 4095:
		return 2
	case v >= -32768 && v <= 32767:
		return 3
	case v >= -8388608 && v <= 8388607:
		return 4
	case v >= -2147483648 && v <= 2147483647:
		return 5
	}
	return 9
}

// listpackStringHeader is the size of a string entry's encoding for n bytes of data.
func listpackStringHeader(n int) int {
	switch {
	case n < 64:
		return 1
	case n < 4096:
		return 2
	}
	return 5
}

// ListpackEntryBytes is what appending s (as lpAppend: an integer when it reads as one)
// adds to a listpack: the stream node model (datatype) cuts nodes by it, as XADD does.
func ListpackEntryBytes(s []byte) int {
	var l int
	if v, ok := parseCanonicalInt(s); ok {
		l = listpackIntBytes(v)
	} else {
		l = listpackStringHeader(len(s)) + len(s)
	}
	return l + backlenBytes(l)
}

// ListpackIntEntryBytes is what appending the integer v adds to a listpack.
func ListpackIntEntryBytes(v int64) int {
	l := listpackIntBytes(v)
	return l + backlenBytes(l)
}

// listpackBuilder appends entries; Bytes gives the listpack. Reset reuses the buffer.
type listpackBuilder struct {
	buf   []byte // header space, then the entries
	count int
}

func (lp *listpackBuilder) Reset() {
	if lp.buf == nil {
		lp.buf = make([]byte, listpackHeaderSize, 256)
	}
	lp.buf = lp.buf[:listpackHeaderSize]
	lp.count = 0
}

// Size is the listpack's total bytes so far.
func (lp *listpackBuilder) Size() int {
	if lp.buf == nil {
		return listpackEmptyBytes
	}
	return len(lp.buf) + 1
}

func (lp *listpackBuilder) AppendString(s []byte) {
	if v, ok := parseCanonicalInt(s); ok {
		lp.AppendInt(v)
		return
	}
	if lp.buf == nil {
		lp.Reset()
	}
	start := len(lp.buf)
	n := len(s)
	switch {
	case n < 64:
		lp.buf = append(lp.buf, 0x80|byte(n))
	case n < 4096:
		lp.buf = append(lp.buf, 0xE0|byte(n>>8), byte(n))
	default:
		lp.buf = append(lp.buf, 0xF0, byte(n), byte(n>>8), byte(n>>16), byte(n>>24))
	}
	lp.buf = append(lp.buf, s...)
	lp.appendBacklen(len(lp.buf) - start)
}

func (lp *listpackBuilder) AppendInt(v int64) {
	if lp.buf == nil {
		lp.Reset()
	}
	start := len(lp.buf)
	u := uint64(v)
	switch listpackIntBytes(v) {
	case 1:
		lp.buf = append(lp.buf, byte(v))
	case 2:
		u &= 1<<13 - 1
		lp.buf = append(lp.buf, 0xC0|byte(u>>8), byte(u))
	case 3:
		lp.buf = append(lp.buf, 0xF1, byte(u), byte(u>>8))
	case 4:
		lp.buf = append(lp.buf, 0xF2, byte(u), byte(u>>8), byte(u>>16))
	case 5:
		lp.buf = append(lp.buf, 0xF3, byte(u), byte(u>>8), byte(u>>16), byte(u>>24))
	default:
		lp.buf = append(lp.buf, 0xF4)
		lp.buf = binary.LittleEndian.AppendUint64(lp.buf, u)
	}
	lp.appendBacklen(len(lp.buf) - start)
}

func (lp *listpackBuilder) appendBacklen(l int) {
	switch backlenBytes(l) {
	case 1:
		lp.buf = append(lp.buf, byte(l))
	case 2:
		lp.buf = append(lp.buf, byte(l>>7), byte(l&127)|128)
	case 3:
		lp.buf = append(lp.buf, byte(l>>14), byte(l>>7&127)|128, byte(l&127)|128)
	case 4:
		lp.buf = append(lp.buf, byte(l>>21), byte(l>>14&127)|128, byte(l>>7&127)|128, byte(l&127)|128)
	default:
		lp.buf = append(lp.buf, byte(l>>28), byte(l>>21&127)|128, byte(l>>14&127)|128,
			byte(l>>7&127)|128, byte(l&127)|128)
	}
	lp.count++
}

// Bytes finishes the listpack: header and terminator. The builder may be appended to after.
func (lp *listpackBuilder) Bytes() []byte {
	if lp.buf == nil {
		lp.Reset()
	}
	total := len(lp.buf) + 1
	binary.LittleEndian.PutUint32(lp.buf[0:4], uint32(total))
	count := lp.count
	if count > listpackCountMax {
		count = listpackCountMax
	}
	binary.LittleEndian.PutUint16(lp.buf[4:6], uint16(count))
	out := append(lp.buf, listpackTerminator)
	lp.buf = out[:len(out)-1]
	return out
}
