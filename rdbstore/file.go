package rdbstore

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"time"

	"shardis/codec"
	"shardis/datatype"
	"shardis/rdb"
	"shardis/shard"
)

// WriteOptions say how WriteRDB writes a file: Redis's encoding thresholds, compression and
// checksum (Format), and the aux fields it starts with (Aux; CTime 0 is now).
type WriteOptions struct {
	Format rdb.Options
	Aux    rdb.AuxInfo
	// Idle and Freq write each key's LRU idle time or LFU counter, as Redis does under an LRU
	// or LFU maxmemory-policy (rdb.EvictionFields), from the shards' access tables; a key
	// they do not know counts from Started (unix ms), as OBJECT IDLETIME and FREQ say.
	Idle, Freq bool
	Started    int64
	// NoData leaves the keys out and NoFunctions the function libraries (REPLCONF
	// rdb-filter-only, as Redis 7.0).
	NoData, NoFunctions bool
}

// functionPrefix is the state key prefix of FUNCTION libraries in shard 0 ('s' 'f' · name).
var functionPrefix = shard.StateKey([]byte{'f'})

// WriteRDB writes the snapshot as an RDB file (version 10, as Redis 7.0) to w: the aux fields,
// the FUNCTION libraries, then every database that holds keys, each key walked from the
// snapshot through its data keys, so that nothing is held whole but a string's value. Keys
// whose expire time has passed are left out. It does not close w.
func WriteRDB(w io.Writer, snap *shard.Snapshot, o WriteOptions) error {
	st := snap.Store()
	now := time.Now()
	if o.Aux.CTime == 0 {
		o.Aux.CTime = now.Unix()
	}
	wr := rdb.NewWriter(w, o.Format)
	if err := wr.InfoAux(o.Aux); err != nil {
		return err
	}
	if !o.NoFunctions {
		err := snap.Scan(0, functionPrefix, shard.PrefixEnd(functionPrefix), false, func(_, v []byte) error {
			return wr.Function(v)
		})
		if err != nil {
			return err
		}
	}
	if o.NoData {
		return wr.Close()
	}
	var err error
	maps := make([][]int, st.NumShards())
	for id := range maps {
		if maps[id], err = snap.DBMap(id); err != nil {
			return err
		}
	}
	nowMs := now.UnixMilli()
	for db := range st.Databases() {
		keys, expires, err := dbCounts(snap, maps, db)
		if err != nil {
			return err
		}
		if keys == 0 {
			continue
		}
		if err := wr.SelectDB(db); err != nil {
			return err
		}
		if err := wr.ResizeDB(keys, expires); err != nil {
			return err
		}
		for id := range maps {
			pdb := maps[id][db]
			lo, hi := codec.MetaDBRange(pdb)
			err := snap.Scan(id, lo, hi, false, func(k, v []byte) error {
				_, _, key, ok := codec.DecodeMetaKey(k)
				if !ok {
					return codec.ErrCorruptMeta
				}
				var m codec.Meta
				if err := codec.DecodeMeta(v, &m); err != nil {
					return fmt.Errorf("key %q: %w", key, err)
				}
				if m.Expire != 0 && m.Expire <= nowMs {
					return nil
				}
				src, err := valueSource(&m, SnapshotScan(snap, id, pdb, key, m.Version))
				if err != nil {
					return fmt.Errorf("key %q: %w", key, err)
				}
				rk := rdb.Key{DB: db, Name: key, ExpireAt: m.Expire, Idle: -1, Freq: -1, Kind: src.Kind}
				if o.Idle || o.Freq {
					rk.Idle, rk.Freq = accessOf(snap, id, pdb, key, &o, nowMs)
				}
				return wr.WriteKey(rk, src)
			})
			if err != nil {
				return err
			}
		}
	}
	return wr.Close()
}

// accessOf gives a key's idle seconds (o.Idle) or LFU counter (o.Freq), -1 for the other.
func accessOf(snap *shard.Snapshot, id, pdb int, key []byte, o *WriteOptions, nowMs int64) (idle int64, freq int) {
	idle, freq = -1, -1
	f, known := snap.AccessField(id, pdb, key)
	if o.Freq {
		if !known {
			f = uint32(o.Started/60000)&0xffff<<8 | shard.LFUInitVal
		}
		return -1, int(shard.LFUDecr(f, nowMs, snap.Store().AccessPolicy().DecayTime))
	}
	if !known {
		f = shard.LRUClock(o.Started)
	}
	clock := shard.LRUClock(nowMs)
	if clock >= f {
		return int64(clock - f), -1
	}
	return int64(clock) + int64(1<<24-1-f), -1
}

