package admin

import (
	"math"
	"runtime"
	"runtime/debug"
	"strconv"

	"shardis/cmds"
	"shardis/cmdspec"
	"shardis/codec"
	"shardis/server"
)

// MEMORY: USAGE, STATS, DOCTOR, MALLOC-STATS, PURGE, HELP, as Redis 7.0 answers them, with
// shardis's own figures. Memory here is the Go heap and runtime plus RocksDB's memtables,
// table readers and block cache (INFO memory's used_memory); a key's usage is what it takes
// in the store, since its value lives on disk rather than in memory.

func init() {
	cmds.Register(
		&cmds.Command{Name: "memory", Arity: -2, ACL: []string{"slow"}, Group: "server", Since: "4.0.0",
			Summary: "A container for memory diagnostics commands", Complexity: "Depends on subcommand.",
			Subs: map[string]*cmds.Command{
				"doctor": {Arity: 2, ACL: []string{"slow"}, Since: "4.0.0", Summary: "Outputs memory problems report",
					Complexity: "O(1)",
					Tips:       []string{"nondeterministic_output", "request_policy:all_shards", "response_policy:special"},
					Exec:       cmds.ExecServer, RunServer: memoryDoctor},
				"help": {Arity: 2, Flags: []string{"loading", "stale"}, ACL: []string{"slow"}, Since: "4.0.0",
					Summary: "Show helpful text about the different subcommands", Complexity: "O(1)",
					Exec: cmds.ExecConn, Run: memoryHelp},
				"malloc-stats": {Arity: 2, ACL: []string{"slow"}, Since: "4.0.0", Summary: "Show allocator internal stats",
					Complexity: "Depends on how much memory is allocated, could be slow",
					Tips:       []string{"nondeterministic_output", "request_policy:all_shards", "response_policy:special"},
					Exec:       cmds.ExecServer, Run: memoryMallocStats},
				"purge": {Arity: 2, ACL: []string{"slow"}, Since: "4.0.0", Summary: "Ask the allocator to release memory",
					Complexity: "Depends on how much memory is allocated, could be slow",
					Tips:       []string{"request_policy:all_shards", "response_policy:all_succeeded"}, Exec: cmds.ExecServer,
					Run: memoryPurge},
				"stats": {Arity: 2, ACL: []string{"slow"}, Since: "4.0.0", Summary: "Show memory usage details",
					Complexity: "O(1)",
					Tips:       []string{"nondeterministic_output", "request_policy:all_shards", "response_policy:special"},
					Exec:       cmds.ExecServer, RunServer: memoryStats},
				"usage": {Arity: -3, Flags: []string{"readonly"}, ACL: []string{"read", "slow"}, Since: "4.0.0", Summary: "Estimate the memory usage of a key",
					Complexity: "O(N) where N is the number of samples.", Syntax: "key [SAMPLES count]",
					KeySpecs: []cmdspec.KeySpec{{Flags: cmdspec.RO, Begin: cmdspec.Index(2), Find: cmdspec.Range(0, 1, 0)}},
					Traits:   cmds.TraitNoTouch, Run: memoryUsage},
			}},
	)
}

var memoryHelpLines = []string{
	"MEMORY <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
	"DOCTOR",
	"    Return memory problems reports.",
	"MALLOC-STATS",
	"    Return internal statistics report from the memory allocator.",
	"PURGE",
	"    Attempt to purge dirty pages for reclamation by the allocator.",
	"STATS",
	"    Return information about the memory usage of the server.",
	"USAGE <key> [SAMPLES <count>]",
	"    Return memory in bytes used by <key> and its value. Nested values are",
	"    sampled up to <count> times (default: 5, 0 means sample all).",
	"HELP",
	"    Prints this help.",
}

func memoryHelp(c *cmds.Ctx) {
	c.W.ArrayLen(len(memoryHelpLines))
	for _, l := range memoryHelpLines {
		c.W.Simple(l)
	}
}

// memoryDefaultSamples is how many elements of a collection MEMORY USAGE reads by default.
const memoryDefaultSamples = 5

