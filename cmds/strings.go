package cmds

import (
	"bytes"
	"math"
	"math/big"
	"strconv"
	"strings"

	"shardis/cmdspec"
	"shardis/codec"
	"shardis/datatype"
	"shardis/pubsub"
)

func init() {
	Register(
		&Command{Name: "get", Arity: 2, Flags: []string{"readonly", "fast"}, ACL: []string{"read", "string", "fast"},
			Group: "string", Since: "1.0.0",
			Summary: "Get the value of a key", Complexity: "O(1)", Syntax: "key",
			KeySpecs: []cmdspec.KeySpec{{Flags: cmdspec.RO | cmdspec.Access, Begin: cmdspec.Index(1), Find: cmdspec.Range(0, 1, 0)}},
			Run:      get, Peek: getPeek},
		&Command{Name: "set", Arity: -3, Flags: []string{"write", "denyoom"}, ACL: []string{"write", "string", "slow"},
			Group: "string", Since: "1.0.0",
			Summary: "Set the string value of a key", Complexity: "O(1)",
			Syntax: "key value [NX | XX] [GET] [EX seconds | PX milliseconds | EXAT unix-time-seconds | PXAT unix-time-milliseconds | KEEPTTL]",
			KeySpecs: []cmdspec.KeySpec{{Flags: cmdspec.RW | cmdspec.Access | cmdspec.Update | cmdspec.VariableFlags,
				Notes: "RW and ACCESS due to the optional `GET` argument",
				Begin: cmdspec.Index(1), Find: cmdspec.Range(0, 1, 0), Variable: setKeyFlags}},
			Run: set},
		&Command{Name: "setnx", Arity: 3, Flags: []string{"write", "denyoom", "fast"},
			ACL: []string{"write", "string", "fast"}, Group: "string",
			Since: "1.0.0", Summary: "Set the value of a key, only if the key does not exist",
			Complexity: "O(1)", Syntax: "key value",
			KeySpecs: []cmdspec.KeySpec{{Flags: cmdspec.OW | cmdspec.Insert, Begin: cmdspec.Index(1), Find: cmdspec.Range(0, 1, 0)}},
			Run:      setnx},
		&Command{Name: "setex", Arity: 4, Flags: []string{"write", "denyoom"}, ACL: []string{"write", "string", "slow"},
			Group: "string", Since: "2.0.0",
			Summary: "Set the value and expiration of a key", Complexity: "O(1)",
			Syntax:   "key seconds value",
			KeySpecs: []cmdspec.KeySpec{{Flags: cmdspec.OW | cmdspec.Update, Begin: cmdspec.Index(1), Find: cmdspec.Range(0, 1, 0)}},
			Run:      setex},
		&Command{Name: "psetex", Arity: 4, Flags: []string{"write", "denyoom"},
			ACL: []string{"write", "string", "slow"}, Group: "string",
			Since: "2.6.0", Summary: "Set the value and expiration in milliseconds of a key",
			Complexity: "O(1)", Syntax: "key milliseconds value",
			KeySpecs: []cmdspec.KeySpec{{Flags: cmdspec.OW | cmdspec.Update, Begin: cmdspec.Index(1), Find: cmdspec.Range(0, 1, 0)}},
			Run:      psetex},
		&Command{Name: "getset", Arity: 3, Flags: []string{"write", "denyoom", "fast"},
			ACL: []string{"write", "string", "fast"}, Group: "string",
			Since: "1.0.0", Summary: "Set the string value of a key and return its old value",
			Complexity: "O(1)", DocFlags: []string{"deprecated"}, DeprecatedSince: "6.2.0",
			ReplacedBy: "`SET` with the `!GET` argument", Syntax: "key value",
			KeySpecs: []cmdspec.KeySpec{{Flags: cmdspec.RW | cmdspec.Access | cmdspec.Update, Begin: cmdspec.Index(1), Find: cmdspec.Range(0, 1, 0)}},
			Run:      getset},
		&Command{Name: "getdel", Arity: 2, Flags: []string{"write", "fast"}, ACL: []string{"write", "string", "fast"},
			Group: "string", Since: "6.2.0",
			Summary: "Get the value of a key and delete the key", Complexity: "O(1)", Syntax: "key",
			KeySpecs: []cmdspec.KeySpec{{Flags: cmdspec.RW | cmdspec.Access | cmdspec.Delete, Begin: cmdspec.Index(1), Find: cmdspec.Range(0, 1, 0)}},
			Run:      getdel},
		&Command{Name: "getex", Arity: -2, Flags: []string{"write", "fast"}, ACL: []string{"write", "string", "fast"},
			Group: "string", Since: "6.2.0",
			Summary: "Get the value of a key and optionally set its expiration", Complexity: "O(1)",
			Syntax: "key [EX seconds | PX milliseconds | EXAT unix-time-seconds | PXAT unix-time-milliseconds | PERSIST]",
			KeySpecs: []cmdspec.KeySpec{{Flags: cmdspec.RW | cmdspec.Access | cmdspec.Update,
				Notes: "RW and UPDATE because it changes the TTL",
				Begin: cmdspec.Index(1), Find: cmdspec.Range(0, 1, 0)}},
			Run: getex},
		&Command{Name: "mget", Arity: -2, Flags: []string{"readonly", "fast"}, ACL: []string{"read", "string", "fast"},
			Group: "string", Since: "1.0.0",
			Summary:    "Get the values of all the given keys",
			Complexity: "O(N) where N is the number of keys to retrieve.", Syntax: "key [key ...]",
			KeySpecs: []cmdspec.KeySpec{{Flags: cmdspec.RO | cmdspec.Access, Begin: cmdspec.Index(1), Find: cmdspec.Range(-1, 1, 0)}},
			Tips:     []string{"request_policy:multi_shard"}, Run: mget},
		&Command{Name: "mset", Arity: -3, Flags: []string{"write", "denyoom"}, ACL: []string{"write", "string", "slow"},
			Group: "string", Since: "1.0.1",
			Summary:    "Set multiple keys to multiple values",
			Complexity: "O(N) where N is the number of keys to set.", Syntax: "key value [key value ...]",
			KeySpecs: []cmdspec.KeySpec{{Flags: cmdspec.OW | cmdspec.Update, Begin: cmdspec.Index(1), Find: cmdspec.Range(-1, 2, 0)}},
			Tips:     []string{"request_policy:multi_shard", "response_policy:all_succeeded"}, Run: mset},
		&Command{Name: "msetnx", Arity: -3, Flags: []string{"write", "denyoom"},
			ACL: []string{"write", "string", "slow"}, Group: "string",
			Since: "1.0.1", Summary: "Set multiple keys to multiple values, only if none of the keys exist",
			Complexity: "O(N) where N is the number of keys to set.", Syntax: "key value [key value ...]",
			KeySpecs: []cmdspec.KeySpec{{Flags: cmdspec.OW | cmdspec.Insert, Begin: cmdspec.Index(1), Find: cmdspec.Range(-1, 2, 0)}},
			Tips:     []string{"request_policy:multi_shard", "response_policy:agg_min"}, Run: msetnx},
		&Command{Name: "append", Arity: 3, Flags: []string{"write", "denyoom", "fast"},
			ACL: []string{"write", "string", "fast"}, Group: "string",
			Since: "2.0.0", Summary: "Append a value to a key",
			Complexity: "O(1). The amortized time complexity is O(1) assuming the appended value is small and the already present value is of any size, since the dynamic string library used by Redis will double the free space available on every reallocation.",
			Syntax:     "key value",
			KeySpecs:   []cmdspec.KeySpec{{Flags: cmdspec.RW | cmdspec.Insert, Begin: cmdspec.Index(1), Find: cmdspec.Range(0, 1, 0)}},
			Run:        appendCmd},
		&Command{Name: "strlen", Arity: 2, Flags: []string{"readonly", "fast"}, ACL: []string{"read", "string", "fast"},
			Group: "string", Since: "2.2.0",
			Summary: "Get the length of the value stored in a key", Complexity: "O(1)", Syntax: "key",
			KeySpecs: []cmdspec.KeySpec{{Flags: cmdspec.RO, Begin: cmdspec.Index(1), Find: cmdspec.Range(0, 1, 0)}},
			Run:      strlenCmd},
		&Command{Name: "incr", Arity: 2, Flags: []string{"write", "denyoom", "fast"},
			ACL: []string{"write", "string", "fast"}, Group: "string",
			Since: "1.0.0", Summary: "Increment the integer value of a key by one", Complexity: "O(1)",
			Syntax:   "key",
			KeySpecs: []cmdspec.KeySpec{{Flags: cmdspec.RW | cmdspec.Access | cmdspec.Update, Begin: cmdspec.Index(1), Find: cmdspec.Range(0, 1, 0)}},
			Run:      func(c *Ctx) { strIncrBy(c, 1) }},
		&Command{Name: "decr", Arity: 2, Flags: []string{"write", "denyoom", "fast"},
			ACL: []string{"write", "string", "fast"}, Group: "string",
			Since: "1.0.0", Summary: "Decrement the integer value of a key by one", Complexity: "O(1)",
			Syntax:   "key",
			KeySpecs: []cmdspec.KeySpec{{Flags: cmdspec.RW | cmdspec.Access | cmdspec.Update, Begin: cmdspec.Index(1), Find: cmdspec.Range(0, 1, 0)}},
			Run:      func(c *Ctx) { strIncrBy(c, -1) }},
		&Command{Name: "incrby", Arity: 3, Flags: []string{"write", "denyoom", "fast"},
			ACL: []string{"write", "string", "fast"}, Group: "string",
			Since: "1.0.0", Summary: "Increment the integer value of a key by the given amount",
			Complexity: "O(1)", Syntax: "key increment",
			KeySpecs: []cmdspec.KeySpec{{Flags: cmdspec.RW | cmdspec.Access | cmdspec.Update, Begin: cmdspec.Index(1), Find: cmdspec.Range(0, 1, 0)}},
			Run:      incrby},
		&Command{Name: "decrby", Arity: 3, Flags: []string{"write", "denyoom", "fast"},
			ACL: []string{"write", "string", "fast"}, Group: "string",
			Since: "1.0.0", Summary: "Decrement the integer value of a key by the given number",
			Complexity: "O(1)", Syntax: "key decrement",
			KeySpecs: []cmdspec.KeySpec{{Flags: cmdspec.RW | cmdspec.Access | cmdspec.Update, Begin: cmdspec.Index(1), Find: cmdspec.Range(0, 1, 0)}},
			Run:      decrby},
		&Command{Name: "incrbyfloat", Arity: 3, Flags: []string{"write", "denyoom", "fast"},
			ACL: []string{"write", "string", "fast"}, Group: "string",
			Since: "2.6.0", Summary: "Increment the float value of a key by the given amount",
			Complexity: "O(1)", Syntax: "key increment",
			KeySpecs: []cmdspec.KeySpec{{Flags: cmdspec.RW | cmdspec.Access | cmdspec.Update, Begin: cmdspec.Index(1), Find: cmdspec.Range(0, 1, 0)}},
			Run:      incrbyfloat},
		&Command{Name: "getrange", Arity: 4, Flags: []string{"readonly"}, ACL: []string{"read", "string", "slow"},
			Group: "string", Since: "2.4.0",
			Summary:    "Get a substring of the string stored at a key",
			Complexity: "O(N) where N is the length of the returned string. The complexity is ultimately determined by the returned length, but because creating a substring from an existing string is very cheap, it can be considered O(1) for small strings.",
			Syntax:     "key start end",
			KeySpecs:   []cmdspec.KeySpec{{Flags: cmdspec.RO | cmdspec.Access, Begin: cmdspec.Index(1), Find: cmdspec.Range(0, 1, 0)}},
			Run:        getrange},
		&Command{Name: "substr", Arity: 4, Flags: []string{"readonly"}, ACL: []string{"read", "string", "slow"},
			Group: "string", Since: "1.0.0",
			Summary:    "Get a substring of the string stored at a key",
			Complexity: "O(N) where N is the length of the returned string. The complexity is ultimately determined by the returned length, but because creating a substring from an existing string is very cheap, it can be considered O(1) for small strings.",
			DocFlags:   []string{"deprecated"}, DeprecatedSince: "2.0.0", ReplacedBy: "`GETRANGE`",
			Syntax:   "key start end",
			KeySpecs: []cmdspec.KeySpec{{Flags: cmdspec.RO | cmdspec.Access, Begin: cmdspec.Index(1), Find: cmdspec.Range(0, 1, 0)}},
			Run:      getrange},
		&Command{Name: "setrange", Arity: 4, Flags: []string{"write", "denyoom"},
			ACL: []string{"write", "string", "slow"}, Group: "string",
			Since: "2.2.0", Summary: "Overwrite part of a string at key starting at the specified offset",
			Complexity: "O(1), not counting the time taken to copy the new string in place. Usually, this string is very small so the amortized complexity is O(1). Otherwise, complexity is O(M) with M being the length of the value argument.",
			Syntax:     "key offset value",
			KeySpecs:   []cmdspec.KeySpec{{Flags: cmdspec.RW | cmdspec.Update, Begin: cmdspec.Index(1), Find: cmdspec.Range(0, 1, 0)}},
			Run:        setrange},
		&Command{Name: "lcs", Arity: -3, Flags: []string{"readonly"}, ACL: []string{"read", "string", "slow"},
			Group: "string", Since: "7.0.0",
			Summary:    "Find longest common substring",
			Complexity: "O(N*M) where N and M are the lengths of s1 and s2, respectively",
			Syntax:     "key1 key2 [LEN] [IDX] [MINMATCHLEN len] [WITHMATCHLEN]",
			KeySpecs:   []cmdspec.KeySpec{{Flags: cmdspec.RO | cmdspec.Access, Begin: cmdspec.Index(1), Find: cmdspec.Range(1, 1, 0)}},
			Run:        lcs},
	)
}

