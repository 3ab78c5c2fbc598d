package shard

import (
	"encoding/binary"
	"fmt"

	"github.com/linxGnu/grocksdb"

	"shardis/codec"
)

// migratable reports whether a data directory of format from can be brought to
// codec.FormatVersion: by rewriting its manifest, and for format 5 by converting its lists
// first (migrateLists).
//
// Format 2 -> 3: binlog records gained units, marked by the top bit of the record's time
// field, which a format-2 writer never set (unix milliseconds do not reach it). Every format-2
// record is therefore a valid format-3 record that stands alone, and nothing else changed.
// Once migrated, a format-2 build refuses the directory: it would misread unit records.
//
// Format 3 -> 4: streams (meta type 5) and fragmented strings (meta flag 0x40) are new kinds
// of value; a format-3 directory holds none, so it is format 4 as it is. The rewritten manifest
// stops a format-3 build from opening a directory that may hold them.
//
// Format 4 -> 5: a unit may span one shard (the records of an EXEC or a script in one shard,
// shard.Tx.BeginUnit); a format-4 reader refuses such a record as corrupt. A format-4
// directory holds none.
//
// Format 5 -> 6: a list's elements are in nodes (codec/listnode.go) where format 5 had one
// data key per element; migrateLists converts every list. A hash's, set's or sorted set's
// meta may also hold its elements (flag 0x20) and Redis's small encoding (flag 0x10); a
// format-5 directory holds no such meta, and a format-5 build would refuse one as corrupt.
func migratable(from int) bool { return from >= 2 && from <= 5 }

// migrateListsBatch is the size of the write batch the migration fills before writing it: many
// small lists go in one write, a big list in one of its own.
const migrateListsBatch = 4 << 20

// migrateLists converts every list of a directory of a format before 6 to nodes, before the
// manifest says format 6. Each list is converted in one write batch (its meta, marked with
// codec's list-nodes flag, a range delete of its old data keys and its nodes under the same
// version, which the range delete before them in the batch does not hide): a crash leaves each
// list either converted or not, and the rerun on the next open skips those the flag marks.
// A list is read whole into memory to be converted.
func (s *Store) migrateLists() error {
	for _, sh := range s.shards {
		if err := s.migrateShardLists(sh); err != nil {
			return fmt.Errorf("shard %d: convert lists to nodes: %w", sh.id, err)
		}
	}
	return nil
}

func (s *Store) migrateShardLists(sh *Shard) error {
	ro := grocksdb.NewDefaultReadOptions()
	defer ro.Destroy()
	ro.SetIterateUpperBound([]byte{codec.PrefixMeta + 1})
	it := s.db.NewIteratorCF(ro, sh.cf)
	defer it.Close()
	wb := grocksdb.NewWriteBatch()
	defer wb.Destroy()
	batched := 0 // bytes of elements in wb
	flush := func() error {
		if wb.Count() == 0 {
			return nil
		}
		err := s.db.Write(s.wo, wb)
		wb.Clear()
		return err
	}
	for it.Seek([]byte{codec.PrefixMeta}); it.Valid(); it.Next() {
		k, v := it.Key(), it.Value()
		mk, mv := k.Data(), v.Data()
		if codec.MetaType(mv) != codec.TypeList || codec.MetaListNodes(mv) {
			k.Free()
			v.Free()
			continue
		}
		var m codec.Meta
		err := codec.DecodeMeta(mv, &m)
		db, _, key, ok := codec.DecodeMetaKey(mk)
		if err != nil || !ok {
			k.Free()
			v.Free()
			return fmt.Errorf("meta %q: %v", mk, err)
		}
		metaKey, key := append([]byte(nil), mk...), append([]byte(nil), key...)
		k.Free()
		v.Free()
		n, err := s.convertList(sh, wb, db, metaKey, key, &m)
		if err != nil {
			return err
		}
		if batched += n; batched >= migrateListsBatch {
			batched = 0
			if err := flush(); err != nil {
				return err
			}
		}
	}
	if err := it.Err(); err != nil {
		return err
	}
	return flush()
}

// convertList adds to wb the conversion of the format-5 list key (physical db db) whose meta
// is m: its elements, data keys of 8-byte positions, become nodes. It returns the bytes of
// elements it added.
func (s *Store) convertList(sh *Shard, wb *grocksdb.WriteBatch, db int, metaKey, key []byte, m *codec.Meta) (int, error) {
	prefix := codec.AppendDataPrefix(nil, db, key, m.Version)
	var elems [][]byte
	size := 0
	ro := grocksdb.NewDefaultReadOptions()
	defer ro.Destroy()
	end := PrefixEnd(prefix)
	ro.SetIterateUpperBound(end)
	it := s.db.NewIteratorCF(ro, sh.cf)
	for it.Seek(prefix); it.Valid(); it.Next() {
		v := it.Value()
		elems = append(elems, append([]byte(nil), v.Data()...))
		size += v.Size() + 16
		v.Free()
	}
	err := it.Err()
	it.Close()
	if err != nil {
		return 0, err
	}
	// Format 5 kept positions dense; should a list not be, its elements keep their order.
	m.Tail = m.Head + uint64(len(elems))
	m.Count = uint64(len(elems))
	wb.DeleteRangeCF(sh.cf, prefix, end)
	var node codec.ListNode
	var buf []byte
	write := func(n uint64, keep uint64) {
		buf = codec.AppendListNode(buf[:0], &node, keep)
		wb.PutCF(sh.cf, codec.AppendListNodeElem(append([]byte(nil), prefix...), n), buf)
		node = codec.ListNode{}
	}
	var keep uint64
	for i, e := range elems {
		seq := m.Head + uint64(i)
		n, slot := codec.ListNodeOf(seq)
		if len(e) > codec.ListInlineMax {
			node.Kind[slot] = codec.ListSlotBig
			wb.PutCF(sh.cf, codec.AppendListBigElem(append([]byte(nil), prefix...), seq), e)
		} else {
			node.Kind[slot], node.Elem[slot] = codec.ListSlotInline, e
		}
		keep |= 1 << slot
		if slot == codec.ListNodeSlots-1 || i == len(elems)-1 {
			write(n, keep)
			keep = 0
		}
	}
	wb.PutCF(sh.cf, metaKey, codec.AppendMeta(nil, m))
	return size, nil
}

// appendFormat5ListSeq appends the element part of position seq of a format-5 list (tests).
func appendFormat5ListSeq(b []byte, seq uint64) []byte { return binary.BigEndian.AppendUint64(b, seq) }