// memoryUsage is the bytes key takes in the store: its meta key and value and, for a
// collection, its data keys and values, estimated from the first SAMPLES elements as Redis
// estimates from its samples (0: every element).
func memoryUsage(c *cmds.Ctx) {
	samples := int64(memoryDefaultSamples)
	for j := 3; j < len(c.Args); j++ {
		if !cmds.EqualFold(c.Args[j], "samples") || j+1 >= len(c.Args) {
			c.Error(cmds.ErrSyntax)
			return
		}
		n, ok := c.IntArg(j + 1)
		if !ok {
			return
		}
		if n < 0 {
			c.Error(cmds.ErrSyntax)
			return
		}
		if n == 0 {
			n = math.MaxInt64
		}
		samples = n
		j++
	}
	key := c.Args[2]
	prev := c.Tx.SetReadLookups(false) // no "keymiss": Redis looks the key up without notifying
	m, ok := c.Tx.Meta(c.DB, key)
	c.Tx.SetReadLookups(prev)
	if !ok {
		c.W.Null()
		return
	}
	usage := int64(len(codec.AppendMetaKey(nil, 0, key)) + len(codec.AppendMeta(nil, &m)))
	if m.Type == codec.TypeString && m.Frag { // every fragment: there are few of them
		it := c.Tx.IterateData(c.DB, key, m.Version, nil, nil, false)
		for ; it.Valid(); it.Next() {
			usage += int64(len(it.Key()) + len(it.Value()))
		}
		it.Close()
	} else if m.Type != codec.TypeString && m.Count > 0 && !m.Packed { // a packed one is its meta
		var sampled, bytes int64
		var lower, upper []byte
		if m.Type == codec.TypeStream { // sample the entries, which the count counts
			lower, upper = []byte{codec.StreamEntry}, []byte{codec.StreamEntry + 1}
		}
		it := c.Tx.IterateData(c.DB, key, m.Version, lower, upper, false)
		for ; it.Valid() && sampled < samples; it.Next() {
			bytes += int64(len(it.Key()) + len(it.Value()))
			sampled += listKeyPositions(&m, it.Elem())
		}
		it.Close()
		if sampled > 0 {
			usage += int64(float64(bytes) / float64(sampled) * float64(m.Count))
		}
	}
	if m.Type == codec.TypeStream {
		usage += cmds.StreamGroupsUsage(c.Tx, c.DB, key, m, samples)
	}
	c.W.Int(usage)
}

// listKeyPositions is how many elements a data key of a collection stands for: one, but for a
// list the live positions of a node (its big elements' keys none: their node counts them).
func listKeyPositions(m *codec.Meta, elem []byte) int64 {
	if m.Type != codec.TypeList {
		return 1
	}
	node, _, big, ok := codec.ParseListElem(elem)
	if !ok || big {
		return 0
	}
	lo := max(m.Head, node<<codec.ListNodeShift)
	hi := min(m.Tail, (node+1)<<codec.ListNodeShift)
	if hi <= lo {
		return 0
	}
	return int64(hi - lo)
}

// memoryFigures is one reading of the server's memory (INFO memory, MEMORY STATS, DOCTOR).
type memoryFigures struct {
	used, peak, rss                    int64
	goUsed, memtables, readers         int64
	cache                              int64
	heapAlloc, heapInuse, heapResident int64
	clients                            int64 // client buffers: unread input and unsent output
	numClients                         int64
	keys                               int64
}

