package datatype

import (
	"bytes"
	"math"
	"slices"

	"shardis/codec"
	"shardis/shard"
)

// A sorted set stores every member twice (docs/ENCODING.md, codec/elements.go):
//
//	0x00 · member                  -> score       point reads: Score, Insert, Remove
//	0x01 · sortable score · member -> empty       (score, member) order: ranges, ranks, pops
//
// Ranges by score or lex seek into the order entries; ranges by rank walk them from the nearer
// end. There is no rank index, so rank-based work (RankOf, a range by index, Count) costs what
// it skips, where Redis's skiplist spans make it O(log N).

// zsetSmall is the size up to which a set is simply walked where a bigger one is walked from
// two ends at once (RankOf, Count): one iterator costs less than three then.
const zsetSmall = 64

// zsetBufferMax bounds how many elements a rank range near the far end of the set is
// buffered to be walked from that end instead of skipping to it from the near one.
const zsetBufferMax = 4096

// ZSetListpackMax is Redis's zset-max-listpack-entries default: Redis keeps a set that small
// in its compact encoding, whose behaviour shardis copies where it shows (ZSCAN returns it
// whole, lex ranges over mixed scores check both ends first).
const ZSetListpackMax = 128

var (
	zsetOrderLower = []byte{codec.ZSetScoreTag}
	zsetOrderUpper = []byte{codec.ZSetScoreTag + 1}
	zsetMemberLow  = []byte{codec.ZSetMemberTag}
	zsetMemberUp   = []byte{codec.ZSetMemberTag + 1}
)

// zsetOrderScore returns the score of an order entry's element part.
func zsetOrderScore(elem []byte) float64 { return codec.SortableScore(elem[1:9]) }

// zsetOrderElem splits the element part of an order entry.
func zsetOrderElem(elem []byte) (member []byte, score float64) {
	return elem[9:], codec.SortableScore(elem[1:9])
}

// ZSet is a sorted set key opened in a transaction. The zero value is not usable; get one
// from LookupZSet, ZSetFromMeta or NewZSet. See the package comment for its lifetime.
type ZSet struct {
	c collection
	// metaChanged says Save must write the meta: the count changed, or the entries of a set
	// packed in its meta did. After nothing but score updates of a set in data keys the meta
	// is as it was.
	metaChanged bool
}

// LookupZSet opens the sorted set stored at key in logical db. A missing key gives an empty
// set (Exists false) that Insert creates; a key of another type gives ErrWrongType.
func LookupZSet(tx *shard.Tx, db int, key []byte) (ZSet, error) {
	c, err := lookup(tx, db, key, codec.TypeZSet)
	return ZSet{c: c}, err
}

// ZSetFromMeta is LookupZSet for a meta the caller has read itself (with Tx.MetaRead, say):
// exists false means the key is missing.
func ZSetFromMeta(tx *shard.Tx, db int, key []byte, m codec.Meta, exists bool) (ZSet, error) {
	c, err := fromMeta(tx, db, key, codec.TypeZSet, m, exists)
	return ZSet{c: c}, err
}

// NewZSet returns a new, empty sorted set for key that replaces whatever key holds (of any
// type) when it is saved, or deletes key if it is saved empty: the destination of ZUNIONSTORE
// and its kind. Its members are written under a new version, so the key's old value can be
// read while the new one is built.
func NewZSet(tx *shard.Tx, db int, key []byte) ZSet {
	z := ZSet{c: collection{tx: tx, db: db, key: key, typ: codec.TypeZSet}}
	z.c.create()
	return z
}

// Exists reports whether the key holds the set (false for a missing key, until Save).
func (z *ZSet) Exists() bool { return z.c.exists }

// Len returns the number of members.
func (z *ZSet) Len() int64 { return int64(z.c.meta.Count) }

// Meta returns the set's meta as the handle holds it, including changes not yet saved. The
// caller must not modify it.
func (z *ZSet) Meta() *codec.Meta { return &z.c.meta }

// Key returns the key the set is stored at.
func (z *ZSet) Key() []byte { return z.c.key }

// memberKey returns the data key of member's score entry; valid until the next call.
func (z *ZSet) memberKey(member []byte) []byte {
	z.c.dataKey(nil)
	z.c.buf = codec.AppendZSetMember(z.c.buf[:z.c.plen], member)
	return z.c.buf
}

