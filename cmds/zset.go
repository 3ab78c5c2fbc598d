package cmds

import (
	"math"
	"strconv"

	"shardis/cmdspec"
	"shardis/codec"
	"shardis/datatype"
	"shardis/pubsub"
)

// The sorted-set family: arguments, replies, binlog records and events. The sorted set
// itself (its two entries per member, ranges, ranks, pops) is datatype.ZSet.
// This file has the registrations, the score parsers and the point commands; zset_range.go
// the range, pop, random and scan commands; zset_store.go the multi-key operations.

func init() {
	Register(
		&Command{Name: "zmpop", Arity: -4, Flags: []string{"write"}, ACL: []string{"write", "sortedset", "slow"},
			Group: "sorted-set", Since: "7.0.0",
			Summary:    "Remove and return members with scores in a sorted set",
			Complexity: "O(K) + O(M*log(N)) where K is the number of provided keys, N being the number of elements in the sorted set, and M being the number of elements popped.",
			Syntax:     "numkeys key [key ...] <MIN | MAX> [COUNT count]",
			KeySpecs:   []cmdspec.KeySpec{{Flags: cmdspec.RW | cmdspec.Access | cmdspec.Delete, Begin: cmdspec.Index(1), Find: cmdspec.KeyNum(0, 1, 1)}},
			Keys:       zsetNumKeys, Run: zmpopCmd},
		&Command{Name: "zadd", Arity: -4, Flags: []string{"write", "denyoom", "fast"},
			ACL:   []string{"write", "sortedset", "fast"},
			Group: "sorted-set", Since: "1.2.0",
			Summary:    "Add one or more members to a sorted set, or update its score if it already exists",
			Complexity: "O(log(N)) for each item added, where N is the number of elements in the sorted set.",
			Syntax:     "key [NX | XX] [GT | LT] [CH] [INCR] score member [score member ...]",
			KeySpecs:   []cmdspec.KeySpec{{Flags: cmdspec.RW | cmdspec.Update, Begin: cmdspec.Index(1), Find: cmdspec.Range(0, 1, 0)}},
			Traits:     TraitTriesView, Run: func(c *Ctx) { zsetAddGeneric(c, false) }},
		&Command{Name: "zincrby", Arity: 4, Flags: []string{"write", "denyoom", "fast"},
			ACL:   []string{"write", "sortedset", "fast"},
			Group: "sorted-set", Since: "1.2.0", Summary: "Increment the score of a member in a sorted set",
			Complexity: "O(log(N)) where N is the number of elements in the sorted set.",
			Syntax:     "key increment member",
			KeySpecs:   []cmdspec.KeySpec{{Flags: cmdspec.RW | cmdspec.Access | cmdspec.Update, Begin: cmdspec.Index(1), Find: cmdspec.Range(0, 1, 0)}},
			Run:        func(c *Ctx) { zsetAddGeneric(c, true) }},
		&Command{Name: "zrem", Arity: -3, Flags: []string{"write", "fast"}, ACL: []string{"write", "sortedset", "fast"},
			Group: "sorted-set", Since: "1.2.0",
			Summary:    "Remove one or more members from a sorted set",
			Complexity: "O(M*log(N)) with N being the number of elements in the sorted set and M the number of elements to be removed.",
			Syntax:     "key member [member ...]",
			KeySpecs:   []cmdspec.KeySpec{{Flags: cmdspec.RW | cmdspec.Delete, Begin: cmdspec.Index(1), Find: cmdspec.Range(0, 1, 0)}},
			Traits:     TraitTriesView, Run: zremCmd},
		&Command{Name: "zcard", Arity: 2, Flags: []string{"readonly", "fast"},
			ACL:   []string{"read", "sortedset", "fast"},
			Group: "sorted-set", Since: "1.2.0", Summary: "Get the number of members in a sorted set",
			Complexity: "O(1)", Syntax: "key",
			KeySpecs: []cmdspec.KeySpec{{Flags: cmdspec.RO, Begin: cmdspec.Index(1), Find: cmdspec.Range(0, 1, 0)}},
			Run:      zcardCmd},
		&Command{Name: "zscore", Arity: 3, Flags: []string{"readonly", "fast"},
			ACL:   []string{"read", "sortedset", "fast"},
			Group: "sorted-set", Since: "1.2.0",
			Summary: "Get the score associated with the given member in a sorted set", Complexity: "O(1)",
			Syntax:   "key member",
			KeySpecs: []cmdspec.KeySpec{{Flags: cmdspec.RO | cmdspec.Access, Begin: cmdspec.Index(1), Find: cmdspec.Range(0, 1, 0)}},
			Run:      zscoreCmd},
		&Command{Name: "zmscore", Arity: -3, Flags: []string{"readonly", "fast"},
			ACL:   []string{"read", "sortedset", "fast"},
			Group: "sorted-set", Since: "6.2.0",
			Summary:    "Get the score associated with the given members in a sorted set",
			Complexity: "O(N) where N is the number of members being requested.",
			Syntax:     "key member [member ...]",
			KeySpecs:   []cmdspec.KeySpec{{Flags: cmdspec.RO | cmdspec.Access, Begin: cmdspec.Index(1), Find: cmdspec.Range(0, 1, 0)}},
			Run:        zmscoreCmd},
		&Command{Name: "zrank", Arity: 3, Flags: []string{"readonly", "fast"},
			ACL:   []string{"read", "sortedset", "fast"},
			Group: "sorted-set", Since: "2.0.0", Summary: "Determine the index of a member in a sorted set",
			Complexity: "O(log(N))", Syntax: "key member",
			KeySpecs: []cmdspec.KeySpec{{Flags: cmdspec.RO | cmdspec.Access, Begin: cmdspec.Index(1), Find: cmdspec.Range(0, 1, 0)}},
			Run:      func(c *Ctx) { zrankCmd(c, false) }},
		&Command{Name: "zrevrank", Arity: 3, Flags: []string{"readonly", "fast"},
			ACL:   []string{"read", "sortedset", "fast"},
			Group: "sorted-set", Since: "2.0.0",
			Summary:    "Determine the index of a member in a sorted set, with scores ordered from high to low",
			Complexity: "O(log(N))", Syntax: "key member",
			KeySpecs: []cmdspec.KeySpec{{Flags: cmdspec.RO | cmdspec.Access, Begin: cmdspec.Index(1), Find: cmdspec.Range(0, 1, 0)}},
			Run:      func(c *Ctx) { zrankCmd(c, true) }},
		&Command{Name: "zrange", Arity: -4, Flags: []string{"readonly"}, ACL: []string{"read", "sortedset", "slow"},
			Group: "sorted-set", Since: "1.2.0",
			Summary:    "Return a range of members in a sorted set",
			Complexity: "O(log(N)+M) with N being the number of elements in the sorted set and M the number of elements returned.",
			Syntax:     "key start stop [BYSCORE | BYLEX] [REV] [LIMIT offset count] [WITHSCORES]",
			KeySpecs:   []cmdspec.KeySpec{{Flags: cmdspec.RO | cmdspec.Access, Begin: cmdspec.Index(1), Find: cmdspec.Range(0, 1, 0)}},
			Run:        func(c *Ctx) { zrangeGeneric(c, zsByAuto, false, false) }},
		&Command{Name: "zrangestore", Arity: -5, Flags: []string{"write", "denyoom"},
			ACL:   []string{"write", "sortedset", "slow"},
			Group: "sorted-set", Since: "6.2.0",
			Summary:    "Store a range of members from sorted set into another key",
			Complexity: "O(log(N)+M) with N being the number of elements in the sorted set and M the number of elements stored into the destination key.",
			Syntax:     "dst src min max [BYSCORE | BYLEX] [REV] [LIMIT offset count]",
			KeySpecs: []cmdspec.KeySpec{
				{Flags: cmdspec.OW | cmdspec.Update, Begin: cmdspec.Index(1), Find: cmdspec.Range(0, 1, 0)},
				{Flags: cmdspec.RO | cmdspec.Access, Begin: cmdspec.Index(2), Find: cmdspec.Range(0, 1, 0)},
			},
			Run: zrangestoreCmd},
		&Command{Name: "zrangebyscore", Arity: -4, Flags: []string{"readonly"},
			ACL:   []string{"read", "sortedset", "slow"},
			Group: "sorted-set", Since: "1.0.5",
			Summary:    "Return a range of members in a sorted set, by score",
			Complexity: "O(log(N)+M) with N being the number of elements in the sorted set and M the number of elements being returned. If M is constant (e.g. always asking for the first 10 elements with LIMIT), you can consider it O(log(N)).",
			DocFlags:   []string{"deprecated"}, DeprecatedSince: "6.2.0",
			ReplacedBy: "`ZRANGE` with the `BYSCORE` argument",
			Syntax:     "key min max [WITHSCORES] [LIMIT offset count]",
			KeySpecs:   []cmdspec.KeySpec{{Flags: cmdspec.RO | cmdspec.Access, Begin: cmdspec.Index(1), Find: cmdspec.Range(0, 1, 0)}},
			Run:        func(c *Ctx) { zrangeGeneric(c, zsByScore, false, true) }},
		&Command{Name: "zrevrangebyscore", Arity: -4, Flags: []string{"readonly"},
			ACL:   []string{"read", "sortedset", "slow"},
			Group: "sorted-set", Since: "2.2.0",
			Summary:    "Return a range of members in a sorted set, by score, with scores ordered from high to low",
			Complexity: "O(log(N)+M) with N being the number of elements in the sorted set and M the number of elements being returned. If M is constant (e.g. always asking for the first 10 elements with LIMIT), you can consider it O(log(N)).",
			DocFlags:   []string{"deprecated"}, DeprecatedSince: "6.2.0",
			ReplacedBy: "`ZRANGE` with the `REV` and `BYSCORE` arguments",
			Syntax:     "key max min [WITHSCORES] [LIMIT offset count]",
			KeySpecs:   []cmdspec.KeySpec{{Flags: cmdspec.RO | cmdspec.Access, Begin: cmdspec.Index(1), Find: cmdspec.Range(0, 1, 0)}},
			Run:        func(c *Ctx) { zrangeGeneric(c, zsByScore, true, true) }},
		&Command{Name: "zrangebylex", Arity: -4, Flags: []string{"readonly"},
			ACL:   []string{"read", "sortedset", "slow"},
			Group: "sorted-set", Since: "2.8.9",
			Summary:    "Return a range of members in a sorted set, by lexicographical range",
			Complexity: "O(log(N)+M) with N being the number of elements in the sorted set and M the number of elements being returned. If M is constant (e.g. always asking for the first 10 elements with LIMIT), you can consider it O(log(N)).",
			DocFlags:   []string{"deprecated"}, DeprecatedSince: "6.2.0",
			ReplacedBy: "`ZRANGE` with the `BYLEX` argument", Syntax: "key min max [LIMIT offset count]",
			KeySpecs: []cmdspec.KeySpec{{Flags: cmdspec.RO | cmdspec.Access, Begin: cmdspec.Index(1), Find: cmdspec.Range(0, 1, 0)}},
			Run:      func(c *Ctx) { zrangeGeneric(c, zsByLex, false, true) }},
		&Command{Name: "zrevrangebylex", Arity: -4, Flags: []string{"readonly"},
			ACL:   []string{"read", "sortedset", "slow"},
			Group: "sorted-set", Since: "2.8.9",
			Summary:    "Return a range of members in a sorted set, by lexicographical range, ordered from higher to lower strings.",
			Complexity: "O(log(N)+M) with N being the number of elements in the sorted set and M the number of elements being returned. If M is constant (e.g. always asking for the first 10 elements with LIMIT), you can consider it O(log(N)).",
			DocFlags:   []string{"deprecated"}, DeprecatedSince: "6.2.0",
			ReplacedBy: "`ZRANGE` with the `REV` and `BYLEX` arguments",
			Syntax:     "key max min [LIMIT offset count]",
			KeySpecs:   []cmdspec.KeySpec{{Flags: cmdspec.RO | cmdspec.Access, Begin: cmdspec.Index(1), Find: cmdspec.Range(0, 1, 0)}},
			Run:        func(c *Ctx) { zrangeGeneric(c, zsByLex, true, true) }},
		&Command{Name: "zrevrange", Arity: -4, Flags: []string{"readonly"}, ACL: []string{"read", "sortedset", "slow"},
			Group: "sorted-set", Since: "1.2.0",
			Summary:    "Return a range of members in a sorted set, by index, with scores ordered from high to low",
			Complexity: "O(log(N)+M) with N being the number of elements in the sorted set and M the number of elements returned.",
			DocFlags:   []string{"deprecated"}, DeprecatedSince: "6.2.0",
			ReplacedBy: "`ZRANGE` with the `REV` argument", Syntax: "key start stop [WITHSCORES]",
			KeySpecs: []cmdspec.KeySpec{{Flags: cmdspec.RO | cmdspec.Access, Begin: cmdspec.Index(1), Find: cmdspec.Range(0, 1, 0)}},
			Run:      func(c *Ctx) { zrangeGeneric(c, zsByRank, true, true) }},
		&Command{Name: "zcount", Arity: 4, Flags: []string{"readonly", "fast"},
			ACL:   []string{"read", "sortedset", "fast"},
			Group: "sorted-set", Since: "2.0.0",
			Summary:    "Count the members in a sorted set with scores within the given values",
			Complexity: "O(log(N)) with N being the number of elements in the sorted set.",
			Syntax:     "key min max",
			KeySpecs:   []cmdspec.KeySpec{{Flags: cmdspec.RO | cmdspec.Access, Begin: cmdspec.Index(1), Find: cmdspec.Range(0, 1, 0)}},
			Run:        zcountCmd},
		&Command{Name: "zlexcount", Arity: 4, Flags: []string{"readonly", "fast"},
			ACL:   []string{"read", "sortedset", "fast"},
			Group: "sorted-set", Since: "2.8.9",
			Summary:    "Count the number of members in a sorted set between a given lexicographical range",
			Complexity: "O(log(N)) with N being the number of elements in the sorted set.",
			Syntax:     "key min max",
			KeySpecs:   []cmdspec.KeySpec{{Flags: cmdspec.RO | cmdspec.Access, Begin: cmdspec.Index(1), Find: cmdspec.Range(0, 1, 0)}},
			Run:        zlexcountCmd},
		&Command{Name: "zpopmin", Arity: -2, Flags: []string{"write", "fast"},
			ACL:   []string{"write", "sortedset", "fast"},
			Group: "sorted-set", Since: "5.0.0",
			Summary:    "Remove and return members with the lowest scores in a sorted set",
			Complexity: "O(log(N)*M) with N being the number of elements in the sorted set, and M being the number of elements popped.",
			Syntax:     "key [count]",
			KeySpecs:   []cmdspec.KeySpec{{Flags: cmdspec.RW | cmdspec.Access | cmdspec.Delete, Begin: cmdspec.Index(1), Find: cmdspec.Range(0, 1, 0)}},
			Run:        func(c *Ctx) { zpopCmd(c, false) }},
		&Command{Name: "zpopmax", Arity: -2, Flags: []string{"write", "fast"},
			ACL:   []string{"write", "sortedset", "fast"},
			Group: "sorted-set", Since: "5.0.0",
			Summary:    "Remove and return members with the highest scores in a sorted set",
			Complexity: "O(log(N)*M) with N being the number of elements in the sorted set, and M being the number of elements popped.",
			Syntax:     "key [count]",
			KeySpecs:   []cmdspec.KeySpec{{Flags: cmdspec.RW | cmdspec.Access | cmdspec.Delete, Begin: cmdspec.Index(1), Find: cmdspec.Range(0, 1, 0)}},
			Run:        func(c *Ctx) { zpopCmd(c, true) }},
		&Command{Name: "zremrangebyrank", Arity: 4, Flags: []string{"write"},
			ACL:   []string{"write", "sortedset", "slow"},
			Group: "sorted-set", Since: "2.0.0",
			Summary:    "Remove all members in a sorted set within the given indexes",
			Complexity: "O(log(N)+M) with N being the number of elements in the sorted set and M the number of elements removed by the operation.",
			Syntax:     "key start stop",
			KeySpecs:   []cmdspec.KeySpec{{Flags: cmdspec.RW | cmdspec.Delete, Begin: cmdspec.Index(1), Find: cmdspec.Range(0, 1, 0)}},
			Run:        func(c *Ctx) { zremrangeGeneric(c, zsByRank) }},
		&Command{Name: "zremrangebyscore", Arity: 4, Flags: []string{"write"},
			ACL:   []string{"write", "sortedset", "slow"},
			Group: "sorted-set", Since: "1.2.0",
			Summary:    "Remove all members in a sorted set within the given scores",
			Complexity: "O(log(N)+M) with N being the number of elements in the sorted set and M the number of elements removed by the operation.",
			Syntax:     "key min max",
			KeySpecs:   []cmdspec.KeySpec{{Flags: cmdspec.RW | cmdspec.Delete, Begin: cmdspec.Index(1), Find: cmdspec.Range(0, 1, 0)}},
			Run:        func(c *Ctx) { zremrangeGeneric(c, zsByScore) }},
		&Command{Name: "zremrangebylex", Arity: 4, Flags: []string{"write"},
			ACL:   []string{"write", "sortedset", "slow"},
			Group: "sorted-set", Since: "2.8.9",
			Summary:    "Remove all members in a sorted set between the given lexicographical range",
			Complexity: "O(log(N)+M) with N being the number of elements in the sorted set and M the number of elements removed by the operation.",
			Syntax:     "key min max",
			KeySpecs:   []cmdspec.KeySpec{{Flags: cmdspec.RW | cmdspec.Delete, Begin: cmdspec.Index(1), Find: cmdspec.Range(0, 1, 0)}},
			Run:        func(c *Ctx) { zremrangeGeneric(c, zsByLex) }},
		&Command{Name: "zunion", Arity: -3, Flags: []string{"readonly"}, ACL: []string{"read", "sortedset", "slow"},
			Group: "sorted-set", Since: "6.2.0", Summary: "Add multiple sorted sets",
			Complexity: "O(N)+O(M*log(M)) with N being the sum of the sizes of the input sorted sets, and M being the number of elements in the resulting sorted set.",
			Syntax:     "numkeys key [key ...] [WEIGHTS weight [weight ...]] [AGGREGATE <SUM | MIN | MAX>] [WITHSCORES]",
			KeySpecs:   []cmdspec.KeySpec{{Flags: cmdspec.RO | cmdspec.Access, Begin: cmdspec.Index(1), Find: cmdspec.KeyNum(0, 1, 1)}},
			Keys:       zsetNumKeys, Run: func(c *Ctx) { zsetOpCmd(c, zsOpUnion, false, false) }},
		&Command{Name: "zinter", Arity: -3, Flags: []string{"readonly"}, ACL: []string{"read", "sortedset", "slow"},
			Group: "sorted-set", Since: "6.2.0", Summary: "Intersect multiple sorted sets",
			Complexity: "O(N*K)+O(M*log(M)) worst case with N being the smallest input sorted set, K being the number of input sorted sets and M being the number of elements in the resulting sorted set.",
			Syntax:     "numkeys key [key ...] [WEIGHTS weight [weight ...]] [AGGREGATE <SUM | MIN | MAX>] [WITHSCORES]",
			KeySpecs:   []cmdspec.KeySpec{{Flags: cmdspec.RO | cmdspec.Access, Begin: cmdspec.Index(1), Find: cmdspec.KeyNum(0, 1, 1)}},
			Keys:       zsetNumKeys, Run: func(c *Ctx) { zsetOpCmd(c, zsOpInter, false, false) }},
		&Command{Name: "zdiff", Arity: -3, Flags: []string{"readonly"}, ACL: []string{"read", "sortedset", "slow"},
			Group: "sorted-set", Since: "6.2.0", Summary: "Subtract multiple sorted sets",
			Complexity: "O(L + (N-K)log(N)) worst case where L is the total number of elements in all the sets, N is the size of the first set, and K is the size of the result set.",
			Syntax:     "numkeys key [key ...] [WITHSCORES]",
			KeySpecs:   []cmdspec.KeySpec{{Flags: cmdspec.RO | cmdspec.Access, Begin: cmdspec.Index(1), Find: cmdspec.KeyNum(0, 1, 1)}},
			Keys:       zsetNumKeys, Run: func(c *Ctx) { zsetOpCmd(c, zsOpDiff, false, false) }},
		&Command{Name: "zintercard", Arity: -3, Flags: []string{"readonly"}, ACL: []string{"read", "sortedset", "slow"},
			Group: "sorted-set", Since: "7.0.0",
			Summary:    "Intersect multiple sorted sets and return the cardinality of the result",
			Complexity: "O(N*K) worst case with N being the smallest input sorted set, K being the number of input sorted sets.",
			Syntax:     "numkeys key [key ...] [LIMIT limit]",
			KeySpecs:   []cmdspec.KeySpec{{Flags: cmdspec.RO | cmdspec.Access, Begin: cmdspec.Index(1), Find: cmdspec.KeyNum(0, 1, 1)}},
			Keys:       zsetNumKeys, Run: func(c *Ctx) { zsetOpCmd(c, zsOpInter, false, true) }},
		&Command{Name: "zunionstore", Arity: -4, Flags: []string{"write", "denyoom"},
			ACL:   []string{"write", "sortedset", "slow"},
			Group: "sorted-set", Since: "2.0.0",
			Summary:    "Add multiple sorted sets and store the resulting sorted set in a new key",
			Complexity: "O(N)+O(M log(M)) with N being the sum of the sizes of the input sorted sets, and M being the number of elements in the resulting sorted set.",
			Syntax:     "destination numkeys key [key ...] [WEIGHTS weight [weight ...]] [AGGREGATE <SUM | MIN | MAX>]",
			KeySpecs: []cmdspec.KeySpec{
				{Flags: cmdspec.OW | cmdspec.Update, Begin: cmdspec.Index(1), Find: cmdspec.Range(0, 1, 0)},
				{Flags: cmdspec.RO | cmdspec.Access, Begin: cmdspec.Index(2), Find: cmdspec.KeyNum(0, 1, 1)},
			},
			Keys: zsetStoreKeys, Run: func(c *Ctx) { zsetOpCmd(c, zsOpUnion, true, false) }},
		&Command{Name: "zinterstore", Arity: -4, Flags: []string{"write", "denyoom"},
			ACL:   []string{"write", "sortedset", "slow"},
			Group: "sorted-set", Since: "2.0.0",
			Summary:    "Intersect multiple sorted sets and store the resulting sorted set in a new key",
			Complexity: "O(N*K)+O(M*log(M)) worst case with N being the smallest input sorted set, K being the number of input sorted sets and M being the number of elements in the resulting sorted set.",
			Syntax:     "destination numkeys key [key ...] [WEIGHTS weight [weight ...]] [AGGREGATE <SUM | MIN | MAX>]",
			KeySpecs: []cmdspec.KeySpec{
				{Flags: cmdspec.OW | cmdspec.Update, Begin: cmdspec.Index(1), Find: cmdspec.Range(0, 1, 0)},
				{Flags: cmdspec.RO | cmdspec.Access, Begin: cmdspec.Index(2), Find: cmdspec.KeyNum(0, 1, 1)},
			},
			Keys: zsetStoreKeys, Run: func(c *Ctx) { zsetOpCmd(c, zsOpInter, true, false) }},
		&Command{Name: "zdiffstore", Arity: -4, Flags: []string{"write", "denyoom"},
			ACL:   []string{"write", "sortedset", "slow"},
			Group: "sorted-set", Since: "6.2.0",
			Summary:    "Subtract multiple sorted sets and store the resulting sorted set in a new key",
			Complexity: "O(L + (N-K)log(N)) worst case where L is the total number of elements in all the sets, N is the size of the first set, and K is the size of the result set.",
			Syntax:     "destination numkeys key [key ...]",
			KeySpecs: []cmdspec.KeySpec{
				{Flags: cmdspec.OW | cmdspec.Update, Begin: cmdspec.Index(1), Find: cmdspec.Range(0, 1, 0)},
				{Flags: cmdspec.RO | cmdspec.Access, Begin: cmdspec.Index(2), Find: cmdspec.KeyNum(0, 1, 1)},
			},
			Keys: zsetStoreKeys, Run: func(c *Ctx) { zsetOpCmd(c, zsOpDiff, true, false) }},
		&Command{Name: "zrandmember", Arity: -2, Flags: []string{"readonly"},
			ACL:   []string{"read", "sortedset", "slow"},
			Group: "sorted-set", Since: "6.2.0",
			Summary:    "Get one or multiple random elements from a sorted set",
			Complexity: "O(N) where N is the number of elements returned",
			Syntax:     "key [count [WITHSCORES]]",
			KeySpecs:   []cmdspec.KeySpec{{Flags: cmdspec.RO | cmdspec.Access, Begin: cmdspec.Index(1), Find: cmdspec.Range(0, 1, 0)}},
			Tips:       []string{"nondeterministic_output"}, Run: zrandmemberCmd},
		&Command{Name: "zscan", Arity: -3, Flags: []string{"readonly"}, ACL: []string{"read", "sortedset", "slow"},
			Group: "sorted-set", Since: "2.8.0",
			Summary:    "Incrementally iterate sorted sets elements and associated scores",
			Complexity: "O(1) for every call. O(N) for a complete iteration, including enough command calls for the cursor to return back to 0. N is the number of elements inside the collection..",
			Syntax:     "key cursor [MATCH pattern] [COUNT count]",
			KeySpecs:   []cmdspec.KeySpec{{Flags: cmdspec.RO | cmdspec.Access, Begin: cmdspec.Index(1), Find: cmdspec.Range(0, 1, 0)}},
			Tips:       []string{"nondeterministic_output"}, Run: zscanCmd},
	)
}

