package shard

import (
	"encoding/binary"
	"fmt"

	"shardis/binlog"
)

// unitsKey, in the default column family, holds the end of the last block of unit ids
// reserved (8 bytes, big-endian; see binlog.UnitIDs).
var unitsKey = []byte("units")

// A transaction over several shards holds its binlog records in tx.unitLog until the commit,
// one after the other: the held part (2 bytes, big-endian), the key's length (1 byte), the
// binlog key, the value's length (uvarint) and the value as a record alone. No index beside
// them, and in chunks of unitChunk bytes rather than one buffer grown by doubling: a script of
// a million writes holds a million records, without copying them as they grow.

// unitChunk is the size of the chunks the held records are kept in.
const unitChunk = 64 << 10

// holdForUnit keeps the record (key, value) of held part p until the commit, which knows
// whether the transaction's records span several shards. key and rec are copied.
func (tx *Tx) holdForUnit(p int, key, rec []byte) {
	need := 3 + len(key) + binary.MaxVarintLen64 + len(rec)
	n := len(tx.unitLog)
	switch {
	case n > 0 && cap(tx.unitLog[n-1])-len(tx.unitLog[n-1]) >= need:
	case n > 0 && len(tx.unitLog[n-1]) == 0: // an empty chunk too small for a huge record
		tx.unitLog[n-1] = make([]byte, 0, need)
	default:
		tx.unitLog = append(tx.unitLog, make([]byte, 0, max(unitChunk, need)))
		n++
	}
	c := tx.unitLog[n-1]
	c = append(c, byte(p>>8), byte(p), byte(len(key)))
	c = append(c, key...)
	c = binary.AppendUvarint(c, uint64(len(rec)))
	tx.unitLog[n-1] = append(c, rec...)
}

// nextUnitRecord returns the held record at chunk[off:] and the offset of the next.
func nextUnitRecord(chunk []byte, off int) (p int, key, rec []byte, next int) {
	b := chunk[off:]
	p = int(b[0])<<8 | int(b[1])
	kl := int(b[2])
	key = b[3 : 3+kl : 3+kl]
	n, w := binary.Uvarint(b[3+kl:])
	start := 3 + kl + w
	rec = b[start : start+int(n) : start+int(n)]
	return p, key, rec, off + start + int(n)
}

// joinedRecord is a held record still open to more arguments (LogItems): its name, key and
// items, encoded as a record encodes arguments. Its sequence is taken when it opens, so the
// records logged after it follow it.
type joinedRecord struct {
	open   bool
	p, db  int
	seq    uint64
	timeMs int64
	name   []byte
	key    []byte
	argc   int
	args   []byte // binlog.AppendArg of each argument, name and key first
}

// maxJoined is the most bytes of arguments one joined record holds: a replica applies it as
// one command, and a Redis replica reads it as one.
const maxJoined = 64 << 10

// joinItems holds the record args (name, key, items...) for a unit, joined to the open one when
// it has the same part, database, name and key and room for the items.
func (tx *Tx) joinItems(p, db int, args [][]byte) {
	size := 0
	for _, a := range args[2:] {
		size += binary.MaxVarintLen64 + len(a)
	}
	j := &tx.joining
	if j.open && (j.p != p || j.db != db || string(j.name) != string(args[0]) ||
		string(j.key) != string(args[1]) || len(j.args)+size > maxJoined) {
		tx.closeJoined()
	}
	part := &tx.parts[p]
	if !j.open {
		j.open, j.p, j.db, j.seq, j.argc = true, p, db, part.nextSeq, 2
		part.nextSeq++
		j.name = append(j.name[:0], args[0]...)
		j.key = append(j.key[:0], args[1]...)
		j.args = binlog.AppendArg(binlog.AppendArg(j.args[:0], args[0]), args[1])
	}
	j.timeMs = tx.nowMs
	part.logMaxMs = max(part.logMaxMs, tx.nowMs)
	for _, a := range args[2:] {
		j.args = binlog.AppendArg(j.args, a)
		j.argc++
	}
	tx.wbBytes += int64(size)
	tx.store.Dirty.Add(1)
}

