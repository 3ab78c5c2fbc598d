package cmds

import (
	"math/rand/v2"
	"strconv"

	"shardis/cmdspec"
	"shardis/codec"
	"shardis/datatype"
	"shardis/internal/glob"
	"shardis/pubsub"
	"shardis/server"
	"shardis/shard"
)

// The generic keyspace commands: they work on keys of any type.

func init() {
	Register(
		&Command{Name: "del", Arity: -2, Flags: []string{"write"}, ACL: []string{"keyspace", "write", "slow"},
			Group: "generic", Since: "1.0.0", Summary: "Delete a key",
			Complexity: "O(N) where N is the number of keys that will be removed. When a key to remove holds a value other than a string, the individual complexity for this key is O(M) where M is the number of elements in the list, set, sorted set or hash. Removing a single key that holds a string value is O(1).",
			Syntax:     "key [key ...]",
			KeySpecs:   []cmdspec.KeySpec{{Flags: cmdspec.RM | cmdspec.Delete, Begin: cmdspec.Index(1), Find: cmdspec.Range(-1, 1, 0)}},
			Tips:       []string{"request_policy:multi_shard", "response_policy:agg_sum"}, Run: delCommand},
		&Command{Name: "unlink", Arity: -2, Flags: []string{"write", "fast"},
			ACL: []string{"keyspace", "write", "fast"}, Group: "generic",
			Since:      "4.0.0",
			Summary:    "Delete a key asynchronously in another thread. Otherwise it is just as DEL, but non blocking.",
			Complexity: "O(1) for each key removed regardless of its size. Then the command does O(N) work in a different thread in order to reclaim memory, where N is the number of allocations the deleted objects where composed of.",
			Syntax:     "key [key ...]",
			KeySpecs:   []cmdspec.KeySpec{{Flags: cmdspec.RM | cmdspec.Delete, Begin: cmdspec.Index(1), Find: cmdspec.Range(-1, 1, 0)}},
			Tips:       []string{"request_policy:multi_shard", "response_policy:agg_sum"}, Run: delCommand},
		&Command{Name: "exists", Arity: -2, Flags: []string{"readonly", "fast"},
			ACL: []string{"keyspace", "read", "fast"}, Group: "generic",
			Since: "1.0.0", Summary: "Determine if a key exists",
			Complexity: "O(N) where N is the number of keys to check.", Syntax: "key [key ...]",
			KeySpecs: []cmdspec.KeySpec{{Flags: cmdspec.RO, Begin: cmdspec.Index(1), Find: cmdspec.Range(-1, 1, 0)}},
			Tips:     []string{"request_policy:multi_shard", "response_policy:agg_sum"}, Traits: TraitNoTouch,
			Run: existsCommand},
		&Command{Name: "type", Arity: 2, Flags: []string{"readonly", "fast"}, ACL: []string{"keyspace", "read", "fast"},
			Group: "generic", Since: "1.0.0",
			Summary: "Determine the type stored at key", Complexity: "O(1)", Syntax: "key",
			KeySpecs: []cmdspec.KeySpec{{Flags: cmdspec.RO, Begin: cmdspec.Index(1), Find: cmdspec.Range(0, 1, 0)}},
			Traits:   TraitNoTouch, Run: typeCommand},
		&Command{Name: "touch", Arity: -2, Flags: []string{"readonly", "fast"},
			ACL: []string{"keyspace", "read", "fast"}, Group: "generic",
			Since:      "3.2.1",
			Summary:    "Alters the last access time of a key(s). Returns the number of existing keys specified.",
			Complexity: "O(N) where N is the number of keys that will be touched.", Syntax: "key [key ...]",
			KeySpecs: []cmdspec.KeySpec{{Flags: cmdspec.RO, Begin: cmdspec.Index(1), Find: cmdspec.Range(-1, 1, 0)}},
			Tips:     []string{"request_policy:multi_shard", "response_policy:agg_sum"},
			Traits:   TraitAlwaysTouches, Run: existsCommand},
		&Command{Name: "rename", Arity: 3, Flags: []string{"write"}, ACL: []string{"keyspace", "write", "slow"},
			Group: "generic", Since: "1.0.0", Summary: "Rename a key",
			Complexity: "O(1)", Syntax: "key newkey",
			KeySpecs: []cmdspec.KeySpec{
				{Flags: cmdspec.RW | cmdspec.Access | cmdspec.Delete, Begin: cmdspec.Index(1), Find: cmdspec.Range(0, 1, 0)},
				{Flags: cmdspec.OW | cmdspec.Update, Begin: cmdspec.Index(2), Find: cmdspec.Range(0, 1, 0)},
			},
			Run: func(c *Ctx) { renameGeneric(c, false) }},
		&Command{Name: "renamenx", Arity: 3, Flags: []string{"write", "fast"},
			ACL: []string{"keyspace", "write", "fast"}, Group: "generic",
			Since: "1.0.0", Summary: "Rename a key, only if the new key does not exist", Complexity: "O(1)",
			Syntax: "key newkey",
			KeySpecs: []cmdspec.KeySpec{
				{Flags: cmdspec.RW | cmdspec.Access | cmdspec.Delete, Begin: cmdspec.Index(1), Find: cmdspec.Range(0, 1, 0)},
				{Flags: cmdspec.OW | cmdspec.Insert, Begin: cmdspec.Index(2), Find: cmdspec.Range(0, 1, 0)},
			},
			Run: func(c *Ctx) { renameGeneric(c, true) }},
		&Command{Name: "copy", Arity: -3, Flags: []string{"write", "denyoom"},
			ACL: []string{"keyspace", "write", "slow"}, Group: "generic",
			Since: "6.2.0", Summary: "Copy a key",
			Complexity: "O(N) worst case for collections, where N is the number of nested items. O(1) for string values.",
			Syntax:     "source destination [DB destination-db] [REPLACE]",
			KeySpecs: []cmdspec.KeySpec{
				{Flags: cmdspec.RO | cmdspec.Access, Begin: cmdspec.Index(1), Find: cmdspec.Range(0, 1, 0)},
				{Flags: cmdspec.OW | cmdspec.Update, Begin: cmdspec.Index(2), Find: cmdspec.Range(0, 1, 0)},
			},
			Run: copyCommand},
		&Command{Name: "move", Arity: 3, Flags: []string{"write", "fast"}, ACL: []string{"keyspace", "write", "fast"},
			Group: "generic", Since: "1.0.0",
			Summary: "Move a key to another database", Complexity: "O(1)", Syntax: "key db",
			KeySpecs: []cmdspec.KeySpec{{Flags: cmdspec.RW | cmdspec.Access | cmdspec.Update, Begin: cmdspec.Index(1), Find: cmdspec.Range(0, 1, 0)}},
			Run:      moveCommand},
		&Command{Name: "keys", Arity: 2, Flags: []string{"readonly"},
			ACL: []string{"keyspace", "read", "slow", "dangerous"}, Group: "generic", Since: "1.0.0",
			Summary:    "Find all keys matching the given pattern",
			Complexity: "O(N) with N being the number of keys in the database, under the assumption that the key names in the database and the given pattern have limited length.",
			Syntax:     "pattern", Tips: []string{"request_policy:all_shards", "nondeterministic_output_order"},
			Exec: ExecAll, Run: keysCommand},
		&Command{Name: "scan", Arity: -2, Flags: []string{"readonly"}, ACL: []string{"keyspace", "read", "slow"},
			Group: "generic", Since: "2.8.0", Summary: "Incrementally iterate the keys space",
			Complexity: "O(1) for every call. O(N) for a complete iteration, including enough command calls for the cursor to return back to 0. N is the number of elements inside the collection.",
			Syntax:     "cursor [MATCH pattern] [COUNT count] [TYPE type]",
			Tips:       []string{"nondeterministic_output", "request_policy:special"}, Traits: TraitNoTouch,
			Route: scanRoute, Run: scanCommand},
		&Command{Name: "randomkey", Arity: 1, Flags: []string{"readonly"}, ACL: []string{"keyspace", "read", "slow"},
			Group: "generic", Since: "1.0.0", Summary: "Return a random key from the keyspace",
			Complexity: "O(1)", Tips: []string{"request_policy:all_shards", "nondeterministic_output"},
			Exec: ExecAll, Run: randomkeyCommand},
		&Command{Name: "object", Arity: -2, ACL: []string{"slow"}, Group: "generic", Since: "2.2.3",
			Summary: "A container for object introspection commands", Complexity: "Depends on subcommand.",
			Subs: map[string]*Command{
				"encoding": {Arity: 3, Flags: []string{"readonly"}, ACL: []string{"keyspace", "read", "slow"}, Since: "2.2.3",
					Summary: "Inspect the internal encoding of a Redis object", Complexity: "O(1)", Syntax: "key",
					KeySpecs: []cmdspec.KeySpec{{Flags: cmdspec.RO, Begin: cmdspec.Index(2), Find: cmdspec.Range(0, 1, 0)}},
					Tips:     []string{"nondeterministic_output"}, Traits: TraitNoTouch, Run: objectEncoding},
				// FREQ and IDLETIME read the shard's access table (shard/access.go); which
				// one answers depends on maxmemory-policy, as in Redis.
				"freq": {Arity: 3, Flags: []string{"readonly"}, ACL: []string{"keyspace", "read", "slow"}, Since: "4.0.0",
					Summary: "Get the logarithmic access frequency counter of a Redis object", Complexity: "O(1)",
					Syntax:   "key",
					KeySpecs: []cmdspec.KeySpec{{Flags: cmdspec.RO, Begin: cmdspec.Index(2), Find: cmdspec.Range(0, 1, 0)}},
					Tips:     []string{"nondeterministic_output"}, Traits: TraitNoTouch, Run: objectFreq},
				"help": {Arity: 2, Flags: []string{"loading", "stale"}, ACL: []string{"keyspace", "slow"}, Since: "6.2.0",
					Summary: "Show helpful text about the different subcommands", Complexity: "O(1)",
					Exec: ExecConn, Run: objectHelp},
				"idletime": {Arity: 3, Flags: []string{"readonly"}, ACL: []string{"keyspace", "read", "slow"}, Since: "2.2.3",
					Summary: "Get the time since a Redis object was last accessed", Complexity: "O(1)",
					Syntax:   "key",
					KeySpecs: []cmdspec.KeySpec{{Flags: cmdspec.RO, Begin: cmdspec.Index(2), Find: cmdspec.Range(0, 1, 0)}},
					Tips:     []string{"nondeterministic_output"}, Traits: TraitNoTouch, Run: objectIdletime},
				// Values are not shared objects; only Redis's shared integers (0..9999) report
				// Redis's shared refcount.
				"refcount": {Arity: 3, Flags: []string{"readonly"}, ACL: []string{"keyspace", "read", "slow"}, Since: "2.2.3",
					Summary: "Get the number of references to the value of the key", Complexity: "O(1)",
					Syntax:   "key",
					KeySpecs: []cmdspec.KeySpec{{Flags: cmdspec.RO, Begin: cmdspec.Index(2), Find: cmdspec.Range(0, 1, 0)}},
					Tips:     []string{"nondeterministic_output"}, Traits: TraitNoTouch, Run: objectRefcount},
			}},
	)
}