// Binlog command names and keywords of the string family.
var (
	strSET      = []byte("SET")
	strDEL      = []byte("DEL")
	strPXAT     = []byte("PXAT")
	strKEEPTTL  = []byte("KEEPTTL")
	strPEXPIREA = []byte("PEXPIREAT")
	strPERSIST  = []byte("PERSIST")
	strAPPEND   = []byte("APPEND")
	strSETRANGE = []byte("SETRANGE")
)

const (
	errStrTooLong    = "ERR string exceeds maximum allowed size (proto-max-bulk-len)"
	errStrOffset     = "ERR offset is out of range"
	errStrDecrOvf    = "ERR decrement would overflow"
	errStrFloatNaN   = "ERR increment would produce NaN or Infinity"
	errStrLCSType    = "ERR The specified keys must contain string values"
	errStrLCSBoth    = "ERR If you want both the length and indexes, please just use IDX."
	errStrLCSMemory  = "ERR Insufficient memory, transient memory for LCS exceeds proto-max-bulk-len"
	strMaxLDChars    = 5 * 1024 // Redis's MAX_LONG_DOUBLE_CHARS: longer float strings are refused
	strDefaultMaxLen = 512 << 20
)

// The option flags of SET and GETEX, as Redis's parser tracks them.
const (
	strOptNX = 1 << iota
	strOptXX
	strOptEX
	strOptPX
	strOptKeepTTL
	strOptGet
	strOptEXAT
	strOptPXAT
	strOptPersist
)

