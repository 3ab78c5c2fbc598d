// Package shard owns the data: one RocksDB database with one column family per shard, a
// goroutine per shard that is the only writer of its column family, key routing, and the
// coordination of commands whose keys live in several shards.
//
// Ownership is the locking discipline. A shard's column family and its bookkeeping (key
// counts, binlog sequence, database map) are touched only by the goroutine that holds the
// shard: normally its own goroutine; while a multi-shard command runs, the coordinator that
// parked it at a barrier (see Store.Acquire). Channels hand ownership over, so no mutex is on
// the write path.
package shard

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cespare/xxhash/v2"
	"github.com/linxGnu/grocksdb"

	"shardis/binlog"
	"shardis/codec"
	"shardis/ttl"
)

// Options configure a Store.
type Options struct {
	Dir string
	// Shards is the shard count of a new data directory. An existing directory must have been
	// made with the same count, unless ShardsFromDir: then it keeps its own.
	Shards int
	// ShardsFromDir: the shard count was not chosen by the user (the shards setting is 0), so
	// a directory made on a machine with another CPU count opens with the count it has.
	ShardsFromDir   bool
	Databases       int   // logical databases (SELECT 0..Databases-1), at most 256
	BlockCacheSize  int64 // one LRU block cache shared by all shards
	KeyCacheSize    int64 // hot-key caches, split evenly between the shards (0: off)
	WriteBufferSize int64 // one memtable budget shared by all shards
	// BlobMinSize: values of this size or more are kept in blob files, out of the LSM tree,
	// so compactions do not rewrite them (0: never; docs/PERFORMANCE.md, BlobDB).
	BlobMinSize int64
	// Fsync returns the current appendfsync policy: "always", "everysec" or "no".
	Fsync func() string
	// Binlog returns the current retention limits (0 = unlimited).
	Binlog binlog.Limits
	// Hz returns how many times a second background workers run.
	Hz func() int
	// DiskReserve returns the free space (bytes) writes that add data must leave on the data
	// directory's disk, besides what RocksDB's flushes and compactions may take (see
	// disk.go); a negative value: the smaller of 64 MB and a sixteenth of the volume; nil: no
	// more than RocksDB's room, and Open does not check the room first.
	DiskReserve func() int64
}

// ErrLayout is wrapped by Open when the data directory was made with another shard count or
// format: opening it would silently misroute keys.
var ErrLayout = errors.New("data directory layout mismatch")

// ErrDirInUse is wrapped by Open when another process has the data directory open.
var ErrDirInUse = errors.New("data directory is already in use")

// manifest is stored in the default column family and checked on every open.
type manifest struct {
	Format int `json:"format"`
	Shards int `json:"shards"`
}

var manifestKey = []byte("manifest")

