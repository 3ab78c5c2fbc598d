package cmds

import (
	"bytes"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"

	"shardis/codec"
	"shardis/pubsub"
	"shardis/shard"
)

// Range, count, remove-range, pop, random and scan commands of the sorted-set family.

// How a range is given.
const (
	zsByAuto = iota // ZRANGE before its options are read
	zsByRank
	zsByScore
	zsByLex
)

// zsetSmall is the size up to which a set is simply walked where a bigger one is walked from
// two ends at once (ZRANK, ZCOUNT): one iterator costs less than three then.
const zsetSmall = 64

// zsetBufferMax bounds how many elements a rank range near the far end of the set is
// buffered to be walked from that end instead of skipping to it from the near one.
const zsetBufferMax = 4096

// zsetLexBound is one end of a lex range: "-" (inf -1), "+" (inf 1) or a member, exclusive
// with "(", inclusive with "[" ("-" and "+" are exclusive, as in Redis).
type zsetLexBound struct {
	inf int8
	val []byte
	ex  bool
}

// zsetParseLex parses a lex range item as Redis's zslParseLexRangeItem.
func zsetParseLex(b []byte) (zsetLexBound, bool) {
	if len(b) == 0 {
		return zsetLexBound{}, false
	}
	switch b[0] {
	case '+', '-':
		if len(b) > 1 && b[1] != 0 { // read as a C string: "+\0x" is "+"
			return zsetLexBound{}, false
		}
		inf := int8(1)
		if b[0] == '-' {
			inf = -1
		}
		return zsetLexBound{inf: inf, ex: true}, true
	case '(':
		return zsetLexBound{val: b[1:], ex: true}, true
	case '[':
		return zsetLexBound{val: b[1:]}, true
	}
	return zsetLexBound{}, false
}

// cmp compares member m with bound b.
func (b *zsetLexBound) cmp(m []byte) int {
	if b.inf != 0 {
		return -int(b.inf)
	}
	return bytes.Compare(m, b.val)
}

// zsetLexEmpty reports whether [min, max] can hold nothing (Redis's sdscmplex test).
func zsetLexEmpty(min, max *zsetLexBound) bool {
	var c int
	switch {
	case min.inf != 0 && min.inf == max.inf:
		c = 0
	case min.inf == -1 || max.inf == 1:
		c = -1
	case min.inf == 1 || max.inf == -1:
		c = 1
	default:
		c = bytes.Compare(min.val, max.val)
	}
	return c > 0 || (c == 0 && (min.ex || max.ex))
}

// zsetRange is a parsed range of the ZRANGE family.
type zsetRange struct {
	by             int
	rev            bool
	withScores     bool
	start, stop    int64
	smin, smax     float64
	sminEx, smaxEx bool
	lmin, lmax     zsetLexBound
	offset, limit  int64 // limit < 0: no limit
}

func (r *zsetRange) gteMin(m []byte) bool {
	c := r.lmin.cmp(m)
	return c > 0 || (c == 0 && !r.lmin.ex)
}

func (r *zsetRange) lteMax(m []byte) bool {
	c := r.lmax.cmp(m)
	return c < 0 || (c == 0 && !r.lmax.ex)
}

// scoreEmpty reports whether the score range can hold nothing.
func (r *zsetRange) scoreEmpty() bool {
	return r.smin > r.smax || (r.smin == r.smax && (r.sminEx || r.smaxEx))
}

// scoreBounds returns the order-entry bounds [lower, upper) of the score range.
func (r *zsetRange) scoreBounds() (lower, upper []byte) {
	lower = codec.AppendSortableScore([]byte{codec.ZSetScoreTag}, r.smin)
	if r.sminEx {
		lower = shard.PrefixEnd(lower)
	}
	upper = codec.AppendSortableScore([]byte{codec.ZSetScoreTag}, r.smax)
	if !r.smaxEx {
		upper = shard.PrefixEnd(upper)
	}
	return lower, upper
}

// parseScoreRange and parseLexRange read min and max, replying Redis's error.
func (r *zsetRange) parseScoreRange(c *Ctx, min, max []byte) bool {
	var ok1, ok2 bool
	r.smin, r.sminEx, ok1 = zsetParseBound(min)
	r.smax, r.smaxEx, ok2 = zsetParseBound(max)
	if !ok1 || !ok2 {
		c.Error(errZsetMinMax)
		return false
	}
	return true
}

