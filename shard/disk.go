package shard

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log"
	"regexp"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/linxGnu/grocksdb"
)

// ErrNoSpace is returned by a commit the store refused because the data directory's disk is
// (nearly) full, and wrapped by Open when there is not room enough to open.
var ErrNoSpace = errors.New("No space left on device")

// ErrWriteFailed is returned by every commit after RocksDB failed to write its log: the store
// refuses writes until it is restarted.
var ErrWriteFailed = errors.New("the write-ahead log could not be written; restart once the disk has room")

// The disk guard keeps RocksDB from ever meeting a full disk. Debian's librocksdb is built
// with assertions on: after one failed write of the write-ahead log, the next write or sync of
// that log aborts the process (Assertion 'sync_without_flush_called_'), and a memtable flush
// on a full disk switches to a new log and aborts the same way. So the store watches the free
// space of its directory and keeps two marks:
//
//   - the floor: the room a memtable flush needs, which no commit may take: the memtables (a
//     flush writes them, to table and blob files), a new log file's preallocation and a
//     little for RocksDB's own files. Under it RocksDB may still flush; a commit is refused
//     (ErrNoSpace);
//   - the low mark: the floor, plus the room compactions may take (they write their output
//     before they delete their input, preallocating 1.1 times it, and the blob files'
//     garbage collection rewrites the live values of the oldest quarter of the blob files),
//     plus the reserve (disk-reserve; the default is at most a sixteenth of the volume, so a
//     small volume stays usable).
//
// Under the low mark the disk is "low": the hook tells the server, which refuses the commands
// that may add data (Redis's denyoom flag: SET, HSET, …) with MISCONF, while those that free
// space (DEL, UNLINK, FLUSHALL, …) still run, down to the floor. While low, the guard flushes
// the memtables (their log files then go: a net gain) and compacts the keys deleted since,
// when there is room for it, so that the deleted values' files go too: that is how DEL and
// FLUSHALL give space back.
//
// Should RocksDB still fail a write: a failed write of its log stops the store for good
// (ErrWriteFailed): no write, log sync or memtable flush touches RocksDB again, and Close
// leaves it as a crash would (closing it flushes the log writer, which aborts): what was
// acknowledged is in the log files, which the next start replays. Any other failure (a flush
// or compaction writing a table or blob file: RocksDB then refuses writes with its background
// error, without touching the log) stalls the store: writes are refused (ErrNoSpace) until
// RocksDB recovered, which it does by itself once there is room (its SstFileManager polls the
// free space); the guard probes it with a one-key write once the disk has room again.
type diskGuard struct {
	low     atomic.Bool
	failed  atomic.Bool // the log failed a write: for good
	stalled atomic.Bool // RocksDB's background error: until it recovers
	// reclaim holds, per shard, the span of the keys deleted while low, which relieveDisk
	// compacts so that their files go.
	reclaimMu sync.Mutex
	reclaim   map[int]*keySpan
	free      atomic.Int64 // bytes free at the last look
	total     atomic.Int64 // the volume's size
	floor     atomic.Int64 // the room for a flush at the last look
	need      atomic.Int64 // the low mark at the last look: floor, compactions, reserve
	// testFloor is added to the floor: tests make RocksDB's room run out with it.
	testFloor atomic.Int64
	// memtables and compactions are the marks' two variable parts at the last look (logged).
	memtables, compactions atomic.Int64
	// budget is what commits may write before the next look: half the room above the low
	// mark, or under it a quarter of the room above the floor (a write takes its bytes in the
	// log and again in the memtables, which the floor counts), so a burst of writes looks
	// again before it can get near either.
	budget atomic.Int64
	mu     sync.Mutex // one look at a time
	hook   atomic.Pointer[func(low bool)]
}

// statDisk returns the bytes an unprivileged writer may still use on dir's filesystem and
// the filesystem's size.
func statDisk(dir string) (free, total int64, err error) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return 0, 0, err
	}
	return int64(st.Bavail) * int64(st.Bsize), int64(st.Blocks) * int64(st.Bsize), nil
}

// SetDiskHook sets the function told when the disk becomes low (true) or has room again.
func (s *Store) SetDiskHook(f func(low bool)) { s.disk.hook.Store(&f) }

