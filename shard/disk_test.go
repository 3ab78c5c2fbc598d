package shard

import (
	"errors"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/linxGnu/grocksdb"
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
	reserve.Store(math.MaxInt64 / 4) // as if the disk filled past the reserve
	s.lookAtDisk()
	if err := put(); err != nil || !s.DiskLow() {
		t.Fatalf("a write past the reserve, with RocksDB's room left: %v, low %v; want it taken (what frees space runs then)", err, s.DiskLow())
	}
	s.disk.testFloor.Store(math.MaxInt64 / 4) // and past the room kept for RocksDB
	s.lookAtDisk()
	if err := put(); !errors.Is(err, ErrNoSpace) || !s.DiskLow() {
		t.Fatalf("a write without room: %v, low %v", err, s.DiskLow())
	}
	reserve.Store(0)
	s.disk.testFloor.Store(0)
	s.lookAtDisk()
	if err := put(); err != nil || s.DiskLow() {
		t.Fatalf("a write with room again: %v, low %v", err, s.DiskLow())
	}
	_ = s.writeFailed(errors.New("IO error: No space left on device: While appending to file: /d/rocksdb/000012.log: No space left on device"))
	if err := put(); !errors.Is(err, ErrWriteFailed) || !s.DiskLow() {
		t.Fatalf("a write after RocksDB failed one: %v, low %v", err, s.DiskLow())
	}
	mu.Lock()
	defer mu.Unlock()
	if len(lows) != 3 || !lows[0] || lows[1] || !lows[2] {
		t.Fatalf("the hook was told %v; want low, room, low", lows)
	}
}

// mountSmallFS mounts a tmpfs of size on a fresh directory, unmounted when the test ends; the
// test is skipped when the kernel refuses (not root).
func mountSmallFS(t *testing.T, size string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "mnt")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size="+size, "tmpfs", dir).CombinedOutput(); err != nil {
		t.Skipf("a small filesystem is needed and mounting a tmpfs was refused (run as root): %v: %s", err, out)
	}
	t.Cleanup(func() { _ = exec.Command("umount", "-l", dir).Run() })
	return dir
}

// TestDisk_FlushFailsForRoom_CommitsRefusedWithErrNoSpaceThenResumeOnTheirOwn: when a flush
// finds no room for its blob file (another process filled the disk), RocksDB refuses writes
// with its background error. The store answers ErrNoSpace (MISCONF to clients), not
// RocksDB's text, and writes resume by themselves once there is room, with no restart.
func TestDisk_FlushFailsForRoom_CommitsRefusedWithErrNoSpaceThenResumeOnTheirOwn(t *testing.T) {
	mnt := mountSmallFS(t, "64m")
	s, err := Open(Options{Dir: filepath.Join(mnt, "data"), Shards: 2, Databases: 16, WriteBufferSize: 16 << 20,
		BlobMinSize: 4096, DiskReserve: func() int64 { return 0 }})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	// Values for a blob file, written behind the guard's back, as if before the disk filled.
	rng := rand.New(rand.NewPCG(1, 1))
	v := make([]byte, 16<<10)
	cf := s.shards[0].cf
	for i := range 200 {
		for j := range v {
			v[j] = byte(rng.Uint32())
		}
		if err := s.db.PutCF(s.wo, cf, []byte{'b', byte(i)}, v); err != nil {
			t.Fatal(err)
		}
	}
	filler := filepath.Join(mnt, "filler")
	f, err := os.Create(filler)
	if err != nil {
		t.Fatal(err)
	}
	chunk := make([]byte, 1<<16)
	for {
		if _, err := f.Write(chunk); err != nil {
			if !errors.Is(err, syscall.ENOSPC) {
				t.Fatal(err)
			}
			break
		}
	}
	// Leave 2 MB: room for the log, none for the flush's 3 MB blob file.
	if fi, err := f.Stat(); err != nil || f.Truncate(fi.Size()-2<<20) != nil {
		t.Fatal(err)
	}
	f.Close()
	fo := grocksdb.NewDefaultFlushOptions()
	defer fo.Destroy()
	fo.SetWait(true)
	if err := s.db.FlushCF(cf, fo); err == nil {
		t.Fatal("the flush of a blob file bigger than the free space succeeded")
	}
	// The guard thinks there is room (as between two looks): the commit reaches RocksDB.
	s.disk.testFloor.Store(math.MinInt64 / 4)
	put := func() error { return s.Do(1, func(tx *Tx) { tx.putRaw(0, []byte("k"), []byte("v")) }) }
	if err := put(); !errors.Is(err, ErrNoSpace) {
		t.Fatalf("a commit while RocksDB is stopped for room = %v, want ErrNoSpace", err)
	}
	if err := put(); !errors.Is(err, ErrNoSpace) || !s.DiskLow() {
		t.Fatalf("the next commit = %v, low %v; want ErrNoSpace and low", err, s.DiskLow())
	}
	s.disk.testFloor.Store(0)
	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(90 * time.Second)
	for put() != nil {
		if time.Now().After(deadline) {
			t.Fatalf("writes never resumed once there was room: %v", put())
		}
		time.Sleep(100 * time.Millisecond)
	}
	if s.DiskLow() {
		t.Fatal("a commit went through while the disk is still reported low")
	}
}

