package rdbstore

import (
	"errors"

	"shardis/codec"
	"shardis/rdb"
	"shardis/shard"
)

// Dump returns key's DUMP payload (logical db db) as tx holds it; ok is false for a missing key.
func Dump(tx *shard.Tx, db int, key []byte) (payload []byte, ok bool, err error) {
	src, _, ok, err := KeySource(tx, db, key)
	if !ok || err != nil {
		return nil, ok, err
	}
	payload, err = rdb.DumpBytes(src)
	return payload, err == nil, err
}

// RestoreOptions are RESTORE's: the key's expire time (unix ms, 0: none) and its access
// field (Idle seconds or Freq counter, -1 when not given).
type RestoreOptions struct {
	ExpireAt int64
	Idle     int64
	Freq     int
}

// CheckPayload reads a DUMP payload through without writing anything and returns what
// would refuse it: rdb.ErrBadPayload (version, checksum), rdb.ErrBadFormat or another error
// of the reader (RESTORE's "Bad data format"), or a value Redis refuses to load (an empty
// collection, a duplicate member, a stream's inconsistent parts).
func CheckPayload(payload []byte) error { return rdb.ReadPayload(payload, &checker{}) }

// BuildPayload builds key (logical db) from a payload CheckPayload accepted into tx, in place
// of nothing: the caller deleted what the key held (REPLACE) or checked there is none.
func BuildPayload(tx *shard.Tx, db int, key, payload []byte, o RestoreOptions) error {
	b := &Builder{Tx: tx, Payload: true, Name: key, DB: db, ExpireAt: o.ExpireAt, Idle: o.Idle, Freq: o.Freq}
	return rdb.ReadPayload(payload, b)
}

// IsBadPayload reports whether err is a payload's version or checksum being wrong (RESTORE's
// "DUMP payload version or checksum are wrong"); any other error of Restore is "Bad data
// format".
func IsBadPayload(err error) bool { return errors.Is(err, rdb.ErrBadPayload) }

// checker is the Handler of Restore's first pass: it refuses what Builder would, keeping the
// members it must compare (the payload is in memory anyway).
type checker struct {
	kind    rdb.Kind
	n       int64
	seen    map[string]struct{}
	last    rdb.StreamID
	meta    bool
	inGroup bool
	groups  map[string]struct{}
	pending map[rdb.StreamID]struct{}
	cons    map[string]struct{}
	inCons  bool
}

func (c *checker) Aux(key, value []byte) error     { return nil }
func (c *checker) SelectDB(db int) error           { return nil }
func (c *checker) ResizeDB(keys, exp uint64) error { return nil }
func (c *checker) Function(code []byte) error      { return bad("function in a payload") }

func (c *checker) BeginKey(k rdb.Key) error {
	*c = checker{kind: k.Kind, seen: map[string]struct{}{}, groups: map[string]struct{}{}}
	return nil
}

func (c *checker) member(m []byte) error {
	if _, dup := c.seen[string(m)]; dup {
		return bad("duplicate member")
	}
	c.seen[string(m)] = struct{}{}
	c.n++
	return nil
}

func (c *checker) String(v []byte) error       { c.n++; return nil }
func (c *checker) ListElement(e []byte) error  { c.n++; return nil }
func (c *checker) SetMember(m []byte) error    { return c.member(m) }
func (c *checker) HashField(f, v []byte) error { return c.member(f) }
func (c *checker) ZSetMember(m []byte, s float64) error {
	if s != s {
		return bad("NaN score")
	}
	return c.member(m)
}

func (c *checker) StreamEntry(id rdb.StreamID, fv [][]byte) error {
	if len(fv) == 0 || len(fv)%2 != 0 {
		return bad("stream entry fields")
	}
	if c.n > 0 && cidOf(id).Compare(cidOf(c.last)) <= 0 || id == (rdb.StreamID{}) {
		return bad("stream entry ids")
	}
	c.last = id
	c.n++
	return nil
}

func cidOf(id rdb.StreamID) codec.StreamID { return codec.StreamID{Ms: id.Ms, Seq: id.Seq} }

func (c *checker) StreamMeta(m rdb.StreamMeta) error {
	if m.Length != uint64(c.n) || c.n > 0 && cidOf(m.LastID).Compare(cidOf(c.last)) < 0 {
		return bad("stream metadata")
	}
	c.meta = true
	return nil
}

func (c *checker) endGroup() error {
	if c.inGroup && len(c.pending) > 0 {
		return bad("stream pending entry without a consumer")
	}
	return nil
}

func (c *checker) StreamGroup(g rdb.StreamGroup) error {
	if err := c.endGroup(); err != nil {
		return err
	}
	if _, dup := c.groups[string(g.Name)]; dup {
		return bad("duplicate stream group")
	}
	c.groups[string(g.Name)] = struct{}{}
	c.inGroup, c.inCons = true, false
	c.pending, c.cons = map[rdb.StreamID]struct{}{}, map[string]struct{}{}
	return nil
}

func (c *checker) StreamGroupPending(p rdb.StreamPending) error {
	if !c.inGroup {
		return bad("pending entry outside a group")
	}
	if _, dup := c.pending[p.ID]; dup {
		return bad("duplicate pending entry")
	}
	c.pending[p.ID] = struct{}{}
	return nil
}

func (c *checker) StreamConsumer(k rdb.StreamConsumer) error {
	if !c.inGroup {
		return bad("consumer outside a group")
	}
	if _, dup := c.cons[string(k.Name)]; dup {
		return bad("duplicate consumer")
	}
	c.cons[string(k.Name)] = struct{}{}
	c.inCons = true
	return nil
}

func (c *checker) StreamConsumerPending(id rdb.StreamID) error {
	if !c.inCons {
		return bad("consumer pending id outside a consumer")
	}
	if _, ok := c.pending[id]; !ok {
		return bad("consumer pending id not in its group")
	}
	delete(c.pending, id)
	return nil
}

func (c *checker) EndKey() error {
	switch c.kind {
	case rdb.KindString:
		if c.n != 1 {
			return bad("string")
		}
	case rdb.KindStream:
		if err := c.endGroup(); err != nil {
			return err
		}
		if !c.meta {
			return bad("stream without metadata")
		}
	default:
		if c.n == 0 {
			return bad("empty collection")
		}
	}
	return nil
}