// Binlog command names and reply errors of the family.
var (
	zsetZADD = []byte("ZADD")
	zsetZREM = []byte("ZREM")
	zsetDEL  = []byte("DEL")
)

const (
	errZsetNaN         = "ERR resulting score is not a number (NaN)"
	errZsetMinMax      = "ERR min or max is not a float"
	errZsetLexRange    = "ERR min or max not valid string range item"
	errZsetNXXX        = "ERR XX and NX options at the same time are not compatible"
	errZsetGTLTNX      = "ERR GT, LT, and/or NX options at the same time are not compatible"
	errZsetIncrPair    = "ERR INCR option supports a single increment-element pair"
	errZsetPositive    = "ERR value is out of range, must be positive"
	errZsetWeight      = "ERR weight value is not a float"
	errZsetLimitRank   = "ERR syntax error, LIMIT is only supported in combination with either BYSCORE or BYLEX"
	errZsetScoresLex   = "ERR syntax error, WITHSCORES not supported in combination with BYLEX"
	errZsetNumkeysPos  = "ERR numkeys should be greater than 0"
	errZsetCountPos    = "ERR count should be greater than 0"
	errZsetLimitNeg    = "ERR LIMIT can't be negative"
	errZsetRandRange   = "ERR value is out of range, value must between -9223372036854775807 and 9223372036854775807"
	errZsetRandOverflw = "ERR value is out of range"
)

