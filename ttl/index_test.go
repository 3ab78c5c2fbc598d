package ttl

import (
	"bytes"
	"testing"
)

// The TTL entry of docs/ENCODING.md's example.
func TestAppendKey_DocExample(t *testing.T) {
	want := []byte{0x74, 0, 0, 1, 0x8b, 0xcf, 0xe5, 0x7b, 0x88, 0, '{', 'u', '}', '1'}
	k := AppendKey(nil, 1700000005000, 0, []byte("{u}1"))
	if !bytes.Equal(k, want) {
		t.Fatalf("% x", k)
	}
	at, db, key, ok := DecodeKey(k)
	if !ok || at != 1700000005000 || db != 0 || string(key) != "{u}1" {
		t.Fatalf("decode: %v %v %q %v", at, db, key, ok)
	}
}

func TestUpperBound_OrdersAfterDueEntries(t *testing.T) {
	due := AppendKey(nil, 100, 3, []byte("zzz"))
	later := AppendKey(nil, 101, 0, nil)
	ub := UpperBound(100)
	if bytes.Compare(due, ub) >= 0 || bytes.Compare(later, ub) < 0 {
		t.Fatalf("bound % x vs due % x, later % x", ub, due, later)
	}
}
