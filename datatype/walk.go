package datatype

import (
	"bytes"
	"encoding/binary"

	"shardis/codec"
	"shardis/shard"
)

// Walks over a value's data keys, for code that reads a whole value element by element
// without a handle (DUMP, an RDB file written from a snapshot): each walk takes an ElemScan,
// which a transaction (TxScan) or a raw key/value iterator (a snapshot's) provides, so the
// layout of every type's elements stays in this package.

// ElemScan calls fn with the element part and value of every data key of one value whose
// element lies in [lower, upper) (upper nil: unbounded), in element order (descending with
// reverse). The slices are valid only during the call; it stops at fn's first error and
// returns it.
type ElemScan func(lower, upper []byte, reverse bool, fn func(elem, val []byte) error) error

// TxScan is the ElemScan of the data keys of key (logical db) at version in tx.
func TxScan(tx *shard.Tx, db int, key []byte, version uint64) ElemScan {
	return func(lower, upper []byte, reverse bool, fn func(elem, val []byte) error) error {
		it := tx.IterateData(db, key, version, lower, upper, reverse)
		defer it.Close()
		for ; it.Valid(); it.Next() {
			if err := fn(it.Elem(), it.Value()); err != nil {
				return err
			}
		}
		if err := it.Err(); err != nil {
			return err
		}
		return tx.Err()
	}
}

// ValueScan is the ElemScan of the value of key (logical db) whose meta is m in tx: its
// packed elements (PackedScan) or its data keys (TxScan).
func ValueScan(tx *shard.Tx, db int, key []byte, m *codec.Meta) ElemScan {
	if m.Packed {
		return PackedScan(m)
	}
	return TxScan(tx, db, key, m.Version)
}

// WalkList calls fn with the elements of the list whose meta is m, head to tail: its nodes'
// slots at positions [Head, Tail) and its big elements, in one pass in key order.
func WalkList(scan ElemScan, m *codec.Meta, fn func(val []byte) error) error {
	if m.Tail <= m.Head {
		return nil
	}
	sc := listScan{lo: m.Head, hi: m.Tail, out: fn}
	return scan(codec.AppendListNodeElem(nil, m.Head>>codec.ListNodeShift),
		codec.AppendListNodeElem(nil, (m.Tail-1)>>codec.ListNodeShift+1), false, sc.feed)
}

// WalkElems calls fn with every element: a set's members.
func WalkElems(scan ElemScan, fn func(elem []byte) error) error {
	return scan(nil, nil, false, func(elem, _ []byte) error { return fn(elem) })
}

// WalkPairs calls fn with every element and value: a hash's fields and values.
func WalkPairs(scan ElemScan, fn func(elem, val []byte) error) error {
	return scan(nil, nil, false, fn)
}

// WalkZSet calls fn with a sorted set's members in ascending score order, then member order.
func WalkZSet(scan ElemScan, fn func(member []byte, score float64) error) error {
	return walkZSet(scan, false, fn)
}

// WalkZSetReverse is WalkZSet in descending order (Redis writes a skiplist so).
func WalkZSetReverse(scan ElemScan, fn func(member []byte, score float64) error) error {
	return walkZSet(scan, true, fn)
}

func walkZSet(scan ElemScan, reverse bool, fn func(member []byte, score float64) error) error {
	return scan([]byte{codec.ZSetScoreTag}, []byte{codec.ZSetScoreTag + 1}, reverse, func(elem, _ []byte) error {
		if len(elem) < 9 {
			return codec.ErrCorruptMeta
		}
		m, s := zsetOrderElem(elem)
		return fn(m, s)
	})
}

// WalkFragments calls fn with every stored fragment of a fragmented string: its index and
// its bytes (trailing zeros cut; a missing fragment is all zeros).
func WalkFragments(scan ElemScan, fn func(index int64, b []byte) error) error {
	return scan(nil, nil, false, func(elem, val []byte) error {
		i, ok := codec.FragIndex(elem)
		if !ok {
			return codec.ErrCorruptMeta
		}
		return fn(int64(i), val)
	})
}

// WalkStreamEntries calls fn with a stream's entries in id order; fv alternates fields and
// values and, like its slices, is valid only during the call.
func WalkStreamEntries(scan ElemScan, fn func(id codec.StreamID, fv [][]byte) error) error {
	var fv [][]byte
	return scan([]byte{codec.StreamEntry}, []byte{codec.StreamEntry + 1}, false, func(elem, val []byte) error {
		if len(elem) != 17 {
			return codec.ErrCorruptMeta
		}
		f, err := codec.NewStreamFields(val)
		if err != nil {
			return err
		}
		fv = fv[:0]
		for f.Next() {
			fv = append(fv, f.Field, f.Value)
		}
		return fn(codec.DecodeStreamID(elem[1:]), fv)
	})
}

// StreamGroupInfo is a consumer group's record as a walk reads it.
type StreamGroupInfo struct {
	Name        []byte
	LastID      codec.StreamID
	EntriesRead int64
	Pending     uint64
	Consumers   uint64
}

// WalkStreamGroups calls fn with a stream's groups in name order.
func WalkStreamGroups(scan ElemScan, fn func(g StreamGroupInfo) error) error {
	return scan([]byte{codec.StreamGroup}, []byte{codec.StreamGroup + 1}, false, func(elem, val []byte) error {
		var g Group
		if !decodeGroup(val, &g) {
			return codec.ErrCorruptMeta
		}
		return fn(StreamGroupInfo{Name: elem[1:], LastID: g.LastID, EntriesRead: g.EntriesRead,
			Pending: g.pending, Consumers: g.consumers})
	})
}

// WalkStreamPending calls fn with the pending entries of group, in id order.
func WalkStreamPending(scan ElemScan, group []byte, fn func(id codec.StreamID, n NACK) error) error {
	lo := groupScoped(nil, codec.StreamPending, group)
	return scan(lo, prefixEnd(lo), false, func(elem, val []byte) error {
		n, ok := decodeNACK(val)
		if !ok || len(elem) != len(lo)+16 {
			return codec.ErrCorruptMeta
		}
		return fn(codec.DecodeStreamID(elem[len(lo):]), n)
	})
}

// WalkStreamConsumers calls fn with the consumers of group in name order: name, seen time
// and number of pending entries.
func WalkStreamConsumers(scan ElemScan, group []byte, fn func(name []byte, seen int64, pending uint64) error) error {
	lo := groupScoped(nil, codec.StreamConsumer, group)
	return scan(lo, prefixEnd(lo), false, func(elem, val []byte) error {
		if len(val) != consumerRecordLen {
			return codec.ErrCorruptMeta
		}
		return fn(elem[len(lo):], int64(binary.BigEndian.Uint64(val)), binary.BigEndian.Uint64(val[8:]))
	})
}

// WalkStreamOwned calls fn with the ids consumer of group has pending, in id order.
func WalkStreamOwned(scan ElemScan, group, consumer []byte, fn func(id codec.StreamID) error) error {
	lo := groupScoped(nil, codec.StreamOwned, group)
	lo = binary.BigEndian.AppendUint32(lo, uint32(len(consumer)))
	lo = append(lo, consumer...)
	return scan(lo, prefixEnd(lo), false, func(elem, _ []byte) error {
		if len(elem) != len(lo)+16 || !bytes.HasPrefix(elem, lo) {
			return codec.ErrCorruptMeta
		}
		return fn(codec.DecodeStreamID(elem[len(lo):]))
	})
}
