package datatype

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"shardis/codec"
	"shardis/shard"
)

func TestHash_SetGetDeleteSave(t *testing.T) {
	s := openStore(t)
	key := []byte("h")
	do(t, s, func(tx *shard.Tx) {
		h, err := LookupHash(tx, 0, key)
		if err != nil || h.Exists() || h.Len() != 0 {
			t.Errorf("missing hash: err %v exists %v len %d", err, h.Exists(), h.Len())
			return
		}
		if _, ok := h.Get([]byte("f")); ok {
			t.Error("field of a missing hash found")
			return
		}
		if !h.Set([]byte("f"), []byte("v")) || h.Set([]byte("f"), []byte("w")) || !h.Set([]byte("g"), []byte("x")) {
			t.Error("Set: wrong added results")
			return
		}
		if h.Save() || !h.Exists() {
			t.Error("Save of a non-empty hash removed it")
			return
		}
	})
	do(t, s, func(tx *shard.Tx) {
		h, err := LookupHash(tx, 0, key)
		if err != nil || !h.Exists() || h.Len() != 2 {
			t.Errorf("err %v exists %v len %d, want a hash of 2", err, h.Exists(), h.Len())
			return
		}
		if v, ok := h.Get([]byte("f")); !ok || string(v) != "w" {
			t.Errorf("Get f = %q %v", v, ok)
			return
		}
		if h.SetNX([]byte("f"), []byte("z")) || !h.SetNX([]byte("n"), []byte("1")) {
			t.Error("SetNX: wrong results")
			return
		}
		if !h.Delete([]byte("f")) || h.Delete([]byte("f")) || h.Delete([]byte("none")) {
			t.Error("Delete: wrong results")
			return
		}
		if h.Len() != 2 {
			t.Errorf("len %d, want 2", h.Len())
			return
		}
		h.Save()
	})
	do(t, s, func(tx *shard.Tx) {
		h, _ := LookupHash(tx, 0, key)
		h.Delete([]byte("g"))
		h.Delete([]byte("n"))
		if !h.Save() || h.Exists() {
			t.Error("Save of an empty hash kept the key")
			return
		}
	})
	do(t, s, func(tx *shard.Tx) {
		if tx.Exists(0, key) {
			t.Error("empty hash still stored")
			return
		}
	})
	if n := s.Shard(0).Keys(0); n != 0 {
		t.Errorf("key count %d, want 0", n)
		return
	}
}

func TestHash_WrongType(t *testing.T) {
	s := openStore(t)
	putString(t, s, "k")
	do(t, s, func(tx *shard.Tx) {
		if _, err := LookupHash(tx, 0, []byte("k")); !errors.Is(err, ErrWrongType) {
			t.Errorf("err %v, want ErrWrongType", err)
			return
		}
	})
}

func TestHash_IncrBy(t *testing.T) {
	s := openStore(t)
	key := []byte("h")
	do(t, s, func(tx *shard.Tx) {
		h, _ := LookupHash(tx, 0, key)
		if n, v, err := h.IncrBy([]byte("n"), 5); err != nil || n != 5 || string(v) != "5" {
			t.Errorf("IncrBy new field: %d %q %v", n, v, err)
			return
		}
		if n, _, err := h.IncrBy([]byte("n"), -7); err != nil || n != -2 {
			t.Errorf("IncrBy: %d %v", n, err)
			return
		}
		h.Set([]byte("s"), []byte("abc"))
		h.Set([]byte("z"), []byte("01"))
		h.Set([]byte("max"), []byte("9223372036854775807"))
		if _, _, err := h.IncrBy([]byte("s"), 1); err != ErrHashNotInteger {
			t.Errorf("not an integer: %v", err)
			return
		}
		if _, _, err := h.IncrBy([]byte("z"), 1); err != ErrHashNotInteger {
			t.Errorf("leading zero: %v", err)
			return
		}
		if _, _, err := h.IncrBy([]byte("max"), 1); err != ErrOverflow {
			t.Errorf("overflow: %v", err)
			return
		}
		if h.Len() != 4 {
			t.Errorf("len %d, want 4", h.Len())
			return
		}
		h.Save()
	})
	do(t, s, func(tx *shard.Tx) {
		h, _ := LookupHash(tx, 0, key)
		if v, _ := h.Get([]byte("n")); string(v) != "-2" {
			t.Errorf("n = %q", v)
			return
		}
		if v, _ := h.Get([]byte("max")); string(v) != "9223372036854775807" {
			t.Errorf("failed increment changed the value: %q", v)
			return
		}
	})
}

