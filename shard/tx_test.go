package shard

import (
	"errors"
	"fmt"
	"github.com/linxGnu/grocksdb"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"shardis/binlog"
	"shardis/codec"
)

func openTestStore(t *testing.T, dir string, shards int) *Store {
	t.Helper()
	s, err := Open(Options{Dir: dir, Shards: shards, Databases: 16, BlockCacheSize: 8 << 20, WriteBufferSize: 8 << 20})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func str(v string) *codec.Meta { return &codec.Meta{Type: codec.TypeString, Value: []byte(v)} }

func TestTx_ReadYourWrites_WithinGroup(t *testing.T) {
	s := openTestStore(t, t.TempDir(), 1)
	err := s.Do(0, func(tx *Tx) {
		tx.SetMeta(0, []byte("a"), str("1"))
		if m, ok := tx.Meta(0, []byte("a")); !ok || string(m.Value) != "1" {
			t.Errorf("uncommitted write not visible: %v %q", ok, m.Value)
		}
		tx.Delete(0, []byte("a"))
		if tx.Exists(0, []byte("a")) {
			t.Error("uncommitted delete not visible")
		}
		tx.SetMeta(0, []byte("b"), str("2"))
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := s.Shard(0).Keys(0); got != 1 {
		t.Fatalf("key count %d, want 1", got)
	}
}

func TestIter_MergesPendingWrites(t *testing.T) {
	s := openTestStore(t, t.TempDir(), 1)
	_ = s.Do(0, func(tx *Tx) {
		for _, k := range []string{"a", "c", "e"} {
			tx.SetMeta(0, []byte(k), str(k))
		}
	})
	for _, reverse := range []bool{false, true} {
		var got []string
		_ = s.Do(0, func(tx *Tx) {
			tx.SetMeta(0, []byte("b"), str("b"))
			tx.SetMeta(0, []byte("c"), str("C"))
			tx.Delete(0, []byte("e"))
			tx.ScanKeys(0, 0, nil, func(key []byte, m *codec.Meta) bool {
				got = append(got, string(key)+"="+string(m.Value))
				return true
			})
			lower, upper := codec.MetaDBRange(0)
			it := tx.IterateShard(0, lower, upper, reverse)
			n := 0
			for ; it.Valid(); it.Next() {
				n++
			}
			it.Close()
			if n != 3 {
				t.Errorf("reverse=%v: iterator saw %d keys, want 3", reverse, n)
			}
		})
		slices.Sort(got) // storage order is by slot first
		want := "[a=a b=b c=C]"
		if fmt.Sprint(got) != want {
			t.Errorf("scan %v, want %s", got, want)
		}
	}
}

func TestStore_Open_RefusesOtherShardCount(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(Options{Dir: dir, Shards: 2, Databases: 16})
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	if _, err := Open(Options{Dir: dir, Shards: 3, Databases: 16}); !errors.Is(err, ErrLayout) {
		t.Fatalf("Open of a 2-shard directory with 3 shards = %v, want ErrLayout", err)
	}
}

// With the shard count left to its default, a directory keeps the count it was made with
// (it may come from a machine with another CPU count), and a new one gets the default.
func TestStore_Open_ShardsFromDir_KeepsTheDirectorysCount(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(Options{Dir: dir, Shards: 2, Databases: 16})
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	s, err = Open(Options{Dir: dir, Shards: 8, ShardsFromDir: true, Databases: 16})
	if err != nil {
		t.Fatal(err)
	}
	if n := s.NumShards(); n != 2 {
		t.Errorf("reopened with %d shards, want the directory's 2", n)
	}
	s.Close()
	s, err = Open(Options{Dir: t.TempDir(), Shards: 8, ShardsFromDir: true, Databases: 16})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if n := s.NumShards(); n != 8 {
		t.Errorf("a new directory got %d shards, want 8", n)
	}
}

// A directory of format 1 (the binlog inside the shard's key family) is refused before
// anything is created in it.
func TestStore_Open_RefusesFormat1Directory(t *testing.T) {
	dir := t.TempDir()
	opts := grocksdb.NewDefaultOptions()
	defer opts.Destroy()
	opts.SetCreateIfMissing(true)
	opts.SetCreateIfMissingColumnFamilies(true)
	names := []string{"default", "shard-0000"}
	db, cfs, err := grocksdb.OpenDbColumnFamilies(opts, filepath.Join(dir, "rocksdb"), names, []*grocksdb.Options{opts, opts})
	if err != nil {
		t.Fatal(err)
	}
	for _, cf := range cfs {
		cf.Destroy()
	}
	db.Close()
	_, err = Open(Options{Dir: dir, Shards: 1, Databases: 16})
	if !errors.Is(err, ErrLayout) || !strings.Contains(err.Error(), "another version of the on-disk format") {
		t.Fatalf("Open of a format-1 directory = %v", err)
	}
	if got, _ := grocksdb.ListColumnFamilies(opts, filepath.Join(dir, "rocksdb")); len(got) != 2 {
		t.Fatalf("column families now %v: the directory was changed", got)
	}
}

func TestStore_CountsAndDBMap_SurviveRestart(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(Options{Dir: dir, Shards: 2, Databases: 16})
	if err != nil {
		t.Fatal(err)
	}
	h := s.AcquireAll()
	for i := range 10 {
		k := fmt.Appendf(nil, "k%d", i)
		m := str("v")
		if i%2 == 0 {
			m.Expire = time.Now().Add(time.Hour).UnixMilli()
		}
		h.Tx().SetMeta(0, k, m)
	}
	for _, id := range h.Tx().Shards() {
		h.Tx().SwapDB(id, 0, 5)
	}
	if err := h.Release(); err != nil {
		t.Fatal(err)
	}
	s.Close()
	s = openTestStore(t, dir, 2)
	var keys, expires, keys0 int64
	for i := range 2 {
		keys += s.Shard(i).Keys(5)
		expires += s.Shard(i).Expires(5)
		keys0 += s.Shard(i).Keys(0)
	}
	if keys != 10 || expires != 5 || keys0 != 0 {
		t.Fatalf("after restart db5 keys=%d expires=%d, db0 keys=%d", keys, expires, keys0)
	}
}

func TestAcquire_ConcurrentCoordinatorsDoNotDeadlock(t *testing.T) {
	s := openTestStore(t, t.TempDir(), 4)
	var wg sync.WaitGroup
	sets := [][]int{{0, 1}, {1, 2}, {3, 0}, {2, 3}, {0, 1, 2, 3}}
	done := make(chan struct{})
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 200 {
				h := s.Acquire(sets[(g+i)%len(sets)])
				h.Tx().SetMeta(0, fmt.Appendf(nil, "g%d", g), str("x"))
				_ = h.Release()
			}
		}()
	}
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("coordinators deadlocked")
	}
}

