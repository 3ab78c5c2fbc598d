package cmds

import (
	"bytes"

	"shardis/cmdspec"
	"shardis/codec"
	"shardis/datatype"
	"shardis/pubsub"
)

// The list family: arguments, replies, binlog records and events. The list itself (positions,
// pushes, pops, the shifts of LINSERT and LREM, LTRIM's copy) is datatype.List.

func init() {
	Register(
		&Command{Name: "lmpop", Arity: -4, Flags: []string{"write"}, ACL: []string{"write", "list", "slow"},
			Group: "list", Since: "7.0.0", Summary: "Pop elements from a list",
			Complexity: "O(N+M) where N is the number of provided keys and M is the number of elements returned.",
			Syntax:     "numkeys key [key ...] <LEFT | RIGHT> [COUNT count]",
			KeySpecs:   []cmdspec.KeySpec{{Flags: cmdspec.RW | cmdspec.Access | cmdspec.Delete, Begin: cmdspec.Index(1), Find: cmdspec.KeyNum(0, 1, 1)}},
			Keys:       listMPopKeys, Run: lmpopCmd},
		&Command{Name: "lpush", Arity: -3, Flags: []string{"write", "denyoom", "fast"},
			ACL: []string{"write", "list", "fast"}, Group: "list",
			Since: "1.0.0", Summary: "Prepend one or multiple elements to a list",
			Complexity: "O(1) for each element added, so O(N) to add N elements when the command is called with multiple arguments.",
			Syntax:     "key element [element ...]",
			KeySpecs:   []cmdspec.KeySpec{{Flags: cmdspec.RW | cmdspec.Insert, Begin: cmdspec.Index(1), Find: cmdspec.Range(0, 1, 0)}},
			Run:        func(c *Ctx) { listPush(c, true, false) }},
		&Command{Name: "rpush", Arity: -3, Flags: []string{"write", "denyoom", "fast"},
			ACL: []string{"write", "list", "fast"}, Group: "list",
			Since: "1.0.0", Summary: "Append one or multiple elements to a list",
			Complexity: "O(1) for each element added, so O(N) to add N elements when the command is called with multiple arguments.",
			Syntax:     "key element [element ...]",
			KeySpecs:   []cmdspec.KeySpec{{Flags: cmdspec.RW | cmdspec.Insert, Begin: cmdspec.Index(1), Find: cmdspec.Range(0, 1, 0)}},
			Run:        func(c *Ctx) { listPush(c, false, false) }},
		&Command{Name: "lpushx", Arity: -3, Flags: []string{"write", "denyoom", "fast"},
			ACL: []string{"write", "list", "fast"}, Group: "list",
			Since: "2.2.0", Summary: "Prepend an element to a list, only if the list exists",
			Complexity: "O(1) for each element added, so O(N) to add N elements when the command is called with multiple arguments.",
			Syntax:     "key element [element ...]",
			KeySpecs:   []cmdspec.KeySpec{{Flags: cmdspec.RW | cmdspec.Insert, Begin: cmdspec.Index(1), Find: cmdspec.Range(0, 1, 0)}},
			Run:        func(c *Ctx) { listPush(c, true, true) }},
		&Command{Name: "rpushx", Arity: -3, Flags: []string{"write", "denyoom", "fast"},
			ACL: []string{"write", "list", "fast"}, Group: "list",
			Since: "2.2.0", Summary: "Append an element to a list, only if the list exists",
			Complexity: "O(1) for each element added, so O(N) to add N elements when the command is called with multiple arguments.",
			Syntax:     "key element [element ...]",
			KeySpecs:   []cmdspec.KeySpec{{Flags: cmdspec.RW | cmdspec.Insert, Begin: cmdspec.Index(1), Find: cmdspec.Range(0, 1, 0)}},
			Run:        func(c *Ctx) { listPush(c, false, true) }},
		&Command{Name: "lpop", Arity: -2, Flags: []string{"write", "fast"}, ACL: []string{"write", "list", "fast"},
			Group: "list", Since: "1.0.0",
			Summary:    "Remove and get the first elements in a list",
			Complexity: "O(N) where N is the number of elements returned", Syntax: "key [count]",
			KeySpecs: []cmdspec.KeySpec{{Flags: cmdspec.RW | cmdspec.Access | cmdspec.Delete, Begin: cmdspec.Index(1), Find: cmdspec.Range(0, 1, 0)}},
			Run:      func(c *Ctx) { listPopCmd(c, "lpop", true) }},
		&Command{Name: "rpop", Arity: -2, Flags: []string{"write", "fast"}, ACL: []string{"write", "list", "fast"},
			Group: "list", Since: "1.0.0",
			Summary:    "Remove and get the last elements in a list",
			Complexity: "O(N) where N is the number of elements returned", Syntax: "key [count]",
			KeySpecs: []cmdspec.KeySpec{{Flags: cmdspec.RW | cmdspec.Access | cmdspec.Delete, Begin: cmdspec.Index(1), Find: cmdspec.Range(0, 1, 0)}},
			Run:      func(c *Ctx) { listPopCmd(c, "rpop", false) }},
		&Command{Name: "llen", Arity: 2, Flags: []string{"readonly", "fast"}, ACL: []string{"read", "list", "fast"},
			Group: "list", Since: "1.0.0",
			Summary: "Get the length of a list", Complexity: "O(1)", Syntax: "key",
			KeySpecs: []cmdspec.KeySpec{{Flags: cmdspec.RO, Begin: cmdspec.Index(1), Find: cmdspec.Range(0, 1, 0)}},
			Run:      llenCmd},
		&Command{Name: "lrange", Arity: 4, Flags: []string{"readonly"}, ACL: []string{"read", "list", "slow"},
			Group: "list", Since: "1.0.0",
			Summary:    "Get a range of elements from a list",
			Complexity: "O(S+N) where S is the distance of start offset from HEAD for small lists, from nearest end (HEAD or TAIL) for large lists; and N is the number of elements in the specified range.",
			Syntax:     "key start stop",
			KeySpecs:   []cmdspec.KeySpec{{Flags: cmdspec.RO | cmdspec.Access, Begin: cmdspec.Index(1), Find: cmdspec.Range(0, 1, 0)}},
			Run:        lrangeCmd},
		&Command{Name: "lindex", Arity: 3, Flags: []string{"readonly"}, ACL: []string{"read", "list", "slow"},
			Group: "list", Since: "1.0.0",
			Summary:    "Get an element from a list by its index",
			Complexity: "O(N) where N is the number of elements to traverse to get to the element at index. This makes asking for the first or the last element of the list O(1).",
			Syntax:     "key index",
			KeySpecs:   []cmdspec.KeySpec{{Flags: cmdspec.RO | cmdspec.Access, Begin: cmdspec.Index(1), Find: cmdspec.Range(0, 1, 0)}},
			Run:        lindexCmd},
		&Command{Name: "lset", Arity: 4, Flags: []string{"write", "denyoom"}, ACL: []string{"write", "list", "slow"},
			Group: "list", Since: "1.0.0",
			Summary:    "Set the value of an element in a list by its index",
			Complexity: "O(N) where N is the length of the list. Setting either the first or the last element of the list is O(1).",
			Syntax:     "key index element",
			KeySpecs:   []cmdspec.KeySpec{{Flags: cmdspec.RW | cmdspec.Update, Begin: cmdspec.Index(1), Find: cmdspec.Range(0, 1, 0)}},
			Run:        lsetCmd},
		&Command{Name: "linsert", Arity: 5, Flags: []string{"write", "denyoom"}, ACL: []string{"write", "list", "slow"},
			Group: "list", Since: "2.2.0",
			Summary:    "Insert an element before or after another element in a list",
			Complexity: "O(N) where N is the number of elements to traverse before seeing the value pivot. This means that inserting somewhere on the left end on the list (head) can be considered O(1) and inserting somewhere on the right end (tail) is O(N).",
			Syntax:     "key <BEFORE | AFTER> pivot element",
			KeySpecs:   []cmdspec.KeySpec{{Flags: cmdspec.RW | cmdspec.Insert, Begin: cmdspec.Index(1), Find: cmdspec.Range(0, 1, 0)}},
			Run:        linsertCmd},
		&Command{Name: "lrem", Arity: 4, Flags: []string{"write"}, ACL: []string{"write", "list", "slow"}, Group: "list", Since: "1.0.0", Summary: "Remove elements from a list",
			Complexity: "O(N+M) where N is the length of the list and M is the number of elements removed.",
			Syntax:     "key count element",
			KeySpecs:   []cmdspec.KeySpec{{Flags: cmdspec.RW | cmdspec.Delete, Begin: cmdspec.Index(1), Find: cmdspec.Range(0, 1, 0)}},
			Run:        lremCmd},
		&Command{Name: "ltrim", Arity: 4, Flags: []string{"write"}, ACL: []string{"write", "list", "slow"}, Group: "list", Since: "1.0.0",
			Summary:    "Trim a list to the specified range",
			Complexity: "O(N) where N is the number of elements to be removed by the operation.",
			Syntax:     "key start stop",
			KeySpecs:   []cmdspec.KeySpec{{Flags: cmdspec.RW | cmdspec.Delete, Begin: cmdspec.Index(1), Find: cmdspec.Range(0, 1, 0)}},
			Run:        ltrimCmd},
		&Command{Name: "lpos", Arity: -3, Flags: []string{"readonly"}, ACL: []string{"read", "list", "slow"},
			Group: "list", Since: "6.0.6",
			Summary:    "Return the index of matching elements on a list",
			Complexity: "O(N) where N is the number of elements in the list, for the average case. When searching for elements near the head or the tail of the list, or when the MAXLEN option is provided, the command may run in constant time.",
			Syntax:     "key element [RANK rank] [COUNT num-matches] [MAXLEN len]",
			KeySpecs:   []cmdspec.KeySpec{{Flags: cmdspec.RO | cmdspec.Access, Begin: cmdspec.Index(1), Find: cmdspec.Range(0, 1, 0)}},
			Run:        lposCmd},
		&Command{Name: "lmove", Arity: 5, Flags: []string{"write", "denyoom"}, ACL: []string{"write", "list", "slow"},
			Group: "list", Since: "6.2.0",
			Summary: "Pop an element from a list, push it to another list and return it", Complexity: "O(1)",
			Syntax: "source destination <LEFT | RIGHT> <LEFT | RIGHT>",
			KeySpecs: []cmdspec.KeySpec{
				{Flags: cmdspec.RW | cmdspec.Access | cmdspec.Delete, Begin: cmdspec.Index(1), Find: cmdspec.Range(0, 1, 0)},
				{Flags: cmdspec.RW | cmdspec.Insert, Begin: cmdspec.Index(2), Find: cmdspec.Range(0, 1, 0)},
			},
			Run: lmoveCmd},
		&Command{Name: "rpoplpush", Arity: 3, Flags: []string{"write", "denyoom"},
			ACL: []string{"write", "list", "slow"}, Group: "list",
			Since:      "1.2.0",
			Summary:    "Remove the last element in a list, prepend it to another list and return it",
			Complexity: "O(1)", DocFlags: []string{"deprecated"}, DeprecatedSince: "6.2.0",
			ReplacedBy: "`LMOVE` with the `RIGHT` and `LEFT` arguments", Syntax: "source destination",
			KeySpecs: []cmdspec.KeySpec{
				{Flags: cmdspec.RW | cmdspec.Access | cmdspec.Delete, Begin: cmdspec.Index(1), Find: cmdspec.Range(0, 1, 0)},
				{Flags: cmdspec.RW | cmdspec.Insert, Begin: cmdspec.Index(2), Find: cmdspec.Range(0, 1, 0)},
			},
			Run: func(c *Ctx) { listMove(c, false, true) }},
	)
}

