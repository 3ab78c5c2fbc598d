package shard

import (
	"errors"
	"testing"

	"shardis/codec"
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

// A view told to read only the key cache (a write tried in the loop) answers from the keys the
// cache holds and fails, with ErrNeedsShard, at the first one it would read from RocksDB; a
// plain view reads that key from RocksDB and stands.
func TestView_ReadCachedOnly_FailsOnAKeyTheCacheLacks(t *testing.T) {
	s, err := Open(Options{Dir: t.TempDir(), Shards: 1, Databases: 16, BlockCacheSize: 8 << 20, WriteBufferSize: 8 << 20, KeyCacheSize: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	hot, cold := []byte("hot"), []byte("cold")
	_ = s.Do(0, func(tx *Tx) {
		tx.SetMeta(0, hot, str("h"))
		tx.SetMeta(0, cold, str("c"))
	})
	_ = s.Do(0, func(tx *Tx) { tx.Meta(0, hot) }) // read by the shard: cached
	c := s.shards[0].cache
	c.mu.Lock()
	if i, ok := c.index[string(codec.AppendMetaKey(nil, 0, cold))]; ok {
		c.drop(i)
	}
	c.mu.Unlock()

	tx := s.View(0)
	tx.ReadCachedOnly()
	if m, ok := tx.Meta(0, hot); !ok || string(m.Value) != "h" {
		t.Fatalf("cached-only view of a cached key: %q, %v", m.Value, ok)
	}
	if !s.EndView(tx) {
		t.Fatal("a cached-only view of a cached key did not stand")
	}
	tx = s.View(0)
	tx.ReadCachedOnly()
	tx.Meta(0, cold)
	if !errors.Is(tx.Err(), ErrNeedsShard) {
		t.Fatalf("cached-only view of a key the cache lacks: err %v, want ErrNeedsShard", tx.Err())
	}
	s.EndView(tx)
	tx = s.View(0)
	if m, ok := tx.Meta(0, cold); !ok || string(m.Value) != "c" || !s.EndView(tx) {
		t.Fatalf("plain view of the uncached key: %q, %v", m.Value, ok)
	}
}
