// Package rdbstore moves the store's keys in and out of Redis's serialization format (package
// rdb): a key as an rdb.Source read from a transaction (DUMP, MIGRATE) or from a snapshot
// (an RDB file, WriteRDB), and an rdb.Handler that builds keys into the store (RESTORE into
// one transaction, Builder; a whole file in batches, Load).
//
// Values are walked through their data keys (datatype's walks) and never held whole, except
// where the format holds them whole: a string (a fragmented one is assembled for its
// payload), a stream group's pending entries while its consumers are read in.
//
// It imports shard, datatype, codec and rdb; it knows no command, connection or server.
package rdbstore

import (
	"bytes"
	"errors"
	"fmt"

	"shardis/codec"
	"shardis/datatype"
	"shardis/rdb"
	"shardis/shard"
)

// ErrNoKey: the key to dump does not exist.
var ErrNoKey = errors.New("rdbstore: no such key")

// KeySource returns key (logical db) as tx holds it: the value as an rdb.Source and what the
// format says beside it (expire). ok is false for a missing key. The source reads tx while it
// is walked, so it is walked before the transaction ends.
func KeySource(tx *shard.Tx, db int, key []byte) (src rdb.Source, k rdb.Key, ok bool, err error) {
	m, exists := tx.Meta(db, key)
	if !exists {
		return src, k, false, tx.Err()
	}
	k = rdb.Key{DB: db, Name: key, ExpireAt: m.Expire, Idle: -1, Freq: -1}
	src, err = valueSource(&m, datatype.ValueScan(tx, db, key, &m))
	if err != nil {
		return src, k, false, err
	}
	k.Kind = src.Kind
	return src, k, true, nil
}

// valueSource makes the Source of the value whose meta is m and whose data keys scan walks.
func valueSource(m *codec.Meta, scan datatype.ElemScan) (rdb.Source, error) {
	n := int64(m.Count)
	if m.Packed { // its elements are in the meta, not in data keys
		scan = datatype.PackedScan(m)
	} else if m.Type != codec.TypeString {
		scan = cachedScan(scan, scanCacheBytes)
	}
	switch m.Type {
	case codec.TypeString:
		if !m.Frag {
			return rdb.Source{Kind: rdb.KindString, String: m.Value}, nil
		}
		// The format holds a string whole: assemble it from its stored fragments.
		b := make([]byte, m.Count)
		err := datatype.WalkFragments(scan, func(i int64, f []byte) error {
			at := i * int64(codec.FragSize)
			if at < int64(len(b)) {
				copy(b[at:], f)
			}
			return nil
		})
		return rdb.Source{Kind: rdb.KindString, String: b}, err
	case codec.TypeList:
		return rdb.Source{Kind: rdb.KindList, List: elements{n, func(fn func([]byte) error) error {
			return datatype.WalkList(scan, m, fn)
		}}}, nil
	case codec.TypeSet:
		return rdb.Source{Kind: rdb.KindSet, Set: elements{n, func(fn func([]byte) error) error {
			return datatype.WalkElems(scan, fn)
		}}}, nil
	case codec.TypeHash:
		return rdb.Source{Kind: rdb.KindHash, Hash: pairs{n, scan}}, nil
	case codec.TypeZSet:
		return rdb.Source{Kind: rdb.KindZSet, ZSet: scored{n, scan}}, nil
	case codec.TypeStream:
		var sm codec.StreamMeta
		if err := codec.DecodeStreamMeta(m.Value, &sm); err != nil {
			return rdb.Source{}, err
		}
		return rdb.Source{Kind: rdb.KindStream, Stream: &streamSource{n: m.Count, sm: sm, scan: scan}}, nil
	}
	return rdb.Source{}, codec.ErrCorruptMeta
}

type elements struct {
	n    int64
	each func(fn func([]byte) error) error
}

func (e elements) Len() int64                               { return e.n }
func (e elements) Each(fn func(element []byte) error) error { return e.each(fn) }

type pairs struct {
	n    int64
	scan datatype.ElemScan
}

func (p pairs) Len() int64 { return p.n }
func (p pairs) Each(fn func(field, value []byte) error) error {
	return datatype.WalkPairs(p.scan, fn)
}

type scored struct {
	n    int64
	scan datatype.ElemScan
}