// DiskLow reports whether the disk is too full for writes that add data (or RocksDB failed one).
func (s *Store) DiskLow() bool { return s.disk.low.Load() }

// The automatic reserve (a negative Options.DiskReserve) is the smaller of autoReserveMax
// and the volume's size over autoReserveFraction, so that a small volume is usable.
const (
	autoReserveMax      = 64 << 20
	autoReserveFraction = 16
)

// reserve returns the free-space reserve (Options.DiskReserve).
func (s *Store) reserve() int64 {
	if s.opts.DiskReserve == nil {
		return 0
	}
	r := s.opts.DiskReserve()
	if r < 0 {
		r = autoReserveMax
		if total := s.disk.total.Load(); total > 0 {
			r = min(r, total/autoReserveFraction)
		}
	}
	return r
}

// lookAtDisk measures the free space and updates the guard (watchDisk every
// diskLookInterval, and a commit that used up the budget).
func (s *Store) lookAtDisk() {
	g := &s.disk
	g.mu.Lock()
	defer g.mu.Unlock()
	free, total, err := statDisk(s.opts.Dir)
	if err != nil {
		return // an unreadable statfs leaves the last state
	}
	g.total.Store(total)
	floor := s.floorBytes()
	comp := s.compactionBytes()
	g.compactions.Store(comp)
	need := floor + comp + s.reserve()
	g.free.Store(free)
	g.floor.Store(floor)
	g.need.Store(need)
	if free >= need {
		g.budget.Store((free - need) / 2)
	} else {
		g.budget.Store(max(free-floor, 0) / 4)
	}
	if g.stalled.Load() && free >= need && s.probeWrite() {
		g.stalled.Store(false)
		log.Printf("disk: RocksDB writes again")
	}
	s.setLow(free < need || g.failed.Load() || g.stalled.Load())
}

// floorBytes is the room a memtable flush needs (see diskGuard).
func (s *Store) floorBytes() int64 {
	const slack = 1 << 20 // RocksDB's info LOG, OPTIONS and MANIFEST appends
	mem := s.memtableBytes()
	s.disk.memtables.Store(mem)
	return mem + s.walPrealloc() + slack + s.disk.testFloor.Load()
}

// compactionBytes is the room compactions may take at once: RocksDB runs up to three (of its
// four background jobs), each rewriting at most a column family's table files (at small sizes
// level 0 and 1 are all of it) or max_compaction_bytes, with output files preallocated at 1.1
// times; and blob garbage collection rewrites the live values of the oldest quarter of the
// blob files before their files go.
func (s *Store) compactionBytes() int64 {
	if !s.Opened() {
		return 0
	}
	const maxCompaction = 25 * 64 << 20 // 25 times target_file_size_base, RocksDB's default
	var top [3]int64
	var blobs int64
	note := func(cf *grocksdb.ColumnFamilyHandle) {
		n := min(propertyInt(s.db.GetPropertyCF("rocksdb.total-sst-files-size", cf)), maxCompaction)
		for i := range top {
			if n > top[i] {
				top[i], n = n, top[i]
			}
		}
		blobs += propertyInt(s.db.GetPropertyCF("rocksdb.total-blob-file-size", cf))
	}
	note(s.defCF)
	for _, sh := range s.shards {
		note(sh.cf)
		note(sh.logCF)
	}
	// The relocations happen compaction by compaction: at most three at a time, each over the
	// blob files its input refers to, so the room for them is bounded like the table files'.
	return (top[0]+top[1]+top[2])*11/10 + min(blobs/4, 3*maxCompaction*11/10)
}

// probeWrite writes one key of the default column family, to learn whether RocksDB left its
// background error state (a write then fails before it reaches the log).
func (s *Store) probeWrite() bool {
	return s.db.PutCF(s.wo, s.defCF, diskProbeKey, nil) == nil
}

var diskProbeKey = []byte("disk-probe")

// roomForRocksDB reports whether RocksDB may write on its own (flush, sync its log, close):
// no log write failed and the free space is above the floor.
func (s *Store) roomForRocksDB() bool {
	g := &s.disk
	return !g.failed.Load() && g.free.Load() >= g.floor.Load()
}