const strOptAnyExpire = strOptEX | strOptPX | strOptEXAT | strOptPXAT

// strCString returns b up to its first NUL: Redis compares option keywords as C strings, so
// "nx\x00junk" is NX to it.
func strCString(b []byte) []byte {
	if i := bytes.IndexByte(b, 0); i >= 0 {
		return b[:i]
	}
	return b
}

// strParseOpts parses the options of SET (isSet, from args[3]) or GETEX (from args[2]) with
// Redis 7.0's acceptance rules: conflicting options are a syntax error, but repeating one
// (EX 1 EX 2, NX NX) is allowed and the last value wins. It returns the flags and the expire
// argument.
func strParseOpts(args [][]byte, isSet bool) (flags int, expire []byte, ok bool) {
	j := 2
	if isSet {
		j = 3
	}
	for ; j < len(args); j++ {
		opt := strCString(args[j])
		hasNext := j < len(args)-1
		switch {
		case isSet && EqualFold(opt, "nx") && flags&strOptXX == 0:
			flags |= strOptNX
		case isSet && EqualFold(opt, "xx") && flags&strOptNX == 0:
			flags |= strOptXX
		case isSet && EqualFold(opt, "get"):
			flags |= strOptGet
		case isSet && EqualFold(opt, "keepttl") && flags&(strOptPersist|strOptAnyExpire) == 0:
			flags |= strOptKeepTTL
		case !isSet && EqualFold(opt, "persist") && flags&(strOptAnyExpire|strOptKeepTTL) == 0:
			flags |= strOptPersist
		case EqualFold(opt, "ex") && hasNext && flags&(strOptKeepTTL|strOptPersist|strOptEXAT|strOptPX|strOptPXAT) == 0:
			flags |= strOptEX
			j++
			expire = args[j]
		case EqualFold(opt, "px") && hasNext && flags&(strOptKeepTTL|strOptPersist|strOptEX|strOptEXAT|strOptPXAT) == 0:
			flags |= strOptPX
			j++
			expire = args[j]
		case EqualFold(opt, "exat") && hasNext && flags&(strOptKeepTTL|strOptPersist|strOptEX|strOptPX|strOptPXAT) == 0:
			flags |= strOptEXAT
			j++
			expire = args[j]
		case EqualFold(opt, "pxat") && hasNext && flags&(strOptKeepTTL|strOptPersist|strOptEX|strOptEXAT|strOptPX) == 0:
			flags |= strOptPXAT
			j++
			expire = args[j]
		default:
			return 0, nil, false
		}
	}
	return flags, expire, true
}

