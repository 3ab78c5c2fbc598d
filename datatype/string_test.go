package datatype

import (
	"bytes"
	"errors"
	"testing"

	"shardis/codec"
	"shardis/shard"
)

func TestString_SetLookupAppendSetRange(t *testing.T) {
	s := openStore(t)
	key := []byte("s")
	do(t, s, func(tx *shard.Tx) {
		str, err := LookupString(tx, 0, key)
		if err != nil || str.Exists() || str.Len() != 0 || str.Value() != nil {
			t.Errorf("missing string: %v", err)
		}
		if n := str.Append([]byte("ab")); n != 2 {
			t.Errorf("Append to missing: %d", n)
		}
	})
	do(t, s, func(tx *shard.Tx) {
		m, _ := tx.Meta(0, key)
		if m.Raw || string(m.Value) != "ab" {
			t.Errorf("appended to a missing key: raw %v %q", m.Raw, m.Value)
		}
		str, _ := LookupString(tx, 0, key)
		if n := str.Append([]byte("cd")); n != 4 || string(str.Value()) != "abcd" {
			t.Errorf("Append: %d %q", n, str.Value())
		}
		if n := str.SetRange(6, []byte("xy")); n != 8 {
			t.Errorf("SetRange length %d", n)
		}
	})
	do(t, s, func(tx *shard.Tx) {
		m, _ := tx.Meta(0, key)
		if !m.Raw || string(m.Value) != "abcd\x00\x00xy" {
			t.Errorf("raw %v value %q", m.Raw, m.Value)
		}
		SetString(tx, 0, key, []byte("plain"), tx.Now()+60000)
	})
	do(t, s, func(tx *shard.Tx) {
		str, _ := LookupString(tx, 0, key)
		if string(str.Value()) != "plain" || str.Expire() == 0 {
			t.Errorf("SetString: %q expire %d", str.Value(), str.Expire())
		}
		str.Replace([]byte("other")) // keeps the expire time
		str.SetExpire(0)
	})
	do(t, s, func(tx *shard.Tx) {
		m, _ := tx.Meta(0, key)
		if m.Raw || m.Expire != 0 || string(m.Value) != "other" {
			t.Errorf("after Replace and SetExpire(0): %+v", m)
		}
	})
}

func TestString_IncrBy(t *testing.T) {
	s := openStore(t)
	do(t, s, func(tx *shard.Tx) {
		str, _ := LookupString(tx, 0, []byte("n"))
		if n, v, err := str.IncrBy(-5); err != nil || n != -5 || string(v) != "-5" {
			t.Errorf("IncrBy missing: %d %q %v", n, v, err)
		}
		SetString(tx, 0, []byte("max"), []byte("9223372036854775807"), tx.Now()+60000)
		SetString(tx, 0, []byte("txt"), []byte("1.5"), 0)
	})
	do(t, s, func(tx *shard.Tx) {
		str, _ := LookupString(tx, 0, []byte("max"))
		if _, _, err := str.IncrBy(1); err != ErrOverflow {
			t.Errorf("overflow: %v", err)
		}
		if n, _, err := str.IncrBy(-7); err != nil || n != 9223372036854775800 {
			t.Errorf("IncrBy: %d %v", n, err)
		}
		txt, _ := LookupString(tx, 0, []byte("txt"))
		if _, _, err := txt.IncrBy(1); err != ErrNotInteger {
			t.Errorf("not an integer: %v", err)
		}
	})
	do(t, s, func(tx *shard.Tx) {
		str, _ := LookupString(tx, 0, []byte("max"))
		if str.Expire() == 0 {
			t.Error("IncrBy dropped the expire time")
		}
	})
}

func TestString_WrongTypeAndFromMeta(t *testing.T) {
	s := openStore(t)
	do(t, s, func(tx *shard.Tx) {
		h, _ := LookupHash(tx, 0, []byte("h"))
		h.Set([]byte("f"), []byte("v"))
		h.Save()
		if _, err := LookupString(tx, 0, []byte("h")); !errors.Is(err, ErrWrongType) {
			t.Errorf("LookupString of a hash: %v", err)
		}
		str, err := StringFromMeta(tx, 0, []byte("x"), codec.Meta{Type: codec.TypeString, Value: []byte("v")}, true)
		if err != nil || string(str.Value()) != "v" {
			t.Errorf("StringFromMeta: %v %q", err, str.Value())
		}
		SetString(tx, 0, []byte("h"), []byte("now a string"), 0) // replaces the hash
	})
	do(t, s, func(tx *shard.Tx) {
		if str, err := LookupString(tx, 0, []byte("h")); err != nil || string(str.Value()) != "now a string" {
			t.Errorf("SetString over a hash: %v", err)
		}
	})
}