// orderKey returns the data key of the (score, member) order entry; valid until the next call.
func (z *ZSet) orderKey(score float64, member []byte) []byte {
	z.c.dataKey(nil)
	z.c.buf = codec.AppendZSetScore(z.c.buf[:z.c.plen], score, member)
	return z.c.buf
}

// Score returns member's score.
func (z *ZSet) Score(member []byte) (float64, bool) {
	if !z.c.live() {
		return 0, false
	}
	v, ok := z.c.getRaw(z.memberKey(member))
	if !ok {
		return 0, false
	}
	return codec.ScoreValue(v), true
}

func (z *ZSet) write(member []byte, score float64) {
	var sv [8]byte
	z.c.putRaw(z.memberKey(member), codec.AppendScoreValue(sv[:0], score))
	z.c.putRaw(z.orderKey(score, member), nil)
}

// Insert adds member, which is not in the set, with score.
//
// A set Redis would hold as a listpack (at most zset-max-listpack-entries members of at most
// zset-max-listpack-value bytes: the compact flag) of at most packMaxEntries members of at
// most packMaxElem bytes is packed in its meta (packed.go); the insert that passes either
// converts it to data keys, for good.
func (z *ZSet) Insert(member []byte, score float64) {
	z.c.create()
	m := &z.c.meta
	m.Count++
	z.metaChanged = true
	if m.Compact {
		if lim := z.c.tx.EncodingLimits(); int64(m.Count) > lim.ZSetEntries || int64(len(member)) > lim.ZSetValue {
			m.Compact = false
		}
	}
	if m.Packed && (!m.Compact || m.Count > packMaxEntries || len(member) > packMaxElem) {
		z.c.unpack()
	}
	z.write(member, score)
}

// Update changes the score of member, which is in the set with score old, to score. Save
// must follow: a packed set's scores are in its meta.
func (z *ZSet) Update(member []byte, old, score float64) {
	z.metaChanged = z.metaChanged || z.c.meta.Packed
	z.c.delRaw(z.orderKey(old, member))
	z.write(member, score)
}

// Remove deletes member, which is in the set with score.
func (z *ZSet) Remove(member []byte, score float64) {
	z.c.delRaw(z.memberKey(member))
	z.c.delRaw(z.orderKey(score, member))
	z.c.meta.Count--
	z.metaChanged = true
}

// Delete removes member and reports whether it was in the set.
func (z *ZSet) Delete(member []byte) bool {
	score, ok := z.Score(member)
	if ok {
		z.Remove(member, score)
	}
	return ok
}

// Save writes the set's meta, or deletes the key when no member is left; it reports whether
// it deleted the key. Call it once after the changes of a command.
//
// After nothing but score updates of a set in data keys it writes nothing: its meta is as it
// was (a packed set's updates rewrite its meta).
func (z *ZSet) Save() (removed bool) {
	if z.c.exists && !z.metaChanged {
		return false
	}
	z.metaChanged = false
	return z.c.save()
}

// Drop deletes the whole set, the key with it, and reports whether the key existed.
func (z *ZSet) Drop() bool {
	z.c.meta.Count = 0
	return z.c.save()
}

// iterOrder opens a walk over the order entries in [lower, upper) (nil: the whole index).
func (z *ZSet) iterOrder(lower, upper []byte, reverse bool) elemIter {
	if lower == nil {
		lower = zsetOrderLower
	}
	if upper == nil {
		upper = zsetOrderUpper
	}
	return z.c.elems(lower, upper, reverse)
}

// Edge returns a copy of the first (or, with last, the last) member in order, and its score.
func (z *ZSet) Edge(last bool) (member []byte, score float64, ok bool) {
	if !z.c.live() {
		return nil, 0, false
	}
	it := z.iterOrder(nil, nil, last)
	defer it.Close()
	if !it.Valid() {
		return nil, 0, false
	}
	m, s := zsetOrderElem(it.Elem())
	return bytes.Clone(m), s, true
}

