package codec

import (
	"encoding/binary"
	"errors"
)

// A list's elements live in nodes (docs/ENCODING.md): node n holds positions
// [n*ListNodeSlots, (n+1)*ListNodeSlots) of the meta's dense array [Head, Tail), so a position's
// node and slot are arithmetic. A node's value is ListNodeSlots little-endian uint16 end
// offsets (into the slot bytes that follow), then the slots' bytes: an empty slot holds nothing,
// an inline element is ListSlotInline followed by its bytes, and an element longer than
// ListInlineMax is ListSlotBig alone, its bytes in a data key of its own (AppendListBigElem).
// Readers use only the slots of positions in [Head, Tail): the others are garbage left by pops.
//
// Element parts of a list's data keys:
//
//	node  node index (8, big-endian)                    -> node value
//	big   node index (8) · position (8, big-endian)     -> element
//
// so a walk in key order meets each node before the big elements of its slots.

// ListNodeShift is log2 of the slots in a node; on disk: never change it.
const ListNodeShift = 6

// ListNodeSlots is the number of positions a node covers.
const ListNodeSlots = 1 << ListNodeShift

// ListInlineMax is the longest element kept inside its node; on disk: never lower it (a
// longer inline element is still read right, so raising it is safe).
const ListInlineMax = 128

// Slot kinds: the first byte of a non-empty slot.
const (
	ListSlotEmpty  byte = 0
	ListSlotInline byte = 1
	ListSlotBig    byte = 2
)

// ListInitialSeq is where an empty list's head and tail start: the middle of the sequence
// space, so a list can grow a long way at either end.
const ListInitialSeq uint64 = 1 << 63

// ListNodeOf returns the node holding position seq and the slot it takes there.
func ListNodeOf(seq uint64) (node uint64, slot int) {
	return seq >> ListNodeShift, int(seq & (ListNodeSlots - 1))
}

// AppendListNodeElem appends the element part of node n's data key.
func AppendListNodeElem(b []byte, n uint64) []byte { return binary.BigEndian.AppendUint64(b, n) }

// AppendListBigElem appends the element part of the data key of the big element at seq.
func AppendListBigElem(b []byte, seq uint64) []byte {
	b = binary.BigEndian.AppendUint64(b, seq>>ListNodeShift)
	return binary.BigEndian.AppendUint64(b, seq)
}

// ParseListElem decodes the element part of a list data key: a node's (big false) or a big
// element's (seq its position). ok is false for anything else.
func ParseListElem(elem []byte) (node, seq uint64, big, ok bool) {
	switch len(elem) {
	case 8:
		return binary.BigEndian.Uint64(elem), 0, false, true
	case 16:
		node, seq = binary.BigEndian.Uint64(elem), binary.BigEndian.Uint64(elem[8:])
		return node, seq, true, seq>>ListNodeShift == node
	}
	return 0, 0, false, false
}

const listNodeHeader = 2 * ListNodeSlots

// ErrCorruptListNode is returned when a list node's value cannot be decoded.
var ErrCorruptListNode = errors.New("codec: corrupt list node")

// ListNodeSlot returns the kind of slot i of node value v and, if inline, its element
// (aliasing v). A missing node (v empty) or a corrupt one reads as empty slots.
func ListNodeSlot(v []byte, i int) (kind byte, elem []byte) {
	if len(v) < listNodeHeader {
		return ListSlotEmpty, nil
	}
	end := int(binary.LittleEndian.Uint16(v[2*i:]))
	start := 0
	if i > 0 {
		start = int(binary.LittleEndian.Uint16(v[2*i-2:]))
	}
	data := v[listNodeHeader:]
	if start >= end || end > len(data) {
		return ListSlotEmpty, nil
	}
	return data[start], data[start+1 : end]
}

// ListNode is a node's slots decoded for changes; the zero value is an empty node.
type ListNode struct {
	Kind [ListNodeSlots]byte
	Elem [ListNodeSlots][]byte // inline elements; they alias what they were read from
}

// Decode fills n from node value v (empty: a missing node).
func (n *ListNode) Decode(v []byte) error {
	*n = ListNode{}
	if len(v) == 0 {
		return nil
	}
	if len(v) < listNodeHeader {
		return ErrCorruptListNode
	}
	data := v[listNodeHeader:]
	start := 0
	for i := range ListNodeSlots {
		end := int(binary.LittleEndian.Uint16(v[2*i:]))
		if end < start || end > len(data) {
			return ErrCorruptListNode
		}
		if end > start {
			n.Kind[i] = data[start]
			if n.Kind[i] == ListSlotInline {
				n.Elem[i] = data[start+1 : end : end]
			}
		}
		start = end
	}
	return nil
}

// Empty reports whether no slot holds an element.
func (n *ListNode) Empty() bool {
	for _, k := range n.Kind {
		if k != ListSlotEmpty {
			return false
		}
	}
	return true
}

// AppendListNode appends the value of node n, keeping only the slots whose bit is set in keep.
func AppendListNode(b []byte, n *ListNode, keep uint64) []byte {
	at := len(b)
	b = append(b, make([]byte, listNodeHeader)...)
	data := len(b)
	for i := range ListNodeSlots {
		if k := n.Kind[i]; k != ListSlotEmpty && keep>>i&1 != 0 {
			b = append(b, k)
			if k == ListSlotInline {
				b = append(b, n.Elem[i]...)
			}
		}
		binary.LittleEndian.PutUint16(b[at+2*i:], uint16(len(b)-data))
	}
	return b
}
