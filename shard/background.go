package shard

import (
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
// TTL index from its oldest entry. It runs in the shard's goroutine (ttl.Expirer).
func (sh *Shard) ExpireDue(limit int) (n int, err error) {
	err = sh.store.Do(sh.id, func(tx *Tx) {
		it := tx.iterPart(0, ttl.LowerBound(), ttl.UpperBound(tx.nowMs), false)
		defer it.Close()
		type due struct {
			raw []byte
			at  int64
			pdb int
			key []byte
		}
		var batch []due
		for ; it.Valid() && len(batch) < limit; it.Next() {
			raw := append([]byte(nil), it.Key()...)
			at, pdb, key, ok := ttl.DecodeKey(raw)
			if ok {
				batch = append(batch, due{raw, at, pdb, key})
			}
		}
		for _, d := range batch {
			n++
			mk := codec.AppendMetaKey(nil, d.pdb, d.key)
			v, ok := tx.getRaw(0, mk)
			if ok && codec.MetaExpire(v) == d.at {
				tx.removeKey(0, d.pdb, mk, d.key, v) // deletes the index entry too
				tx.logPart(0, sh.logicalDB(d.pdb), cmdDEL, d.key)
				sh.store.ExpiredKeys.Add(1)
			} else {
				tx.deleteRaw(0, d.raw) // stale hint
			}
		}
	})
	return n, err
}

// TrimBinlog deletes the oldest records beyond maxEntries or older than maxAge
// (binlog.Trimmer). Zero limits are unlimited.
func (sh *Shard) TrimBinlog(maxEntries int64, maxAge time.Duration) (int, error) {
	first, last := sh.BinlogRange()
	if first == 0 {
		return 0, nil
	}
	cut := first // first sequence to keep
	if maxEntries > 0 && last-first+1 > uint64(maxEntries) {
		cut = last - uint64(maxEntries) + 1
	}
	var trimmed int
	err := sh.store.Do(sh.id, func(tx *Tx) {
		if maxAge > 0 {
			cut = max(cut, sh.ages.cutBefore(tx.nowMs-maxAge.Milliseconds()))
		}
		// The newest record always stays: on restart the sequence resumes after it, so
		// sequences never repeat.
		cut = min(cut, last)
		if cut <= first {
			return
		}
		tx.wb.DeleteRangeCF(sh.logCF, binlog.AppendKey(nil, first), binlog.AppendKey(nil, cut))
		tx.parts[0].firstSeq = cut
		sh.ages.forget(cut)
		trimmed = int(cut - first)
	})
	return trimmed, err
}
