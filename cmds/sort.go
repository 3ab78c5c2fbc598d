package cmds

import (
	"bytes"
	"math"
	"math/big"
	"slices"
	"strconv"

	"shardis/cmdspec"
	"shardis/codec"
	"shardis/datatype"
	"shardis/pubsub"
)

// SORT and SORT_RO over lists, sets and sorted sets. The source is read straight from its data
// keys (list: sequence order, set: member order, sorted set: score order), so this file does
// not depend on the list, set and zset commands. BY and GET patterns name other keys, which
// may live in any shard: sortRoute makes such a command hold every shard.

func init() {
	Register(
		&Command{Name: "sort", Arity: -2, Flags: []string{"write", "denyoom"},
			ACL: []string{"write", "set", "sortedset", "list", "slow", "dangerous"}, Group: "generic", Since: "1.0.0",
			Summary:    "Sort the elements in a list, set or sorted set",
			Complexity: "O(N+M*log(M)) where N is the number of elements in the list or set to sort, and M the number of returned elements. When the elements are not sorted, complexity is O(N).",
			Syntax:     "key [BY pattern] [LIMIT offset count] [GET pattern [GET pattern ...]] [ASC | DESC] [ALPHA] [STORE destination]",
			KeySpecs: []cmdspec.KeySpec{
				{Flags: cmdspec.RO | cmdspec.Access, Begin: cmdspec.Index(1), Find: cmdspec.Range(0, 1, 0)},
				{Flags: cmdspec.RO | cmdspec.Access,
					Notes: "For the optional BY/GET keyword. It is marked 'unknown' because the key names derive from the content of the key we sort"},
				{Flags: cmdspec.OW | cmdspec.Update,
					Notes: "For the optional STORE keyword. It is marked 'unknown' because the keyword can appear anywhere in the argument array"},
			},
			Keys: sortKeys, Route: func(c *Ctx, n int) []int { return sortRoute(c, n, false) },
			Run: func(c *Ctx) { sortCommand(c, false) }},
		&Command{Name: "sort_ro", Arity: -2, Flags: []string{"readonly"},
			ACL: []string{"read", "set", "sortedset", "list", "slow", "dangerous"}, Group: "generic", Since: "7.0.0",
			Summary:    "Sort the elements in a list, set or sorted set. Read-only variant of SORT.",
			Complexity: "O(N+M*log(M)) where N is the number of elements in the list or set to sort, and M the number of returned elements. When the elements are not sorted, complexity is O(N).",
			Syntax:     "key [BY pattern] [LIMIT offset count] [GET pattern [GET pattern ...]] [ASC | DESC] [ALPHA]",
			KeySpecs: []cmdspec.KeySpec{
				{Flags: cmdspec.RO | cmdspec.Access, Begin: cmdspec.Index(1), Find: cmdspec.Range(0, 1, 0)},
				{Flags: cmdspec.RO | cmdspec.Access,
					Notes: "For the optional BY/GET keyword. It is marked 'unknown' because the key names derive from the content of the key we sort"},
			},
			Traits: TraitReadsUndeclaredKeys, Keys: func(args [][]byte) [][]byte { return args[1:2] },
			Route: func(c *Ctx, n int) []int { return sortRoute(c, n, true) },
			Run:   func(c *Ctx) { sortCommand(c, true) }},
	)
}

const errSortNotDouble = "ERR One or more scores can't be converted into double"

var sortRPUSH = []byte("RPUSH")

// sortOpts is a parsed SORT command line.
type sortOpts struct {
	desc, alpha bool
	start       int64 // LIMIT offset
	count       int64 // LIMIT count; -1: no limit
	by          []byte
	dontSort    bool // BY a pattern without '*': keep the source order
	gets        [][]byte
	store       []byte
}

// Redis's refusals of the options that read keys no key spec names, to a user without read
// access to every key (ACL's key check cannot see them).
const (
	errSortByDenied  = "ERR BY option of SORT denied due to insufficient ACL permissions."
	errSortGetDenied = "ERR GET option of SORT denied due to insufficient ACL permissions."
)

