package datatype

import (
	"errors"
	"fmt"
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
