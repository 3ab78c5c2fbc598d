package shard

import (
	"encoding/binary"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/linxGnu/grocksdb"

	"shardis/binlog"
	"shardis/codec"
)

// Job is work a shard runs in its goroutine. Run executes against tx, which is bound to the
// shard; a shard runs every job it finds queued before committing them together (a group
// commit), and then calls Done on each with the commit's error. A job must not retain tx.
type Job interface {
	Run(tx *Tx)
	Done(err error)
}

// maxGroup bounds how many queued jobs share one commit.
const maxGroup = 128

// message is what a shard's inbox carries: a job, or a barrier at which it parks.
type message struct {
	job  Job
	park *barrier
}

// barrier parks a shard for a coordinator: the shard signals arrived, then waits for release.
type barrier struct {
	arrived chan struct{}
	release chan struct{}
}

// Shard is one shard: a goroutine, a column family and the bookkeeping that goes with it.
// Fields below the line are owned by whoever holds the shard (see the package comment).
type Shard struct {
	id    int
	store *Store
	cf    *grocksdb.ColumnFamilyHandle // keys: meta, data, TTL index, bookkeeping
	logCF *grocksdb.ColumnFamilyHandle // binlog records, by sequence
	logID uint32                       // logCF's id, as a WriteBatch names it
	inbox chan message

	// Counters readable from any goroutine.
	keys     []atomic.Int64 // per physical db: live keys (DBSIZE)
	expires  []atomic.Int64 // per physical db: keys with an expire (INFO keyspace)
	firstSeq atomic.Uint64  // oldest binlog record kept (0: none)
	lastSeq  atomic.Uint64  // newest binlog record
	dbmapPub []atomic.Int32 // copy of dbmap for readers outside the shard
	// access holds the keys' access fields (access.go): any goroutine, atomically; nil once
	// the store is closed.
	access atomic.Pointer[accessTable]

	// commits counts commit edges: odd while a commit is being written (from before its
	// RocksDB write to after its write-through to the key cache), even otherwise. A view that
	// saw it change, or odd, may have read part of a commit and is retried in the shard.
	commits atomic.Uint64

	// WATCHed keys of this shard (see Watcher): any goroutine, under watchMu; nWatches is
	// read without it on every write.
	watchMu  sync.Mutex
	watches  map[string][]*watchEntry // logical db | key -> entries
	nWatches atomic.Int32

	// Blocked commands waiting for keys of this shard (see Waiter): any goroutine, under
	// waitMu; nWaiters is read without it.
	waitMu   sync.Mutex
	waiters  map[string][]*Waiter // logical db | key -> waiters, oldest first
	nWaiters atomic.Int32
	// interest is nWatches + nWaiters, plus one while any client tracks keys
	// (Store.TrackWrites): the one atomic load a write pays to know whether anybody cares
	// about the keys it touches (Tx.noteWrite).
	interest atomic.Int32

	// ---- owned by the holder ----
	dbmap   []int // logical db -> physical db (SWAPDB swaps entries)
	cache   *keyCache
	version uint64
	tx      *Tx // reused for every group
	ages    binlog.Ages
	tail    binlogTail // see tail.go
}

// newShard makes shard id of s; Store.Open gives it its column families.
func newShard(s *Store, id int) *Shard {
	n := s.opts.Databases
	sh := &Shard{
		id: id, store: s,
		inbox:    make(chan message, 1024),
		keys:     make([]atomic.Int64, n),
		expires:  make([]atomic.Int64, n),
		dbmapPub: make([]atomic.Int32, n),
		dbmap:    make([]int, n),
		cache:    newKeyCache(s.opts.KeyCacheSize / int64(s.opts.Shards)),
	}
	sh.access.Store(new(accessTable))
	for i := range sh.dbmap {
		sh.dbmap[i] = i
		sh.dbmapPub[i].Store(int32(i))
	}
	return sh
}

// ID returns the shard's index.
func (sh *Shard) ID() int { return sh.id }

var (
	stateDBMap  = []byte{codec.PrefixState, 'm'}
	stateCounts = []byte{codec.PrefixState, 'c'} // + physical db -> keys(8) | expires(8)
)

func countsKey(pdb int) []byte { return append(append([]byte(nil), stateCounts...), byte(pdb)) }