func (r *zsetRange) parseLexRange(c *Ctx, min, max []byte) bool {
	var ok1, ok2 bool
	r.lmin, ok1 = zsetParseLex(min)
	r.lmax, ok2 = zsetParseLex(max)
	if !ok1 || !ok2 {
		c.Error(errZsetLexRange)
		return false
	}
	return true
}

// zsetRankBounds clamps start and stop of a set of n elements as Redis does; ok is false for
// an empty range.
func zsetRankBounds(n, start, stop int64) (lo, hi int64, ok bool) {
	if start < 0 {
		start += n
	}
	if stop < 0 {
		stop += n
	}
	if start < 0 {
		start = 0
	}
	if start > stop || start >= n {
		return 0, 0, false
	}
	if stop >= n {
		stop = n - 1
	}
	return start, stop, true
}

// zsetParseRange parses the arguments of ZRANGE and its relatives from the key at argStart
// (ZRANGESTORE: the source). by and rev are fixed by the older commands (preset); ZRANGE and
// ZRANGESTORE take them from BYSCORE, BYLEX and REV. Errors are replied in Redis's order.
func zsetParseRange(c *Ctx, argStart, by int, rev, preset, store bool) (r zsetRange, ok bool) {
	r.by, r.rev, r.limit = by, rev, -1
	revSet := preset
	for j := argStart + 3; j < len(c.Args); j++ {
		a, left := c.Args[j], len(c.Args)-j-1
		switch {
		case !store && equalFold(a, "withscores"):
			r.withScores = true
		case equalFold(a, "limit") && left >= 2:
			if r.offset, ok = c.intArg(j + 1); !ok {
				return r, false
			}
			if r.limit, ok = c.intArg(j + 2); !ok {
				return r, false
			}
			j += 2
		case !revSet && equalFold(a, "rev"):
			r.rev, revSet = true, true
		case r.by == zsByAuto && equalFold(a, "bylex"):
			r.by = zsByLex
		case r.by == zsByAuto && equalFold(a, "byscore"):
			r.by = zsByScore
		default:
			c.Error(errSyntax)
			return r, false
		}
	}
	if r.by == zsByAuto {
		r.by = zsByRank
	}
	if r.limit != -1 && r.by == zsByRank {
		c.Error(errZsetLimitRank)
		return r, false
	}
	if r.withScores && r.by == zsByLex {
		c.Error(errZsetScoresLex)
		return r, false
	}
	min, max := c.Args[argStart+1], c.Args[argStart+2]
	if r.rev && r.by != zsByRank {
		min, max = max, min
	}
	switch r.by {
	case zsByRank:
		if r.start, ok = c.intArg(argStart + 1); !ok {
			return r, false
		}
		if r.stop, ok = c.intArg(argStart + 2); !ok {
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

// iterOrder opens a walk over the order entries in [lower, upper) (nil: the whole index).
func (z *zsetRef) iterOrder(lower, upper []byte, reverse bool) *shard.Iter {
	if lower == nil {
		lower = zsetOrderLower
	}
	if upper == nil {
		upper = zsetOrderUpper
	}
	return z.c.Tx.IterateData(z.c.DB, z.key, z.m.Version, lower, upper, reverse)
}

// edge returns the first (or, with last, the last) member and score in order.
func (z *zsetRef) edge(last bool) (member []byte, score float64, ok bool) {
	it := z.iterOrder(nil, nil, last)
	defer it.Close()
	if !it.Valid() {
		return nil, 0, false
	}
	m, s := zsetOrderElem(it.Elem())
	return append([]byte(nil), m...), s, true
}

// walk calls fn for every element of range r in reply order and returns how many it visited.
// With anyOrder (stores and removals) it walks in whatever order is cheapest. member is valid
// only during the call.
func (z *zsetRef) walk(r *zsetRange, anyOrder bool, fn func(member []byte, score float64)) int64 {
	if r.by == zsByRank {
		return z.walkRank(r, anyOrder, fn) // LIMIT does not apply
	}
	if r.offset > 0 && uint64(r.offset) >= z.m.Count {
		return 0 // nothing is left after the offset: not worth walking
	}
	switch r.by {
	case zsByScore:
		if r.scoreEmpty() {
			return 0
		}
		lower, upper := r.scoreBounds()
		it := z.iterOrder(lower, upper, r.rev)
		defer it.Close()
		return zsetTake(it, r.offset, r.limit, nil, fn)
	default:
		return z.walkLex(r, fn)
	}
}

// zsetTake skips offset entries of it (a negative offset skips them all, as in Redis), then
// calls fn on up to limit entries (limit < 0: all) while inRange holds (nil: always).
func zsetTake(it *shard.Iter, offset, limit int64, inRange func([]byte) bool, fn func([]byte, float64)) int64 {
	if offset < 0 {
		return 0
	}
	for ; offset > 0 && it.Valid(); offset-- {
		it.Next()
	}
	var n int64
	for limit != 0 && it.Valid() {
		member, score := zsetOrderElem(it.Elem())
		if inRange != nil && !inRange(member) {
			break
		}
		fn(member, score)
		n++
		if limit > 0 {
			limit--
		}
		if limit != 0 { // no step past the last element taken: it may skip many tombstones
			it.Next()
		}
	}
	return n
}

// walkRank walks a range by index. Cost: O(skipped + M) where skipped is the distance from the
// end it starts at; Redis's skiplist spans make that O(log N). A range near the far end is
// walked from that end, buffered when the reply order needs it and it is small.
func (z *zsetRef) walkRank(r *zsetRange, anyOrder bool, fn func([]byte, float64)) int64 {
	lo, hi, ok := zsetRankBounds(int64(z.m.Count), r.start, r.stop)
	if !ok {
		return 0
	}
	n := hi - lo + 1
	farSkip := int64(z.m.Count) - 1 - hi
	if farSkip >= lo || (!anyOrder && n > zsetBufferMax) {
		it := z.iterOrder(nil, nil, r.rev)
		defer it.Close()
		return zsetTake(it, lo, n, nil, fn)
	}
	it := z.iterOrder(nil, nil, !r.rev)
	defer it.Close()
	if anyOrder {
		return zsetTake(it, farSkip, n, nil, fn)
	}
	type elem struct {
		member []byte
		score  float64
	}
	buf := make([]elem, 0, n)
	zsetTake(it, farSkip, n, nil, func(m []byte, s float64) {
		buf = append(buf, elem{append([]byte(nil), m...), s})
	})
	for i := len(buf) - 1; i >= 0; i-- {
		fn(buf[i].member, buf[i].score)
	}
	return int64(len(buf))
}

// walkLex walks a lex range with Redis's semantics, which assume every score is equal: the
// first element (in order) not below min starts the range, which ends at the first element
// above max (descending: mirrored). Seeking from the first element to (its score, min) finds
// that start at once when scores are equal, and gives what a scan from the start gives when
// they are not. Redis also answers empty at once when the far end is out of range, which only
// matters for mixed scores; that costs a second walk, made for small sets only (for big ones
// Redis's own answer over mixed scores depends on its skiplist's random levels).
func (z *zsetRef) walkLex(r *zsetRange, fn func([]byte, float64)) int64 {
	if zsetLexEmpty(&r.lmin, &r.lmax) {
		return 0
	}
	if z.m.Count <= zsetListpackMax {
		if far, _, ok := z.edge(!r.rev); ok && (r.rev && !r.lteMax(far) || !r.rev && !r.gteMin(far)) {
			return 0
		}
	}
	it := z.iterOrder(nil, nil, r.rev)
	defer it.Close()
	if !it.Valid() {
		return 0
	}
	member, score := zsetOrderElem(it.Elem())
	if !r.rev {
		if !r.lteMax(member) { // the first element is above max
			return 0
		}
		if r.lmin.inf == 0 && !r.gteMin(member) {
			it.Seek(codec.AppendZSetScore(z.prefix, score, r.lmin.val))
		}
		for it.Valid() && !r.gteMin(it.Elem()[9:]) {
			it.Next()
		}
		if !it.Valid() || !r.lteMax(it.Elem()[9:]) {
			return 0
		}
		return zsetTake(it, r.offset, r.limit, r.lteMax, fn)
	}
	if !r.gteMin(member) { // the last element is below min
		return 0
	}
	if r.lmax.inf == 0 && !r.lteMax(member) {
		it.Seek(codec.AppendZSetScore(z.prefix, score, r.lmax.val))
	}
	for it.Valid() && !r.lteMax(it.Elem()[9:]) {
		it.Next()
	}
	if !it.Valid() || !r.gteMin(it.Elem()[9:]) {
		return 0
	}
	return zsetTake(it, r.offset, r.limit, r.gteMin, fn)
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
	if z == nil {
		c.W.ArrayLen(0)
		return
	}
	emit := func(m []byte, s float64) { zsetReplyElem(c, m, s, r.withScores) }
	start := len(c.W.Buf)
	n := z.walk(&r, false, emit)
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
	z      *zsetRef
	args   [][]byte // pending ZADD record
	logged bool     // DEL dst is in the binlog
}

func (c *Ctx) zsetNewWriter(dst []byte) *zsetWriter {
	return &zsetWriter{z: c.zsetRefOf(dst, c.newCollection(dst, codec.TypeZSet))}
}

func (w *zsetWriter) add(member []byte, score float64) {
	score = zsetNormScore(score)
	w.z.put(member, score, 0, false)
	if w.args == nil {
		w.args = append(make([][]byte, 0, 2+dumpChunk), zsetZADD, w.z.key)
	}
	w.args = append(w.args, codec.FormatDouble(nil, score), append([]byte(nil), member...))
	if len(w.args) >= 2+dumpChunk {
		w.flush()
	}
}

func (w *zsetWriter) flush() {
	c, key := w.z.c, w.z.key
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
	c, z := w.z.c, w.z
	if z.m.Count == 0 {
		c.W.Int(0)
		if c.Tx.Delete(c.DB, z.key) {
			c.Tx.Log(c.DB, z.key, zsetDEL, z.key)
			c.notify(pubsub.Generic, "del", z.key)
		}
		return
	}
	c.Tx.SetMeta(c.DB, z.key, &z.m)
	w.flush()
	c.W.Int(int64(z.m.Count))
	c.notify(pubsub.ZSet, event, z.key) // after the reply, as Redis
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
	if z != nil {
		z.walk(&r, true, w.add)
	}
	w.finish("zrangestore")
}

// zcountCmd counts a score range. Cost: O(min(M, N-M)) here (the range and its complement
// are counted at once, whichever finishes first) against Redis's O(log N).
func zcountCmd(c *Ctx) {
	var r zsetRange
	if !r.parseScoreRange(c, c.Args[2], c.Args[3]) {
		return
	}
	z, ok := c.zsetLoad(c.Args[1])
	if !ok {
		return
	}
	if z == nil || r.scoreEmpty() {
		c.W.Int(0)
		return
	}
	lower, upper := r.scoreBounds()
	c.W.Int(z.countOrder(lower, upper))
}

// countOrder counts the order entries in [lower, upper), walking the range and the two parts
// outside it in step and stopping when either side is known.
func (z *zsetRef) countOrder(lower, upper []byte) int64 {
	if bytes.Compare(lower, upper) >= 0 {
		return 0
	}
	in := z.iterOrder(lower, upper, false)
	defer in.Close()
	if z.m.Count <= zsetSmall {
		var n int64
		for ; in.Valid(); in.Next() {
			n++
		}
		return n
	}
	below := z.iterOrder(nil, lower, true)
	defer below.Close()
	above := z.iterOrder(upper, nil, false)
	defer above.Close()
	var nIn, nOut int64
	for {
		if !in.Valid() {
			return nIn
		}
		if !below.Valid() && !above.Valid() {
			return int64(z.m.Count) - nOut
		}
		nIn++
		in.Next()
		if below.Valid() {
			nOut++
			below.Next()
		}
		if above.Valid() {
			nOut++
			above.Next()
		}
	}
}

// zlexcountCmd counts a lex range. Cost: O(M) here against Redis's O(log N).
func zlexcountCmd(c *Ctx) {
	r := zsetRange{by: zsByLex, limit: -1}
	if !r.parseLexRange(c, c.Args[2], c.Args[3]) {
		return
	}
	z, ok := c.zsetLoad(c.Args[1])
	if !ok {
		return
	}
	if z == nil {
		c.W.Int(0)
		return
	}
	c.W.Int(z.walk(&r, false, func([]byte, float64) {}))
}

// zremrangeGeneric is ZREMRANGEBYRANK, ZREMRANGEBYSCORE and ZREMRANGEBYLEX. A range that
// covers the whole set deletes the key (one range delete); otherwise each element goes. The
// command is deterministic given the data, so it is logged as it is.
func zremrangeGeneric(c *Ctx, by int) {
	r := zsetRange{by: by, limit: -1}
	switch by {
	case zsByRank:
		var ok bool
		if r.start, ok = c.intArg(2); !ok {
			return
		}
		if r.stop, ok = c.intArg(3); !ok {
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
	if z == nil {
		c.W.Int(0)
		return
	}
	var n int64
	event := zsetRemRangeEvents[by]
	if z.coversAll(&r) {
		n = int64(z.m.Count)
		c.Tx.Delete(c.DB, key)
		c.notify(pubsub.ZSet, event, key)
		c.notify(pubsub.Generic, "del", key)
	} else {
		n = z.walk(&r, true, func(m []byte, s float64) { z.remove(m, s) })
		if n > 0 {
			z.saveAndNotify(event)
		}
	}
	if n > 0 {
		c.Tx.Log(c.DB, key, c.Args...)
	}
	c.W.Int(n)
}

// zsetRemRangeEvents are the keyspace events of ZREMRANGEBY*, by range kind.
var zsetRemRangeEvents = map[int]string{zsByRank: "zremrangebyrank", zsByScore: "zremrangebyscore", zsByLex: "zremrangebylex"}

// coversAll reports whether a rank or score range holds every element of the set.
func (z *zsetRef) coversAll(r *zsetRange) bool {
	switch r.by {
	case zsByRank:
		lo, hi, ok := zsetRankBounds(int64(z.m.Count), r.start, r.stop)
		return ok && lo == 0 && hi == int64(z.m.Count)-1
	case zsByScore:
		if r.scoreEmpty() || z.m.Count <= zsetSmall {
			return false // a small set is cheaper to remove element by element than to check
		}
		_, first, ok := z.edge(false)
		_, last, _ := z.edge(true)
		inRange := func(s float64) bool {
			return (s > r.smin || (s == r.smin && !r.sminEx)) && (s < r.smax || (s == r.smax && !r.smaxEx))
		}
		return ok && inRange(first) && inRange(last)
	}
	return false
}

// ---- pops ----

// zsetPop removes up to count elements from the low (or, with max, the high) end of z and
// writes them, as [member, score] arrays when nested, else flat, under an array header. The
// pop is logged as ZREM of the members, or DEL when the set is emptied (then the elements are
// not deleted one by one: the key's range delete does).
//
// The header is written first, as Redis does, so that the pop's keyspace event lands after it
// in the reply of a connection subscribed to its own events.
func zsetPop(c *Ctx, z *zsetRef, max bool, count int64, nested bool) {
	n := int(min(count, int64(z.m.Count)))
	if nested {
		c.W.ArrayLen(n)
	} else {
		c.W.ArrayLen(2 * n)
	}
	zsetPopElems(c, z, max, int64(n), nested)
}

// zsetPopElems is zsetPop without the array header: it returns how many elements it wrote.
func zsetPopElems(c *Ctx, z *zsetRef, max bool, count int64, nested bool) int {
	size := int64(z.m.Count)
	n := min(count, size)
	all := n == size
	members := make([][]byte, 0, n)
	event := "zpopmin"
	if max {
		event = "zpopmax"
	}
	it := z.iterOrder(nil, nil, max)
	for i := int64(0); i < n && it.Valid(); i++ {
		if i > 0 {
			it.Next()
		} else {
			c.notify(pubsub.ZSet, event, z.key) // before the first element, as Redis
		}
		m, s := zsetOrderElem(it.Elem())
		m = append([]byte(nil), m...)
		members = append(members, m)
		if nested {
			c.W.ArrayLen(2)
		}
		c.W.Bulk(m)
		c.W.Double(s)
		if !all {
			z.remove(m, s)
		}
	}
	it.Close()
	if all {
		c.Tx.Delete(c.DB, z.key)
		c.notify(pubsub.Generic, "del", z.key)
	} else {
		z.save()
	}
	zsetLogRemoved(c, z.key, members, all)
	return len(members)
}

// zpopCmd is ZPOPMIN and ZPOPMAX: a flat [member, score, ...] reply, except in RESP3 with a
// count, where each element is a [member, score] array.
func zpopCmd(c *Ctx, max bool) {
	if len(c.Args) > 3 {
		c.Error(errSyntax)
		return
	}
	count := int64(-1)
	if len(c.Args) == 3 {
		n, ok := parseInt(c.Args[2])
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
	if z == nil || count == 0 {
		c.W.ArrayLen(0)
		return
	}
	if count == -1 {
		count = 1
	}
	zsetPop(c, z, max, count, nested)
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
	numkeys, ok := parseInt(c.Args[numkeysIdx])
	if !ok || numkeys < 1 {
		c.Error(errZsetNumkeysPos)
		return nil, false, 0, false
	}
	if numkeys > int64(len(c.Args)-numkeysIdx-2) {
		c.Error(errSyntax)
		return nil, false, 0, false
	}
	whereIdx := numkeysIdx + 1 + int(numkeys)
	switch {
	case equalFold(c.Args[whereIdx], "min"):
	case equalFold(c.Args[whereIdx], "max"):
		max = true
	default:
		c.Error(errSyntax)
		return nil, false, 0, false
	}
	count = -1
	for j := whereIdx + 1; j < len(c.Args); j++ {
		if count == -1 && equalFold(c.Args[j], "count") && j+1 < len(c.Args) {
			j++
			n, ok := parseInt(c.Args[j])
			if !ok || n < 1 {
				c.Error(errZsetCountPos)
				return nil, false, 0, false
			}
			count = n
			continue
		}
		c.Error(errSyntax)
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
		if z == nil {
			continue
		}
		c.W.ArrayLen(2)
		c.W.Bulk(key)
		zsetPop(c, z, max, count, true)
		return true, true
	}
	return false, true
}

// ---- ZRANDMEMBER ----

// memberAt returns the element at index i of the member entries (member order), walking from
// the nearer end.
func (z *zsetRef) memberAt(i uint64) (member []byte, score float64) {
	n := z.m.Count
	rev := i >= n/2
	skip := i
	if rev {
		skip = n - 1 - i
	}
	it := z.c.Tx.IterateData(z.c.DB, z.key, z.m.Version, zsetMemberLow, zsetMemberUp, rev)
	defer it.Close()
	for ; skip > 0 && it.Valid(); skip-- {
		it.Next()
	}
	if !it.Valid() {
		return nil, 0
	}
	return append([]byte(nil), it.Elem()[1:]...), codec.ScoreValue(it.Value())
}

// zsetRandElem is one element picked by ZRANDMEMBER.
type zsetRandElem struct {
	member []byte
	score  float64
}

// membersAt returns the elements at the sorted, distinct indexes idx (member order): those in
// the first half in one walk from the start, the others in one walk from the end.
func (z *zsetRef) membersAt(idx []uint64) []zsetRandElem {
	out := make([]zsetRandElem, len(idx))
	half, _ := slices.BinarySearch(idx, z.m.Count/2)
	z.collectAt(idx[:half], out[:half], false)
	z.collectAt(idx[half:], out[half:], true)
	return out
}

// collectAt fills out with the elements at indexes idx (sorted), walking from the start, or
// with rev from the end.
func (z *zsetRef) collectAt(idx []uint64, out []zsetRandElem, rev bool) {
	if len(idx) == 0 {
		return
	}
	it := z.c.Tx.IterateData(z.c.DB, z.key, z.m.Version, zsetMemberLow, zsetMemberUp, rev)
	defer it.Close()
	k, pos, want := 0, uint64(0), idx[0]
	if rev {
		k, pos, want = len(idx)-1, z.m.Count-1, idx[len(idx)-1]
	}
	for it.Valid() {
		if pos == want {
			out[k] = zsetRandElem{append([]byte(nil), it.Elem()[1:]...), codec.ScoreValue(it.Value())}
			if rev {
				k--
			} else {
				k++
			}
			if k < 0 || k >= len(idx) {
				return
			}
			want = idx[k]
		}
		it.Next()
		if rev {
			pos--
		} else {
			pos++
		}
	}
}

// zsetRandChunk bounds the random draws of ZRANDMEMBER with a negative count resolved in one
// walk of the set.
const zsetRandChunk = 1 << 20

// zrandmemberCmd streams through the set: a single pick walks from the nearer end to a random
// index; a count picks its indexes first (distinct ones by Floyd's method when positive) and
// collects them in one walk from each end, so memory is O(count), never O(N). Cost: up to
// O(N/2) steps per call (per 2^20 draws for a negative count) against Redis's O(count).
func zrandmemberCmd(c *Ctx) {
	if len(c.Args) >= 3 {
		l, ok := parseInt(c.Args[2])
		if !ok {
			c.Error(errNotInt)
			return
		}
		if l == math.MinInt64 {
			c.Error(errZsetRandRange)
			return
		}
		withScores := false
		if len(c.Args) > 4 || (len(c.Args) == 4 && !equalFold(c.Args[3], "withscores")) {
			c.Error(errSyntax)
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
	if z == nil {
		c.W.Null()
		return
	}
	m, _ := z.memberAt(rand.Uint64N(z.m.Count))
	c.W.Bulk(m)
}

func zsetRandCount(c *Ctx, l int64, withScores bool) {
	z, ok := c.zsetLoad(c.Args[1])
	if !ok {
		return
	}
	if z == nil || l == 0 {
		c.W.ArrayLen(0)
		return
	}
	size := z.m.Count
	if l < 0 || l == 1 { // with repetitions, in random order
		count := uint64(-l)
		if l == 1 {
			count = 1
		}
		zsetReplyLen(c, int(count), withScores)
		for count > 0 {
			k := min(count, zsetRandChunk)
			draws := make([]uint64, k)
			for i := range draws {
				draws[i] = rand.Uint64N(size)
			}
			idx := slices.Clone(draws)
			slices.Sort(idx)
			idx = slices.Compact(idx)
			elems := z.membersAt(idx)
			for _, d := range draws {
				i, _ := slices.BinarySearch(idx, d)
				zsetReplyElem(c, elems[i].member, elems[i].score, withScores)
			}
			count -= k
		}
		return
	}
	count := uint64(l)
	if count >= size { // the whole set
		start, n := len(c.W.Buf), 0
		it := c.Tx.IterateData(c.DB, z.key, z.m.Version, zsetMemberLow, zsetMemberUp, false)
		for ; it.Valid(); it.Next() {
			zsetReplyElem(c, it.Elem()[1:], codec.ScoreValue(it.Value()), withScores)
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
	elems := z.membersAt(idx)
	rand.Shuffle(len(elems), func(i, j int) { elems[i], elems[j] = elems[j], elems[i] })
	zsetReplyLen(c, len(elems), withScores)
	for _, e := range elems {
		zsetReplyElem(c, e.member, e.score, withScores)
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
	if z == nil {
		zsetScanReply(c, 0, nil)
		return
	}
	count, match, _, ok := scanOptions(c, 3, false)
	if !ok {
		return
	}
	if cursor == 0 && z.m.Count <= zsetListpackMax {
		count = max(count, zsetListpackMax) // as Redis does for its compact small sets
	}
	lower := zsetMemberLow
	if cursor != 0 {
		// The saved position is the last visited member entry (never empty, unlike a member).
		if _, pos := c.Srv.Cursors.Load(cursor); len(pos) > 0 && pos[0] == codec.ZSetMemberTag {
			lower = append(append([]byte(nil), pos...), 0) // just after it
		}
	}
	it := c.Tx.IterateData(c.DB, z.key, z.m.Version, lower, zsetMemberUp, false)
	defer it.Close()
	var items [][]byte
	var last []byte
	for visited := int64(0); visited < count && it.Valid(); it.Next() {
		visited++
		m := it.Elem()[1:]
		if match(m) {
			items = append(items, append([]byte(nil), m...), codec.FormatDouble(nil, codec.ScoreValue(it.Value())))
		}
		last = append(last[:0], it.Elem()...)
	}
	var next uint64
	if it.Valid() {
		next = c.Srv.Cursors.Save(0, last)
	}
	zsetScanReply(c, next, items)
}

// zsetListpackMax is Redis's zset-max-listpack-entries default: Redis keeps a set that small
// in its compact encoding, whose behaviour we copy where it shows (ZSCAN returns it whole,
// lex ranges over mixed scores check both ends first).
const zsetListpackMax = 128

func zsetScanReply(c *Ctx, cursor uint64, items [][]byte) {
	c.W.ArrayLen(2)
	c.W.Bulk(strconv.AppendUint(nil, cursor, 10))
	c.W.ArrayLen(len(items))
	for _, it := range items {
		c.W.Bulk(it)
	}
}
