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