func (s *Store) setLow(low bool) {
	g := &s.disk
	if g.low.Swap(low) == low {
		return
	}
	if low {
		log.Printf("disk: %s has %d bytes free, under the %d the store keeps in reserve (%d for a flush of the memtables' %d, %d for compactions): commands that add data are refused until there is room",
			s.opts.Dir, g.free.Load(), g.need.Load(), g.floor.Load(), g.memtables.Load(), g.compactions.Load())
	} else {
		log.Printf("disk: %s has room again (%d bytes free): writes are accepted", s.opts.Dir, g.free.Load())
	}
	if f := g.hook.Load(); f != nil {
		(*f)(low)
	}
}

// admitWrite is asked by a commit about to write about n bytes: it refuses when RocksDB
// failed a write before or is stalled, or when the write would take the free space under the
// floor.
func (s *Store) admitWrite(n int64) error {
	g := &s.disk
	if g.failed.Load() {
		return ErrWriteFailed
	}
	if g.budget.Add(-n) < 0 {
		s.lookAtDisk()
	}
	if g.stalled.Load() || g.free.Load()-n < g.floor.Load() {
		return ErrNoSpace
	}
	return nil
}

// keySpan is the smallest key range [lo, hi) holding some keys.
type keySpan struct{ lo, hi []byte }

func (r *keySpan) add(lo, hi []byte) {
	if r.lo == nil || bytes.Compare(lo, r.lo) < 0 {
		r.lo = bytes.Clone(lo)
	}
	if r.hi == nil || bytes.Compare(hi, r.hi) > 0 {
		r.hi = bytes.Clone(hi)
	}
}

// wrote is told of every successful commit: while the disk is low it notes the keys tx
// deleted (what adds data is refused then), whose files a compaction then removes
// (relieveDisk). A range deletion (FLUSHDB, FLUSHALL) is noted whenever the guard is on:
// the disk may have left the low mark a moment before (a flush gave room), and a flushed
// database's files are to go anyway.
func (s *Store) wrote(tx *Tx) {
	low := s.disk.low.Load()
	if !low && (len(tx.ranges) == 0 || s.opts.DiskReserve == nil) {
		return
	}
	g := &s.disk
	g.reclaimMu.Lock()
	defer g.reclaimMu.Unlock()
	if g.reclaim == nil {
		g.reclaim = make(map[int]*keySpan)
	}
	span := func(p int) *keySpan {
		id := tx.shards[p].id
		if g.reclaim[id] == nil {
			g.reclaim[id] = &keySpan{}
		}
		return g.reclaim[id]
	}
	for _, r := range tx.ranges {
		span(r.part).add(r.lower, r.upper)
	}
	if !low {
		return
	}
	for k, e := range tx.overlay {
		if e.dirty && !e.exists {
			raw := []byte(k[2:])
			span(int(k[0])<<8|int(k[1])).add(raw, append(raw, 0))
		}
	}
}

// writeFailed records that RocksDB failed a write and returns the commit's error: a failed
// write of the log stops the store for good; any other failure is RocksDB's background error
// (a flush or compaction found no room), which it recovers from once there is room.
func (s *Store) writeFailed(err error) error {
	if !isLogFailure(err) {
		if !s.disk.stalled.Swap(true) {
			log.Printf("disk: RocksDB stopped writes (%v): writes are refused until it recovers, once there is room", err)
		}
		s.setLow(true)
		return fmt.Errorf("%w (%v)", ErrNoSpace, err)
	}
	if !s.disk.failed.Swap(true) {
		log.Printf("disk: RocksDB failed a write (%v): the store refuses every write until it is restarted; reads go on", err)
	}
	s.setLow(true)
	return fmt.Errorf("%w (%v)", ErrWriteFailed, err)
}

// isLogFailure reports whether err is RocksDB failing to write or sync its write-ahead log
// (a "NNNNNN.log" file), after which Debian's build aborts on the next use of the log.
func isLogFailure(err error) bool { return logFileName.MatchString(err.Error()) }

var logFileName = regexp.MustCompile(`[0-9]\.log(?:[^A-Za-z0-9_.]|$)`)