// sortParse parses the options of SORT (readonly: SORT_RO, which has no STORE) as Redis does:
// left to right, later options overriding earlier ones. It returns the error to reply, if any.
// Without allKeys (the caller's user may not read every key), a BY pattern with '*' and any
// GET (even "#") are refused where they stand, as Redis 7.0 refuses them.
func sortParse(args [][]byte, readonly, allKeys bool) (o sortOpts, errMsg string) {
	o.count = -1
	for j := 2; j < len(args); j++ {
		opt := strCString(args[j])
		left := len(args) - j - 1
		switch {
		case EqualFold(opt, "asc"):
			o.desc = false
		case EqualFold(opt, "desc"):
			o.desc = true
		case EqualFold(opt, "alpha"):
			o.alpha = true
		case EqualFold(opt, "limit") && left >= 2:
			start, ok1 := codec.ParseInt(args[j+1])
			count, ok2 := codec.ParseInt(args[j+2])
			if !ok1 || !ok2 {
				return o, ErrNotInt
			}
			o.start, o.count = start, count
			j += 2
		case !readonly && EqualFold(opt, "store") && left >= 1:
			o.store = args[j+1]
			j++
		case EqualFold(opt, "by") && left >= 1:
			o.by = args[j+1]
			o.dontSort = bytes.IndexByte(strCString(o.by), '*') < 0
			if !o.dontSort && !allKeys {
				return o, errSortByDenied
			}
			j++
		case EqualFold(opt, "get") && left >= 1:
			if !allKeys {
				return o, errSortGetDenied
			}
			o.gets = append(o.gets, args[j+1])
			j++
		default:
			return o, ErrSyntax
		}
	}
	return o, ""
}

// sortPatternReadsKeys reports whether pattern makes SORT read other keys: "#" is the element
// itself and a pattern without '*' names no key (Redis compares both as C strings).
func sortPatternReadsKeys(pattern []byte) bool {
	p := strCString(pattern)
	return string(p) != "#" && bytes.IndexByte(p, '*') >= 0
}

// sortRoute picks the shards SORT must hold: every shard when a BY or GET pattern reads other
// keys (they may live anywhere), else those of the sorted key and the STORE destination.
func sortRoute(c *Ctx, nShards int, readonly bool) []int {
	o, msg := sortParse(c.Args, readonly, true) // a refusal holds every shard it would have
	readsKeys := msg == "" && o.by != nil && !o.dontSort
	for _, g := range o.gets {
		readsKeys = readsKeys || (msg == "" && sortPatternReadsKeys(g))
	}
	if readsKeys {
		all := make([]int, nShards)
		for i := range all {
			all[i] = i
		}
		return all
	}
	ids := []int{c.Keyspace.Store.ShardOf(c.Args[1])}
	if msg == "" && o.store != nil {
		ids = append(ids, c.Keyspace.Store.ShardOf(o.store))
	}
	return ids
}

// sortKeys is SORT's COMMAND GETKEYS as Redis finds them: the sorted key and the last STORE
// destination, skipping the arguments of LIMIT, GET and BY.
func sortKeys(args [][]byte) [][]byte {
	keys := [][]byte{args[1]}
	var store []byte
	for i := 2; i < len(args); i++ {
		opt := strCString(args[i])
		switch {
		case EqualFold(opt, "limit"):
			i += 2
		case EqualFold(opt, "get"), EqualFold(opt, "by"):
			i++
		case EqualFold(opt, "store") && i+1 < len(args):
			store = args[i+1]
		}
	}
	if store != nil {
		keys = append(keys, store)
	}
	return keys
}

// sortAllKeys reports whether the user SORT runs as (the connection's, or a script's
// caller's) may read every key; without a client (binlog replay) it may.
func sortAllKeys(c *Ctx) bool {
	if c.Client == nil {
		return true
	}
	cmd := c.Cmd
	if cmd == nil {
		cmd = Lookup(c.Args)
	}
	return cmd.ACLFullKeyAccess(c.Client.User(), c.Args)
}

// sortItem is one element being sorted, with what it sorts by.
type sortItem struct {
	elem  []byte
	score float64
	cmp   []byte // ALPHA: what is compared (BY value or element, cut at a NUL unless STORE)
	miss  bool   // ALPHA BY: the BY value is missing
	pos   int    // position in the source: equal items keep their order (glibc's qsort is stable)
}