// closeJoined moves the open joined record, if any, into the held records.
func (tx *Tx) closeJoined() {
	j := &tx.joining
	if !j.open {
		return
	}
	j.open = false
	tx.logKey = binlog.AppendKey(tx.logKey[:0], j.seq)
	tx.scratch = binlog.AppendRecordArgs(tx.scratch[:0], j.timeMs, j.db, j.argc, j.args)
	tx.holdForUnit(j.p, tx.logKey, tx.scratch)
	tx.wbBytes += int64(len(tx.logKey) + len(tx.scratch) - len(j.args))
	if cap(j.args) > 2*maxJoined {
		j.args = nil // one huge name or key
	}
}

// hasUnitRecords reports whether the transaction holds binlog records for its commit.
func (tx *Tx) hasUnitRecords() bool {
	if tx.joining.open {
		return true
	}
	for _, c := range tx.unitLog {
		if len(c) > 0 {
			return true
		}
	}
	return false
}

// BeginUnit makes the records the commands log from here to the matching EndUnit one unit
// even when they all live in one shard: the commands of an EXEC or a script, which a reader
// must apply together (a shardis replica in one commit, a Redis replica inside MULTI … EXEC).
// A transaction over several shards makes every commit a unit already. Calls nest.
func (tx *Tx) BeginUnit() { tx.unitDepth++ }

// EndUnit ends what BeginUnit began: in one shard, the records held since are written, as a
// unit when there are two or more.
func (tx *Tx) EndUnit() {
	if tx.unitDepth == 0 {
		return
	}
	tx.unitDepth--
	if tx.unitDepth > 0 || len(tx.shards) > 1 || !tx.hasUnitRecords() {
		return
	}
	if err := tx.writeUnit(); err != nil {
		tx.fail(err)
	}
	tx.resetUnit()
}

// writeUnit puts the held records into the WriteBatch: as one unit when they are in more than
// one shard, or are two or more held between BeginUnit and EndUnit, else as records that stand
// alone. It runs while the transaction holds its shards (in commit, or EndUnit): the unit id is
// taken then, so units that share a shard are numbered in the order they commit there.
func (tx *Tx) writeUnit() error {
	tx.closeJoined()
	counts := make([]int, len(tx.shards))
	shards := 0
	for _, chunk := range tx.unitLog {
		for off := 0; off < len(chunk); {
			var p int
			p, _, _, off = nextUnitRecord(chunk, off)
			if counts[p] == 0 {
				shards++
			}
			counts[p]++
		}
	}
	var id uint64
	if shards > 1 || shards == 1 && tx.unitDepth == 0 && len(tx.shards) == 1 && counts[0] > 1 {
		var err error
		if id, err = tx.store.units.Next(); err != nil {
			return fmt.Errorf("commit: %w", err)
		}
	}
	for _, chunk := range tx.unitLog {
		for off := 0; off < len(chunk); {
			var p int
			var key, rec []byte
			p, key, rec, off = nextUnitRecord(chunk, off)
			if id != 0 {
				var err error
				u := binlog.Unit{ID: id, Shards: shards, Count: counts[p]}
				if tx.scratch, err = binlog.AppendUnitRecord(tx.scratch[:0], rec, u); err != nil {
					return fmt.Errorf("commit: %w", err)
				}
				rec = tx.scratch
			}
			tx.wb.PutCF(tx.shards[p].logCF, key, rec)
			tx.wbBytes += int64(len(key) + len(rec))
		}
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

// resetUnit empties the held records after a commit, keeping one chunk (or none, if it grew
// for one huge record).
func (tx *Tx) resetUnit() {
	tx.joining.open = false
	if len(tx.unitLog) == 0 {
		return
	}
	first := tx.unitLog[0]
	clear(tx.unitLog)
	tx.unitLog = tx.unitLog[:0]
	if cap(first) == unitChunk {
		tx.unitLog = append(tx.unitLog, first[:0])
	}
}

// unitMark is a position in the held records (a savepoint's).
type unitMark struct{ chunks, last int }

func (tx *Tx) unitPos() unitMark {
	tx.closeJoined() // a rollback to here keeps it whole
	n := len(tx.unitLog)
	if n == 0 {
		return unitMark{}
	}
	return unitMark{n, len(tx.unitLog[n-1])}
}

// truncateUnit forgets the records held after m.
func (tx *Tx) truncateUnit(m unitMark) {
	tx.joining.open = false // opened after the mark (unitPos closed the one before)
	clear(tx.unitLog[m.chunks:])
	tx.unitLog = tx.unitLog[:m.chunks]
	if m.chunks > 0 {
		tx.unitLog[m.chunks-1] = tx.unitLog[m.chunks-1][:m.last]
	}
}
