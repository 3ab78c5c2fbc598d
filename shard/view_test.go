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
