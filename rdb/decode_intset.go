package rdb

import "encoding/binary"

// An intset (intset.c): the width of its integers (4 bytes little endian: 2, 4 or 8), their
// count (4), then the integers, signed, little endian, strictly ascending.

// checkIntset validates an intset as Redis's deep sanitization does (an empty one is
// refused) and returns its width and count.
func checkIntset(b []byte) (width, count int, err error) {
	if len(b) < 8 {
		return 0, 0, ErrBadFormat
	}
	width = int(binary.LittleEndian.Uint32(b))
	if width != 2 && width != 4 && width != 8 {
		return 0, 0, ErrBadFormat
	}
	c := uint64(binary.LittleEndian.Uint32(b[4:]))
	if c == 0 || 8+c*uint64(width) != uint64(len(b)) {
		return 0, 0, ErrBadFormat
	}
	count = int(c)
	for i := 1; i < count; i++ {
		if intsetAt(b, width, i) <= intsetAt(b, width, i-1) {
			return 0, 0, ErrBadFormat
		}
	}
	return width, count, nil
}

// intsetAt is the i-th integer of an intset checkIntset accepted.
func intsetAt(b []byte, width, i int) int64 {
	p := b[8+i*width:]
	switch width {
	case 2:
		return int64(int16(binary.LittleEndian.Uint16(p)))
	case 4:
		return int64(int32(binary.LittleEndian.Uint32(p)))
	}
	return int64(binary.LittleEndian.Uint64(p))
}
