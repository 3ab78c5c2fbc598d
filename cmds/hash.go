package cmds

import (
	"bytes"
	"math"
	"math/big"
	"math/rand/v2"
	"slices"
	"strconv"

	"shardis/cmdspec"
	"shardis/codec"
	"shardis/datatype"
	"shardis/internal/glob"
	"shardis/pubsub"
	"shardis/shard"
)

// The hash family. A hash is a collection (see collection.go) whose data keys are its fields
// and whose data values are the field values: HGET, HSET and friends are point reads and
// writes, HGETALL/HKEYS/HVALS/HSCAN stream the fields in byte order.

func init() {
	Register(
		&Command{Name: "hset", Arity: -4, Flags: []string{"write", "denyoom", "fast"},
			ACL: []string{"write", "hash", "fast"}, Group: "hash",
			Since: "2.0.0", Summary: "Set the string value of a hash field",
			Complexity: "O(1) for each field/value pair added, so O(N) to add N field/value pairs when the command is called with multiple field/value pairs.",
			Syntax:     "key field value [field value ...]",
			KeySpecs:   []cmdspec.KeySpec{{Flags: cmdspec.RW | cmdspec.Update, Begin: cmdspec.Index(1), Find: cmdspec.Range(0, 1, 0)}},
			Run:        func(c *Ctx) { hashSet(c, false) }},
		&Command{Name: "hmset", Arity: -4, Flags: []string{"write", "denyoom", "fast"},
			ACL: []string{"write", "hash", "fast"}, Group: "hash",
			Since: "2.0.0", Summary: "Set multiple hash fields to multiple values",
			Complexity: "O(N) where N is the number of fields being set.", DocFlags: []string{"deprecated"},
			DeprecatedSince: "4.0.0", ReplacedBy: "`HSET` with multiple field-value pairs",
			Syntax:   "key field value [field value ...]",
			KeySpecs: []cmdspec.KeySpec{{Flags: cmdspec.RW | cmdspec.Update, Begin: cmdspec.Index(1), Find: cmdspec.Range(0, 1, 0)}},
			Run:      func(c *Ctx) { hashSet(c, true) }},
		&Command{Name: "hsetnx", Arity: 4, Flags: []string{"write", "denyoom", "fast"},
			ACL: []string{"write", "hash", "fast"}, Group: "hash",
			Since: "2.0.0", Summary: "Set the value of a hash field, only if the field does not exist",
			Complexity: "O(1)", Syntax: "key field value",
			KeySpecs: []cmdspec.KeySpec{{Flags: cmdspec.RW | cmdspec.Insert, Begin: cmdspec.Index(1), Find: cmdspec.Range(0, 1, 0)}},
			Traits:   TraitTriesView, Run: hsetnx},
		&Command{Name: "hget", Arity: 3, Flags: []string{"readonly", "fast"}, ACL: []string{"read", "hash", "fast"},
			Group: "hash", Since: "2.0.0",
			Summary: "Get the value of a hash field", Complexity: "O(1)", Syntax: "key field",
			KeySpecs: []cmdspec.KeySpec{{Flags: cmdspec.RO | cmdspec.Access, Begin: cmdspec.Index(1), Find: cmdspec.Range(0, 1, 0)}},
			Run:      hget},
		&Command{Name: "hmget", Arity: -3, Flags: []string{"readonly", "fast"}, ACL: []string{"read", "hash", "fast"},
			Group: "hash", Since: "2.0.0",
			Summary:    "Get the values of all the given hash fields",
			Complexity: "O(N) where N is the number of fields being requested.",
			Syntax:     "key field [field ...]",
			KeySpecs:   []cmdspec.KeySpec{{Flags: cmdspec.RO | cmdspec.Access, Begin: cmdspec.Index(1), Find: cmdspec.Range(0, 1, 0)}},
			Run:        hmget},
		&Command{Name: "hdel", Arity: -3, Flags: []string{"write", "fast"}, ACL: []string{"write", "hash", "fast"},
			Group: "hash", Since: "2.0.0",
			Summary:    "Delete one or more hash fields",
			Complexity: "O(N) where N is the number of fields to be removed.",
			Syntax:     "key field [field ...]",
			KeySpecs:   []cmdspec.KeySpec{{Flags: cmdspec.RW | cmdspec.Delete, Begin: cmdspec.Index(1), Find: cmdspec.Range(0, 1, 0)}},
			Traits:     TraitTriesView, Run: hdel},
		&Command{Name: "hlen", Arity: 2, Flags: []string{"readonly", "fast"}, ACL: []string{"read", "hash", "fast"},
			Group: "hash", Since: "2.0.0",
			Summary: "Get the number of fields in a hash", Complexity: "O(1)", Syntax: "key",
			KeySpecs: []cmdspec.KeySpec{{Flags: cmdspec.RO, Begin: cmdspec.Index(1), Find: cmdspec.Range(0, 1, 0)}},
			Run:      hlen},
		&Command{Name: "hstrlen", Arity: 3, Flags: []string{"readonly", "fast"}, ACL: []string{"read", "hash", "fast"},
			Group: "hash", Since: "3.2.0",
			Summary: "Get the length of the value of a hash field", Complexity: "O(1)", Syntax: "key field",
			KeySpecs: []cmdspec.KeySpec{{Flags: cmdspec.RO, Begin: cmdspec.Index(1), Find: cmdspec.Range(0, 1, 0)}},
			Run:      hstrlen},
		&Command{Name: "hexists", Arity: 3, Flags: []string{"readonly", "fast"}, ACL: []string{"read", "hash", "fast"},
			Group: "hash", Since: "2.0.0",
			Summary: "Determine if a hash field exists", Complexity: "O(1)", Syntax: "key field",
			KeySpecs: []cmdspec.KeySpec{{Flags: cmdspec.RO, Begin: cmdspec.Index(1), Find: cmdspec.Range(0, 1, 0)}},
			Run:      hexists},
		&Command{Name: "hkeys", Arity: 2, Flags: []string{"readonly"}, ACL: []string{"read", "hash", "slow"},
			Group: "hash", Since: "2.0.0",
			Summary: "Get all the fields in a hash", Complexity: "O(N) where N is the size of the hash.",
			Syntax:   "key",
			KeySpecs: []cmdspec.KeySpec{{Flags: cmdspec.RO | cmdspec.Access, Begin: cmdspec.Index(1), Find: cmdspec.Range(0, 1, 0)}},
			Tips:     []string{"nondeterministic_output_order"},
			Run:      func(c *Ctx) { hashGetAll(c, true, false) }},
		&Command{Name: "hvals", Arity: 2, Flags: []string{"readonly"}, ACL: []string{"read", "hash", "slow"},
			Group: "hash", Since: "2.0.0",
			Summary: "Get all the values in a hash", Complexity: "O(N) where N is the size of the hash.",
			Syntax:   "key",
			KeySpecs: []cmdspec.KeySpec{{Flags: cmdspec.RO | cmdspec.Access, Begin: cmdspec.Index(1), Find: cmdspec.Range(0, 1, 0)}},
			Tips:     []string{"nondeterministic_output_order"},
			Run:      func(c *Ctx) { hashGetAll(c, false, true) }},
		&Command{Name: "hgetall", Arity: 2, Flags: []string{"readonly"}, ACL: []string{"read", "hash", "slow"},
			Group: "hash", Since: "2.0.0",
			Summary:    "Get all the fields and values in a hash",
			Complexity: "O(N) where N is the size of the hash.", Syntax: "key",
			KeySpecs: []cmdspec.KeySpec{{Flags: cmdspec.RO | cmdspec.Access, Begin: cmdspec.Index(1), Find: cmdspec.Range(0, 1, 0)}},
			Tips:     []string{"nondeterministic_output_order"}, Run: func(c *Ctx) { hashGetAll(c, true, true) }},
		&Command{Name: "hincrby", Arity: 4, Flags: []string{"write", "denyoom", "fast"},
			ACL: []string{"write", "hash", "fast"}, Group: "hash",
			Since: "2.0.0", Summary: "Increment the integer value of a hash field by the given number",
			Complexity: "O(1)", Syntax: "key field increment",
			KeySpecs: []cmdspec.KeySpec{{Flags: cmdspec.RW | cmdspec.Access | cmdspec.Update, Begin: cmdspec.Index(1), Find: cmdspec.Range(0, 1, 0)}},
			Run:      hincrby},
		&Command{Name: "hincrbyfloat", Arity: 4, Flags: []string{"write", "denyoom", "fast"},
			ACL: []string{"write", "hash", "fast"}, Group: "hash",
			Since: "2.6.0", Summary: "Increment the float value of a hash field by the given amount",
			Complexity: "O(1)", Syntax: "key field increment",
			KeySpecs: []cmdspec.KeySpec{{Flags: cmdspec.RW | cmdspec.Access | cmdspec.Update, Begin: cmdspec.Index(1), Find: cmdspec.Range(0, 1, 0)}},
			Run:      hincrbyfloat},
		&Command{Name: "hscan", Arity: -3, Flags: []string{"readonly"}, ACL: []string{"read", "hash", "slow"},
			Group: "hash", Since: "2.8.0",
			Summary:    "Incrementally iterate hash fields and associated values",
			Complexity: "O(1) for every call. O(N) for a complete iteration, including enough command calls for the cursor to return back to 0. N is the number of elements inside the collection..",
			Syntax:     "key cursor [MATCH pattern] [COUNT count]",
			KeySpecs:   []cmdspec.KeySpec{{Flags: cmdspec.RO | cmdspec.Access, Begin: cmdspec.Index(1), Find: cmdspec.Range(0, 1, 0)}},
			Tips:       []string{"nondeterministic_output"}, Run: hscan},
		&Command{Name: "hrandfield", Arity: -2, Flags: []string{"readonly"}, ACL: []string{"read", "hash", "slow"},
			Group: "hash", Since: "6.2.0",
			Summary:    "Get one or multiple random fields from a hash",
			Complexity: "O(N) where N is the number of fields returned", Syntax: "key [count [WITHVALUES]]",
			KeySpecs: []cmdspec.KeySpec{{Flags: cmdspec.RO | cmdspec.Access, Begin: cmdspec.Index(1), Find: cmdspec.Range(0, 1, 0)}},
			Tips:     []string{"nondeterministic_output"}, Run: hrandfield},
	)
}

