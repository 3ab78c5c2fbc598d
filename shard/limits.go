package shard

// EncodingLimits are Redis's limits on its small encodings of collections, from the
// configuration (hash-max-listpack-entries, hash-max-listpack-value, set-max-intset-entries,
// zset-max-listpack-entries, zset-max-listpack-value).
// The type layer (package datatype) decides by them whether a hash or set stays packed in its
// meta and what OBJECT ENCODING answers; changing them changes what later writes do, as in
// Redis.
type EncodingLimits struct {
	HashEntries   int64 // hash-max-listpack-entries
	HashValue     int64 // hash-max-listpack-value (bytes of a field or a value)
	SetIntEntries int64 // set-max-intset-entries
	ZSetEntries   int64 // zset-max-listpack-entries
	ZSetValue     int64 // zset-max-listpack-value (bytes of a member)
}

// DefaultEncodingLimits are Redis 7.0's defaults.
var DefaultEncodingLimits = EncodingLimits{HashEntries: 512, HashValue: 64, SetIntEntries: 512,
	ZSetEntries: 128, ZSetValue: 64}

// SetEncodingLimits changes the limits later writes follow (config hooks).
func (s *Store) SetEncodingLimits(l EncodingLimits) { s.encodingLimits.Store(&l) }

// EncodingLimits returns the limits the store's writes follow.
func (s *Store) EncodingLimits() *EncodingLimits {
	if l := s.encodingLimits.Load(); l != nil {
		return l
	}
	return &DefaultEncodingLimits
}

// EncodingLimits returns the limits of the transaction's store.
func (tx *Tx) EncodingLimits() *EncodingLimits { return tx.store.EncodingLimits() }