// Binlog command names of the list family.
var (
	listLPUSH   = []byte("LPUSH")
	listRPUSH   = []byte("RPUSH")
	listLPOP    = []byte("LPOP")
	listRPOP    = []byte("RPOP")
	listLSET    = []byte("LSET")
	listLINSERT = []byte("LINSERT")
	listLREM    = []byte("LREM")
	listLTRIM   = []byte("LTRIM")
)

const (
	errListPositive   = "ERR value is out of range, must be positive"
	errListIndexRange = "ERR index out of range"
	errListRankZero   = "ERR RANK can't be zero: use 1 to start from the first match, 2 from the second ... or use negative to start from the end of the list"
	errListCountNeg   = "ERR COUNT can't be negative"
	errListMaxLenNeg  = "ERR MAXLEN can't be negative"
	errListNumKeys    = "ERR numkeys should be greater than 0"
	errListCountZero  = "ERR count should be greater than 0"
)

// listOpen opens the list at key; ok is false after the WRONGTYPE reply.
func listOpen(c *Ctx, key []byte) (l datatype.List, ok bool) {
	l, err := datatype.LookupList(c.Tx, c.DB, key)
	if err != nil {
		c.typeError(err)
		return l, false
	}
	return l, true
}

// listPopReply writes the n elements a pop removes from l as an array, in pop order.
func listPopReply(c *Ctx, l *datatype.List, n uint64, left bool) {
	c.W.ArrayLen(int(n))
	sent := l.Pop(n, left, func(val []byte) { c.W.Bulk(val) })
	for ; sent < n; sent++ { // a hole would be corruption; keep the reply well formed anyway
		c.W.Bulk(nil)
	}
}

