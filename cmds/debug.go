package cmds

import (
	"crypto/sha1"
	"encoding/binary"
	"fmt"
	"log"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"

	"shardis/codec"
	"shardis/config"
	"shardis/datatype"
	"shardis/internal/glob"
	"shardis/server"
)

// DEBUG: the subcommands of Redis 7.0's DEBUG that have a meaning for shardis, each answering
// as Redis does (docs/COMPATIBILITY.md lists them and what differs). The others (the ones
// about Redis's allocator, hash tables and in-memory encodings, AOF, cluster links, cron and
// reply buffers, and the ones that crash the server on purpose) answer Redis's "unknown
// subcommand" error and do nothing.
//
// DEBUG is protected (TraitProtected): the reactor refuses it with Redis's error unless
// enable-debug-command allows the client. It routes by subcommand (debugRoute): those reading
// keys hold the keys' shards, DIGEST, POPULATE and RELOAD every shard, the rest none.

func init() {
	Register(
		&Command{Name: "debug", Arity: -2, Flags: []string{"admin", "noscript", "loading", "stale"},
			ACL: []string{"admin", "slow", "dangerous"}, Group: "server", Since: "1.0.0",
			Summary: "A container for debugging commands", Complexity: "Depends on subcommand.",
			DocFlags: []string{"syscmd"}, Traits: TraitNoTouch | TraitProtected, Route: debugRoute,
			RunServer: debugCommand},
	)
}

// debugSub is one DEBUG subcommand: its argument count (Redis's checks: exact, or at least
// -argc), the shards it holds, and its implementation.
type debugSub struct {
	argc  func(n int) bool
	route debugRouting
	run   func(c *Ctx, srv *server.Server)
}

type debugRouting uint8

const (
	debugNoShard debugRouting = iota
	debugKeyShards
	debugAllShards
)

func argcIs(want ...int) func(int) bool {
	return func(n int) bool {
		for _, w := range want {
			if n == w {
				return true
			}
		}
		return false
	}
}

func argcAtLeast(min int) func(int) bool { return func(n int) bool { return n >= min } }

var debugSubs map[string]debugSub

func init() {
	debugSubs = map[string]debugSub{
		"change-repl-id":             {argcIs(2), debugNoShard, debugChangeReplID},
		"digest":                     {argcIs(2), debugAllShards, debugDigest},
		"digest-value":               {argcAtLeast(2), debugKeyShards, debugDigestValue},
		"error":                      {argcIs(3), debugNoShard, debugError},
		"help":                       {argcIs(2), debugNoShard, debugHelp},
		"listpack":                   {argcIs(3), debugKeyShards, debugListpack},
		"loadaof":                    {argcAtLeast(2), debugAllShards, debugReload},
		"log":                        {argcIs(3), debugNoShard, debugLog},
		"object":                     {argcIs(3), debugKeyShards, debugObject},
		"populate":                   {func(n int) bool { return n >= 3 && n <= 5 }, debugAllShards, debugPopulate},
		"protocol":                   {argcIs(3), debugNoShard, debugProtocol},
		"quicklist":                  {argcIs(3, 4), debugKeyShards, debugQuicklist},
		"quicklist-packed-threshold": {argcIs(3), debugNoShard, debugQuicklistPackedThreshold},
		"reload":                     {argcAtLeast(2), debugAllShards, debugReload},
		"set-active-expire":          {argcIs(3), debugNoShard, debugSetActiveExpire},
		"sleep":                      {argcIs(3), debugNoShard, debugSleep},
		"stringmatch-test":           {argcIs(2), debugNoShard, debugStringmatchTest},
	}
}

// debugLookup returns the subcommand args name, if args have the count it takes.
func debugLookup(args [][]byte) (debugSub, bool) {
	s, ok := debugSubs[strings.ToLower(string(args[1]))]
	if !ok || !s.argc(len(args)) {
		return debugSub{}, false
	}
	return s, true
}

