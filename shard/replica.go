package shard

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/linxGnu/grocksdb"

	"shardis/binlog"
	"shardis/codec"
)

// What replication needs of the store (package replication runs the link; docs/REPLICATION.md).
//
// A replica's shard i mirrors its master's shard i: the replica applies each of the master's
// binlog records and stores the record itself, bytes unchanged, at the master's sequence in
// its own binlog. The replica's binlog positions are therefore its replication position, kept
// with the data in the same commit, and a replica promoted by a failover serves the other
// replicas from the same sequences. Master and replica must have the same shard count.
//
// Expiry belongs to the master: a replica hides keys whose time has come but never deletes
// them (the master's DEL follows), and a record being applied sees every key, expired or not,
// as the master did when it logged it (Redis's rule for its master client).

// Replication's state names (see StateKey), in shard 0. A full sync does not copy them.
var (
	// StateReplication holds package replication's durable state (replication ids).
	StateReplication = []byte{'R'}
	// stateSeqFloor (per shard) is the binlog sequence a full sync left the shard at: the
	// sequence resumes after it even while the binlog holds no record.
	stateSeqFloor = []byte{'q'}
)

// SetReplica says whether the store is a replica's: expired keys are then hidden, not deleted,
// and the TTL workers delete nothing.
func (s *Store) SetReplica(on bool) { s.replica.Store(on) }

// Replica reports whether the store is a replica's (SetReplica).
func (s *Store) Replica() bool { return s.replica.Load() }

// SetApplying makes the commands run next in the transaction apply a master's records: no key
// counts as expired and nothing they do is logged, as Mirror stores the master's record
// instead. It lasts until the transaction commits.
func (tx *Tx) SetApplying(on bool) { tx.applying = on }

// expiredAt reports whether a key with expire time exp (0: none) is expired for this
// transaction.
func (tx *Tx) expiredAt(exp int64) bool { return exp != 0 && exp <= tx.nowMs && !tx.applying }

// ErrMirrorOrder is returned by Mirror for a record that does not follow the shard's last
// sequence.
var ErrMirrorOrder = errors.New("shard: mirrored record out of sequence")

// Mirror stores rec, a binlog record value read from a master, at sequence seq of held shard
// id's binlog. seq must follow the shard's last sequence: a replica never skips a record.
func (tx *Tx) Mirror(id int, seq uint64, rec []byte) error {
	p := tx.partOf(id)
	if p < 0 {
		tx.fail(ErrNotHeld)
		return ErrNotHeld
	}
	part := &tx.parts[p]
	if seq != part.nextSeq {
		err := fmt.Errorf("%w: shard %d record %d after %d", ErrMirrorOrder, id, seq, part.nextSeq-1)
		tx.fail(err)
		return err
	}
	k := binlog.AppendKey(nil, seq)
	tx.wb.PutCF(tx.shards[p].logCF, k, rec)
	tx.wbBytes += int64(len(k) + len(rec))
	part.nextSeq = seq + 1
	part.logMaxMs = max(part.logMaxMs, binlog.RecordTime(rec))
	tx.store.Dirty.Add(1)
	return nil
}

// LastSeqs returns every shard's last binlog sequence (0: none yet): a replica's position.
func (s *Store) LastSeqs() []uint64 {
	seqs := make([]uint64, len(s.shards))
	for i, sh := range s.shards {
		seqs[i] = sh.lastSeq.Load()
	}
	return seqs
}

// ---- full sync, master side ----

// Snapshot is a consistent view of every shard's keys and the binlog position each one was at,
// for a full sync: every write up to Seq(i) in shard i is in it, none after. Close releases it.
type Snapshot struct {
	store *Store
	snap  *grocksdb.Snapshot
	seqs  []uint64
}

// Snapshot takes a snapshot of every shard. It holds every shard for a moment, so that no
// commit is under way while the RocksDB snapshot and the positions are taken together.
func (s *Store) Snapshot() (*Snapshot, error) {
	if !s.Opened() {
		return nil, ErrNotOpen
	}
	h := s.AcquireAll()
	sn := &Snapshot{store: s, snap: s.db.NewSnapshot(), seqs: s.LastSeqs()}
	if err := h.Release(); err != nil {
		sn.Close()
		return nil, err
	}
	return sn, nil
}

// Store returns the store the snapshot is of.
func (sn *Snapshot) Store() *Store { return sn.store }

// Seq returns shard id's last binlog sequence in the snapshot.
func (sn *Snapshot) Seq(id int) uint64 { return sn.seqs[id] }

