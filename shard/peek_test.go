package shard

import (
	"testing"
	"time"

	"shardis/codec"
)

// PeekMeta reads committed state: a transaction's pending writes do not show, its committed
// ones do, and an expired key is left to the shard.
func TestPeekMeta_CommittedStateOnly(t *testing.T) {
	s := openTestStore(t, t.TempDir(), 1)
	key := []byte("k")
	now := time.Now().UnixMilli()
	var buf []byte
	peek := func() (string, bool, bool) {
		var m codec.Meta
		var exists, sure bool
		m, exists, sure, _, buf = s.PeekMeta(0, key, now, buf)
		return string(m.Value), exists, sure
	}
	if _, exists, sure := peek(); exists || !sure {
		t.Fatalf("absent key: exists %v, sure %v", exists, sure)
	}
	_ = s.Do(0, func(tx *Tx) {
		tx.SetMeta(0, key, str("v1"))
		if _, exists, _ := peek(); exists {
			t.Error("an uncommitted write is visible")
		}
	})
	if v, exists, sure := peek(); v != "v1" || !exists || !sure {
		t.Fatalf("after commit: %q %v %v", v, exists, sure)
	}
	_ = s.Do(0, func(tx *Tx) {
		m := str("v2")
		m.Expire = now - 1
		tx.SetMeta(0, key, m)
	})
	if _, _, sure := peek(); sure {
		t.Fatal("an expired key must be left to the shard")
	}
}

// A reader that missed the cache and read RocksDB must not insert what it read if a commit
// was written through meanwhile: that value may be stale, and nothing would ever fix it.
func TestKeyCache_PutIfEpoch_RefusesAfterACommit(t *testing.T) {
	s := openTestStore(t, t.TempDir(), 1)
	sh := s.shards[0]
	key := []byte("k")
	mk := codec.AppendMetaKey(nil, 0, key)
	_ = s.Do(0, func(tx *Tx) { tx.SetMeta(0, key, str("old")) })
	sh.cache.setBudget(0) // empty the cache: the reader misses
	sh.cache.setBudget(1 << 20)
	epoch := sh.cache.snapshotEpoch()
	stale := codec.AppendMeta(nil, str("old"))
	_ = s.Do(0, func(tx *Tx) { tx.SetMeta(0, key, str("new")) }) // a commit between read and insert
	sh.cache.putIfEpoch(mk, stale, true, epoch)
	m, _, _, _, _ := s.PeekMeta(0, key, time.Now().UnixMilli(), nil)
	if string(m.Value) != "new" {
		t.Fatalf("GET would answer %q, want new", m.Value)
	}
}