// RankOf returns the 0-based ascending rank of member, which is in the set with score. It
// walks from both ends at once, so the cost is the distance to the nearer end:
// O(min(rank, N-rank)) against Redis's O(log N).
func (z *ZSet) RankOf(member []byte, score float64) int64 {
	elem := codec.AppendZSetScore(nil, score, member)
	count := int64(z.c.meta.Count)
	fwd := z.iterOrder(nil, nil, false)
	defer fwd.Close()
	if count <= zsetSmall {
		var rank int64
		for ; fwd.Valid() && string(fwd.Elem()) != string(elem); fwd.Next() {
			rank++
		}
		return rank
	}
	bwd := z.iterOrder(nil, nil, true)
	defer bwd.Close()
	var before, after int64
	for fwd.Valid() || bwd.Valid() {
		if fwd.Valid() {
			if string(fwd.Elem()) == string(elem) {
				return before
			}
			before++
			fwd.Next()
		}
		if bwd.Valid() {
			if string(bwd.Elem()) == string(elem) {
				return count - 1 - after
			}
			after++
			bwd.Next()
		}
	}
	return 0
}

// ZRangeBy says how a ZRange is given.
type ZRangeBy int

const (
	ZByRank  ZRangeBy = iota + 1 // Start..Stop, indexes (negative: from the end)
	ZByScore                     // Min..Max, scores
	ZByLex                       // LexMin..LexMax, members (for a set of equal scores)
)

// ZLexBound is one end of a lex range: Inf -1 ("-"), Inf 1 ("+") or the member Val, exclusive
// with Ex ("(") or inclusive ("["). "-" and "+" are exclusive, as in Redis.
type ZLexBound struct {
	Inf int8
	Val []byte
	Ex  bool
}

// cmp compares member m with bound b.
func (b *ZLexBound) cmp(m []byte) int {
	if b.Inf != 0 {
		return -int(b.Inf)
	}
	return bytes.Compare(m, b.Val)
}

// ZRange is a range of a sorted set as ZRANGE and its relatives give it. Only the fields of
// its kind (By) are read, and Offset and Limit (LIMIT) only by score or lex.
type ZRange struct {
	By             ZRangeBy
	Rev            bool // descending
	Start, Stop    int64
	Min, Max       float64
	MinEx, MaxEx   bool
	LexMin, LexMax ZLexBound
	Offset, Limit  int64 // Limit < 0: no limit; Offset < 0: nothing, as in Redis
}

func (r *ZRange) gteMin(m []byte) bool {
	c := r.LexMin.cmp(m)
	return c > 0 || (c == 0 && !r.LexMin.Ex)
}

func (r *ZRange) lteMax(m []byte) bool {
	c := r.LexMax.cmp(m)
	return c < 0 || (c == 0 && !r.LexMax.Ex)
}

// ScoreEmpty reports whether the score range can hold nothing.
func (r *ZRange) ScoreEmpty() bool {
	return r.Min > r.Max || (r.Min == r.Max && (r.MinEx || r.MaxEx))
}

// lexEmpty reports whether [LexMin, LexMax] can hold nothing (Redis's sdscmplex test).
func (r *ZRange) lexEmpty() bool {
	min, max := &r.LexMin, &r.LexMax
	var c int
	switch {
	case min.Inf != 0 && min.Inf == max.Inf:
		c = 0
	case min.Inf == -1 || max.Inf == 1:
		c = -1
	case min.Inf == 1 || max.Inf == -1:
		c = 1
	default:
		c = bytes.Compare(min.Val, max.Val)
	}
	return c > 0 || (c == 0 && (min.Ex || max.Ex))
}

// scoreBounds returns the order-entry bounds [lower, upper) of the score range.
func (r *ZRange) scoreBounds() (lower, upper []byte) {
	lower = codec.AppendSortableScore([]byte{codec.ZSetScoreTag}, r.Min)
	if r.MinEx {
		lower = shard.PrefixEnd(lower)
	}
	upper = codec.AppendSortableScore([]byte{codec.ZSetScoreTag}, r.Max)
	if !r.MaxEx {
		upper = shard.PrefixEnd(upper)
	}
	return lower, upper
}