// ---- score parsing ----

// zsetIsSpace is C's isspace in the C locale.
func zsetIsSpace(b byte) bool { return b == ' ' || (b >= '\t' && b <= '\r') }

func zsetIsDigit(b byte) bool { return b >= '0' && b <= '9' }

func zsetIsHex(b byte) bool {
	return zsetIsDigit(b) || (b|0x20 >= 'a' && b|0x20 <= 'f')
}

// zsetHasPrefixFold reports whether s starts with the lower-case word p, ignoring case.
func zsetHasPrefixFold(s []byte, p string) bool {
	return len(s) >= len(p) && EqualFold(s[:len(p)], p)
}

// zsetStrtod parses the longest prefix of s that glibc's strtod accepts: leading white space,
// a sign, decimal digits with an optional fraction and exponent, hexadecimal ("0x1.8p3",
// "0x10"), "inf", "infinity" or "nan" with an optional "(chars)". n is the number of bytes
// consumed, 0 when nothing converts (strtod then leaves its end pointer at the start). erange
// is strtod's ERANGE that Redis refuses: overflow to ±inf, or a non-zero number rounding to 0.
func zsetStrtod(s []byte) (v float64, n int, erange bool) {
	i := 0
	for i < len(s) && zsetIsSpace(s[i]) {
		i++
	}
	neg := false
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		neg = s[i] == '-'
		i++
	}
	sign := func(f float64) float64 {
		if neg {
			return -f
		}
		return f
	}
	switch rest := s[i:]; {
	case zsetHasPrefixFold(rest, "infinity"):
		return sign(math.Inf(1)), i + 8, false
	case zsetHasPrefixFold(rest, "inf"):
		return sign(math.Inf(1)), i + 3, false
	case zsetHasPrefixFold(rest, "nan"):
		j := i + 3
		if j < len(s) && s[j] == '(' {
			k := j + 1
			for k < len(s) && (zsetIsDigit(s[k]) || (s[k]|0x20 >= 'a' && s[k]|0x20 <= 'z') || s[k] == '_') {
				k++
			}
			if k < len(s) && s[k] == ')' {
				j = k + 1
			}
		}
		return math.NaN(), j, false
	}
	if i+1 < len(s) && s[i] == '0' && s[i+1]|0x20 == 'x' {
		if f, end, er, ok := zsetStrtodHex(s, i+2); ok {
			return sign(f), end, er
		}
		// "0x" with no hex digit after it: the number is the "0".
	}
	start, digits, nonzero := i, 0, false
	for i < len(s) && zsetIsDigit(s[i]) {
		digits++
		nonzero = nonzero || s[i] != '0'
		i++
	}
	if i < len(s) && s[i] == '.' {
		j := i + 1
		for j < len(s) && zsetIsDigit(s[j]) {
			digits++
			nonzero = nonzero || s[j] != '0'
			j++
		}
		if digits > 0 {
			i = j
		}
	}
	if digits == 0 {
		return 0, 0, false
	}
	i = zsetExponent(s, i, 'e')
	f, err := strconv.ParseFloat(string(s[start:i]), 64)
	if err != nil && !math.IsInf(f, 0) {
		return 0, 0, false // cannot happen: the text was checked above
	}
	return sign(f), i, math.IsInf(f, 0) || (f == 0 && nonzero)
}

