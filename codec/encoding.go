package codec

import (
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"
)

// On-disk layout. Every shard owns one column family; inside it the first byte of a key says
// what the key is. docs/ENCODING.md is the byte-level reference; keep the two in step.
const (
	PrefixMeta   byte = 'm' // m | db | slot(2) | user key               -> meta value
	PrefixData   byte = 'd' // d | db | slot(2) | len(4) | key | ver(8) | element -> element value
	PrefixTTL    byte = 't' // t | expire ms(8) | db | user key         -> empty (owned by package ttl)
	PrefixBinlog byte = 'b' // b | seq(8)                               -> record (owned by package binlog)
	PrefixState  byte = 's' // s | name                                 -> shard bookkeeping (key counts, db map)
)

// FormatVersion is written to the manifest; a data directory of another format is refused,
// or migrated when shard/migrate.go knows how.
// 2: the binlog has a column family of its own; 3: binlog records may belong to a unit (a
// format-2 directory is migrated by rewriting its manifest: shard/migrate.go).
// 4: keys may be streams (type 5) and strings may be fragmented (flag 0x40); a format-3
// directory is migrated by rewriting its manifest, which stops a format-3 build from
// misreading them. 5: a unit may span one shard (an EXEC's or a script's records); a
// format-4 directory holds none and is migrated by rewriting its manifest. 6: hashes, sets and
// sorted sets may be packed into their meta (flags 0x20, 0x10), and a list's elements are in
// nodes (listnode.go), its meta marked with flagListNodes; a format-5 directory's lists are
// converted when it opens (shard/migrate.go), and it holds no packed meta.
const FormatVersion = 6

// SlotCount is the number of Redis Cluster hash slots.
const SlotCount = 16384

// Type is the Redis type of a key, stored in the low nibble of a meta value's first byte.
type Type byte

// The Redis types. The numbers are on disk: never renumber.
const (
	TypeString Type = 0
	TypeHash   Type = 1
	TypeList   Type = 2
	TypeSet    Type = 3
	TypeZSet   Type = 4
	TypeStream Type = 5
)

// String returns the name TYPE replies with.
func (t Type) String() string {
	switch t {
	case TypeString:
		return "string"
	case TypeHash:
		return "hash"
	case TypeList:
		return "list"
	case TypeSet:
		return "set"
	case TypeZSet:
		return "zset"
	case TypeStream:
		return "stream"
	}
	return "none"
}

// flagRaw marks a string that Redis would hold with the "raw" encoding (it was modified in
// place by APPEND, SETRANGE, SETBIT, …) so OBJECT ENCODING answers as Redis does.
const flagRaw = 0x80

// flagFrag marks a fragmented string: its bytes are in data keys of FragSize bytes under the
// meta's version, and the meta holds only its length (docs/ENCODING.md).
const flagFrag = 0x40

// flagPacked marks a hash, set or sorted set whose elements are in its meta value (Meta.Value,
// the packed layout of docs/ENCODING.md) instead of data keys.
const flagPacked = 0x20

// flagCompact marks a hash, set or sorted set that Redis 7.0 would still hold in its small
// encoding: a hash's or sorted set's listpack, a set's intset. It is cleared for good when a
// write passes Redis's limits.
const flagCompact = 0x10

// flagListNodes marks a list whose elements are in nodes (format 6): every list this build
// writes. Only the migration from format 5 reads it, to skip lists already converted. (The
// bit is flagPacked's: the flags' meaning depends on the type.)
const flagListNodes = 0x20

// typeMask keeps the type of a meta value's first byte; the high bits are flags.
const typeMask = 0x0f

// FragSize is the size of one fragment of a fragmented string: 1024 (a SETBIT rewrites one
// fragment: with 4096, SETBIT on a 1 MB bitmap ran at two thirds of the rate). It is on
// disk, so never change it. It is a variable only so that a test build can make fragments
// tiny (go build -ldflags "-X shardis/codec.fragSizeFlag=16"), which puts fragment edges
// under every short test (difftest's bitmaps are at most 1 KiB); such a build must not open a
// directory written by another.
var FragSize = fragSizeOf(fragSizeFlag)