func TestIsLogFailure_OnlyTheWriteAheadLog(t *testing.T) {
	for msg, want := range map[string]bool{
		"IO error: No space left on device: While appending to file: /d/rocksdb/000012.log: No space left on device":  true,
		"IO error: No space left on device: While fdatasync: /d/rocksdb/000012.log":                                   true,
		"IO error: No space left on device: While appending to file: /d/rocksdb/000295.blob: No space left on device": false,
		"IO error: No space left on device: While appending to file: /d/rocksdb/000301.sst: No space left on device":  false,
		"IO error: While appending to file: /d/rocksdb/LOG: No space left on device":                                  false,
		"IO error: No space left on device: /d/rocksdb.log/000301.sst":                                                false,
	} {
		if got := isLogFailure(errors.New(msg)); got != want {
			t.Errorf("isLogFailure(%q) = %v, want %v", msg, got, want)
		}
	}
}

// The low mark keeps room for a compaction of what was flushed (1.1 times the table files)
// besides the floor (a flush's room) and the reserve; the automatic reserve is the smaller of
// 64 MB and a sixteenth of the volume.
func TestDisk_LowMark_FloorPlusCompactionsPlusReserve(t *testing.T) {
	mnt := mountSmallFS(t, "64m")
	s, err := Open(Options{Dir: filepath.Join(mnt, "data"), Shards: 2, Databases: 16, DiskReserve: func() int64 { return -1 }})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if got, want := s.reserve(), int64(64<<20)/autoReserveFraction; got != want {
		t.Errorf("automatic reserve on a 64 MB volume = %d, want %d", got, want)
	}
	if got, want := s.dbWriteBuffer(), int64(8<<20); got != want {
		t.Errorf("memtable budget on a 64 MB volume = %d, want an eighth of it, %d", got, want)
	}
	rng := rand.New(rand.NewPCG(5, 6))
	v := make([]byte, 1000) // under blob-min-size: in the table files; incompressible
	for i := range 4000 {
		for j := range v {
			v[j] = byte(rng.Uint32())
		}
		if err := s.Do(0, func(tx *Tx) { tx.putRaw(0, []byte{'k', byte(i), byte(i >> 8)}, v) }); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.FlushMemtables(); err != nil {
		t.Fatal(err)
	}
	s.lookAtDisk()
	g := &s.disk
	sst := propertyInt(s.db.GetPropertyCF("rocksdb.total-sst-files-size", s.shards[0].cf))
	if sst < 1<<20 {
		t.Fatalf("only %d bytes of table files after flushing 4 MB", sst)
	}
	if comp := g.need.Load() - g.floor.Load() - s.reserve(); comp < sst*11/10 {
		t.Errorf("the low mark keeps %d for compactions, want at least 1.1 times the %d of table files", comp, sst)
	}
	if g.floor.Load() < s.walPrealloc() {
		t.Errorf("the floor %d is under a new log file's preallocation %d", g.floor.Load(), s.walPrealloc())
	}
}