// debugRoute picks the shards a DEBUG subcommand holds.
func debugRoute(c *Ctx, nShards int) []int {
	s, ok := debugLookup(c.Args)
	if !ok {
		return nil
	}
	switch s.route {
	case debugKeyShards:
		var ids []int
		for _, k := range c.Args[2:min(len(c.Args), debugKeyArgsEnd(c.Args))] {
			ids = append(ids, c.Keyspace.Store.ShardOf(k))
		}
		return ids
	case debugAllShards:
		ids := make([]int, nShards)
		for i := range ids {
			ids[i] = i
		}
		return ids
	}
	return nil
}

// debugKeyArgsEnd is the end of the key arguments of a keyed subcommand: every argument for
// DIGEST-VALUE, the one key for the others.
func debugKeyArgsEnd(args [][]byte) int {
	if EqualFold(args[1], "digest-value") {
		return len(args)
	}
	return 3
}

func debugCommand(c *Ctx, srv *server.Server) {
	s, ok := debugLookup(c.Args)
	if !ok {
		SubcommandSyntaxError(c)
		return
	}
	s.run(c, srv)
}

func debugHelp(c *Ctx, _ *server.Server) {
	HelpReply(c,
		"CHANGE-REPL-ID",
		"    Change the replication IDs of the instance.",
		"    Dangerous: should be used only for testing the replication subsystem.",
		"DIGEST",
		"    Output a hex signature representing the current DB content.",
		"DIGEST-VALUE <key> [<key> ...]",
		"    Output a hex signature of the values of all the specified keys.",
		"ERROR <string>",
		"    Return a Redis protocol error with <string> as message. Useful for clients",
		"    unit tests to simulate Redis errors.",
		"LOG <message>",
		"    Write <message> to the server log.",
		"LOADAOF",
		"    Flush the AOF buffers on disk and reload the AOF in memory.",
		"OBJECT <key>",
		"    Show low level info about `key` and associated value.",
		"POPULATE <count> [<prefix>] [<size>]",
		"    Create <count> string keys named key:<num>. If <prefix> is specified then",
		"    it is used instead of the 'key' prefix. These are not propagated to",
		"    replicas. Cluster slots are not respected so keys not belonging to the",
		"    current node can be created in cluster mode.",
		"PROTOCOL <type>",
		"    Reply with a test value of the specified type. <type> can be: string,",
		"    integer, double, bignum, null, array, set, map, attrib, push, verbatim,",
		"    true, false.",
		"RELOAD [option ...]",
		"    Save the RDB on disk and reload it back to memory. Valid <option> values:",
		"    * MERGE: conflicting keys will be loaded from RDB.",
		"    * NOFLUSH: the existing database will not be removed before load, but",
		"      conflicting keys will generate an exception and kill the server.",
		"    * NOSAVE: the database will be loaded from an existing RDB file.",
		"    Examples:",
		"    * DEBUG RELOAD: verify that the server is able to persist, flush and reload",
		"      the database.",
		"    * DEBUG RELOAD NOSAVE: replace the current database with the contents of an",
		"      existing RDB file.",
		"    * DEBUG RELOAD NOSAVE NOFLUSH MERGE: add the contents of an existing RDB",
		"      file to the database.",
		"SET-ACTIVE-EXPIRE <0|1>",
		"    Setting it to 0 disables expiring keys in background when they are not",
		"    accessed (otherwise the Redis behavior). Setting it to 1 reenables back the",
		"    default.",
		"QUICKLIST-PACKED-THRESHOLD <size>",
		"    Sets the threshold for elements to be inserted as plain vs packed nodes",
		"    Default value is 1GB, allows values up to 4GB. Setting to 0 restores to default.",
		"SLEEP <seconds>",
		"    Stop the server for <seconds>. Decimals allowed.",
		"STRINGMATCH-TEST",
		"    Run a fuzz tester against the stringmatchlen() function.",
		"LISTPACK <key>",
		"    Show low level info about the listpack encoding of <key>.",
		"QUICKLIST <key> [<0|1>]",
		"    Show low level info about the quicklist encoding of <key>.",
		"    The optional argument (0 by default) sets the level of detail",
	)
}

