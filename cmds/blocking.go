package cmds

import (
	"math"

	"shardis/cmdspec"
	"shardis/codec"
	"shardis/pubsub"
)

// The blocking commands: BLPOP BRPOP BRPOPLPUSH BLMOVE BLMPOP BZPOPMIN BZPOPMAX BZMPOP. Each
// first acts as its non-blocking form. When every key is empty it blocks (Ctx.Block) if it
// may (Ctx.MayBlock), else it answers nil as Redis does inside MULTI and scripts. A blocked
// command is run again, with Ctx.ReadyKey set to the key that became ready, by the executor
// serving it (executor/blocking.go); it then pops from that key only.

func init() {
	Register(
		&Command{Name: "blmpop", Arity: -5, Flags: []string{"write", "blocking"},
			ACL: []string{"write", "list", "slow", "blocking"}, Group: "list", Since: "7.0.0",
			Summary:    "Pop elements from a list, or block until one is available",
			Complexity: "O(N+M) where N is the number of provided keys and M is the number of elements returned.",
			Syntax:     "timeout numkeys key [key ...] <LEFT | RIGHT> [COUNT count]",
			KeySpecs:   []cmdspec.KeySpec{{Flags: cmdspec.RW | cmdspec.Access | cmdspec.Delete, Begin: cmdspec.Index(2), Find: cmdspec.KeyNum(0, 1, 1)}},
			Keys:       blockingNumKeys, Run: blmpopCmd},
		&Command{Name: "bzmpop", Arity: -5, Flags: []string{"write", "blocking"},
			ACL: []string{"write", "sortedset", "slow", "blocking"}, Group: "sorted-set", Since: "7.0.0",
			Summary:    "Remove and return members with scores in a sorted set or block until one is available",
			Complexity: "O(K) + O(M*log(N)) where K is the number of provided keys, N being the number of elements in the sorted set, and M being the number of elements popped.",
			Syntax:     "timeout numkeys key [key ...] <MIN | MAX> [COUNT count]",
			KeySpecs:   []cmdspec.KeySpec{{Flags: cmdspec.RW | cmdspec.Access | cmdspec.Delete, Begin: cmdspec.Index(2), Find: cmdspec.KeyNum(0, 1, 1)}},
			Keys:       blockingNumKeys, Run: bzmpopCmd},
		&Command{Name: "bzpopmin", Arity: -3, Flags: []string{"write", "noscript", "blocking", "fast"},
			ACL:   []string{"write", "sortedset", "fast", "blocking"},
			Group: "sorted-set", Since: "5.0.0",
			Summary:    "Remove and return the member with the lowest score from one or more sorted sets, or block until one is available",
			Complexity: "O(log(N)) with N being the number of elements in the sorted set.",
			Syntax:     "key [key ...] timeout",
			KeySpecs:   []cmdspec.KeySpec{{Flags: cmdspec.RW | cmdspec.Access | cmdspec.Delete, Begin: cmdspec.Index(1), Find: cmdspec.Range(-2, 1, 0)}},
			Run:        func(c *Ctx) { bzpopCmd(c, false) }},
		&Command{Name: "bzpopmax", Arity: -3, Flags: []string{"write", "noscript", "blocking", "fast"},
			ACL:   []string{"write", "sortedset", "fast", "blocking"},
			Group: "sorted-set", Since: "5.0.0",
			Summary:    "Remove and return the member with the highest score from one or more sorted sets, or block until one is available",
			Complexity: "O(log(N)) with N being the number of elements in the sorted set.",
			Syntax:     "key [key ...] timeout",
			KeySpecs:   []cmdspec.KeySpec{{Flags: cmdspec.RW | cmdspec.Access | cmdspec.Delete, Begin: cmdspec.Index(1), Find: cmdspec.Range(-2, 1, 0)}},
			Run:        func(c *Ctx) { bzpopCmd(c, true) }},
		&Command{Name: "blpop", Arity: -3, Flags: []string{"write", "noscript", "blocking"},
			ACL:   []string{"write", "list", "slow", "blocking"},
			Group: "list", Since: "2.0.0",
			Summary:    "Remove and get the first element in a list, or block until one is available",
			Complexity: "O(N) where N is the number of provided keys.", Syntax: "key [key ...] timeout",
			KeySpecs: []cmdspec.KeySpec{{Flags: cmdspec.RW | cmdspec.Access | cmdspec.Delete, Begin: cmdspec.Index(1), Find: cmdspec.Range(-2, 1, 0)}},
			Run:      func(c *Ctx) { bpopCmd(c, true) }},
		&Command{Name: "brpop", Arity: -3, Flags: []string{"write", "noscript", "blocking"},
			ACL:   []string{"write", "list", "slow", "blocking"},
			Group: "list", Since: "2.0.0",
			Summary:    "Remove and get the last element in a list, or block until one is available",
			Complexity: "O(N) where N is the number of provided keys.", Syntax: "key [key ...] timeout",
			KeySpecs: []cmdspec.KeySpec{{Flags: cmdspec.RW | cmdspec.Access | cmdspec.Delete, Begin: cmdspec.Index(1), Find: cmdspec.Range(-2, 1, 0)}},
			Run:      func(c *Ctx) { bpopCmd(c, false) }},
		&Command{Name: "brpoplpush", Arity: 4, Flags: []string{"write", "denyoom", "noscript", "blocking"},
			ACL:   []string{"write", "list", "slow", "blocking"},
			Group: "list", Since: "2.2.0",
			Summary:    "Pop an element from a list, push it to another list and return it; or block until one is available",
			Complexity: "O(1)", DocFlags: []string{"deprecated"}, DeprecatedSince: "6.2.0",
			ReplacedBy: "`BLMOVE` with the `RIGHT` and `LEFT` arguments",
			Syntax:     "source destination timeout",
			KeySpecs: []cmdspec.KeySpec{
				{Flags: cmdspec.RW | cmdspec.Access | cmdspec.Delete, Begin: cmdspec.Index(1), Find: cmdspec.Range(0, 1, 0)},
				{Flags: cmdspec.RW | cmdspec.Insert, Begin: cmdspec.Index(2), Find: cmdspec.Range(0, 1, 0)},
			},
			Run: brpoplpushCmd},
		&Command{Name: "blmove", Arity: 6, Flags: []string{"write", "denyoom", "noscript", "blocking"},
			ACL:   []string{"write", "list", "slow", "blocking"},
			Group: "list", Since: "6.2.0",
			Summary:    "Pop an element from a list, push it to another list and return it; or block until one is available",
			Complexity: "O(1)", Syntax: "source destination <LEFT | RIGHT> <LEFT | RIGHT> timeout",
			KeySpecs: []cmdspec.KeySpec{
				{Flags: cmdspec.RW | cmdspec.Access | cmdspec.Delete, Begin: cmdspec.Index(1), Find: cmdspec.Range(0, 1, 0)},
				{Flags: cmdspec.RW | cmdspec.Insert, Begin: cmdspec.Index(2), Find: cmdspec.Range(0, 1, 0)},
			},
			Run: blmoveCmd},
	)
}