// Store is the open database: every shard and what they share.
type Store struct {
	opts Options
	// expirePass is told how long each TTL worker pass took (SetExpirePass).
	expirePass atomic.Pointer[func(time.Duration)]
	// accessPolicy is what access fields record (access.go); nil: Redis's defaults (LRU).
	accessPolicy atomic.Pointer[AccessPolicy]
	// encodingLimits are Redis's small-encoding limits (limits.go); nil: Redis's defaults.
	encodingLimits atomic.Pointer[EncodingLimits]
	// activeExpireOff stops the TTL workers' deletions (DEBUG SET-ACTIVE-EXPIRE 0).
	activeExpireOff atomic.Bool
	// replica: the store is a replica's (replica.go): expiry hides keys, never deletes them.
	replica atomic.Bool
	// logSignal wakes binlog readers when commits add records (replica.go).
	logSignal logSignal
	// binlogPin: what connected replicas still need of the binlog (SetBinlogPin).
	binlogPin atomic.Pointer[func(id int) (uint64, bool)]
	db        *grocksdb.DB
	dbOpts    *grocksdb.Options
	logOpts   *grocksdb.Options // the binlog families' (see Open)
	bbto      *grocksdb.BlockBasedTableOptions
	cache     *grocksdb.Cache
	defCF     *grocksdb.ColumnFamilyHandle
	ro        *grocksdb.ReadOptions
	wo        *grocksdb.WriteOptions
	woSync    *grocksdb.WriteOptions
	// woBulk writes without the WAL: a load's writes (shard.Loader), made durable by a
	// memtable flush when the load finishes.
	woBulk *grocksdb.WriteOptions
	shards []*Shard
	// writeBuffer is the memtable budget: WriteBufferSize, at most an eighth of the volume
	// when the disk guard is on (see dbWriteBuffer, cfWriteBuffer).
	writeBuffer int64
	// tailOn: something read the binlog, so commits keep the shards' tails (tail.go).
	tailOn atomic.Bool

	cancel  context.CancelFunc
	workers sync.WaitGroup // TTL, binlog retention and WAL sync workers
	running sync.WaitGroup // shard goroutines
	serving sync.WaitGroup // goroutines serving deferred ready keys (see Tx.Defer)
	closed  atomic.Bool
	saving  sync.Mutex // held by Checkpoint; Close waits for it
	// opened is set once Open succeeded; lifeMu orders it with SetKeyCacheSize, which
	// changes the caches in place before the shard goroutines run and through them after.
	opened atomic.Bool
	lifeMu sync.Mutex
	disk   diskGuard
	// replay is what Open replays (ReplayProgress).
	replay struct {
		logs atomic.Pointer[[]walFile]
		done atomic.Int64
	}

	views sync.Pool // of *Tx, for View

	units *binlog.UnitIDs // ids of multi-shard commits' binlog units (see unit.go)

	streamsMu sync.Mutex
	streams   map[*Stream]struct{} // open reply streams (see Stream); Close closes them

	readyServer ReadyServer   // serves deferred ready keys (SetReadyServer)
	tracker     Tracker       // told what commits wrote while tracking is on (tracked.go)
	tracking    atomic.Bool   // TrackWrites: report written keys
	trackGen    atomic.Uint64 // times TrackWrites(true) ran (see reportTracked)
	blocked     atomic.Int64  // registered waiters (see Waiter)
	// Keyspace events (events.go): the classes produced and where committed ones go.
	eventClasses atomic.Uint32
	eventSink    EventSink

	// LastSave is the unix time of the last successful checkpoint (SAVE/BGSAVE) or of Open.
	LastSave atomic.Int64
	// Dirty counts writes since the last save, as Redis's rdb_changes_since_last_save.
	Dirty atomic.Int64
	// StreamsOpened counts the reply streams ever opened (see Stream).
	StreamsOpened atomic.Int64
	// ExpiredKeys counts keys deleted because their time came (lazily or by the TTL worker).
	ExpiredKeys atomic.Int64
}