const (
	errKeysSameObject = "ERR source and destination objects are the same"
	errKeysCursor     = "ERR invalid cursor"
	errKeysNoLFU      = "ERR An LFU maxmemory policy is not selected, access frequency not tracked. Please note that when switching between policies at runtime LRU and LFU data will take some time to adjust."
	errKeysLFU        = "ERR An LFU maxmemory policy is selected, idle time not tracked. Please note that when switching between policies at runtime LRU and LFU data will take some time to adjust."
)

// DEL and UNLINK: UNLINK's lazy freeing is what every delete does here (a collection's data
// keys are reclaimed in the background), so the two are the same command.
func delCommand(c *Ctx) {
	var n int64
	for _, key := range c.Args[1:] {
		if c.Tx.Delete(c.DB, key) {
			c.Tx.Log(c.DB, key, keysDEL, key)
			c.notify(pubsub.Generic, "del", key)
			n++
		}
	}
	c.W.Int(n)
}

var keysDEL = []byte("DEL")

// EXISTS and TOUCH count the live keys named, a key named twice counting twice. TOUCH has
// nothing to update: shardis keeps no access times.
func existsCommand(c *Ctx) {
	var n int64
	for _, key := range c.Args[1:] {
		if c.Tx.Exists(c.DB, key) {
			n++
		}
	}
	c.W.Int(n)
}

