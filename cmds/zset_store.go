package cmds

import (
	"bytes"
	"container/heap"
	"math"
	"slices"
	"strings"

	"shardis/codec"
	"shardis/datatype"
)

// ZUNION ZINTER ZDIFF, their STORE forms and ZINTERCARD. Sets take part as sorted sets whose
// scores are all 1. Both layouts keep members in byte order (a zset's 0x00 entries, a set's
// data keys), so a union is a k-way merge of member-ordered walks (memory O(k), not O(result)),
// and an intersection or difference walks one input and looks members up in the others. A
// STORE writes the result into a fresh version of the destination as it is produced; a reply
// must be in (score, member) order, so its elements are collected and sorted first.

const (
	zsOpUnion = iota
	zsOpInter
	zsOpDiff
)

// Aggregates.
const (
	zsAggSum = iota
	zsAggMin
	zsAggMax
)

// zsetSrc is one input of a set operation: a sorted set (zset) or a set (set, isSet), whose
// members score 1.
type zsetSrc struct {
	key    []byte
	exists bool
	isSet  bool
	zset   datatype.ZSet
	set    datatype.Set
	weight float64
}

func (s *zsetSrc) size() uint64 {
	switch {
	case !s.exists:
		return 0
	case s.isSet:
		return uint64(s.set.Len())
	}
	return uint64(s.zset.Len())
}

// lookup returns member's score in s (1 for a member of a set).
func (s *zsetSrc) lookup(member []byte) (float64, bool) {
	switch {
	case !s.exists:
		return 0, false
	case s.isSet:
		return 1, s.set.Has(member)
	}
	return s.zset.Score(member)
}

// zsetSrcIter walks the members of one input in byte order: a set's (set) or a sorted set's
// (zset).
type zsetSrcIter struct {
	set   datatype.SetIter
	zset  datatype.ZSetIter
	isSet bool
}

func (x *zsetSrcIter) Valid() bool {
	if x.isSet {
		return x.set.Valid()
	}
	return x.zset.Valid()
}

func (x *zsetSrcIter) Next() {
	if x.isSet {
		x.set.Next()
	} else {
		x.zset.Next()
	}
}

func (x *zsetSrcIter) Close() {
	if x.isSet {
		x.set.Close()
	} else {
		x.zset.Close()
	}
}

// elem returns the current member and its score (1 in a set).
func (x *zsetSrcIter) elem() (member []byte, score float64) {
	if x.isSet {
		return x.set.Member(), 1
	}
	return x.zset.Member(), x.zset.Score()
}

// iter walks s's members in byte order.
func (s *zsetSrc) iter() *zsetSrcIter {
	if s.isSet {
		return &zsetSrcIter{set: s.set.Iter(nil), isSet: true}
	}
	return &zsetSrcIter{zset: s.zset.Members(nil)}
}

// zsetAggregate folds val into *acc as Redis's zunionInterAggregate: a sum that is NaN
// (inf + -inf) is 0; MIN and MAX keep acc when val is NaN.
func zsetAggregate(acc *float64, val float64, agg int) {
	switch agg {
	case zsAggSum:
		*acc += val
		if math.IsNaN(*acc) {
			*acc = 0
		}
	case zsAggMin:
		if val < *acc {
			*acc = val
		}
	case zsAggMax:
		if val > *acc {
			*acc = val
		}
	}
}

// zsetWeighted is score times weight, with NaN (0 * inf) read as 0.
func zsetWeighted(score, weight float64) float64 {
	v := score * weight
	if math.IsNaN(v) {
		return 0
	}
	return v
}

// zsetOpCmd runs ZUNION/ZINTER/ZDIFF (op), their STORE forms (store: args[1] is the
// destination) and ZINTERCARD (cardOnly). Arguments are checked in Redis's order: numkeys,
// the inputs' types, then the options.
// zsetStoreEvents are the keyspace events of the STORE forms, by operation.
var zsetStoreEvents = map[int]string{zsOpUnion: "zunionstore", zsOpInter: "zinterstore", zsOpDiff: "zdiffstore"}

