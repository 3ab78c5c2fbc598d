package shard

import (
	"fmt"
	"sync"
	"testing"
)

// BenchmarkGroupCommit_SET measures SetMeta+Log per key in groups of 100 on each of the
// shards concurrently, the shape of a pipelined SET load.
func BenchmarkGroupCommit_SET(b *testing.B) {
	for _, shards := range []int{1, 2, 8} {
		b.Run(fmt.Sprintf("shards=%d", shards), func(b *testing.B) {
			s, err := Open(Options{Dir: b.TempDir(), Shards: shards, Databases: 16, BlockCacheSize: 64 << 20, WriteBufferSize: 256 << 20})
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			val := make([]byte, 3)
			b.ResetTimer()
			var wg sync.WaitGroup
			per := b.N / shards / 100
			for id := range shards {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for g := range per {
						_ = s.Do(id, func(tx *Tx) {
							for i := range 100 {
								k := fmt.Appendf(nil, "key:%d:%d", id, (g*100+i)%100000)
								tx.SetMeta(0, k, str(string(val)))
								tx.Log(0, k, []byte("SET"), k, val)
							}
						})
					}
				}()
			}
			wg.Wait()
		})
	}
}

// BenchmarkTx_SmallGroupAfterBigOne commits one-key groups on a shard that once committed a
// group of 4,096 keys (a prefill, a big MSET): the cost of a small group must not remember it.
func BenchmarkTx_SmallGroupAfterBigOne(b *testing.B) {
	s, err := Open(Options{Dir: b.TempDir(), Shards: 1, Databases: 16, BlockCacheSize: 8 << 20, WriteBufferSize: 64 << 20})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	_ = s.Do(0, func(tx *Tx) {
		for i := range 4096 {
			tx.SetMeta(0, fmt.Appendf(nil, "big:%d", i), str("v"))
		}
	})
	key := []byte("small")
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		_ = s.Do(0, func(tx *Tx) { tx.SetMeta(0, key, str("v")) })
	}
}

// BenchmarkAcquire_CrossShardSET measures a coordinated write of one key in each of two
// shards (SetMeta+Log per key, one commit): the shape of a cross-shard MSET, whose records
// form a binlog unit.
func BenchmarkAcquire_CrossShardSET(b *testing.B) {
	s, err := Open(Options{Dir: b.TempDir(), Shards: 2, Databases: 16, BlockCacheSize: 64 << 20, WriteBufferSize: 256 << 20})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	var keys [2][]byte
	for i := 0; keys[0] == nil || keys[1] == nil; i++ {
		k := fmt.Appendf(nil, "key:%d", i)
		keys[s.ShardOf(k)] = k
	}
	val := []byte("abc")
	b.ResetTimer()
	for range b.N {
		h := s.Acquire([]int{0, 1})
		for _, k := range keys {
			h.Tx().SetMeta(0, k, str(string(val)))
			h.Tx().Log(0, k, []byte("SET"), k, val)
		}
		_ = h.Release()
	}
}

// BenchmarkGroupCommit_SET1K is set-1k's commit path: 1 KiB SETs over 100,000 keys, logged,
// in groups of 6 (what a shard's group holds under 100 connections at pipeline 1), 8 shards.
func BenchmarkGroupCommit_SET1K(b *testing.B) {
	const shards, group = 8, 6
	s, err := Open(Options{Dir: b.TempDir(), Shards: shards, Databases: 16, BlockCacheSize: 64 << 20, WriteBufferSize: 256 << 20})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	val := make([]byte, 1024)
	b.SetBytes(1024)
	b.ResetTimer()
	var wg sync.WaitGroup
	per := b.N / shards / group
	for id := range shards {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for g := range per {
				_ = s.Do(id, func(tx *Tx) {
					for i := range group {
						k := fmt.Appendf(nil, "key:%d:%d", id, (g*group+i)%100000)
						tx.SetMeta(0, k, str(string(val)))
						tx.Log(0, k, []byte("SET"), k, val)
					}
				})
			}
		}()
	}
	wg.Wait()
}