func typeCommand(c *Ctx) {
	m, ok := c.Tx.Meta(c.DB, c.Args[1])
	if !ok {
		c.W.Simple("none")
		return
	}
	c.W.Simple(m.Type.String())
}

// copyKeyValue writes the whole value of key src of srcDB (meta m) as key dst of dstDB,
// replacing whatever dst held and keeping m's expire and encoding flag, and logs the write in
// dst's shard. RENAME, RENAMENX, COPY and MOVE all copy through it, as their first write; it
// returns the error to reply ("" on success).
//
// A string's whole value is its meta. A collection's elements (a fragmented string's fragments) are copied to data keys under a
// fresh version (two keys must never share data keys), O(elements), and the destination is
// logged as a rebuild (logCollection), since the source may live in another shard.
func copyKeyValue(c *Ctx, srcDB int, src []byte, m *codec.Meta, dstDB int, dst []byte) string {
	if m.Type != codec.TypeString || m.Frag { // a fragmented string is copied as a collection
		out := *m
		out.Version = c.Tx.NewVersion(dst)
		if !m.Packed { // a packed hash's or set's elements are in its meta
			c.Tx.CopyData(srcDB, src, m.Version, dstDB, dst, out.Version)
		}
		c.Tx.SetMeta(dstDB, dst, &out)
		c.logCollection(dstDB, dst, &out)
		return ""
	}
	out := codec.Meta{Type: codec.TypeString, Raw: m.Raw, Expire: m.Expire, Value: m.Value}
	c.Tx.SetMeta(dstDB, dst, &out)
	args := [][]byte{[]byte("SET"), dst, m.Value}
	if m.Expire != 0 {
		args = append(args, []byte("PXAT"), itoa(m.Expire))
	}
	c.Tx.Log(dstDB, dst, args...)
	if m.Raw && len(m.Value) > 0 {
		// A SETRANGE of the first byte, which changes nothing, makes the rebuilt value raw
		// too (OBJECT ENCODING), as it is here.
		c.Tx.Log(dstDB, dst, strSETRANGE, dst, []byte("0"), m.Value[:1])
	}
	return ""
}

