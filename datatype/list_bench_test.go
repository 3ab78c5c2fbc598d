package datatype

import (
	"testing"
	"time"

	"shardis/shard"
)

// The storage side of a queue under a pipelined load: groups of listBenchGroup commands on one
// list in one transaction each, as a shard runs redis-benchmark's LPUSH and then RPOP, with
// the server's key cache and memtable budget and a binlog record per command.

const listBenchGroup = 128

var (
	benchKey = []byte("mylist")
	benchVal = []byte("xxx")
	cmdLPUSH = []byte("LPUSH")
	cmdRPOP  = []byte("RPOP")
)

// pushGroups LPUSHes n elements in groups.
func pushGroups(b testing.TB, s *shard.Store, n int) {
	for done := 0; done < n; done += listBenchGroup {
		do(b, s, func(tx *shard.Tx) {
			for range min(listBenchGroup, n-done) {
				l, err := LookupList(tx, 0, benchKey)
				if err != nil {
					b.Fatal(err)
				}
				l.Push(benchVal, true)
				l.Save()
				tx.Log(0, benchKey, cmdLPUSH, benchKey, benchVal)
			}
		})
	}
}

func BenchmarkList_PushGroups(b *testing.B) {
	s := openCachedStore(b)
	b.ResetTimer()
	pushGroups(b, s, b.N)
}

func BenchmarkList_PopGroups(b *testing.B) {
	s := openCachedStore(b)
	pushGroups(b, s, b.N+1)
	b.ResetTimer()
	for done := 0; done < b.N; done += listBenchGroup {
		do(b, s, func(tx *shard.Tx) {
			for range min(listBenchGroup, b.N-done) {
				l, err := LookupList(tx, 0, benchKey)
				if err != nil {
					b.Fatal(err)
				}
				l.PopOne(false)
				l.Save()
				tx.Log(0, benchKey, cmdRPOP, benchKey)
			}
		})
	}
}

// BenchmarkList_LastPopAfterManyPops measures the pop that empties a queue which had held
// 100,000 elements (save-ns/op: its Save, which deletes the key): the delete must not walk the
// tombstones of the popped ones. The setup of each round is most of ns/op.
func BenchmarkList_LastPopAfterManyPops(b *testing.B) {
	s := openCachedStore(b)
	var saving time.Duration
	for range b.N {
		pushGroups(b, s, 100_000)
		for done := 0; done < 100_000-1; done += listBenchGroup {
			do(b, s, func(tx *shard.Tx) {
				l, err := LookupList(tx, 0, benchKey)
				if err != nil {
					b.Fatal(err)
				}
				l.Pop(uint64(min(listBenchGroup, 100_000-1-done)), false, func([]byte) {})
				l.Save()
			})
		}
		do(b, s, func(tx *shard.Tx) {
			l, err := LookupList(tx, 0, benchKey)
			if err != nil || l.Len() != 1 {
				b.Fatal(err, l.Len())
			}
			l.PopOne(false)
			start := time.Now()
			l.Save()
			saving += time.Since(start)
		})
	}
	b.ReportMetric(float64(saving.Nanoseconds())/float64(b.N), "save-ns/op")
}