// Open opens or creates the data directory and starts every shard and its workers: New, then
// Store.Open.
func Open(opts Options) (*Store, error) {
	s, err := New(opts)
	if err != nil {
		return nil, err
	}
	if err := s.Open(); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// New prepares a store over opts.Dir without opening RocksDB: it checks the options, creates
// the directory, settles the shard count (from the directory when opts.ShardsFromDir) and
// makes the shards, their caches and the shared block cache. It is quick, so a server can
// listen before the slow part (Open, which may replay a large write-ahead log). Until Open
// succeeds, only NumShards, ShardOf, Databases, the Set* hooks, the statistics counters,
// BlockCacheUsage and the Property readers (which answer empty) may be used; Close frees it.
func New(opts Options) (*Store, error) {
	if opts.Shards < 1 || opts.Shards > 4096 {
		return nil, fmt.Errorf("shards must be between 1 and 4096, got %d", opts.Shards)
	}
	if opts.Databases < 1 || opts.Databases > 256 {
		return nil, fmt.Errorf("databases must be between 1 and 256, got %d", opts.Databases)
	}
	if opts.Fsync == nil {
		opts.Fsync = func() string { return "everysec" }
	}
	if opts.Binlog == nil {
		opts.Binlog = func() (int64, time.Duration) { return 0, 0 }
	}
	if opts.Hz == nil {
		opts.Hz = func() int { return 10 }
	}
	if err := os.MkdirAll(opts.Dir, 0o755); err != nil {
		return nil, err
	}
	tuneMalloc()
	if opts.ShardsFromDir {
		if n := dirShards(opts.Dir); n > 0 {
			opts.Shards = n
		}
	}
	s := &Store{opts: opts, streams: make(map[*Stream]struct{})}
	s.views.New = func() any { return newViewTx(s) }
	s.cache = grocksdb.NewLRUCache(uint64(max(opts.BlockCacheSize, 1<<20)))
	s.bbto = grocksdb.NewDefaultBlockBasedTableOptions()
	s.bbto.SetBlockCache(s.cache)
	s.bbto.SetFilterPolicy(grocksdb.NewBloomFilter(10))
	s.bbto.SetCacheIndexAndFilterBlocks(true)
	s.bbto.SetPinL0FilterAndIndexBlocksInCache(true)
	s.dbOpts = grocksdb.NewDefaultOptions()
	s.dbOpts.SetCreateIfMissing(true)
	s.dbOpts.SetCreateIfMissingColumnFamilies(true)
	s.dbOpts.SetBlockBasedTableFactory(s.bbto)
	s.writeBuffer = opts.WriteBufferSize
	if _, total, err := statDisk(opts.Dir); err == nil && opts.DiskReserve != nil && total > 0 {
		// A flush writes what the memtables hold, and the disk guard keeps that room free:
		// memtables bigger than an eighth of the volume would leave little of a small one.
		s.writeBuffer = min(s.writeBuffer, total/8)
	}
	s.dbOpts.SetDbWriteBufferSize(uint64(s.dbWriteBuffer()))
	s.dbOpts.SetWriteBufferSize(uint64(s.cfWriteBuffer()))
	s.dbOpts.SetMaxBackgroundJobs(4)
	s.dbOpts.SetCompression(grocksdb.LZ4Compression)
	// A bloom filter over each memtable's keys: the existence checks of SET, HSET, SADD, ZADD
	// and GETs of absent keys mostly look for keys that are not there, and without it each one
	// walks the memtable's skip list (about 5 µs here).
	s.dbOpts.SetMemTablePrefixBloomSizeRatio(0.1)
	s.dbOpts.SetMemtableWholeKeyFiltering(true)
	// The binlog families only ever append increasing keys and are read rarely (replay, and
	// the trim of a retention window, which finds its cut without reading: binlogAges). A
	// vector memtable appends in O(1) where the skip list walks its levels; it sorts a copy
	// when read, which those rare readers can afford. It does not support concurrent memtable
	// inserts, so RocksDB inserts a write group's batches one after the other (measured
	// neutral here: docs/PERFORMANCE.md).
	s.dbOpts.SetAllowConcurrentMemtableWrites(false)
	s.logOpts = s.dbOpts.Clone()
	s.logOpts.SetMemtableVectorRep()
	s.logOpts.SetMemTablePrefixBloomSizeRatio(0)
	s.logOpts.SetMemtableWholeKeyFiltering(false)
	// Big values of the data families go to blob files (RocksDB's integrated BlobDB): the
	// tree then holds only a pointer, and compactions stop copying the value at every level.
	// The binlog families keep their records in the tree: they are read in order and trimmed.
	if opts.BlobMinSize > 0 {
		s.dbOpts.EnableBlobFiles(true)
		s.dbOpts.SetMinBlobSize(uint64(opts.BlobMinSize))
		s.dbOpts.SetBlobCompressionType(grocksdb.LZ4Compression)
		s.dbOpts.EnableBlobGC(true)
	}
	for i := range opts.Shards {
		s.shards = append(s.shards, newShard(s, i))
	}
	s.LastSave.Store(time.Now().Unix())
	s.snapshotLogs()
	return s, nil
}

// dbWriteBuffer is RocksDB's db_write_buffer_size: every memtable together.
func (s *Store) dbWriteBuffer() int64 { return max(s.writeBuffer, 8<<20) }

// cfWriteBuffer is RocksDB's write_buffer_size: one column family's memtable.
func (s *Store) cfWriteBuffer() int64 { return max(s.writeBuffer/int64(s.opts.Shards), 4<<20) }

// Open opens RocksDB (replaying its write-ahead log: the part that takes long after a crash
// with many keys), reads every shard's bookkeeping and starts the shards and their workers
// (TTL, binlog retention, WAL sync). On error the store stays unopened; Close frees it.
func (s *Store) Open() error {
	opts := s.opts
	path := filepath.Join(opts.Dir, "rocksdb")
	names := []string{"default"}
	for i := range opts.Shards {
		names = append(names, shardCFName(i), binlogCFName(i))
	}
	if existing, err := grocksdb.ListColumnFamilies(s.dbOpts, path); err == nil {
		if err := checkColumnFamilies(opts, existing, names); err != nil {
			return err
		}
	}
	if err := s.checkRoomToOpen(); err != nil {
		return err
	}
	s.snapshotLogs()
	cfOpts := make([]*grocksdb.Options, len(names))
	for i := range cfOpts {
		cfOpts[i] = s.dbOpts
		if strings.HasPrefix(names[i], "binlog-") {
			cfOpts[i] = s.logOpts
		}
	}
	db, handles, err := grocksdb.OpenDbColumnFamilies(s.dbOpts, path, names, cfOpts)
	if err != nil {
		if strings.Contains(err.Error(), "LOCK") {
			// RocksDB holds an exclusive lock on its LOCK file while a database is open.
			return fmt.Errorf("%s: %w (another shardis has it open)", opts.Dir, ErrDirInUse)
		}
		return fmt.Errorf("open %s: %w", path, err)
	}
	s.db, s.defCF = db, handles[0]
	s.ro = grocksdb.NewDefaultReadOptions()
	s.wo = grocksdb.NewDefaultWriteOptions()
	s.woSync = grocksdb.NewDefaultWriteOptions()
	s.woSync.SetSync(true)
	s.woBulk = grocksdb.NewDefaultWriteOptions()
	s.woBulk.DisableWAL(true)
	for i, sh := range s.shards {
		sh.cf, sh.logCF = handles[1+2*i], handles[2+2*i]
		sh.logID = sh.logCF.ID()
	}
	if err := s.checkManifest(); err != nil {
		s.closeDB()
		return err
	}
	if err := s.openUnits(); err != nil {
		s.closeDB()
		return err
	}
	for _, sh := range s.shards {
		if err := sh.load(); err != nil {
			s.closeDB()
			return fmt.Errorf("shard %d: %w", sh.id, err)
		}
	}
	s.LastSave.Store(time.Now().Unix())
	s.lifeMu.Lock()
	s.start()
	s.opened.Store(true)
	s.lifeMu.Unlock()
	s.lookAtDisk()
	return nil
}

// LogBytes returns the size of RocksDB's write-ahead log files in the data directory: before
// Open, what it will replay.
func (s *Store) LogBytes() int64 {
	logs, _ := filepath.Glob(filepath.Join(s.opts.Dir, "rocksdb", "*.log"))
	var n int64
	for _, p := range logs {
		if fi, err := os.Stat(p); err == nil {
			n += fi.Size()
		}
	}
	return n
}

// Opened reports whether Open succeeded (and Close did not run yet).
func (s *Store) Opened() bool { return s.opened.Load() && !s.closed.Load() }

// Each shard has two column families: its keys (meta, data, TTL index, bookkeeping) and its
// binlog. Apart, each memtable sees the inserts it is good at: random for the keys, strictly
// increasing for the binlog, which RocksDB's skip list appends in near-constant time when no
// other key comes between (mixed in one family, every binlog insert was a random one).
func shardCFName(i int) string  { return fmt.Sprintf("shard-%04d", i) }
func binlogCFName(i int) string { return fmt.Sprintf("binlog-%04d", i) }

// checkColumnFamilies refuses a data directory whose column families are not the ones this
// configuration and format expect, before anything is created in it.
func checkColumnFamilies(opts Options, existing, want []string) error {
	shards := 0
	for _, n := range existing {
		if strings.HasPrefix(n, "shard-") {
			shards++
		}
	}
	if shards != opts.Shards {
		return fmt.Errorf("%w: %s holds %d shards, configured for %d (start with --shards %d)",
			ErrLayout, opts.Dir, shards, opts.Shards, shards)
	}
	if !slices.Equal(slices.Sorted(slices.Values(existing)), slices.Sorted(slices.Values(want))) {
		return fmt.Errorf("%w: %s was written by another version of the on-disk format (column families %v)",
			ErrLayout, opts.Dir, existing)
	}
	return nil
}

// dirShards returns how many shards the data directory dir holds (0: none, or no database).
func dirShards(dir string) int {
	o := grocksdb.NewDefaultOptions()
	defer o.Destroy()
	names, err := grocksdb.ListColumnFamilies(o, filepath.Join(dir, "rocksdb"))
	if err != nil {
		return 0
	}
	n := 0
	for _, name := range names {
		if strings.HasPrefix(name, "shard-") {
			n++
		}
	}
	return n
}

func (s *Store) checkManifest() error {
	v, err := s.db.GetCF(s.ro, s.defCF, manifestKey)
	if err != nil {
		return err
	}
	defer v.Free()
	want := manifest{Format: codec.FormatVersion, Shards: len(s.shards)}
	if !v.Exists() {
		b, _ := json.Marshal(want)
		return s.db.PutCF(s.woSync, s.defCF, manifestKey, b)
	}
	var got manifest
	if err := json.Unmarshal(v.Data(), &got); err != nil {
		return fmt.Errorf("%w: unreadable manifest in %s: %v", ErrLayout, s.opts.Dir, err)
	}
	if got.Format != want.Format && !migratable(got.Format) {
		return fmt.Errorf("%w: %s has format %d, this build reads format %d", ErrLayout, s.opts.Dir, got.Format, want.Format)
	}
	if got.Shards != want.Shards {
		return fmt.Errorf("%w: %s holds %d shards, configured for %d (start with --shards %d)",
			ErrLayout, s.opts.Dir, got.Shards, want.Shards, got.Shards)
	}
	if got.Format != want.Format {
		if got.Format < 6 {
			if err := s.migrateLists(); err != nil {
				return fmt.Errorf("migrate %s from format %d to %d: %w", s.opts.Dir, got.Format, want.Format, err)
			}
		}
		b, _ := json.Marshal(want)
		if err := s.db.PutCF(s.woSync, s.defCF, manifestKey, b); err != nil {
			return fmt.Errorf("migrate %s from format %d to %d: %w", s.opts.Dir, got.Format, want.Format, err)
		}
	}
	return nil
}

func (s *Store) start() {
	ctx, cancel := context.WithCancel(context.Background())
	s.cancel = cancel
	interval := func() time.Duration { return time.Second / time.Duration(max(1, s.opts.Hz())) }
	for _, sh := range s.shards {
		s.running.Add(1)
		go func() { defer s.running.Done(); sh.run() }()
		s.workers.Add(2)
		go func() { defer s.workers.Done(); ttl.Run(ctx, sh, interval, s.expirePassed) }()
		go func() { defer s.workers.Done(); binlog.RunRetention(ctx, sh, time.Second, s.opts.Binlog) }()
	}
	s.workers.Add(2)
	go func() { defer s.workers.Done(); s.syncLoop(ctx) }()
	go func() { defer s.workers.Done(); s.watchDisk(ctx) }()
}

// SetExpirePass sets the function told how long each TTL worker pass took (every shard's,
// from their workers' goroutines); nil stops it. It may be called while the store runs.
func (s *Store) SetExpirePass(f func(time.Duration)) {
	if f == nil {
		s.expirePass.Store(nil)
		return
	}
	s.expirePass.Store(&f)
}

func (s *Store) expirePassed(d time.Duration) {
	if f := s.expirePass.Load(); f != nil {
		(*f)(d)
	}
}

// syncLoop implements appendfsync everysec: the WAL is synced once a second.
func (s *Store) syncLoop(ctx context.Context) {
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			if s.opts.Fsync() == "everysec" && s.roomForRocksDB() {
				if err := s.db.FlushWAL(true); err != nil {
					_ = s.writeFailed(err)
				}
			}
		}
	}
}

