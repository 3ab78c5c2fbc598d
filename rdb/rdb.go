// Package rdb reads and writes Redis's serialization format: RDB files (version 10, as Redis
// 7.0 writes them, and every older version Redis 7.0 still reads) and DUMP payloads (one
// value, its RDB version and a CRC-64).
//
// It knows nothing of shards, commands or configuration. A value goes out as a Source the
// writer may walk twice (once to choose Redis's encoding and the lengths the format puts
// first, once to write), and comes in as calls on a Handler, one element at a time; so a key
// of any size passes through without being held whole, except where the format itself holds
// it whole (a string, one listpack or ziplist blob, one stream node).
//
// Files: reader.go (Reader, ReadPayload) over decode_*.go (one per encoding: LZF, listpack,
// ziplist, zipmap, intset, stream nodes); writer.go (Writer, Dump) over encode_*.go.
package rdb

import (
	"errors"
	"fmt"
)

// Version is the RDB version this package writes: Redis 7.0's. The reader takes 1 to Version.
const Version = 10

// Value types as they appear in a file (rdb.h's RDB_TYPE_*).
const (
	TypeString           = 0
	TypeList             = 1
	TypeSet              = 2
	TypeZSet             = 3
	TypeHash             = 4
	TypeZSet2            = 5
	TypeModule           = 6
	TypeModule2          = 7
	TypeHashZipmap       = 9
	TypeListZiplist      = 10
	TypeSetIntset        = 11
	TypeZSetZiplist      = 12
	TypeHashZiplist      = 13
	TypeListQuicklist    = 14
	TypeStreamListpacks  = 15
	TypeHashListpack     = 16
	TypeZSetListpack     = 17
	TypeListQuicklist2   = 18
	TypeStreamListpacks2 = 19
	maxTypeRedis70Reads  = 19
	opcodeFunction2      = 245
	opcodeFunction       = 246
	opcodeModuleAux      = 247
	opcodeIdle           = 248
	opcodeFreq           = 249
	opcodeAux            = 250
	opcodeResizeDB       = 251
	opcodeExpireTimeMs   = 252
	opcodeExpireTime     = 253
	opcodeSelectDB       = 254
	opcodeEOF            = 255
	lenEncoded6Bit       = 0
	lenEncoded14Bit      = 1
	lenEncoded32Bit      = 0x80
	lenEncoded64Bit      = 0x81
	lenEncodedSpecial    = 3
	specialInt8          = 0
	specialInt16         = 1
	specialInt32         = 2
	specialLZF           = 3
	quicklistNodePlain   = 1
	quicklistNodePacked  = 2
	streamIDBytes        = 16
	payloadFooterBytes   = 10 // RDB version (2 bytes, little endian) and CRC-64 (8 bytes)
	fileMagic            = "REDIS"
	fileHeaderBytes      = 9 // "REDIS" and four decimal digits of the version
)

// Kind is a value's type as a Redis user sees it (TYPE), whatever its encoding in a file.
type Kind uint8

const (
	KindString Kind = iota + 1
	KindList
	KindSet
	KindZSet
	KindHash
	KindStream
)

func (k Kind) String() string {
	switch k {
	case KindString:
		return "string"
	case KindList:
		return "list"
	case KindSet:
		return "set"
	case KindZSet:
		return "zset"
	case KindHash:
		return "hash"
	case KindStream:
		return "stream"
	}
	return fmt.Sprintf("kind(%d)", uint8(k))
}

// Key is what a file says of one key besides its value.
type Key struct {
	DB       int    // the database of the SELECTDB before it; 0 in a payload
	Name     []byte // valid only during the Handler call that receives it
	ExpireAt int64  // unix time in milliseconds; 0 when the key has none
	Idle     int64  // LRU idle seconds (RDB_OPCODE_IDLE); -1 when the file gives none
	Freq     int    // LFU counter (RDB_OPCODE_FREQ); -1 when the file gives none
	Kind     Kind
	Len      int64 // elements the value holds when the encoding says so up front; -1 if not
}

// StreamID is a stream entry's id.
type StreamID struct{ Ms, Seq uint64 }

// StreamMeta is what a stream keeps beside its entries. FirstID, MaxDeletedID and
// EntriesAdded are zero in files before version 10 (RDB_TYPE_STREAM_LISTPACKS), where
// Redis 7.0 derives them on load (see Handler.StreamMeta).
type StreamMeta struct {
	Length       uint64
	LastID       StreamID
	FirstID      StreamID
	MaxDeletedID StreamID
	EntriesAdded uint64
}

