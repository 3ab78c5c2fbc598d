package rdbstore

import (
	"bytes"
	"errors"
	"fmt"
	"runtime"
	"testing"

	"shardis/datatype"
	"shardis/rdb"
	"shardis/shard"
)

func openStore(t testing.TB, databases int) *shard.Store {
	t.Helper()
	s, err := shard.Open(shard.Options{Dir: t.TempDir(), Shards: 3, Databases: databases, BlockCacheSize: 8 << 20, WriteBufferSize: 8 << 20})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// fill writes n keys of each kind to db, with big collections among them.
func fill(t *testing.T, s *shard.Store, db, n int) {
	t.Helper()
	for i := range n {
		key := []byte(fmt.Sprintf("k%d", i))
		if err := s.Do(s.ShardOf(key), func(tx *shard.Tx) {
			switch i % 4 {
			case 0:
				datatype.SetString(tx, db, key, []byte(fmt.Sprint(i)), 0)
			case 1:
				h, _ := datatype.LookupHash(tx, db, key)
				for j := range 1 + i%300 {
					h.Set([]byte(fmt.Sprintf("f%d", j)), []byte("v"))
				}
				h.Save()
			case 2:
				z := datatype.NewZSet(tx, db, key)
				for j := range 1 + i%200 {
					z.Insert([]byte(fmt.Sprintf("m%d", j)), float64(j)/7)
				}
				z.Save()
			default:
				l := datatype.NewList(tx, db, key)
				for j := range 1 + i%50 {
					l.Push([]byte(fmt.Sprint(j)), false)
				}
				l.Meta().Expire = 1 << 50
				l.Save()
			}
		}); err != nil {
			t.Fatal(err)
		}
	}
}

func fileOf(t *testing.T, s *shard.Store) []byte {
	t.Helper()
	snap, err := s.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	defer snap.Close()
	var b bytes.Buffer
	if err := WriteRDB(&b, snap, WriteOptions{Format: rdb.DefaultOptions(), Aux: rdb.AuxInfo{CTime: 1}}); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func keysOf(s *shard.Store) (n int64) {
	for id := range s.NumShards() {
		for db := range s.Databases() {
			n += s.Shard(id).Keys(db)
		}
	}
	return n
}

// A store written as a file and loaded into another gives the same file again.
func TestLoad_WrittenFile_SameStore(t *testing.T) {
	a := openStore(t, 16)
	fill(t, a, 0, 400)
	fill(t, a, 5, 40)
	file := fileOf(t, a)
	b := openStore(t, 16)
	stats, err := Load(bytes.NewReader(file), b, LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if stats.Keys != 440 || keysOf(b) != 440 {
		t.Fatalf("loaded %d keys, store holds %d; want 440", stats.Keys, keysOf(b))
	}
	if again := fileOf(t, b); !bytes.Equal(again, file) {
		t.Fatalf("the loaded store writes %d bytes, the original %d", len(again), len(file))
	}
}

// A file cut short, or selecting a database past the store's, loads nothing.
func TestLoad_BadFile_LeavesStoreEmpty(t *testing.T) {
	a := openStore(t, 16)
	fill(t, a, 0, 200)
	fill(t, a, 9, 10)
	file := fileOf(t, a)
	b := openStore(t, 16)
	if _, err := Load(bytes.NewReader(file[:len(file)*2/3]), b, LoadOptions{}); err == nil {
		t.Fatal("a truncated file loaded")
	}
	if n := keysOf(b); n != 0 {
		t.Fatalf("a failed load left %d keys", n)
	}
	c := openStore(t, 4)
	_, err := Load(bytes.NewReader(file), c, LoadOptions{})
	if !errors.Is(err, ErrDBRange) {
		t.Fatalf("a file with database 9 into 4 databases: %v", err)
	}
	if n := keysOf(c); n != 0 {
		t.Fatalf("a failed load left %d keys", n)
	}
}

// With Replace, a load empties the store first (a replica's full sync), and hands over the
// file's aux fields.
func TestLoad_Replace_EmptiesFirst(t *testing.T) {
	a := openStore(t, 16)
	fill(t, a, 0, 40)
	file := fileOf(t, a)
	b := openStore(t, 16)
	fill(t, b, 3, 100)
	var ver string
	if _, err := Load(bytes.NewReader(file), b, LoadOptions{Replace: true, Aux: func(k, v []byte) {
		if string(k) == "redis-ver" {
			ver = string(v)
		}
	}}); err != nil {
		t.Fatal(err)
	}
	if n := keysOf(b); n != 40 || ver != rdb.RedisVersion {
		t.Fatalf("after a replacing load: %d keys (want 40), redis-ver %q", n, ver)
	}
	if again := fileOf(t, b); !bytes.Equal(again, file) {
		t.Fatal("the replacing load gives another store")
	}
}

// heapPeak is an io.Writer that discards what it gets and samples the live heap now and then.
type heapPeak struct {
	n    int
	peak uint64
}

func (h *heapPeak) Write(p []byte) (int, error) {
	if h.n++; h.n%64 == 0 {
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		h.peak = max(h.peak, ms.HeapAlloc)
	}
	return len(p), nil
}

// heapReader is an io.Reader over b that samples the live heap now and then.
type heapReader struct {
	r *bytes.Reader
	h heapPeak
}

func (r *heapReader) Read(p []byte) (int, error) {
	if r.h.n++; r.h.n%16 == 0 {
		runtime.GC() // live memory, not garbage the collector has yet to reach
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		r.h.peak = max(r.h.peak, ms.HeapAlloc)
	}
	return r.r.Read(p[:min(len(p), 64<<10)])
}

// bigHashStore makes a store holding one hash of fields values of valueLen bytes.
func bigHashStore(t *testing.T, fields, valueLen int) *shard.Store {
	s := openStore(t, 16)
	key := []byte("big")
	for done := 0; done < fields; done += 5000 {
		if err := s.Do(s.ShardOf(key), func(tx *shard.Tx) {
			h, _ := datatype.LookupHash(tx, 0, key)
			for j := done; j < done+5000; j++ {
				h.Set([]byte(fmt.Sprintf("field-%06d", j)), bytes.Repeat([]byte{byte(j)}, valueLen))
			}
			h.Save()
		}); err != nil {
			t.Fatal(err)
		}
	}
	return s
}

// A big hash comes in from a file in pieces: the live heap grows by far less than the hash's
// size while it is loaded, and the loaded store writes the same file.
func TestLoad_BigHash_NotHeldWhole(t *testing.T) {
	// Loading commits every 4 MB: what it holds meanwhile (the transaction's buffers, about
	// 15 MB measured, whatever the hash's size) is bounded, not the hash.
	const fields, valueLen = 120000, 300 // about 36 MB
	file := fileOf(t, bigHashStore(t, fields, valueLen))
	b := openStore(t, 16)
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	r := &heapReader{r: bytes.NewReader(file), h: heapPeak{peak: ms.HeapAlloc}}
	if _, err := Load(r, b, LoadOptions{}); err != nil {
		t.Fatal(err)
	}
	grew := r.h.peak - ms.HeapAlloc
	t.Logf("heap peak %d KiB above the start loading a hash of %d KiB", grew>>10, fields*valueLen>>10)
	if grew > fields*valueLen*2/3 {
		t.Fatalf("the heap grew by %d bytes loading a hash of %d bytes", grew, fields*valueLen)
	}
	if !bytes.Equal(fileOf(t, b), file) {
		t.Fatal("the loaded hash differs")
	}
}

// A big hash goes out of a snapshot into a file without being held whole: the heap grows by
// far less than the hash's size while it is written.
func TestWriteRDB_BigHash_NotHeldWhole(t *testing.T) {
	const fields, valueLen = 60000, 300 // about 18 MB
	s := bigHashStore(t, fields, valueLen)
	snap, err := s.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	defer snap.Close()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	w := &heapPeak{peak: ms.HeapAlloc}
	base := ms.HeapAlloc
	o := rdb.DefaultOptions()
	o.Compression = false
	if err := WriteRDB(w, snap, WriteOptions{Format: o}); err != nil {
		t.Fatal(err)
	}
	if grew := w.peak - base; grew > fields*valueLen/3 {
		t.Fatalf("the heap grew by %d bytes writing a hash of %d bytes", grew, fields*valueLen)
	}
	t.Logf("heap peak %d KiB above the start for a hash of %d KiB", (w.peak-base)>>10, fields*valueLen>>10)
}
