package shard

import (
	"errors"
	"sync"
	"testing"

	"shardis/codec"
)

// eventLog collects the events a store publishes.
type eventLog struct {
	mu  sync.Mutex
	got []string
}

func (l *eventLog) sink(events []Event) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, ev := range events {
		l.got = append(l.got, ev.Name+" "+string(ev.Key))
	}
}

func (l *eventLog) take() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	got := l.got
	l.got = nil
	return got
}

func sameEvents(t *testing.T, got []string, want ...string) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("events %q, want %q", got, want)
	}
	for i := range got {
		if got[i] != want[i] {
			t.Fatalf("events %q, want %q", got, want)
		}
	}
}

const testClassA, testClassB = 1 << 20, 1 << 21

func TestTx_Notify_PublishedAtCommitInOrder(t *testing.T) {
	s := openTestStore(t, t.TempDir(), 1)
	var log eventLog
	s.SetEvents(testClassA|EventNew, log.sink)
	doOrFail(t, s, func(tx *Tx) {
		tx.SetMeta(0, []byte("k"), str("1")) // "new"
		tx.Notify(testClassA, "set", 0, []byte("k"))
		tx.Notify(testClassB, "filtered", 0, []byte("k")) // class not enabled
		if got := log.take(); len(got) != 0 {
			t.Errorf("published before the commit: %q", got)
		}
	})
	sameEvents(t, log.take(), "new k", "set k")
	doOrFail(t, s, func(tx *Tx) { tx.SetMeta(0, []byte("k"), str("2")) }) // an overwrite is not new
	sameEvents(t, log.take())
}

func TestTx_Notify_FailedCommitPublishesNothing(t *testing.T) {
	s := openTestStore(t, t.TempDir(), 1)
	var log eventLog
	s.SetEvents(testClassA, log.sink)
	err := s.Do(0, func(tx *Tx) {
		tx.SetMeta(0, []byte("k"), str("1"))
		tx.Notify(testClassA, "set", 0, []byte("k"))
		tx.Fail(errors.New("disk on fire"))
	})
	if err == nil {
		t.Fatal("the failed transaction committed")
	}
	sameEvents(t, log.take())
	// The next transaction starts clean.
	doOrFail(t, s, func(tx *Tx) { tx.Notify(testClassA, "later", 0, []byte("x")) })
	sameEvents(t, log.take(), "later x")
}

func TestTx_Notify_ExpiredAndKeyMiss(t *testing.T) {
	s := openTestStore(t, t.TempDir(), 1)
	var log eventLog
	s.SetEvents(EventExpired|EventKeyMiss, log.sink)
	doOrFail(t, s, func(tx *Tx) {
		m := str("v")
		m.Expire = tx.Now() - 1000 // already past: the next lookup expires it
		tx.SetMeta(0, []byte("old"), m)
	})
	log.take()
	doOrFail(t, s, func(tx *Tx) {
		prev := tx.SetReadLookups(true)
		defer tx.SetReadLookups(prev)
		if _, ok := tx.Meta(0, []byte("old")); ok {
			t.Error("an expired key was found")
		}
		tx.Meta(0, []byte("never"))
	})
	sameEvents(t, log.take(), "expired old", "keymiss old", "keymiss never")
	// A write's lookups are not read misses, unless the command says so (MetaRead).
	doOrFail(t, s, func(tx *Tx) {
		tx.Meta(0, []byte("w"))
		tx.MetaRead(0, []byte("r"))
	})
	sameEvents(t, log.take(), "keymiss r")
}

func TestTx_Notify_ActiveExpiry(t *testing.T) {
	s := openTestStore(t, t.TempDir(), 1)
	var log eventLog
	s.SetEvents(EventExpired, log.sink)
	doOrFail(t, s, func(tx *Tx) {
		m := codec.Meta{Type: codec.TypeString, Value: []byte("v"), Expire: tx.Now() - 1}
		tx.SetMeta(3, []byte("gone"), &m)
	})
	if n, err := s.Shard(0).ExpireDue(100); err != nil || n != 1 {
		t.Fatalf("ExpireDue = %d, %v", n, err)
	}
	sameEvents(t, log.take(), "expired gone")
}

func TestStore_SetEvents_NoClassesNoEvents(t *testing.T) {
	s := openTestStore(t, t.TempDir(), 1)
	var log eventLog
	s.SetEvents(0, log.sink)
	doOrFail(t, s, func(tx *Tx) {
		tx.SetMeta(0, []byte("k"), str("1"))
		tx.Notify(testClassA, "set", 0, []byte("k"))
		tx.MetaRead(0, []byte("missing"))
	})
	sameEvents(t, log.take())
}
