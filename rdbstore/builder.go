package rdbstore

import (
	"bytes"
	"errors"
	"fmt"

	"shardis/codec"
	"shardis/datatype"
	"shardis/rdb"
	"shardis/shard"
)

// ErrDBRange: a file selects a database past the server's `databases`.
var ErrDBRange = errors.New("rdbstore: database index out of range")

// flushBytes is how much a Builder writes before it asks its Flush to commit (a file load).
const flushBytes = 4 << 20

// Builder is an rdb.Handler that builds the keys it receives into a transaction, through the
// type layer (datatype), as the commands that make them would. RESTORE uses one for one key
// (Name, DB and ExpireAt given, nothing committed until the command ends); a file load for
// many, with Flush committing every few megabytes: a collection's elements committed before
// its meta are invisible until EndKey saves the meta, so a big one is written in pieces and
// seen only whole.
type Builder struct {
	Tx        *shard.Tx
	Databases int // databases a file may select (SelectDB past it: ErrDBRange)
	// Payload mode (RESTORE): every key goes to Name in DB with ExpireAt (0: none), whatever
	// the format says.
	Payload  bool
	Name     []byte
	DB       int
	ExpireAt int64
	// Idle and Freq, when not -1, override the format's (RESTORE's IDLETIME and FREQ).
	Idle int64
	Freq int
	// SkipExpired drops keys whose expire time has passed (loading a file, as Redis's master).
	SkipExpired bool
	Now         int64
	// Flush, when set, commits what was written so far; the Builder calls it between
	// elements every flushBytes.
	Flush func() error
	// OnAux, when set, receives the aux fields of a file.
	OnAux func(key, value []byte)
	// Loaded counts the keys built.
	Loaded int64

	written int
	db      int
	key     rdb.Key
	name    []byte
	skip    bool
	n       int64
	hash    datatype.Hash
	set     datatype.Set
	list    datatype.List
	zset    datatype.ZSet
	stream  datatype.Stream
	hasMeta bool
	group   *datatype.Group
	pending map[codec.StreamID]datatype.NACK
	cons    []byte
}

var _ rdb.Handler = (*Builder)(nil)

// bad is the error of a value the format allows but Redis refuses to load (an empty
// collection, a duplicate member, a stream's inconsistent parts).
func bad(what string) error { return fmt.Errorf("%w: %s", rdb.ErrBadFormat, what) }

// Aux hands a file's aux field to OnAux.
func (b *Builder) Aux(key, value []byte) error {
	if b.OnAux != nil {
		b.OnAux(key, value)
	}
	return nil
}

// ResizeDB is a hint the Builder does not need.
func (b *Builder) ResizeDB(keys, exp uint64) error { return nil }

// Function keeps a file's FUNCTION library where FUNCTION LOAD keeps it (shard 0's state
// 's' 'f' · name; the engine loads it at the first function command). A payload has none.
func (b *Builder) Function(code []byte) error {
	if b.Payload {
		return bad("function in a payload")
	}
	name := libraryName(code)
	if name == nil {
		return bad("function library without a name")
	}
	b.Tx.PutState(0, append([]byte{'f'}, name...), code)
	return b.wrote(len(code))
}

// libraryName reads the name from a library's shebang line ("#!lua name=mylib ...").
func libraryName(code []byte) []byte {
	line, _, _ := bytes.Cut(code, []byte{'\n'})
	if !bytes.HasPrefix(line, []byte("#!")) {
		return nil
	}
	for _, f := range bytes.Fields(line[2:]) {
		if v, ok := bytes.CutPrefix(f, []byte("name=")); ok && len(v) > 0 {
			return v
		}
	}
	return nil
}

func (b *Builder) SelectDB(db int) error {
	if !b.Payload && (db < 0 || db >= b.Databases) {
		return fmt.Errorf("%w: the file selects database %d, the server has %d (databases)", ErrDBRange, db, b.Databases)
	}
	return nil
}

