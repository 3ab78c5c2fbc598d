package shard

import (
	"fmt"
	"testing"

	"github.com/linxGnu/grocksdb"
)

// Throwaway: the cost of reading 1 KiB SET records back, from the binlog families (today)
// and from the WAL (GetUpdatesSince, every shard in one pass), per record.
func BenchmarkProtoReadBack(b *testing.B) {
	for _, mode := range []string{"cf", "logdata"} {
		b.Run(mode, func(b *testing.B) {
			old := binlogProto
			binlogProto = mode
			defer func() { binlogProto = old }()
			const shards, group, n = 8, 6, 24000
			s, err := Open(Options{Dir: b.TempDir(), Shards: shards, Databases: 16, BlockCacheSize: 64 << 20, WriteBufferSize: 256 << 20})
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			val := make([]byte, 1024)
			for g := range n / group {
				id := g % shards
				_ = s.Do(id, func(tx *Tx) {
					for i := range group {
						k := fmt.Appendf(nil, "key:%d:%d", id, g*group+i)
						tx.SetMeta(0, k, str(string(val)))
						tx.Log(0, k, []byte("SET"), k, val)
					}
				})
			}
			b.ResetTimer()
			var got int
			for range b.N {
				got = 0
				if mode == "cf" {
					for id := range shards {
						from := uint64(1)
						for {
							es, err := s.ReadBinlog(id, from, 512)
							if err != nil {
								b.Fatal(err)
							}
							if len(es) == 0 {
								break
							}
							got += len(es)
							from = es[len(es)-1].Seq + 1
						}
					}
				} else {
					it, err := s.db.GetUpdatesSince(0)
					if err != nil {
						b.Fatal(err)
					}
					for ; it.Valid(); it.Next() {
						wb, _ := it.GetBatch()
						ri := wb.NewIterator()
						for ri.Next() {
							if r := ri.Record(); r.Type == grocksdb.WriteBatchLogDataRecord {
								got++
								_ = append([]byte(nil), r.Value...)
							}
						}
						wb.Destroy()
					}
					it.Destroy()
				}
			}
			if got != n {
				b.Fatalf("read %d records, want %d", got, n)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/record")
		})
	}
}
