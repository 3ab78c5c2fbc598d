package codec

import (
	"bytes"
	"encoding/hex"
	"math"
	"strings"
	"testing"
)

func unhex(t *testing.T, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(strings.ReplaceAll(s, " ", ""))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// The example of docs/ENCODING.md, byte for byte.
func TestMeta_DocExample(t *testing.T) {
	key := []byte("{u}1")
	if got := AppendMetaKey(nil, 0, key); !bytes.Equal(got, unhex(t, "6d 00 2e 32 7b 75 7d 31")) {
		t.Fatalf("meta key % x", got)
	}
	m := Meta{Type: TypeString, Expire: 1700000005000, Value: []byte("hello")}
	if got := AppendMeta(nil, &m); !bytes.Equal(got, unhex(t, "00 00 00 01 8b cf e5 7b 88 68 65 6c 6c 6f")) {
		t.Fatalf("meta value % x", got)
	}
}

func TestSlot_RedisClusterValues(t *testing.T) {
	// Values from Redis Cluster's specification and CLUSTER KEYSLOT.
	for key, want := range map[string]uint16{"123456789": 0x31c3 & (SlotCount - 1), "foo": 12182, "bar": 5061,
		"{user1000}.following": 3443, "{user1000}.followers": 3443, "foo{}{bar}": 8363, "foo{{bar}}zap": 4015, "": 0} {
		if got := Slot([]byte(key)); got != want {
			t.Errorf("Slot(%q) = %d, want %d", key, got, want)
		}
	}
}

func TestHashTag(t *testing.T) {
	for key, want := range map[string]string{"{a}b": "a", "a{b}c": "b", "{}a": "{}a", "a{b": "a{b", "{a}{b}": "a", "plain": "plain"} {
		if got := string(HashTag([]byte(key))); got != want {
			t.Errorf("HashTag(%q) = %q, want %q", key, got, want)
		}
	}
}

func TestMeta_RoundTrip(t *testing.T) {
	for _, m := range []Meta{
		{Type: TypeString, Value: []byte("v"), Raw: true},
		{Type: TypeHash, Expire: 5, Version: 7, Count: 9},
		{Type: TypeList, Version: 1, Count: 2, Head: 3, Tail: 5},
		{Type: TypeZSet, Version: 1 << 60, Count: 1},
	} {
		var got Meta
		if err := DecodeMeta(AppendMeta(nil, &m), &got); err != nil {
			t.Fatal(err)
		}
		if got.Type != m.Type || got.Raw != m.Raw || got.Expire != m.Expire || got.Version != m.Version ||
			got.Count != m.Count || got.Head != m.Head || got.Tail != m.Tail || !bytes.Equal(got.Value, m.Value) {
			t.Errorf("round trip %+v -> %+v", m, got)
		}
	}
}

func TestDecodeMeta_Corrupt(t *testing.T) {
	for _, v := range [][]byte{nil, {0}, {1, 0, 0, 0, 0, 0, 0, 0, 0}, {9, 0, 0, 0, 0, 0, 0, 0, 0}} {
		var m Meta
		if err := DecodeMeta(v, &m); err == nil {
			t.Errorf("DecodeMeta(% x) accepted", v)
		}
	}
}

func TestSortableScore_OrderIsNumeric(t *testing.T) {
	scores := []float64{math.Inf(-1), -1e300, -2.5, -1, -math.SmallestNonzeroFloat64, 0, math.SmallestNonzeroFloat64, 1, 2.5, 1e300, math.Inf(1)}
	for i := 1; i < len(scores); i++ {
		a, b := AppendSortableScore(nil, scores[i-1]), AppendSortableScore(nil, scores[i])
		if bytes.Compare(a, b) >= 0 {
			t.Errorf("%v does not sort before %v", scores[i-1], scores[i])
		}
		if got := SortableScore(b); got != scores[i] {
			t.Errorf("round trip %v -> %v", scores[i], got)
		}
	}
	if !bytes.Equal(AppendSortableScore(nil, math.Copysign(0, -1)), AppendSortableScore(nil, 0)) {
		t.Error("-0 and 0 encode differently")
	}
}

// The collection examples of docs/ENCODING.md, byte for byte.
func TestCollections_DocExamples(t *testing.T) {
	key, ver := []byte("{u}h"), uint64(0x1800000000000001)
	prefix := unhex(t, "64 00 2e 32 00 00 00 04 7b 75 7d 68 18 00 00 00 00 00 00 01")
	if got := AppendDataPrefix(nil, 0, key, ver); !bytes.Equal(got, prefix) {
		t.Fatalf("data prefix % x", got)
	}
	for name, c := range map[string]struct{ got, want []byte }{
		"hash meta": {AppendMeta(nil, &Meta{Type: TypeHash, Version: ver, Count: 1}),
			unhex(t, "01 0000000000000000 1800000000000001 0000000000000001")},
		"list meta": {AppendMeta(nil, &Meta{Type: TypeList, Version: ver, Count: 1, Head: ListInitialSeq - 1, Tail: ListInitialSeq}),
			unhex(t, "22 0000000000000000 1800000000000001 0000000000000001 7fffffffffffffff 8000000000000000")},
		"list node":       {AppendListNodeElem(prefix, (ListInitialSeq-1)>>ListNodeShift), append(prefix, unhex(t, "01ffffffffffffff")...)},
		"list big":        {AppendListBigElem(prefix, ListInitialSeq-1), append(prefix, unhex(t, "01ffffffffffffff 7fffffffffffffff")...)},
		"list node value": {listNodeOf63("e"), append(make([]byte, 126), 0x02, 0x00, 0x01, 'e')},
		"zset member":     {AppendZSetMember(prefix, []byte("m")), append(prefix, 0x00, 'm')},
		"zset value":      {AppendScoreValue(nil, 1.5), unhex(t, "3ff8000000000000")},
		"zset score":      {AppendZSetScore(prefix, 1.5, []byte("m")), append(prefix, unhex(t, "01 bff8000000000000 6d")...)},
		"neg score":       {AppendSortableScore(nil, -1.5), unhex(t, "4007ffffffffffff")},
		"packed hash": {AppendMeta(nil, &Meta{Type: TypeHash, Version: ver, Count: 1, Packed: true, Compact: true, Value: []byte("\x01f\x01v")}),
			unhex(t, "31 0000000000000000 1800000000000001 0000000000000001 01 66 01 76")},
		"packed intset": {AppendMeta(nil, &Meta{Type: TypeSet, Version: ver, Count: 1, Packed: true, Compact: true, Value: []byte("\x015")}),
			unhex(t, "33 0000000000000000 1800000000000001 0000000000000001 01 35")},
		"packed set": {AppendMeta(nil, &Meta{Type: TypeSet, Version: ver, Count: 2, Packed: true, Value: []byte("\x015\x01a")}),
			unhex(t, "23 0000000000000000 1800000000000001 0000000000000002 01 35 01 61")},
	} {
		if !bytes.Equal(c.got, c.want) {
			t.Errorf("%s: % x, want % x", name, c.got, c.want)
		}
	}
}

func TestUserKeyOf_MetaAndDataKeys(t *testing.T) {
	key := []byte("user{tag}")
	db, k, ok := UserKeyOf(AppendMetaKey(nil, 7, key))
	if !ok || db != 7 || string(k) != string(key) {
		t.Fatalf("meta key: %d %q %v", db, k, ok)
	}
	data := append(AppendDataPrefix(nil, 3, key, 42), "field"...)
	db, k, ok = UserKeyOf(data)
	if !ok || db != 3 || string(k) != string(key) {
		t.Fatalf("data key: %d %q %v", db, k, ok)
	}
	if _, _, ok := UserKeyOf([]byte{PrefixState, 'm', 0, 0}); ok {
		t.Fatal("a bookkeeping key decoded as a user key")
	}
	if _, _, ok := UserKeyOf(data[:9]); ok {
		t.Fatal("a truncated data key decoded")
	}
}

// The fragmented string of docs/ENCODING.md: SETBIT {u}b 4294967295 1 in db 0.
func TestFragmentedString_DocExample(t *testing.T) {
	key, ver := []byte("{u}b"), uint64(0x1800000000000001)
	m := Meta{Type: TypeString, Raw: true, Frag: true, Version: ver, Count: 1 << 29}
	enc := AppendMeta(nil, &m)
	if want := unhex(t, "c0 0000000000000000 1800000000000001 0000000020000000"); !bytes.Equal(enc, want) {
		t.Fatalf("meta % x, want % x", enc, want)
	}
	var got Meta
	if err := DecodeMeta(enc, &got); err != nil || got.Type != TypeString || !got.Raw || !got.Frag || got.Version != ver || got.Count != 1<<29 || got.Value != nil {
		t.Fatalf("decoded %+v, %v", got, err)
	}
	if MetaType(enc) != TypeString || !MetaHasData(enc) || MetaHasData(AppendMeta(nil, &Meta{Type: TypeString, Value: []byte("v")})) {
		t.Fatal("MetaType / MetaHasData of a fragmented string")
	}
	data := AppendFragIndex(AppendDataPrefix(nil, 0, key, ver), uint32((1<<29-1)/FragSize))
	if want := unhex(t, "64 00 2e 32 00000004 7b757d62 1800000000000001 0007ffff"); !bytes.Equal(data, want) {
		t.Fatalf("fragment key % x, want % x", data, want)
	}
	if err := DecodeMeta(unhex(t, "c1 0000000000000000 1800000000000001 0000000000000001"), &got); err == nil {
		t.Fatal("a fragmented hash decoded")
	}
}

// A packed hash, set or sorted set keeps its elements and flags through an encode and decode; its
// meta has no data keys. A meta without the flags (every one a format-5 build wrote) decodes
// as a collection of data keys, and the flags on another type are corrupt.
func TestMeta_PackedHashAndSet_RoundTrip(t *testing.T) {
	for _, m := range []Meta{
		{Type: TypeHash, Expire: 5, Version: 7, Count: 1, Packed: true, Compact: true, Value: []byte("\x01f\x01v")},
		{Type: TypeSet, Version: 8, Count: 2, Packed: true, Value: []byte("\x01a\x01b")},
		{Type: TypeSet, Version: 9, Count: 600, Compact: true},
		{Type: TypeZSet, Version: 10, Count: 1, Packed: true, Value: []byte("\x02\x00m\x08\x3f\xf0\x00\x00\x00\x00\x00\x00")},
	} {
		enc := AppendMeta(nil, &m)
		var got Meta
		if err := DecodeMeta(enc, &got); err != nil {
			t.Fatal(err)
		}
		if got.Type != m.Type || got.Packed != m.Packed || got.Compact != m.Compact || got.Expire != m.Expire ||
			got.Version != m.Version || got.Count != m.Count || !bytes.Equal(got.Value, m.Value) {
			t.Errorf("round trip %+v -> %+v", m, got)
		}
		if MetaHasData(enc) == m.Packed {
			t.Errorf("MetaHasData(%+v) = %v", m, MetaHasData(enc))
		}
	}
	old := []byte{byte(TypeHash), 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 7, 0, 0, 0, 0, 0, 0, 0, 2}
	var m Meta
	if err := DecodeMeta(old, &m); err != nil || m.Packed || m.Compact || m.Count != 2 || !MetaHasData(old) {
		t.Errorf("a format-5 hash meta: %+v, %v", m, err)
	}
	zset := append([]byte{byte(TypeZSet) | flagCompact}, old[1:]...)
	if err := DecodeMeta(zset, &m); err != nil || !m.Compact || m.Packed || !MetaHasData(zset) {
		t.Errorf("a compact sorted set in data keys: %+v, %v", m, err)
	}
	list := append([]byte{byte(TypeList) | flagCompact}, old[1:]...)
	if err := DecodeMeta(list, &m); err == nil {
		t.Error("a list meta with the compact flag decoded")
	}
}

// listNodeOf63 is the value of a node whose slot 63 alone holds elem.
func listNodeOf63(elem string) []byte {
	var n ListNode
	n.Kind[63], n.Elem[63] = ListSlotInline, []byte(elem)
	return AppendListNode(nil, &n, ^uint64(0))
}