func (b *Builder) BeginKey(k rdb.Key) error {
	b.key, b.n, b.hasMeta, b.group, b.pending, b.cons = k, 0, false, nil, nil, nil
	if b.Payload {
		b.db, b.name, b.key.ExpireAt = b.DB, b.Name, b.ExpireAt
	} else {
		if k.DB < 0 || k.DB >= b.Databases {
			return fmt.Errorf("%w: key in database %d, the server has %d (databases)", ErrDBRange, k.DB, b.Databases)
		}
		b.db, b.name = k.DB, bytes.Clone(k.Name)
	}
	if b.Idle != -1 || b.Freq != -1 {
		b.key.Idle, b.key.Freq = b.Idle, b.Freq
	}
	b.skip = b.SkipExpired && b.key.ExpireAt != 0 && b.key.ExpireAt <= b.Now
	if b.skip {
		return nil
	}
	tx, db, name, none := b.Tx, b.db, b.name, codec.Meta{}
	switch k.Kind {
	case rdb.KindString:
	case rdb.KindList:
		b.list = datatype.NewList(tx, db, name)
	case rdb.KindSet:
		b.set = datatype.NewSet(tx, db, name)
	case rdb.KindHash:
		b.hash, _ = datatype.HashFromMeta(tx, db, name, none, false)
	case rdb.KindZSet:
		b.zset = datatype.NewZSet(tx, db, name)
	case rdb.KindStream:
		b.stream, _ = datatype.StreamFromMeta(tx, db, name, none, false)
		b.stream.Create()
	default:
		return bad("unknown kind")
	}
	return nil
}

// wrote counts bytes written and commits through Flush every flushBytes.
func (b *Builder) wrote(n int) error {
	b.written += n
	if b.Flush == nil || b.written < flushBytes {
		return nil
	}
	b.written = 0
	return b.Flush()
}

func (b *Builder) String(v []byte) error {
	if b.skip {
		return nil
	}
	datatype.SetString(b.Tx, b.db, b.name, v, b.key.ExpireAt)
	b.n = 1
	return nil
}

func (b *Builder) ListElement(e []byte) error {
	if b.skip {
		return nil
	}
	b.list.Push(e, false)
	b.n++
	return b.wrote(len(e) + 16)
}

func (b *Builder) SetMember(m []byte) error {
	if b.skip {
		return nil
	}
	if !b.set.Add(m) {
		return bad("duplicate set member")
	}
	b.n++
	return b.wrote(len(m) + 16)
}

func (b *Builder) HashField(f, v []byte) error {
	if b.skip {
		return nil
	}
	if !b.hash.Set(f, v) {
		return bad("duplicate hash field")
	}
	b.n++
	return b.wrote(len(f) + len(v) + 16)
}

func (b *Builder) ZSetMember(m []byte, score float64) error {
	if b.skip {
		return nil
	}
	if score != score {
		return bad("NaN score")
	}
	if _, dup := b.zset.Score(m); dup {
		return bad("duplicate sorted set member")
	}
	b.zset.Insert(m, score)
	b.n++
	return b.wrote(2*len(m) + 40)
}

func cid(id rdb.StreamID) codec.StreamID { return codec.StreamID{Ms: id.Ms, Seq: id.Seq} }

func (b *Builder) StreamEntry(id rdb.StreamID, fv [][]byte) error {
	if b.skip {
		return nil
	}
	if len(fv) == 0 || len(fv)%2 != 0 {
		return bad("stream entry fields")
	}
	if err := b.stream.Add(cid(id), fv); err != nil {
		return bad("stream entry: " + err.Error())
	}
	n := 32
	for _, x := range fv {
		n += len(x)
	}
	b.n++
	return b.wrote(n)
}