// ---- SLEEP, LOG, ERROR, CHANGE-REPL-ID, SET-ACTIVE-EXPIRE, QUICKLIST-PACKED-THRESHOLD ----

// debugSleep sleeps the connection's command (Redis sleeps the whole server; here the other
// clients go on).
func debugSleep(c *Ctx, _ *server.Server) {
	secs := debugParseSeconds(c.Args[2])
	if secs > 0 {
		d := time.Duration(math.MaxInt64)
		if secs < float64(math.MaxInt64)/1e9 {
			d = time.Duration(secs * 1e9)
		}
		time.Sleep(d)
	}
	c.W.OK()
}

// debugParseSeconds reads a number the way C's strtod does for DEBUG SLEEP: the longest
// numeric prefix counts, and text that is no number at all is 0.
func debugParseSeconds(b []byte) float64 {
	s := strings.TrimLeft(string(b), " \t\n\v\f\r")
	for end := len(s); end > 0; end-- {
		if v, err := strconv.ParseFloat(s[:end], 64); err == nil {
			return v
		}
	}
	return 0
}

func debugLog(c *Ctx, _ *server.Server) {
	log.Printf("DEBUG LOG: %s", c.Args[2])
	c.W.OK()
}

// debugError replies "-<string>" as given (newlines made spaces), error code included.
func debugError(c *Ctx, _ *server.Server) {
	msg := strings.NewReplacer("\r", " ", "\n", " ").Replace(string(c.Args[2]))
	c.W.Raw([]byte("-" + msg + "\r\n"))
}

func debugChangeReplID(c *Ctx, srv *server.Server) {
	log.Printf("Changing replication IDs after receiving DEBUG change-repl-id")
	srv.ChangeReplID()
	c.W.OK()
}

// debugSetActiveExpire turns the TTL workers' deletions off (0) or on (anything else, as C's
// atoi reads it).
func debugSetActiveExpire(c *Ctx, _ *server.Server) {
	c.Keyspace.Store.SetActiveExpire(debugAtoi(c.Args[2]) != 0)
	c.W.OK()
}

// debugAtoi reads an integer as C's atoi: optional blanks and sign, then digits; anything
// else ends it, and no digits read as 0.
func debugAtoi(b []byte) int64 {
	s := strings.TrimLeft(string(b), " \t\n\v\f\r")
	end := 0
	if end < len(s) && (s[end] == '-' || s[end] == '+') {
		end++
	}
	for end < len(s) && s[end] >= '0' && s[end] <= '9' {
		end++
	}
	n, _ := strconv.ParseInt(s[:end], 10, 32)
	return n
}

// debugQuicklistPackedThreshold validates the size as Redis does. shardis keeps each list
// element as a key of its own, with no packed or plain nodes, so the value changes nothing.
func debugQuicklistPackedThreshold(c *Ctx, _ *server.Server) {
	sz, ok := config.ParseMemoryU(string(c.Args[2]))
	if !ok || sz > 1<<32-1<<20 {
		c.Error("ERR argument must be a memory value bigger than 1 and smaller than 4gb")
		return
	}
	c.W.OK()
}

// debugStringmatchTest runs Redis's fuzz test of the glob matcher: random patterns against
// random strings, which must return (the matcher is iterative here, so it cannot overflow).
func debugStringmatchTest(c *Ctx, _ *server.Server) {
	var pat, str [32]byte
	for range 1000 {
		for i := range pat {
			pat[i] = byte(rand.IntN(256))
			str[i] = byte(rand.IntN(256))
		}
		glob.Match(pat[:rand.IntN(len(pat))], str[:rand.IntN(len(str))], false)
	}
	c.W.Simple("Apparently Redis did not crash: test passed")
}

// ---- RELOAD, LOADAOF ----

