package shard

import (
	"fmt"
	"syscall"
	"testing"
	"time"
)

// processCPU returns the process's user and system time so far.
func processCPU() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkRead_RangeTombstonesInMemtable measures what range deletes left in the mutable
// memtable cost every read of the shard (a point read and a 64-key read-ahead): the price of
// a queue that cleared popped elements with a range delete per run instead of a tombstone per
// pop (docs/PERFORMANCE.md). Every 1024 reads one more range delete is committed, as such a
// queue would.
func BenchmarkRead_RangeTombstonesInMemtable(b *testing.B) {
	for _, ranges := range []int{0, 16, 256, 2048} {
		b.Run(fmt.Sprint("ranges=", ranges), func(b *testing.B) {
			s, err := Open(Options{Dir: b.TempDir(), Shards: 1, Databases: 16, BlockCacheSize: 8 << 20,
				WriteBufferSize: 256 << 20})
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			key := []byte("q")
			var prefix []byte
			elem := func(i int) []byte { return fmt.Appendf(append([]byte(nil), prefix...), "%08d", i) }
			_ = s.Do(0, func(tx *Tx) {
				prefix = tx.DataPrefix(0, key, tx.NewVersion(key))
				for i := range 100_000 {
					tx.PutData(key, elem(i), []byte("xxx"))
				}
			})
			for r := range ranges { // runs of popped positions, each cleared by its own commit
				_ = s.Do(0, func(tx *Tx) { tx.deleteRange(0, elem(r*10), elem(r*10+5)) })
			}
			sh := s.shards[0]
			b.ResetTimer()
			cpu0 := processCPU()
			for i := range b.N {
				at := 50_000 + i%40_000
				v, err := s.db.GetPinnedCF(s.ro, sh.cf, elem(at))
				if err != nil || !v.Exists() {
					b.Fatal("element missing", err)
				}
				v.Destroy()
				if i%1024 == 1023 { // a queue clearing its last 1024 pops: one more range delete
					n := ranges + i/1024
					_ = s.Do(0, func(tx *Tx) { tx.deleteRange(0, elem(100_000+n*10), elem(100_000+n*10+5)) })
				}
				if i%64 == 0 {
					r := openBatchReaderN(s.db, sh.cf, elem(at), elem(at+64), false, 64)
					if !r.valid() {
						b.Fatal("read-ahead found nothing")
					}
					r.close()
				}
			}
			// The machine's load makes wall time useless; the process's CPU time is steadier.
			b.ReportMetric(float64((processCPU()-cpu0).Nanoseconds())/float64(b.N), "cpu-ns/op")
		})
	}
}