// listIndexRange converts Redis's inclusive start/stop (negative from the end) to an offset
// and length within a list of llen elements, as addListRangeReply and LTRIM do.
func listIndexRange(llen, start, stop int64) (off, n int64) {
	if start < 0 {
		start += llen
	}
	if stop < 0 {
		stop += llen
	}
	if start < 0 {
		start = 0
	}
	if start > stop || start >= llen {
		return 0, 0
	}
	if stop >= llen {
		stop = llen - 1
	}
	return start, stop - start + 1
}

// listWhere parses LEFT / RIGHT, replying a syntax error otherwise.
func listWhere(c *Ctx, arg []byte) (left, ok bool) {
	switch {
	case EqualFold(arg, "left"):
		return true, true
	case EqualFold(arg, "right"):
		return false, true
	}
	c.Error(ErrSyntax)
	return false, false
}

// listPush is LPUSH / RPUSH and, with onlyExisting, LPUSHX / RPUSHX. It logs itself as
// LPUSH/RPUSH: the X forms only differ on a missing key, where nothing is written.
func listPush(c *Ctx, left, onlyExisting bool) {
	key := c.Args[1]
	l, ok := listOpen(c, key)
	if !ok {
		return
	}
	if !l.Exists() && onlyExisting {
		c.W.Int(0)
		return
	}
	for _, e := range c.Args[2:] {
		l.Push(e, left)
	}
	l.Save()
	name := listRPUSH
	if left {
		name = listLPUSH
	}
	c.Tx.LogItems(c.DB, key, append([][]byte{name}, c.Args[1:]...)...)
	c.W.Int(l.Len())
	c.notify(pubsub.List, listEvent(left, "lpush", "rpush"), key) // after the reply, as Redis
}