// sortCommand is SORT and SORT_RO. Sorting needs the whole source in memory, as in Redis;
// BY nosort on a list or sorted set reads only the LIMIT range (but skips to its offset
// element by element where Redis jumps: O(offset) instead of O(log N) for sorted sets).
func sortCommand(c *Ctx, readonly bool) {
	o, msg := sortParse(c.Args, readonly, sortAllKeys(c))
	if msg != "" {
		c.Error(msg)
		return
	}
	key := c.Args[1]
	m, exists := c.Tx.MetaRead(c.DB, key)
	typ := codec.TypeList
	if exists {
		switch m.Type {
		case codec.TypeList, codec.TypeSet, codec.TypeZSet:
			typ = m.Type
		default:
			c.Error(errWrongType)
			return
		}
	}
	dontSort, alpha := o.dontSort, o.alpha
	var by []byte // a BY pattern that reads keys
	if !o.dontSort {
		by = o.by
	}
	if dontSort && typ == codec.TypeSet && o.store != nil {
		// A set has no order of its own: a stored result must not depend on it.
		dontSort, alpha = false, true
	}
	n := int64(0)
	if exists {
		n = int64(m.Count)
	}
	// LIMIT as Redis clamps it; start+count saturates where Redis's C arithmetic would wrap.
	start := max(o.start, 0)
	end := n - 1
	if o.count >= 0 {
		if start >= 1 && o.count > math.MaxInt64-(start-1) {
			end = math.MaxInt64
		} else {
			end = start - 1 + o.count
		}
	}
	if start >= n {
		start, end = n-1, n-2
	}
	if end >= n {
		end = n - 1
	}

	var items []sortItem
	switch {
	case !exists:
	case dontSort:
		// Native order, only the range wanted (a set's order is its member order here).
		if end >= start {
			rev := o.desc && typ != codec.TypeSet
			items = sortLoad(c, key, &m, typ, start, end-start+1, rev)
		}
		end -= start
		start = 0
	default:
		items = sortLoad(c, key, &m, typ, 0, n, false)
	}

	elems := make([][]byte, len(items)) // the elements in output order
	for i := range items {
		elems[i] = items[i].elem
	}
	if !dontSort {
		store := o.store != nil
		for i := range items {
			it := &items[i]
			val := it.elem
			if by != nil {
				v, ok := sortLookup(c, by, it.elem)
				if !ok {
					it.miss = true
					continue
				}
				val = v
			}
			if alpha {
				// Redis collates with strcoll (a C string) unless it stores the result.
				if it.cmp = val; !store {
					it.cmp = strCString(val)
				}
				continue
			}
			score, ok := sortStrtod(val)
			if !ok {
				c.Error(errSortNotDouble)
				return
			}
			it.score = score
		}
		order := make([]*sortItem, len(items)) // pointers: cheaper to swap than items
		for i := range items {
			order[i] = &items[i]
		}
		slices.SortFunc(order, func(a, b *sortItem) int {
			cmp := sortCompare(a, b, alpha)
			if o.desc {
				cmp = -cmp
			}
			if cmp == 0 {
				return a.pos - b.pos
			}
			return cmp
		})
		for i, it := range order {
			elems[i] = it.elem
		}
	}

	count := max(end-start+1, 0)
	outLen := count
	if len(o.gets) > 0 {
		outLen = count * int64(len(o.gets))
	}
	if o.store == nil {
		c.W.ArrayLen(int(outLen))
		for j := start; j <= end; j++ {
			elem := elems[j]
			if len(o.gets) == 0 {
				c.W.Bulk(elem)
			}
			for _, g := range o.gets {
				if v, ok := sortLookup(c, g, elem); ok {
					c.W.Bulk(v)
				} else {
					c.W.Null()
				}
			}
		}
		return
	}
	sortStore(c, o, elems, start, end, outLen)
}

// sortStore writes the result as a new list under the STORE destination (replacing whatever
// was there, TTL included), or deletes the destination when the result is empty, and replies
// the result's length. Every GET is resolved before the first write.
func sortStore(c *Ctx, o sortOpts, elems [][]byte, start, end, outLen int64) {
	dst := o.store
	if outLen == 0 {
		if c.Tx.Delete(c.DB, dst) {
			c.Tx.Log(c.DB, dst, keysDEL, dst)
			c.notify(pubsub.Generic, "del", dst)
		}
		c.W.Int(0)
		return
	}
	vals := make([][]byte, 0, outLen)
	for j := start; j <= end; j++ {
		elem := elems[j]
		if len(o.gets) == 0 {
			vals = append(vals, elem)
		}
		for _, g := range o.gets {
			v, _ := sortLookup(c, g, elem) // a missing value is stored as ""
			vals = append(vals, v)
		}
	}
	l := datatype.NewList(c.Tx, c.DB, dst)
	for _, v := range vals {
		l.Push(v, false)
	}
	l.Save()
	// The records logCollection writes (DEL, then RPUSH in chunks; a new list has no TTL),
	// built from the values in hand: walking the destination back out of the transaction
	// would cost a scan of every key the transaction wrote.
	c.Tx.Log(c.DB, dst, keysDEL, dst)
	for len(vals) > 0 {
		n := min(len(vals), dumpChunk)
		c.Tx.Log(c.DB, dst, append([][]byte{sortRPUSH, dst}, vals[:n]...)...)
		vals = vals[n:]
	}
	c.notify(pubsub.List, "sortstore", dst)
	c.W.Int(outLen)
}