func (s scored) Len() int64 { return s.n }
func (s scored) Each(fn func(member []byte, score float64) error) error {
	return datatype.WalkZSet(s.scan, fn)
}

// EachReverse walks the members in descending order, as Redis writes a skiplist (so the
// writer's bytes are Redis's: rdb.ReverseScoredSource).
func (s scored) EachReverse(fn func(member []byte, score float64) error) error {
	return datatype.WalkZSetReverse(s.scan, fn)
}

type streamSource struct {
	n    uint64
	sm   codec.StreamMeta
	scan datatype.ElemScan
}

func rid(id codec.StreamID) rdb.StreamID { return rdb.StreamID{Ms: id.Ms, Seq: id.Seq} }

func (s *streamSource) Meta() rdb.StreamMeta {
	return rdb.StreamMeta{Length: s.n, LastID: rid(s.sm.LastID), FirstID: rid(s.sm.FirstID),
		MaxDeletedID: rid(s.sm.MaxDeletedID), EntriesAdded: s.sm.EntriesAdded}
}

func (s *streamSource) Entries(fn func(id rdb.StreamID, fields [][]byte) error) error {
	return datatype.WalkStreamEntries(s.scan, func(id codec.StreamID, fv [][]byte) error {
		return fn(rid(id), fv)
	})
}

func (s *streamSource) Groups(fn func(g rdb.StreamGroup) error) error {
	return datatype.WalkStreamGroups(s.scan, func(g datatype.StreamGroupInfo) error {
		return fn(rdb.StreamGroup{Name: g.Name, LastID: rid(g.LastID), EntriesRead: g.EntriesRead,
			Pending: int64(g.Pending), Consumers: int64(g.Consumers)})
	})
}

func (s *streamSource) GroupPending(group []byte, fn func(p rdb.StreamPending) error) error {
	return datatype.WalkStreamPending(s.scan, group, func(id codec.StreamID, n datatype.NACK) error {
		return fn(rdb.StreamPending{ID: rid(id), DeliveryTime: n.DeliveryTime, DeliveryCount: n.DeliveryCount})
	})
}

func (s *streamSource) Consumers(group []byte, fn func(c rdb.StreamConsumer) error) error {
	return datatype.WalkStreamConsumers(s.scan, group, func(name []byte, seen int64, pending uint64) error {
		return fn(rdb.StreamConsumer{Name: name, SeenTime: seen, Pending: int64(pending)})
	})
}

func (s *streamSource) ConsumerPending(group, consumer []byte, fn func(id rdb.StreamID) error) error {
	return datatype.WalkStreamOwned(s.scan, group, consumer, func(id codec.StreamID) error {
		return fn(rid(id))
	})
}

// scanCacheBytes bounds what cachedScan keeps of one walk.
const scanCacheBytes = 64 << 10

// cachedScan remembers the elements of each walk of scan up to maxBytes, so that the second
// walk of a small value (the writer walks a value once to choose its encoding, once to write
// it) replays them instead of opening another RocksDB iterator: a CPU profile of MIGRATE of
// small hashes is mostly iterator creation (cgo). On the shared 2-core machine MIGRATE COPY
// of 10,000 two-field hashes measured 0.28-0.30 s before and 0.21-0.36 s after (noise as
// large as the change; redis-server: 0.04 s).
func cachedScan(scan datatype.ElemScan, maxBytes int) datatype.ElemScan {
	type kv struct{ e, v []byte }
	cache := map[string][]kv{}
	return func(lower, upper []byte, reverse bool, fn func(elem, val []byte) error) error {
		key := string(lower) + "\x00" + string(upper) + fmt.Sprint(len(lower), upper == nil, reverse)
		if rec, ok := cache[key]; ok {
			for _, x := range rec {
				if err := fn(x.e, x.v); err != nil {
					return err
				}
			}
			return nil
		}
		var rec []kv
		size, over := 0, false
		err := scan(lower, upper, reverse, func(e, v []byte) error {
			if !over {
				if size += len(e) + len(v) + 48; size > maxBytes {
					over, rec = true, nil
				} else {
					rec = append(rec, kv{bytes.Clone(e), bytes.Clone(v)})
				}
			}
			return fn(e, v)
		})
		if err == nil && !over {
			cache[key] = rec
		}
		return err
	}
}
