package cmds

import (
	"math"

	"shardis/codec"
	"shardis/pubsub"
)

// The blocking commands: BLPOP BRPOP BRPOPLPUSH BLMOVE BLMPOP BZPOPMIN BZPOPMAX BZMPOP. Each
// first acts as its non-blocking form. When every key is empty it blocks (Ctx.Block) if it
// may (Ctx.MayBlock), else it answers nil as Redis does inside MULTI and scripts. A blocked
// command is run again, with Ctx.ReadyKey set to the key that became ready, by the executor
// serving it (executor/blocking.go); it then pops from that key only.

func init() {
	bc := func(name string, arity int, flags, acl []string, first, last int, since, summary, complexity, syntax string, run func(*Ctx)) *Command {
		step := 1
		if first == 0 {
			step = 0 // keys after numkeys: found by Keys
		}
		return &Command{Name: name, Arity: arity, Flags: flags, ACL: acl, FirstKey: first, LastKey: last, Step: step,
			Group: "list", Since: since, Summary: summary, Complexity: complexity, Syntax: syntax, Run: run}
	}
	var (
		wBlock     = []string{"write", "noscript", "blocking"}
		wDenyBlock = []string{"write", "denyoom", "noscript", "blocking"}
		wMBlock    = []string{"write", "blocking"}
		wFastBlock = []string{"write", "noscript", "blocking", "fast"}
		aclList    = []string{"write", "list", "slow", "blocking"}
		aclZSlow   = []string{"write", "sortedset", "slow", "blocking"}
		aclZFast   = []string{"write", "sortedset", "fast", "blocking"}
	)
	const (
		popCplx  = "O(N) where N is the number of provided keys."
		moveSum  = "Pop an element from a list, push it to another list and return it; or block until one is available"
		zpopCplx = "O(log(N)) with N being the number of elements in the sorted set."
	)
	blmpop := bc("blmpop", -5, wMBlock, aclList, 0, 0, "7.0.0", "Pop elements from a list, or block until one is available",
		"O(N+M) where N is the number of provided keys and M is the number of elements returned.",
		"timeout numkeys key [key ...] <LEFT | RIGHT> [COUNT count]", blmpopCmd)
	blmpop.Keys = blockingNumKeys
	bzmpop := bc("bzmpop", -5, wMBlock, aclZSlow, 0, 0, "7.0.0", "Remove and return members with scores in a sorted set or block until one is available",
		"O(K) + O(M*log(N)) where K is the number of provided keys, N being the number of elements in the sorted set, and M being the number of elements popped.",
		"timeout numkeys key [key ...] <MIN | MAX> [COUNT count]", bzmpopCmd)
	bzmpop.Keys = blockingNumKeys
	bzmpop.Group = "sorted-set"
	bzpopmin := bc("bzpopmin", -3, wFastBlock, aclZFast, 1, -2, "5.0.0",
		"Remove and return the member with the lowest score from one or more sorted sets, or block until one is available",
		zpopCplx, "key [key ...] timeout", func(c *Ctx) { bzpopCmd(c, false) })
	bzpopmax := bc("bzpopmax", -3, wFastBlock, aclZFast, 1, -2, "5.0.0",
		"Remove and return the member with the highest score from one or more sorted sets, or block until one is available",
		zpopCplx, "key [key ...] timeout", func(c *Ctx) { bzpopCmd(c, true) })
	bzpopmin.Group, bzpopmax.Group = "sorted-set", "sorted-set"
	register(
		bc("blpop", -3, wBlock, aclList, 1, -2, "2.0.0", "Remove and get the first element in a list, or block until one is available",
			popCplx, "key [key ...] timeout", func(c *Ctx) { bpopCmd(c, true) }),
		bc("brpop", -3, wBlock, aclList, 1, -2, "2.0.0", "Remove and get the last element in a list, or block until one is available",
			popCplx, "key [key ...] timeout", func(c *Ctx) { bpopCmd(c, false) }),
		bc("brpoplpush", 4, wDenyBlock, aclList, 1, 2, "2.2.0", moveSum, "O(1)", "source destination timeout", brpoplpushCmd),
		bc("blmove", 6, wDenyBlock, aclList, 1, 2, "6.2.0", moveSum, "O(1)",
			"source destination <LEFT | RIGHT> <LEFT | RIGHT> timeout", blmoveCmd),
		blmpop, bzpopmin, bzpopmax, bzmpop,
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