// FragMin is the length up to which a string that grows in place stays whole in its meta (a
// GET is one point read): 4 fragments, 4096 bytes.
var FragMin = 4 * FragSize

var fragSizeFlag string

func fragSizeOf(flag string) int {
	if n, err := strconv.Atoi(flag); err == nil && n > 0 {
		return n
	}
	return 1024
}

// FragIndexLen is the length of the element part of a fragment's data key: the fragment's
// index (4, big-endian; fragment i holds bytes [i*FragSize, (i+1)*FragSize)).
const FragIndexLen = 4

// AppendFragIndex appends the element part of fragment i's data key.
func AppendFragIndex(b []byte, i uint32) []byte { return binary.BigEndian.AppendUint32(b, i) }

// FragIndex decodes the element part of a fragment's data key (ok false if it is not one).
func FragIndex(elem []byte) (uint32, bool) {
	if len(elem) != FragIndexLen {
		return 0, false
	}
	return binary.BigEndian.Uint32(elem), true
}

// ErrCorruptMeta is returned when a meta value cannot be decoded.
var ErrCorruptMeta = errors.New("codec: corrupt meta value")

// Meta is the decoded meta value of one user key.
//
// Layout: type|flags (1) | expire ms, big-endian, 0 = none (8) | then for a string its bytes;
// for a fragmented string version (8) | length (8); for a collection version (8) | count (8) |
// and for a list head (8) | tail (8); for a stream (count = entries) the StreamMetaLen bytes
// of its stream part follow, in Value; for a packed hash or set its elements follow, in Value
// (docs/ENCODING.md, Packed collections).
type Meta struct {
	Type    Type
	Raw     bool   // strings only: Redis would report the "raw" encoding
	Frag    bool   // strings only: the bytes are in fragments (data keys); Count is the length
	Packed  bool   // hashes, sets, sorted sets: the elements are in Value, not in data keys
	Compact bool   // hashes, sets, sorted sets: Redis would hold it as a listpack (hash, sorted set) or an intset (set)
	Expire  int64  // unix ms, 0 = no expiry
	Value   []byte // strings: the value; streams: the stream part (StreamMetaLen bytes); packed hashes and sets: the elements. Aliases the decoded buffer
	Version uint64 // collections and fragmented strings: data keys carry it, a new version hides all older data keys
	Count   uint64 // collections: number of elements; fragmented strings: length in bytes
	Head    uint64 // lists: sequence of the first element
	Tail    uint64 // lists: sequence after the last element
}

const metaHeaderLen = 9

// MetaHeaderLen is the length of a meta value's header (type and expire): what SET needs of
// the value it overwrites when that is a string.
const MetaHeaderLen = metaHeaderLen

// AppendMeta appends the encoding of m to b.
func AppendMeta(b []byte, m *Meta) []byte {
	t := byte(m.Type)
	if m.Raw {
		t |= flagRaw
	}
	if m.Frag && m.Type == TypeString {
		t |= flagFrag
	}
	packable := m.Type == TypeHash || m.Type == TypeSet || m.Type == TypeZSet
	if m.Packed && packable {
		t |= flagPacked
	}
	if m.Compact && packable {
		t |= flagCompact
	}
	if m.Type == TypeList {
		t |= flagListNodes
	}
	b = append(b, t)
	b = binary.BigEndian.AppendUint64(b, uint64(m.Expire))
	switch {
	case m.Type == TypeString && !m.Frag:
		return append(b, m.Value...)
	case m.Type == TypeList:
		b = binary.BigEndian.AppendUint64(b, m.Version)
		b = binary.BigEndian.AppendUint64(b, m.Count)
		b = binary.BigEndian.AppendUint64(b, m.Head)
		return binary.BigEndian.AppendUint64(b, m.Tail)
	case m.Type == TypeStream, m.Packed && packable:
		b = binary.BigEndian.AppendUint64(b, m.Version)
		b = binary.BigEndian.AppendUint64(b, m.Count)
		return append(b, m.Value...)
	default:
		b = binary.BigEndian.AppendUint64(b, m.Version)
		return binary.BigEndian.AppendUint64(b, m.Count)
	}
}