// fill gives hash key the fields f00..f<n-1> with values v00…
func fillHash(t *testing.T, s *shard.Store, key string, n int) {
	do(t, s, func(tx *shard.Tx) {
		h, _ := LookupHash(tx, 0, []byte(key))
		for i := range n {
			h.Set(fmt.Appendf(nil, "f%02d", i), fmt.Appendf(nil, "v%02d", i))
		}
		h.Save()
	})
}

func TestHash_IterAtStream(t *testing.T) {
	s := openStore(t)
	fillHash(t, s, "h", 20)
	var st *shard.Stream
	do(t, s, func(tx *shard.Tx) {
		h, _ := LookupHash(tx, 0, []byte("h"))
		var got []string
		it := h.Iter([]byte("f15"))
		for ; it.Valid(); it.Next() {
			got = append(got, string(it.Field())+"="+string(it.Value()))
		}
		it.Close()
		if s := strings.Join(got, " "); s != "f15=v15 f16=v16 f17=v17 f18=v18 f19=v19" {
			t.Errorf("Iter from f15: %s", s)
			return
		}
		got = got[:0]
		h.At([]uint64{0, 3, 3, 19}, func(i int, f, v []byte) { got = append(got, fmt.Sprintf("%d %s", i, f)) })
		if s := strings.Join(got, " "); s != "0 f00 1 f03 2 f03 3 f19" {
			t.Errorf("At: %s", s)
			return
		}
		var err error
		if st, err = h.Stream(func(w *codec.Writer, f, v []byte) { w.Bulk(f); w.Bulk(v) }); err != nil {
			t.Error(err)
		}
	})
	if st == nil {
		t.FailNow()
	}
	if out := drain(t, st); !strings.HasPrefix(out, "$3\r\nf00\r\n$3\r\nv00\r\n") || strings.Count(out, "$3") != 40 {
		t.Errorf("stream: %q", out)
		return
	}
	do(t, s, func(tx *shard.Tx) {
		h, _ := LookupHash(tx, 0, []byte("missing"))
		it := h.Iter(nil)
		if it.Valid() {
			t.Error("iterator of a missing hash not empty")
			return
		}
		it.Close()
		called := false
		h.At([]uint64{0}, func(int, []byte, []byte) { called = true })
		if called {
			t.Error("At on a missing hash found a field")
			return
		}
	})
}

// A hash overwritten by another value loses its fields: a new hash at the key starts empty.
func TestHash_NewVersionAfterDelete(t *testing.T) {
	s := openStore(t)
	fillHash(t, s, "h", 3)
	do(t, s, func(tx *shard.Tx) {
		tx.Delete(0, []byte("h"))
		h, _ := LookupHash(tx, 0, []byte("h"))
		h.Set([]byte("new"), []byte("1"))
		h.Save()
	})
	do(t, s, func(tx *shard.Tx) {
		h, _ := LookupHash(tx, 0, []byte("h"))
		if _, ok := h.Get([]byte("f00")); ok || h.Len() != 1 {
			t.Errorf("old field visible or len %d", h.Len())
			return
		}
	})
}

