package ttl

import "fmt"

// Cursor walks index keys in ascending order; the shard's iterator implements it. Key aliases
// memory valid until Next; the walk closes the cursor.
type Cursor interface {
	Valid() bool
	Key() []byte
	Next()
	Err() error
	Close()
}

// Shard is what an expiry walk needs of the shard it runs in, within one of its
// transactions: the walk decides, the shard reads and writes. Its methods are valid only
// during that transaction.
type Shard interface {
	// Entries opens a cursor over the index from its oldest entry up to upper (exclusive).
	Entries(upper []byte) Cursor
	// ExpireOf returns the expire time in the meta of key in physical db pdb (false: no key).
	ExpireOf(pdb int, key []byte) (expireMs int64, ok bool)
	// RemoveExpired deletes key of physical db pdb, its data and its index entry, counts it
	// expired and logs its DEL.
	RemoveExpired(pdb int, key []byte)
	// DropEntry deletes one index entry (raw is its index key) whose key is gone or has
	// another expire time now.
	DropEntry(raw []byte)
}

// Walk handles up to limit index entries due at or before nowMs, oldest first: a key whose
// meta still carries the entry's time is deleted, a stale entry is dropped. It returns how
// many entries it handled; fewer than limit means nothing else is due.
func Walk(s Shard, nowMs int64, limit int) (int, error) {
	type due struct {
		raw []byte // the index key; pdb and key alias it
		at  int64
		pdb int
		key []byte
	}
	var batch []due
	it := s.Entries(UpperBound(nowMs))
	for ; it.Valid() && len(batch) < limit; it.Next() {
		raw := append([]byte(nil), it.Key()...)
		if at, pdb, key, ok := DecodeKey(raw); ok {
			batch = append(batch, due{raw, at, pdb, key})
		}
	}
	err := it.Err()
	it.Close()
	if err != nil {
		return 0, fmt.Errorf("ttl walk: %w", err)
	}
	// Deletes come after the walk: they change the transaction's pending writes, which an
	// open cursor has already merged.
	for _, d := range batch {
		if exp, ok := s.ExpireOf(d.pdb, d.key); ok && exp == d.at {
			s.RemoveExpired(d.pdb, d.key) // deletes the index entry too
		} else {
			s.DropEntry(d.raw)
		}
	}
	return len(batch), nil
}
