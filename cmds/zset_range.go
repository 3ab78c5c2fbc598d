package cmds

import (
	"math"
	"math/rand/v2"
	"slices"
	"strconv"

	"shardis/codec"
	"shardis/datatype"
	"shardis/pubsub"
)

// Range, count, remove-range, pop, random and scan commands of the sorted-set family.

// How a range is given: datatype.ZRangeBy, and zsByAuto for ZRANGE before its options are
// read.
const (
	zsByAuto  = 0
	zsByRank  = int(datatype.ZByRank)
	zsByScore = int(datatype.ZByScore)
	zsByLex   = int(datatype.ZByLex)
)

// zsetParseLex parses a lex range item as Redis's zslParseLexRangeItem.
func zsetParseLex(b []byte) (datatype.ZLexBound, bool) {
	if len(b) == 0 {
		return datatype.ZLexBound{}, false
	}
	switch b[0] {
	case '+', '-':
		if len(b) > 1 && b[1] != 0 { // read as a C string: "+\0x" is "+"
			return datatype.ZLexBound{}, false
		}
		inf := int8(1)
		if b[0] == '-' {
			inf = -1
		}
		return datatype.ZLexBound{Inf: inf, Ex: true}, true
	case '(':
		return datatype.ZLexBound{Val: b[1:], Ex: true}, true
	case '[':
		return datatype.ZLexBound{Val: b[1:]}, true
	}
	return datatype.ZLexBound{}, false
}

// zsetRange is a parsed range of the ZRANGE family: the range (by is its kind, 0 while
// ZRANGE's options are read) and WITHSCORES.
type zsetRange struct {
	datatype.ZRange
	by         int
	withScores bool
}

// newZsetRange returns a range of kind by with no LIMIT.
func newZsetRange(by int) zsetRange {
	return zsetRange{ZRange: datatype.ZRange{By: datatype.ZRangeBy(by), Limit: -1}, by: by}
}

// parseScoreRange and parseLexRange read min and max, replying Redis's error.
func (r *zsetRange) parseScoreRange(c *Ctx, min, max []byte) bool {
	var ok1, ok2 bool
	r.Min, r.MinEx, ok1 = zsetParseBound(min)
	r.Max, r.MaxEx, ok2 = zsetParseBound(max)
	if !ok1 || !ok2 {
		c.Error(errZsetMinMax)
		return false
	}
	return true
}

func (r *zsetRange) parseLexRange(c *Ctx, min, max []byte) bool {
	var ok1, ok2 bool
	r.LexMin, ok1 = zsetParseLex(min)
	r.LexMax, ok2 = zsetParseLex(max)
	if !ok1 || !ok2 {
		c.Error(errZsetLexRange)
		return false
	}
	return true
}

// zsetParseRange parses the arguments of ZRANGE and its relatives from the key at argStart
// (ZRANGESTORE: the source). by and rev are fixed by the older commands (preset); ZRANGE and
// ZRANGESTORE take them from BYSCORE, BYLEX and REV. Errors are replied in Redis's order.
func zsetParseRange(c *Ctx, argStart, by int, rev, preset, store bool) (r zsetRange, ok bool) {
	r = newZsetRange(by)
	r.Rev = rev
	revSet := preset
	for j := argStart + 3; j < len(c.Args); j++ {
		a, left := c.Args[j], len(c.Args)-j-1
		switch {
		case !store && EqualFold(a, "withscores"):
			r.withScores = true
		case EqualFold(a, "limit") && left >= 2:
			if r.Offset, ok = c.IntArg(j + 1); !ok {
				return r, false
			}
			if r.Limit, ok = c.IntArg(j + 2); !ok {
				return r, false
			}
			j += 2
		case !revSet && EqualFold(a, "rev"):
			r.Rev, revSet = true, true
		case r.by == zsByAuto && EqualFold(a, "bylex"):
			r.by = zsByLex
		case r.by == zsByAuto && EqualFold(a, "byscore"):
			r.by = zsByScore
		default:
			c.Error(ErrSyntax)
			return r, false
		}
	}
	if r.by == zsByAuto {
		r.by = zsByRank
	}
	r.By = datatype.ZRangeBy(r.by)
	if r.Limit != -1 && r.by == zsByRank {
		c.Error(errZsetLimitRank)
		return r, false
	}
	if r.withScores && r.by == zsByLex {
		c.Error(errZsetScoresLex)
		return r, false
	}
	min, max := c.Args[argStart+1], c.Args[argStart+2]
	if r.Rev && r.by != zsByRank {
		min, max = max, min
	}
	switch r.by {
	case zsByRank:
		if r.Start, ok = c.IntArg(argStart + 1); !ok {
			return r, false
		}
		if r.Stop, ok = c.IntArg(argStart + 2); !ok {
			return r, false
		}
	case zsByScore:
		if !r.parseScoreRange(c, min, max) {
			return r, false
		}
	case zsByLex:
		if !r.parseLexRange(c, min, max) {
			return r, false
		}
	}
	return r, true
}