const (
	errTimeoutNotFloat = "ERR timeout is not a float or out of range"
	errTimeoutNegative = "ERR timeout is negative"
)

// blockingNumKeys finds the keys of BLMPOP and BZMPOP: timeout numkeys key ...
func blockingNumKeys(args [][]byte) [][]byte { return zsetNumKeysAt(args, 2) }

// parseTimeout reads a blocking command's timeout in seconds as Redis 7.0 does (strtold, then
// milliseconds rounded up): ms is 0 for "wait for ever". It replies the error when ok is false.
// Redis converts the milliseconds to a long long with the C cast, which turns anything out of
// its range (1e20, inf) into a negative number: those are "negative" here too.
func parseTimeout(c *Ctx, arg []byte) (ms int64, ok bool) {
	if len(arg) == 0 || zsetIsSpace(arg[0]) {
		c.Error(errTimeoutNotFloat)
		return 0, false
	}
	f, n, erange := zsetStrtod(arg)
	if n != len(arg) || math.IsNaN(f) {
		c.Error(errTimeoutNotFloat)
		return 0, false
	}
	if erange && f == 0 {
		f = math.SmallestNonzeroFloat64 // long double holds it: a positive wait of 1 ms
	}
	msf := math.Ceil(f * 1000)
	if msf < 0 || msf >= math.MaxInt64 || erange && f != 0 {
		c.Error(errTimeoutNegative)
		return 0, false
	}
	return int64(msf), true
}

// blockOrNil blocks the command on keys when it may, and otherwise answers the null array
// (nullBulk: the null bulk string), as Redis answers an empty blocking pop that cannot wait.
func blockOrNil(c *Ctx, keys [][]byte, t codec.Type, dst []byte, timeoutMs int64, nullBulk bool) {
	if c.MayBlock() {
		c.Block = &BlockRequest{Keys: keys, Type: t, Dst: dst, Timeout: timeoutMs}
		return
	}
	if nullBulk {
		c.W.Null()
	} else {
		c.W.NullArray()
	}
}