// Setting a field to the value it holds writes nothing: a read-only view, which fails at the
// first write, takes it. A new value or a new field is a write.
func TestHash_SetToTheValueHeld_WritesNothing(t *testing.T) {
	s := openStore(t)
	key := []byte("h")
	do(t, s, func(tx *shard.Tx) {
		h, _ := LookupHash(tx, 0, key)
		h.Set([]byte("f"), []byte("v"))
		h.Save()
	})
	for _, c := range []struct {
		field, val string
		writes     bool
	}{{"f", "v", false}, {"f", "w", true}, {"g", "v", true}} {
		tx := s.View(0)
		h, err := LookupHash(tx, 0, key)
		if err != nil || !h.Exists() {
			t.Fatalf("LookupHash in a view: %v, exists %v", err, h.Exists())
		}
		added := h.Set([]byte(c.field), []byte(c.val))
		if c.writes {
			h.Save() // a packed hash's changes are written by its Save
		}
		if wrote := !s.EndView(tx); wrote != c.writes || added != (c.field == "g") {
			t.Errorf("Set(%s, %s): wrote %v added %v, want wrote %v", c.field, c.val, wrote, added, c.writes)
		}
	}
}

// fieldsOf returns a hash's fields and values in iteration order, as "f=v".
func fieldsOf(t *testing.T, s *shard.Store, key string) []string {
	t.Helper()
	var out []string
	do(t, s, func(tx *shard.Tx) {
		h, _ := LookupHash(tx, 0, []byte(key))
		it := h.Iter(nil)
		for ; it.Valid(); it.Next() {
			out = append(out, string(it.Field())+"="+string(it.Value()))
		}
		it.Close()
	})
	return out
}

// A small hash is packed in its meta (no data key) and listpack; the write that passes a
// limit converts it to data keys in its transaction: past 128 fields it stays listpack (Redis's
// limit is hash-max-listpack-entries, 512), a field or value over hash-max-listpack-value, or
// more fields than hash-max-listpack-entries, makes it a hashtable. Every field reads back, in
// byte order, whatever the form, and a converted hash never packs again.
func TestHash_PastPackLimits_ConvertedToDataKeys(t *testing.T) {
	long := strings.Repeat("x", 65)
	for _, c := range []struct {
		name     string
		limits   shard.EncodingLimits
		fields   int
		last     [2]string // the last write: field, value ("" for none)
		packed   bool
		encoding string
	}{
		{"128 fields", shard.DefaultEncodingLimits, 128, [2]string{}, true, "listpack"},
		{"129 fields", shard.DefaultEncodingLimits, 129, [2]string{}, false, "listpack"},
		{"513 fields", shard.DefaultEncodingLimits, 513, [2]string{}, false, "hashtable"},
		{"long value", shard.DefaultEncodingLimits, 3, [2]string{"f00", long}, false, "hashtable"},
		{"long field", shard.DefaultEncodingLimits, 3, [2]string{long, "v"}, false, "hashtable"},
		{"64-byte value", shard.DefaultEncodingLimits, 3, [2]string{"f01", long[1:]}, true, "listpack"},
		{"value at the same value", shard.DefaultEncodingLimits, 1, [2]string{"f00", "v00"}, true, "listpack"},
		{"entries limit 2", shard.EncodingLimits{HashEntries: 2, HashValue: 64, SetIntEntries: 512}, 3, [2]string{}, false, "hashtable"},
		{"value limit 2", shard.EncodingLimits{HashEntries: 512, HashValue: 2, SetIntEntries: 512}, 1, [2]string{}, false, "hashtable"},
		{"entries limit 0", shard.EncodingLimits{HashEntries: 0, HashValue: 64, SetIntEntries: 512}, 1, [2]string{}, false, "hashtable"},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := openStore(t)
			s.SetEncodingLimits(c.limits)
			want := map[string]string{}
			fillHash(t, s, "h", c.fields)
			for i := range c.fields {
				want[fmt.Sprintf("f%02d", i)] = fmt.Sprintf("v%02d", i)
			}
			if c.last[0] != "" {
				do(t, s, func(tx *shard.Tx) {
					h, _ := LookupHash(tx, 0, []byte("h"))
					h.Set([]byte(c.last[0]), []byte(c.last[1]))
					h.Save()
				})
				want[c.last[0]] = c.last[1]
			}
			m, dataKeys := stored(t, s, "h")
			if m.Packed != c.packed || Encoding(&m) != c.encoding || m.Count != uint64(len(want)) {
				t.Fatalf("packed %v encoding %s count %d, want %v %s %d", m.Packed, Encoding(&m), m.Count, c.packed, c.encoding, len(want))
			}
			if wantKeys := map[bool]int{true: 0, false: len(want)}[c.packed]; dataKeys != wantKeys {
				t.Fatalf("%d data keys, want %d", dataKeys, wantKeys)
			}
			var wantList []string
			for _, f := range slices.Sorted(maps.Keys(want)) {
				wantList = append(wantList, f+"="+want[f])
			}
			if got := fieldsOf(t, s, "h"); !slices.Equal(got, wantList) {
				t.Fatalf("%d fields, want %d in byte order", len(got), len(wantList))
			}
			// Deleting back to one field keeps the form: Redis never converts back.
			do(t, s, func(tx *shard.Tx) {
				h, _ := LookupHash(tx, 0, []byte("h"))
				for f := range want {
					if f != "f00" {
						h.Delete([]byte(f))
					}
				}
				h.Save()
			})
			if after, n := stored(t, s, "h"); after.Packed != c.packed || Encoding(&after) != c.encoding || after.Count != 1 || n != map[bool]int{true: 0, false: 1}[c.packed] {
				t.Fatalf("after deletes: packed %v encoding %s count %d, %d data keys", after.Packed, Encoding(&after), after.Count, n)
			}
		})
	}
}