// walPrealloc is the room RocksDB takes at once for a new write-ahead log file: it
// preallocates it by 1.1 times a column family's write buffer, at most the total write
// buffer (GetWalPreallocateBlockSize).
func (s *Store) walPrealloc() int64 {
	return min(s.cfWriteBuffer()*11/10, s.dbWriteBuffer())
}

// diskLookInterval is how often the guard looks at the free space (and on every commit that
// used up the budget since the last look).
const diskLookInterval = 100 * time.Millisecond

// watchDisk looks at the free space every diskLookInterval until ctx ends, and relieves the
// disk while it is low.
func (s *Store) watchDisk(ctx context.Context) {
	tick := time.NewTicker(diskLookInterval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			s.lookAtDisk()
			if (s.disk.low.Load() || s.reclaimPending()) && s.roomForRocksDB() && !s.disk.stalled.Load() {
				s.relieveDisk()
			}
		}
	}
}

// reclaimPending reports whether deleted keys wait for relieveDisk's compaction.
func (s *Store) reclaimPending() bool {
	g := &s.disk
	g.reclaimMu.Lock()
	defer g.reclaimMu.Unlock()
	return len(g.reclaim) > 0
}

// relieveDisk gives space back while the disk is low (or deleted keys wait, see wrote),
// within the floor kept for it: while low it flushes the memtables once they hold a megabyte
// (the log files they kept then go, and the floor drops by what they held), and it compacts
// the keys deleted since the last time (the deleted values' table and blob files then go).
func (s *Store) relieveDisk() {
	fo := grocksdb.NewDefaultFlushOptions()
	defer fo.Destroy()
	fo.SetWait(true)
	// Only while low: with room, a compaction left waiting must not flush every look.
	if s.disk.low.Load() && s.memtableBytes() >= 1<<20 {
		cfs := []*grocksdb.ColumnFamilyHandle{s.defCF}
		for _, sh := range s.shards {
			cfs = append(cfs, sh.cf, sh.logCF)
		}
		for _, cf := range cfs {
			if err := s.db.FlushCF(cf, fo); err != nil {
				log.Printf("disk: flushing the memtables to give space back: %v", err)
				return
			}
		}
		s.lookAtDisk()
	}
	g := &s.disk
	g.reclaimMu.Lock()
	spans := g.reclaim
	g.reclaim = nil
	g.reclaimMu.Unlock()
	for id, r := range spans {
		// Room for the compaction: its input's table files, preallocated 1.1 times (the
		// deleted values' blobs are dropped, not rewritten).
		cf := s.shards[id].cf
		need := g.floor.Load() + propertyInt(s.db.GetPropertyCF("rocksdb.total-sst-files-size", cf))*11/10
		if g.failed.Load() || g.free.Load() < need {
			g.reclaimMu.Lock()
			if g.reclaim == nil {
				g.reclaim = make(map[int]*keySpan)
			}
			if g.reclaim[id] == nil {
				g.reclaim[id] = &keySpan{}
			}
			g.reclaim[id].add(r.lo, r.hi) // for a later look
			g.reclaimMu.Unlock()
			continue
		}
		s.db.CompactRangeCF(cf, grocksdb.Range{Start: r.lo, Limit: r.hi})
	}
	if len(spans) > 0 {
		s.lookAtDisk()
	}
}

// memtableBytes returns what every column family's memtables hold.
func (s *Store) memtableBytes() int64 {
	if !s.Opened() {
		return 0
	}
	sum := propertyInt(s.db.GetPropertyCF("rocksdb.cur-size-all-mem-tables", s.defCF))
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
	free, total, err := statDisk(s.opts.Dir)
	if err != nil {
		return nil
	}
	s.disk.total.Store(total)
	logs := s.LogBytes()
	need := s.reserve() + logs + s.walPrealloc()
	if free < need {
		return fmt.Errorf("%s: %w: %d bytes free, opening needs %d (disk-reserve %d, %d of write-ahead log to replay, %d for a new one); free some space or lower disk-reserve",
			s.opts.Dir, ErrNoSpace, free, need, s.reserve(), logs, s.walPrealloc())
	}
	return nil
}