// sortLoad reads n elements of the source from position from of its native order (counted
// from the end with rev), copying them.
func sortLoad(c *Ctx, key []byte, m *codec.Meta, typ codec.Type, from, n int64, rev bool) []sortItem {
	items := make([]sortItem, 0, min(n, 1<<20))
	var arena []byte // elements are copied into shared chunks rather than one by one
	// add copies one element and reports whether more are wanted.
	add := func(elem []byte) bool {
		if len(elem) > cap(arena)-len(arena) {
			arena = make([]byte, 0, max(64<<10, len(elem)))
		}
		start := len(arena)
		arena = append(arena, elem...)
		items = append(items, sortItem{elem: arena[start:len(arena):len(arena)], pos: len(items)})
		return int64(len(items)) < n
	}
	if n <= 0 {
		return items
	}
	switch typ {
	case codec.TypeSet: // never reversed: a set has no native order to reverse
		set, _ := datatype.SetFromMeta(c.Tx, c.DB, key, *m, true)
		it := set.Iter(nil)
		defer it.Close()
		for skip := from; it.Valid(); it.Next() {
			if skip > 0 {
				skip--
			} else if !add(it.Member()) {
				break
			}
		}
	case codec.TypeList:
		l, _ := datatype.ListFromMeta(c.Tx, c.DB, key, *m, true)
		it := l.Iter(from, rev)
		defer it.Close()
		for ; it.Valid() && add(it.Value()); it.Next() {
		}
	case codec.TypeZSet:
		z, _ := datatype.ZSetFromMeta(c.Tx, c.DB, key, *m, true)
		it := z.Ordered(rev)
		defer it.Close()
		for skip := from; it.Valid(); it.Next() {
			if skip > 0 {
				skip--
			} else if !add(it.Member()) {
				break
			}
		}
	}
	return items
}

// sortCompare orders two elements as Redis's sortCompare (before DESC): numerically with
// ties broken by the elements' bytes, or ALPHA by the BY values (a missing one first) or by
// the elements. Redis collates with strcoll, except when storing; shardis collates as the C
// and C.UTF-8 locales do: bytewise, up to the first NUL (strcoll reads C strings), which
// sortCommand has already cut.
func sortCompare(a, b *sortItem, alpha bool) int {
	if !alpha {
		switch {
		case a.score > b.score:
			return 1
		case a.score < b.score:
			return -1
		}
		return bytes.Compare(a.elem, b.elem)
	}
	switch {
	case a.miss && b.miss:
		return 0
	case a.miss:
		return -1
	case b.miss:
		return 1
	}
	return bytes.Compare(a.cmp, b.cmp)
}

// sortLookup resolves a BY or GET pattern for elem as Redis's lookupKeyByPattern: "#" is the
// element; the first '*' is replaced by the element to name a key, whose string value is
// the result; "key*->field" reads a hash field instead. Patterns are scanned as C strings
// (up to a NUL) but the parts after the '*' keep their full bytes, as in Redis. ok is false
// when nothing is found.
func sortLookup(c *Ctx, pattern, elem []byte) ([]byte, bool) {
	cs := strCString(pattern)
	if string(cs) == "#" {
		return elem, true
	}
	star := bytes.IndexByte(cs, '*')
	if star < 0 {
		return nil, false
	}
	keyEnd := len(pattern)
	var field []byte
	if f := bytes.Index(cs[star+1:], []byte("->")); f >= 0 {
		f += star + 1
		if f+2 < len(cs) {
			field = pattern[f+2:]
			keyEnd = f
		}
	}
	key := make([]byte, 0, star+len(elem)+keyEnd-star-1)
	key = append(append(append(key, pattern[:star]...), elem...), pattern[star+1:keyEnd]...)
	m, ok := c.Tx.MetaRead(c.DB, key)
	if !ok {
		return nil, false
	}
	if field != nil {
		h, err := datatype.HashFromMeta(c.Tx, c.DB, key, m, true)
		if err != nil {
			return nil, false
		}
		return h.Get(field)
	}
	str, err := datatype.StringFromMeta(c.Tx, c.DB, key, m, true)
	if err != nil {
		return nil, false
	}
	return str.Value(), true
}