// zsetExponent returns where a number ending at i ends once an exponent introduced by mark
// ('e' or 'p', any case) is taken: only when at least one digit follows the optional sign.
func zsetExponent(s []byte, i int, mark byte) int {
	if i >= len(s) || s[i]|0x20 != mark {
		return i
	}
	j := i + 1
	if j < len(s) && (s[j] == '+' || s[j] == '-') {
		j++
	}
	if j >= len(s) || !zsetIsDigit(s[j]) {
		return i
	}
	for j < len(s) && zsetIsDigit(s[j]) {
		j++
	}
	return j
}

// zsetStrtodHex parses the hexadecimal float whose digits start at s[i] (after "0x"). ok is
// false when no hex digit follows.
func zsetStrtodHex(s []byte, i int) (v float64, end int, erange, ok bool) {
	mant := []byte("0x")
	digits, nonzero := 0, false
	for i < len(s) && zsetIsHex(s[i]) {
		mant = append(mant, s[i])
		digits++
		nonzero = nonzero || s[i] != '0'
		i++
	}
	if i < len(s) && s[i] == '.' {
		j, frac := i+1, 0
		for j < len(s) && zsetIsHex(s[j]) {
			frac++
			nonzero = nonzero || s[j] != '0'
			j++
		}
		if digits+frac > 0 {
			mant = append(mant, s[i:j]...)
			digits += frac
			i = j
		}
	}
	if digits == 0 {
		return 0, 0, false, false
	}
	e := zsetExponent(s, i, 'p')
	if e > i {
		mant = append(mant, s[i:e]...)
	} else {
		mant = append(mant, "p0"...)
	}
	f, err := strconv.ParseFloat(string(mant), 64)
	if err != nil && !math.IsInf(f, 0) {
		return 0, 0, false, false
	}
	return f, e, math.IsInf(f, 0) || (f == 0 && nonzero), true
}

