package shard

import (
	"errors"
	"testing"
)

// A view reads committed state and stands; a write through it fails it with ErrNeedsShard and
// changes nothing.
func TestView_ReadsCommittedAndRefusesWrites(t *testing.T) {
	s := openTestStore(t, t.TempDir(), 1)
	key := []byte("k")
	_ = s.Do(0, func(tx *Tx) { tx.SetMeta(0, key, str("v1")) })

	tx := s.View(0)
	if m, ok := tx.Meta(0, key); !ok || string(m.Value) != "v1" {
		t.Fatalf("view Meta = %q, %v", m.Value, ok)
	}
	if !s.EndView(tx) {
		t.Fatal("a read-only view did not stand")
	}

	tx = s.View(0)
	tx.SetMeta(0, key, str("v2"))
	if !errors.Is(tx.Err(), ErrNeedsShard) {
		t.Fatalf("write through a view: err %v, want ErrNeedsShard", tx.Err())
	}
	if s.EndView(tx) {
		t.Fatal("a view that tried to write stood")
	}
	_ = s.Do(0, func(tx *Tx) {
		if m, _ := tx.Meta(0, key); string(m.Value) != "v1" {
			t.Errorf("value now %q, want v1", m.Value)
		}
	})
}

// A view during which a commit of its shard landed does not stand: it may have read one key
// before the commit and another after it (a torn MGET of a transaction's two keys).
func TestView_FailsWhenACommitLandsDuringIt(t *testing.T) {
	s := openTestStore(t, t.TempDir(), 1)
	_ = s.Do(0, func(tx *Tx) {
		tx.SetMeta(0, []byte("a"), str("50"))
		tx.SetMeta(0, []byte("b"), str("50"))
	})
	tx := s.View(0)
	if m, ok := tx.Meta(0, []byte("a")); !ok || string(m.Value) != "50" {
		t.Fatalf("a = %q, %v", m.Value, ok)
	}
	if err := s.Do(0, func(tx *Tx) {
		tx.SetMeta(0, []byte("a"), str("40"))
		tx.SetMeta(0, []byte("b"), str("60"))
	}); err != nil {
		t.Fatal(err)
	}
	tx.Meta(0, []byte("b")) // reads 60: torn against a's 50
	if s.EndView(tx) {
		t.Fatal("a view that straddled a commit stood")
	}
	// A commit to another shard does not disturb it.
	s2 := openTestStore(t, t.TempDir(), 2)
	tx = s2.View(0)
	_ = s2.Do(1, func(tx *Tx) { tx.SetMeta(0, []byte("x"), str("1")) })
	if !s2.EndView(tx) {
		t.Fatal("a commit to shard 1 failed a view of shard 0")
	}
}
