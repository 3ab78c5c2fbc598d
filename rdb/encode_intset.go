package rdb

import (
	"encoding/binary"
	"slices"
)

// intsetBytes is Redis's intset (intset.c) of the members: the width of every element (2, 4
// or 8 bytes: the least that holds them all) and their count, 32 bits each, then the members
// ascending, all little endian. members is sorted in place; it holds distinct values.
func intsetBytes(members []int64) []byte {
	slices.Sort(members)
	width := 2
	for _, v := range members {
		switch {
		case v < -2147483648 || v > 2147483647:
			width = 8
		case (v < -32768 || v > 32767) && width < 4:
			width = 4
		}
	}
	out := make([]byte, 8, 8+width*len(members))
	binary.LittleEndian.PutUint32(out[0:4], uint32(width))
	binary.LittleEndian.PutUint32(out[4:8], uint32(len(members)))
	for _, v := range members {
		switch width {
		case 2:
			out = binary.LittleEndian.AppendUint16(out, uint16(v))
		case 4:
			out = binary.LittleEndian.AppendUint32(out, uint32(v))
		default:
			out = binary.LittleEndian.AppendUint64(out, uint64(v))
		}
	}
	return out
}