// listPopCmd is LPOP / RPOP key [count]: a bulk (null) without count, an array (null array for
// a missing key) with one. It logs the number of elements actually popped.
func listPopCmd(c *Ctx, name string, left bool) {
	if len(c.Args) > 3 {
		c.Error("ERR wrong number of arguments for '" + name + "' command")
		return
	}
	hasCount := len(c.Args) == 3
	var count int64
	if hasCount {
		v, ok := codec.ParseInt(c.Args[2])
		if !ok || v < 0 {
			c.Error(errListPositive)
			return
		}
		count = v
	}
	key := c.Args[1]
	l, ok := listOpen(c, key)
	exists := l.Exists()
	switch {
	case !ok:
		return
	case !exists && hasCount:
		c.W.NullArray()
		return
	case !exists:
		c.W.Null()
		return
	case hasCount && count == 0:
		c.W.ArrayLen(0)
		return
	}
	logName := listRPOP
	if left {
		logName = listLPOP
	}
	event := listEvent(left, "lpop", "rpop")
	if !hasCount {
		c.W.Bulk(l.PopOne(left))
		c.notifySaved(l.Save(), key, pubsub.List, event)
		c.Tx.Log(c.DB, key, logName, key)
		return
	}
	n := min(uint64(count), uint64(l.Len()))
	listPopReply(c, &l, n, left)
	c.notifySaved(l.Save(), key, pubsub.List, event)
	c.Tx.Log(c.DB, key, logName, key, itoa(int64(n)))
}

