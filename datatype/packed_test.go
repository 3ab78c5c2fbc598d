package datatype

import (
	"bytes"
	"fmt"
	"slices"
	"testing"

	"shardis/codec"
	"shardis/shard"
)

// stored returns key's meta as committed and how many data keys it has under its version.
func stored(t *testing.T, s *shard.Store, key string) (m codec.Meta, dataKeys int) {
	t.Helper()
	do(t, s, func(tx *shard.Tx) {
		var ok bool
		if m, ok = tx.Meta(0, []byte(key)); !ok {
			t.Fatalf("%s missing", key)
		}
		m.Value = bytes.Clone(m.Value)
		it := tx.IterateData(0, []byte(key), m.Version, nil, nil, false)
		for ; it.Valid(); it.Next() {
			dataKeys++
		}
		it.Close()
	})
	return m, dataKeys
}

// The packed layout keeps entries sorted, finds them without allocating, and splices them in
// place in a buffer the handle owns as in one it does not.
func TestPacked_FindSpliceIterate(t *testing.T) {
	for _, own := range []bool{false, true} {
		c := collection{typ: codec.TypeHash, own: own}
		c.meta.Packed, c.meta.Version = true, 1
		c.meta.Value = make([]byte, 0, 4)
		for _, f := range []string{"m", "c", "x", "a", "mm"} {
			c.put([]byte(f), []byte("v"+f))
			c.own = own // a handle that does not own its buffer copies at each change
		}
		c.put([]byte("c"), []byte("a longer value"))
		c.del([]byte("x"))
		c.del([]byte("none"))
		var got []string
		x := newPackedIter(c.meta.Value, true, []byte("b"))
		for ; x.valid; x.next() {
			got = append(got, string(x.elem)+"="+string(x.val))
		}
		if want := []string{"c=a longer value", "m=vm", "mm=vmm"}; !slices.Equal(got, want) {
			t.Errorf("own %v: entries from b: %q, want %q", own, got, want)
		}
		if v, found := c.get([]byte("a")); !found || string(v) != "va" {
			t.Errorf("own %v: get a = %q %v", own, v, found)
		}
		if n := testing.AllocsPerRun(100, func() { c.get([]byte("mm")) }); n != 0 {
			t.Errorf("a lookup allocates %v times", n)
		}
	}
}

// PackedScan walks a packed meta's elements in [lower, upper), forward and backward, as a
// scan of data keys does (DUMP, RDB files).
func TestPackedScan_BoundsAndReverse(t *testing.T) {
	var v []byte
	for _, m := range []string{"a", "b", "c", "d"} {
		v = appendPackedEntry(v, false, []byte(m), nil)
	}
	m := codec.Meta{Type: codec.TypeSet, Packed: true, Value: v}
	for _, c := range []struct {
		lower, upper string
		reverse      bool
		want         string
	}{{"", "", false, "abcd"}, {"b", "d", false, "bc"}, {"b", "", true, "dcb"}} {
		var got []byte
		var lo, up []byte
		if c.lower != "" {
			lo = []byte(c.lower)
		}
		if c.upper != "" {
			up = []byte(c.upper)
		}
		err := PackedScan(&m)(lo, up, c.reverse, func(e, _ []byte) error { got = append(got, e...); return nil })
		if err != nil || string(got) != c.want {
			t.Errorf("scan [%q, %q) reverse %v: %q %v, want %q", c.lower, c.upper, c.reverse, got, err, c.want)
		}
	}
	if err := WalkElems(PackedScan(&codec.Meta{Type: codec.TypeSet, Packed: true, Value: []byte{9}}), func([]byte) error { return nil }); err == nil {
		t.Error("a corrupt packed meta scanned without an error")
	}
}

func ExampleIsIntsetMember() {
	for _, m := range []string{"12", "-7", "01", "+1", "-0", "9223372036854775808", "x"} {
		fmt.Print(IsIntsetMember([]byte(m)), " ")
	}
	// Output: true true false false false false false
}
