package shard

import (
	"testing"

	"shardis/codec"
)

// A rollback forgets what was written after Save (values, deletes, key counts, binlog
// records, events) and keeps what was written before it, in the same group.
func TestTx_RollbackTo_KeepsWritesBeforeSave(t *testing.T) {
	s := openTestStore(t, t.TempDir(), 1)
	_ = s.Do(0, func(tx *Tx) {
		tx.SetMeta(0, []byte("old"), str("1"))
		tx.Log(0, []byte("old"), []byte("SET"), []byte("old"), []byte("1"))
	})
	_, lastBefore := s.Shard(0).BinlogRange()
	var sp Savepoint
	err := s.Do(0, func(tx *Tx) {
		tx.SetMeta(0, []byte("kept"), str("k"))
		tx.Log(0, []byte("kept"), []byte("SET"), []byte("kept"), []byte("k"))
		tx.Save(&sp)
		tx.SetMeta(0, []byte("kept"), str("changed"))
		tx.SetMeta(0, []byte("new"), str("n"))
		tx.Delete(0, []byte("old"))
		tx.Log(0, []byte("new"), []byte("SET"), []byte("new"), []byte("n"))
		tx.RollbackTo(&sp)
		if m, ok := tx.Meta(0, []byte("kept")); !ok || string(m.Value) != "k" {
			t.Errorf("kept after rollback: %v %q", ok, m.Value)
		}
		if tx.Exists(0, []byte("new")) {
			t.Error("a key added after Save survived the rollback")
		}
		if !tx.Exists(0, []byte("old")) {
			t.Error("a key deleted after Save is still deleted")
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := s.Shard(0).Keys(0); got != 2 {
		t.Fatalf("key count %d, want 2 (old, kept)", got)
	}
	if _, last := s.Shard(0).BinlogRange(); last != lastBefore+1 {
		t.Fatalf("binlog last %d, want %d: only the record before Save", last, lastBefore+1)
	}
	_ = s.Do(0, func(tx *Tx) {
		if m, ok := tx.Meta(0, []byte("kept")); !ok || string(m.Value) != "k" {
			t.Errorf("committed kept: %v %q", ok, m.Value)
		}
		if tx.Exists(0, []byte("new")) || !tx.Exists(0, []byte("old")) {
			t.Error("committed state has the rolled-back writes")
		}
	})
}

// Forget keeps what was written after Save.
func TestTx_Forget_KeepsWrites(t *testing.T) {
	s := openTestStore(t, t.TempDir(), 1)
	var sp Savepoint
	_ = s.Do(0, func(tx *Tx) {
		tx.Save(&sp)
		tx.SetMeta(0, []byte("a"), str("1"))
		tx.Log(0, []byte("a"), []byte("SET"), []byte("a"), []byte("1"))
		tx.Forget(&sp)
		tx.RollbackTo(&sp) // no savepoint: nothing to undo
	})
	if got := s.Shard(0).Keys(0); got != 1 {
		t.Fatalf("key count %d, want 1", got)
	}
	if _, last := s.Shard(0).BinlogRange(); last != 1 {
		t.Fatalf("binlog last %d, want 1", last)
	}
}

// A key written many times after Save is noted once: the undo log of a script that adds a
// million members to one set holds its meta's earlier state once, and a rollback still
// restores the state at Save, even when the meta was rewritten in place since.
func TestTx_Savepoint_RepeatedWritesNotedOnce(t *testing.T) {
	s := openTestStore(t, t.TempDir(), 1)
	set := func(count uint64) *codec.Meta {
		return &codec.Meta{Type: codec.TypeSet, Version: 7, Count: count}
	}
	var sp Savepoint
	err := s.Do(0, func(tx *Tx) {
		for i := range rewriteMetaMin { // big enough for SetMeta to rewrite metas in place
			tx.PutData([]byte("s"), append(codec.AppendDataPrefix(nil, 0, []byte("s"), 7), byte(i)), nil)
		}
		tx.SetMeta(0, []byte("s"), set(1))
		tx.Save(&sp)
		for i := range 1000 {
			tx.SetMeta(0, []byte("s"), set(uint64(2+i)))
		}
		if len(tx.undo) != 1 {
			t.Errorf("undo holds %d entries after 1,000 writes of one key, want 1", len(tx.undo))
		}
		tx.RollbackTo(&sp)
		if m, ok := tx.Meta(0, []byte("s")); !ok || m.Count != 1 {
			t.Errorf("after rollback: %v count %d, want the count at Save (1)", ok, m.Count)
		}
		// A second savepoint after the first ended: its own rollback goes back to its start.
		tx.Save(&sp)
		tx.SetMeta(0, []byte("s"), set(50))
		tx.Forget(&sp)
		tx.Save(&sp)
		tx.SetMeta(0, []byte("s"), set(60))
		tx.SetMeta(0, []byte("s"), set(70))
		tx.RollbackTo(&sp)
		if m, _ := tx.Meta(0, []byte("s")); m.Count != 50 {
			t.Errorf("after the second rollback: count %d, want 50", m.Count)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	_ = s.Do(0, func(tx *Tx) {
		if m, _ := tx.Meta(0, []byte("s")); m.Count != 50 {
			t.Errorf("committed count %d, want 50", m.Count)
		}
	})
}
