package datatype

import (
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