// dbCounts sums logical database db's key and expire counts over the shards (the snapshot's
// bookkeeping; RESIZEDB is a hint).
func dbCounts(snap *shard.Snapshot, maps [][]int, db int) (keys, expires uint64, err error) {
	for id := range maps {
		k := shard.StateKey([]byte{'c', byte(maps[id][db])})
		err = snap.Scan(id, k, shard.PrefixEnd(k), false, func(kk, v []byte) error {
			if len(kk) == len(k) && len(v) == 16 {
				keys += binary.BigEndian.Uint64(v)
				expires += binary.BigEndian.Uint64(v[8:])
			}
			return nil
		})
		if err != nil {
			return 0, 0, err
		}
	}
	return keys, expires, nil
}

// SnapshotScan is the datatype.ElemScan of the data keys of key (physical database pdb) at
// version in shard id of the snapshot.
func SnapshotScan(snap *shard.Snapshot, id, pdb int, key []byte, version uint64) datatype.ElemScan {
	prefix := codec.AppendDataPrefix(nil, pdb, key, version)
	return func(lower, upper []byte, reverse bool, fn func(elem, val []byte) error) error {
		lo := append(append([]byte(nil), prefix...), lower...)
		var hi []byte
		if upper != nil {
			hi = append(append([]byte(nil), prefix...), upper...)
		} else {
			hi = shard.PrefixEnd(prefix)
		}
		return snap.Scan(id, lo, hi, reverse, func(k, v []byte) error { return fn(k[len(prefix):], v) })
	}
}

// LoadOptions say how Load loads a file.
type LoadOptions struct {
	// KeepExpired keeps keys whose expire time has passed (a replica loading its master's
	// file does); otherwise they are skipped, as Redis's master skips them.
	KeepExpired bool
	// Replace empties every database first, in the load's own transaction (a replica's full
	// sync); otherwise the file's keys join (or overwrite) what the store holds. FUNCTION
	// libraries stay, as FLUSHALL keeps them; the file's replace those of the same name.
	Replace bool
	// Aux, when set, receives the file's aux fields (redis-ver, repl-id, repl-offset, …).
	Aux func(key, value []byte)
}

// LoadStats is what a load did.
type LoadStats struct {
	Keys int64
}

// Load reads an RDB file from r into the store, whose shards must be running: it holds every
// shard for the whole load (the server answers LOADING meanwhile) and commits every few
// megabytes, so the file is never held in memory; a collection's pieces are invisible until
// its meta is written last. A file that fails to load (a bad format, a database past
// `databases`) leaves every database empty. The file's FUNCTION libraries are loaded.
func Load(r io.Reader, st *shard.Store, o LoadOptions) (LoadStats, error) {
	h := st.AcquireAll()
	tx := h.Tx()
	tx.StartCommand()
	if o.Replace {
		for id := range st.NumShards() {
			for db := range st.Databases() {
				tx.FlushDB(id, db)
			}
		}
	}
	b := &Builder{Tx: tx, Databases: st.Databases(), SkipExpired: !o.KeepExpired, Now: tx.Now(), Idle: -1, Freq: -1,
		Flush: h.Commit, OnAux: o.Aux}
	br, ok := r.(*bufio.Reader)
	if !ok {
		br = bufio.NewReaderSize(r, 1<<20)
	}
	err := rdb.NewReader(br).Read(b)
	if err == nil {
		err = tx.Err()
	}
	if err != nil {
		// Leave nothing of a file that did not load.
		_ = h.Commit()
		tx := h.Tx()
		for id := range st.NumShards() {
			for db := range st.Databases() {
				tx.FlushDB(id, db)
			}
		}
		_ = h.Release()
		return LoadStats{}, err
	}
	return LoadStats{Keys: b.Loaded}, h.Release()
}

// LoadFile loads the RDB file at path into the store, which must hold no key: it refuses
// one that does, saying so, rather than mixing two data sets.
func LoadFile(path string, st *shard.Store, o LoadOptions) (LoadStats, error) {
	var keys int64
	for id := range st.NumShards() {
		for db := range st.Databases() {
			keys += st.Shard(id).Keys(db)
		}
	}
	if keys > 0 {
		return LoadStats{}, fmt.Errorf("--load-rdb %s: the data directory holds %d keys; an RDB file is loaded only into an empty one (start with an empty dir)", path, keys)
	}
	f, err := os.Open(path)
	if err != nil {
		return LoadStats{}, fmt.Errorf("--load-rdb: %w", err)
	}
	defer f.Close()
	stats, err := Load(f, st, o)
	if err != nil {
		return stats, fmt.Errorf("--load-rdb %s: %w", path, err)
	}
	return stats, nil
}