// strExpireAt turns an EX/PX/EXAT/PXAT argument into an absolute unix ms time, replying
// Redis's error (naming cmd) when it is not a positive integer or the result overflows.
func strExpireAt(c *Ctx, arg []byte, flags int, cmd string) (int64, bool) {
	n, ok := codec.ParseInt(arg)
	if !ok {
		c.Error(ErrNotInt)
		return 0, false
	}
	seconds := flags&(strOptEX|strOptEXAT) != 0
	if n <= 0 || (seconds && n > math.MaxInt64/1000) {
		c.Error("ERR invalid expire time in '" + cmd + "' command")
		return 0, false
	}
	if seconds {
		n *= 1000
	}
	if flags&(strOptEX|strOptPX) != 0 {
		n += c.Tx.Now() // wraps negative on overflow, caught below as Redis does
	}
	if n <= 0 {
		c.Error("ERR invalid expire time in '" + cmd + "' command")
		return 0, false
	}
	return n, true
}

// strProtoMaxBulkLen is the configured proto-max-bulk-len.
func strProtoMaxBulkLen(c *Ctx) int64 {
	if c.Keyspace != nil && c.Keyspace.MaxBulkLen != nil {
		return c.Keyspace.MaxBulkLen()
	}
	return strDefaultMaxLen
}

// strMaxLen is the largest string a client may build (proto-max-bulk-len); the binlog replay
// (no client) is exempt, as Redis exempts its master.
func strMaxLen(c *Ctx) int64 {
	if c.Client == nil {
		return math.MaxInt64
	}
	return strProtoMaxBulkLen(c)
}

// strTooLong reports whether a string of size+extra bytes would exceed the limit (with
// overflow of the sum counted as too long), replying the error if so.
func strTooLong(c *Ctx, size, extra int64) bool {
	total := size + extra
	if total < size || total > strMaxLen(c) {
		c.Error(errStrTooLong)
		return true
	}
	return false
}

// strGet replies the value of key as GET does (a read lookup, also in a writing command); it
// reports false after a WRONGTYPE reply.
func strGet(c *Ctx, key []byte) (s datatype.String, ok bool) {
	m, found := c.Tx.MetaRead(c.DB, key)
	s, err := datatype.StringFromMeta(c.Tx, c.DB, key, m, found)
	switch {
	case err != nil:
		c.typeError(err)
		return s, false
	case !s.Exists():
		c.W.Null()
	default:
		c.bulkString(&s)
	}
	return s, true
}

// strStreamAbove is the length from which a fragmented string's reply is streamed (read
// fragment by fragment as the client takes it) rather than assembled.
const strStreamAbove = 64 << 10

// bulkString replies s's value as a bulk string: a big fragmented one is streamed (see
// shard.Tx.StreamString), never assembled whole.
func (c *Ctx) bulkString(s *datatype.String) {
	if !s.Fragmented() || !c.Streamable || s.Len() < strStreamAbove {
		c.W.Bulk(s.Value())
		return
	}
	c.W.Buf = append(c.W.Buf, '$')
	c.W.Buf = strconv.AppendInt(c.W.Buf, s.Len(), 10)
	c.W.Buf = append(c.W.Buf, '\r', '\n')
	c.sendStream(s.Stream())
}

func get(c *Ctx) { strGet(c, c.Args[1]) }

// getPeek is GET answered in the event loop from committed state (Command.Peek): a lone GET
// costs no trip to the shard and back.
func getPeek(c *Ctx) bool {
	var m codec.Meta
	var exists, sure, expired bool
	for try := 0; ; try++ {
		m, exists, sure, expired, c.PeekBuf = c.Keyspace.Store.PeekMeta(c.DB, c.Args[1], c.NowMs, c.PeekBuf)
		switch {
		case sure || expired && c.LatePeek: // an expired key is absent
		case !c.LatePeek:
			return false
		case try < 3: // SWAPDB ran during the read: read again
			continue
		default:
			c.Error("ERR could not read the key, try again")
			return true
		}
		break
	}
	if exists && c.Cmd.Touches(c.Client != nil && c.Client.NoTouch) {
		c.Keyspace.Store.TouchKey(c.DB, c.Args[1], c.NowMs)
	}
	switch {
	case !exists:
		c.Keyspace.Stats.KeyspaceMisses.Add(1)
		c.W.Null()
	case m.Type != codec.TypeString:
		c.Keyspace.Stats.KeyspaceHits.Add(1)
		c.Error(errWrongType)
	case m.Frag:
		// The bytes are in fragments, which only a read of the shard's state can gather.
		if !c.LatePeek {
			return false
		}
		c.Keyspace.Stats.KeyspaceHits.Add(1)
		strPeekFragmented(c)
	default:
		c.Keyspace.Stats.KeyspaceHits.Add(1)
		c.W.Bulk(m.Value)
	}
	return true
}

