package shard

import (
	"encoding/binary"
	"fmt"

	"shardis/binlog"
)

// unitsKey, in the default column family, holds the end of the last block of unit ids
// reserved (8 bytes, big-endian; see binlog.UnitIDs).
var unitsKey = []byte("units")

// unitRecord is a binlog record held back by a transaction over several shards:
// tx.unitLog[key:rec] is its binlog key, tx.unitLog[rec:end] its value as a record alone.
type unitRecord struct {
	p             int
	key, rec, end int
}

// holdForUnit keeps the record (key, value) of held part p until the commit, which knows
// whether the transaction's records span several shards. key and rec are copied.
func (tx *Tx) holdForUnit(p int, key, rec []byte) {
	r := unitRecord{p: p, key: len(tx.unitLog)}
	tx.unitLog = append(tx.unitLog, key...)
	r.rec = len(tx.unitLog)
	tx.unitLog = append(tx.unitLog, rec...)
	r.end = len(tx.unitLog)
	tx.unitRecs = append(tx.unitRecs, r)
}

// writeUnit puts the held records into the WriteBatch: as one unit when they are in more than
// one shard, else as records that stand alone.
// It runs in commit, while the transaction holds its shards: the unit id is taken then, so
// units that share a shard are numbered in the order they commit there.
func (tx *Tx) writeUnit() error {
	counts := make([]int, len(tx.shards))
	shards := 0
	for _, r := range tx.unitRecs {
		if counts[r.p] == 0 {
			shards++
		}
		counts[r.p]++
	}
	var id uint64
	if shards > 1 {
		var err error
		if id, err = tx.store.units.Next(); err != nil {
			return fmt.Errorf("commit: %w", err)
		}
	}
	for _, r := range tx.unitRecs {
		key, rec := tx.unitLog[r.key:r.rec], tx.unitLog[r.rec:r.end]
		if id != 0 {
			var err error
			u := binlog.Unit{ID: id, Shards: shards, Count: counts[r.p]}
			if tx.scratch, err = binlog.AppendUnitRecord(tx.scratch[:0], rec, u); err != nil {
				return fmt.Errorf("commit: %w", err)
			}
			rec = tx.scratch
		}
		tx.wb.PutCF(tx.shards[r.p].logCF, key, rec)
		tx.wbBytes += int64(len(key) + len(rec))
	}
	return nil
}

// openUnits starts the store's unit ids above the last block reserved in this directory.
func (s *Store) openUnits() error {
	v, err := s.db.GetCF(s.ro, s.defCF, unitsKey)
	if err != nil {
		return fmt.Errorf("read the unit ids reserved: %w", err)
	}
	var reserved uint64
	if d := v.Data(); len(d) == 8 {
		reserved = binary.BigEndian.Uint64(d)
	}
	v.Free()
	s.units = binlog.NewUnitIDs(reserved, func(upTo uint64) error {
		return s.db.PutCF(s.woSync, s.defCF, unitsKey, binary.BigEndian.AppendUint64(nil, upTo))
	})
	return nil
}

// Confine makes Shards report only held shard id (a shard not held, or -1: every held shard
// again) until the next commit, so that a whole-shard record (FLUSHDB, FLUSHALL, SWAPDB)
// replayed from shard id's binlog inside a transaction over several shards touches that shard
// alone, as it did when it was logged. Keyed writes are routed by their keys as always.
func (tx *Tx) Confine(id int) {
	if id < 0 || tx.partOf(id) < 0 {
		tx.confined = 0
		return
	}
	tx.confined = id + 1
}

// resetUnit empties the held records after a commit, dropping a buffer one huge unit grew.
func (tx *Tx) resetUnit() {
	if cap(tx.unitLog) > 1<<20 {
		tx.unitLog = nil
	}
	tx.unitLog, tx.unitRecs = tx.unitLog[:0], tx.unitRecs[:0]
}