// Binlog command names of the hash family.
var (
	hashHSET = []byte("HSET")
	hashHDEL = []byte("HDEL")
)

const (
	errHashNotInt     = "ERR hash value is not an integer"
	errHashNotFloat   = "ERR hash value is not a float"
	errHashIncrNaN    = "ERR value is NaN or Infinity"
	errHashOutOfRange = "ERR value is out of range"
)

// hashOpen opens the hash at key; ok is false after the WRONGTYPE reply.
func hashOpen(c *Ctx, key []byte) (h datatype.Hash, ok bool) {
	h, err := datatype.LookupHash(c.Tx, c.DB, key)
	if err != nil {
		c.typeError(err)
		return h, false
	}
	return h, true
}

// hashSet is HSET (replies the number of new fields) and HMSET (replies OK). Both are logged
// as HSET, which a replay applies the same way.
func hashSet(c *Ctx, hmset bool) {
	if len(c.Args)%2 == 1 {
		name := "hset"
		if hmset {
			name = "hmset"
		}
		c.Error("ERR wrong number of arguments for '" + name + "' command")
		return
	}
	key := c.Args[1]
	h, ok := hashOpen(c, key)
	if !ok {
		return
	}
	var added int64
	for j := 2; j < len(c.Args); j += 2 {
		if h.Set(c.Args[j], c.Args[j+1]) {
			added++
		}
	}
	h.Save()
	rec := make([][]byte, len(c.Args))
	copy(rec, c.Args)
	rec[0] = hashHSET
	c.Tx.LogItems(c.DB, key, rec...)
	if hmset {
		c.W.OK()
	} else {
		c.W.Int(added)
	}
	c.notify(pubsub.Hash, "hset", key) // after the reply, as Redis
}

