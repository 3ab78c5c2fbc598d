package shard

import (
	"fmt"
	"time"

	"shardis/binlog"
	"shardis/codec"
	"shardis/ttl"
)

// funcJob runs fn in the shard and reports the commit's error on done.
type funcJob struct {
	fn   func(tx *Tx)
	done chan error
}

func (j *funcJob) Run(tx *Tx)     { j.fn(tx) }
func (j *funcJob) Done(err error) { j.done <- err }

// Do runs fn in shard id's goroutine, as part of its next group, and waits for the commit.
// For background workers and tests; commands go through Post.
func (s *Store) Do(id int, fn func(tx *Tx)) error {
	j := &funcJob{fn: fn, done: make(chan error, 1)}
	s.shards[id].Post(j)
	return <-j.done
}

// ExpireDue deletes up to limit keys of this shard whose expire time has passed, walking the
// TTL index from its oldest entry (ttl.Expirer). ttl.Walk decides; expiryWalk does it in the
// shard's goroutine.
func (sh *Shard) ExpireDue(limit int) (n int, err error) {
	if sh.store.activeExpireOff.Load() || sh.store.replica.Load() {
		return 0, nil // DEBUG SET-ACTIVE-EXPIRE 0: keys expire only when read
	}
	var walkErr error
	err = sh.store.Do(sh.id, func(tx *Tx) {
		n, walkErr = ttl.Walk(expiryWalk{tx: tx, sh: sh}, tx.nowMs, limit)
	})
	if err == nil {
		err = walkErr
	}
	return n, err
}

// expiryWalk is ttl.Shard over the shard's transaction of one walk (part 0: the shard itself).
type expiryWalk struct {
	tx *Tx
	sh *Shard
}

func (w expiryWalk) Entries(upper []byte) ttl.Cursor {
	return w.tx.iterPart(0, ttl.LowerBound(), upper, false)
}

func (w expiryWalk) ExpireOf(pdb int, key []byte) (int64, bool) {
	v, ok := w.tx.getRaw(0, codec.AppendMetaKey(nil, pdb, key))
	if !ok {
		return 0, false
	}
	return codec.MetaExpire(v), true
}

func (w expiryWalk) RemoveExpired(pdb int, key []byte) {
	mk := codec.AppendMetaKey(nil, pdb, key)
	v, ok := w.tx.getRaw(0, mk)
	if !ok {
		return
	}
	db := w.sh.logicalDB(pdb)
	w.tx.removeKey(0, pdb, mk, key, v)
	w.tx.logPart(0, db, cmdDEL, key)
	w.sh.store.ExpiredKeys.Add(1)
	w.tx.Notify(EventExpired, "expired", db, key)
}

func (w expiryWalk) DropEntry(raw []byte) { w.tx.deleteRaw(0, raw) }

// TrimBinlog deletes the oldest records beyond maxEntries or older than maxAge
// (binlog.Trimmer); binlog.KeepFrom decides where the cut falls. Zero limits are unlimited.
func (sh *Shard) TrimBinlog(maxEntries int64, maxAge time.Duration) (int, error) {
	first, last := sh.BinlogRange()
	if first == 0 {
		return 0, nil
	}
	var trimmed int
	err := sh.store.Do(sh.id, func(tx *Tx) {
		cut := binlog.KeepFrom(first, last, maxEntries, maxAge, tx.nowMs, &sh.ages)
		cut = sh.store.pinnedCut(sh.id, cut, last, maxEntries)
		if cut <= first {
			return
		}
		tx.wb.DeleteRangeCF(sh.logCF, binlog.AppendKey(nil, first), binlog.AppendKey(nil, cut))
		tx.parts[0].firstSeq = cut
		sh.ages.Forget(cut)
		trimmed = int(cut - first)
	})
	return trimmed, err
}

// ReadBinlog returns up to limit records of shard id's binlog from sequence from on, read in
// the shard's goroutine (binlog.Source). The entries own their memory.
func (s *Store) ReadBinlog(id int, from uint64, limit int) ([]binlog.Entry, error) {
	var out []binlog.Entry
	var readErr error
	s.tailOn.Store(true)
	err := s.Do(id, func(tx *Tx) {
		sh := s.shards[id]
		var ok bool
		if out, ok, readErr = sh.tail.read(from, sh.lastSeq.Load(), limit); ok {
			return
		}
		it := tx.IterateBinlog(id, from)
		defer it.Close()
		out, readErr = binlog.Read(it, limit, nil)
	})
	if err == nil {
		err = readErr
	}
	if err != nil {
		return out, fmt.Errorf("shard %d: %w", id, err)
	}
	return out, nil
}
