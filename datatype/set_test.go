package datatype

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"shardis/codec"
	"shardis/shard"
)

func members(s *Set) string {
	var out []string
	for _, m := range s.Members() {
		out = append(out, string(m))
	}
	return strings.Join(out, " ")
}

func TestSet_AddRemoveHasSave(t *testing.T) {
	s := openStore(t)
	key := []byte("s")
	do(t, s, func(tx *shard.Tx) {
		set, err := LookupSet(tx, 0, key)
		if err != nil || set.Exists() || set.Len() != 0 || set.Has([]byte("a")) {
			t.Errorf("missing set: err %v exists %v len %d", err, set.Exists(), set.Len())
			return
		}
		if !set.Add([]byte("b")) || !set.Add([]byte("a")) || set.Add([]byte("a")) || !set.Add(nil) {
			t.Error("Add: wrong results")
		}
		if set.Save() || !set.Exists() {
			t.Error("Save of a non-empty set removed it")
		}
	})
	do(t, s, func(tx *shard.Tx) {
		set, _ := LookupSet(tx, 0, key)
		if set.Len() != 3 || !set.Has(nil) || !set.Has([]byte("a")) || set.Has([]byte("c")) {
			t.Errorf("len %d, members %q", set.Len(), members(&set))
		}
		if got := members(&set); got != " a b" {
			t.Errorf("members %q, want byte order", got)
		}
		if !set.Remove([]byte("a")) || set.Remove([]byte("a")) || set.Remove([]byte("zz")) {
			t.Error("Remove: wrong results")
		}
		set.Save()
	})
	do(t, s, func(tx *shard.Tx) {
		set, _ := LookupSet(tx, 0, key)
		if set.Len() != 2 {
			t.Errorf("len %d, want 2", set.Len())
		}
		if !set.Drop() || set.Exists() || tx.Exists(0, key) {
			t.Error("Drop left the key")
		}
	})
	if n := s.Shard(0).Keys(0); n != 0 {
		t.Fatalf("key count %d, want 0", n)
	}
}

func TestSet_WrongTypeAndFromMeta(t *testing.T) {
	s := openStore(t)
	putString(t, s, "k")
	do(t, s, func(tx *shard.Tx) {
		if _, err := LookupSet(tx, 0, []byte("k")); !errors.Is(err, ErrWrongType) {
			t.Errorf("LookupSet of a string: %v", err)
		}
		m, ok := tx.MetaRead(0, []byte("k"))
		if _, err := SetFromMeta(tx, 0, []byte("k"), m, ok); !errors.Is(err, ErrWrongType) {
			t.Errorf("SetFromMeta of a string: %v", err)
		}
		if _, err := LookupHash(tx, 0, []byte("k")); !errors.Is(err, ErrWrongType) {
			t.Errorf("LookupHash of a string: %v", err)
		}
	})
}

func fillSet(t *testing.T, s *shard.Store, key string, n int) {
	do(t, s, func(tx *shard.Tx) {
		set, _ := LookupSet(tx, 0, []byte(key))
		for i := range n {
			set.Add(fmt.Appendf(nil, "m%02d", i))
		}
		set.Save()
	})
}

// NewSet replaces a key of any type, and can be built while the old value is read.
func TestSet_NewSetReplaces(t *testing.T) {
	s := openStore(t)
	fillSet(t, s, "s", 5)
	do(t, s, func(tx *shard.Tx) {
		old, _ := LookupSet(tx, 0, []byte("s"))
		out := NewSet(tx, 0, []byte("s"))
		it := old.Iter(nil)
		for ; it.Valid(); it.Next() {
			if m := it.Member(); m[len(m)-1]%2 == 0 {
				out.AddNew(m)
			}
		}
		it.Close()
		out.Save()
	})
	do(t, s, func(tx *shard.Tx) {
		set, _ := LookupSet(tx, 0, []byte("s"))
		if got := members(&set); got != "m00 m02 m04" {
			t.Errorf("members %q", got)
		}
		empty := NewSet(tx, 0, []byte("s"))
		empty.Save() // saved empty: deletes the key
	})
	putString(t, s, "str")
	do(t, s, func(tx *shard.Tx) {
		if tx.Exists(0, []byte("s")) {
			t.Error("empty NewSet kept the key")
		}
		out := NewSet(tx, 0, []byte("str"))
		out.AddNew([]byte("x"))
		out.Save()
	})
	do(t, s, func(tx *shard.Tx) {
		if set, err := LookupSet(tx, 0, []byte("str")); err != nil || set.Len() != 1 {
			t.Errorf("string not replaced by a set: %v", err)
		}
	})
}