// zsetParseScore parses a score, weight or increment as Redis's getDoubleFromObject: the
// whole argument must be a number (no white space, no trailing bytes), not NaN, and neither
// overflow nor underflow to zero.
func zsetParseScore(b []byte) (float64, bool) {
	if len(b) == 0 || zsetIsSpace(b[0]) {
		return 0, false
	}
	v, n, erange := zsetStrtod(b)
	if n != len(b) || erange || math.IsNaN(v) {
		return 0, false
	}
	return v, true
}

// zsetCString returns b up to its first NUL: range bounds are read as C strings by Redis.
func zsetCString(b []byte) []byte {
	for i, ch := range b {
		if ch == 0 {
			return b[:i]
		}
	}
	return b
}

// zsetParseBound parses a score range bound as Redis's zslParseRange: "(" makes it exclusive;
// strtod's rules are looser here (leading white space, an empty string is 0, overflow is ±inf)
// but NaN and trailing bytes are refused.
func zsetParseBound(b []byte) (v float64, ex, ok bool) {
	s := zsetCString(b)
	if len(s) > 0 && s[0] == '(' {
		ex, s = true, s[1:]
	}
	v, n, _ := zsetStrtod(s)
	if n != len(s) || math.IsNaN(v) {
		return 0, false, false
	}
	return v, ex, true
}