// strPeekFragmented answers a late GET of a fragmented string through a read-only view of
// its shard's committed state, assembled (a late read cannot stream).
func strPeekFragmented(c *Ctx) {
	st := c.Keyspace.Store
	for try := 0; try < 3; try++ {
		tx := st.View(st.ShardOf(c.Args[1]))
		m, ok := tx.MetaRead(c.DB, c.Args[1])
		var val []byte
		isString := ok && m.Type == codec.TypeString
		if isString {
			s, _ := datatype.StringFromMeta(tx, c.DB, c.Args[1], m, true)
			val = s.Value()
		}
		if !st.EndView(tx) {
			continue
		}
		switch {
		case !ok:
			c.W.Null()
		case !isString:
			c.Error(errWrongType)
		default:
			c.W.Bulk(val)
		}
		return
	}
	c.Error("ERR could not read the key, try again")
}

func set(c *Ctx) {
	flags, expire, ok := strParseOpts(c.Args, true)
	if !ok {
		c.Error(ErrSyntax)
		return
	}
	strSetGeneric(c, flags, c.Args[2], expire, "set", false)
}

// strSetGeneric is SET with its options already parsed; SETNX, SETEX and PSETEX use it too.
// countReply makes the replies 1/0 (SETNX) instead of OK/nil.
func strSetGeneric(c *Ctx, flags int, val, expire []byte, cmd string, countReply bool) {
	var when int64
	if expire != nil {
		var ok bool
		if when, ok = strExpireAt(c, expire, flags, cmd); !ok {
			return
		}
	}
	key := c.Args[1]
	var old codec.Meta
	var found bool
	if flags&strOptGet != 0 {
		s, ok := strGet(c, key)
		if !ok {
			return
		}
		old.Expire, found = s.Expire(), s.Exists()
	} else if flags&(strOptNX|strOptXX|strOptKeepTTL) != 0 {
		// A plain SET needs no read: SetMeta replaces whatever is there.
		old, found = c.Tx.Meta(c.DB, key)
	}
	if (flags&strOptNX != 0 && found) || (flags&strOptXX != 0 && !found) {
		switch {
		case flags&strOptGet != 0:
		case countReply:
			c.W.Int(0)
		default:
			c.W.Null()
		}
		return
	}
	switch {
	case expire != nil:
		datatype.SetString(c.Tx, c.DB, key, val, when)
		c.Tx.Log(c.DB, key, strSET, key, val, strPXAT, itoa(when))
	case flags&strOptKeepTTL != 0 && found && old.Expire != 0:
		datatype.SetString(c.Tx, c.DB, key, val, old.Expire)
		c.Tx.Log(c.DB, key, strSET, key, val, strKEEPTTL)
	default:
		datatype.SetString(c.Tx, c.DB, key, val, 0)
		c.Tx.Log(c.DB, key, strSET, key, val)
	}
	c.notify(pubsub.String, "set", key)
	if expire != nil {
		c.notify(pubsub.Generic, "expire", key)
	}
	switch {
	case flags&strOptGet != 0:
	case countReply:
		c.W.Int(1)
	default:
		c.W.OK()
	}
}

func setnx(c *Ctx) { strSetGeneric(c, strOptNX, c.Args[2], nil, "setnx", true) }
func setex(c *Ctx) { strSetGeneric(c, strOptEX, c.Args[3], c.Args[2], "setex", false) }
func psetex(c *Ctx) {
	strSetGeneric(c, strOptPX, c.Args[3], c.Args[2], "psetex", false)
}

func getset(c *Ctx) {
	key := c.Args[1]
	if _, ok := strGet(c, key); !ok {
		return
	}
	datatype.SetString(c.Tx, c.DB, key, c.Args[2], 0)
	c.Tx.Log(c.DB, key, strSET, key, c.Args[2])
	c.notify(pubsub.String, "set", key)
}

func getdel(c *Ctx) {
	key := c.Args[1]
	s, ok := strGet(c, key)
	if ok && s.Exists() && c.Tx.Delete(c.DB, key) {
		c.Tx.Log(c.DB, key, strDEL, key)
		c.notify(pubsub.Generic, "del", key)
	}
}

func getex(c *Ctx) {
	flags, expire, ok := strParseOpts(c.Args, false)
	if !ok {
		c.Error(ErrSyntax)
		return
	}
	key := c.Args[1]
	m, found := c.Tx.MetaRead(c.DB, key)
	s, err := datatype.StringFromMeta(c.Tx, c.DB, key, m, found)
	if err == nil && !s.Exists() {
		c.W.Null()
		return
	}
	if err != nil {
		c.typeError(err)
		return
	}
	var when int64
	if expire != nil {
		if when, ok = strExpireAt(c, expire, flags, "getex"); !ok {
			return
		}
	}
	c.bulkString(&s)
	switch {
	case flags&(strOptEXAT|strOptPXAT) != 0 && when <= c.Tx.Now():
		// An absolute time already past deletes the key, as Redis does.
		c.Tx.Delete(c.DB, key)
		c.Tx.Log(c.DB, key, strDEL, key)
		c.notify(pubsub.Generic, "del", key)
	case expire != nil:
		s.SetExpire(when)
		c.Tx.Log(c.DB, key, strPEXPIREA, key, itoa(when))
		c.notify(pubsub.Generic, "expire", key)
	case flags&strOptPersist != 0 && s.Expire() != 0:
		s.SetExpire(0)
		c.Tx.Log(c.DB, key, strPERSIST, key)
		c.notify(pubsub.Generic, "persist", key)
	}
}