// debugReload is Redis's "persist, flush and reload" as it applies to a disk store: the
// shards' memtables are written to table files (RocksDB's WAL already holds every write) and
// reads go on from the files, as after a restart. The dataset is unchanged, as after Redis's
// save and reload; NOSAVE, NOFLUSH and MERGE (which read an RDB file that does not exist
// here) change nothing.
func debugReload(c *Ctx, _ *server.Server) {
	if EqualFold(c.Args[1], "reload") {
		for _, opt := range c.Args[2:] {
			if !EqualFold(opt, "merge") && !EqualFold(opt, "noflush") && !EqualFold(opt, "nosave") {
				c.Error("ERR DEBUG RELOAD only supports the MERGE, NOFLUSH and NOSAVE options.")
				return
			}
		}
	}
	if err := c.Keyspace.Store.FlushMemtables(); err != nil {
		log.Printf("DEBUG %s: flushing the memtables failed: %v", strings.ToUpper(string(c.Args[1])), err)
		c.Error("ERR Error trying to load the RDB dump")
		return
	}
	if EqualFold(c.Args[1], "reload") {
		log.Printf("DB reloaded by DEBUG RELOAD")
	} else {
		log.Printf("Append Only File loaded by DEBUG LOADAOF")
	}
	c.W.OK()
}

// ---- PROTOCOL ----

func debugProtocol(c *Ctx, _ *server.Server) {
	w := &c.W
	switch strings.ToLower(string(c.Args[2])) {
	case "string":
		w.BulkString("Hello World")
	case "integer":
		w.Int(12345)
	case "double":
		w.Double(3.141)
	case "bignum":
		w.BigNumber("1234567999999999999999999999999999999")
	case "null":
		w.Null()
	case "array":
		w.ArrayLen(3)
		for j := range 3 {
			w.Int(int64(j))
		}
	case "set":
		w.SetLen(3)
		for j := range 3 {
			w.Int(int64(j))
		}
	case "map":
		w.MapLen(3)
		for j := range 3 {
			w.Int(int64(j))
			w.Bool(j == 1)
		}
	case "attrib":
		if w.RESP3 {
			w.Raw([]byte("|1\r\n"))
			w.BulkString("key-popularity")
			w.ArrayLen(2)
			w.BulkString("key:123")
			w.Int(90)
		}
		w.BulkString("Some real reply following the attribute")
	case "push":
		if !w.RESP3 {
			c.Error("ERR RESP2 is not supported by this command")
			return
		}
		w.PushLen(2)
		w.BulkString("server-cpu-usage")
		w.Int(42)
		w.BulkString("Some real reply following the push reply")
	case "true":
		w.Bool(true)
	case "false":
		w.Bool(false)
	case "verbatim":
		w.Verbatim("txt", "This is a verbatim\nstring")
	default:
		c.Error("ERR Wrong protocol type name. Please use one of the following: string|integer|double|bignum|null|array|set|map|attrib|push|verbatim|true|false")
	}
}

// ---- POPULATE ----