func hsetnx(c *Ctx) {
	key, field, val := c.Args[1], c.Args[2], c.Args[3]
	h, ok := hashOpen(c, key)
	if !ok {
		return
	}
	if !h.SetNX(field, val) {
		c.W.Int(0)
		return
	}
	h.Save()
	c.Tx.Log(c.DB, key, hashHSET, key, field, val)
	c.W.Int(1)
	c.notify(pubsub.Hash, "hset", key)
}

// hashGet reads one field of the hash at key. ok is false after a WRONGTYPE reply.
func hashGet(c *Ctx, key, field []byte) (val []byte, found, ok bool) {
	h, ok := hashOpen(c, key)
	if !ok {
		return nil, false, false
	}
	val, found = h.Get(field)
	return val, found, true
}

func hget(c *Ctx) {
	val, found, ok := hashGet(c, c.Args[1], c.Args[2])
	switch {
	case !ok:
	case !found:
		c.W.Null()
	default:
		c.W.Bulk(val)
	}
}

func hmget(c *Ctx) {
	h, ok := hashOpen(c, c.Args[1])
	if !ok {
		return
	}
	c.W.ArrayLen(len(c.Args) - 2)
	for _, field := range c.Args[2:] {
		if val, found := h.Get(field); found {
			c.W.Bulk(val)
		} else {
			c.W.Null()
		}
	}
}

