package codec

import (
	"encoding/binary"
	"math"
)

// The element part of a collection's data keys (after AppendDataPrefix). See docs/ENCODING.md.
//
//	hash  field                          -> value
//	set   member                         -> empty
//	list  node (8) or node (8) · position (8): see listnode.go
//	zset  0x00 · member                  -> score (8, IEEE 754 bits, big-endian)
//	zset  0x01 · sortable score (8) · member -> empty

// Sorted-set element kinds.
const (
	ZSetMemberTag byte = 0x00 // member -> score
	ZSetScoreTag  byte = 0x01 // sortable score · member -> empty
)

// AppendZSetMember appends the element part of member's score entry.
func AppendZSetMember(b, member []byte) []byte { return append(append(b, ZSetMemberTag), member...) }

// AppendZSetScore appends the element part of the (score, member) order entry.
func AppendZSetScore(b []byte, score float64, member []byte) []byte {
	b = append(b, ZSetScoreTag)
	b = AppendSortableScore(b, score)
	return append(b, member...)
}

// AppendSortableScore appends score so that bytewise order is numeric order: the sign bit of a
// non-negative number is set, every bit of a negative one is inverted. -0 is stored as 0.
func AppendSortableScore(b []byte, score float64) []byte {
	if score == 0 {
		score = 0 // -0 and 0 are the same score
	}
	u := math.Float64bits(score)
	if u&(1<<63) == 0 {
		u |= 1 << 63
	} else {
		u = ^u
	}
	return binary.BigEndian.AppendUint64(b, u)
}

// SortableScore decodes AppendSortableScore.
func SortableScore(b []byte) float64 {
	u := binary.BigEndian.Uint64(b)
	if u&(1<<63) != 0 {
		u &^= 1 << 63
	} else {
		u = ^u
	}
	return math.Float64frombits(u)
}

// AppendScoreValue appends the value of a member's score entry.
func AppendScoreValue(b []byte, score float64) []byte {
	return binary.BigEndian.AppendUint64(b, math.Float64bits(score))
}

// ScoreValue decodes the value of a member's score entry.
func ScoreValue(v []byte) float64 {
	if len(v) != 8 {
		return 0
	}
	return math.Float64frombits(binary.BigEndian.Uint64(v))
}