func llenCmd(c *Ctx) {
	l, ok := listOpen(c, c.Args[1])
	if ok {
		c.W.Int(l.Len()) // zero for a missing key
	}
}

// lrangeCmd streams the range straight from position Head+start: O(N) in the elements
// returned, with no walk to the start.
func lrangeCmd(c *Ctx) {
	start, ok := c.IntArg(2)
	if !ok {
		return
	}
	stop, ok := c.IntArg(3)
	if !ok {
		return
	}
	l, ok := listOpen(c, c.Args[1])
	if !ok {
		return
	}
	if !l.Exists() {
		c.W.ArrayLen(0)
		return
	}
	off, n := listIndexRange(l.Len(), start, stop)
	if n == 0 {
		c.W.ArrayLen(0)
		return
	}
	c.W.ArrayLen(int(n))
	if c.streamable(int(n)) {
		c.sendStream(l.Stream(off, n, emitListElem))
		return
	}
	sent := l.Range(off, n, false, func(val []byte) bool {
		c.W.Bulk(val)
		return true
	})
	for ; sent < n; sent++ { // a hole would be corruption; keep the reply well formed anyway
		c.W.Bulk(nil)
	}
}

// emitListElem writes one element of LRANGE to a stream.
func emitListElem(w *codec.Writer, _, val []byte) { w.Bulk(val) }

// lindexCmd is one point read of position Head+index: O(1) here.
func lindexCmd(c *Ctx) {
	l, ok := listOpen(c, c.Args[1])
	if !ok {
		return
	}
	if !l.Exists() {
		c.W.Null()
		return
	}
	idx, ok := c.IntArg(2)
	if !ok {
		return
	}
	val, in := l.Index(idx)
	if !in {
		c.W.Null()
		return
	}
	c.W.Bulk(val)
}

// lsetCmd is one point write of position Head+index: O(1) here. It logs itself.
func lsetCmd(c *Ctx) {
	key := c.Args[1]
	l, ok := listOpen(c, key)
	if !ok {
		return
	}
	if !l.Exists() {
		c.Error(errNoKey)
		return
	}
	idx, ok := c.IntArg(2)
	if !ok {
		return
	}
	if !l.Set(idx, c.Args[3]) {
		c.Error(errListIndexRange)
		return
	}
	c.Tx.Log(c.DB, key, listLSET, key, c.Args[2], c.Args[3])
	c.W.OK()
	c.notify(pubsub.List, "lset", key)
}