// renameGeneric is RENAME and (nx) RENAMENX.
func renameGeneric(c *Ctx, nx bool) {
	src, dst := c.Args[1], c.Args[2]
	m, ok := c.Tx.Meta(c.DB, src)
	if !ok {
		c.Error(errNoKey)
		return
	}
	if string(src) == string(dst) {
		if nx {
			c.W.Int(0)
		} else {
			c.W.OK()
		}
		return
	}
	if c.Tx.Exists(c.DB, dst) {
		if nx {
			c.W.Int(0)
			return
		}
		// Redis deletes the destination and adds it anew (a "new" event).
		c.Tx.Delete(c.DB, dst)
	}
	if msg := copyKeyValue(c, c.DB, src, &m, c.DB, dst); msg != "" {
		c.Error(msg)
		return
	}
	c.Tx.Delete(c.DB, src)
	c.Tx.Log(c.DB, src, keysDEL, src)
	c.notify(pubsub.Generic, "rename_from", src)
	c.notify(pubsub.Generic, "rename_to", dst)
	if nx {
		c.W.Int(1)
	} else {
		c.W.OK()
	}
}

// keysDBArg parses a database index argument as Redis's getIntFromObjectOrReply and
// selectDb do, replying the error when it is not a valid index.
func keysDBArg(c *Ctx, arg []byte) (int, bool) {
	v, ok := codec.ParseInt(arg)
	if !ok {
		c.Error(ErrNotInt)
		return 0, false
	}
	if v < -1<<31 || v > 1<<31-1 {
		c.Error("ERR value is out of range, value must between -2147483648 and 2147483647")
		return 0, false
	}
	if v < 0 || v >= int64(c.Keyspace.Store.Databases()) {
		c.Error(errDBIndex)
		return 0, false
	}
	return int(v), true
}