// load reads the shard's bookkeeping after Open.
func (sh *Shard) load() error {
	s := sh.store
	v, err := s.db.GetCF(s.ro, sh.cf, stateDBMap)
	if err != nil {
		return err
	}
	if v.Exists() && len(v.Data()) == len(sh.dbmap) {
		for i, p := range v.Data() {
			sh.dbmap[i] = int(p)
			sh.dbmapPub[i].Store(int32(p))
		}
	}
	v.Free()
	for pdb := range sh.keys {
		v, err := s.db.GetCF(s.ro, sh.cf, countsKey(pdb))
		if err != nil {
			return err
		}
		if d := v.Data(); len(d) == 16 {
			sh.keys[pdb].Store(int64(binary.BigEndian.Uint64(d)))
			sh.expires[pdb].Store(int64(binary.BigEndian.Uint64(d[8:])))
		}
		v.Free()
	}
	// Binlog bounds: first and last record.
	ro := grocksdb.NewDefaultReadOptions()
	defer ro.Destroy()
	ro.SetIterateLowerBound([]byte{binlog.Prefix})
	ro.SetIterateUpperBound([]byte{binlog.Prefix + 1})
	it := s.db.NewIteratorCF(ro, sh.logCF)
	defer it.Close()
	it.SeekToFirst()
	if it.Valid() {
		k := it.Key()
		seq, _ := binlog.KeySeq(k.Data())
		k.Free()
		sh.firstSeq.Store(seq)
		it.SeekToLast()
		k = it.Key()
		seq, _ = binlog.KeySeq(k.Data())
		k.Free()
		sh.lastSeq.Store(seq)
		v := it.Value()
		sh.ages.Note(seq+1, binlog.RecordTime(v.Data()))
		v.Free()
	}
	if err := it.Err(); err != nil {
		return err
	}
	floor, err := sh.loadSeqFloor()
	if err != nil {
		return err
	}
	if floor > sh.lastSeq.Load() { // a full sync's position, no record after it yet
		sh.lastSeq.Store(floor)
		sh.firstSeq.Store(0)
	}
	if sh.tx == nil {
		sh.tx = newTx(s)
	}
	return nil
}

func (sh *Shard) destroy() {
	if sh.tx != nil {
		sh.tx.destroy()
		sh.tx = nil
	}
	if sh.cf != nil {
		sh.cf.Destroy()
		sh.logCF.Destroy()
		sh.cf, sh.logCF = nil, nil
	}
}

// Post queues job on the shard. It blocks while the inbox is full, which is backpressure.
func (sh *Shard) Post(job Job) { sh.inbox <- message{job: job} }

// run is the shard's goroutine: it takes every queued job (up to maxGroup), runs them in
// order in one transaction, commits once, then reports to each job. A barrier ends a group:
// the shard commits, parks until the coordinator releases it, and goes on.
func (sh *Shard) run() {
	group := make([]Job, 0, maxGroup)
	for m := range sh.inbox {
		if m.park != nil {
			sh.parkAt(m.park)
			continue
		}
		group = append(group[:0], m.job)
		var parkAfter *barrier
	drain:
		for len(group) < maxGroup {
			select {
			case m2, ok := <-sh.inbox:
				if !ok {
					break drain
				}
				if m2.park != nil {
					parkAfter = m2.park
					break drain
				}
				group = append(group, m2.job)
			default:
				break drain
			}
		}
		tx := sh.tx
		tx.begin(sh)
		for _, j := range group {
			tx.StartCommand()
			j.Run(tx)
		}
		err := tx.commit()
		if deferred := tx.takeDeferred(); deferred != nil {
			// A ready key's first waiter needs shards this one cannot take: a goroutine of its
			// own serves it, and only then are the jobs done, so that what their clients send
			// next sees the waiter served, as in Redis.
			jobs := slices.Clone(group)
			sh.store.serving.Add(1)
			go func() {
				defer sh.store.serving.Done()
				sh.store.serveDeferred(deferred)
				for _, j := range jobs {
					j.Done(err)
				}
			}()
		} else {
			for _, j := range group {
				j.Done(err)
			}
		}
		clear(group)
		if parkAfter != nil {
			sh.parkAt(parkAfter)
		}
	}
}

func (sh *Shard) parkAt(b *barrier) {
	b.arrived <- struct{}{}
	<-b.release
}

// logicalDB maps a physical database back to the logical one that now names it.
func (sh *Shard) logicalDB(pdb int) int {
	for l, p := range sh.dbmap {
		if p == pdb {
			return l
		}
	}
	return pdb
}

// Keys returns the number of keys of logical db in this shard (any goroutine).
func (sh *Shard) Keys(db int) int64 { return sh.keys[sh.dbmapPub[db].Load()].Load() }

// Expires returns the number of keys with an expiry in logical db (any goroutine).
func (sh *Shard) Expires(db int) int64 { return sh.expires[sh.dbmapPub[db].Load()].Load() }

// BinlogRange returns the first and last sequence of the shard's binlog (0, 0 when empty).
func (sh *Shard) BinlogRange() (first, last uint64) { return sh.firstSeq.Load(), sh.lastSeq.Load() }

// nextVersion returns a version for a new collection: larger than any the shard handed out,
// and (being wall-clock nanoseconds) larger than any from before a restart.
func (sh *Shard) nextVersion(nowNs uint64) uint64 {
	sh.version = max(sh.version+1, nowNs)
	return sh.version
}

// TryPost queues job unless the inbox is full. Shard goroutines use it: a shard must never
// block on another shard's inbox.
func (sh *Shard) TryPost(job Job) bool {
	select {
	case sh.inbox <- message{job: job}:
		return true
	default:
		return false
	}
}