// fragKeys counts key's stored fragments (data keys of its current version) in db 0.
func fragKeys(tx *shard.Tx, key []byte) int {
	m, ok := tx.Meta(0, key)
	if !ok || !m.Frag {
		return 0
	}
	it := tx.IterateData(0, key, m.Version, nil, nil, false)
	defer it.Close()
	n := 0
	for ; it.Valid(); it.Next() {
		n++
	}
	return n
}

// A string grown in place past FragMin is fragmented; writes and reads across fragment edges
// see the bytes a whole string would hold, missing and all-zero fragments cost nothing, and
// replacing the value drops the fragments.
func TestString_Fragmented_EdgesGapsAndReplace(t *testing.T) {
	s := openStore(t)
	key := []byte("bm")
	f := int64(codec.FragSize)
	model := make([]byte, 0)
	write := func(str *String, off int64, p []byte) {
		str.WriteAt(off, p)
		if need := off + int64(len(p)); int64(len(model)) < need {
			model = append(model, make([]byte, need-int64(len(model)))...)
		}
		copy(model[off:], p)
	}
	do(t, s, func(tx *shard.Tx) {
		str, _ := LookupString(tx, 0, key)
		write(&str, 10, []byte("head"))
		if str.Fragmented() {
			t.Fatal("a short string is fragmented")
		}
		write(&str, int64(codec.FragMin)-2, []byte("past the limit")) // crosses FragMin
		write(&str, 9*f-3, []byte("edge-to-edge"))                    // spans fragments 8 and 9
		write(&str, 40*f, []byte{0, 0, 1})                            // far away: a gap before it
	})
	do(t, s, func(tx *shard.Tx) {
		str, _ := LookupString(tx, 0, key)
		if !str.Fragmented() || str.Len() != int64(len(model)) || !bytes.Equal(str.Value(), model) {
			t.Fatalf("fragmented %v, length %d (want %d), value equal %v", str.Fragmented(), str.Len(), len(model), bytes.Equal(str.Value(), model))
		}
		// Fragments 0 (head), 3 and 4 (past FragMin = 4 fragments), 8, 9, 40: the gap is not stored.
		if n := fragKeys(tx, key); n != 6 {
			t.Fatalf("%d fragments stored, want 6", n)
		}
		for _, r := range [][2]int64{{0, 20}, {9*f - 5, 9*f + 12}, {8 * f, 40*f + 3}, {40*f + 2, 40*f + 3}, {0, str.Len()}} {
			got := make([]byte, r[1]-r[0])
			str.ReadAt(got, r[0])
			if !bytes.Equal(got, model[r[0]:r[1]]) {
				t.Errorf("ReadAt [%d, %d) differs", r[0], r[1])
			}
		}
		var at int64 = -1
		str.Chunks(0, str.Len(), func(a int64, b []byte) bool {
			if a <= at || !bytes.Equal(b, model[a:a+int64(len(b))]) {
				t.Errorf("chunk at %d out of order or wrong", a)
			}
			at = a
			return true
		})
		st, err := str.Stream()
		if err != nil {
			t.Fatal(err)
		}
		if got := drain(t, st); got != string(model)+"\r\n" {
			t.Errorf("streamed %d bytes, want %d and CRLF", len(got), len(model))
		}
		str.WriteAt(40*f, []byte{0, 0, 0}) // the far fragment becomes all zeros: it goes
		copy(model[40*f:], []byte{0, 0, 0})
	})
	do(t, s, func(tx *shard.Tx) {
		str, _ := LookupString(tx, 0, key)
		if n := fragKeys(tx, key); n != 5 || str.Len() != int64(len(model)) || !bytes.Equal(str.Value(), model) {
			t.Fatalf("after zeroing a fragment: %d fragments, length %d", n, str.Len())
		}
		m := str.Meta()
		str.Replace([]byte("small"))
		it := tx.IterateData(0, key, m.Version, nil, nil, false)
		if it.Valid() {
			t.Error("the old version's fragments are still readable after Replace")
		}
		it.Close()
	})
	do(t, s, func(tx *shard.Tx) {
		str, _ := LookupString(tx, 0, key)
		if str.Fragmented() || string(str.Value()) != "small" {
			t.Fatalf("after Replace: fragmented %v, %q", str.Fragmented(), str.Value())
		}
		w := NewStringWriter(tx, 0, key, 3*int64(codec.FragMin)) // replaces key at Close only
		if v, _ := LookupString(tx, 0, key); string(v.Value()) != "small" {
			t.Error("NewStringWriter replaced the key before Close")
		}
		w.WriteAt(0, bytes.Repeat([]byte{0xff}, int(f)))
		w.WriteAt(5*f+1, []byte{7})
		got := w.Close()
		want := make([]byte, 3*codec.FragMin)
		copy(want, bytes.Repeat([]byte{0xff}, int(f)))
		want[5*f+1] = 7
		if !got.Fragmented() || !bytes.Equal(got.Value(), want) || fragKeys(tx, key) != 2 {
			t.Errorf("StringWriter: fragmented %v, %d fragments", got.Fragmented(), fragKeys(tx, key))
		}
	})
}
