package cmds

import (
	"bytes"
	"errors"

	"shardis/codec"
	"shardis/datatype"
	"shardis/pubsub"
	"shardis/shard"
)

// Shared plumbing of the collection families (hash.go, list.go, set.go, zset.go).
//
// A collection is a meta value (type, version, count, expire; head and tail for lists) and one
// data key per element under codec.AppendDataPrefix(db, key, version). Commands read the meta
// with collectionMeta, change data keys with c.Tx.PutData/DeleteData, and finish with
// saveCollection, which writes the new count or removes the key when it became empty (Redis
// never keeps an empty collection).

// collectionMeta loads key's meta for a command on type t. exists is false for a missing key
// (m is then a fresh, unsaved collection of type t with a new version). ok is false when the key
// holds another type; the WRONGTYPE error has been replied.
func (c *Ctx) collectionMeta(key []byte, t codec.Type) (m codec.Meta, exists, ok bool) {
	m, exists = c.Tx.Meta(c.DB, key)
	if !exists {
		return c.newCollection(key, t), false, true
	}
	if m.Type != t {
		c.Error(errWrongType)
		return m, true, false
	}
	return m, true, true
}

// readCollection is collectionMeta for read-only commands: it never allocates a version.
// exists false means the key is missing (reply the empty answer).
func (c *Ctx) readCollection(key []byte, t codec.Type) (m codec.Meta, exists, ok bool) {
	m, exists = c.Tx.Meta(c.DB, key)
	if exists && m.Type != t {
		c.Error(errWrongType)
		return m, true, false
	}
	return m, exists, true
}

// streamAbove is the element count above which a reply that walks a collection is streamed
// (see shard.Stream) instead of built whole: the server then holds a few 64 KiB pieces of it,
// however large the collection. Below it, building the reply at once is cheaper.
const streamAbove = 1024

// streamElems answers the rest of the reply (its header is written) with n elements of
// collection (key, m) in [lowerElem, upperElem), through a stream when the caller can send one
// and n is large. It reports false when the command must write the elements itself.
func (c *Ctx) streamElems(key []byte, m *codec.Meta, n int, lowerElem, upperElem []byte, reverse bool, emit shard.EmitFunc) bool {
	if !c.Streamable || n <= streamAbove {
		return false
	}
	st, err := c.Tx.StreamData(c.DB, key, m.Version, lowerElem, upperElem, reverse, n, emit)
	if err != nil {
		c.W.Buf = c.W.Buf[:0] // the transaction failed: every command of the group gets the error
		c.Error("ERR " + err.Error())
		return true
	}
	c.Stream = st
	return true
}

// streamable reports whether a reply of n elements is to be streamed (see streamAbove): the
// caller can send a stream and n is large.
func (c *Ctx) streamable(n int) bool { return c.Streamable && n > streamAbove }

// sendStream answers the rest of the reply (its header is written) with stream st, opened by
// a datatype handle's Stream method, or with the error that failed the transaction.
func (c *Ctx) sendStream(st *shard.Stream, err error) {
	if err != nil {
		c.W.Buf = c.W.Buf[:0] // the transaction failed: every command of the group gets the error
		c.Error("ERR " + err.Error())
		return
	}
	c.Stream = st
}

// typeError replies the error of a datatype operation: Redis's WRONGTYPE for
// datatype.ErrWrongType, and the error's text otherwise.
func (c *Ctx) typeError(err error) {
	if errors.Is(err, datatype.ErrWrongType) {
		c.Error(errWrongType)
		return
	}
	c.Error("ERR " + err.Error())
}

// notifySaved publishes a collection command's keyspace event after the type's Save and,
// when the collection became empty and went (removed), Redis's "del" after it.
func (c *Ctx) notifySaved(removed bool, key []byte, class pubsub.Class, event string) {
	c.notify(class, event, key)
	if removed {
		c.notify(pubsub.Generic, "del", key)
	}
}