func (s *Store) writeOptions(bulk bool) *grocksdb.WriteOptions {
	if bulk {
		return s.woBulk
	}
	if s.opts.Fsync() == "always" {
		return s.woSync
	}
	return s.wo
}

// NumShards returns the number of shards.
func (s *Store) NumShards() int { return len(s.shards) }

// Databases returns the number of logical databases.
func (s *Store) Databases() int { return s.opts.Databases }

// Shard returns shard i.
func (s *Store) Shard(i int) *Shard { return s.shards[i] }

// ShardOf returns the shard that owns key: xxhash64 of its hash tag, modulo the shard count.
// Keys that share a hash tag share a shard.
func (s *Store) ShardOf(key []byte) int {
	return int(xxhash.Sum64(codec.HashTag(key)) % uint64(len(s.shards)))
}

// SetBlockCacheSize resizes the shared block cache (CONFIG SET block-cache-size).
func (s *Store) SetBlockCacheSize(n int64) { s.cache.SetCapacity(uint64(max(n, 1<<20))) }

// SetKeyCacheSize changes the hot-key caches' budget (CONFIG SET key-cache-size). Each shard
// applies it in its own goroutine, the owner of its cache.
func (s *Store) SetKeyCacheSize(n int64) {
	per := n / int64(len(s.shards))
	s.lifeMu.Lock()
	if !s.opened.Load() { // no shard goroutine owns the caches yet
		for _, sh := range s.shards {
			sh.cache.setBudget(per)
		}
		s.lifeMu.Unlock()
		return
	}
	s.lifeMu.Unlock()
	for _, sh := range s.shards {
		_ = s.Do(sh.id, func(*Tx) { sh.cache.setBudget(per) })
	}
}