// ---- ZRANGE and relatives ----

// zrangeGeneric is ZRANGE (by zsByAuto) and the older forms, whose kind and direction are
// fixed (preset). The elements are written as they are walked and the header is inserted
// before them at the end: the length of a score or lex range is only known then (and a rank
// range's header then always matches what was written).
func zrangeGeneric(c *Ctx, by int, rev, preset bool) {
	r, ok := zsetParseRange(c, 1, by, rev, preset, false)
	if !ok {
		return
	}
	z, ok := c.zsetLoad(c.Args[1])
	if !ok {
		return
	}
	if !z.Exists() {
		c.W.ArrayLen(0)
		return
	}
	emit := func(m []byte, s float64) { zsetReplyElem(c, m, s, r.withScores) }
	start := len(c.W.Buf)
	n := z.Walk(&r.ZRange, false, emit)
	if r.withScores && !c.W.RESP3 {
		n *= 2
	}
	zsetDeferLen(c, start, int(n))
}

// zsetWriter builds a new sorted set under dst (a fresh version, so dst may be a source that
// is still being read) and saves or deletes dst at the end. It logs as logCollection would
// (DEL, then ZADD records of at most dumpChunk arguments) while it writes, rather than reading
// the new set back.
type zsetWriter struct {
	c      *Ctx
	z      datatype.ZSet
	args   [][]byte // pending ZADD record
	logged bool     // DEL dst is in the binlog
}

func (c *Ctx) zsetNewWriter(dst []byte) *zsetWriter {
	return &zsetWriter{c: c, z: datatype.NewZSet(c.Tx, c.DB, dst)}
}

func (w *zsetWriter) add(member []byte, score float64) {
	score = zsetNormScore(score)
	w.z.Insert(member, score)
	if w.args == nil {
		w.args = append(make([][]byte, 0, 2+dumpChunk), zsetZADD, w.z.Key())
	}
	w.args = append(w.args, codec.FormatDouble(nil, score), append([]byte(nil), member...))
	if len(w.args) >= 2+dumpChunk {
		w.flush()
	}
}

func (w *zsetWriter) flush() {
	c, key := w.c, w.z.Key()
	if !w.logged {
		c.Tx.Log(c.DB, key, zsetDEL, key)
		w.logged = true
	}
	if len(w.args) > 2 {
		c.Tx.Log(c.DB, key, w.args...)
		w.args = w.args[:2]
	}
}

// finish replaces dst with the new set, or deletes dst when the set is empty, and replies the
// new set's size. event is the command's keyspace event for a set stored.
func (w *zsetWriter) finish(event string) {
	c, key := w.c, w.z.Key()
	if w.z.Len() == 0 {
		c.W.Int(0)
		if w.z.Save() {
			c.Tx.Log(c.DB, key, zsetDEL, key)
			c.notify(pubsub.Generic, "del", key)
		}
		return
	}
	w.z.Save()
	w.flush()
	c.W.Int(w.z.Len())
	c.notify(pubsub.ZSet, event, key) // after the reply, as Redis
}

func zrangestoreCmd(c *Ctx) {
	r, ok := zsetParseRange(c, 2, zsByAuto, false, false, true)
	if !ok {
		return
	}
	z, ok := c.zsetLoadRead(c.Args[2])
	if !ok {
		return
	}
	w := c.zsetNewWriter(c.Args[1])
	z.Walk(&r.ZRange, true, w.add)
	w.finish("zrangestore")
}

// zcountCmd counts a score range. Cost: O(min(M, N-M)) here (datatype.ZSet.CountScore)
// against Redis's O(log N).
func zcountCmd(c *Ctx) {
	r := newZsetRange(zsByScore)
	if !r.parseScoreRange(c, c.Args[2], c.Args[3]) {
		return
	}
	z, ok := c.zsetLoad(c.Args[1])
	if !ok {
		return
	}
	c.W.Int(z.CountScore(&r.ZRange)) // zero for a missing key
}

// zlexcountCmd counts a lex range. Cost: O(M) here against Redis's O(log N).
func zlexcountCmd(c *Ctx) {
	r := newZsetRange(zsByLex)
	if !r.parseLexRange(c, c.Args[2], c.Args[3]) {
		return
	}
	z, ok := c.zsetLoad(c.Args[1])
	if !ok {
		return
	}
	c.W.Int(z.Walk(&r.ZRange, false, func([]byte, float64) {})) // zero for a missing key
}

