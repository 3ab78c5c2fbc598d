package rdb

import "encoding/binary"

// A ziplist (ziplist.c, written by Redis before 7.0): total bytes (4, little endian),
// offset of the last entry (4), entry count (2; 65535 when it does not fit), the entries,
// 0xFF. Each entry is the previous entry's length (1 byte, or 0xFE and 4 bytes), an encoding
// (strings: 00 + 6-bit, 01 + 14-bit or 0x80 + 32-bit big-endian length; integers: 0xC0
// int16, 0xD0 int32, 0xE0 int64, 0xF0 int24, 0xFE int8, 0xF1..0xFD the values 0..12), the value.

const (
	ziplistHeaderBytes  = 10
	ziplistCountUnknown = 65535
	ziplistEnd          = 0xFF
)

type ziplistIter struct {
	b        []byte
	pos      int
	prevLen  int
	lastPos  int // start of the last entry read, -1 before the first
	numEntry int
}

// checkZiplist validates a ziplist as Redis does on load (always deeply) and returns its
// entry count.
func checkZiplist(b []byte) (int, error) {
	if len(b) < ziplistHeaderBytes+1 || int(binary.LittleEndian.Uint32(b)) != len(b) ||
		b[len(b)-1] != ziplistEnd || int(binary.LittleEndian.Uint32(b[4:])) > len(b)-1 {
		return 0, ErrBadFormat
	}
	it := newZiplistIter(b)
	for {
		_, ok, err := it.next()
		if err != nil {
			return 0, err
		}
		if !ok {
			break
		}
	}
	if it.lastPos >= 0 && it.lastPos != int(binary.LittleEndian.Uint32(b[4:])) {
		return 0, ErrBadFormat
	}
	if c := int(binary.LittleEndian.Uint16(b[8:])); c != ziplistCountUnknown && c != it.numEntry {
		return 0, ErrBadFormat
	}
	return it.numEntry, nil
}

func newZiplistIter(b []byte) ziplistIter {
	return ziplistIter{b: b, pos: ziplistHeaderBytes, lastPos: -1}
}

// next returns the next entry; ok is false at the end byte, which must be the last one.
func (it *ziplistIter) next() (v blobValue, ok bool, err error) {
	b, p := it.b, it.pos
	end := len(b) - 1
	if p > end {
		return v, false, ErrBadFormat
	}
	if b[p] == ziplistEnd {
		if p != end {
			return v, false, ErrBadFormat
		}
		return v, false, nil
	}
	start := p
	prev := int(b[p])
	p++
	if prev == 0xFE {
		if p+4 > end {
			return v, false, ErrBadFormat
		}
		prev = int(binary.LittleEndian.Uint32(b[p:]))
		p += 4
	}
	if prev != it.prevLen {
		return v, false, ErrBadFormat
	}
	if p >= end {
		return v, false, ErrBadFormat
	}
	c := b[p]
	var n int
	switch c >> 6 {
	case 0:
		n = int(c & 0x3f)
		p++
	case 1:
		if p+2 > end {
			return v, false, ErrBadFormat
		}
		n = int(c&0x3f)<<8 | int(b[p+1])
		p += 2
	case 2:
		if c != 0x80 || p+5 > end {
			return v, false, ErrBadFormat
		}
		n = int(binary.BigEndian.Uint32(b[p+1:]))
		p += 5
	default:
		v.isInt = true
		p++
		switch {
		case c == 0xC0:
			n = 2
		case c == 0xD0:
			n = 4
		case c == 0xE0:
			n = 8
		case c == 0xF0:
			n = 3
		case c == 0xFE:
			n = 1
		case c >= 0xF1 && c <= 0xFD:
			v.i = int64(c&0x0f) - 1
		default:
			return v, false, ErrBadFormat
		}
	}
	if end-p < n {
		return v, false, ErrBadFormat
	}
	if v.isInt && n > 0 {
		var u uint64
		for i := n - 1; i >= 0; i-- {
			u = u<<8 | uint64(b[p+i])
		}
		shift := uint(64 - 8*n)
		v.i = int64(u<<shift) >> shift
	} else if !v.isInt {
		v.s = b[p : p+n]
	}
	p += n
	it.prevLen = p - start
	it.lastPos = start
	it.pos = p
	it.numEntry++
	return v, true, nil
}
