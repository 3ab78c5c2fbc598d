// Package binlog owns each shard's binlog: the record format, the key it is stored under and
// the retention worker that trims it. Every write a shard commits appends the effect of the
// command, made deterministic, to the same WriteBatch, so a replica (or a replay) that applies
// the records in sequence order ends with the same data.
package binlog

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// Prefix is the first byte of every binlog key; the rest is the sequence, 8 bytes big-endian,
// so the records of a shard are ordered by sequence.
const Prefix byte = 'b'

// ErrCorrupt is returned for a record that cannot be decoded.
var ErrCorrupt = errors.New("binlog: corrupt record")

// AppendKey appends the key of record seq.
func AppendKey(b []byte, seq uint64) []byte {
	return binary.BigEndian.AppendUint64(append(b, Prefix), seq)
}

// KeySeq returns the sequence of a binlog key.
func KeySeq(k []byte) (uint64, bool) {
	if len(k) != 9 || k[0] != Prefix {
		return 0, false
	}
	return binary.BigEndian.Uint64(k[1:]), true
}

// Record is one logged command: the logical database it ran in and its arguments in the
// deterministic form (absolute expiry times, SET of INCRBYFLOAT's result, …), and the unit it
// belongs to when one commit wrote it together with records of other shards.
type Record struct {
	Time int64 // unix ms when it was committed; retention by age reads it
	DB   int
	Unit Unit     // zero: the record stands alone
	Args [][]byte // aliases the decoded value
}

// unitFlag, the top bit of the time field, marks a unit record. Unix milliseconds never reach
// it, so a record that stands alone costs no byte for what it is not.
const unitFlag = 1 << 63

// AppendRecord appends the value of a record that stands alone:
// time ms (8, big-endian) | db (1) | argc (uvarint) | for each arg: len (uvarint) | bytes.
func AppendRecord(b []byte, timeMs int64, db int, args [][]byte) []byte {
	b = binary.BigEndian.AppendUint64(b, uint64(timeMs))
	b = append(b, byte(db))
	b = binary.AppendUvarint(b, uint64(len(args)))
	for _, a := range args {
		b = AppendArg(b, a)
	}
	return b
}

// AppendArg appends argument a as a record encodes it, for a writer that gathers a record's
// arguments before it knows how many there are (AppendRecordArgs).
func AppendArg(b, a []byte) []byte {
	b = binary.AppendUvarint(b, uint64(len(a)))
	return append(b, a...)
}

// AppendRecordArgs is AppendRecord of argc arguments that args holds already encoded, one
// after the other, by AppendArg.
func AppendRecordArgs(b []byte, timeMs int64, db int, argc int, args []byte) []byte {
	b = binary.BigEndian.AppendUint64(b, uint64(timeMs))
	b = append(b, byte(db))
	b = binary.AppendUvarint(b, uint64(argc))
	return append(b, args...)
}

// AppendRecordParts is AppendRecord for a writer that can store a value in parts: arguments
// of at least big bytes are referenced, not copied. It appends the rest of the record to b and
// returns b and the record as parts (appended to parts[:0]) whose concatenation is what
// AppendRecord would have appended, the big arguments between pieces of b.
func AppendRecordParts(b []byte, timeMs int64, db int, args [][]byte, big int, parts [][]byte) ([]byte, [][]byte) {
	start := len(b)
	b = AppendRecord(b, timeMs, db, nil)
	b = b[:len(b)-1] // argc is written below
	b = binary.AppendUvarint(b, uint64(len(args)))
	// cuts[i] is where piece i of b ends; the big argument i follows it.
	type cut struct {
		end int
		arg []byte
	}
	var cuts []cut
	for _, a := range args {
		b = binary.AppendUvarint(b, uint64(len(a)))
		if len(a) >= big {
			cuts = append(cuts, cut{len(b), a})
			continue
		}
		b = append(b, a...)
	}
	parts = parts[:0]
	from := start
	for _, c := range cuts {
		parts = append(parts, b[from:c.end], c.arg)
		from = c.end
	}
	return b, append(parts, b[from:])
}