// linsertCmd finds the pivot from the head (O(P), P its index) and opens a gap by moving the
// shorter side of the list one position outwards: O(min(P, N-P)) writes, where Redis inserts
// into a quicklist node in O(1) once it found the pivot. It logs itself.
func linsertCmd(c *Ctx) {
	var before bool
	switch {
	case EqualFold(c.Args[2], "before"):
		before = true
	case EqualFold(c.Args[2], "after"):
	default:
		c.Error(ErrSyntax)
		return
	}
	key, pivot, elem := c.Args[1], c.Args[3], c.Args[4]
	l, ok := listOpen(c, key)
	if !ok {
		return
	}
	if !l.Exists() {
		c.W.Int(0)
		return
	}
	if !l.Insert(pivot, elem, before) {
		c.W.Int(-1)
		return
	}
	c.notifySaved(l.Save(), key, pubsub.List, "linsert")
	c.Tx.Log(c.DB, key, listLINSERT, key, c.Args[2], pivot, elem)
	c.W.Int(l.Len())
}

// lremCmd finds the elements to remove scanning from the head (count >= 0) or the tail, up to
// the last one removed (index L in scan order, first one F), then closes the gaps by moving
// whichever side moves fewer elements: the ones after F towards the scan start, or the ones up
// to L towards the far end. O(L + min(N-F, L)) reads plus as many writes, where Redis unlinks
// in place: the writes are the extra cost of keeping positions dense. It logs itself.
func lremCmd(c *Ctx) {
	count, ok := c.IntArg(2)
	if !ok {
		return
	}
	key, elem := c.Args[1], c.Args[3]
	l, ok := listOpen(c, key)
	if !ok {
		return
	}
	if !l.Exists() {
		c.W.Int(0)
		return
	}
	removed := l.RemoveMatches(elem, count)
	if removed == 0 {
		c.W.Int(0)
		return
	}
	c.notifySaved(l.Save(), key, pubsub.List, "lrem")
	c.Tx.Log(c.DB, key, listLREM, key, c.Args[2], elem)
	c.W.Int(removed)
}

// ltrimCmd removes the elements outside [start, stop]. Trimming everything drops the key in
// O(1); otherwise it deletes the removed positions one by one, or, when fewer elements are kept
// than removed, copies the kept ones under a new version and drops the old one whole: O(min(kept,
// removed)) where Redis is O(removed). It logs itself.
func ltrimCmd(c *Ctx) {
	start, ok := c.IntArg(2)
	if !ok {
		return
	}
	stop, ok := c.IntArg(3)
	if !ok {
		return
	}
	key := c.Args[1]
	l, ok := listOpen(c, key)
	if !ok {
		return
	}
	if !l.Exists() {
		c.W.OK()
		return
	}
	off, kept := listIndexRange(l.Len(), start, stop)
	switch l.Trim(off, kept) {
	case datatype.TrimNothing:
		c.notify(pubsub.List, "ltrim", key) // Redis reports a trim that kept everything too
		c.W.OK()
		return
	case datatype.TrimAll:
		c.notify(pubsub.List, "ltrim", key)
		c.notify(pubsub.Generic, "del", key)
	default:
		c.notify(pubsub.List, "ltrim", key)
	}
	c.Tx.Log(c.DB, key, listLTRIM, key, c.Args[2], c.Args[3])
	c.W.OK()
}