// DecodeMeta decodes v into m. m.Value aliases v.
func DecodeMeta(v []byte, m *Meta) error {
	if len(v) < metaHeaderLen {
		return ErrCorruptMeta
	}
	*m = Meta{Type: Type(v[0] & typeMask), Raw: v[0]&flagRaw != 0, Frag: v[0]&flagFrag != 0}
	m.Expire = int64(binary.BigEndian.Uint64(v[1:9]))
	rest := v[metaHeaderLen:]
	if m.Frag && m.Type != TypeString {
		return fmt.Errorf("%w: type %d", ErrCorruptMeta, v[0])
	}
	switch m.Type {
	case TypeHash, TypeSet, TypeZSet:
		m.Packed, m.Compact = v[0]&flagPacked != 0, v[0]&flagCompact != 0
	case TypeString:
	case TypeList: // flagListNodes (0x20) is the list's own
		if v[0]&flagCompact != 0 {
			return fmt.Errorf("%w: type %d", ErrCorruptMeta, v[0])
		}
	default:
		if v[0]&(flagPacked|flagCompact) != 0 {
			return fmt.Errorf("%w: type %d", ErrCorruptMeta, v[0])
		}
	}
	switch m.Type {
	case TypeString:
		if !m.Frag {
			m.Value = rest
			return nil
		}
		if len(rest) != 16 {
			return ErrCorruptMeta
		}
	case TypeHash, TypeSet, TypeZSet:
		if len(rest) < 16 || !m.Packed && len(rest) != 16 {
			return ErrCorruptMeta
		}
		if m.Packed {
			m.Value = rest[16:]
		}
	case TypeList:
		if len(rest) != 32 {
			return ErrCorruptMeta
		}
		m.Head = binary.BigEndian.Uint64(rest[16:24])
		m.Tail = binary.BigEndian.Uint64(rest[24:32])
	case TypeStream:
		if len(rest) != 16+StreamMetaLen {
			return ErrCorruptMeta
		}
		m.Value = rest[16:]
	default:
		return fmt.Errorf("%w: type %d", ErrCorruptMeta, v[0])
	}
	m.Version = binary.BigEndian.Uint64(rest[0:8])
	m.Count = binary.BigEndian.Uint64(rest[8:16])
	return nil
}

// MetaExpire reads only the expire field of an encoded meta value (0 if v is too short).
func MetaExpire(v []byte) int64 {
	if len(v) < metaHeaderLen {
		return 0
	}
	return int64(binary.BigEndian.Uint64(v[1:9]))
}

// MetaType reads only the type of an encoded meta value.
func MetaType(v []byte) Type {
	if len(v) == 0 {
		return TypeString
	}
	return Type(v[0] & typeMask)
}

// MetaListNodes reports whether an encoded meta value is a list in nodes (flagListNodes).
func MetaListNodes(v []byte) bool {
	return len(v) > 0 && Type(v[0]&typeMask) == TypeList && v[0]&flagListNodes != 0
}

// MetaHasData reports whether an encoded meta value has data keys: a collection's (but a
// packed one's) or a fragmented string's.
func MetaHasData(v []byte) bool {
	if len(v) == 0 {
		return false
	}
	t := Type(v[0] & typeMask)
	if t == TypeString {
		return v[0]&flagFrag != 0
	}
	return (t != TypeHash && t != TypeSet && t != TypeZSet) || v[0]&flagPacked == 0
}