// debugPopulate creates count string keys <prefix>:<n> holding value:<n> (cut or padded with
// zero bytes to size, when given), skipping names that exist. The writes are logged to the
// binlog like SETs, so a restart or a replica has them. It commits every populateChunk keys
// (or values' bytes), holding every shard throughout: a million 1 KB values held for one commit
// took 8.6 GB.
func debugPopulate(c *Ctx, _ *server.Server) {
	const errPositive = "ERR value is out of range, must be positive"
	count, ok := codec.ParseInt(c.Args[2])
	if !ok || count < 0 {
		c.Error(errPositive)
		return
	}
	var size int64
	if len(c.Args) == 5 {
		if size, ok = codec.ParseInt(c.Args[4]); !ok || size < 0 {
			c.Error(errPositive)
			return
		}
	}
	prefix := []byte("key")
	if len(c.Args) >= 4 {
		prefix = c.Args[3]
	}
	defer c.Tx.SetReadLookups(c.Tx.SetReadLookups(false))
	var key, val []byte
	held := 0 // about the bytes written since the last commit
	for j := range count {
		// Redis formats the name in a 128-byte buffer: a longer one is cut to 127 bytes.
		key = strconv.AppendInt(append(append(key[:0], prefix...), ':'), j, 10)
		key = key[:min(len(key), 127)]
		if _, exists := c.Tx.Meta(c.DB, key); exists {
			continue
		}
		if size > 0 {
			val = nil // a big value is referenced until the commit (SetString): not reused
		}
		val = strconv.AppendInt(append(val[:0], "value:"...), j, 10)
		if size > 0 {
			val = append(val[:min(int64(len(val)), size)], make([]byte, max(0, size-int64(len(val))))...)
		}
		datatype.SetString(c.Tx, c.DB, key, val, 0)
		c.Tx.Log(c.DB, key, strSET, key, val)
		if c.Tx.Err() != nil {
			return // the transaction fails; the executor replies its error
		}
		if held += 64 + 2*len(key) + 2*len(val); held >= populateChunk {
			if err := c.Tx.CommitSoFar(); err != nil {
				c.Tx.Fail(err)
				return
			}
			held = 0
		}
	}
	c.W.OK()
}

// populateChunk is about how many bytes DEBUG POPULATE writes per commit.
const populateChunk = 16 << 20

// ---- OBJECT, LISTPACK, QUICKLIST ----

// debugLookupKey reads a key without touching it or reporting a miss, replying Redis's "no
// such key" when it is missing.
func debugLookupKey(c *Ctx) (codec.Meta, bool) {
	defer c.Tx.SetReadLookups(c.Tx.SetReadLookups(false))
	m, ok := c.Tx.Meta(c.DB, c.Args[2])
	if !ok {
		c.Error("ERR no such key")
	}
	return m, ok
}

// debugObject answers in Redis's shape. Where Redis shows its memory layout, shardis shows its
// own: "Value at" is the value's storage version (a new value, a new version; strings have
// none), serializedlength the bytes the value takes in shardis's encoding (meta value and
// every element), lru and lru_seconds_idle the access field OBJECT IDLETIME reads, and a
// list's ql_* fields describe its nodes (ql_nodes the nodes its positions span,
// ql_uncompressed_size the bytes of its elements).
func debugObject(c *Ctx, srv *server.Server) {
	m, ok := debugLookupKey(c)
	if !ok {
		return
	}
	key := c.Args[2]
	refcount := 1
	if objectSharedInt(&m) {
		refcount = 1<<31 - 1
	}
	size := int64(len(codec.AppendMeta(nil, &m)))
	var elemBytes int64
	if (m.Type != codec.TypeString || m.Frag) && m.Count > 0 && !m.Packed {
		it := c.Tx.IterateData(c.DB, key, m.Version, nil, nil, false)
		for ; it.Valid(); it.Next() {
			size += int64(len(it.Key()) + len(it.Value()))
		}
		it.Close()
	}
	if m.Type == codec.TypeList {
		l, _ := datatype.ListFromMeta(c.Tx, c.DB, key, m, true)
		it := l.Iter(0, false)
		for ; it.Valid(); it.Next() {
			elemBytes += int64(len(it.Value()))
		}
		it.Close()
	}
	lru := objectAccessField(c, srv.Store.AccessPolicy())
	var extra string
	if m.Type == codec.TypeList {
		compressed := 0
		if srv.Config.Value("list-compress-depth") != "0" {
			compressed = 1
		}
		nodes := listNodesSpanned(&m)
		extra = fmt.Sprintf(" ql_nodes:%d ql_avg_node:%.2f ql_listpack_max:%s ql_compressed:%d ql_uncompressed_size:%d",
			nodes, float64(m.Count)/float64(max(nodes, 1)), srv.Config.Value("list-max-listpack-size"), compressed, elemBytes)
	}
	c.W.Simple(fmt.Sprintf("Value at:%#x refcount:%d encoding:%s serializedlength:%d lru:%d lru_seconds_idle:%d%s",
		m.Version, refcount, objectEncodingOf(&m), size, lru, objectIdleSeconds(c.Tx.Now(), lru), extra))
}

