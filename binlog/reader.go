package binlog

import (
	"bytes"
	"fmt"
)

// Cursor walks one shard's binlog keys in ascending order; the shard's iterator implements
// it. Key and Value alias memory valid until Next.
type Cursor interface {
	Valid() bool
	Key() []byte
	Value() []byte
	Next()
	Err() error
}

// Entry is one decoded record and its sequence. Its Args own their memory: an Entry outlives
// the cursor it was read from.
type Entry struct {
	Seq uint64
	Record
}

// Source reads a store's binlogs: a shard.Store, or a replica's view of its master.
type Source interface {
	// NumShards returns how many shards, hence binlogs, the source has.
	NumShards() int
	// ReadBinlog returns up to limit records of shard id's binlog from sequence from on, in
	// sequence order (none: nothing more is there yet).
	ReadBinlog(id int, from uint64, limit int) ([]Entry, error)
}

// Read decodes up to limit records from c, appending them to dst with copies of their
// arguments. An error names the record that failed.
func Read(c Cursor, limit int, dst []Entry) ([]Entry, error) {
	var r Record
	for n := 0; c.Valid() && n < limit; c.Next() {
		seq, ok := KeySeq(c.Key())
		if !ok {
			return dst, fmt.Errorf("binlog: bad key %x", c.Key())
		}
		if err := DecodeRecord(c.Value(), &r); err != nil {
			return dst, fmt.Errorf("binlog: record %d: %w", seq, err)
		}
		e := Entry{Seq: seq, Record: r}
		e.Args = make([][]byte, len(r.Args))
		for i, a := range r.Args {
			e.Args[i] = bytes.Clone(a)
		}
		dst = append(dst, e)
		n++
	}
	return dst, c.Err()
}