// lposCmd scans from the head or (negative RANK) the tail, at most MAXLEN elements. With COUNT
// the reply's length is only known at the end, so the matching indexes are collected first.
func lposCmd(c *Ctx) {
	elem := c.Args[2]
	rank, count, maxlen := int64(1), int64(-1), int64(0) // count -1: no COUNT option
	for j := 3; j < len(c.Args); j++ {
		more := j < len(c.Args)-1
		switch {
		case EqualFold(c.Args[j], "rank") && more:
			j++
			v, ok := c.IntArg(j)
			if !ok {
				return
			}
			if v == 0 {
				c.Error(errListRankZero)
				return
			}
			rank = v
		case EqualFold(c.Args[j], "count") && more:
			j++
			v, ok := codec.ParseInt(c.Args[j])
			if !ok || v < 0 {
				c.Error(errListCountNeg)
				return
			}
			count = v
		case EqualFold(c.Args[j], "maxlen") && more:
			j++
			v, ok := codec.ParseInt(c.Args[j])
			if !ok || v < 0 {
				c.Error(errListMaxLenNeg)
				return
			}
			maxlen = v
		default:
			c.Error(ErrSyntax)
			return
		}
	}
	l, ok := listOpen(c, c.Args[1])
	if !ok {
		return
	}
	if !l.Exists() {
		if count != -1 {
			c.W.ArrayLen(0)
		} else {
			c.W.Null()
		}
		return
	}
	found := l.Positions(elem, rank, count, maxlen)
	if count != -1 {
		c.W.ArrayLen(len(found))
		for _, i := range found {
			c.W.Int(i)
		}
		return
	}
	if len(found) == 0 {
		c.W.Null()
		return
	}
	c.W.Int(found[0])
}

func lmoveCmd(c *Ctx) {
	from, ok := listWhere(c, c.Args[3])
	if !ok {
		return
	}
	to, ok := listWhere(c, c.Args[4])
	if !ok {
		return
	}
	listMove(c, from, to)
}

// listMove is LMOVE and RPOPLPUSH: O(1). It logs the pop on the source and the push on the
// destination as two records, each in its key's shard. Rotating a one-element list onto
// itself changes nothing and logs nothing.
func listMove(c *Ctx, fromLeft, toLeft bool) {
	srcKey, dstKey := c.Args[1], c.Args[2]
	src, ok := listOpen(c, srcKey)
	if !ok {
		return
	}
	if !src.Exists() {
		c.W.Null()
		return
	}
	same := bytes.Equal(srcKey, dstKey)
	var dst datatype.List
	if !same {
		if dst, ok = listOpen(c, dstKey); !ok {
			return
		}
	}
	pushEvent, popEvent := listEvent(toLeft, "lpush", "rpush"), listEvent(fromLeft, "lpop", "rpop")
	if same && src.Len() == 1 {
		// Nothing moves, but Redis popped and pushed, and says so.
		c.notify(pubsub.List, pushEvent, dstKey)
		val, _ := src.Index(0)
		c.W.Bulk(val)
		c.notify(pubsub.List, popEvent, srcKey)
		return
	}
	val := src.PopOne(fromLeft)
	srcRemoved := false
	if same {
		src.Push(val, toLeft)
		src.Save()
	} else {
		dst.Push(val, toLeft)
		srcRemoved = src.Save()
		dst.Save()
	}
	// Redis's order: the push's event, the reply, the pop's event, the source's "del".
	c.notify(pubsub.List, pushEvent, dstKey)
	c.W.Bulk(val)
	c.notify(pubsub.List, popEvent, srcKey)
	if srcRemoved {
		c.notify(pubsub.Generic, "del", srcKey)
	}
	popName, pushName := listRPOP, listRPUSH
	if fromLeft {
		popName = listLPOP
	}
	if toLeft {
		pushName = listLPUSH
	}
	c.Tx.Log(c.DB, srcKey, popName, srcKey)
	c.Tx.Log(c.DB, dstKey, pushName, dstKey, val)
}

// listMPopKeys returns LMPOP's keys as Redis's getkeys does: numkeys read with atoi, and no
// keys when it is below 1 or more than the arguments left.
func listMPopKeys(args [][]byte) [][]byte {
	if len(args) < 2 {
		return nil
	}
	n := listAtoi(args[1])
	if n < 1 || n > len(args)-2 {
		return nil
	}
	return args[2 : 2+n]
}