// zremrangeGeneric is ZREMRANGEBYRANK, ZREMRANGEBYSCORE and ZREMRANGEBYLEX. A range that
// covers the whole set deletes the key (one range delete); otherwise each element goes. The
// command is deterministic given the data, so it is logged as it is.
func zremrangeGeneric(c *Ctx, by int) {
	r := newZsetRange(by)
	switch by {
	case zsByRank:
		var ok bool
		if r.Start, ok = c.IntArg(2); !ok {
			return
		}
		if r.Stop, ok = c.IntArg(3); !ok {
			return
		}
	case zsByScore:
		if !r.parseScoreRange(c, c.Args[2], c.Args[3]) {
			return
		}
	case zsByLex:
		if !r.parseLexRange(c, c.Args[2], c.Args[3]) {
			return
		}
	}
	key := c.Args[1]
	z, ok := c.zsetLoad(key)
	if !ok {
		return
	}
	if !z.Exists() {
		c.W.Int(0)
		return
	}
	var n int64
	event := zsetRemRangeEvents[by]
	if z.CoversAll(&r.ZRange) {
		n = z.Len()
		z.Drop()
		c.notify(pubsub.ZSet, event, key)
		c.notify(pubsub.Generic, "del", key)
	} else {
		n = z.Walk(&r.ZRange, true, func(m []byte, s float64) { z.Remove(m, s) })
		if n > 0 {
			c.notifySaved(z.Save(), key, pubsub.ZSet, event)
		}
	}
	if n > 0 {
		c.Tx.Log(c.DB, key, c.Args...)
	}
	c.W.Int(n)
}

// zsetRemRangeEvents are the keyspace events of ZREMRANGEBY*, by range kind.
var zsetRemRangeEvents = map[int]string{zsByRank: "zremrangebyrank", zsByScore: "zremrangebyscore", zsByLex: "zremrangebylex"}

// ---- pops ----

// zsetPop removes up to count elements from the low (or, with max, the high) end of z and
// writes them, as [member, score] arrays when nested, else flat, under an array header. The
// pop is logged as ZREM of the members, or DEL when the set is emptied (then the elements are
// not deleted one by one: the key's range delete does).
//
// The header is written first, as Redis does, so that the pop's keyspace event lands after it
// in the reply of a connection subscribed to its own events.
func zsetPop(c *Ctx, z *datatype.ZSet, max bool, count int64, nested bool) {
	n := int(min(count, z.Len()))
	if nested {
		c.W.ArrayLen(n)
	} else {
		c.W.ArrayLen(2 * n)
	}
	zsetPopElems(c, z, max, int64(n), nested)
}

// zsetPopElems is zsetPop without the array header: it returns how many elements it wrote.
func zsetPopElems(c *Ctx, z *datatype.ZSet, max bool, count int64, nested bool) int {
	key := z.Key()
	event := "zpopmin"
	if max {
		event = "zpopmax"
	}
	members, dropped := z.Pop(count, max, func(i int, m []byte, s float64) {
		if i == 0 {
			c.notify(pubsub.ZSet, event, key) // before the first element, as Redis
		}
		if nested {
			c.W.ArrayLen(2)
		}
		c.W.Bulk(m)
		c.W.Double(s)
	})
	if dropped {
		c.notify(pubsub.Generic, "del", key)
	}
	zsetLogRemoved(c, key, members, dropped)
	return len(members)
}

// zpopCmd is ZPOPMIN and ZPOPMAX: a flat [member, score, ...] reply, except in RESP3 with a
// count, where each element is a [member, score] array.
func zpopCmd(c *Ctx, max bool) {
	if len(c.Args) > 3 {
		c.Error(ErrSyntax)
		return
	}
	count := int64(-1)
	if len(c.Args) == 3 {
		n, ok := codec.ParseInt(c.Args[2])
		if !ok || n < 0 {
			c.Error(errZsetPositive)
			return
		}
		count = n
	}
	nested := c.W.RESP3 && count != -1
	z, ok := c.zsetLoad(c.Args[1])
	if !ok {
		return
	}
	if !z.Exists() || count == 0 {
		c.W.ArrayLen(0)
		return
	}
	if count == -1 {
		count = 1
	}
	zsetPop(c, &z, max, count, nested)
}

