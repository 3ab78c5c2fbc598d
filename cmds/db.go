package cmds

import "shardis/codec"

// Whole-database commands. A logical database is spread over every shard, so each of these
// either runs holding every shard (FLUSHDB, FLUSHALL, SWAPDB) or reads every shard's
// published counters (DBSIZE).

func init() {
	Register(
		&Command{Name: "select", Arity: 2, Flags: []string{"loading", "stale", "fast"},
			ACL: []string{"fast", "connection"}, Group: "connection", Since: "1.0.0",
			Summary: "Change the selected database for the current connection", Complexity: "O(1)",
			Syntax: "index", Exec: ExecConn, Run: selectCommand},
		&Command{Name: "dbsize", Arity: 1, Flags: []string{"readonly", "fast"},
			ACL: []string{"keyspace", "read", "fast"}, Group: "server", Since: "1.0.0",
			Summary: "Return the number of keys in the selected database", Complexity: "O(1)",
			Tips: []string{"request_policy:all_shards", "response_policy:agg_sum"}, Exec: ExecServer,
			Traits: TraitUnconfined, Run: dbsizeCommand},
		&Command{Name: "flushdb", Arity: -1, Flags: []string{"write"},
			ACL: []string{"keyspace", "write", "slow", "dangerous"}, Group: "server", Since: "1.0.0",
			Summary:    "Remove all keys from the current database",
			Complexity: "O(N) where N is the number of keys in the selected database",
			Syntax:     "[ASYNC | SYNC]",
			Tips:       []string{"request_policy:all_shards", "response_policy:all_succeeded"}, Exec: ExecAll,
			Run: flushdbCommand},
		&Command{Name: "flushall", Arity: -1, Flags: []string{"write"},
			ACL: []string{"keyspace", "write", "slow", "dangerous"}, Group: "server", Since: "1.0.0",
			Summary:    "Remove all keys from all databases",
			Complexity: "O(N) where N is the total number of keys in all databases",
			Syntax:     "[ASYNC | SYNC]",
			Tips:       []string{"request_policy:all_shards", "response_policy:all_succeeded"}, Exec: ExecAll,
			Run: flushallCommand},
		&Command{Name: "swapdb", Arity: 3, Flags: []string{"write", "fast"},
			ACL: []string{"keyspace", "write", "fast", "dangerous"}, Group: "server", Since: "4.0.0",
			Summary:    "Swaps two Redis databases",
			Complexity: "O(N) where N is the count of clients watching or blocking on keys from both databases.",
			Syntax:     "index1 index2", Exec: ExecAll, Run: swapdbCommand},
	)
}

var (
	dbFLUSHDB  = []byte("FLUSHDB")
	dbFLUSHALL = []byte("FLUSHALL")
	dbSWAPDB   = []byte("SWAPDB")
)

// selectCommand changes the connection's database; commands parsed after it in the same
// pipeline are dispatched with the new one, since SELECT runs as soon as it is parsed.
func selectCommand(c *Ctx) {
	db, ok := keysDBArg(c, c.Args[1])
	if !ok {
		return
	}
	if c.Client != nil {
		c.Client.DB = db
	}
	c.W.OK()
}

// DBKeys returns how many keys logical database db holds, over every shard (committed state).
func DBKeys(c *Ctx, db int) int64 {
	var n int64
	for i := range c.Keyspace.Store.NumShards() {
		n += c.Keyspace.Store.Shard(i).Keys(db)
	}
	return n
}

// dbsizeCommand sums the shards' key counts, which every commit keeps exact. Like Redis's,
// the count includes keys whose expire time has passed but that were not removed yet.
func dbsizeCommand(c *Ctx) {
	n := DBKeys(c, c.DB)
	if c.Tx != nil { // inside EXEC: what the transaction added and removed so far
		n += c.Tx.PendingKeys(c.DB)
	}
	c.W.Int(n)
}

// dbFlushArgs checks FLUSHDB/FLUSHALL's optional ASYNC or SYNC. Both flush the same way:
// range deletions are O(1) and RocksDB reclaims the space in the background.
func dbFlushArgs(c *Ctx) bool {
	if len(c.Args) == 1 || len(c.Args) == 2 && (EqualFold(c.Args[1], "async") || EqualFold(c.Args[1], "sync")) {
		return true
	}
	c.Error(ErrSyntax)
	return false
}

func flushdbCommand(c *Ctx) {
	if !dbFlushArgs(c) {
		return
	}
	for _, id := range c.Tx.Shards() {
		c.Tx.FlushDB(id, c.DB)
		c.Tx.LogShard(id, c.DB, dbFLUSHDB)
	}
	c.W.OK()
}

func flushallCommand(c *Ctx) {
	if !dbFlushArgs(c) {
		return
	}
	dbs := c.Keyspace.Store.Databases()
	for _, id := range c.Tx.Shards() {
		for db := range dbs {
			c.Tx.FlushDB(id, db)
		}
		c.Tx.LogShard(id, c.DB, dbFLUSHALL)
	}
	c.W.OK()
}

// dbIndexArg parses one of SWAPDB's indexes, replying errMsg when it is not an integer.
func dbIndexArg(c *Ctx, arg []byte, errMsg string) (int, bool) {
	v, ok := codec.ParseInt(arg)
	if !ok || v < -1<<31 || v > 1<<31-1 {
		c.Error(errMsg)
		return 0, false
	}
	return int(v), true
}

func swapdbCommand(c *Ctx) {
	a, ok := dbIndexArg(c, c.Args[1], "ERR invalid first DB index")
	if !ok {
		return
	}
	b, ok := dbIndexArg(c, c.Args[2], "ERR invalid second DB index")
	if !ok {
		return
	}
	n := c.Keyspace.Store.Databases()
	if a < 0 || a >= n || b < 0 || b >= n {
		c.Error(errDBIndex)
		return
	}
	if a != b {
		for _, id := range c.Tx.Shards() {
			c.Tx.SwapDB(id, a, b)
			c.Tx.LogShard(id, c.DB, dbSWAPDB, itoa(int64(a)), itoa(int64(b)))
		}
	}
	c.W.OK()
}