// BlockCacheUsage returns the bytes held by the block cache.
func (s *Store) BlockCacheUsage() uint64 { return s.cache.GetUsage() }

// Property returns a RocksDB property of the whole database (the default column family for
// per-column-family properties).
func (s *Store) Property(name string) string {
	if !s.Opened() {
		return ""
	}
	return s.db.GetProperty(name)
}

// IntProperty returns an integer RocksDB property summed over every shard's column family,
// e.g. "rocksdb.cur-size-all-mem-tables".
func (s *Store) IntProperty(name string) int64 {
	if !s.Opened() {
		return 0
	}
	var sum int64
	for _, sh := range s.shards {
		n, _ := strconv.ParseInt(strings.TrimSpace(s.db.GetPropertyCF(name, sh.cf)), 10, 64)
		sum += n
	}
	return sum
}

// Checkpoint writes a consistent copy of the database to dir (SAVE / BGSAVE).
func (s *Store) Checkpoint(dir string) error {
	s.saving.Lock() // one at a time, and Close waits for it
	defer s.saving.Unlock()
	if !s.Opened() {
		return errors.New("store is not open")
	}
	if s.disk.low.Load() {
		// A checkpoint flushes the memtables first: not on a full disk (disk.go).
		return ErrNoSpace
	}
	cp, err := s.db.NewCheckpoint()
	if err != nil {
		return err
	}
	defer cp.Destroy()
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	if err := cp.CreateCheckpoint(dir, 0); err != nil {
		return err
	}
	s.LastSave.Store(time.Now().Unix())
	s.Dirty.Store(0)
	return nil
}