func TestSet_IterSeekRandom(t *testing.T) {
	s := openStore(t)
	fillSet(t, s, "s", 30)
	var st *shard.Stream
	do(t, s, func(tx *shard.Tx) {
		set, _ := LookupSet(tx, 0, []byte("s"))
		it := set.Iter([]byte("m27"))
		var got []string
		for ; it.Valid(); it.Next() {
			got = append(got, string(it.Member()))
		}
		it.Close()
		if strings.Join(got, " ") != "m27 m28 m29" {
			t.Errorf("Iter from m27: %v", got)
		}
		it = set.Iter(nil)
		it.Seek([]byte("m100")) // between m10 and m11
		if !it.Valid() || string(it.Member()) != "m11" {
			t.Errorf("Seek m100: at %q", it.Member())
		}
		it.Close()
		at := set.At([]uint64{1, 1, 29})
		if string(at[0]) != "m01" || string(at[1]) != "m01" || string(at[2]) != "m29" {
			t.Errorf("At: %q", at)
		}
		for range 20 {
			if r := set.Random(); !set.Has(r) {
				t.Errorf("Random gave %q", r)
			}
			sample := set.Sample(10)
			sorted := slices.SortedFunc(slices.Values(sample), bytes.Compare)
			if len(sample) != 10 || len(slices.CompactFunc(sorted, bytes.Equal)) != 10 {
				t.Errorf("Sample not 10 distinct members: %q", sample)
			}
			if d := set.Draw(50); len(d) != 50 || !set.Has(d[0]) {
				t.Errorf("Draw: %d members", len(d))
			}
		}
		var err error
		if st, err = set.Stream(func(w *codec.Writer, m, _ []byte) { w.Bulk(m) }); err != nil {
			t.Error(err)
		}
	})
	if st == nil {
		t.FailNow()
	}
	if out := drain(t, st); strings.Count(out, "$3\r\n") != 30 {
		t.Fatalf("stream: %q", out)
	}
}

// addMembers adds members to the set at key in one transaction.
func addMembers(t *testing.T, s *shard.Store, key string, members ...string) {
	t.Helper()
	do(t, s, func(tx *shard.Tx) {
		set, _ := LookupSet(tx, 0, []byte(key))
		for _, m := range members {
			set.Add([]byte(m))
		}
		set.Save()
	})
}

func numbered(prefix string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprint(prefix, i)
	}
	return out
}