func zsetOpCmd(c *Ctx, op int, store, cardOnly bool) {
	numIdx := 1
	if store {
		numIdx = 2
	}
	setnum, ok := c.IntArg(numIdx)
	if !ok {
		return
	}
	if setnum < 1 {
		name := strings.ToLower(string(c.Args[0]))
		if c.Cmd != nil {
			name = c.Cmd.Name
		}
		c.Error("ERR at least 1 input key is needed for '" + name + "' command")
		return
	}
	if setnum > int64(len(c.Args)-numIdx-1) {
		c.Error(ErrSyntax)
		return
	}
	srcs := make([]zsetSrc, setnum)
	j := numIdx + 1
	for i := range srcs {
		s := &srcs[i]
		s.key, s.weight = c.Args[j], 1
		j++
		m, exists := c.Tx.MetaRead(c.DB, s.key)
		if !exists {
			continue
		}
		s.exists, s.isSet = true, m.Type == codec.TypeSet
		var err error
		if s.isSet {
			s.set, err = datatype.SetFromMeta(c.Tx, c.DB, s.key, m, true)
		} else {
			s.zset, err = datatype.ZSetFromMeta(c.Tx, c.DB, s.key, m, true)
		}
		if err != nil {
			c.typeError(err)
			return
		}
	}
	agg, withScores, limit := zsAggSum, false, int64(0)
	for j < len(c.Args) {
		a, remaining := c.Args[j], len(c.Args)-j
		switch {
		case op != zsOpDiff && !cardOnly && remaining >= int(setnum)+1 && EqualFold(a, "weights"):
			j++
			for i := range srcs {
				w, ok := zsetParseScore(c.Args[j])
				if !ok {
					c.Error(errZsetWeight)
					return
				}
				srcs[i].weight = w
				j++
			}
		case op != zsOpDiff && !cardOnly && remaining >= 2 && EqualFold(a, "aggregate"):
			switch x := c.Args[j+1]; {
			case EqualFold(x, "sum"):
				agg = zsAggSum
			case EqualFold(x, "min"):
				agg = zsAggMin
			case EqualFold(x, "max"):
				agg = zsAggMax
			default:
				c.Error(ErrSyntax)
				return
			}
			j += 2
		case !store && !cardOnly && EqualFold(a, "withscores"):
			withScores = true
			j++
		case cardOnly && remaining >= 2 && EqualFold(a, "limit"):
			n, ok := codec.ParseInt(c.Args[j+1])
			if !ok || n < 0 {
				c.Error(errZsetLimitNeg)
				return
			}
			limit = n
			j += 2
		default:
			c.Error(ErrSyntax)
			return
		}
	}
	if op != zsOpDiff {
		// Redis aggregates in the order of the inputs sorted by size (qsort, stable in glibc
		// here), which decides sums such as inf + -inf + x.
		slices.SortStableFunc(srcs, func(a, b zsetSrc) int {
			switch sa, sb := a.size(), b.size(); {
			case sa < sb:
				return -1
			case sa > sb:
				return 1
			}
			return 0
		})
	}

	var (
		w     *zsetWriter
		out   []datatype.ZElem
		card  int64
		emit  func(member []byte, score float64) bool // false: stop
		reply = !store && !cardOnly
	)
	switch {
	case store:
		w = c.zsetNewWriter(c.Args[1])
		emit = func(m []byte, s float64) bool { w.add(m, s); return true }
	case cardOnly:
		emit = func([]byte, float64) bool {
			card++
			return limit == 0 || card < limit
		}
	default:
		emit = func(m []byte, s float64) bool {
			out = append(out, datatype.ZElem{Member: append([]byte(nil), m...), Score: s})
			return true
		}
	}
	switch op {
	case zsOpInter:
		zsetInter(c, srcs, agg, emit)
	case zsOpUnion:
		zsetUnion(c, srcs, agg, emit)
	case zsOpDiff:
		zsetDiff(c, srcs, emit)
	}
	switch {
	case store:
		w.finish(zsetStoreEvents[op])
	case cardOnly:
		c.W.Int(card)
	case reply:
		slices.SortFunc(out, func(a, b datatype.ZElem) int {
			switch {
			case a.Score < b.Score:
				return -1
			case a.Score > b.Score:
				return 1
			}
			return bytes.Compare(a.Member, b.Member)
		})
		zsetReplyLen(c, len(out), withScores)
		for _, e := range out {
			zsetReplyElem(c, e.Member, e.Score, withScores)
		}
	}
}