func TestExpireDue_DeletesAndLogs(t *testing.T) {
	s := openTestStore(t, t.TempDir(), 1)
	_ = s.Do(0, func(tx *Tx) {
		m := str("v")
		m.Expire = tx.Now() - 1
		tx.SetMeta(0, []byte("old"), m)
		m2 := str("v")
		m2.Expire = tx.Now() + 3600_000
		tx.SetMeta(0, []byte("new"), m2)
	})
	n, err := s.Shard(0).ExpireDue(100)
	if err != nil || n != 1 {
		t.Fatalf("ExpireDue = %d, %v", n, err)
	}
	if got := s.Shard(0).Keys(0); got != 1 {
		t.Fatalf("keys %d, want 1", got)
	}
	var last []string
	_ = s.Do(0, func(tx *Tx) {
		it := tx.IterateBinlog(0, 0)
		defer it.Close()
		var r binlog.Record
		for ; it.Valid(); it.Next() {
			last = last[:0]
			if binlog.DecodeRecord(it.Value(), &r) == nil {
				for _, a := range r.Args {
					last = append(last, string(a))
				}
			}
		}
	})
	if fmt.Sprint(last) != "[DEL old]" {
		t.Fatalf("last binlog record %v", last)
	}
}

func TestTrimBinlog_KeepsNewest(t *testing.T) {
	s := openTestStore(t, t.TempDir(), 1)
	for i := range 20 {
		_ = s.Do(0, func(tx *Tx) { tx.Log(0, []byte("k"), []byte("SET"), []byte("k"), fmt.Appendf(nil, "%d", i)) })
	}
	if first, last := s.Shard(0).BinlogRange(); first != 1 || last != 20 {
		t.Fatalf("range %d..%d", first, last)
	}
	if n, err := s.Shard(0).TrimBinlog(5, 0); err != nil || n != 15 {
		t.Fatalf("trim = %d, %v", n, err)
	}
	if first, last := s.Shard(0).BinlogRange(); first != 16 || last != 20 {
		t.Fatalf("range after trim %d..%d", first, last)
	}
}

func TestStore_Open_DirectoryInUse(t *testing.T) {
	dir := t.TempDir()
	openTestStore(t, dir, 1)
	_, err := Open(Options{Dir: dir, Shards: 1, Databases: 16})
	if !errors.Is(err, ErrDirInUse) || !strings.Contains(err.Error(), dir) || strings.Contains(err.Error(), "LOCK") {
		t.Fatalf("second open of a directory in use: %v; want ErrDirInUse naming the directory plainly", err)
	}
}

// A collection's meta saved once per command (a script's SADD after SADD) is rewritten in
// place: the transaction's arena does not grow by a meta per write.
func TestTx_SetMeta_CollectionRewrittenInPlace(t *testing.T) {
	s := openTestStore(t, t.TempDir(), 1)
	err := s.Do(0, func(tx *Tx) {
		for i := range rewriteMetaMin { // a big transaction, where rewriting pays
			tx.PutData([]byte("s"), append(codec.AppendDataPrefix(nil, 0, []byte("s"), 3), byte(i)), nil)
		}
		tx.SetMeta(0, []byte("s"), &codec.Meta{Type: codec.TypeSet, Version: 3, Count: 1})
		held := len(tx.arena)
		for i := range 1000 {
			tx.SetMeta(0, []byte("s"), &codec.Meta{Type: codec.TypeSet, Version: 3, Count: uint64(2 + i)})
		}
		if grown := len(tx.arena) - held; grown > 0 {
			t.Errorf("the arena grew by %d bytes for 1,000 saves of one meta", grown)
		}
		if m, _ := tx.Meta(0, []byte("s")); m.Count != 1001 {
			t.Errorf("count %d, want 1001", m.Count)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	_ = s.Do(0, func(tx *Tx) {
		if m, _ := tx.Meta(0, []byte("s")); m.Count != 1001 {
			t.Errorf("committed count %d, want 1001", m.Count)
		}
	})
}