// zmpopCmd is ZMPOP numkeys key [key ...] MIN|MAX [COUNT count]: it pops from the first
// non-empty key; a key of another type met before one is an error.
func zmpopCmd(c *Ctx) {
	keys, max, count, ok := zmpopParse(c, 1)
	if !ok {
		return
	}
	if popped, ok := zmpopFrom(c, keys, max, count); ok && !popped {
		c.W.NullArray()
	}
}

// zmpopParse parses "numkeys key [key ...] MIN|MAX [COUNT count]" starting at
// c.Args[numkeysIdx] (ZMPOP: 1, BZMPOP: 2), replying the error when ok is false.
func zmpopParse(c *Ctx, numkeysIdx int) (keys [][]byte, max bool, count int64, ok bool) {
	numkeys, ok := codec.ParseInt(c.Args[numkeysIdx])
	if !ok || numkeys < 1 {
		c.Error(errZsetNumkeysPos)
		return nil, false, 0, false
	}
	if numkeys > int64(len(c.Args)-numkeysIdx-2) {
		c.Error(ErrSyntax)
		return nil, false, 0, false
	}
	whereIdx := numkeysIdx + 1 + int(numkeys)
	switch {
	case EqualFold(c.Args[whereIdx], "min"):
	case EqualFold(c.Args[whereIdx], "max"):
		max = true
	default:
		c.Error(ErrSyntax)
		return nil, false, 0, false
	}
	count = -1
	for j := whereIdx + 1; j < len(c.Args); j++ {
		if count == -1 && EqualFold(c.Args[j], "count") && j+1 < len(c.Args) {
			j++
			n, ok := codec.ParseInt(c.Args[j])
			if !ok || n < 1 {
				c.Error(errZsetCountPos)
				return nil, false, 0, false
			}
			count = n
			continue
		}
		c.Error(ErrSyntax)
		return nil, false, 0, false
	}
	if count == -1 {
		count = 1
	}
	return c.Args[numkeysIdx+1 : whereIdx], max, count, true
}

// zmpopFrom pops up to count elements from the first non-empty sorted set of keys and replies
// [key, [[member, score], ...]]. popped is false, with nothing written, when every key is
// empty; ok is false after a WRONGTYPE reply.
func zmpopFrom(c *Ctx, keys [][]byte, max bool, count int64) (popped, ok bool) {
	for _, key := range keys {
		z, ok := c.zsetLoad(key)
		if !ok {
			return false, false
		}
		if !z.Exists() {
			continue
		}
		c.W.ArrayLen(2)
		c.W.Bulk(key)
		zsetPop(c, &z, max, count, true)
		return true, true
	}
	return false, true
}

// ---- ZRANDMEMBER ----

// randCheckEvery is how often a reply whose size is a client's count looks at
// Ctx.ReplyOverLimit.
const randCheckEvery = 4096

// zsetRandChunk bounds the random draws of ZRANDMEMBER with a negative count resolved in one
// walk of the set.
const zsetRandChunk = 1 << 20

// zrandmemberCmd streams through the set: a single pick walks from the nearer end to a random
// index; a count picks its indexes first (distinct ones by Floyd's method when positive) and
// collects them in one walk from each end, so memory is O(count), never O(N). Cost: up to
// O(N/2) steps per call (per 2^20 draws for a negative count) against Redis's O(count).
func zrandmemberCmd(c *Ctx) {
	if len(c.Args) >= 3 {
		l, ok := codec.ParseInt(c.Args[2])
		if !ok {
			c.Error(ErrNotInt)
			return
		}
		if l == math.MinInt64 {
			c.Error(errZsetRandRange)
			return
		}
		withScores := false
		if len(c.Args) > 4 || (len(c.Args) == 4 && !EqualFold(c.Args[3], "withscores")) {
			c.Error(ErrSyntax)
			return
		} else if len(c.Args) == 4 {
			withScores = true
			if l < -math.MaxInt64/2 || l > math.MaxInt64/2 {
				c.Error(errZsetRandOverflw)
				return
			}
		}
		zsetRandCount(c, l, withScores)
		return
	}
	z, ok := c.zsetLoad(c.Args[1])
	if !ok {
		return
	}
	if !z.Exists() {
		c.W.Null()
		return
	}
	c.W.Bulk(z.MemberAt(rand.Uint64N(uint64(z.Len()))).Member)
}

