package shard

import (
	"context"
	"errors"
	"fmt"
	"log"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// ErrNoSpace is returned by a commit the store refused because the data directory's disk is
// (nearly) full, and wrapped by Open when there is not room enough to open.
var ErrNoSpace = errors.New("No space left on device")

// ErrWriteFailed is returned by every commit after RocksDB failed to write its log: the store
// refuses writes until it is restarted.
var ErrWriteFailed = errors.New("the write-ahead log could not be written; restart once the disk has room")

// The disk guard keeps RocksDB from ever meeting a full disk on its write path. Debian's
// librocksdb is built with assertions on: after one failed write of the write-ahead log, the
// next write or sync of that log aborts the process (Assertion 'sync_without_flush_called_').
// So the store watches the free space of its directory and turns writes away before it runs
// out: it is "low" when the free space is under the reserve (Options.DiskReserve) plus what
// the memtables hold (which a flush will write), and the reactor then refuses write commands
// (Low); a commit that would take the free space under half of that is refused here
// (ErrNoSpace), so the small writes of reads (lazy expiry) and of the TTL worker go on a
// while longer. Should RocksDB still fail a write (another process filled the disk between
// two looks), the store stops writing for good (ErrWriteFailed): no write, log sync or
// memtable flush touches RocksDB again, and Close leaves RocksDB as a crash would (closing it
// flushes the log writer, which aborts): what was acknowledged is in the log files, which the
// next start replays. While low, the WAL is not synced either (a sync may need room).
type diskGuard struct {
	low    atomic.Bool
	failed atomic.Bool
	free   atomic.Int64 // bytes free at the last look
	need   atomic.Int64 // the low mark at the last look
	// budget is what commits may write before the next look: half the room above the low
	// mark, so a burst of writes looks again before it can get near the disk's end.
	budget atomic.Int64
	mu     sync.Mutex // one look at a time
	hook   atomic.Pointer[func(low bool)]
}

// freeBytes returns the bytes an unprivileged writer may still use on dir's filesystem.
func freeBytes(dir string) (int64, error) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return 0, err
	}
	return int64(st.Bavail) * int64(st.Bsize), nil
}

// SetDiskHook sets the function told when the disk becomes low (true) or has room again.
func (s *Store) SetDiskHook(f func(low bool)) { s.disk.hook.Store(&f) }

// DiskLow reports whether the disk is too full for writes (or RocksDB failed one).
func (s *Store) DiskLow() bool { return s.disk.low.Load() }

// reserve returns the configured free-space reserve.
func (s *Store) reserve() int64 {
	if s.opts.DiskReserve == nil {
		return 0
	}
	return s.opts.DiskReserve()
}

// lookAtDisk measures the free space and updates the guard (watchDisk every
// diskLookInterval, and a commit that used up the budget).
func (s *Store) lookAtDisk() {
	g := &s.disk
	g.mu.Lock()
	defer g.mu.Unlock()
	free, err := freeBytes(s.opts.Dir)
	if err != nil {
		return // an unreadable statfs leaves the last state
	}
	need := s.reserve() + s.memtableBytes() + s.walPrealloc()
	g.free.Store(free)
	g.need.Store(need)
	g.budget.Store(max(free-need, 0) / 2)
	s.setLow(free < need || g.failed.Load())
}

func (s *Store) setLow(low bool) {
	g := &s.disk
	if g.low.Swap(low) == low {
		return
	}
	if low {
		log.Printf("disk: %s has %d bytes free, under the %d the store keeps in reserve: write commands are refused until there is room",
			s.opts.Dir, g.free.Load(), g.need.Load())
	} else {
		log.Printf("disk: %s has room again (%d bytes free): writes are accepted", s.opts.Dir, g.free.Load())
	}
	if f := g.hook.Load(); f != nil {
		(*f)(low)
	}
}

// admitWrite is asked by a commit about to write about n bytes: it refuses when RocksDB
// failed a write before, or when the write would take the free space under half the low mark.
func (s *Store) admitWrite(n int64) error {
	g := &s.disk
	if g.failed.Load() {
		return ErrWriteFailed
	}
	if g.budget.Add(-n) < 0 {
		s.lookAtDisk()
	}
	if g.free.Load()-n < g.need.Load()/2 {
		return ErrNoSpace
	}
	return nil
}

// writeFailed records that RocksDB failed a write: the store writes nothing more.
func (s *Store) writeFailed(err error) {
	if s.disk.failed.Swap(true) {
		return
	}
	log.Printf("disk: RocksDB failed a write (%v): the store refuses every write until it is restarted; reads go on", err)
	s.setLow(true)
}

// walPrealloc is the room RocksDB may take at once for its write-ahead log (it preallocates
// the file by about 1.1 times a memtable's size): syncing the log on a disk without it fails,
// and Debian's build then aborts.
func (s *Store) walPrealloc() int64 {
	return max(s.opts.WriteBufferSize/int64(s.opts.Shards), 4<<20) * 11 / 10
}

// diskLookInterval is how often the guard looks at the free space (and on every commit that
// used up the budget since the last look).
const diskLookInterval = 100 * time.Millisecond

// watchDisk looks at the free space every diskLookInterval until ctx ends.
func (s *Store) watchDisk(ctx context.Context) {
	tick := time.NewTicker(diskLookInterval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			s.lookAtDisk()
		}
	}
}

// memtableBytes returns what every column family's memtables hold.
func (s *Store) memtableBytes() int64 {
	if !s.Opened() {
		return 0
	}
	var sum int64
	for _, sh := range s.shards {
		sum += propertyInt(s.db.GetPropertyCF("rocksdb.cur-size-all-mem-tables", sh.cf))
		sum += propertyInt(s.db.GetPropertyCF("rocksdb.cur-size-all-mem-tables", sh.logCF))
	}
	return sum
}

// checkRoomToOpen refuses to open when the disk cannot take the reserve and the log to
// replay: RocksDB writes the recovered data out while it opens.
func (s *Store) checkRoomToOpen() error {
	if s.opts.DiskReserve == nil {
		return nil
	}
	free, err := freeBytes(s.opts.Dir)
	if err != nil {
		return nil
	}
	logs := s.LogBytes()
	need := s.reserve() + logs + s.walPrealloc()
	if free < need {
		return fmt.Errorf("%s: %w: %d bytes free, opening needs %d (disk-reserve %d, %d of write-ahead log to replay, %d for a new one); free some space or lower disk-reserve",
			s.opts.Dir, ErrNoSpace, free, need, s.reserve(), logs, s.walPrealloc())
	}
	return nil
}