func hdel(c *Ctx) {
	key := c.Args[1]
	h, ok := hashOpen(c, key)
	if !ok {
		return
	}
	if !h.Exists() {
		c.W.Int(0)
		return
	}
	var deleted int64
	for _, field := range c.Args[2:] {
		if h.Delete(field) {
			deleted++
		}
	}
	if deleted > 0 {
		c.notifySaved(h.Save(), key, pubsub.Hash, "hdel")
		rec := make([][]byte, len(c.Args))
		copy(rec, c.Args)
		rec[0] = hashHDEL
		c.Tx.Log(c.DB, key, rec...)
	}
	c.W.Int(deleted)
}

func hlen(c *Ctx) {
	h, ok := hashOpen(c, c.Args[1])
	if ok {
		c.W.Int(h.Len()) // zero for a missing key
	}
}

func hstrlen(c *Ctx) {
	val, _, ok := hashGet(c, c.Args[1], c.Args[2])
	if ok {
		c.W.Int(int64(len(val)))
	}
}

func hexists(c *Ctx) {
	_, found, ok := hashGet(c, c.Args[1], c.Args[2])
	if !ok {
		return
	}
	if found {
		c.W.Int(1)
	} else {
		c.W.Int(0)
	}
}

// hashEmitters write one field of HVALS (index 2), HKEYS (1) or HGETALL (3) to a stream.
var hashEmitters = [4]shard.EmitFunc{
	1: func(w *codec.Writer, field, _ []byte) { w.Bulk(field) },
	2: func(w *codec.Writer, _, val []byte) { w.Bulk(val) },
	3: func(w *codec.Writer, field, val []byte) { w.Bulk(field); w.Bulk(val) },
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// hashGetAll is HKEYS, HVALS and HGETALL: the length comes from the meta, so the reply is
// written while the fields stream by.
func hashGetAll(c *Ctx, fields, values bool) {
	h, ok := hashOpen(c, c.Args[1])
	if !ok {
		return
	}
	n := int(h.Len())
	if fields && values {
		c.W.MapLen(n)
	} else {
		c.W.ArrayLen(n)
	}
	if !h.Exists() {
		return
	}
	if c.streamable(n) {
		c.sendStream(h.Stream(hashEmitters[btoi(fields)|btoi(values)<<1]))
		return
	}
	it := h.Iter(nil)
	defer it.Close()
	for ; it.Valid(); it.Next() {
		if fields {
			c.W.Bulk(it.Field())
		}
		if values {
			c.W.Bulk(it.Value())
		}
	}
}

func hincrby(c *Ctx) {
	key, field := c.Args[1], c.Args[2]
	incr, ok := c.IntArg(3)
	if !ok {
		return
	}
	h, ok := hashOpen(c, key)
	if !ok {
		return
	}
	v, val, err := h.IncrBy(field, incr)
	switch err {
	case nil:
	case datatype.ErrHashNotInteger:
		c.Error(errHashNotInt)
		return
	case datatype.ErrOverflow:
		c.Error(errOverflow)
		return
	default:
		c.typeError(err)
		return
	}
	h.Save()
	c.Tx.Log(c.DB, key, hashHSET, key, field, val)
	c.W.Int(v)
	c.notify(pubsub.Hash, "hincrby", key)
}

// hincrbyfloat computes in long double exactly as INCRBYFLOAT does (strings.go's parser and
// formatter) and is logged as HSET of the result, so replicas never redo float arithmetic.
func hincrbyfloat(c *Ctx) {
	key, field := c.Args[1], c.Args[2]
	incr, incrInf, ok := strParseLongDouble(c.Args[3])
	if !ok {
		c.Error(errNotFloat)
		return
	}
	if incrInf {
		c.Error(errHashIncrNaN)
		return
	}
	h, ok := hashOpen(c, key)
	if !ok {
		return
	}
	raw, found := h.Get(field)
	cur := new(big.Float).SetPrec(strLDPrec)
	if found {
		var curInf bool
		if cur, curInf, ok = strParseLongDouble(raw); !ok {
			c.Error(errHashNotFloat)
			return
		}
		if curInf {
			c.Error(errStrFloatNaN) // inf + any finite increment stays infinite
			return
		}
	}
	sum := new(big.Float).SetPrec(strLDPrec).Add(cur, incr)
	if sum.MantExp(nil) > strLDMaxExp {
		c.Error(errStrFloatNaN)
		return
	}
	val := strFormatLongDouble(sum)
	h.Set(field, val)
	h.Save()
	c.Tx.Log(c.DB, key, hashHSET, key, field, val)
	c.W.Bulk(val)
	c.notify(pubsub.Hash, "hincrbyfloat", key)
}

// hscan walks the fields in byte order from the one after the cursor's saved position. The
// cursor names the last field visited (Cursors), so fields added or removed between calls
// never make the walk repeat or skip the others. The saved position carries a leading byte so
// that the empty field is told apart from a forgotten cursor (which restarts the walk).
func hscan(c *Ctx) {
	cursor, ok := keysParseCursor(c.Args[2])
	if !ok {
		c.Error(errKeysCursor)
		return
	}
	h, ok := hashOpen(c, c.Args[1])
	if !ok {
		return
	}
	if !h.Exists() {
		hashScanReply(c, 0, nil)
		return
	}
	count := int64(10)
	var pattern []byte
	for i := 3; i < len(c.Args); i += 2 {
		opt := strCString(c.Args[i])
		more := i+1 < len(c.Args)
		switch {
		case EqualFold(opt, "count") && more:
			n, ok := c.IntArg(i + 1)
			if !ok {
				return
			}
			if n < 1 {
				c.Error(ErrSyntax)
				return
			}
			count = n
		case EqualFold(opt, "match") && more:
			pattern = c.Args[i+1]
			if string(pattern) == "*" {
				pattern = nil // always matches, as Redis short-cuts it
			}
		default:
			c.Error(ErrSyntax)
			return
		}
	}
	var lower []byte
	if cursor != 0 {
		if _, pos := c.Keyspace.Cursors.Load(cursor); len(pos) > 0 {
			lower = append(append([]byte(nil), pos[1:]...), 0) // the first field after pos
		}
	}
	it := h.Iter(lower)
	defer it.Close()
	var out [][]byte
	var last []byte
	for visited := int64(0); it.Valid() && visited < count; it.Next() {
		visited++
		last = append(last[:0], it.Field()...)
		if pattern == nil || glob.Match(pattern, last, false) {
			out = append(out, bytes.Clone(last), bytes.Clone(it.Value()))
		}
	}
	var next uint64
	if it.Valid() {
		next = c.Keyspace.Cursors.Save(0, append([]byte{'f'}, last...))
	}
	hashScanReply(c, next, out)
}

func hashScanReply(c *Ctx, cursor uint64, items [][]byte) {
	c.W.ArrayLen(2)
	c.W.Bulk(strconv.AppendUint(nil, cursor, 10))
	c.W.ArrayLen(len(items))
	for _, b := range items {
		c.W.Bulk(b)
	}
}

// hrandfield streams through the hash once instead of loading it: positions are drawn first
// (uniformly, distinct for a positive count), then the walk picks them up. Cost: O(N) for
// the hash size N even when few fields are asked for, where Redis is O(count).
func hrandfield(c *Ctx) {
	key := c.Args[1]
	if len(c.Args) == 2 {
		h, ok := hashOpen(c, key)
		if !ok {
			return
		}
		if !h.Exists() {
			c.W.Null()
			return
		}
		found := false
		h.At([]uint64{rand.Uint64N(uint64(h.Len()))}, func(_ int, field, _ []byte) {
			c.W.Bulk(field)
			found = true
		})
		if !found {
			c.W.Null() // Count disagreed with the data: never expected
		}
		return
	}
	l, ok := codec.ParseInt(c.Args[2])
	if !ok {
		c.Error(ErrNotInt)
		return
	}
	if l == math.MinInt64 {
		c.Error("ERR value is out of range, value must between -9223372036854775807 and 9223372036854775807")
		return
	}
	withValues := false
	if len(c.Args) > 4 || (len(c.Args) == 4 && !EqualFold(strCString(c.Args[3]), "withvalues")) {
		c.Error(ErrSyntax)
		return
	}
	if len(c.Args) == 4 {
		withValues = true
		if l < -math.MaxInt64/2 || l > math.MaxInt64/2 {
			c.Error(errHashOutOfRange)
			return
		}
	}
	h, ok := hashOpen(c, key)
	if !ok {
		return
	}
	if !h.Exists() || l == 0 {
		c.W.ArrayLen(0)
		return
	}
	size := uint64(h.Len())
	if l < 0 {
		hashRandomRepeat(c, &h, uint64(-l), withValues)
		return
	}
	if l == 1 {
		hashRandomRepeat(c, &h, 1, withValues)
		return
	}
	count := uint64(l)
	if count < size {
		hashRandReplyLen(c, int(count), withValues)
		h.At(datatype.SamplePositions(size, count), func(_ int, field, val []byte) {
			hashRandItem(c, field, val, withValues)
		})
		return
	}
	hashRandReplyLen(c, int(size), withValues)
	it := h.Iter(nil)
	defer it.Close()
	for ; it.Valid(); it.Next() {
		hashRandItem(c, it.Field(), it.Value(), withValues)
	}
}

// hashRandomRepeat replies n fields drawn with repetition, in random order (HRANDFIELD with a
// negative count, or a count of 1). n is the client's number, not the hash's size: when it
// reaches the size the hash is read once and drawn from, otherwise the walk collects only the
// fields drawn; either way what is held is bounded by the hash, and the reply stops where it
// would get the client dropped (Ctx.ReplyOverLimit).
func hashRandomRepeat(c *Ctx, h *datatype.Hash, n uint64, withValues bool) {
	type fv struct{ f, v []byte }
	size := uint64(h.Len())
	if n >= size {
		all := make([]fv, 0, size)
		it := h.Iter(nil)
		for ; it.Valid(); it.Next() {
			all = append(all, fv{bytes.Clone(it.Field()), bytes.Clone(it.Value())})
		}
		it.Close()
		hashRandReplyLen(c, int(n), withValues)
		for i := range n {
			if i%randCheckEvery == 0 && c.ReplyOverLimit() {
				return
			}
			e := all[rand.IntN(len(all))]
			hashRandItem(c, e.f, e.v, withValues)
		}
		return
	}
	draws := make([]uint64, n)
	for i := range draws {
		draws[i] = rand.Uint64N(size)
	}
	wanted := slices.Clone(draws)
	slices.Sort(wanted)
	wanted = slices.Compact(wanted)
	got := make(map[uint64]fv, len(wanted))
	h.At(wanted, func(i int, field, val []byte) {
		got[wanted[i]] = fv{bytes.Clone(field), bytes.Clone(val)}
	})
	hashRandReplyLen(c, int(n), withValues)
	for _, d := range draws {
		e := got[d]
		hashRandItem(c, e.f, e.v, withValues)
	}
}

// hashRandReplyLen writes the header of an HRANDFIELD reply of n fields: WITHVALUES is a flat
// array in RESP2 and an array of pairs in RESP3.
func hashRandReplyLen(c *Ctx, n int, withValues bool) {
	if withValues && !c.W.RESP3 {
		c.W.ArrayLen(2 * n)
	} else {
		c.W.ArrayLen(n)
	}
}

func hashRandItem(c *Ctx, field, val []byte, withValues bool) {
	if withValues && c.W.RESP3 {
		c.W.ArrayLen(2)
	}
	c.W.Bulk(field)
	if withValues {
		c.W.Bulk(val)
	}
}