// SetActiveExpire turns the TTL workers' deletion of expired keys on or off (DEBUG
// SET-ACTIVE-EXPIRE); expired keys stay invisible to reads either way.
func (s *Store) SetActiveExpire(on bool) { s.activeExpireOff.Store(!on) }

// FlushMemtables writes every shard's memtable to table files, waits for it, and empties the
// shards' key caches (DEBUG RELOAD): afterwards the data is read back from files, as after a
// restart. The caller holds every shard (Acquire), so no commit writes a cache meanwhile;
// the event loops' reads may refill it, with what is on disk.
func (s *Store) FlushMemtables() error {
	if err := s.flushMemtables(); err != nil {
		return err
	}
	for _, sh := range s.shards {
		sh.cache.mu.Lock()
		sh.cache.epoch++ // a loop's read begun before must not insert into the emptied cache
		sh.cache.clear()
		sh.cache.mu.Unlock()
	}
	return nil
}

// SyncWAL forces the WAL to disk.
func (s *Store) SyncWAL() error {
	if s.disk.low.Load() {
		return ErrNoSpace
	}
	return s.db.FlushWAL(true)
}

// Close stops the workers, lets every shard finish what is queued, syncs the WAL and closes
// RocksDB. Nothing may post to a shard once Close started (the reactor waits for its batches
// before the store is closed), and it must not run while Open does. It is safe to call twice,
// and on a store that was never opened (it frees what New made).
func (s *Store) Close() error {
	if !s.closed.CompareAndSwap(false, true) {
		return nil
	}
	s.saving.Lock() // a SAVE/BGSAVE in progress finishes first
	defer s.saving.Unlock()
	if !s.opened.Load() {
		s.destroyOptions()
		return nil
	}
	s.cancel()
	s.workers.Wait() // they post to the shards: stop them before the inboxes close
	s.serving.Wait() // and so do the goroutines serving blocked commands
	for _, sh := range s.shards {
		close(sh.inbox)
	}
	s.running.Wait()
	s.closeWaiters()
	s.closeStreams()
	for _, sh := range s.shards {
		sh.access.Store(nil) // its memory goes now, even while something still holds the store
	}
	if s.lookAtDisk(); !s.roomForRocksDB() || s.disk.stalled.Load() {
		// A full disk (or a failed log write): flushing the memtables, syncing the log or
		// even closing RocksDB writes, and Debian's build aborts when that fails (disk.go).
		// RocksDB is left as after a crash, which it is made to survive: what was
		// acknowledged is in its log files, which the next start replays.
		// Its options and caches stay allocated too: it still uses them.
		log.Printf("disk: too little room to close RocksDB cleanly; leaving it as after a crash (the next start replays the write-ahead log)")
		return nil
	}
	err := s.flushMemtables()
	if werr := s.db.FlushWAL(true); err == nil {
		err = werr
	}
	s.closeDB()
	s.destroyOptions()
	return err
}