// takeMemory reads the server's memory figures and moves the recorded peak up to them.
func takeMemory(c *cmds.Ctx, srv *server.Server) memoryFigures {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	m := memoryFigures{
		goUsed:       int64(ms.HeapAlloc + ms.StackInuse + ms.MSpanInuse + ms.MCacheInuse + ms.GCSys + ms.OtherSys + ms.BuckHashSys),
		memtables:    storeProperty(c, "rocksdb.cur-size-all-mem-tables"),
		readers:      storeProperty(c, "rocksdb.estimate-table-readers-mem"),
		cache:        int64(srv.Store.BlockCacheUsage()),
		heapAlloc:    int64(ms.HeapAlloc),
		heapInuse:    int64(ms.HeapInuse),
		heapResident: int64(ms.HeapSys - ms.HeapReleased),
		rss:          infoRSS(),
	}
	m.used = m.goUsed + m.memtables + m.readers + m.cache
	peak := srv.MemPeak.Load()
	for m.used > peak && !srv.MemPeak.CompareAndSwap(peak, m.used) {
		peak = srv.MemPeak.Load()
	}
	m.peak = max(peak, m.used)
	for _, cl := range srv.Clients.All() {
		m.numClients++
		if cl.Buffers != nil {
			in, out := cl.Buffers()
			m.clients += int64(in + out)
		}
	}
	for db := range srv.Store.Databases() {
		m.keys += cmds.DBKeys(c, db)
	}
	return m
}

// overhead is what is not the data: the runtime and the client buffers (MEMORY STATS
// overhead.total, INFO used_memory_overhead).
func (m *memoryFigures) overhead() int64 { return m.goUsed + m.clients }

// ratio is a/b, or 0 when b is 0.
func ratio(a, b int64) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}

func memoryStats(c *cmds.Ctx, srv *server.Server) {
	m := takeMemory(c, srv)
	nonEmpty := make([]int, 0, srv.Store.Databases())
	for db := range srv.Store.Databases() {
		if cmds.DBKeys(c, db) > 0 {
			nonEmpty = append(nonEmpty, db)
		}
	}
	// What is not the data: the runtime and the buffers. The dataset is what RocksDB holds in
	// memory for the data (memtables, table readers, cached blocks).
	overhead := m.overhead()
	dataset := m.used - overhead
	c.W.MapLen(27 + len(nonEmpty))
	pair := func(name string, v int64) { c.W.BulkString(name); c.W.Int(v) }
	pairF := func(name string, v float64) { c.W.BulkString(name); c.W.Double(v) }
	pair("peak.allocated", m.peak)
	pair("total.allocated", m.used)
	pair("startup.allocated", 0)
	pair("replication.backlog", 0)
	pair("clients.slaves", 0)
	pair("clients.normal", m.clients)
	pair("cluster.links", 0)
	pair("aof.buffer", 0)
	pair("lua.caches", int64(cmds.ScriptCache().Size()))
	pair("functions.caches", 0)
	for _, db := range nonEmpty {
		c.W.BulkString("db." + strconv.Itoa(db))
		c.W.MapLen(3)
		pair("overhead.hashtable.main", 0)
		pair("overhead.hashtable.expires", 0)
		pair("overhead.hashtable.slot-to-keys", 0)
	}
	pair("overhead.total", overhead)
	pair("keys.count", m.keys)
	perKey := int64(0)
	if m.keys > 0 {
		perKey = (m.used - overhead) / m.keys
	}
	pair("keys.bytes-per-key", perKey)
	pair("dataset.bytes", dataset)
	pairF("dataset.percentage", ratio(dataset*100, m.used))
	pairF("peak.percentage", ratio(m.used*100, m.peak))
	pair("allocator.allocated", m.heapAlloc)
	pair("allocator.active", m.heapInuse)
	pair("allocator.resident", m.heapResident)
	pairF("allocator-fragmentation.ratio", ratio(m.heapInuse, m.heapAlloc))
	pair("allocator-fragmentation.bytes", m.heapInuse-m.heapAlloc)
	pairF("allocator-rss.ratio", ratio(m.heapResident, m.heapInuse))
	pair("allocator-rss.bytes", m.heapResident-m.heapInuse)
	pairF("rss-overhead.ratio", ratio(m.rss, m.heapResident))
	pair("rss-overhead.bytes", m.rss-m.heapResident)
	pairF("fragmentation", ratio(m.rss, m.used))
	pair("fragmentation.bytes", m.rss-m.used)
}

func memoryMallocStats(c *cmds.Ctx) {
	c.W.BulkString("Stats not supported for the current allocator")
}