// A small set is packed in its meta: an intset (Redis's encoding while every member is an
// integer, up to set-max-intset-entries) of up to 512 members, else up to 128 members of up to
// 64 bytes (a hashtable to OBJECT ENCODING, as Redis 7.0 has no listpack sets). The add that
// passes a limit converts it to data keys in its transaction; every member stays readable, in
// byte order, and a converted set never packs again.
func TestSet_PastPackLimits_ConvertedToDataKeys(t *testing.T) {
	long := strings.Repeat("x", 65)
	for _, c := range []struct {
		name     string
		limits   shard.EncodingLimits
		members  []string
		packed   bool
		encoding string
	}{
		{"512 integers", shard.DefaultEncodingLimits, numbered("", 512), true, "intset"},
		{"513 integers", shard.DefaultEncodingLimits, numbered("", 513), false, "hashtable"},
		{"128 strings", shard.DefaultEncodingLimits, numbered("m", 128), true, "hashtable"},
		{"129 strings", shard.DefaultEncodingLimits, numbered("m", 129), false, "hashtable"},
		{"integers and a string", shard.DefaultEncodingLimits, append(numbered("", 5), "x"), true, "hashtable"},
		{"200 integers and a string", shard.DefaultEncodingLimits, append(numbered("", 200), "x"), false, "hashtable"},
		{"a long member", shard.DefaultEncodingLimits, []string{"a", long}, false, "hashtable"},
		{"not canonical", shard.DefaultEncodingLimits, []string{"1", "01"}, true, "hashtable"},
		{"intset limit 2", shard.EncodingLimits{HashEntries: 512, HashValue: 64, SetIntEntries: 2}, []string{"1", "2", "3"}, true, "hashtable"},
		{"intset limit 0", shard.EncodingLimits{HashEntries: 512, HashValue: 64}, []string{"1"}, true, "hashtable"},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := openStore(t)
			s.SetEncodingLimits(c.limits)
			// In two commands, so the second converts a stored set.
			addMembers(t, s, "s", c.members[:len(c.members)/2]...)
			addMembers(t, s, "s", c.members[len(c.members)/2:]...)
			m, dataKeys := stored(t, s, "s")
			if m.Packed != c.packed || Encoding(&m) != c.encoding || m.Count != uint64(len(c.members)) {
				t.Fatalf("packed %v encoding %s count %d, want %v %s %d", m.Packed, Encoding(&m), m.Count, c.packed, c.encoding, len(c.members))
			}
			if wantKeys := map[bool]int{true: 0, false: len(c.members)}[c.packed]; dataKeys != wantKeys {
				t.Fatalf("%d data keys, want %d", dataKeys, wantKeys)
			}
			want := strings.Join(slices.Sorted(slices.Values(c.members)), " ")
			do(t, s, func(tx *shard.Tx) {
				set, _ := LookupSet(tx, 0, []byte("s"))
				if got := members(&set); got != want {
					t.Fatalf("members not the %d added in byte order", len(c.members))
				}
				for _, mb := range c.members {
					if !set.Has([]byte(mb)) {
						t.Fatalf("%q missing", mb)
					}
				}
				for _, mb := range c.members[1:] {
					set.Remove([]byte(mb))
				}
				set.Save()
			})
			if after, n := stored(t, s, "s"); after.Packed != c.packed || Encoding(&after) != c.encoding || after.Count != 1 || n != map[bool]int{true: 0, false: 1}[c.packed] {
				t.Fatalf("after removes: packed %v encoding %s count %d, %d data keys", after.Packed, Encoding(&after), after.Count, n)
			}
		})
	}
}

// The same members give the same walks, seeks, positions and stream whether packed or in
// data keys.
func TestSet_BothForms_WalkAlike(t *testing.T) {
	results := map[bool]string{}
	for _, packed := range []bool{true, false} {
		s := openStore(t)
		n := 30
		if !packed {
			n = 200 // past 128 strings: data keys; then back to 30
		}
		fillSet(t, s, "s", n)
		do(t, s, func(tx *shard.Tx) {
			set, _ := LookupSet(tx, 0, []byte("s"))
			for i := 30; i < n; i++ {
				set.Remove(fmt.Appendf(nil, "m%02d", i))
			}
			set.Save()
		})
		var out strings.Builder
		var st *shard.Stream
		do(t, s, func(tx *shard.Tx) {
			set, _ := LookupSet(tx, 0, []byte("s"))
			if m := set.Meta(); m.Packed != packed {
				t.Fatalf("packed %v, want %v", m.Packed, packed)
			}
			it := set.Iter([]byte("m27"))
			for ; it.Valid(); it.Next() {
				fmt.Fprintf(&out, "%s ", it.Member())
			}
			it.Close()
			it = set.Iter(nil)
			it.Seek([]byte("m100"))
			fmt.Fprintf(&out, "seek:%s ", it.Member())
			it.Seek([]byte("m295"))
			fmt.Fprintf(&out, "valid:%v ", it.Valid())
			it.Close()
			fmt.Fprintf(&out, "at:%q ", set.At([]uint64{1, 1, 29}))
			st, _ = set.Stream(func(w *codec.Writer, m, _ []byte) { w.Bulk(m) })
		})
		out.WriteString(drain(t, st))
		results[packed] = out.String()
	}
	if results[true] != results[false] || !strings.HasPrefix(results[true], "m27 m28 m29 seek:m11 valid:false") {
		t.Fatalf("packed: %q\ndata keys: %q", results[true], results[false])
	}
}