func mget(c *Ctx) {
	c.W.ArrayLen(len(c.Args) - 1)
	for _, key := range c.Args[1:] {
		if s, err := datatype.LookupString(c.Tx, c.DB, key); err == nil && s.Exists() {
			c.W.Bulk(s.Value())
		} else {
			c.W.Null()
		}
	}
}

// strMSet writes every pair of MSET/MSETNX, each logged in its own key's shard.
func strMSet(c *Ctx) {
	for j := 1; j < len(c.Args); j += 2 {
		key, val := c.Args[j], c.Args[j+1]
		datatype.SetString(c.Tx, c.DB, key, val, 0)
		c.Tx.Log(c.DB, key, strSET, key, val)
		c.notify(pubsub.String, "set", key)
	}
}

func mset(c *Ctx) {
	if len(c.Args)%2 == 0 {
		c.Error("ERR wrong number of arguments for 'mset' command")
		return
	}
	strMSet(c)
	c.W.OK()
}

func msetnx(c *Ctx) {
	if len(c.Args)%2 == 0 {
		c.Error("ERR wrong number of arguments for 'msetnx' command")
		return
	}
	for j := 1; j < len(c.Args); j += 2 {
		if c.Tx.Exists(c.DB, c.Args[j]) {
			c.W.Int(0)
			return
		}
	}
	strMSet(c)
	c.W.Int(1)
}

// appendCmd logs APPEND itself: it is deterministic, keeps the binlog small for long strings
// and makes a replay mark the value raw exactly as the original did.
func appendCmd(c *Ctx) {
	key, add := c.Args[1], c.Args[2]
	s, err := datatype.LookupString(c.Tx, c.DB, key)
	if err != nil {
		c.typeError(err)
		return
	}
	if s.Exists() && strTooLong(c, s.Len(), int64(len(add))) {
		return
	}
	n := s.Append(add)
	c.Tx.Log(c.DB, key, strAPPEND, key, add)
	c.notify(pubsub.String, "append", key)
	c.W.Int(n)
}

func strlenCmd(c *Ctx) {
	s, err := datatype.LookupString(c.Tx, c.DB, c.Args[1])
	if err != nil {
		c.typeError(err)
		return
	}
	c.W.Int(s.Len()) // zero for a missing key
}

func incrby(c *Ctx) {
	if n, ok := c.IntArg(2); ok {
		strIncrBy(c, n)
	}
}

func decrby(c *Ctx) {
	n, ok := c.IntArg(2)
	if !ok {
		return
	}
	if n == math.MinInt64 {
		c.Error(errStrDecrOvf)
		return
	}
	strIncrBy(c, -n)
}

// strIncrBy adds delta to the integer at key (0 when missing), keeping its TTL.
func strIncrBy(c *Ctx, delta int64) {
	key := c.Args[1]
	s, err := datatype.LookupString(c.Tx, c.DB, key)
	if err != nil {
		c.typeError(err)
		return
	}
	v, val, err := s.IncrBy(delta)
	switch err {
	case nil:
	case datatype.ErrNotInteger:
		c.Error(ErrNotInt)
		return
	case datatype.ErrOverflow:
		c.Error(errOverflow)
		return
	default:
		c.typeError(err)
		return
	}
	c.Tx.Log(c.DB, key, strSET, key, val, strKEEPTTL)
	c.notify(pubsub.String, "incrby", key)
	c.W.Int(v)
}

func incrbyfloat(c *Ctx) {
	key := c.Args[1]
	s, err := datatype.LookupString(c.Tx, c.DB, key)
	if err != nil {
		c.typeError(err)
		return
	}
	cur := new(big.Float).SetPrec(strLDPrec)
	var curInf bool
	if s.Exists() {
		var ok bool
		if s.Len() >= strMaxLDChars { // refused unread: a fragmented value is not assembled
			c.Error(errNotFloat)
			return
		} else if cur, curInf, ok = strParseLongDouble(s.Value()); !ok {
			c.Error(errNotFloat)
			return
		}
	}
	incr, incrInf, ok := strParseLongDouble(c.Args[2])
	if !ok {
		c.Error(errNotFloat)
		return
	}
	if curInf || incrInf {
		c.Error(errStrFloatNaN)
		return
	}
	sum := new(big.Float).SetPrec(strLDPrec).Add(cur, incr)
	if sum.MantExp(nil) > strLDMaxExp {
		c.Error(errStrFloatNaN) // beyond LDBL_MAX: the long double would be infinite
		return
	}
	val := strFormatLongDouble(sum)
	s.Replace(val)
	c.Tx.Log(c.DB, key, strSET, key, val, strKEEPTTL)
	c.notify(pubsub.String, "incrbyfloat", key)
	c.W.Bulk(val)
}

// Redis computes INCRBYFLOAT in x87 80-bit long double: a 64-bit significand, binary
// exponents so that normal values lie in [2^-16382, 2^16384), and subnormals down to
// 2^-16445. big.Float at precision 64 with round-half-even gives the same results inside
// that range; the helpers below handle its edges.
const (
	strLDPrec   = 64
	strLDMaxExp = 16384  // |x| < 2^16384 (big.Float exponent: x = mant * 2^exp, 0.5 <= mant < 1)
	strLDMinExp = -16381 // below 2^-16382 (and in its binade) values are multiples of 2^-16445
	strLDQuant  = 16445
)