// zsetNormScore stores -0 as 0, as Redis's compact encoding does for the small sets clients
// mostly see (the two are equal scores either way).
func zsetNormScore(f float64) float64 {
	if f == 0 {
		return 0
	}
	return f
}

// ---- opening a sorted set ----

// zsetLoad opens the sorted set at key; ok is false after a WRONGTYPE reply.
func (c *Ctx) zsetLoad(key []byte) (z datatype.ZSet, ok bool) {
	z, err := datatype.LookupZSet(c.Tx, c.DB, key)
	if err != nil {
		c.typeError(err)
		return z, false
	}
	return z, true
}

// zsetLoadRead is zsetLoad for a read lookup in a command that writes (ZRANGESTORE's source):
// a missing key is a "keymiss" event.
func (c *Ctx) zsetLoadRead(key []byte) (z datatype.ZSet, ok bool) {
	m, exists := c.Tx.MetaRead(c.DB, key)
	z, err := datatype.ZSetFromMeta(c.Tx, c.DB, key, m, exists)
	if err != nil {
		c.typeError(err)
		return z, false
	}
	return z, true
}

// ---- reply helpers ----

// zsetReplyLen writes the header of a reply of n elements, flat pairs in RESP2 and [member,
// score] arrays in RESP3 when scores are included.
func zsetReplyLen(c *Ctx, n int, withScores bool) {
	if withScores && !c.W.RESP3 {
		n *= 2
	}
	c.W.ArrayLen(n)
}