func copyCommand(c *Ctx) {
	src, dst := c.Args[1], c.Args[2]
	dstDB, replace := c.DB, false
	for j := 3; j < len(c.Args); j++ {
		switch {
		case EqualFold(c.Args[j], "replace"):
			replace = true
		case EqualFold(c.Args[j], "db") && j+1 < len(c.Args):
			db, ok := keysDBArg(c, c.Args[j+1])
			if !ok {
				return
			}
			dstDB = db
			j++
		default:
			c.Error(ErrSyntax)
			return
		}
	}
	if dstDB == c.DB && string(src) == string(dst) {
		c.Error(errKeysSameObject)
		return
	}
	m, ok := c.Tx.MetaRead(c.DB, src)
	if !ok {
		c.W.Int(0)
		return
	}
	if c.Tx.Exists(dstDB, dst) {
		if !replace {
			c.W.Int(0)
			return
		}
		// Redis deletes the destination and adds it anew (a "new" event, no "del").
		c.Tx.Delete(dstDB, dst)
	}
	if msg := copyKeyValue(c, c.DB, src, &m, dstDB, dst); msg != "" {
		c.Error(msg)
		return
	}
	c.notifyIn(pubsub.Generic, "copy_to", dstDB, dst)
	c.W.Int(1)
}

func moveCommand(c *Ctx) {
	key := c.Args[1]
	dstDB, ok := keysDBArg(c, c.Args[2])
	if !ok {
		return
	}
	if dstDB == c.DB {
		c.Error(errKeysSameObject)
		return
	}
	m, ok := c.Tx.Meta(c.DB, key)
	if !ok || c.Tx.Exists(dstDB, key) {
		c.W.Int(0)
		return
	}
	if msg := copyKeyValue(c, c.DB, key, &m, dstDB, key); msg != "" {
		c.Error(msg)
		return
	}
	c.Tx.Delete(c.DB, key)
	c.Tx.Log(c.DB, key, keysDEL, key)
	c.notify(pubsub.Generic, "move_from", key)
	c.notifyIn(pubsub.Generic, "move_to", dstDB, key)
	c.W.Int(1)
}

// keysMatcher returns the MATCH/KEYS filter for pattern; a bare "*" matches every key, the
// empty one included, as Redis shortcuts it before calling the matcher.
func keysMatcher(pattern []byte) func(key []byte) bool {
	if string(pattern) == "*" {
		return func([]byte) bool { return true }
	}
	return func(key []byte) bool { return glob.Match(pattern, key, false) }
}

// scanOptions parses the [MATCH pattern] [COUNT count] options of SCAN, SSCAN and ZSCAN from
// c.Args[from:], and [TYPE type] when withType (SCAN). ok is false when an error was replied.
func scanOptions(c *Ctx, from int, withType bool) (count int64, match func([]byte) bool, typeName []byte, ok bool) {
	count, match = 10, keysMatcher([]byte("*"))
	for i := from; i < len(c.Args); i += 2 {
		more := i+1 < len(c.Args)
		switch {
		case EqualFold(c.Args[i], "count") && more:
			n, ok := c.IntArg(i + 1)
			if !ok {
				return 0, nil, nil, false
			}
			if n < 1 {
				c.Error(ErrSyntax)
				return 0, nil, nil, false
			}
			count = n
		case EqualFold(c.Args[i], "match") && more:
			match = keysMatcher(c.Args[i+1])
		case withType && EqualFold(c.Args[i], "type") && more:
			typeName = c.Args[i+1]
		default:
			c.Error(ErrSyntax)
			return 0, nil, nil, false
		}
	}
	return count, match, typeName, true
}

func keysCommand(c *Ctx) {
	match := keysMatcher(c.Args[1])
	var keys [][]byte
	for _, id := range c.Tx.Shards() {
		c.Tx.ScanKeys(id, c.DB, nil, func(key []byte, _ *codec.Meta) bool {
			if match(key) {
				keys = append(keys, append([]byte{}, key...))
			}
			return true
		})
	}
	c.W.ArrayLen(len(keys))
	for _, k := range keys {
		c.W.Bulk(k)
	}
}