func zsetRandCount(c *Ctx, l int64, withScores bool) {
	z, ok := c.zsetLoad(c.Args[1])
	if !ok {
		return
	}
	if !z.Exists() || l == 0 {
		c.W.ArrayLen(0)
		return
	}
	size := uint64(z.Len())
	if l < 0 || l == 1 { // with repetitions, in random order
		count := uint64(-l)
		if l == 1 {
			count = 1
		}
		zsetReplyLen(c, int(count), withScores)
		for count > 0 { // count is the client's: the reply stops at Ctx.ReplyLimit
			k := min(count, zsetRandChunk)
			draws := make([]uint64, k)
			for i := range draws {
				draws[i] = rand.Uint64N(size)
			}
			idx := slices.Clone(draws)
			slices.Sort(idx)
			idx = slices.Compact(idx)
			elems := z.MembersAt(idx)
			for n, d := range draws {
				if n%randCheckEvery == 0 && c.ReplyOverLimit() {
					return
				}
				i, _ := slices.BinarySearch(idx, d)
				zsetReplyElem(c, elems[i].Member, elems[i].Score, withScores)
			}
			count -= k
		}
		return
	}
	count := uint64(l)
	if count >= size { // the whole set
		start, n := len(c.W.Buf), 0
		it := z.Members(nil)
		for ; it.Valid(); it.Next() {
			zsetReplyElem(c, it.Member(), it.Score(), withScores)
			n++
		}
		it.Close()
		if withScores && !c.W.RESP3 {
			n *= 2
		}
		zsetDeferLen(c, start, n)
		return
	}
	// Floyd's sampling of count distinct indexes out of size.
	picked := make(map[uint64]struct{}, count)
	for j := size - count; j < size; j++ {
		t := rand.Uint64N(j + 1)
		if _, dup := picked[t]; dup {
			t = j
		}
		picked[t] = struct{}{}
	}
	idx := make([]uint64, 0, count)
	for i := range picked {
		idx = append(idx, i)
	}
	slices.Sort(idx)
	elems := z.MembersAt(idx)
	rand.Shuffle(len(elems), func(i, j int) { elems[i], elems[j] = elems[j], elems[i] })
	zsetReplyLen(c, len(elems), withScores)
	for _, e := range elems {
		zsetReplyElem(c, e.Member, e.Score, withScores)
	}
}

// ---- ZSCAN ----

// zscanCmd walks the member entries from the position saved under the cursor: COUNT entries
// are visited per call (MATCH filters the visited ones); the next cursor remembers the last
// member, and is 0 when the walk reached the end. Scores are bulk strings as in Redis.
func zscanCmd(c *Ctx) {
	cursor, ok := keysParseCursor(c.Args[2])
	if !ok {
		c.Error(errKeysCursor)
		return
	}
	z, ok := c.zsetLoad(c.Args[1])
	if !ok {
		return
	}
	if !z.Exists() {
		zsetScanReply(c, 0, nil)
		return
	}
	count, match, _, ok := scanOptions(c, 3, false)
	if !ok {
		return
	}
	if cursor == 0 && z.Meta().Compact {
		// Redis returns a listpack whole, in its order (score, then member), with cursor 0.
		it := z.Ordered(false)
		defer it.Close()
		var items [][]byte
		for ; it.Valid(); it.Next() {
			if m := it.Member(); match(m) {
				items = append(items, append([]byte(nil), m...), codec.FormatDouble(nil, it.Score()))
			}
		}
		zsetScanReply(c, 0, items)
		return
	}
	if cursor == 0 && z.Len() <= datatype.ZSetListpackMax {
		count = max(count, datatype.ZSetListpackMax) // as Redis does for its compact small sets
	}
	var lower []byte
	if cursor != 0 {
		// The saved position is zsetScanTag then the last visited member (the tag keeps the
		// empty member apart from "no position").
		if _, pos := c.Keyspace.Cursors.Load(cursor); len(pos) > 0 && pos[0] == zsetScanTag {
			lower = append(append([]byte(nil), pos[1:]...), 0) // just after it
		}
	}
	it := z.Members(lower)
	defer it.Close()
	var items [][]byte
	last := []byte{zsetScanTag}
	for visited := int64(0); visited < count && it.Valid(); it.Next() {
		visited++
		m := it.Member()
		if match(m) {
			items = append(items, append([]byte(nil), m...), codec.FormatDouble(nil, it.Score()))
		}
		last = append(last[:1], m...)
	}
	var next uint64
	if it.Valid() {
		next = c.Keyspace.Cursors.Save(0, last)
	}
	zsetScanReply(c, next, items)
}

// zsetScanTag starts every ZSCAN position saved in the cursor table (the byte that tagged
// member entries when positions were data keys, so saved cursors keep their meaning).
const zsetScanTag = 0

func zsetScanReply(c *Ctx, cursor uint64, items [][]byte) {
	c.W.ArrayLen(2)
	c.W.Bulk(strconv.AppendUint(nil, cursor, 10))
	c.W.ArrayLen(len(items))
	for _, it := range items {
		c.W.Bulk(it)
	}
}