// candidates returns the keys a blocking pop looks at: all of them, or only the ready one when
// the executor serves the command.
func candidates(c *Ctx, keys [][]byte) [][]byte {
	if c.ReadyKey != nil {
		return [][]byte{c.ReadyKey}
	}
	return keys
}

// bpopCmd is BLPOP / BRPOP key [key ...] timeout: [key, element] from the first non-empty list.
func bpopCmd(c *Ctx, left bool) {
	timeout, ok := parseTimeout(c, c.Args[len(c.Args)-1])
	if !ok {
		return
	}
	keys := c.Args[1 : len(c.Args)-1]
	for _, key := range candidates(c, keys) {
		l, ok := listOpen(c, key)
		if !ok {
			return
		}
		if !l.Exists() {
			continue
		}
		c.W.ArrayLen(2)
		c.W.Bulk(key)
		c.W.Bulk(l.PopOne(left))
		c.notifySaved(l.Save(), key, pubsub.List, listEvent(left, "lpop", "rpop"))
		name := listRPOP
		if left {
			name = listLPOP
		}
		c.Tx.Log(c.DB, key, name, key)
		return
	}
	blockOrNil(c, keys, codec.TypeList, nil, timeout, false)
}

// blmoveCmd is BLMOVE source destination LEFT|RIGHT LEFT|RIGHT timeout.
func blmoveCmd(c *Ctx) {
	from, ok := listWhere(c, c.Args[3])
	if !ok {
		return
	}
	to, ok := listWhere(c, c.Args[4])
	if !ok {
		return
	}
	timeout, ok := parseTimeout(c, c.Args[5])
	if !ok {
		return
	}
	blockingMove(c, from, to, timeout)
}

// brpoplpushCmd is BRPOPLPUSH source destination timeout: BLMOVE source destination RIGHT LEFT.
func brpoplpushCmd(c *Ctx) {
	timeout, ok := parseTimeout(c, c.Args[3])
	if !ok {
		return
	}
	blockingMove(c, false, true, timeout)
}

// blockingMove moves an element as LMOVE does when the source holds one. The destination's
// type is not checked before blocking, as in Redis: serving a client whose destination is not
// a list answers it WRONGTYPE.
func blockingMove(c *Ctx, fromLeft, toLeft bool, timeoutMs int64) {
	src := c.Args[1]
	l, ok := listOpen(c, src)
	if !ok {
		return
	}
	if l.Exists() {
		listMove(c, fromLeft, toLeft)
		return
	}
	blockOrNil(c, c.Args[1:2], codec.TypeList, c.Args[2], timeoutMs, true)
}

// blmpopCmd is BLMPOP timeout numkeys key [key ...] LEFT|RIGHT [COUNT count]: the timeout is
// checked first.
func blmpopCmd(c *Ctx) {
	timeout, ok := parseTimeout(c, c.Args[1])
	if !ok {
		return
	}
	keys, left, count, ok := lmpopParse(c, 2)
	if !ok {
		return
	}
	if popped, ok := lmpopFrom(c, candidates(c, keys), left, count); !ok || popped {
		return
	}
	blockOrNil(c, keys, codec.TypeList, nil, timeout, false)
}

// bzpopCmd is BZPOPMIN / BZPOPMAX key [key ...] timeout: [key, member, score].
func bzpopCmd(c *Ctx, max bool) {
	timeout, ok := parseTimeout(c, c.Args[len(c.Args)-1])
	if !ok {
		return
	}
	keys := c.Args[1 : len(c.Args)-1]
	for _, key := range candidates(c, keys) {
		z, ok := c.zsetLoad(key)
		if !ok {
			return
		}
		if !z.Exists() {
			continue
		}
		c.W.ArrayLen(3)
		c.W.Bulk(key)
		zsetPopElems(c, &z, max, 1, false)
		return
	}
	blockOrNil(c, keys, codec.TypeZSet, nil, timeout, false)
}

// bzmpopCmd is BZMPOP timeout numkeys key [key ...] MIN|MAX [COUNT count]: as in Redis, the
// timeout is checked after the other arguments.
func bzmpopCmd(c *Ctx) {
	keys, max, count, ok := zmpopParse(c, 2)
	if !ok {
		return
	}
	timeout, ok := parseTimeout(c, c.Args[1])
	if !ok {
		return
	}
	if popped, ok := zmpopFrom(c, candidates(c, keys), max, count); !ok || popped {
		return
	}
	blockOrNil(c, keys, codec.TypeZSet, nil, timeout, false)
}