// Seqs returns every shard's last binlog sequence in the snapshot.
func (sn *Snapshot) Seqs() []uint64 { return append([]uint64(nil), sn.seqs...) }

// Walk calls fn with every key and value of shard id's key family in the snapshot, in key
// order, but replication's own state. The slices are valid during the call only. It stops at
// fn's first error and returns it.
func (sn *Snapshot) Walk(id int, fn func(k, v []byte) error) error {
	ro := grocksdb.NewDefaultReadOptions()
	defer ro.Destroy()
	ro.SetSnapshot(sn.snap)
	ro.SetFillCache(false)
	it := sn.store.db.NewIteratorCF(ro, sn.store.shards[id].cf)
	defer it.Close()
	skip1, skip2 := StateKey(StateReplication), StateKey(stateSeqFloor)
	for it.SeekToFirst(); it.Valid(); it.Next() {
		k, v := it.Key(), it.Value()
		kd := k.Data()
		var err error
		if !bytes.HasPrefix(kd, skip1) && !bytes.HasPrefix(kd, skip2) {
			err = fn(kd, v.Data())
		}
		k.Free()
		v.Free()
		if err != nil {
			return err
		}
	}
	return it.Err()
}

// Scan calls fn with every key and value of shard id's key family in [lower, upper) in the
// snapshot, in key order (descending with reverse): the walk of one value's data keys, or of
// one prefix, where Walk takes the whole family. The slices are valid during the call only;
// it stops at fn's first error and returns it.
func (sn *Snapshot) Scan(id int, lower, upper []byte, reverse bool, fn func(k, v []byte) error) error {
	ro := grocksdb.NewDefaultReadOptions()
	defer ro.Destroy()
	ro.SetSnapshot(sn.snap)
	ro.SetFillCache(false)
	ro.SetIterateUpperBound(upper)
	ro.SetIterateLowerBound(lower)
	it := sn.store.db.NewIteratorCF(ro, sn.store.shards[id].cf)
	defer it.Close()
	if reverse {
		it.SeekToLast()
	} else {
		it.Seek(lower)
	}
	for ; it.Valid(); snapStep(it, reverse) {
		k, v := it.Key(), it.Value()
		err := fn(k.Data(), v.Data())
		k.Free()
		v.Free()
		if err != nil {
			return err
		}
	}
	return it.Err()
}

func snapStep(it *grocksdb.Iterator, reverse bool) {
	if reverse {
		it.Prev()
	} else {
		it.Next()
	}
}

// AccessField returns key's access field (Redis's 24-bit lru, shard/access.go) in shard id,
// physical database pdb, as the shard records it now, and whether it knows the key.
func (sn *Snapshot) AccessField(id, pdb int, key []byte) (uint32, bool) {
	return sn.store.shards[id].accessField(pdb, key)
}

// DBMap returns shard id's database map in the snapshot: entry l is the physical database
// of logical database l (SWAPDB swaps entries).
func (sn *Snapshot) DBMap(id int) ([]int, error) {
	m := make([]int, sn.store.opts.Databases)
	for i := range m {
		m[i] = i
	}
	err := sn.Scan(id, stateDBMap, PrefixEnd(stateDBMap), false, func(k, v []byte) error {
		if len(k) == len(stateDBMap) {
			for i := range m {
				if i < len(v) {
					m[i] = int(v[i])
				}
			}
		}
		return nil
	})
	return m, err
}

// Close releases the snapshot. It is idempotent.
func (sn *Snapshot) Close() {
	if sn.snap != nil {
		sn.store.db.ReleaseSnapshot(sn.snap)
		sn.snap = nil
	}
}

// ---- full sync, replica side ----

// Loader replaces every shard's keys and binlog with a master's snapshot. It holds every
// shard from StartLoad to Finish or Abort, so nothing reads or writes meanwhile (the server
// answers LOADING). Puts go to RocksDB in batches, never held whole in memory. Each shard has
// its own batch: Put and FinishShard of different shards may run in parallel (one goroutine
// per shard at a time), as a full sync loads its shards.
type Loader struct {
	store   *Store
	held    *Held
	shards  []loadShard
	txBegun bool // Tx was called: the load also writes through the held transaction
}

// loadShard is what a Loader gathers for one shard.
type loadShard struct {
	batch   *grocksdb.WriteBatch
	bytes   int
	version uint64 // the largest collection version loaded
}

// errLoadAborted fails what a load's transaction holds when the load is aborted.
var errLoadAborted = errors.New("shard: the load was aborted")