// StreamGroup heads one consumer group. EntriesRead is -1 when unknown (as Redis's
// SCG_INVALID_ENTRIES_READ, and always in files before version 10).
type StreamGroup struct {
	Name        []byte // valid only during the call
	LastID      StreamID
	EntriesRead int64
	Pending     int64 // entries in the group's PEL
	Consumers   int64
}

// StreamPending is one entry of a group's pending entries list.
type StreamPending struct {
	ID            StreamID
	DeliveryTime  int64 // unix ms
	DeliveryCount uint64
}

// StreamConsumer heads one consumer of a group.
type StreamConsumer struct {
	Name     []byte // valid only during the call
	SeenTime int64  // unix ms
	Pending  int64  // ids in the consumer's PEL, each also in its group's PEL
}

// Handler receives what a Reader reads, in file order. Byte slices passed to it are valid
// only during the call (the reader reuses its buffers); a Handler copies what it keeps. An
// error returned by a method stops the read and is returned, wrapped, by the Reader.
//
// For every key: BeginKey, then its elements through the methods of its Kind, then EndKey.
// A stream's calls come in the file's order: StreamEntry for every entry (ascending ids),
// StreamMeta, then for every group StreamGroup, its StreamGroupPending entries, and for every
// consumer StreamConsumer and its StreamConsumerPending ids.
type Handler interface {
	// Aux is one RDB_OPCODE_AUX field (redis-ver, repl-id, repl-offset, …).
	Aux(key, value []byte) error
	// SelectDB starts the keys of database db; ResizeDB is its size hint.
	SelectDB(db int) error
	ResizeDB(keys, expires uint64) error
	// Function is one library's code (RDB_OPCODE_FUNCTION2), as FUNCTION LOAD takes it.
	Function(code []byte) error

	BeginKey(k Key) error
	String(value []byte) error
	ListElement(element []byte) error
	SetMember(member []byte) error
	HashField(field, value []byte) error
	ZSetMember(member []byte, score float64) error
	StreamEntry(id StreamID, fields [][]byte) error // fields: field, value, field, value, …
	StreamMeta(m StreamMeta) error
	StreamGroup(g StreamGroup) error
	StreamGroupPending(p StreamPending) error
	StreamConsumer(c StreamConsumer) error
	StreamConsumerPending(id StreamID) error
	EndKey() error
}

// Source is one value to write. Exactly one of the typed sources is set, by Kind. A writer
// may walk a source more than once; each walk yields the same elements in the same order.
// Slices passed to the callbacks are valid only during the call.
type Source struct {
	Kind   Kind
	String []byte // KindString: the whole value
	List   ElementSource
	Set    ElementSource
	Hash   PairSource
	ZSet   ScoredSource
	Stream StreamSource
}

// ElementSource walks a list's elements (head to tail) or a set's members.
type ElementSource interface {
	Len() int64
	Each(fn func(element []byte) error) error
}

// PairSource walks a hash's fields and values.
type PairSource interface {
	Len() int64
	Each(fn func(field, value []byte) error) error
}

// ScoredSource walks a sorted set's members in ascending score order (then member order).
type ScoredSource interface {
	Len() int64
	Each(fn func(member []byte, score float64) error) error
}

// StreamSource walks a stream: its entries in ascending id order, its groups, each group's
// pending entries (ascending ids) and consumers, and each consumer's pending ids.
type StreamSource interface {
	Meta() StreamMeta
	Entries(fn func(id StreamID, fields [][]byte) error) error
	Groups(fn func(g StreamGroup) error) error
	GroupPending(group []byte, fn func(p StreamPending) error) error
	Consumers(group []byte, fn func(c StreamConsumer) error) error
	ConsumerPending(group, consumer []byte, fn func(id StreamID) error) error
}

// Errors a reader returns; Redis's texts for them are the caller's (RESTORE answers
// "ERR DUMP payload version or checksum are wrong" and "ERR Bad data format").
var (
	// ErrBadPayload: a DUMP payload too short, of a newer RDB version, or whose CRC-64 differs.
	ErrBadPayload = errors.New("rdb: DUMP payload version or checksum are wrong")
	// ErrBadFormat: bytes that are not what the format allows (a truncated value, an unknown
	// type, a length past what follows, a listpack that does not parse, …).
	ErrBadFormat = errors.New("rdb: bad data format")
	// ErrModule: a module value or module aux data, which shardis cannot load.
	ErrModule = errors.New("rdb: module data cannot be loaded")
	// ErrChecksum: a file whose CRC-64 footer differs from its bytes.
	ErrChecksum = errors.New("rdb: wrong RDB checksum")
)
