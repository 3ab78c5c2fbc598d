package cmds

import (
	"bytes"
	"container/heap"
	"math/rand/v2"
	"strconv"

	"shardis/cmdspec"
	"shardis/codec"
	"shardis/datatype"
	"shardis/pubsub"
)

// The set family. A set is a collection meta (count exact) and one data key per member, the
// member being the element part and the value empty (docs/ENCODING.md). Members are therefore
// stored in byte order, which the multi-key commands use: SUNION is a k-way merge and SDIFF a
// merge join, both streaming; SINTER walks the smallest set and probes the others with point
// reads, as Redis does.
//
// Cost note for the random commands (SPOP, SRANDMEMBER): storage keeps no rank index, so
// picking a member uniformly walks the set to a random position, O(N) (N/2 steps on average
// for one member) where Redis is O(1); no more than the reply's members are ever held in
// memory.

func init() {
	Register(
		&Command{Name: "sintercard", Arity: -3, Flags: []string{"readonly"}, ACL: []string{"read", "set", "slow"},
			Group: "set", Since: "7.0.0",
			Summary:    "Intersect multiple sets and return the cardinality of the result",
			Complexity: "O(N*M) worst case where N is the cardinality of the smallest set and M is the number of sets.",
			Syntax:     "numkeys key [key ...] [LIMIT limit]",
			KeySpecs:   []cmdspec.KeySpec{{Flags: cmdspec.RO | cmdspec.Access, Begin: cmdspec.Index(1), Find: cmdspec.KeyNum(0, 1, 1)}},
			Keys:       setNumKeys, Run: sintercardCmd},
		&Command{Name: "sadd", Arity: -3, Flags: []string{"write", "denyoom", "fast"},
			ACL: []string{"write", "set", "fast"}, Group: "set",
			Since: "1.0.0", Summary: "Add one or more members to a set",
			Complexity: "O(1) for each element added, so O(N) to add N elements when the command is called with multiple arguments.",
			Syntax:     "key member [member ...]",
			KeySpecs:   []cmdspec.KeySpec{{Flags: cmdspec.RW | cmdspec.Insert, Begin: cmdspec.Index(1), Find: cmdspec.Range(0, 1, 0)}},
			Traits:     TraitTriesView, Run: sadd},
		&Command{Name: "srem", Arity: -3, Flags: []string{"write", "fast"}, ACL: []string{"write", "set", "fast"},
			Group: "set", Since: "1.0.0",
			Summary:    "Remove one or more members from a set",
			Complexity: "O(N) where N is the number of members to be removed.",
			Syntax:     "key member [member ...]",
			KeySpecs:   []cmdspec.KeySpec{{Flags: cmdspec.RW | cmdspec.Delete, Begin: cmdspec.Index(1), Find: cmdspec.Range(0, 1, 0)}},
			Traits:     TraitTriesView, Run: srem},
		&Command{Name: "scard", Arity: 2, Flags: []string{"readonly", "fast"}, ACL: []string{"read", "set", "fast"},
			Group: "set", Since: "1.0.0",
			Summary: "Get the number of members in a set", Complexity: "O(1)", Syntax: "key",
			KeySpecs: []cmdspec.KeySpec{{Flags: cmdspec.RO, Begin: cmdspec.Index(1), Find: cmdspec.Range(0, 1, 0)}},
			Run:      scard},
		&Command{Name: "sismember", Arity: 3, Flags: []string{"readonly", "fast"}, ACL: []string{"read", "set", "fast"},
			Group: "set", Since: "1.0.0",
			Summary: "Determine if a given value is a member of a set", Complexity: "O(1)",
			Syntax:   "key member",
			KeySpecs: []cmdspec.KeySpec{{Flags: cmdspec.RO, Begin: cmdspec.Index(1), Find: cmdspec.Range(0, 1, 0)}},
			Run:      sismember},
		&Command{Name: "smismember", Arity: -3, Flags: []string{"readonly", "fast"},
			ACL: []string{"read", "set", "fast"}, Group: "set",
			Since: "6.2.0", Summary: "Returns the membership associated with the given elements for a set",
			Complexity: "O(N) where N is the number of elements being checked for membership",
			Syntax:     "key member [member ...]",
			KeySpecs:   []cmdspec.KeySpec{{Flags: cmdspec.RO | cmdspec.Access, Begin: cmdspec.Index(1), Find: cmdspec.Range(0, 1, 0)}},
			Run:        smismember},
		&Command{Name: "smembers", Arity: 2, Flags: []string{"readonly"}, ACL: []string{"read", "set", "slow"},
			Group: "set", Since: "1.0.0",
			Summary: "Get all the members in a set", Complexity: "O(N) where N is the set cardinality.",
			Syntax:   "key",
			KeySpecs: []cmdspec.KeySpec{{Flags: cmdspec.RO | cmdspec.Access, Begin: cmdspec.Index(1), Find: cmdspec.Range(0, 1, 0)}},
			Tips:     []string{"nondeterministic_output_order"}, Run: smembers},
		&Command{Name: "spop", Arity: -2, Flags: []string{"write", "fast"}, ACL: []string{"write", "set", "fast"},
			Group: "set", Since: "1.0.0",
			Summary:    "Remove and return one or multiple random members from a set",
			Complexity: "Without the count argument O(1), otherwise O(N) where N is the value of the passed count.",
			Syntax:     "key [count]",
			KeySpecs:   []cmdspec.KeySpec{{Flags: cmdspec.RW | cmdspec.Access | cmdspec.Delete, Begin: cmdspec.Index(1), Find: cmdspec.Range(0, 1, 0)}},
			Tips:       []string{"nondeterministic_output"}, Run: spop},
		&Command{Name: "srandmember", Arity: -2, Flags: []string{"readonly"}, ACL: []string{"read", "set", "slow"},
			Group: "set", Since: "1.0.0",
			Summary:    "Get one or multiple random members from a set",
			Complexity: "Without the count argument O(1), otherwise O(N) where N is the absolute value of the passed count.",
			Syntax:     "key [count]",
			KeySpecs:   []cmdspec.KeySpec{{Flags: cmdspec.RO | cmdspec.Access, Begin: cmdspec.Index(1), Find: cmdspec.Range(0, 1, 0)}},
			Tips:       []string{"nondeterministic_output"}, Run: srandmember},
		&Command{Name: "smove", Arity: 4, Flags: []string{"write", "fast"}, ACL: []string{"write", "set", "fast"},
			Group: "set", Since: "1.0.0",
			Summary: "Move a member from one set to another", Complexity: "O(1)",
			Syntax: "source destination member",
			KeySpecs: []cmdspec.KeySpec{
				{Flags: cmdspec.RW | cmdspec.Access | cmdspec.Delete, Begin: cmdspec.Index(1), Find: cmdspec.Range(0, 1, 0)},
				{Flags: cmdspec.RW | cmdspec.Insert, Begin: cmdspec.Index(2), Find: cmdspec.Range(0, 1, 0)},
			},
			Run: smove},
		&Command{Name: "sinter", Arity: -2, Flags: []string{"readonly"}, ACL: []string{"read", "set", "slow"},
			Group: "set", Since: "1.0.0",
			Summary:    "Intersect multiple sets",
			Complexity: "O(N*M) worst case where N is the cardinality of the smallest set and M is the number of sets.",
			Syntax:     "key [key ...]",
			KeySpecs:   []cmdspec.KeySpec{{Flags: cmdspec.RO | cmdspec.Access, Begin: cmdspec.Index(1), Find: cmdspec.Range(-1, 1, 0)}},
			Tips:       []string{"nondeterministic_output_order"},
			Run:        func(c *Ctx) { setOpCommand(c, setOpInter, nil) }},
		&Command{Name: "sunion", Arity: -2, Flags: []string{"readonly"}, ACL: []string{"read", "set", "slow"},
			Group: "set", Since: "1.0.0", Summary: "Add multiple sets",
			Complexity: "O(N) where N is the total number of elements in all given sets.",
			Syntax:     "key [key ...]",
			KeySpecs:   []cmdspec.KeySpec{{Flags: cmdspec.RO | cmdspec.Access, Begin: cmdspec.Index(1), Find: cmdspec.Range(-1, 1, 0)}},
			Tips:       []string{"nondeterministic_output_order"},
			Run:        func(c *Ctx) { setOpCommand(c, setOpUnion, nil) }},
		&Command{Name: "sdiff", Arity: -2, Flags: []string{"readonly"}, ACL: []string{"read", "set", "slow"},
			Group: "set", Since: "1.0.0",
			Summary:    "Subtract multiple sets",
			Complexity: "O(N) where N is the total number of elements in all given sets.",
			Syntax:     "key [key ...]",
			KeySpecs:   []cmdspec.KeySpec{{Flags: cmdspec.RO | cmdspec.Access, Begin: cmdspec.Index(1), Find: cmdspec.Range(-1, 1, 0)}},
			Tips:       []string{"nondeterministic_output_order"},
			Run:        func(c *Ctx) { setOpCommand(c, setOpDiff, nil) }},
		&Command{Name: "sinterstore", Arity: -3, Flags: []string{"write", "denyoom"},
			ACL: []string{"write", "set", "slow"}, Group: "set",
			Since: "1.0.0", Summary: "Intersect multiple sets and store the resulting set in a key",
			Complexity: "O(N*M) worst case where N is the cardinality of the smallest set and M is the number of sets.",
			Syntax:     "destination key [key ...]",
			KeySpecs: []cmdspec.KeySpec{
				{Flags: cmdspec.RW | cmdspec.Update, Begin: cmdspec.Index(1), Find: cmdspec.Range(0, 1, 0)},
				{Flags: cmdspec.RO | cmdspec.Access, Begin: cmdspec.Index(2), Find: cmdspec.Range(-1, 1, 0)},
			},
			Run: func(c *Ctx) { setOpCommand(c, setOpInter, c.Args[1]) }},
		&Command{Name: "sunionstore", Arity: -3, Flags: []string{"write", "denyoom"},
			ACL: []string{"write", "set", "slow"}, Group: "set",
			Since: "1.0.0", Summary: "Add multiple sets and store the resulting set in a key",
			Complexity: "O(N) where N is the total number of elements in all given sets.",
			Syntax:     "destination key [key ...]",
			KeySpecs: []cmdspec.KeySpec{
				{Flags: cmdspec.OW | cmdspec.Update, Begin: cmdspec.Index(1), Find: cmdspec.Range(0, 1, 0)},
				{Flags: cmdspec.RO | cmdspec.Access, Begin: cmdspec.Index(2), Find: cmdspec.Range(-1, 1, 0)},
			},
			Run: func(c *Ctx) { setOpCommand(c, setOpUnion, c.Args[1]) }},
		&Command{Name: "sdiffstore", Arity: -3, Flags: []string{"write", "denyoom"},
			ACL: []string{"write", "set", "slow"}, Group: "set",
			Since: "1.0.0", Summary: "Subtract multiple sets and store the resulting set in a key",
			Complexity: "O(N) where N is the total number of elements in all given sets.",
			Syntax:     "destination key [key ...]",
			KeySpecs: []cmdspec.KeySpec{
				{Flags: cmdspec.OW | cmdspec.Update, Begin: cmdspec.Index(1), Find: cmdspec.Range(0, 1, 0)},
				{Flags: cmdspec.RO | cmdspec.Access, Begin: cmdspec.Index(2), Find: cmdspec.Range(-1, 1, 0)},
			},
			Run: func(c *Ctx) { setOpCommand(c, setOpDiff, c.Args[1]) }},
		&Command{Name: "sscan", Arity: -3, Flags: []string{"readonly"}, ACL: []string{"read", "set", "slow"},
			Group: "set", Since: "2.8.0",
			Summary:    "Incrementally iterate Set elements",
			Complexity: "O(1) for every call. O(N) for a complete iteration, including enough command calls for the cursor to return back to 0. N is the number of elements inside the collection..",
			Syntax:     "key cursor [MATCH pattern] [COUNT count]",
			KeySpecs:   []cmdspec.KeySpec{{Flags: cmdspec.RO | cmdspec.Access, Begin: cmdspec.Index(1), Find: cmdspec.Range(0, 1, 0)}},
			Tips:       []string{"nondeterministic_output"}, Run: sscan},
	)
}