// Tx returns a transaction over every shard, begun after StartLoad emptied them, for a load
// that writes keys as commands would (an RDB's) rather than as a snapshot's raw pairs. Commit
// commits what it wrote so far; Finish commits the rest first, Abort discards it. A load uses
// either Put or Tx, not both.
func (l *Loader) Tx() *Tx {
	tx := l.held.tx
	if !l.txBegun {
		tx.begin(slices.Clone(tx.shards)...) // after the reset: the shards' sequences are 0 now
		tx.bulk = true
		l.txBegun = true
	}
	return tx
}

// Commit commits what the load's transaction wrote so far (Tx).
func (l *Loader) Commit() error { return l.held.Commit() }

// loadBatchBytes is how much a Loader gathers before writing it.
const loadBatchBytes = 4 << 20

// StartLoad parks every shard and empties their keys and binlogs. The caller's goroutine must
// not be a shard's, and must end the load with Finish or Abort.
func (s *Store) StartLoad() (*Loader, error) {
	if !s.Opened() {
		return nil, ErrNotOpen
	}
	l := &Loader{store: s, held: s.AcquireAll(), shards: make([]loadShard, len(s.shards))}
	for i := range l.shards {
		l.shards[i].batch = grocksdb.NewWriteBatch()
	}
	// The emptying is written to the WAL: after a crash the replica holds none of what it
	// had, nor its history. The load's own writes skip the WAL (woBulk) and are made durable
	// by Finish's memtable flush; a crash before it leaves a partial snapshot with no history,
	// which the next sync replaces, as it did with the WAL.
	if err := l.deleteAll(); err != nil {
		l.Abort()
		return nil, err
	}
	for _, sh := range s.shards {
		sh.forgetData()
	}
	return l, nil
}

// forgetData resets what the shard keeps in memory of its data, which a load just deleted:
// the key cache, the binlog's bounds, the counts and the database map (a snapshot has its
// own map, or none: the identity). The shard is held.
func (sh *Shard) forgetData() {
	sh.cache.mu.Lock()
	sh.cache.epoch++
	sh.cache.clear()
	sh.cache.mu.Unlock()
	sh.lastSeq.Store(0)
	sh.firstSeq.Store(0)
	sh.tail.reset()
	for i := range sh.keys {
		sh.keys[i].Store(0)
		sh.expires[i].Store(0)
		sh.dbmap[i] = i
		sh.dbmapPub[i].Store(int32(i))
	}
}

// deleteAll deletes every shard's keys and binlog, through the WAL.
func (l *Loader) deleteAll() error {
	b := grocksdb.NewWriteBatch()
	defer b.Destroy()
	all, end := []byte{0}, bytes.Repeat([]byte{0xff}, 16)
	for _, sh := range l.store.shards {
		b.DeleteRangeCF(sh.cf, all, end)
		b.DeleteRangeCF(sh.logCF, all, end)
	}
	return l.store.db.Write(l.store.wo, b)
}

// flush writes what shard id's batch gathered.
func (l *Loader) flush(id int) error {
	ls := &l.shards[id]
	if ls.batch.Count() == 0 {
		return nil
	}
	err := l.store.db.Write(l.store.woBulk, ls.batch)
	ls.batch.Clear()
	ls.bytes = 0
	return err
}

// Put writes key k = v into shard id's key family, as the master's snapshot has it.
func (l *Loader) Put(id int, k, v []byte) error {
	if id < 0 || id >= len(l.store.shards) {
		return fmt.Errorf("shard: load into shard %d of %d", id, len(l.store.shards))
	}
	ls := &l.shards[id]
	if len(k) > 0 && k[0] == codec.PrefixMeta && codec.MetaType(v) != codec.TypeString {
		var m codec.Meta
		if codec.DecodeMeta(v, &m) == nil {
			ls.version = max(ls.version, m.Version)
		}
	}
	ls.batch.PutCF(l.store.shards[id].cf, k, v)
	ls.bytes += len(k) + len(v)
	if ls.bytes >= loadBatchBytes {
		return l.flush(id)
	}
	return nil
}

// FinishShard records that shard id's snapshot is loaded, at binlog sequence seq: the
// master's next record for the shard is seq+1.
func (l *Loader) FinishShard(id int, seq uint64) error {
	if id < 0 || id >= len(l.store.shards) {
		return fmt.Errorf("shard: load into shard %d of %d", id, len(l.store.shards))
	}
	l.shards[id].batch.PutCF(l.store.shards[id].cf, StateKey(stateSeqFloor), binary.BigEndian.AppendUint64(nil, seq))
	if err := l.flush(id); err != nil {
		return err
	}
	l.store.shards[id].tail.reset()
	l.store.shards[id].lastSeq.Store(seq)
	return nil
}