// AppendUnitRecord appends the value of record rec (an AppendRecord value) as a record of unit
// u: its time with the top bit set | db (1) | unit id (8, big-endian) | shards (uvarint) |
// count (uvarint) | argc and args as in rec. A writer that learns only at commit that its
// records form a unit (it logged in more than one shard, or EXEC's two records in one) encodes
// them alone first.
func AppendUnitRecord(b, rec []byte, u Unit) ([]byte, error) {
	if len(rec) < 10 || rec[0]&0x80 != 0 || u.ID == 0 || u.Shards < 1 || u.Count < 1 {
		return b, fmt.Errorf("binlog: cannot mark a record (%d bytes) as unit %+v", len(rec), u)
	}
	b = append(b, rec[0]|0x80)
	b = append(b, rec[1:9]...)
	b = binary.BigEndian.AppendUint64(b, u.ID)
	b = binary.AppendUvarint(b, uint64(u.Shards))
	b = binary.AppendUvarint(b, uint64(u.Count))
	return append(b, rec[9:]...), nil
}

// RecordTime reads only the time of an encoded record.
func RecordTime(v []byte) int64 {
	if len(v) < 8 {
		return 0
	}
	return int64(binary.BigEndian.Uint64(v) &^ unitFlag)
}

// DecodeRecord decodes v into r; r.Args reuses its backing array and aliases v.
func DecodeRecord(v []byte, r *Record) error {
	if len(v) < 10 {
		return ErrCorrupt
	}
	t := binary.BigEndian.Uint64(v)
	r.Time = int64(t &^ unitFlag)
	r.DB = int(v[8])
	r.Unit = Unit{}
	v = v[9:]
	if t&unitFlag != 0 {
		if len(v) < 8 {
			return ErrCorrupt
		}
		r.Unit.ID = binary.BigEndian.Uint64(v)
		v = v[8:]
		shards, n := binary.Uvarint(v)
		if n <= 0 || shards < 1 || shards > 1<<16 {
			return ErrCorrupt
		}
		v = v[n:]
		count, n := binary.Uvarint(v)
		if n <= 0 || count < 1 || count > 1<<32 {
			return ErrCorrupt
		}
		v = v[n:]
		if r.Unit.ID == 0 {
			return ErrCorrupt
		}
		r.Unit.Shards, r.Unit.Count = int(shards), int(count)
	}
	argc, n := binary.Uvarint(v)
	if n <= 0 || argc > uint64(len(v)) {
		return ErrCorrupt
	}
	v = v[n:]
	r.Args = r.Args[:0]
	for range argc {
		l, n := binary.Uvarint(v)
		if n <= 0 || l > uint64(len(v)-n) {
			return ErrCorrupt
		}
		r.Args = append(r.Args, v[n:n+int(l)])
		v = v[n+int(l):]
	}
	if len(v) != 0 {
		return ErrCorrupt
	}
	return nil
}

// AppendEntry appends the encoding of r, a decoded record (standalone or of a unit): the
// bytes it was decoded from.
func AppendEntry(b []byte, r *Record) ([]byte, error) {
	if r.Unit.ID == 0 {
		return AppendRecord(b, r.Time, r.DB, r.Args), nil
	}
	// AppendUnitRecord of AppendRecord, without the record alone in between (a feed encodes
	// every record it sends).
	u := r.Unit
	if r.Time < 0 || u.Shards < 1 || u.Count < 1 {
		return b, fmt.Errorf("binlog: cannot mark a record of time %d as unit %+v", r.Time, u)
	}
	b = binary.BigEndian.AppendUint64(b, uint64(r.Time)|1<<63)
	b = append(b, byte(r.DB))
	b = binary.BigEndian.AppendUint64(b, u.ID)
	b = binary.AppendUvarint(b, uint64(u.Shards))
	b = binary.AppendUvarint(b, uint64(u.Count))
	b = binary.AppendUvarint(b, uint64(len(r.Args)))
	for _, a := range r.Args {
		b = AppendArg(b, a)
	}
	return b, nil
}
