package cmds

import (
	"bytes"
	"errors"

	"shardis/codec"
	"shardis/datatype"
	"shardis/pubsub"
	"shardis/shard"
)

// Shared plumbing of the collection families (hash.go, list.go, set.go, zset*.go). The
// collections themselves (data keys, counts, metas) are package datatype's: a command opens
// its key with datatype.LookupHash (…Set, …List, …ZSet), answers datatype.ErrWrongType with
// typeError, changes elements through the handle, saves it once, and publishes its events
// with notifySaved. What stays here is what is about replies and the binlog.

// streamAbove is the element count above which a reply that walks a collection is streamed
// (see shard.Stream) instead of built whole: the server then holds a few 64 KiB pieces of it,
// however large the collection. Below it, building the reply at once is cheaper.
const streamAbove = 1024

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

// logStringBytes appends binlog records that rebuild raw string dst (logical db, meta m) after
// a DEL: a SETRANGE of its last byte that gives it its length, then one SETRANGE per stored
// piece (a fragment of a fragmented string), so a sparse 512 MB bitmap logs a few records,
// not its bytes.
func (c *Ctx) logStringBytes(db int, dst []byte, m *codec.Meta) {
	s, _ := datatype.StringFromMeta(c.Tx, db, dst, *m, true)
	n := s.Len()
	if n == 0 {
		return
	}
	c.Tx.Log(db, dst, strSETRANGE, dst, itoa(n-1), []byte{0})
	s.Chunks(0, n, func(at int64, b []byte) bool {
		c.Tx.Log(db, dst, strSETRANGE, dst, itoa(at), b)
		return true
	})
}

// dumpChunk bounds the arguments of one binlog record that rebuilds a collection.
const dumpChunk = 512

// logCollection appends binlog records that rebuild collection dst (logical db) from scratch
// as it is in the transaction now: DEL, then HSET/RPUSH/SADD/ZADD in chunks, then PEXPIREAT.
// RENAME, COPY and MOVE use it for a destination that may live in another shard, so a replica
// (or a replay) rebuilds it without the source.
func (c *Ctx) logCollection(db int, dst []byte, m *codec.Meta) {
	c.Tx.Log(db, dst, keysDEL, dst)
	if m.Type == codec.TypeString && m.Frag {
		c.logStringBytes(db, dst, m)
		if m.Expire != 0 {
			c.Tx.Log(db, dst, []byte("PEXPIREAT"), dst, itoa(m.Expire))
		}
		return
	}
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
	case codec.TypeStream:
		logStream(c, db, dst, m)
		return
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
		l, _ := datatype.ListFromMeta(c.Tx, db, dst, *m, true)
		it := l.Iter(0, false)
		for ; it.Valid(); it.Next() {
			add(it.Value())
		}
		it.Close()
	case codec.TypeZSet:
		z, _ := datatype.ZSetFromMeta(c.Tx, db, dst, *m, true)
		it := z.Members(nil)
		for ; it.Valid(); it.Next() {
			add(codec.FormatDouble(nil, it.Score()), it.Member())
		}
		it.Close()
	}
	flush()
	if m.Expire != 0 {
		c.Tx.Log(db, dst, []byte("PEXPIREAT"), dst, itoa(m.Expire))
	}
}
