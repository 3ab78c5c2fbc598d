package codec

import (
	"bytes"
	"testing"
)

// A node written with some slots kept reads back slot by slot: inline elements (the empty
// one included), big markers, and empty slots for those left out or never set.
func TestListNode_RoundTrip_SlotsReadBack(t *testing.T) {
	var n ListNode
	n.Kind[0], n.Elem[0] = ListSlotInline, []byte("a")
	n.Kind[1], n.Elem[1] = ListSlotInline, []byte{}
	n.Kind[5] = ListSlotBig
	n.Kind[63], n.Elem[63] = ListSlotInline, []byte("last")
	n.Kind[7], n.Elem[7] = ListSlotInline, []byte("garbage")
	v := AppendListNode(nil, &n, ^uint64(0)&^(1<<7))
	for i, want := range map[int]struct {
		kind byte
		elem string
	}{0: {ListSlotInline, "a"}, 1: {ListSlotInline, ""}, 2: {ListSlotEmpty, ""}, 5: {ListSlotBig, ""},
		7: {ListSlotEmpty, ""}, 63: {ListSlotInline, "last"}} {
		k, e := ListNodeSlot(v, i)
		if k != want.kind || string(e) != want.elem {
			t.Errorf("slot %d: kind %d %q, want %d %q", i, k, e, want.kind, want.elem)
		}
		if want.kind == ListSlotInline && e == nil {
			t.Errorf("slot %d: an inline element reads as nil", i)
		}
	}
	var d ListNode
	if err := d.Decode(v); err != nil {
		t.Fatal(err)
	}
	if d.Kind[5] != ListSlotBig || !bytes.Equal(d.Elem[63], []byte("last")) || d.Kind[7] != ListSlotEmpty || d.Empty() {
		t.Fatalf("decoded %v", d.Kind)
	}
}

// A missing node reads as empty slots; a truncated or inconsistent one is refused by Decode
// and reads as empty slots, never out of bounds.
func TestListNode_MissingOrCorrupt_ReadsEmpty(t *testing.T) {
	var n ListNode
	n.Kind[3], n.Elem[3] = ListSlotInline, []byte("xyz")
	v := AppendListNode(nil, &n, ^uint64(0))
	for _, bad := range [][]byte{nil, v[:10], v[:len(v)-2]} {
		for i := range ListNodeSlots {
			if k, _ := ListNodeSlot(bad, i); k != ListSlotEmpty && len(bad) == len(v) {
				t.Fatalf("slot %d of a corrupt node: kind %d", i, k)
			}
		}
	}
	var d ListNode
	if err := d.Decode(nil); err != nil || !d.Empty() {
		t.Fatalf("missing node: %v", err)
	}
	if err := d.Decode(v[:len(v)-2]); err == nil {
		t.Fatal("a truncated node decoded")
	}
}

// Positions map to nodes by arithmetic, and the data keys of a node and of its big elements
// parse back; a node's key sorts before its big elements', which sort before the next node's.
func TestListElem_Keys_ParseAndOrder(t *testing.T) {
	seq := ListInitialSeq + 70
	node, slot := ListNodeOf(seq)
	if node != ListInitialSeq>>ListNodeShift+1 || slot != 6 {
		t.Fatalf("ListNodeOf = %d, %d", node, slot)
	}
	nk, bk, next := AppendListNodeElem(nil, node), AppendListBigElem(nil, seq), AppendListNodeElem(nil, node+1)
	if !(bytes.Compare(nk, bk) < 0 && bytes.Compare(bk, next) < 0) {
		t.Fatal("keys out of order")
	}
	if n, _, big, ok := ParseListElem(nk); !ok || big || n != node {
		t.Fatal("node key")
	}
	if n, s, big, ok := ParseListElem(bk); !ok || !big || n != node || s != seq {
		t.Fatal("big key")
	}
	if _, _, _, ok := ParseListElem(append(AppendListNodeElem(nil, node+1), bk[8:]...)); ok {
		t.Fatal("a big key under the wrong node parsed")
	}
}