// ZRankBounds clamps start and stop of a set of n elements as Redis does; ok is false for an
// empty range.
func ZRankBounds(n, start, stop int64) (lo, hi int64, ok bool) {
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

// Walk calls fn for every element of range r in r's order and returns how many it visited.
// With anyOrder (stores and removals) it walks in whatever order is cheapest. member is valid
// only during the call; fn may Remove the element it is given.
func (z *ZSet) Walk(r *ZRange, anyOrder bool, fn func(member []byte, score float64)) int64 {
	if !z.c.live() {
		return 0
	}
	if r.By == ZByRank {
		return z.walkRank(r, anyOrder, fn) // LIMIT does not apply
	}
	if r.Offset > 0 && uint64(r.Offset) >= z.c.meta.Count {
		return 0 // nothing is left after the offset: not worth walking
	}
	switch r.By {
	case ZByScore:
		if r.ScoreEmpty() {
			return 0
		}
		lower, upper := r.scoreBounds()
		it := z.iterOrder(lower, upper, r.Rev)
		defer it.Close()
		return zsetTake(it, r.Offset, r.Limit, nil, fn)
	default:
		return z.walkLex(r, fn)
	}
}

// zsetTake skips offset entries of it (a negative offset skips them all, as in Redis), then
// calls fn on up to limit entries (limit < 0: all) while inRange holds (nil: always).
func zsetTake(it elemIter, offset, limit int64, inRange func([]byte) bool, fn func([]byte, float64)) int64 {
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
func (z *ZSet) walkRank(r *ZRange, anyOrder bool, fn func([]byte, float64)) int64 {
	count := int64(z.c.meta.Count)
	lo, hi, ok := ZRankBounds(count, r.Start, r.Stop)
	if !ok {
		return 0
	}
	n := hi - lo + 1
	farSkip := count - 1 - hi
	if farSkip >= lo || (!anyOrder && n > zsetBufferMax) {
		it := z.iterOrder(nil, nil, r.Rev)
		defer it.Close()
		return zsetTake(it, lo, n, nil, fn)
	}
	it := z.iterOrder(nil, nil, !r.Rev)
	defer it.Close()
	if anyOrder {
		return zsetTake(it, farSkip, n, nil, fn)
	}
	buf := make([]ZElem, 0, n)
	zsetTake(it, farSkip, n, nil, func(m []byte, s float64) {
		buf = append(buf, ZElem{bytes.Clone(m), s})
	})
	for i := len(buf) - 1; i >= 0; i-- {
		fn(buf[i].Member, buf[i].Score)
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
func (z *ZSet) walkLex(r *ZRange, fn func([]byte, float64)) int64 {
	if r.lexEmpty() {
		return 0
	}
	if z.c.meta.Count <= ZSetListpackMax {
		if far, _, ok := z.Edge(!r.Rev); ok && (r.Rev && !r.lteMax(far) || !r.Rev && !r.gteMin(far)) {
			return 0
		}
	}
	it := z.iterOrder(nil, nil, r.Rev)
	defer it.Close()
	if !it.Valid() {
		return 0
	}
	member, score := zsetOrderElem(it.Elem())
	if !r.Rev {
		if !r.lteMax(member) { // the first element is above max
			return 0
		}
		if r.LexMin.Inf == 0 && !r.gteMin(member) {
			it.Seek(z.orderKey(score, r.LexMin.Val))
		}
		for it.Valid() && !r.gteMin(it.Elem()[9:]) {
			it.Next()
		}
		if !it.Valid() || !r.lteMax(it.Elem()[9:]) {
			return 0
		}
		return zsetTake(it, r.Offset, r.Limit, r.lteMax, fn)
	}
	if !r.gteMin(member) { // the last element is below min
		return 0
	}
	if r.LexMax.Inf == 0 && !r.lteMax(member) {
		it.Seek(z.orderKey(score, r.LexMax.Val))
	}
	for it.Valid() && !r.lteMax(it.Elem()[9:]) {
		it.Next()
	}
	if !it.Valid() || !r.gteMin(it.Elem()[9:]) {
		return 0
	}
	return zsetTake(it, r.Offset, r.Limit, r.gteMin, fn)
}

// CountScore counts the members whose score is in the score range r (By is not read).
// Cost: O(min(M, N-M)) (the range and its complement are counted at once, whichever finishes
// first) against Redis's O(log N).
func (z *ZSet) CountScore(r *ZRange) int64 {
	if !z.c.live() || r.ScoreEmpty() {
		return 0
	}
	lower, upper := r.scoreBounds()
	if bytes.Compare(lower, upper) >= 0 {
		return 0
	}
	count := int64(z.c.meta.Count)
	in := z.iterOrder(lower, upper, false)
	defer in.Close()
	if count <= zsetSmall {
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
			return count - nOut
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

// CoversAll reports whether a rank or score range holds every element of the set (false for
// a lex range, and for a small set by score: removing its elements one by one is cheaper
// than checking).
func (z *ZSet) CoversAll(r *ZRange) bool {
	count := int64(z.c.meta.Count)
	switch r.By {
	case ZByRank:
		lo, hi, ok := ZRankBounds(count, r.Start, r.Stop)
		return ok && lo == 0 && hi == count-1
	case ZByScore:
		if r.ScoreEmpty() || count <= zsetSmall {
			return false
		}
		_, first, ok := z.Edge(false)
		_, last, _ := z.Edge(true)
		inRange := func(s float64) bool {
			return (s > r.Min || (s == r.Min && !r.MinEx)) && (s < r.Max || (s == r.Max && !r.MaxEx))
		}
		return ok && inRange(first) && inRange(last)
	}
	return false
}

// Pop removes up to n elements from the low (or, with max, the high) end, handing each to fn
// in pop order (i counts from 0; member is a copy), and returns the members removed. When
// every element goes the key is deleted whole (dropped true) rather than element by element;
// otherwise the set is saved.
func (z *ZSet) Pop(n int64, max bool, fn func(i int, member []byte, score float64)) (members [][]byte, dropped bool) {
	size := int64(z.c.meta.Count)
	n = min(n, size)
	all := n == size
	members = make([][]byte, 0, n)
	it := z.iterOrder(nil, nil, max)
	for i := int64(0); i < n && it.Valid(); i++ {
		if i > 0 {
			it.Next()
		}
		m, s := zsetOrderElem(it.Elem())
		m = bytes.Clone(m)
		members = append(members, m)
		fn(int(i), m, s)
		if !all {
			z.Remove(m, s)
		}
	}
	it.Close()
	if all {
		z.Drop()
	} else {
		z.Save()
	}
	return members, all
}

// ZElem is a member and its score.
type ZElem struct {
	Member []byte
	Score  float64
}

// MemberAt returns a copy of the element at index i of member order, walking from the nearer
// end.
func (z *ZSet) MemberAt(i uint64) ZElem {
	n := z.c.meta.Count
	rev := i >= n/2
	skip := i
	if rev {
		skip = n - 1 - i
	}
	it := z.c.elems(zsetMemberLow, zsetMemberUp, rev)
	defer it.Close()
	for ; skip > 0 && it.Valid(); skip-- {
		it.Next()
	}
	if !it.Valid() {
		return ZElem{}
	}
	return ZElem{bytes.Clone(it.Elem()[1:]), codec.ScoreValue(it.Value())}
}

// MembersAt returns copies of the elements at the sorted, distinct indexes idx of member
// order: those in the first half in one walk from the start, the others in one walk from the
// end.
func (z *ZSet) MembersAt(idx []uint64) []ZElem {
	out := make([]ZElem, len(idx))
	half, _ := slices.BinarySearch(idx, z.c.meta.Count/2)
	z.collectAt(idx[:half], out[:half], false)
	z.collectAt(idx[half:], out[half:], true)
	return out
}

// collectAt fills out with the elements at indexes idx (sorted), walking from the start, or
// with rev from the end.
func (z *ZSet) collectAt(idx []uint64, out []ZElem, rev bool) {
	if len(idx) == 0 {
		return
	}
	it := z.c.elems(zsetMemberLow, zsetMemberUp, rev)
	defer it.Close()
	k, pos, want := 0, uint64(0), idx[0]
	if rev {
		k, pos, want = len(idx)-1, z.c.meta.Count-1, idx[len(idx)-1]
	}
	for it.Valid() {
		if pos == want {
			out[k] = ZElem{bytes.Clone(it.Elem()[1:]), codec.ScoreValue(it.Value())}
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

// Members walks the members in byte order from member lower (inclusive; nil: the first). The
// iterator must be closed.
func (z *ZSet) Members(lower []byte) ZSetIter {
	if !z.c.live() {
		return ZSetIter{}
	}
	lo := zsetMemberLow
	if lower != nil {
		lo = codec.AppendZSetMember(nil, lower)
	}
	return ZSetIter{z.c.elems(lo, zsetMemberUp, false), false}
}

// Ordered walks the members in (score, member) order, or descending with reverse. The
// iterator must be closed.
func (z *ZSet) Ordered(reverse bool) ZSetIter {
	if !z.c.live() {
		return ZSetIter{}
	}
	return ZSetIter{z.iterOrder(nil, nil, reverse), true}
}

// ScoreRanges walks, for each [min, max) of ranges in turn, the members whose score is in it,
// in (score, member) order. fn returns false to end the walk; member is valid only during the
// call. A set of up to ZSetListpackMax members is read once (one iterator, bounded by the
// ranges' span) and each range found in that copy; a bigger one is walked with one seek per
// range.
func (z *ZSet) ScoreRanges(ranges [][2]float64, fn func(member []byte, score float64) bool) {
	if !z.c.live() || len(ranges) == 0 {
		return
	}
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, r := range ranges {
		if r[0] < r[1] {
			lo, hi = min(lo, r[0]), max(hi, r[1])
		}
	}
	if !(lo < hi) {
		return
	}
	lower := codec.AppendSortableScore([]byte{codec.ZSetScoreTag}, lo)
	upper := codec.AppendSortableScore([]byte{codec.ZSetScoreTag}, hi)
	it := z.iterOrder(lower, upper, false)
	defer it.Close()
	if z.c.meta.Count <= ZSetListpackMax {
		z.scoreRangesSmall(it, ranges, fn)
		return
	}
	var target []byte
	walked := math.Inf(1) // the iterator is at the first entry at or past this score
	for _, r := range ranges {
		if !(r[0] < r[1]) {
			continue
		}
		switch {
		case walked <= r[0] && !it.Valid():
			continue // nothing at or past r[0]
		case walked <= r[0] && zsetOrderScore(it.Elem()) >= r[0]:
			// already at the range's first entry: no seek
		default:
			target = codec.AppendSortableScore(append(target[:0], codec.ZSetScoreTag), r[0])
			it.Seek(z.c.dataKey(target))
		}
		walked = r[1]
		for ; it.Valid(); it.Next() {
			member, score := zsetOrderElem(it.Elem())
			if !(score < r[1]) {
				break
			}
			if !fn(member, score) {
				return
			}
		}
	}
}

// scoreRangesSmall is ScoreRanges over a copy of what it walks.
func (z *ZSet) scoreRangesSmall(it elemIter, ranges [][2]float64, fn func([]byte, float64) bool) {
	type elem struct {
		score    float64
		from, to int
	}
	var (
		elems [ZSetListpackMax]elem
		n     int
		arena []byte
	)
	for ; it.Valid() && n < len(elems); it.Next() {
		member, score := zsetOrderElem(it.Elem())
		elems[n] = elem{score, len(arena), len(arena) + len(member)}
		arena = append(arena, member...)
		n++
	}
	for _, r := range ranges {
		i, _ := slices.BinarySearchFunc(elems[:n], r[0], func(e elem, t float64) int {
			if e.score < t {
				return -1
			}
			return 1
		})
		for ; i < n && elems[i].score < r[1]; i++ {
			if !fn(arena[elems[i].from:elems[i].to:elems[i].to], elems[i].score) {
				return
			}
		}
	}
}

// ZSetIter walks the members of a sorted set, in member order (Members) or in score order
// (Ordered). The zero ZSetIter (of a missing set) is empty. Member is valid until the
// iterator moves.
type ZSetIter struct {
	it    elemIter
	order bool // walking the order entries
}

// Valid reports whether the iterator is at a member.
func (x ZSetIter) Valid() bool { return x.it != nil && x.it.Valid() }

// Next moves to the next member.
func (x ZSetIter) Next() { x.it.Next() }

// Member returns the current member.
func (x ZSetIter) Member() []byte {
	if x.order {
		return x.it.Elem()[9:]
	}
	return x.it.Elem()[1:]
}

// Score returns the current member's score.
func (x ZSetIter) Score() float64 {
	if x.order {
		return codec.SortableScore(x.it.Elem()[1:9])
	}
	return codec.ScoreValue(x.it.Value())
}

// Close releases the iterator.
func (x ZSetIter) Close() {
	if x.it != nil {
		x.it.Close()
	}
}