// Binlog command names of the set family.
var (
	setSADD = []byte("SADD")
	setSREM = []byte("SREM")
)

const (
	errSetPositive = "ERR value is out of range, must be positive"
	errSetRandRng  = "ERR value is out of range, value must between -9223372036854775807 and 9223372036854775807"
	errSetNumkeys  = "ERR numkeys should be greater than 0"
	errSetTooMany  = "ERR Number of keys can't be greater than number of args"
	errSetLimit    = "ERR LIMIT can't be negative"
)

// setOpen opens the set at key; ok is false after the WRONGTYPE reply.
func setOpen(c *Ctx, key []byte) (s datatype.Set, ok bool) {
	s, err := datatype.LookupSet(c.Tx, c.DB, key)
	if err != nil {
		c.typeError(err)
		return s, false
	}
	return s, true
}

// setLog logs name key members... in records of at most dumpChunk members.
func (c *Ctx) setLog(name, key []byte, members [][]byte) {
	for len(members) > 0 {
		n := min(len(members), dumpChunk)
		args := make([][]byte, 0, n+2)
		args = append(args, name, key)
		args = append(args, members[:n]...)
		c.Tx.LogItems(c.DB, key, args...)
		members = members[n:]
	}
}

func sadd(c *Ctx) {
	key := c.Args[1]
	s, ok := setOpen(c, key)
	if !ok {
		return
	}
	var added [][]byte
	for _, member := range c.Args[2:] {
		if s.Add(member) {
			added = append(added, member)
		}
	}
	if len(added) > 0 {
		c.notifySaved(s.Save(), key, pubsub.Set, "sadd")
		c.setLog(setSADD, key, added)
	}
	c.W.Int(int64(len(added)))
}

