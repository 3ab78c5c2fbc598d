package rdbstore

import (
	"bytes"
	"errors"
	"fmt"
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