// zsetInter walks the smallest input and looks each member up in the others.
func zsetInter(c *Ctx, srcs []zsetSrc, agg int, emit func([]byte, float64) bool) {
	first := &srcs[0]
	if first.size() == 0 {
		return
	}
	it := first.iter()
	defer it.Close()
	for ; it.Valid(); it.Next() {
		member, s0 := it.elem()
		score := zsetWeighted(s0, first.weight)
		all := true
		for j := 1; j < len(srcs); j++ {
			v, found := srcs[j].lookup(member)
			if !found {
				all = false
				break
			}
			zsetAggregate(&score, v*srcs[j].weight, agg)
		}
		if all && !emit(member, score) {
			return
		}
	}
}

// zsetDiff walks the first input and keeps the members no other input has, with their
// unweighted scores.
func zsetDiff(c *Ctx, srcs []zsetSrc, emit func([]byte, float64) bool) {
	first := &srcs[0]
	if first.size() == 0 {
		return
	}
	it := first.iter()
	defer it.Close()
next:
	for ; it.Valid(); it.Next() {
		member, score := it.elem()
		for j := 1; j < len(srcs); j++ {
			if _, found := srcs[j].lookup(member); found {
				continue next
			}
		}
		if !emit(member, score) {
			return
		}
	}
}

// zsetMergeHead is one input's current member in the union's merge.
type zsetMergeHead struct {
	src int // position in the size-sorted inputs: equal members pop in this order
	it  *zsetSrcIter
}

type zsetMergeHeap struct {
	heads []zsetMergeHead
	srcs  []zsetSrc
}

func (h *zsetMergeHeap) Len() int { return len(h.heads) }
func (h *zsetMergeHeap) Less(i, j int) bool {
	a, _ := h.heads[i].it.elem()
	b, _ := h.heads[j].it.elem()
	if c := bytes.Compare(a, b); c != 0 {
		return c < 0
	}
	return h.heads[i].src < h.heads[j].src
}
func (h *zsetMergeHeap) Swap(i, j int) { h.heads[i], h.heads[j] = h.heads[j], h.heads[i] }
func (h *zsetMergeHeap) Push(x any)    { h.heads = append(h.heads, x.(zsetMergeHead)) }
func (h *zsetMergeHeap) Pop() any {
	x := h.heads[len(h.heads)-1]
	h.heads = h.heads[:len(h.heads)-1]
	return x
}

// zsetUnion merges the member-ordered walks of every input. A member's score starts from the
// first input (in size order) that has it and aggregates the later ones, as Redis's
// accumulation over the size-sorted inputs does.
func zsetUnion(c *Ctx, srcs []zsetSrc, agg int, emit func([]byte, float64) bool) {
	h := &zsetMergeHeap{srcs: srcs}
	defer func() {
		for _, hd := range h.heads {
			hd.it.Close()
		}
	}()
	for i := range srcs {
		if srcs[i].size() == 0 {
			continue
		}
		it := srcs[i].iter()
		if !it.Valid() {
			it.Close()
			continue
		}
		h.heads = append(h.heads, zsetMergeHead{src: i, it: it})
	}
	heap.Init(h)
	// advance moves the top input to its next member, dropping it when exhausted.
	advance := func() {
		top := &h.heads[0]
		top.it.Next()
		if top.it.Valid() {
			heap.Fix(h, 0)
			return
		}
		top.it.Close()
		heap.Pop(h)
	}
	var member []byte
	for h.Len() > 0 {
		top := h.heads[0]
		m, s := top.it.elem()
		member = append(member[:0], m...)
		score := zsetWeighted(s, srcs[top.src].weight)
		advance()
		for h.Len() > 0 {
			top = h.heads[0]
			m, s = top.it.elem()
			if !bytes.Equal(m, member) {
				break
			}
			zsetAggregate(&score, zsetWeighted(s, srcs[top.src].weight), agg)
			advance()
		}
		if !emit(member, score) {
			return
		}
	}
}
