package shard

import (
	"testing"
	"time"

	"shardis/codec"
)

func watchKey(t *testing.T, s *Store, db int, key string, w *Watcher) {
	t.Helper()
	if err := s.Do(0, func(tx *Tx) { tx.Watch(db, []byte(key), w) }); err != nil {
		t.Fatal(err)
	}
}

func doOrFail(t *testing.T, s *Store, fn func(tx *Tx)) {
	t.Helper()
	if err := s.Do(0, fn); err != nil {
		t.Fatal(err)
	}
}

func TestWatcher_Dirty_OnlyWhenTheWatchedKeyIsWritten(t *testing.T) {
	s := openTestStore(t, t.TempDir(), 1)
	w := &Watcher{}
	watchKey(t, s, 0, "k", w)
	doOrFail(t, s, func(tx *Tx) { tx.SetMeta(0, []byte("other"), str("1")) })
	doOrFail(t, s, func(tx *Tx) { tx.SetMeta(1, []byte("k"), str("1")) }) // same key, other db
	if w.Dirty(0) {
		t.Fatal("dirty after writes to other keys")
	}
	doOrFail(t, s, func(tx *Tx) { tx.SetMeta(0, []byte("k"), str("1")) })
	if !w.Dirty(0) {
		t.Fatal("not dirty after a write to the watched key")
	}
	w.Unwatch()
	if w.Dirty(0) || w.Watching() || s.Shard(0).nWatches.Load() != 0 {
		t.Fatal("unwatch left state behind")
	}
}

func TestWatcher_Dirty_DataKeyWriteAndDelete(t *testing.T) {
	s := openTestStore(t, t.TempDir(), 1)
	doOrFail(t, s, func(tx *Tx) { tx.SetMeta(0, []byte("k"), str("v")) })
	w := &Watcher{}
	watchKey(t, s, 0, "k", w)
	doOrFail(t, s, func(tx *Tx) { tx.Delete(0, []byte("missing")) })
	if w.Dirty(0) {
		t.Fatal("dirty after deleting a missing key")
	}
	doOrFail(t, s, func(tx *Tx) { tx.Delete(0, []byte("k")) })
	if !w.Dirty(0) {
		t.Fatal("not dirty after DEL of the watched key")
	}
}

func TestWatcher_FlushDB_MarksOnlyExistingKeys(t *testing.T) {
	s := openTestStore(t, t.TempDir(), 1)
	doOrFail(t, s, func(tx *Tx) { tx.SetMeta(0, []byte("a"), str("v")) })
	wa, wb := &Watcher{}, &Watcher{}
	watchKey(t, s, 0, "a", wa)
	watchKey(t, s, 0, "b", wb) // does not exist: FLUSHDB changes nothing for it
	doOrFail(t, s, func(tx *Tx) { tx.FlushDB(0, 0) })
	if !wa.Dirty(0) || wb.Dirty(0) {
		t.Fatalf("after FLUSHDB: a dirty %v (want true), b dirty %v (want false)", wa.Dirty(0), wb.Dirty(0))
	}
}

func TestWatcher_ExpiredAtWatch_DeletionIsNoChange(t *testing.T) {
	s := openTestStore(t, t.TempDir(), 1)
	doOrFail(t, s, func(tx *Tx) {
		tx.SetMeta(0, []byte("k"), &codec.Meta{Type: codec.TypeString, Value: []byte("v"), Expire: tx.Now() - 10})
	})
	w := &Watcher{}
	watchKey(t, s, 0, "k", w)
	doOrFail(t, s, func(tx *Tx) { tx.Exists(0, []byte("k")) }) // lazy expiry deletes it
	if w.Dirty(time.Now().UnixMilli()) {
		t.Fatal("deleting a key that was expired at WATCH made the watcher dirty")
	}
	doOrFail(t, s, func(tx *Tx) { tx.SetMeta(0, []byte("k"), str("new")) })
	if !w.Dirty(0) {
		t.Fatal("setting the key again did not make the watcher dirty")
	}
}

func TestWatcher_Dirty_WhenTheExpireTimePasses(t *testing.T) {
	s := openTestStore(t, t.TempDir(), 1)
	var exp int64
	doOrFail(t, s, func(tx *Tx) {
		exp = tx.Now() + 60_000
		tx.SetMeta(0, []byte("k"), &codec.Meta{Type: codec.TypeString, Value: []byte("v"), Expire: exp})
	})
	w := &Watcher{}
	watchKey(t, s, 0, "k", w)
	if w.Dirty(exp - 1) {
		t.Fatal("dirty before the expire time")
	}
	if !w.Dirty(exp) {
		t.Fatal("not dirty once the expire time passed")
	}
}

func TestWatcher_Close_RefusesLaterWatches(t *testing.T) {
	s := openTestStore(t, t.TempDir(), 1)
	w := &Watcher{}
	w.Close()
	watchKey(t, s, 0, "k", w)
	if w.Watching() || s.Shard(0).nWatches.Load() != 0 {
		t.Fatal("a closed watcher registered a key")
	}
}
