package shard

import (
	"errors"
	"math"
	"sync"
	"sync/atomic"
	"testing"
)

func TestDisk_OpenRefusedWithoutRoom(t *testing.T) {
	s, err := New(Options{Dir: t.TempDir(), Shards: 2, Databases: 16, DiskReserve: func() int64 { return math.MaxInt64 / 2 }})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.Open(); !errors.Is(err, ErrNoSpace) {
		t.Fatalf("Open with a reserve larger than the disk = %v, want ErrNoSpace", err)
	}
}

func TestDisk_GuardRefusesCommitsAndNeverTouchesRocksDBAfterAFailedWrite(t *testing.T) {
	var reserve atomic.Int64 // the disk watcher reads it too
	s, err := Open(Options{Dir: t.TempDir(), Shards: 2, Databases: 16, DiskReserve: reserve.Load})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var mu sync.Mutex
	var lows []bool
	s.SetDiskHook(func(low bool) { mu.Lock(); lows = append(lows, low); mu.Unlock() })
	put := func() error { return s.Do(0, func(tx *Tx) { tx.putRaw(0, []byte("k"), []byte("v")) }) }
	if err := put(); err != nil || s.DiskLow() {
		t.Fatalf("a write with room: %v, low %v", err, s.DiskLow())
	}
	reserve.Store(math.MaxInt64 / 4) // as if the disk filled
	s.lookAtDisk()
	if err := put(); !errors.Is(err, ErrNoSpace) || !s.DiskLow() {
		t.Fatalf("a write without room: %v, low %v", err, s.DiskLow())
	}
	reserve.Store(0)
	s.lookAtDisk()
	if err := put(); err != nil || s.DiskLow() {
		t.Fatalf("a write with room again: %v, low %v", err, s.DiskLow())
	}
	s.writeFailed(errors.New("IO error: No space left on device"))
	if err := put(); !errors.Is(err, ErrWriteFailed) || !s.DiskLow() {
		t.Fatalf("a write after RocksDB failed one: %v, low %v", err, s.DiskLow())
	}
	mu.Lock()
	defer mu.Unlock()
	if len(lows) != 3 || !lows[0] || lows[1] || !lows[2] {
		t.Fatalf("the hook was told %v; want low, room, low", lows)
	}
}