// zsetReplyElem writes one element of a reply headed by zsetReplyLen.
func zsetReplyElem(c *Ctx, member []byte, score float64, withScores bool) {
	if withScores && c.W.RESP3 {
		c.W.ArrayLen(2)
	}
	c.W.Bulk(member)
	if withScores {
		c.W.Double(score)
	}
}

// zsetDeferLen inserts, at offset start of the reply buffer, the header of an array of n
// elements written after start: for replies whose length is only known once written.
func zsetDeferLen(c *Ctx, start, n int) {
	var hb [24]byte
	h := codec.AppendArrayLen(hb[:0], n)
	end := len(c.W.Buf)
	c.W.Buf = append(c.W.Buf, h...)
	copy(c.W.Buf[start+len(h):], c.W.Buf[start:end])
	copy(c.W.Buf[start:], h)
}

// zsetLogMembers logs the removal of members from key: "DEL key" when it is now gone,
// otherwise ZREM records of at most dumpChunk members.
func zsetLogRemoved(c *Ctx, key []byte, members [][]byte, gone bool) {
	if len(members) == 0 {
		return
	}
	if gone {
		c.Tx.Log(c.DB, key, zsetDEL, key)
		return
	}
	for len(members) > 0 {
		n := min(len(members), dumpChunk)
		args := make([][]byte, 0, n+2)
		args = append(args, zsetZREM, key)
		args = append(args, members[:n]...)
		c.Tx.Log(c.DB, key, args...)
		members = members[n:]
	}
}

// ---- ZADD ZINCRBY ----

// ZADD option flags.
const (
	zsetNX = 1 << iota
	zsetXX
	zsetGT
	zsetLT
	zsetCH
	zsetINCR
)