// debugListpack writes a listpack-encoded value's layout (a hash OBJECT ENCODING calls
// listpack) to the log, as Redis prints the listpack on stdout.
func debugListpack(c *Ctx, _ *server.Server) {
	m, ok := debugLookupKey(c)
	if !ok {
		return
	}
	if objectEncodingOf(&m) != "listpack" {
		c.Error("ERR Not a listpack encoded object.")
		return
	}
	log.Printf("DEBUG LISTPACK %q: {entries : %d} (packed in the meta: %t, %d bytes, version %d)",
		c.Args[2], m.Count, m.Packed, len(m.Value), m.Version)
	c.W.Simple("Listpack structure printed on stdout")
}

// debugQuicklist writes a list's layout to the log, as Redis prints its quicklist on stdout.
func debugQuicklist(c *Ctx, _ *server.Server) {
	m, ok := debugLookupKey(c)
	if !ok {
		return
	}
	if objectEncodingOf(&m) != "quicklist" {
		c.Error("ERR Not a quicklist encoded object.")
		return
	}
	log.Printf("DEBUG QUICKLIST %q: {count : %d} {nodes : %d} (nodes of %d positions, positions %d..%d, version %d)",
		c.Args[2], m.Count, listNodesSpanned(&m), codec.ListNodeSlots, m.Head, m.Tail, m.Version)
	c.W.Simple("Quicklist structure printed on stdout")
}

// listNodesSpanned is the number of nodes a list's positions [Head, Tail) span.
func listNodesSpanned(m *codec.Meta) int64 {
	if m.Tail <= m.Head {
		return 0
	}
	return int64((m.Tail-1)>>codec.ListNodeShift - m.Head>>codec.ListNodeShift + 1)
}

// ---- DIGEST, DIGEST-VALUE ----

// Redis's digests (debug.c): SHA1-based, the same for the same data whatever the encoding,
// so a digest taken here matches redis-server's for the same dataset. Element digests are
// XORed where order does not matter (keys, set members, hash fields, zset members) and
// chained where it does (a list's elements).

type digest [20]byte

// xor XORs SHA1(p) into d.
func (d *digest) xor(p []byte) {
	h := sha1.Sum(p)
	for i := range d {
		d[i] ^= h[i]
	}
}

// mix makes d SHA1(d xor SHA1(p)): order matters.
func (d *digest) mix(p []byte) {
	d.xor(p)
	*d = sha1.Sum(d[:])
}

// mixString is mix of a string's value read piece by piece: a fragmented one is never
// assembled.
func (d *digest) mixString(s *datatype.String) {
	h := sha1.New()
	var pos int64
	zeros := make([]byte, 64<<10)
	fill := func(to int64) {
		for pos < to {
			n := min(to-pos, int64(len(zeros)))
			h.Write(zeros[:n])
			pos += n
		}
	}
	s.Chunks(0, s.Len(), func(at int64, b []byte) bool {
		fill(at)
		h.Write(b)
		pos += int64(len(b))
		return true
	})
	fill(s.Len())
	for i, x := range h.Sum(nil) {
		d[i] ^= x
	}
	*d = sha1.Sum(d[:])
}

func (d *digest) hex() string { return fmt.Sprintf("%x", d[:]) }

// redisObjType is Redis's OBJ_* number of a type, which the digest mixes in.
func redisObjType(t codec.Type) uint32 {
	switch t {
	case codec.TypeList:
		return 1
	case codec.TypeSet:
		return 2
	case codec.TypeZSet:
		return 3
	case codec.TypeHash:
		return 4
	case codec.TypeStream:
		return 6
	}
	return 0 // string
}

// digestScore formats a score as C's "%.17g".
func digestScore(f float64) string {
	switch {
	case math.IsInf(f, 1):
		return "inf"
	case math.IsInf(f, -1):
		return "-inf"
	}
	return strconv.FormatFloat(f, 'g', 17, 64)
}