// A hash a format-5 build wrote (a meta without flags, a data key per field) is read and
// written in place, and stays in that layout.
func TestHash_WrittenByFormat5Build_KeepsDataKeys(t *testing.T) {
	s := openStore(t)
	key := []byte("h")
	do(t, s, func(tx *shard.Tx) {
		m := codec.Meta{Type: codec.TypeHash, Version: tx.NewVersion(key), Count: 2}
		for _, f := range []string{"a", "b"} {
			tx.PutData(key, append(tx.DataPrefix(0, key, m.Version), f...), []byte("v"+f))
		}
		tx.SetMeta(0, key, &m)
	})
	do(t, s, func(tx *shard.Tx) {
		h, _ := LookupHash(tx, 0, key)
		if v, ok := h.Get([]byte("b")); !ok || string(v) != "vb" {
			t.Fatalf("Get b = %q %v", v, ok)
		}
		h.Set([]byte("c"), []byte("vc"))
		h.Delete([]byte("a"))
		h.Save()
	})
	m, n := stored(t, s, "h")
	if m.Packed || m.Compact || n != 2 || Encoding(&m) != "hashtable" {
		t.Fatalf("packed %v compact %v, %d data keys", m.Packed, m.Compact, n)
	}
	if got := fieldsOf(t, s, "h"); !slices.Equal(got, []string{"b=vb", "c=vc"}) {
		t.Fatalf("fields %q", got)
	}
}

// The same fields give the same walks, positions and stream whether packed or in data keys.
func TestHash_BothForms_WalkAlike(t *testing.T) {
	results := map[bool]string{}
	for _, packed := range []bool{true, false} {
		s := openStore(t)
		if !packed {
			s.SetEncodingLimits(shard.EncodingLimits{HashValue: 64, SetIntEntries: 512})
		}
		fillHash(t, s, "h", 20)
		var out strings.Builder
		var st *shard.Stream
		do(t, s, func(tx *shard.Tx) {
			h, _ := LookupHash(tx, 0, []byte("h"))
			if m := h.Meta(); m.Packed != packed {
				t.Fatalf("packed %v, want %v", m.Packed, packed)
			}
			it := h.Iter([]byte("f150"))
			for ; it.Valid(); it.Next() {
				fmt.Fprintf(&out, "%s=%s ", it.Field(), it.Value())
			}
			it.Close()
			h.At([]uint64{0, 3, 3, 19}, func(i int, f, v []byte) { fmt.Fprintf(&out, "%d:%s ", i, f) })
			st, _ = h.Stream(func(w *codec.Writer, f, v []byte) { w.Bulk(f); w.Bulk(v) })
		})
		out.WriteString(drain(t, st))
		results[packed] = out.String()
	}
	if results[true] != results[false] || !strings.HasPrefix(results[true], "f16=v16 ") {
		t.Fatalf("packed: %q\ndata keys: %q", results[true], results[false])
	}
}
