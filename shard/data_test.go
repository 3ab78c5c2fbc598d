package shard

import (
	"fmt"
	"testing"
	"time"

	"shardis/codec"
)

// buildHash writes a hash of n fields under key straight through transactions.
func buildHash(t testing.TB, s *Store, key []byte, n int) {
	t.Helper()
	var version uint64
	_ = s.Do(0, func(tx *Tx) { version = tx.NewVersion(key) })
	for start := 0; start < n; start += 10000 {
		err := s.Do(0, func(tx *Tx) {
			for i := start; i < min(start+10000, n); i++ {
				tx.PutData(key, append(tx.DataPrefix(0, key, version), fmt.Sprintf("field:%08d", i)...), []byte("value-value-value"))
			}
			tx.SetMeta(0, key, &codec.Meta{Type: codec.TypeHash, Version: version, Count: uint64(min(start+10000, n))})
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}

// Deleting a big collection writes one range delete, so it is as cheap as deleting a string,
// and after compaction the space is back.
func TestDelete_BigCollection_O1AndSpaceReclaimed(t *testing.T) {
	s := openTestStore(t, t.TempDir(), 1)
	key := []byte("big")
	buildHash(t, s, key, 200_000)
	s.Compact()
	before := s.LiveDataBytes(0)
	start := time.Now()
	if err := s.Do(0, func(tx *Tx) {
		if !tx.Delete(0, key) {
			t.Error("big hash not found")
		}
	}); err != nil {
		t.Fatal(err)
	}
	// O(1) is what matters; the time is logged, not asserted (a busy machine makes any bound
	// flaky). The data keys left behind are checked below.
	t.Logf("deleting 200k elements took %v", time.Since(start))
	_ = s.Do(0, func(tx *Tx) {
		it := tx.Iterate(key, []byte{codec.PrefixData}, []byte{codec.PrefixData + 1}, false)
		defer it.Close()
		if it.Valid() {
			t.Errorf("a data key is still visible: %q", it.Key())
		}
	})
	s.Compact()
	after := s.LiveDataBytes(0)
	t.Logf("live data %d bytes before, %d after DEL and compaction", before, after)
	if before < 100<<10 || after > before/20 {
		t.Fatalf("space not reclaimed: %d bytes before, %d after", before, after)
	}
}

// A small collection is dropped key by key: no range tombstones for everyday deletes.
func TestDelete_SmallCollection_PointDeletes(t *testing.T) {
	s := openTestStore(t, t.TempDir(), 1)
	key := []byte("small")
	buildHash(t, s, key, 10)
	_ = s.Do(0, func(tx *Tx) {
		tx.Delete(0, key)
		if len(tx.ranges) != 0 {
			t.Errorf("small collection dropped with %d range deletes", len(tx.ranges))
		}
	})
	_ = s.Do(0, func(tx *Tx) {
		it := tx.Iterate(key, []byte{codec.PrefixData}, []byte{codec.PrefixData + 1}, false)
		defer it.Close()
		if it.Valid() {
			t.Errorf("a data key survived: %q", it.Key())
		}
	})
}

// Overwriting, expiring and flushing a big collection are O(1) too and leave no element
// visible: the elements of the old version go with one range delete.
func TestDrop_BigCollection_OverwriteExpireFlush(t *testing.T) {
	for _, how := range []string{"overwrite", "expire", "flushdb"} {
		t.Run(how, func(t *testing.T) {
			s := openTestStore(t, t.TempDir(), 1)
			key := []byte("big")
			buildHash(t, s, key, 100_000)
			start := time.Now()
			err := s.Do(0, func(tx *Tx) {
				switch how {
				case "overwrite":
					tx.SetMeta(0, key, str("now a string"))
				case "expire":
					m, _ := tx.Meta(0, key)
					m.Expire = tx.Now() - 1
					tx.SetMeta(0, key, &m)
				case "flushdb":
					tx.FlushDB(0, 0)
				}
			})
			if err != nil {
				t.Fatal(err)
			}
			if how == "expire" { // the TTL worker (or a read) deletes it
				if _, err := s.Shard(0).ExpireDue(10); err != nil {
					t.Fatal(err)
				}
			}
			t.Logf("%s of 100k elements: %v", how, time.Since(start))
			_ = s.Do(0, func(tx *Tx) {
				it := tx.Iterate(key, []byte{codec.PrefixData}, []byte{codec.PrefixData + 1}, false)
				defer it.Close()
				if it.Valid() {
					t.Errorf("a data key is still visible after %s: %q", how, it.Key())
				}
			})
		})
	}
}

// BenchmarkDelete_BigCollection measures DEL of a 1,000,000-element hash: one meta delete and
// one range delete, whatever the size.
func BenchmarkDelete_BigCollection(b *testing.B) {
	s, err := Open(Options{Dir: b.TempDir(), Shards: 1, Databases: 16})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	for i := range b.N {
		b.StopTimer()
		key := fmt.Appendf(nil, "big%d", i)
		buildHash(b, s, key, 1_000_000)
		s.Compact() // the build's flushes and compactions are not DEL's cost
		b.StartTimer()
		_ = s.Do(0, func(tx *Tx) { tx.Delete(0, key) })
	}
}

// A range delete of a live collection's data keys (a stream trim) leaves none of them in
// the key cache: a later point read does not find a deleted key.
func TestTx_DeleteDataRange_CachedKeysGone(t *testing.T) {
	s, err := Open(Options{Dir: t.TempDir(), Shards: 1, Databases: 16, BlockCacheSize: 8 << 20,
		WriteBufferSize: 8 << 20, KeyCacheSize: 8 << 20})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	key := []byte("s")
	var prefix []byte
	_ = s.Do(0, func(tx *Tx) {
		tx.SetMeta(0, key, &codec.Meta{Type: codec.TypeHash, Version: tx.NewVersion(key), Count: 3})
		m, _ := tx.Meta(0, key)
		prefix = tx.DataPrefix(0, key, m.Version)
		for _, e := range []string{"a", "b", "c"} {
			tx.PutData(key, append(append([]byte(nil), prefix...), e...), []byte("v"))
		}
	})
	dk := func(e string) []byte { return append(append([]byte(nil), prefix...), e...) }
	_ = s.Do(0, func(tx *Tx) { // cached by a read
		if _, ok := tx.GetData(key, dk("b")); !ok {
			t.Fatal("b is not there before the delete")
		}
	})
	_ = s.Do(0, func(tx *Tx) { tx.DeleteDataRange(key, dk("a"), dk("c")) })
	_ = s.Do(0, func(tx *Tx) {
		if _, ok := tx.GetData(key, dk("b")); ok {
			t.Error("a key the range delete removed is still found (the key cache kept it)")
		}
		if _, ok := tx.GetData(key, dk("c")); !ok {
			t.Error("the key after the range is gone")
		}
	})
}

// PutDataCached adds only the last maxCachedPuts keys of a transaction to the key cache, so
// one huge write of many keys cannot replace the cache's whole content.
func TestTx_PutDataCached_CachesTheLastPutsOnly(t *testing.T) {
	s, err := Open(Options{Dir: t.TempDir(), Shards: 1, Databases: 16, BlockCacheSize: 8 << 20,
		WriteBufferSize: 8 << 20, KeyCacheSize: 8 << 20})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	key := []byte("l")
	const n = 1000
	var prefix []byte
	elem := func(i int) []byte { return fmt.Appendf(append([]byte(nil), prefix...), "%04d", i) }
	_ = s.Do(0, func(tx *Tx) {
		prefix = tx.DataPrefix(0, key, tx.NewVersion(key))
		for i := range n {
			tx.PutDataCached(key, elem(i), fmt.Appendf(nil, "v%d", i))
		}
	})
	_ = s.Do(0, func(tx *Tx) {
		for i := range n {
			v, exists, known := tx.shards[0].cache.get(elem(i))
			if want := i >= n-maxCachedPuts; known != want || known && (!exists || string(v) != fmt.Sprint("v", i)) {
				t.Errorf("element %d: %q %v known %v, want known %v", i, v, exists, known, want)
				return // t.Fatal would end the shard's goroutine, not the test's
			}
		}
	})
}
