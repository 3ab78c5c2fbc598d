package shard

import (
	"errors"
	"fmt"

	"github.com/linxGnu/grocksdb"

	"shardis/codec"
)

// Server state outside the keyspace: keys 's' · name in a shard's key family, next to the
// shard's own bookkeeping (database map, counts). Commands keep durable state there that is
// not a user key (FUNCTION libraries: 's' 'f' · library name in shard 0). Such keys are not
// in any database, so FLUSHDB, FLUSHALL and SWAPDB leave them alone, and they are written
// through the transaction's WriteBatch like any key, so they commit atomically with the
// command's binlog record.

// StateKey returns the raw key of state name.
func StateKey(name []byte) []byte {
	return append([]byte{codec.PrefixState}, name...)
}

// PutState writes state name = val in held shard id. val is copied.
func (tx *Tx) PutState(id int, name, val []byte) {
	p := tx.partOf(id)
	if p < 0 {
		tx.fail(ErrNotHeld)
		return
	}
	tx.putRaw(p, StateKey(name), val)
}

// DeleteState removes state name from held shard id.
func (tx *Tx) DeleteState(id int, name []byte) {
	p := tx.partOf(id)
	if p < 0 {
		tx.fail(ErrNotHeld)
		return
	}
	tx.deleteRaw(p, StateKey(name))
}

// DeleteStatePrefix removes every state whose name starts with prefix from held shard id.
// prefix must not be empty and must not end in 0xff.
func (tx *Tx) DeleteStatePrefix(id int, prefix []byte) {
	p := tx.partOf(id)
	if p < 0 {
		tx.fail(ErrNotHeld)
		return
	}
	lower := StateKey(prefix)
	upper := StateKey(prefix)
	upper[len(upper)-1]++
	tx.deleteRange(p, lower, upper)
}

// ErrNotOpen is returned by reads that need RocksDB while the store is not open.
var ErrNotOpen = errors.New("shard: store not open")

// ReadStatePrefix calls fn with the name (less prefix) and value of every committed state of
// shard id whose name starts with prefix, in name order. It reads RocksDB directly, so any
// goroutine may call it; the slices fn gets are valid during the call only. It fails with
// ErrNotOpen while the store is not open (loading, or closed).
func (s *Store) ReadStatePrefix(id int, prefix []byte, fn func(name, val []byte)) error {
	if !s.Opened() {
		return ErrNotOpen
	}
	lower := StateKey(prefix)
	upper := StateKey(prefix)
	upper[len(upper)-1]++
	ro := grocksdb.NewDefaultReadOptions()
	defer ro.Destroy()
	ro.SetIterateUpperBound(upper)
	it := s.db.NewIteratorCF(ro, s.shards[id].cf)
	defer it.Close()
	for it.Seek(lower); it.Valid(); it.Next() {
		k, v := it.Key(), it.Value()
		fn(k.Data()[len(lower):], v.Data())
		k.Free()
		v.Free()
	}
	if err := it.Err(); err != nil {
		return fmt.Errorf("read state of shard %d: %w", id, err)
	}
	return nil
}
