package shard

import (
	"shardis/codec"
	"shardis/internal/memfree"
)

// PeekMeta reads the committed meta of key in logical db from outside the shard goroutine,
// without a transaction: the event loops answer a lone GET this way instead of sending it to
// the shard and back. It reads the shard's key cache, or RocksDB on a miss.
//
// Committed state is what a command would see at this instant, since a write is acknowledged
// only after its commit (and its write-through to the cache). sure is false when only the
// shard can answer: the key's time has come (expired is true then: the shard deletes it and
// logs the DEL), SWAPDB remapped db during the read, or the read failed. m.Value is immutable
// and may be kept. buf is scratch space for the meta key; the returned buf is to be reused.
func (s *Store) PeekMeta(db int, key []byte, nowMs int64, buf []byte) (m codec.Meta, exists, sure, expired bool, _ []byte) {
	sh := s.shards[s.ShardOf(key)]
	pdb := sh.dbmapPub[db].Load()
	buf = codec.AppendMetaKey(buf[:0], int(pdb), key)
	val, found, hit, epoch := sh.cache.getWithEpoch(buf)
	if !hit {
		v, err := s.db.GetPinnedCF(s.ro, sh.cf, buf)
		if err != nil {
			return m, false, false, false, buf
		}
		found = v.Exists()
		val = clip(v.Data())
		v.Destroy()
		memfree.Released(len(val)) // a big value read is garbage once its reply is written
		sh.cache.putIfEpoch(buf, val, found, epoch)
	}
	if sh.dbmapPub[db].Load() != pdb {
		return m, false, false, false, buf
	}
	if !found {
		return m, false, true, false, buf
	}
	if err := codec.DecodeMeta(val, &m); err != nil {
		return m, false, false, false, buf // the shard reports the corruption
	}
	if m.Expire != 0 && m.Expire <= nowMs {
		return codec.Meta{}, false, false, true, buf
	}
	return m, true, true, false, buf
}