// keysParseCursor parses a SCAN cursor as Redis does with strtoul: an optional sign (a
// negative number wraps around), decimal digits, nothing else; the empty string is 0.
func keysParseCursor(b []byte) (uint64, bool) {
	if len(b) == 0 {
		return 0, true
	}
	neg := false
	digits := b
	if b[0] == '+' || b[0] == '-' {
		neg = b[0] == '-'
		digits = b[1:]
	}
	if len(digits) == 0 {
		return 0, false
	}
	v, err := strconv.ParseUint(string(digits), 10, 64)
	if err != nil {
		return 0, false
	}
	if neg {
		v = -v
	}
	return v, true
}

// scanRoute sends SCAN to the shard its cursor names. A cursor that is invalid or names no
// shard goes to shard 0, where scanCommand replies without scanning.
func scanRoute(c *Ctx, nShards int) []int {
	cursor, ok := keysParseCursor(c.Args[1])
	if !ok {
		return []int{0}
	}
	id, _ := keysCursorShard(c, cursor)
	if id >= nShards {
		return []int{0}
	}
	return []int{id}
}

// keysCursorShard returns the shard a cursor names and its saved position.
func keysCursorShard(c *Ctx, cursor uint64) (int, []byte) {
	if server.IsStart(cursor) {
		return int(cursor), nil // a shard's start: no lookup
	}
	return c.Keyspace.Cursors.Load(cursor)
}

// scanCommand walks one shard per call from the cursor's position: COUNT keys are visited
// (filters apply to visited keys, so a page may be shorter), and when the shard ends the
// cursor moves to the start of the next shard, or 0 after the last.
func scanCommand(c *Ctx) {
	cursor, ok := keysParseCursor(c.Args[1])
	if !ok {
		c.Error(errKeysCursor)
		return
	}
	count, match, typeName, ok := scanOptions(c, 2, true)
	if !ok {
		return
	}
	id, pos := keysCursorShard(c, cursor)
	if id >= c.Keyspace.Store.NumShards() {
		keysScanReply(c, 0, nil)
		return
	}
	var keys [][]byte
	visited := int64(0)
	last, done := c.Tx.ScanKeys(id, c.DB, pos, func(key []byte, m *codec.Meta) bool {
		visited++
		if match(key) && (typeName == nil || keysEqualFoldBytes(typeName, m.Type.String())) {
			keys = append(keys, append([]byte{}, key...))
		}
		return visited < count
	})
	var next uint64
	switch {
	case !done:
		next = c.Keyspace.Cursors.Save(id, last)
	case id+1 < c.Keyspace.Store.NumShards():
		next = server.StartOf(id + 1)
	}
	keysScanReply(c, next, keys)
}

func keysScanReply(c *Ctx, cursor uint64, keys [][]byte) {
	c.W.ArrayLen(2)
	c.W.Bulk(strconv.AppendUint(nil, cursor, 10))
	c.W.ArrayLen(len(keys))
	for _, k := range keys {
		c.W.Bulk(k)
	}
}

// keysEqualFoldBytes compares b with s ignoring ASCII case (SCAN TYPE compares with
// strcasecmp).
func keysEqualFoldBytes(b []byte, s string) bool {
	if len(b) != len(s) {
		return false
	}
	for i := range b {
		x, y := b[i], s[i]
		if 'A' <= x && x <= 'Z' {
			x += 'a' - 'A'
		}
		if 'A' <= y && y <= 'Z' {
			y += 'a' - 'A'
		}
		if x != y {
			return false
		}
	}
	return true
}

// randomkeyCommand tries the shards in random order and replies the first random key found.
func randomkeyCommand(c *Ctx) {
	ids := c.Tx.Shards()
	rand.Shuffle(len(ids), func(i, j int) { ids[i], ids[j] = ids[j], ids[i] })
	for _, id := range ids {
		if key, ok := c.Tx.RandomKey(id, c.DB); ok {
			c.W.Bulk(key)
			return
		}
	}
	c.W.Null()
}

var objectHelpLines = []string{
	"OBJECT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
	"ENCODING <key>",
	"    Return the kind of internal representation used in order to store the value",
	"    associated with a <key>.",
	"FREQ <key>",
	"    Return the access frequency index of the <key>. The returned integer is",
	"    proportional to the logarithm of the recent access frequency of the key.",
	"IDLETIME <key>",
	"    Return the idle time of the <key>, that is the approximated number of",
	"    seconds elapsed since the last access to the key.",
	"REFCOUNT <key>",
	"    Return the number of references of the value associated with the specified",
	"    <key>.",
	"HELP",
	"    Prints this help.",
}