// valueDigest mixes the value of key (meta m) into d (Redis's xorObjectDigest).
func valueDigest(c *Ctx, db int, key []byte, m *codec.Meta, d *digest) {
	var typ [4]byte
	binary.BigEndian.PutUint32(typ[:], redisObjType(m.Type))
	d.mix(typ[:])
	switch m.Type {
	case codec.TypeString:
		s, _ := datatype.StringFromMeta(c.Tx, db, key, *m, true)
		if !s.Fragmented() {
			d.mix(s.Value())
			break
		}
		d.mixString(&s)
	case codec.TypeList:
		l, _ := datatype.ListFromMeta(c.Tx, db, key, *m, true)
		it := l.Iter(0, false)
		for ; it.Valid(); it.Next() {
			d.mix(it.Value())
		}
		it.Close()
	case codec.TypeSet:
		s, _ := datatype.SetFromMeta(c.Tx, db, key, *m, true)
		it := s.Iter(nil)
		for ; it.Valid(); it.Next() {
			d.xor(it.Member())
		}
		it.Close()
	case codec.TypeHash:
		h, _ := datatype.HashFromMeta(c.Tx, db, key, *m, true)
		it := h.Iter(nil)
		for ; it.Valid(); it.Next() {
			var e digest
			e.mix(it.Field())
			e.mix(it.Value())
			d.xor(e[:])
		}
		it.Close()
	case codec.TypeZSet:
		z, _ := datatype.ZSetFromMeta(c.Tx, db, key, *m, true)
		it := z.Members(nil)
		for ; it.Valid(); it.Next() {
			var e digest
			e.mix(it.Member())
			e.mix([]byte(digestScore(it.Score())))
			d.xor(e[:])
		}
		it.Close()
	case codec.TypeStream:
		streamDigest(c, db, key, m, d)
	}
	if m.Expire != 0 {
		d.xor([]byte("!!expire!!"))
	}
}

// debugDigest is the digest of every database: for each one holding keys, in order, its
// number is mixed in, then the digest of each key and value XORed in. All zeros when empty.
func debugDigest(c *Ctx, _ *server.Server) {
	var final digest
	type entry struct {
		key []byte
		m   codec.Meta
	}
	for db := range c.Keyspace.Store.Databases() {
		mixed := false
		for _, id := range c.Tx.Shards() {
			// Collect a batch of keys, then read their values: ScanKeys's iterator and the
			// values' iterators are not open at once.
			var after []byte
			for done := false; !done; {
				var batch []entry
				after, done = c.Tx.ScanKeys(id, db, after, func(k []byte, m *codec.Meta) bool {
					e := entry{key: append([]byte(nil), k...), m: *m}
					e.m.Value = append([]byte(nil), m.Value...)
					batch = append(batch, e)
					return len(batch) < 512
				})
				if len(batch) > 0 && !mixed {
					var n [4]byte
					binary.BigEndian.PutUint32(n[:], uint32(db))
					final.mix(n[:])
					mixed = true
				}
				for i := range batch {
					var d digest
					d.mix(batch[i].key)
					valueDigest(c, db, batch[i].key, &batch[i].m, &d)
					final.xor(d[:])
				}
				if c.Tx.Err() != nil {
					return
				}
			}
		}
	}
	c.W.Simple(final.hex())
}

// debugDigestValue is the digest of each key's value (all zeros for a missing key).
func debugDigestValue(c *Ctx, _ *server.Server) {
	if len(c.Args) == 2 {
		c.W.ArrayLen(0) // no keys: no shard held
		return
	}
	defer c.Tx.SetReadLookups(c.Tx.SetReadLookups(false))
	c.W.ArrayLen(len(c.Args) - 2)
	for _, key := range c.Args[2:] {
		var d digest
		if m, ok := c.Tx.Meta(c.DB, key); ok {
			valueDigest(c, c.DB, key, &m, &d)
		}
		c.W.Simple(d.hex())
	}
}