// Finish writes what is left, reads every shard's bookkeeping back from what was loaded and
// lets the shards go on. No Put or FinishShard may run any more.
func (l *Loader) Finish() error {
	var err error
	for id := range l.shards {
		if err = l.flush(id); err != nil {
			break
		}
	}
	if err == nil && l.txBegun {
		err = l.held.Commit()
	}
	if err == nil {
		err = l.store.flushMemtables() // what skipped the WAL is durable from here on
	}
	for id, sh := range l.store.shards {
		if err != nil {
			break
		}
		seq := sh.lastSeq.Load()
		if err = sh.load(); err != nil {
			break
		}
		sh.lastSeq.Store(max(sh.lastSeq.Load(), seq))
		sh.version = max(sh.version, l.shards[id].version)
		sh.ages = binlog.Ages{}
		sh.access.Store(new(accessTable))
		sh.markAllWatched()
	}
	l.end()
	return err
}

// Abort ends a load that will not finish (the link dropped): what was loaded is deleted
// again, so the shards go on empty rather than holding part of a snapshot. No Put or
// FinishShard may run any more.
func (l *Loader) Abort() {
	if l.held == nil {
		return
	}
	if l.txBegun {
		l.held.tx.Fail(errLoadAborted)
		_ = l.held.Commit() // fails: nothing of it is written
	}
	for i := range l.shards {
		l.shards[i].batch.Clear()
	}
	_ = l.deleteAll() // through the WAL, as StartLoad's
	for _, sh := range l.store.shards {
		sh.forgetData()
		_ = sh.load()
		sh.lastSeq.Store(0)
		sh.firstSeq.Store(0)
		sh.markAllWatched()
	}
	l.end()
}

func (l *Loader) end() {
	for i := range l.shards {
		l.shards[i].batch.Destroy()
	}
	if l.held != nil {
		_ = l.held.Release()
		l.held = nil
	}
}

// loadSeqFloor reads the sequence a full sync left the shard at (0: none).
func (sh *Shard) loadSeqFloor() (uint64, error) {
	s := sh.store
	v, err := s.db.GetCF(s.ro, sh.cf, StateKey(stateSeqFloor))
	if err != nil {
		return 0, err
	}
	defer v.Free()
	if d := v.Data(); len(d) == 8 {
		return binary.BigEndian.Uint64(d), nil
	}
	return 0, nil
}

// markAllWatched marks every watcher of the shard's keys: a full sync replaced them all.
func (sh *Shard) markAllWatched() {
	if sh.nWatches.Load() == 0 {
		return
	}
	sh.watchMu.Lock()
	for _, entries := range sh.watches {
		for _, e := range entries {
			e.w.dirty.Store(true)
		}
	}
	sh.watchMu.Unlock()
}

// logSignal wakes the readers of the binlog (a master's feeds) when commits add records.
type logSignal struct {
	waiting atomic.Bool
	mu      sync.Mutex
	ch      chan struct{}
}

// LogChanged returns a channel closed once a commit adds binlog records after the call. A
// commit pays one atomic load for it while nobody waits.
func (s *Store) LogChanged() <-chan struct{} {
	ls := &s.logSignal
	ls.mu.Lock()
	defer ls.mu.Unlock()
	if ls.ch == nil {
		ls.ch = make(chan struct{})
		ls.waiting.Store(true)
	}
	return ls.ch
}

// logAdvanced wakes LogChanged's waiters.
func (s *Store) logAdvanced() {
	ls := &s.logSignal
	if !ls.waiting.Load() {
		return
	}
	ls.mu.Lock()
	if ls.ch != nil {
		close(ls.ch)
		ls.ch = nil
		ls.waiting.Store(false)
	}
	ls.mu.Unlock()
}

// SetBinlogPin makes binlog retention keep, in each shard, the records after pin(shard) when
// pin reports one (the oldest position of a connected replica), unless that would keep more
// than four times the binlog-max-entries limit: a replica that far behind full-syncs rather
// than holding the master's disk.
func (s *Store) SetBinlogPin(pin func(id int) (uint64, bool)) { s.binlogPin.Store(&pin) }

// pinnedCut lowers retention's cut in shard id to what a connected replica still needs.
func (s *Store) pinnedCut(id int, cut, last uint64, maxEntries int64) uint64 {
	f := s.binlogPin.Load()
	if f == nil {
		return cut
	}
	p, ok := (*f)(id)
	if !ok || p+1 >= cut {
		return cut
	}
	if maxEntries > 0 && last-p > 4*uint64(maxEntries) {
		return cut
	}
	return p + 1
}