// listAtoi is C's atoi: leading spaces, a sign, then digits up to the first non-digit;
// saturated at the long range, then truncated to int as the C cast does.
func listAtoi(b []byte) int {
	i := 0
	for i < len(b) && (b[i] == ' ' || (b[i] >= '\t' && b[i] <= '\r')) {
		i++
	}
	neg := false
	if i < len(b) && (b[i] == '+' || b[i] == '-') {
		neg = b[i] == '-'
		i++
	}
	var v uint64
	for ; i < len(b) && b[i] >= '0' && b[i] <= '9'; i++ {
		if v <= 1<<63 {
			v = v*10 + uint64(b[i]-'0')
		}
	}
	var l int64
	switch {
	case neg && v >= 1<<63:
		l = -1 << 63
	case neg:
		l = -int64(v)
	case v >= 1<<63:
		l = 1<<63 - 1
	default:
		l = int64(v)
	}
	return int(int32(l))
}

// lmpopCmd pops up to COUNT elements from the first non-empty list of its keys, replying
// [key, [elements]]; it logs the pop as LPOP/RPOP key n with the count actually popped.
func lmpopCmd(c *Ctx) {
	keys, left, count, ok := lmpopParse(c, 1)
	if !ok {
		return
	}
	if popped, ok := lmpopFrom(c, keys, left, count); ok && !popped {
		c.W.NullArray()
	}
}

// lmpopParse parses "numkeys key [key ...] LEFT|RIGHT [COUNT count]" starting at
// c.Args[numkeysIdx] (LMPOP: 1, BLMPOP: 2), replying the error when ok is false.
func lmpopParse(c *Ctx, numkeysIdx int) (keys [][]byte, left bool, count int64, ok bool) {
	numkeys, ok := codec.ParseInt(c.Args[numkeysIdx])
	if !ok || numkeys < 1 {
		c.Error(errListNumKeys)
		return nil, false, 0, false
	}
	if numkeys > int64(len(c.Args)-numkeysIdx-2) {
		c.Error(ErrSyntax)
		return nil, false, 0, false
	}
	whereIdx := numkeysIdx + 1 + int(numkeys)
	if left, ok = listWhere(c, c.Args[whereIdx]); !ok {
		return nil, false, 0, false
	}
	count = -1
	for j := whereIdx + 1; j < len(c.Args); j++ {
		if count == -1 && EqualFold(c.Args[j], "count") && j < len(c.Args)-1 {
			j++
			v, ok := codec.ParseInt(c.Args[j])
			if !ok || v < 1 {
				c.Error(errListCountZero)
				return nil, false, 0, false
			}
			count = v
			continue
		}
		c.Error(ErrSyntax)
		return nil, false, 0, false
	}
	if count == -1 {
		count = 1
	}
	return c.Args[numkeysIdx+1 : whereIdx], left, count, true
}

// lmpopFrom pops up to count elements from the first non-empty list of keys and replies
// [key, [elements]]. popped is false, with nothing written, when every key is empty; ok is
// false after a WRONGTYPE reply.
func lmpopFrom(c *Ctx, keys [][]byte, left bool, count int64) (popped, ok bool) {
	for _, key := range keys {
		l, ok := listOpen(c, key)
		if !ok {
			return false, false
		}
		if !l.Exists() {
			continue
		}
		n := min(uint64(count), uint64(l.Len()))
		c.W.ArrayLen(2)
		c.W.Bulk(key)
		listPopReply(c, &l, n, left)
		c.notifySaved(l.Save(), key, pubsub.List, listEvent(left, "lpop", "rpop"))
		name := listRPOP
		if left {
			name = listLPOP
		}
		c.Tx.Log(c.DB, key, name, key, itoa(int64(n)))
		return true, true
	}
	return false, true
}

// listEvent is the keyspace event of a list command acting on the left or the right end.
func listEvent(left bool, leftEvent, rightEvent string) string {
	if left {
		return leftEvent
	}
	return rightEvent
}