// memoryPurge returns the Go heap's free pages to the system (Redis asks jemalloc to purge).
func memoryPurge(c *cmds.Ctx) {
	debug.FreeOSMemory()
	c.W.OK()
}

// memoryDoctor applies Redis's checks, with its texts, to shardis's figures. The
// allocator-specific ones (fragmentation, allocator RSS) read the Go heap.
func memoryDoctor(c *cmds.Ctx, srv *server.Server) {
	m := takeMemory(c, srv)
	const mb10 = 10 << 20
	var issues []string
	empty := m.used < 5<<20
	if !empty {
		if ratio(m.peak, m.used) > 1.5 {
			issues = append(issues, " * Peak memory: In the past this instance used more than 150% the memory that is currently using. The allocator is normally not able to release memory after a peak, so you can expect to see a big fragmentation ratio, however this is actually harmless and is only due to the memory peak, and if the Redis instance Resident Set Size (RSS) is currently bigger than expected, the memory will be used as soon as you fill the Redis instance with more data. If the memory peak was only occasional and you want to try to reclaim memory, please try the MEMORY PURGE command, otherwise the only other option is to shutdown and restart the instance.\n\n")
		}
		if ratio(m.rss, m.used) > 1.4 && m.rss-m.used > mb10 {
			issues = append(issues, " * High total RSS: This instance has a memory fragmentation and RSS overhead greater than 1.4 (this means that the Resident Set Size of the Redis process is much larger than the sum of the logical allocations Redis performed). This problem is usually due either to a large peak memory (check if there is a peak memory entry above in the report) or may result from a workload that causes the allocator to fragment memory a lot. If the problem is a large peak memory, then there is no issue. Otherwise, make sure you are using the Jemalloc allocator and not the default libc malloc. Note: The currently used allocator is \"go+libc\".\n\n")
		}
		if ratio(m.heapInuse, m.heapAlloc) > 1.1 && m.heapInuse-m.heapAlloc > mb10 {
			issues = append(issues, " * High allocator fragmentation: This instance has an allocator external fragmentation greater than 1.1. This problem is usually due either to a large peak memory (check if there is a peak memory entry above in the report) or may result from a workload that causes the allocator to fragment memory a lot. You can try enabling 'activedefrag' config option.\n\n")
		}
		if ratio(m.heapResident, m.heapInuse) > 1.1 && m.heapResident-m.heapInuse > mb10 {
			issues = append(issues, " * High allocator RSS overhead: This instance has an RSS memory overhead is greater than 1.1 (this means that the Resident Set Size of the allocator is much larger than the sum what the allocator actually holds). This problem is usually due to a large peak memory (check if there is a peak memory entry above in the report), you can try the MEMORY PURGE command to reclaim it.\n\n")
		}
		if m.numClients > 0 && m.clients/m.numClients > 200<<10 {
			issues = append(issues, " * Big client buffers: The clients output buffers in this instance are greater than 200K per client (on average). This may result from different causes, like Pub/Sub clients subscribed to channels bot not receiving data fast enough, so that data piles on the Redis instance output buffer, or clients sending commands with large replies or very large sequences of commands in the same pipeline. Please use the CLIENT LIST command in order to investigate the issue if it causes problems in your instance, or to understand better why certain clients are using a big amount of memory.\n\n")
		}
	}
	var report string
	switch {
	case empty:
		report = "Hi Sam, this instance is empty or is using very little memory, my issues detector can't be used in these conditions. Please, leave for your mission on Earth and fill it with some data. The new Sam and I will be back to our programming as soon as I finished rebooting.\n"
	case len(issues) == 0:
		report = "Hi Sam, I can't find any memory issue in your instance. I can only account for what occurs on this base.\n"
	default:
		report = "Sam, I detected a few issues in this Redis instance memory implants:\n\n"
		for _, s := range issues {
			report += s
		}
		report += "I'm here to keep you safe, Sam. I want to help you.\n"
	}
	c.W.Verbatim("txt", report)
}