// strParseLongDouble parses b as Redis's string2ld does with glibc's strtold: the whole
// string must be one number, no leading space, optional sign, decimal or 0x hexadecimal
// (with a p exponent), "inf"/"infinity" in any case; NaN, overflow to infinity and underflow
// to zero are refused. The result is rounded as strtold rounds to long double. inf reports an
// infinite value (accepted by the parser, refused later by the addition).
func strParseLongDouble(b []byte) (f *big.Float, inf, ok bool) {
	if len(b) == 0 || len(b) >= strMaxLDChars {
		return nil, false, false
	}
	switch b[0] {
	case ' ', '\t', '\n', '\v', '\f', '\r':
		return nil, false, false
	}
	s := b
	neg := false
	if s[0] == '+' || s[0] == '-' {
		neg = s[0] == '-'
		s = s[1:]
	}
	if EqualFold(s, "inf") || EqualFold(s, "infinity") {
		return new(big.Float).SetInf(neg), true, true
	}
	hex := len(s) > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')
	base, expChar := 10, byte('e')
	if hex {
		base, expChar = 16, 'p'
		s = s[2:]
	}
	// Mantissa digits, with an optional point; at least one digit.
	var digits []byte
	frac, i, seen := 0, 0, false
	for ; i < len(s); i++ {
		ch := s[i]
		if ch == '.' {
			if seen {
				break
			}
			seen = true
			continue
		}
		if strDigitVal(ch, base) < 0 {
			break
		}
		digits = append(digits, ch)
		if seen {
			frac++
		}
	}
	if len(digits) == 0 {
		return nil, false, false
	}
	// Exponent: decimal digits after e/E (p/P for hex), optional sign; saturated, since any
	// exponent beyond the long double range means overflow or underflow anyway.
	var exp int64
	if i < len(s) {
		if s[i]|0x20 != expChar {
			return nil, false, false
		}
		i++
		eneg := false
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			eneg = s[i] == '-'
			i++
		}
		if i == len(s) {
			return nil, false, false
		}
		for ; i < len(s); i++ {
			if s[i] < '0' || s[i] > '9' {
				return nil, false, false
			}
			if exp < 1<<40 {
				exp = exp*10 + int64(s[i]-'0')
			}
		}
		if eneg {
			exp = -exp
		}
	}
	mant, _ := new(big.Int).SetString(string(digits), base)
	f = new(big.Float).SetPrec(strLDPrec)
	if mant.Sign() == 0 {
		if neg {
			f.Neg(f)
		}
		return f, false, true
	}
	// The exact value is mant * base^(exp - frac) (hex: mant * 2^(exp - 4*frac)).
	var num, den *big.Int
	if hex {
		e2 := exp - 4*int64(frac)
		mag := int64(mant.BitLen()) + e2 // 2^(mag-1) <= value < 2^mag
		if mag > strLDMaxExp+1 {
			return nil, false, false
		}
		if mag < -strLDQuant-1 {
			return nil, false, false
		}
		num, den = mant, big.NewInt(1)
		if e2 >= 0 {
			num = new(big.Int).Lsh(mant, uint(e2))
		} else {
			den = new(big.Int).Lsh(den, uint(-e2))
		}
	} else {
		e10 := exp - int64(frac)
		mag := int64(len(strings.TrimLeft(string(digits), "0"))) + e10 // 10^(mag-1) <= value < 10^mag
		if mag > 4934 {
			return nil, false, false
		}
		if mag < -4952 {
			return nil, false, false
		}
		num, den = mant, big.NewInt(1)
		pow := new(big.Int).Exp(big.NewInt(10), big.NewInt(strAbs64(e10)), nil)
		if e10 >= 0 {
			num = new(big.Int).Mul(mant, pow)
		} else {
			den = pow
		}
	}
	r := new(big.Rat).SetFrac(num, den)
	f.SetRat(r)
	if f.MantExp(nil) > strLDMaxExp {
		return nil, false, false
	}
	if f.MantExp(nil) <= strLDMinExp {
		// Subnormal range: round to a multiple of 2^-16445.
		scaled := new(big.Rat).Mul(r, new(big.Rat).SetInt(new(big.Int).Lsh(big.NewInt(1), strLDQuant)))
		q := strRoundHalfEven(scaled)
		if q.Sign() == 0 {
			return nil, false, false
		}
		f.SetInt(q)
		f.SetMantExp(f, -strLDQuant)
	}
	if neg {
		f.Neg(f)
	}
	return f, false, true
}

func strAbs64(n int64) int64 {
	if n < 0 {
		return -n
	}
	return n
}

func strDigitVal(ch byte, base int) int {
	switch {
	case ch >= '0' && ch <= '9':
		return int(ch - '0')
	case base == 16 && ch|0x20 >= 'a' && ch|0x20 <= 'f':
		return int(ch|0x20-'a') + 10
	}
	return -1
}

// strRoundHalfEven rounds a non-negative rational to the nearest integer, ties to even.
func strRoundHalfEven(r *big.Rat) *big.Int {
	q, m := new(big.Int).QuoRem(r.Num(), r.Denom(), new(big.Int))
	twice := new(big.Int).Lsh(m, 1)
	switch twice.Cmp(r.Denom()) {
	case 1:
		q.Add(q, big.NewInt(1))
	case 0:
		if q.Bit(0) == 1 {
			q.Add(q, big.NewInt(1))
		}
	}
	return q
}

// strFormatLongDouble formats f as Redis's human-friendly long double: printf("%.17Lf"),
// trailing zeros and a trailing point removed, "-0" written as "0".
func strFormatLongDouble(f *big.Float) []byte {
	s := []byte(f.Text('f', 17))
	if bytes.IndexByte(s, '.') >= 0 {
		s = bytes.TrimRight(s, "0")
		s = bytes.TrimSuffix(s, []byte("."))
	}
	if string(s) == "-0" {
		s = []byte("0")
	}
	return s
}