func (b *Builder) StreamMeta(m rdb.StreamMeta) error {
	if b.skip {
		return nil
	}
	if m.Length != uint64(b.n) {
		return bad("stream length")
	}
	info := b.stream.Info()
	if cid(m.LastID).Compare(info.LastID) < 0 {
		return bad("stream last id below its entries")
	}
	info.LastID = cid(m.LastID)
	info.MaxDeletedID = cid(m.MaxDeletedID)
	if m.EntriesAdded != 0 || m.Length == 0 {
		info.EntriesAdded = m.EntriesAdded
	}
	b.hasMeta = true
	return nil
}

// endGroup saves the group being read; every pending entry must have found its consumer.
func (b *Builder) endGroup() error {
	if b.group == nil {
		return nil
	}
	if len(b.pending) > 0 {
		return bad("stream pending entry without a consumer")
	}
	b.group.Save()
	b.group, b.cons = nil, nil
	return nil
}

func (b *Builder) StreamGroup(g rdb.StreamGroup) error {
	if b.skip {
		return nil
	}
	if err := b.endGroup(); err != nil {
		return err
	}
	grp, ok := b.stream.CreateGroup(g.Name, cid(g.LastID), g.EntriesRead)
	if !ok {
		return bad("duplicate stream group")
	}
	b.group, b.pending = grp, make(map[codec.StreamID]datatype.NACK)
	return b.wrote(len(g.Name) + 64)
}

func (b *Builder) StreamGroupPending(p rdb.StreamPending) error {
	if b.skip {
		return nil
	}
	if b.group == nil {
		return bad("stream pending entry outside a group")
	}
	if _, dup := b.pending[cid(p.ID)]; dup {
		return bad("duplicate stream pending entry")
	}
	b.pending[cid(p.ID)] = datatype.NACK{DeliveryTime: p.DeliveryTime, DeliveryCount: p.DeliveryCount}
	return nil
}

func (b *Builder) StreamConsumer(c rdb.StreamConsumer) error {
	if b.skip {
		return nil
	}
	if b.group == nil {
		return bad("stream consumer outside a group")
	}
	if _, created := b.group.CreateConsumer(c.Name, c.SeenTime); !created {
		return bad("duplicate stream consumer")
	}
	b.cons = bytes.Clone(c.Name)
	return b.wrote(len(c.Name) + 32)
}

func (b *Builder) StreamConsumerPending(id rdb.StreamID) error {
	if b.skip {
		return nil
	}
	if b.cons == nil {
		return bad("stream consumer pending id outside a consumer")
	}
	n, ok := b.pending[cid(id)]
	if !ok {
		return bad("stream consumer pending id not in its group")
	}
	delete(b.pending, cid(id))
	n.Consumer = b.cons
	b.group.SetNACK(cid(id), n)
	return b.wrote(len(b.cons) + 80)
}

func (b *Builder) EndKey() error {
	if b.skip {
		return nil
	}
	exp := b.key.ExpireAt
	switch b.key.Kind {
	case rdb.KindString:
		if b.n != 1 {
			return bad("string without a value")
		}
	case rdb.KindList:
		if b.n == 0 {
			return bad("empty list")
		}
		b.list.Meta().Expire = exp
		b.list.Save()
	case rdb.KindSet:
		if b.n == 0 {
			return bad("empty set")
		}
		b.set.Meta().Expire = exp
		b.set.Save()
	case rdb.KindHash:
		if b.n == 0 {
			return bad("empty hash")
		}
		b.hash.Meta().Expire = exp
		b.hash.Save()
	case rdb.KindZSet:
		if b.n == 0 {
			return bad("empty sorted set")
		}
		b.zset.Meta().Expire = exp
		b.zset.Save()
	case rdb.KindStream:
		if err := b.endGroup(); err != nil {
			return err
		}
		if !b.hasMeta {
			return bad("stream without its metadata")
		}
		b.stream.Meta().Expire = exp
		b.stream.Save()
	}
	if err := b.Tx.Err(); err != nil {
		return err
	}
	b.Tx.SetAccess(b.db, b.name, b.key.Idle, b.key.Freq)
	b.Loaded++
	return b.wrote(64)
}