// flushMemtables writes every column family's memtable to an SST file, so that the next open
// has no write-ahead log to replay (a store of millions of keys would otherwise take seconds
// to open). A failure (a full disk) loses nothing: the WAL still holds the writes.
func (s *Store) flushMemtables() error {
	fo := grocksdb.NewDefaultFlushOptions()
	defer fo.Destroy()
	fo.SetWait(true)
	var errs []error
	if err := s.db.FlushCF(s.defCF, fo); err != nil {
		errs = append(errs, fmt.Errorf("flush: %w", err))
	}
	for _, sh := range s.shards {
		for _, cf := range []*grocksdb.ColumnFamilyHandle{sh.cf, sh.logCF} {
			if err := s.db.FlushCF(cf, fo); err != nil {
				errs = append(errs, fmt.Errorf("shard %d: flush: %w", sh.id, err))
			}
		}
	}
	return errors.Join(errs...)
}

// flushAfterBytes is the size of a commit after which its shards' memtables are flushed at
// once (flushSoon).
const flushAfterBytes = 64 << 20

// flushSoon asks RocksDB to write sh's memtables to table files, without waiting for it. A
// big commit (a 512 MB value is in the memtables twice, as the key's value and in its binlog
// record) fills them past their budget, but RocksDB schedules that flush only at the shard's
// next write: until then the memory stays taken. The disk guard counts what the memtables
// hold as room a flush needs, so flushing early asks for no more.
func (s *Store) flushSoon(sh *Shard) {
	if s.disk.low.Load() {
		return
	}
	fo := grocksdb.NewDefaultFlushOptions()
	defer fo.Destroy()
	fo.SetWait(false)
	for _, cf := range []*grocksdb.ColumnFamilyHandle{sh.cf, sh.logCF} {
		if err := s.db.FlushCF(cf, fo); err != nil {
			log.Printf("shard %d: flush after a big write: %v", sh.id, err)
		}
	}
}

func (s *Store) closeDB() {
	for _, sh := range s.shards {
		sh.destroy()
	}
	s.defCF.Destroy()
	s.ro.Destroy()
	s.wo.Destroy()
	s.woSync.Destroy()
	s.woBulk.Destroy()
	s.db.Close()
	s.db = nil
}

func (s *Store) destroyOptions() {
	s.dbOpts.Destroy()
	s.logOpts.Destroy()
	s.bbto.Destroy()
	s.cache.Destroy()
}

// Compact compacts every shard's column family fully (DEBUG/tests; RocksDB compacts on its
// own in normal operation). Range-deleted data is physically gone afterwards.
func (s *Store) Compact() {
	for _, sh := range s.shards {
		s.db.CompactRangeCF(sh.cf, grocksdb.Range{})
		s.db.CompactRangeCF(sh.logCF, grocksdb.Range{})
	}
}

// LiveDataBytes returns RocksDB's estimate of the bytes of live data in shard id's SST files
// and memtables: what reclamation tests watch shrink.
func (s *Store) LiveDataBytes(id int) int64 {
	sh := s.shards[id]
	n := func(p string) int64 {
		v, _ := strconv.ParseInt(strings.TrimSpace(s.db.GetPropertyCF(p, sh.cf)), 10, 64)
		return v
	}
	return n("rocksdb.total-sst-files-size") + n("rocksdb.cur-size-all-mem-tables")
}

// propertyInt parses an integer RocksDB property (0 when it is not one).
func propertyInt(v string) int64 {
	n, _ := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
	return n
}