// AppendMetaKey appends the meta key of user key in physical database db:
// 'm' | db | slot (2, big-endian) | key. Keys of one slot are contiguous, so a shard can
// list a slot's keys with one prefix scan.
func AppendMetaKey(b []byte, db int, key []byte) []byte {
	b = append(b, PrefixMeta, byte(db))
	b = binary.BigEndian.AppendUint16(b, Slot(key))
	return append(b, key...)
}

// DataPrefixLen is the length of the data key prefix of a user key of length n.
func DataPrefixLen(n int) int { return 16 + n }

// MetaKeyLen is the length of the meta key of a user key of length n.
func MetaKeyLen(n int) int { return 4 + n }

// DecodeMetaKey splits a meta key. key aliases k.
func DecodeMetaKey(k []byte) (db int, slot uint16, key []byte, ok bool) {
	if len(k) < 4 || k[0] != PrefixMeta {
		return 0, 0, nil, false
	}
	return int(k[1]), binary.BigEndian.Uint16(k[2:4]), k[4:], true
}

// MetaDBRange returns the bounds [lower, upper) of every meta key of physical database db.
func MetaDBRange(db int) (lower, upper []byte) {
	return []byte{PrefixMeta, byte(db)}, []byte{PrefixMeta, byte(db) + 1}
}

// DataDBRange returns the bounds [lower, upper) of every data key of physical database db.
func DataDBRange(db int) (lower, upper []byte) {
	return []byte{PrefixData, byte(db)}, []byte{PrefixData, byte(db) + 1}
}

// AppendDataPrefix appends the prefix shared by every data key of one version of a collection:
// 'd' | db | slot(2) | len(key) (4, big-endian) | key | version (8, big-endian).
// The element (hash field, set member, list sequence, zset score|member) follows it.
func AppendDataPrefix(b []byte, db int, key []byte, version uint64) []byte {
	b = append(b, PrefixData, byte(db))
	b = binary.BigEndian.AppendUint16(b, Slot(key))
	b = binary.BigEndian.AppendUint32(b, uint32(len(key)))
	b = append(b, key...)
	return binary.BigEndian.AppendUint64(b, version)
}

// HashTag returns the part of key that decides its slot and shard: the bytes between the first
// '{' and the next '}' when that is non-empty, else the whole key (Redis Cluster's rule).
func HashTag(key []byte) []byte {
	for i, c := range key {
		if c == '{' {
			for j := i + 1; j < len(key); j++ {
				if key[j] == '}' {
					if j == i+1 {
						return key
					}
					return key[i+1 : j]
				}
			}
			return key
		}
	}
	return key
}

// Slot returns the Redis Cluster hash slot of key: CRC16-XMODEM of its hash tag mod 16384.
func Slot(key []byte) uint16 {
	var crc uint16
	for _, c := range HashTag(key) {
		crc = crc<<8 ^ crc16Table[byte(crc>>8)^c]
	}
	return crc & (SlotCount - 1)
}

var crc16Table = func() (t [256]uint16) {
	for i := range t {
		crc := uint16(i) << 8
		for range 8 {
			if crc&0x8000 != 0 {
				crc = crc<<1 ^ 0x1021
			} else {
				crc <<= 1
			}
		}
		t[i] = crc
	}
	return t
}()

// UserKeyOf returns the physical db and user key a meta or data key belongs to; ok is false
// for any other raw key (TTL index, binlog, bookkeeping). key aliases raw.
func UserKeyOf(raw []byte) (db int, key []byte, ok bool) {
	if len(raw) < 4 {
		return 0, nil, false
	}
	switch raw[0] {
	case PrefixMeta:
		return int(raw[1]), raw[4:], true
	case PrefixData:
		if len(raw) < 8 {
			return 0, nil, false
		}
		n := int(binary.BigEndian.Uint32(raw[4:8]))
		if len(raw) < 8+n {
			return 0, nil, false
		}
		return int(raw[1]), raw[8 : 8+n], true
	}
	return 0, nil, false
}