func srem(c *Ctx) {
	key := c.Args[1]
	s, ok := setOpen(c, key)
	if !ok {
		return
	}
	if !s.Exists() {
		c.W.Int(0)
		return
	}
	var removed [][]byte
	for _, member := range c.Args[2:] {
		if s.Remove(member) {
			removed = append(removed, member)
		}
	}
	if len(removed) > 0 {
		c.notifySaved(s.Save(), key, pubsub.Set, "srem")
		c.setLog(setSREM, key, removed)
	}
	c.W.Int(int64(len(removed)))
}

func scard(c *Ctx) {
	s, ok := setOpen(c, c.Args[1])
	if ok {
		c.W.Int(s.Len()) // zero for a missing key
	}
}

func sismember(c *Ctx) {
	s, ok := setOpen(c, c.Args[1])
	if ok {
		c.W.Int(setBool(s.Has(c.Args[2])))
	}
}

func smismember(c *Ctx) {
	s, ok := setOpen(c, c.Args[1])
	if !ok {
		return
	}
	members := c.Args[2:]
	c.W.ArrayLen(len(members))
	for _, member := range members {
		c.W.Int(setBool(s.Has(member)))
	}
}

func setBool(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

// emitMember writes one member of SMEMBERS to a stream.
func emitMember(w *codec.Writer, member, _ []byte) { w.Bulk(member) }

func smembers(c *Ctx) {
	s, ok := setOpen(c, c.Args[1])
	if !ok {
		return
	}
	if !s.Exists() {
		c.W.SetLen(0)
		return
	}
	n := int(s.Len())
	c.W.SetLen(n)
	if c.streamable(n) {
		c.sendStream(s.Stream(emitMember))
		return
	}
	setReplyAll(c, &s)
}

// setReplyAll writes every member of s, without a header.
func setReplyAll(c *Ctx, s *datatype.Set) {
	it := s.Iter(nil)
	for ; it.Valid(); it.Next() {
		c.W.Bulk(it.Member())
	}
	it.Close()
}

// ---- random members ----

// setRepeatSample replies k members of set s drawn independently (repeats allowed), as
// SRANDMEMBER with a negative count. When k >= the set's size the reply outweighs the set, so
// the set is read once; otherwise only the drawn positions are kept.
func setRepeatSample(c *Ctx, s *datatype.Set, k uint64) {
	if k >= uint64(s.Len()) {
		all := s.Members()
		c.W.ArrayLen(int(k))
		for i := range k {
			if i%randCheckEvery == 0 && c.ReplyOverLimit() {
				return // k is the client's number: the reply stops where it gets it dropped
			}
			c.W.Bulk(all[rand.IntN(len(all))])
		}
		return
	}
	out := s.Draw(k)
	c.W.ArrayLen(len(out))
	for _, member := range out {
		c.W.Bulk(member)
	}
}

// spop pops random members. Its binlog record is the effect: SREM of the members popped, or
// DEL when the whole set went. Cost: O(N) walk to the random positions (see datatype.Set.At),
// where Redis is O(1) per member; popping the whole set is one pass.
func spop(c *Ctx) {
	key := c.Args[1]
	if len(c.Args) > 3 {
		c.Error(ErrSyntax)
		return
	}
	if len(c.Args) == 3 {
		spopCount(c)
		return
	}
	s, ok := setOpen(c, key)
	if !ok {
		return
	}
	if !s.Exists() {
		c.W.Null()
		return
	}
	member := s.Random()
	c.notify(pubsub.Set, "spop", key) // before the reply, as Redis
	c.W.Bulk(member)
	if s.Len() == 1 {
		s.Drop()
		c.Tx.Log(c.DB, key, keysDEL, key)
		c.notify(pubsub.Generic, "del", key)
		return
	}
	s.Remove(member)
	s.Save()
	c.Tx.Log(c.DB, key, setSREM, key, member)
}

func spopCount(c *Ctx) {
	key := c.Args[1]
	n, ok := codec.ParseInt(c.Args[2])
	if !ok || n < 0 {
		c.Error(errSetPositive)
		return
	}
	s, ok := setOpen(c, key)
	if !ok {
		return
	}
	if !s.Exists() || n == 0 {
		c.W.SetLen(0)
		return
	}
	count := uint64(n)
	c.notify(pubsub.Set, "spop", key) // before the reply, as Redis
	if count >= uint64(s.Len()) {
		// The whole set goes: reply it as it streams by, then drop the key.
		c.W.SetLen(int(s.Len()))
		setReplyAll(c, &s)
		s.Drop()
		c.Tx.Log(c.DB, key, keysDEL, key)
		c.notify(pubsub.Generic, "del", key)
		return
	}
	popped := s.Sample(count)
	c.W.SetLen(len(popped))
	for _, member := range popped {
		c.W.Bulk(member)
		s.Remove(member)
	}
	s.Save()
	c.setLog(setSREM, key, popped)
}

// srandmember replies random members without changing the set. Cost: as SPOP, a walk to the
// drawn positions, O(N) where Redis is O(1) per member; it holds only the reply's members.
func srandmember(c *Ctx) {
	key := c.Args[1]
	if len(c.Args) > 3 {
		c.Error(ErrSyntax)
		return
	}
	if len(c.Args) == 2 {
		s, ok := setOpen(c, key)
		switch {
		case !ok:
		case !s.Exists():
			c.W.Null()
		default:
			c.W.Bulk(s.Random())
		}
		return
	}
	n, ok := c.IntArg(2)
	if !ok {
		return
	}
	if n == -1<<63 {
		c.Error(errSetRandRng)
		return
	}
	s, ok := setOpen(c, key)
	if !ok {
		return
	}
	if !s.Exists() || n == 0 {
		c.W.ArrayLen(0)
		return
	}
	switch {
	case n < 0:
		setRepeatSample(c, &s, uint64(-n))
	case n >= s.Len():
		c.W.ArrayLen(int(s.Len()))
		setReplyAll(c, &s)
	default:
		picked := s.Sample(uint64(n))
		c.W.ArrayLen(len(picked))
		for _, member := range picked {
			c.W.Bulk(member)
		}
	}
}

// smove logs the removal from the source and the addition to the destination as separate
// records, each in its key's shard.
func smove(c *Ctx) {
	src, dst, member := c.Args[1], c.Args[2], c.Args[3]
	ss, srcErr := datatype.LookupSet(c.Tx, c.DB, src)
	ds, dstErr := datatype.LookupSet(c.Tx, c.DB, dst)
	if srcErr == nil && !ss.Exists() {
		c.W.Int(0)
		return
	}
	if srcErr != nil {
		c.typeError(srcErr)
		return
	}
	if dstErr != nil {
		c.typeError(dstErr)
		return
	}
	if string(src) == string(dst) {
		c.W.Int(setBool(ss.Has(member)))
		return
	}
	if !ss.Remove(member) {
		c.W.Int(0)
		return
	}
	c.notifySaved(ss.Save(), src, pubsub.Set, "srem")
	c.Tx.Log(c.DB, src, setSREM, src, member)
	if ds.Add(member) {
		c.notifySaved(ds.Save(), dst, pubsub.Set, "sadd")
		c.Tx.Log(c.DB, dst, setSADD, dst, member)
	}
	c.W.Int(1)
}

// ---- SINTER, SUNION, SDIFF and their STORE forms ----

type setOp uint8

const (
	setOpInter setOp = iota
	setOpUnion
	setOpDiff
)

// setStoreEvents are the keyspace events of the STORE forms, by operation.
var setStoreEvents = [...]string{setOpInter: "sinterstore", setOpUnion: "sunionstore", setOpDiff: "sdiffstore"}

// setLoadSources opens the sets at keys, replying WRONGTYPE (and returning false) when any of
// them holds another type, as Redis checks every key before computing anything.
func (c *Ctx) setLoadSources(keys [][]byte) ([]datatype.Set, bool) {
	srcs := make([]datatype.Set, len(keys))
	for i, key := range keys {
		m, exists := c.Tx.MetaRead(c.DB, key) // a read lookup, also for the STORE forms
		s, err := datatype.SetFromMeta(c.Tx, c.DB, key, m, exists)
		if err != nil {
			c.typeError(err)
			return nil, false
		}
		srcs[i] = s
	}
	return srcs, true
}

// setCompute streams the result of op over srcs to emit, in no particular order, until emit
// returns false. The member passed to emit is valid only during the call.
func setCompute(op setOp, srcs []datatype.Set, emit func(member []byte) bool) {
	switch op {
	case setOpInter:
		setInter(srcs, emit)
	case setOpUnion:
		setUnion(srcs, emit)
	case setOpDiff:
		setDiff(srcs, emit)
	}
}

// setInter walks the smallest set and probes the others with point reads.
func setInter(srcs []datatype.Set, emit func([]byte) bool) {
	small := 0
	for i := range srcs {
		if !srcs[i].Exists() {
			return // the intersection with an empty set
		}
		if srcs[i].Len() < srcs[small].Len() {
			small = i
		}
	}
	var probes []*datatype.Set
	for i := range srcs {
		if i != small && string(srcs[i].Key()) != string(srcs[small].Key()) {
			probes = append(probes, &srcs[i])
		}
	}
	it := srcs[small].Iter(nil)
	defer it.Close()
next:
	for ; it.Valid(); it.Next() {
		member := it.Member()
		for _, p := range probes {
			if !p.Has(member) {
				continue next
			}
		}
		if !emit(member) {
			return
		}
	}
}

// setMergeHeap orders the current members of several set iterators (a k-way merge).
type setMergeHeap []datatype.SetIter

func (h setMergeHeap) Len() int           { return len(h) }
func (h setMergeHeap) Less(i, j int) bool { return bytes.Compare(h[i].Member(), h[j].Member()) < 0 }
func (h setMergeHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *setMergeHeap) Push(x any)        { *h = append(*h, x.(datatype.SetIter)) }
func (h *setMergeHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// setUnion merges the sets' ordered members, emitting each distinct member once.
func setUnion(srcs []datatype.Set, emit func([]byte) bool) {
	var h setMergeHeap
	var all []datatype.SetIter
	defer func() {
		for _, it := range all {
			it.Close()
		}
	}()
	for i := range srcs {
		if !srcs[i].Exists() {
			continue
		}
		it := srcs[i].Iter(nil)
		all = append(all, it)
		if it.Valid() {
			h = append(h, it)
		}
	}
	heap.Init(&h)
	var cur []byte
	for len(h) > 0 {
		cur = append(cur[:0], h[0].Member()...)
		if !emit(cur) {
			return
		}
		for len(h) > 0 && bytes.Equal(h[0].Member(), cur) {
			h[0].Next()
			if h[0].Valid() {
				heap.Fix(&h, 0)
			} else {
				heap.Pop(&h)
			}
		}
	}
}

// setDiffLag is how many steps a lagging iterator of SDIFF takes before it seeks instead: a
// few steps are cheaper than a seek when the sets interleave, a seek is cheaper across a gap.
const setDiffLag = 8

// setDiff walks the first set and moves an iterator over each other set along with it (a
// merge join), emitting the members none of the others has.
func setDiff(srcs []datatype.Set, emit func([]byte) bool) {
	if !srcs[0].Exists() {
		return
	}
	var others []datatype.SetIter
	defer func() {
		for _, o := range others {
			o.Close()
		}
	}()
	for i := 1; i < len(srcs); i++ {
		if !srcs[i].Exists() {
			continue
		}
		it := srcs[i].Iter(nil)
		if !it.Valid() {
			it.Close()
			continue
		}
		others = append(others, it)
	}
	it := srcs[0].Iter(nil)
	defer it.Close()
	for ; it.Valid(); it.Next() {
		member := it.Member()
		found := false
		for _, o := range others {
			for steps := 0; o.Valid(); steps++ {
				cmp := bytes.Compare(o.Member(), member)
				if cmp >= 0 {
					found = cmp == 0
					break
				}
				if steps < setDiffLag {
					o.Next()
				} else {
					o.Seek(member)
				}
			}
			if found {
				break
			}
		}
		if !found && !emit(member) {
			return
		}
	}
}

// setOpCommand runs SINTER/SUNION/SDIFF (dst nil) or their STORE forms (dst: the destination,
// overwritten whatever its type; the sources follow it).
func setOpCommand(c *Ctx, op setOp, dst []byte) {
	keys := c.Args[1:]
	if dst != nil {
		keys = c.Args[2:]
	}
	srcs, ok := c.setLoadSources(keys)
	if !ok {
		return
	}
	if dst == nil {
		reply := c.setDeferredLen()
		setCompute(op, srcs, func(member []byte) bool {
			c.W.Bulk(member)
			reply.n++
			return true
		})
		reply.finish()
		return
	}
	// The result goes to a new version of dst: sources (dst among them, maybe) are read at
	// their own versions, so writing while reading is safe, and the old dst is dropped when the
	// new meta is written.
	out := datatype.NewSet(c.Tx, c.DB, dst)
	setCompute(op, srcs, func(member []byte) bool {
		out.AddNew(member) // the operations emit each member once
		return true
	})
	if out.Len() == 0 {
		// Redis replies, then reports the "del", except for SINTERSTORE with a missing
		// source, which it answers only after.
		delFirst := false
		for i := range srcs {
			delFirst = delFirst || op == setOpInter && !srcs[i].Exists()
		}
		if !delFirst {
			c.W.Int(0)
		}
		if out.Save() {
			c.Tx.Log(c.DB, dst, keysDEL, dst)
			c.notify(pubsub.Generic, "del", dst)
		}
		if delFirst {
			c.W.Int(0)
		}
		return
	}
	out.Save()
	c.logCollection(c.DB, dst, out.Meta())
	c.W.Int(out.Len())
	c.notify(pubsub.Set, setStoreEvents[op], dst)
}

// setDeferred is a set reply whose length is learned while its elements are written.
type setDeferred struct {
	c     *Ctx
	start int
	n     int
}

func (c *Ctx) setDeferredLen() *setDeferred { return &setDeferred{c: c, start: len(c.W.Buf)} }

// finish puts the set header in front of the elements written since the reply started.
func (d *setDeferred) finish() {
	hdr := codec.Writer{RESP3: d.c.W.RESP3}
	hdr.SetLen(d.n)
	buf := append(d.c.W.Buf, hdr.Buf...)
	copy(buf[d.start+len(hdr.Buf):], buf[d.start:len(buf)-len(hdr.Buf)])
	copy(buf[d.start:], hdr.Buf)
	d.c.W.Buf = buf
}

// setNumKeys returns the keys of SINTERCARD numkeys key [key ...]: none when numkeys is not
// a valid count of the arguments that follow it.
func setNumKeys(args [][]byte) [][]byte {
	if len(args) < 3 {
		return nil
	}
	n, ok := codec.ParseInt(args[1])
	if !ok || n < 1 || n > int64(len(args)-2) {
		return nil
	}
	return args[2 : 2+n]
}

func sintercardCmd(c *Ctx) {
	n, ok := codec.ParseInt(c.Args[1])
	if !ok || n < 1 {
		c.Error(errSetNumkeys)
		return
	}
	if n > int64(len(c.Args)-2) {
		c.Error(errSetTooMany)
		return
	}
	limit := int64(0)
	for i := 2 + int(n); i < len(c.Args); i++ {
		if EqualFold(c.Args[i], "limit") && i+1 < len(c.Args) {
			i++
			v, ok := codec.ParseInt(c.Args[i])
			if !ok || v < 0 {
				c.Error(errSetLimit)
				return
			}
			limit = v
			continue
		}
		c.Error(ErrSyntax)
		return
	}
	srcs, ok := c.setLoadSources(c.Args[2 : 2+n])
	if !ok {
		return
	}
	count := int64(0)
	setInter(srcs, func([]byte) bool {
		count++
		return limit == 0 || count < limit
	})
	c.W.Int(count)
}

// ---- SSCAN ----

// setScanTag starts every SSCAN position saved in the cursor table.
const setScanTag = 's'

// sscan iterates in member order. The cursor names the last member returned (kept by
// c.Keyspace.Cursors); an unknown cursor restarts the scan, which SCAN's guarantees allow.
func sscan(c *Ctx) {
	cursor, ok := keysParseCursor(c.Args[2])
	if !ok {
		c.Error(errKeysCursor)
		return
	}
	s, ok := setOpen(c, c.Args[1])
	if !ok {
		return
	}
	if !s.Exists() {
		setScanReply(c, 0, nil)
		return
	}
	count, match, _, ok := scanOptions(c, 3, false)
	if !ok {
		return
	}
	var lower []byte
	if cursor != 0 {
		// A position is setScanTag then the last member visited (the tag keeps the empty
		// member apart from "no position"); the scan resumes right after that member.
		if _, pos := c.Keyspace.Cursors.Load(cursor); len(pos) > 0 && pos[0] == setScanTag {
			lower = append(append(make([]byte, 0, len(pos)), pos[1:]...), 0)
		}
	}
	var found [][]byte
	last := []byte{setScanTag}
	more := false
	it := s.Iter(lower)
	for visited := int64(0); it.Valid(); it.Next() {
		if visited == count {
			more = true
			break
		}
		visited++
		member := it.Member()
		last = append(last[:1], member...)
		if match(member) {
			found = append(found, bytes.Clone(member))
		}
	}
	it.Close()
	next := uint64(0)
	if more {
		next = c.Keyspace.Cursors.Save(0, last)
	}
	setScanReply(c, next, found)
}

func setScanReply(c *Ctx, cursor uint64, members [][]byte) {
	c.W.ArrayLen(2)
	c.W.Bulk(strconv.AppendUint(nil, cursor, 10))
	c.W.ArrayLen(len(members))
	for _, member := range members {
		c.W.Bulk(member)
	}
}