// sortStrtod converts a sort key as Redis does with C's strtod: leading white space, a sign,
// decimal or 0x hexadecimal (p exponent optional), inf/infinity in any case; the whole C
// string must be consumed (the empty string is 0); NaN, overflow and inexact underflow
// (glibc's ERANGE, tininess after rounding) are refused.
func sortStrtod(b []byte) (float64, bool) {
	s := strCString(b)
	i := 0
	for i < len(s) && sortIsSpace(s[i]) {
		i++
	}
	j := i
	neg := false
	if j < len(s) && (s[j] == '+' || s[j] == '-') {
		neg = s[j] == '-'
		j++
	}
	rest := s[j:]
	if len(rest) >= 3 && EqualFold(rest[:3], "inf") {
		if !EqualFold(rest, "inf") && !EqualFold(rest, "infinity") {
			return 0, false
		}
		if neg {
			return math.Inf(-1), true
		}
		return math.Inf(1), true
	}
	hex := len(rest) > 2 && rest[0] == '0' && rest[1]|0x20 == 'x' && sortHasHexDigits(rest[2:])
	k, digits, nonzero := 0, 0, false
	base := 10
	if hex {
		k, base = 2, 16
	}
	for pointSeen := false; k < len(rest); k++ {
		ch := rest[k]
		if ch == '.' && !pointSeen {
			pointSeen = true
			continue
		}
		if strDigitVal(ch, base) < 0 {
			break
		}
		digits++
		nonzero = nonzero || ch != '0'
	}
	if digits == 0 {
		return 0, len(s) == 0 // no number at all: only the empty string passes
	}
	mant := rest[:k]
	expChar := byte('e')
	if hex {
		expChar = 'p'
	}
	exp := ""
	if k < len(rest) && rest[k]|0x20 == expChar {
		e := k + 1
		if e < len(rest) && (rest[e] == '+' || rest[e] == '-') {
			e++
		}
		d := e
		for d < len(rest) && rest[d] >= '0' && rest[d] <= '9' {
			d++
		}
		if d > e { // a complete exponent; else strtod stops before the e/p
			exp = string(rest[k:d])
			k = d
		}
	}
	if k != len(rest) {
		return 0, false
	}
	text := string(mant) + exp
	if hex && exp == "" {
		text += "p0"
	}
	f, err := strconv.ParseFloat(text, 64)
	if err != nil { // overflow (or nothing Go accepts, which the scan above rules out)
		return 0, false
	}
	if f == 0 && nonzero {
		return 0, false // underflow to zero
	}
	if f != 0 && math.Abs(f) < 0x1p-1022 && !sortExactTiny(text, f) {
		return 0, false
	}
	if neg {
		f = -f
	}
	return f, true
}

// sortExactTiny reports whether a subnormal result f of text is not an underflow by glibc's
// rules: text is exactly f, or rounds (to 53 bits, exponent unbounded) to at least DBL_MIN.
func sortExactTiny(text string, f float64) bool {
	r53, _, err := big.ParseFloat(text, 0, 53, big.ToNearestEven)
	if err != nil {
		return false
	}
	if r53.Cmp(big.NewFloat(0x1p-1022)) >= 0 {
		return true
	}
	exact, ok := new(big.Rat).SetString(text)
	if !ok {
		return false
	}
	return exact.Cmp(new(big.Rat).SetFloat64(f)) == 0
}

func sortHasHexDigits(b []byte) bool {
	if len(b) > 0 && b[0] == '.' {
		b = b[1:]
	}
	return len(b) > 0 && strDigitVal(b[0], 16) >= 0
}

func sortIsSpace(ch byte) bool {
	switch ch {
	case ' ', '\t', '\n', '\v', '\f', '\r':
		return true
	}
	return false
}
