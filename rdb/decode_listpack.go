package rdb

import (
	"encoding/binary"
	"strconv"
)

// A listpack (listpack.c): total bytes (4, little endian), element count (2; 65535 when
// unknown), the elements, 0xFF. Each element is an encoding byte (which may carry the value
// or the string's length), the value, and its own length again, written backwards ("backlen").

const (
	listpackHeaderBytes  = 6
	listpackCountUnknown = 65535
	listpackEnd          = 0xFF
)

// blobValue is one element of a listpack, ziplist or intset: a string (s) or an integer.
type blobValue struct {
	s     []byte
	i     int64
	isInt bool
}

// text is the element as Redis shows it: the string (in the blob), or the integer in
// decimal, written over *scratch.
func (v blobValue) text(scratch *[]byte) []byte {
	if v.isInt {
		*scratch = strconv.AppendInt((*scratch)[:0], v.i, 10)
		return *scratch
	}
	return v.s
}

// integer is the element as an integer: an integer element, or a string that is one.
func (v blobValue) integer() (int64, bool) {
	if v.isInt {
		return v.i, true
	}
	n, err := strconv.ParseInt(string(v.s), 10, 64)
	return n, err == nil
}

// listpackIter walks a listpack whose header checkListpack accepted; next checks every
// element's bounds and backlen as it goes.
type listpackIter struct {
	b   []byte
	pos int
}

// checkListpack validates a listpack as Redis's deep sanitization does and returns its
// element count.
func checkListpack(b []byte) (int, error) {
	if len(b) < listpackHeaderBytes+1 || int(binary.LittleEndian.Uint32(b)) != len(b) ||
		b[len(b)-1] != listpackEnd {
		return 0, ErrBadFormat
	}
	it := listpackIter{b: b, pos: listpackHeaderBytes}
	n := 0
	for {
		_, ok, err := it.next()
		if err != nil {
			return 0, err
		}
		if !ok {
			break
		}
		n++
	}
	if c := int(binary.LittleEndian.Uint16(b[4:])); c != listpackCountUnknown && c != n {
		return 0, ErrBadFormat
	}
	return n, nil
}

func newListpackIter(b []byte) listpackIter { return listpackIter{b: b, pos: listpackHeaderBytes} }

// next returns the next element; ok is false at the end byte, which must be the last one.
func (it *listpackIter) next() (v blobValue, ok bool, err error) {
	b, p := it.b, it.pos
	end := len(b) - 1 // the 0xFF
	if p > end {
		return v, false, ErrBadFormat
	}
	c := b[p]
	if c == listpackEnd {
		if p != end {
			return v, false, ErrBadFormat
		}
		return v, false, nil
	}
	var hdr, n int // encoding bytes, payload bytes
	switch {
	case c&0x80 == 0: // 7-bit unsigned integer
		hdr, v.isInt, v.i = 1, true, int64(c&0x7f)
	case c&0xC0 == 0x80: // string, 6-bit length
		hdr, n = 1, int(c&0x3f)
	case c&0xE0 == 0xC0: // 13-bit signed integer
		if p+2 > end {
			return v, false, ErrBadFormat
		}
		u := int64(c&0x1f)<<8 | int64(b[p+1])
		if u >= 1<<12 {
			u -= 1 << 13
		}
		hdr, v.isInt, v.i = 2, true, u
	case c&0xF0 == 0xE0: // string, 12-bit length
		if p+2 > end {
			return v, false, ErrBadFormat
		}
		hdr, n = 2, int(c&0x0f)<<8|int(b[p+1])
	case c == 0xF0: // string, 32-bit length
		if p+5 > end {
			return v, false, ErrBadFormat
		}
		hdr, n = 5, int(binary.LittleEndian.Uint32(b[p+1:]))
	case c >= 0xF1 && c <= 0xF4: // 16, 24, 32, 64-bit signed integers
		w := [...]int{2, 3, 4, 8}[c-0xF1]
		if p+1+w > end {
			return v, false, ErrBadFormat
		}
		var u uint64
		for i := w - 1; i >= 0; i-- {
			u = u<<8 | uint64(b[p+1+i])
		}
		shift := uint(64 - 8*w)
		hdr, n, v.isInt, v.i = 1, w, true, int64(u<<shift)>>shift
	default:
		return v, false, ErrBadFormat
	}
	entry := hdr + n
	bl := backlenBytes(entry)
	if end-p < entry+bl {
		return v, false, ErrBadFormat
	}
	if !v.isInt {
		v.s = b[p+hdr : p+hdr+n]
	}
	if decodeBacklen(b[p+entry:p+entry+bl]) != uint64(entry) {
		return v, false, ErrBadFormat
	}
	it.pos = p + entry + bl
	return v, true, nil
}

// backlenBytes is how many bytes a listpack uses to write an element length l backwards.
func backlenBytes(l int) int {
	switch {
	case l <= 127:
		return 1
	case l < 16383:
		return 2
	case l < 2097151:
		return 3
	case l < 268435455:
		return 4
	}
	return 5
}

// decodeBacklen reads a backlen stored in b: 7 bits a byte, most significant first, every
// byte but the first flagged with the top bit.
func decodeBacklen(b []byte) uint64 {
	var v uint64
	for i, c := range b {
		if (i == 0) != (c&0x80 == 0) {
			return ^uint64(0)
		}
		v = v<<7 | uint64(c&0x7f)
	}
	return v
}