// zsetAddGeneric is ZADD and (incr) ZINCRBY, which Redis parses the same way: options after
// the key, then score/member pairs. Only members whose score changed are logged, with their
// resulting absolute score, so the record replays without the options.
func zsetAddGeneric(c *Ctx, incrCmd bool) {
	flags := 0
	if incrCmd {
		flags = zsetINCR
	}
	j := 2
opts:
	for ; j < len(c.Args); j++ {
		a := c.Args[j]
		switch {
		case EqualFold(a, "nx"):
			flags |= zsetNX
		case EqualFold(a, "xx"):
			flags |= zsetXX
		case EqualFold(a, "ch"):
			flags |= zsetCH
		case EqualFold(a, "incr"):
			flags |= zsetINCR
		case EqualFold(a, "gt"):
			flags |= zsetGT
		case EqualFold(a, "lt"):
			flags |= zsetLT
		default:
			break opts
		}
	}
	elems := len(c.Args) - j
	if elems == 0 || elems%2 != 0 {
		c.Error(ErrSyntax)
		return
	}
	n := elems / 2
	switch {
	case flags&zsetNX != 0 && flags&zsetXX != 0:
		c.Error(errZsetNXXX)
		return
	case flags&zsetNX != 0 && flags&(zsetGT|zsetLT) != 0, flags&zsetGT != 0 && flags&zsetLT != 0:
		c.Error(errZsetGTLTNX)
		return
	case flags&zsetINCR != 0 && n > 1:
		c.Error(errZsetIncrPair)
		return
	}
	scores := make([]float64, n)
	for i := range scores {
		v, ok := zsetParseScore(c.Args[j+2*i])
		if !ok {
			c.Error(errNotFloat)
			return
		}
		scores[i] = v
	}
	key := c.Args[1]
	z, ok := c.zsetLoad(key)
	if !ok {
		return
	}
	incr := flags&zsetINCR != 0
	if !z.Exists() && flags&zsetXX != 0 {
		if incr {
			c.W.Null()
		} else {
			c.W.Int(0)
		}
		return
	}
	var (
		added, updated int64
		processed      bool
		result         float64
		logArgs        = [][]byte{zsetZADD, key}
	)
	for i, score := range scores {
		member := c.Args[j+2*i+1]
		cur, found := z.Score(member)
		if found {
			if flags&zsetNX != 0 {
				continue
			}
			if incr {
				score += cur
				if math.IsNaN(score) {
					c.Error(errZsetNaN)
					return // nothing was written: INCR takes one pair
				}
			}
			if (flags&zsetLT != 0 && score >= cur) || (flags&zsetGT != 0 && score <= cur) {
				continue
			}
			processed, result = true, score
			if score != cur {
				score = zsetNormScore(score)
				z.Update(member, cur, score)
				updated++
				logArgs = append(logArgs, codec.FormatDouble(nil, score), member)
			}
			continue
		}
		if flags&zsetXX != 0 {
			continue
		}
		score = zsetNormScore(score)
		processed, result = true, score
		z.Insert(member, score)
		added++
		logArgs = append(logArgs, codec.FormatDouble(nil, score), member)
	}
	if added > 0 || updated > 0 { // an update rewrites the meta of a set packed in it
		z.Save()
	}
	if len(logArgs) > 2 {
		c.Tx.Log(c.DB, key, logArgs...)
	}
	switch {
	case incr && processed:
		c.W.Double(result)
	case incr:
		c.W.Null()
	case flags&zsetCH != 0:
		c.W.Int(added + updated)
	default:
		c.W.Int(added)
	}
	if added > 0 || updated > 0 { // after the reply, as Redis
		event := "zadd"
		if incr {
			event = "zincr"
		}
		c.notify(pubsub.ZSet, event, key)
	}
}

// ---- point commands ----

func zremCmd(c *Ctx) {
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
	for _, member := range c.Args[2:] {
		if z.Delete(member) {
			n++
		}
	}
	if n > 0 {
		c.notifySaved(z.Save(), key, pubsub.ZSet, "zrem")
		c.Tx.Log(c.DB, key, c.Args...)
	}
	c.W.Int(n)
}

func zcardCmd(c *Ctx) {
	z, ok := c.zsetLoad(c.Args[1])
	if ok {
		c.W.Int(z.Len()) // zero for a missing key
	}
}

func zscoreCmd(c *Ctx) {
	z, ok := c.zsetLoad(c.Args[1])
	if !ok {
		return
	}
	if !z.Exists() {
		c.W.Null()
		return
	}
	if score, found := z.Score(c.Args[2]); found {
		c.W.Double(score)
	} else {
		c.W.Null()
	}
}

func zmscoreCmd(c *Ctx) {
	z, ok := c.zsetLoad(c.Args[1])
	if !ok {
		return
	}
	c.W.ArrayLen(len(c.Args) - 2)
	for _, member := range c.Args[2:] {
		if score, found := z.Score(member); found {
			c.W.Double(score)
		} else {
			c.W.Null()
		}
	}
}

// zrankCmd is ZRANK and ZREVRANK. Cost: O(min(rank, N-rank)) steps here (the order entries
// are walked from both ends at once until one reaches the member) against Redis's O(log N).
func zrankCmd(c *Ctx, rev bool) {
	z, ok := c.zsetLoad(c.Args[1])
	if !ok {
		return
	}
	if !z.Exists() {
		c.W.Null()
		return
	}
	member := c.Args[2]
	score, found := z.Score(member)
	if !found {
		c.W.Null()
		return
	}
	rank := z.RankOf(member, score)
	if rev {
		rank = z.Len() - 1 - rank
	}
	c.W.Int(rank)
}

// ---- numkeys key positions ----

// zsetNumKeysAt returns the n keys that follow the numkeys argument at args[idx], or nil
// when numkeys is not a positive integer that fits the arguments (the command then replies an
// error without touching any key).
func zsetNumKeysAt(args [][]byte, idx int) [][]byte {
	if idx >= len(args) {
		return nil
	}
	n, ok := codec.ParseInt(args[idx])
	if !ok || n < 1 || n > int64(len(args)-idx-1) {
		return nil
	}
	return args[idx+1 : idx+1+int(n)]
}

// zsetNumKeys finds the keys of ZUNION, ZINTER, ZDIFF, ZINTERCARD and ZMPOP: numkeys key ...
func zsetNumKeys(args [][]byte) [][]byte { return zsetNumKeysAt(args, 1) }

// zsetStoreKeys finds the keys of Z*STORE: the destination, then numkeys keys.
func zsetStoreKeys(args [][]byte) [][]byte {
	if len(args) < 2 {
		return nil
	}
	src := zsetNumKeysAt(args, 2)
	if src == nil {
		return nil
	}
	return append([][]byte{args[1]}, src...)
}