func objectHelp(c *Ctx) {
	c.W.ArrayLen(len(objectHelpLines))
	for _, l := range objectHelpLines {
		c.W.Simple(l)
	}
}

// objectLookup returns the key's meta, replying null when it is missing. Its miss is no
// "keymiss" event, as in Redis.
func objectLookup(c *Ctx) (codec.Meta, bool) {
	defer c.Tx.SetReadLookups(c.Tx.SetReadLookups(false))
	m, ok := c.Tx.Meta(c.DB, c.Args[2])
	if !ok {
		c.W.Null()
	}
	return m, ok
}

func objectFreq(c *Ctx) {
	if _, ok := objectLookup(c); !ok {
		return
	}
	p := c.Keyspace.Store.AccessPolicy()
	if !p.LFU {
		c.Error(errKeysNoLFU)
		return
	}
	c.W.Int(int64(shard.LFUDecr(objectAccessField(c, p), c.Tx.Now(), p.DecayTime)))
}

func objectIdletime(c *Ctx) {
	if _, ok := objectLookup(c); !ok {
		return
	}
	p := c.Keyspace.Store.AccessPolicy()
	if p.LFU {
		c.Error(errKeysLFU)
		return
	}
	c.W.Int(objectIdleSeconds(c.Tx.Now(), objectAccessField(c, p)))
}

// objectAccessField is the key's access field (Redis's 24-bit lru; see shard/access.go). For
// a key the shard's table does not know (untouched since start, or its slot taken by another
// key since) it is what Redis gives a key loaded at start: the LRU clock of the start, or an
// LFU counter of LFU_INIT_VAL set at the start, decaying since.
func objectAccessField(c *Ctx, p shard.AccessPolicy) uint32 {
	if f, ok := c.Tx.AccessField(c.DB, c.Args[2]); ok {
		return f
	}
	started := c.Keyspace.Started.UnixMilli()
	if p.LFU {
		return uint32(started/60000)&0xffff<<8 | shard.LFUInitVal
	}
	return shard.LRUClock(started)
}

// objectIdleSeconds is Redis's estimateObjectIdleTime in seconds: the LRU clock wraps every
// 2^24 seconds.
func objectIdleSeconds(nowMs int64, lru uint32) int64 {
	clock := shard.LRUClock(nowMs)
	if clock >= lru {
		return int64(clock - lru)
	}
	return int64(clock) + int64(1<<24-1-lru)
}

// objectSharedInt reports whether Redis would hold the string as one of its shared integer
// objects (0..9999, int encoded; there is no maxmemory policy that forbids sharing).
func objectSharedInt(m *codec.Meta) bool {
	if m.Type != codec.TypeString || m.Raw {
		return false
	}
	v, ok := codec.ParseInt(m.Value)
	return ok && v >= 0 && v < 10000
}

func objectRefcount(c *Ctx) {
	m, ok := objectLookup(c)
	if !ok {
		return
	}
	if objectSharedInt(&m) {
		c.W.Int(1<<31 - 1)
		return
	}
	c.W.Int(1)
}

func objectEncoding(c *Ctx) {
	m, ok := objectLookup(c)
	if !ok {
		return
	}
	c.W.BulkString(objectEncodingOf(&m))
}

// objectEncodingOf names the encoding Redis 7.0 would use for the value. Strings, hashes,
// sets and sorted sets are exact (the meta says whether Redis's listpack or intset limits
// were passed: datatype.Encoding; one written by a build before that says hashtable or
// skiplist). Lists are always quicklists in 7.0.
func objectEncodingOf(m *codec.Meta) string {
	switch m.Type {
	case codec.TypeString:
		if m.Raw {
			return "raw"
		}
		if _, ok := codec.ParseInt(m.Value); ok {
			return "int"
		}
		if len(m.Value) <= 44 {
			return "embstr"
		}
		return "raw"
	case codec.TypeList:
		return "quicklist"
	case codec.TypeStream:
		return "stream"
	default: // hash, set, sorted set
		return datatype.Encoding(m)
	}
}