func getrange(c *Ctx) {
	start, ok := c.IntArg(2)
	if !ok {
		return
	}
	end, ok := c.IntArg(3)
	if !ok {
		return
	}
	s, err := datatype.LookupString(c.Tx, c.DB, c.Args[1])
	if err != nil {
		c.typeError(err)
		return
	}
	if !s.Exists() {
		c.W.Bulk(nil)
		return
	}
	n := s.Len()
	if start < 0 && end < 0 && start > end {
		c.W.Bulk(nil)
		return
	}
	if start < 0 {
		start += n
	}
	if end < 0 {
		end += n
	}
	start, end = max(start, 0), max(end, 0)
	if end >= n {
		end = n - 1
	}
	if start > end || n == 0 {
		c.W.Bulk(nil)
		return
	}
	if !s.Fragmented() {
		c.W.Bulk(s.Value()[start : end+1])
		return
	}
	out := make([]byte, end+1-start)
	s.ReadAt(out, start)
	c.W.Bulk(out)
}

// setrange logs SETRANGE itself, for the reasons given at appendCmd.
func setrange(c *Ctx) {
	key, val := c.Args[1], c.Args[3]
	offset, ok := c.IntArg(2)
	if !ok {
		return
	}
	if offset < 0 {
		c.Error(errStrOffset)
		return
	}
	s, err := datatype.LookupString(c.Tx, c.DB, key)
	if err != nil {
		c.typeError(err)
		return
	}
	if len(val) == 0 {
		c.W.Int(s.Len()) // nothing to write: 0, or the current length
		return
	}
	if strTooLong(c, offset, int64(len(val))) {
		return
	}
	n := s.SetRange(offset, val)
	c.Tx.Log(c.DB, key, strSETRANGE, key, c.Args[2], val)
	c.notify(pubsub.String, "setrange", key)
	c.W.Int(n)
}

// strLCSMatch is one IDX range pair of LCS.
type strLCSMatch struct{ aStart, aEnd, bStart, bEnd, length int64 }

func lcs(c *Ctx) {
	sa, errA := datatype.LookupString(c.Tx, c.DB, c.Args[1])
	sb, errB := datatype.LookupString(c.Tx, c.DB, c.Args[2])
	if errA != nil || errB != nil {
		c.Error(errStrLCSType)
		return
	}
	var getLen, getIdx, withMatchLen bool
	var minMatchLen int64
	for j := 3; j < len(c.Args); j++ {
		opt := strCString(c.Args[j])
		switch {
		case EqualFold(opt, "idx"):
			getIdx = true
		case EqualFold(opt, "len"):
			getLen = true
		case EqualFold(opt, "withmatchlen"):
			withMatchLen = true
		case EqualFold(opt, "minmatchlen") && j < len(c.Args)-1:
			n, ok := c.IntArg(j + 1)
			if !ok {
				return
			}
			minMatchLen = max(n, 0)
			j++
		default:
			c.Error(ErrSyntax)
			return
		}
	}
	if getLen && getIdx {
		c.Error(errStrLCSBoth)
		return
	}
	alen, blen := int(sa.Len()), int(sb.Len())
	cells := uint64(alen+1) * uint64(blen+1)
	if cells*4 > uint64(strProtoMaxBulkLen(c)) || cells/uint64(alen+1) != uint64(blen+1) {
		c.Error(errStrLCSMemory)
		return
	}
	a, b := sa.Value(), sb.Value()
	// table[i*(blen+1)+j] is the LCS length of a[:i] and b[:j].
	w := blen + 1
	table := make([]uint32, cells)
	for i := 1; i <= alen; i++ {
		row, prev := table[i*w:(i+1)*w], table[(i-1)*w:i*w]
		for j := 1; j <= blen; j++ {
			if a[i-1] == b[j-1] {
				row[j] = prev[j-1] + 1
			} else {
				row[j] = max(prev[j], row[j-1])
			}
		}
	}
	total := table[alen*w+blen]
	if getLen {
		c.W.Int(int64(total))
		return
	}
	// Walk back from the end, collecting the common subsequence and, for IDX, the ranges of
	// consecutive matches in the order Redis emits them (from the end of the strings).
	result := make([]byte, total)
	idx := total
	var matches []strLCSMatch
	noRange := int64(alen)
	aStart, aEnd, bStart, bEnd := noRange, int64(0), int64(0), int64(0)
	i, j := alen, blen
	for i > 0 && j > 0 {
		emit := false
		if a[i-1] == b[j-1] {
			result[idx-1] = a[i-1]
			if aStart == noRange {
				aStart, aEnd = int64(i-1), int64(i-1)
				bStart, bEnd = int64(j-1), int64(j-1)
			} else if aStart == int64(i) && bStart == int64(j) {
				aStart--
				bStart--
			} else {
				emit = true
			}
			if aStart == 0 || bStart == 0 {
				emit = true
			}
			idx--
			i--
			j--
		} else {
			if table[(i-1)*w+j] > table[i*w+j-1] {
				i--
			} else {
				j--
			}
			if aStart != noRange {
				emit = true
			}
		}
		if emit {
			length := aEnd - aStart + 1
			if getIdx && (minMatchLen == 0 || length >= minMatchLen) {
				matches = append(matches, strLCSMatch{aStart, aEnd, bStart, bEnd, length})
			}
			aStart = noRange
		}
	}
	if !getIdx {
		c.W.Bulk(result)
		return
	}
	c.W.MapLen(2)
	c.W.BulkString("matches")
	c.W.ArrayLen(len(matches))
	for _, mt := range matches {
		if withMatchLen {
			c.W.ArrayLen(3)
		} else {
			c.W.ArrayLen(2)
		}
		c.W.ArrayLen(2)
		c.W.Int(mt.aStart)
		c.W.Int(mt.aEnd)
		c.W.ArrayLen(2)
		c.W.Int(mt.bStart)
		c.W.Int(mt.bEnd)
		if withMatchLen {
			c.W.Int(mt.length)
		}
	}
	c.W.BulkString("len")
	c.W.Int(int64(total))
}