// newCollection returns the meta of a new, empty collection of type t stored under key.
func (c *Ctx) newCollection(key []byte, t codec.Type) codec.Meta {
	m := codec.Meta{Type: t, Version: c.Tx.NewVersion(key)}
	if t == codec.TypeList {
		m.Head, m.Tail = codec.ListInitialSeq, codec.ListInitialSeq
	}
	return m
}

// saveCollection writes m as key's meta, or deletes key when the collection is empty; it
// reports whether it deleted the key.
func (c *Ctx) saveCollection(key []byte, m *codec.Meta) (removed bool) {
	if m.Count == 0 {
		return c.Tx.Delete(c.DB, key)
	}
	c.Tx.SetMeta(c.DB, key, m)
	return false
}

// saveAndNotify is saveCollection followed by the command's keyspace event and, when the
// collection became empty and went, Redis's "del" after it.
func (c *Ctx) saveAndNotify(key []byte, m *codec.Meta, class pubsub.Class, event string) {
	removed := c.saveCollection(key, m)
	c.notify(class, event, key)
	if removed {
		c.notify(pubsub.Generic, "del", key)
	}
}

// dataKey returns the data key of element elem of collection (key, m) in the context's db.
// The result is freshly allocated.
func (c *Ctx) dataKey(key []byte, m *codec.Meta, elem []byte) []byte {
	return append(c.Tx.DataPrefix(c.DB, key, m.Version), elem...)
}

// dumpChunk bounds the arguments of one binlog record that rebuilds a collection.
const dumpChunk = 512

// logCollection appends binlog records that rebuild collection dst (logical db) from scratch
// as it is in the transaction now: DEL, then HSET/RPUSH/SADD/ZADD in chunks, then PEXPIREAT.
// RENAME, COPY and MOVE use it for a destination that may live in another shard, so a replica
// (or a replay) rebuilds it without the source.
func (c *Ctx) logCollection(db int, dst []byte, m *codec.Meta) {
	c.Tx.Log(db, dst, keysDEL, dst)
	var name string
	switch m.Type {
	case codec.TypeHash:
		name = "HSET"
	case codec.TypeList:
		name = "RPUSH"
	case codec.TypeSet:
		name = "SADD"
	case codec.TypeZSet:
		name = "ZADD"
	default:
		return
	}
	args := [][]byte{[]byte(name), dst}
	flush := func() {
		if len(args) > 2 {
			c.Tx.Log(db, dst, args...)
			args = args[:2]
		}
	}
	// add appends the copied arguments of one element, flushing a full record.
	add := func(elem ...[]byte) {
		for _, e := range elem {
			args = append(args, bytes.Clone(e))
		}
		if len(args) >= 2+dumpChunk {
			flush()
		}
	}
	switch m.Type {
	case codec.TypeHash:
		h, _ := datatype.HashFromMeta(c.Tx, db, dst, *m, true)
		it := h.Iter(nil)
		for ; it.Valid(); it.Next() {
			add(it.Field(), it.Value())
		}
		it.Close()
	case codec.TypeSet:
		s, _ := datatype.SetFromMeta(c.Tx, db, dst, *m, true)
		it := s.Iter(nil)
		for ; it.Valid(); it.Next() {
			add(it.Member())
		}
		it.Close()
	case codec.TypeList:
		it := c.Tx.IterateData(db, dst, m.Version, nil, nil, false)
		for ; it.Valid(); it.Next() {
			add(it.Value())
		}
		it.Close()
	case codec.TypeZSet: // only the member -> score entries
		it := c.Tx.IterateData(db, dst, m.Version, []byte{codec.ZSetMemberTag}, []byte{codec.ZSetMemberTag + 1}, false)
		for ; it.Valid(); it.Next() {
			add(codec.FormatDouble(nil, codec.ScoreValue(it.Value())), it.Elem()[1:])
		}
		it.Close()
	}
	flush()
	if m.Expire != 0 {
		c.Tx.Log(db, dst, []byte("PEXPIREAT"), dst, itoa(m.Expire))
	}
}
