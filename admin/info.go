package admin

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"shardis/cmds"
	"shardis/pubsub"
	"shardis/server"
)

// INFO: Redis 7.0's sections and field names, filled with what shardis can measure, plus a
// "shardis" section describing the shards. Fields with no meaning here (replication backlog,
// AOF rewrites, forks) report what an idle Redis reports.

func init() {
	cmds.Register(
		&cmds.Command{Name: "info", Arity: -1, Flags: []string{"loading", "stale"}, ACL: []string{"slow", "dangerous"},
			Group: "server", Since: "1.0.0", Summary: "Get information and statistics about the server",
			Complexity: "O(1)", Syntax: "[section [section ...]]",
			Tips: []string{"nondeterministic_output", "request_policy:all_shards", "response_policy:special"},
			Exec: cmds.ExecServer, Traits: cmds.TraitUnconfined, RunServer: infoCommand},
	)
}

// infoSection is one "# Title" block of INFO.
type infoSection struct {
	name    string // lower case, as INFO's arguments name it
	title   string
	deflt   bool // part of INFO / INFO default
	collect func(c *cmds.Ctx, srv *server.Server, w *infoWriter)
}

// infoSections in the order INFO prints them (Redis's order, then shardis's own).
var infoSections = []infoSection{
	{"server", "Server", true, infoServer},
	{"clients", "Clients", true, infoClients},
	{"memory", "Memory", true, infoMemory},
	{"persistence", "Persistence", true, infoPersistence},
	{"stats", "Stats", true, infoStats},
	{"replication", "Replication", true, infoReplication},
	{"cpu", "CPU", true, infoCPU},
	{"modules", "Modules", true, func(*cmds.Ctx, *server.Server, *infoWriter) {}},
	{"commandstats", "Commandstats", false, infoCommandStats},
	{"errorstats", "Errorstats", true, infoErrorStats},
	{"latencystats", "Latencystats", false, infoLatencyStats},
	{"cluster", "Cluster", true, func(_ *cmds.Ctx, _ *server.Server, w *infoWriter) { w.int("cluster_enabled", 0) }},
	{"keyspace", "Keyspace", true, infoKeyspace},
	{"shardis", "Shardis", true, infoShardis},
}

func infoCommand(c *cmds.Ctx, srv *server.Server) {
	want := make([]bool, len(infoSections))
	if len(c.Args) == 1 {
		for i, s := range infoSections {
			want[i] = s.deflt
		}
	}
	for _, a := range c.Args[1:] {
		switch {
		case cmds.EqualFold(a, "all"), cmds.EqualFold(a, "everything"):
			for i := range want {
				want[i] = true
			}
		case cmds.EqualFold(a, "default"):
			for i, s := range infoSections {
				want[i] = want[i] || s.deflt
			}
		default:
			for i, s := range infoSections {
				if cmds.EqualFold(a, s.name) {
					want[i] = true
				}
			}
		}
	}
	w := &infoWriter{}
	for i, s := range infoSections {
		if !want[i] {
			continue
		}
		if len(w.b) > 0 {
			w.b = append(w.b, "\r\n"...)
		}
		w.b = append(w.b, "# "...)
		w.b = append(w.b, s.title...)
		w.b = append(w.b, "\r\n"...)
		s.collect(c, srv, w)
	}
	c.W.Verbatim("txt", string(w.b))
}

// infoWriter accumulates "field:value\r\n" lines.
type infoWriter struct{ b []byte }

func (w *infoWriter) str(k, v string) {
	w.b = append(w.b, k...)
	w.b = append(w.b, ':')
	w.b = append(w.b, v...)
	w.b = append(w.b, "\r\n"...)
}

func (w *infoWriter) int(k string, v int64) { w.str(k, strconv.FormatInt(v, 10)) }

func (w *infoWriter) float(k string, v float64, prec int) {
	w.str(k, strconv.FormatFloat(v, 'f', prec, 64))
}

// bytesToHuman formats a byte count as Redis does in INFO ("1.16M").
func bytesToHuman(n int64) string {
	d := float64(n)
	switch {
	case n < 1024:
		return strconv.FormatInt(n, 10) + "B"
	case n < 1<<20:
		return fmt.Sprintf("%.2fK", d/(1<<10))
	case n < 1<<30:
		return fmt.Sprintf("%.2fM", d/(1<<20))
	case n < 1<<40:
		return fmt.Sprintf("%.2fG", d/(1<<30))
	case n < 1<<50:
		return fmt.Sprintf("%.2fT", d/(1<<40))
	}
	return fmt.Sprintf("%.2fP", d/(1<<50))
}

func infoServer(c *cmds.Ctx, srv *server.Server, w *infoWriter) {
	now := time.Now()
	w.str("redis_version", cmds.RedisVersion)
	w.str("shardis_version", server.Version)
	w.str("redis_git_sha1", "00000000")
	w.str("redis_git_dirty", "0")
	w.str("redis_build_id", "0")
	w.str("redis_mode", "standalone")
	w.str("os", infoOS())
	w.int("arch_bits", strconv.IntSize)
	w.str("monotonic_clock", "POSIX clock_gettime")
	if runtime.GOOS == "linux" {
		w.str("multiplexing_api", "epoll")
	} else {
		w.str("multiplexing_api", "kqueue")
	}
	w.str("atomicvar_api", "sync/atomic")
	w.str("gcc_version", "0.0.0") // what Redis prints when not built by GCC
	w.str("go_version", runtime.Version())
	w.int("process_id", int64(os.Getpid()))
	w.str("process_supervised", srv.Config.SupervisedMode())
	w.str("run_id", srv.RunID)
	w.int("tcp_port", int64(srv.Port))
	w.int("server_time_usec", now.UnixMicro())
	up := int64(now.Sub(srv.Started) / time.Second)
	w.int("uptime_in_seconds", up)
	w.int("uptime_in_days", up/86400)
	w.int("hz", int64(srv.Config.Hz()))
	w.int("configured_hz", int64(srv.Config.Hz()))
	w.int("lru_clock", now.Unix()&(1<<24-1))
	exe, _ := os.Executable()
	w.str("executable", exe)
	cfgFile := srv.Config.File()
	if cfgFile != "" {
		if abs, err := filepath.Abs(cfgFile); err == nil {
			cfgFile = abs
		}
	}
	w.str("config_file", cfgFile)
	w.int("io_threads_active", 0)
}

// infoOS is uname's "sysname release machine", as Redis prints it.
func infoOS() string {
	var u syscall.Utsname
	if err := syscall.Uname(&u); err != nil {
		return runtime.GOOS + " " + runtime.GOARCH
	}
	field := func(f [65]int8) string {
		b := make([]byte, 0, len(f))
		for _, ch := range f {
			if ch == 0 {
				break
			}
			b = append(b, byte(ch))
		}
		return string(b)
	}
	return field(u.Sysname) + " " + field(u.Release) + " " + field(u.Machine)
}

func infoClients(c *cmds.Ctx, srv *server.Server, w *infoWriter) {
	w.int("connected_clients", int64(srv.Clients.Count()))
	w.int("cluster_connections", 0)
	w.int("maxclients", int64(srv.Config.MaxClients()))
	// The largest buffers of the clients connected now (Redis keeps the largest of the last
	// few seconds): unread input and unsent output, pub/sub queues included.
	var maxIn, maxOut, paused int
	for _, cl := range srv.Clients.All() {
		if cl.PauseHeld() { // held by CLIENT PAUSE: blocked, as Redis counts it
			paused++
		}
		if cl.Buffers != nil {
			in, out := cl.Buffers()
			maxIn, maxOut = max(maxIn, in), max(maxOut, out)
		}
	}
	w.int("client_recent_max_input_buffer", int64(maxIn))
	w.int("client_recent_max_output_buffer", int64(maxOut))
	blocked, blockingKeys := srv.Store.Blocked()
	w.int("blocked_clients", int64(blocked+paused))
	var trackingClients int64
	if srv.Tracking != nil {
		trackingClients, _, _, _ = srv.Tracking.Stats()
	}
	w.int("tracking_clients", trackingClients)
	w.int("clients_in_timeout_table", 0)
	w.int("total_blocking_keys", int64(blockingKeys)) // Redis 7.2's, for the waiter tables' size
}

// storeProperty reads an integer RocksDB property (0 when unavailable).
func storeProperty(c *cmds.Ctx, name string) int64 {
	n := c.Keyspace.Store.IntProperty(name)
	return n
}

func infoMemory(c *cmds.Ctx, srv *server.Server, w *infoWriter) {
	m := takeMemory(c, srv)
	used, peak, rss := m.used, m.peak, m.rss
	overhead := m.overhead()
	dataset := used - overhead
	w.int("used_memory", used)
	w.str("used_memory_human", bytesToHuman(used))
	w.int("used_memory_rss", rss)
	w.str("used_memory_rss_human", bytesToHuman(rss))
	w.int("used_memory_peak", peak)
	w.str("used_memory_peak_human", bytesToHuman(peak))
	w.str("used_memory_peak_perc", fmt.Sprintf("%.2f%%", float64(used)*100/float64(peak)))
	w.int("used_memory_overhead", overhead)
	w.int("used_memory_startup", 0) // as MEMORY STATS startup.allocated: not measured
	w.int("used_memory_dataset", dataset)
	w.str("used_memory_dataset_perc", fmt.Sprintf("%.2f%%", ratio(dataset*100, used)))
	w.int("allocator_allocated", m.heapAlloc)
	w.int("allocator_active", m.heapInuse)
	w.int("allocator_resident", m.heapResident)
	w.int("used_memory_go", m.goUsed)
	w.int("used_memory_rocksdb_memtables", m.memtables)
	w.int("used_memory_rocksdb_table_readers", m.readers)
	w.int("used_memory_rocksdb_block_cache", m.cache)
	w.int("rocksdb_block_cache_capacity", srv.Config.BlockCacheSize())
	var si syscall.Sysinfo_t
	if syscall.Sysinfo(&si) == nil {
		total := int64(si.Totalram) * int64(si.Unit)
		w.int("total_system_memory", total)
		w.str("total_system_memory_human", bytesToHuman(total))
	}
	// The Lua states (package script) live in the Go heap, counted in used_memory_go: they
	// have no figure of their own. The scripts' and functions' code is measured.
	nScripts, scriptBytes := cmds.ScriptCache().Stats()
	nLibs, nFuncs, funcBytes := cmds.FunctionsFootprint(c)
	w.int("used_memory_lua", 0)
	w.int("used_memory_vm_eval", 0)
	w.str("used_memory_lua_human", "0B")
	w.int("used_memory_scripts_eval", int64(scriptBytes))
	w.int("number_of_cached_scripts", int64(nScripts))
	w.int("number_of_functions", nFuncs)
	w.int("number_of_libraries", nLibs)
	w.int("used_memory_vm_functions", 0)
	w.int("used_memory_vm_total", 0)
	w.str("used_memory_vm_total_human", "0B")
	w.int("used_memory_functions", funcBytes)
	w.int("used_memory_scripts", int64(scriptBytes)+funcBytes)
	w.str("used_memory_scripts_human", bytesToHuman(int64(scriptBytes)+funcBytes))
	// Reported as configured; shardis does not act on them (docs/CONFIG.md, maxmemory).
	maxmem, _ := strconv.ParseUint(srv.Config.Value("maxmemory"), 10, 64)
	w.str("maxmemory", strconv.FormatUint(maxmem, 10))
	w.str("maxmemory_human", bytesToHuman(int64(min(maxmem, math.MaxInt64))))
	w.str("maxmemory_policy", srv.Config.Value("maxmemory-policy"))
	w.float("allocator_frag_ratio", ratio(m.heapInuse, m.heapAlloc), 2)
	w.int("allocator_frag_bytes", m.heapInuse-m.heapAlloc)
	w.float("allocator_rss_ratio", ratio(m.heapResident, m.heapInuse), 2)
	w.int("allocator_rss_bytes", m.heapResident-m.heapInuse)
	w.float("rss_overhead_ratio", ratio(rss, m.heapResident), 2)
	w.int("rss_overhead_bytes", rss-m.heapResident)
	w.float("mem_fragmentation_ratio", ratio(rss, used), 2)
	w.int("mem_fragmentation_bytes", rss-used)
	w.int("mem_not_counted_for_evict", 0)
	w.int("mem_replication_backlog", 0)
	w.int("mem_total_replication_buffers", 0)
	w.int("mem_clients_slaves", 0)
	w.int("mem_clients_normal", m.clients)
	w.int("mem_cluster_links", 0)
	w.int("mem_aof_buffer", 0)
	w.str("mem_allocator", "go+libc")
	w.int("active_defrag_running", 0)
	w.int("lazyfree_pending_objects", 0)
	w.int("lazyfreed_objects", 0)
}

// infoRSS reads the resident set size from /proc (0 where there is none).
func infoRSS() int64 {
	data, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0
	}
	f := strings.Fields(string(data))
	if len(f) < 2 {
		return 0
	}
	pages, _ := strconv.ParseInt(f[1], 10, 64)
	return pages * int64(os.Getpagesize())
}

func infoPersistence(c *cmds.Ctx, srv *server.Server, w *infoWriter) {
	loading := srv.Loading()
	w.int("loading", infoBool(loading))
	w.int("async_loading", 0)
	// shardis saves without forking: no copy-on-write, nothing for these to count.
	w.int("current_cow_peak", 0)
	w.int("current_cow_size", 0)
	w.int("current_cow_size_age", 0)
	w.str("current_fork_perc", "0.00")
	w.int("current_save_keys_processed", 0)
	w.int("current_save_keys_total", 0)
	w.int("rdb_changes_since_last_save", srv.Store.Dirty.Load())
	running := srv.Saves.Running.Load()
	w.int("rdb_bgsave_in_progress", infoBool(running))
	w.int("rdb_last_save_time", srv.Store.LastSave.Load())
	if srv.Saves.Failed.Load() {
		w.str("rdb_last_bgsave_status", "err")
	} else {
		w.str("rdb_last_bgsave_status", "ok")
	}
	if srv.Saves.Ever.Load() {
		w.int("rdb_last_bgsave_time_sec", srv.Saves.LastSecs.Load())
	} else {
		w.int("rdb_last_bgsave_time_sec", -1)
	}
	if running {
		w.int("rdb_current_bgsave_time_sec", (time.Now().UnixMilli()-srv.Saves.Started.Load())/1000)
	} else {
		w.int("rdb_current_bgsave_time_sec", -1)
	}
	w.int("rdb_saves", srv.Saves.Count.Load())
	w.int("rdb_last_cow_size", 0)
	w.int("rdb_last_load_keys_expired", 0)
	w.int("rdb_last_load_keys_loaded", 0)
	w.int("aof_enabled", 1)
	rw := &srv.Saves.Rewrite
	rewriting := rw.Running.Load()
	w.int("aof_rewrite_in_progress", infoBool(rewriting))
	w.int("aof_rewrite_scheduled", infoBool(rw.Scheduled.Load()))
	if rw.Ever.Load() {
		w.int("aof_last_rewrite_time_sec", rw.LastSecs.Load())
	} else {
		w.int("aof_last_rewrite_time_sec", -1)
	}
	if rewriting {
		w.int("aof_current_rewrite_time_sec", (time.Now().UnixMilli()-rw.Started.Load())/1000)
	} else {
		w.int("aof_current_rewrite_time_sec", -1)
	}
	if rw.Failed.Load() {
		w.str("aof_last_bgrewrite_status", "err")
	} else {
		w.str("aof_last_bgrewrite_status", "ok")
	}
	w.int("aof_rewrites", rw.Count.Load())
	w.int("aof_rewrites_consecutive_failures", 0)
	if srv.Store.DiskLow() {
		w.str("aof_last_write_status", "err") // the disk guard turns writes away
	} else {
		w.str("aof_last_write_status", "ok")
	}
	w.int("aof_last_cow_size", 0)
	w.int("module_fork_in_progress", 0)
	w.int("module_fork_last_cow_size", 0)
	if loading {
		// What is loading is RocksDB's recovery: the bytes are its write-ahead log's.
		startedAt, loaded, total := srv.LoadingProgress()
		perc, remaining := 0.0, int64(1)
		if total > 0 {
			perc, remaining = float64(loaded)*100/float64(total), total-loaded
		}
		eta := int64(1) // Redis's figure while there is not enough information
		if elapsed := time.Now().Unix() - startedAt; elapsed > 0 {
			eta = elapsed * remaining / (loaded + 1)
		}
		w.int("loading_start_time", startedAt)
		w.int("loading_total_bytes", total)
		w.int("loading_rdb_used_mem", 0)
		w.int("loading_loaded_bytes", loaded)
		w.str("loading_loaded_perc", strconv.FormatFloat(perc, 'f', 2, 64))
		w.int("loading_eta_seconds", eta)
	}
}

func infoBool(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

func infoStats(c *cmds.Ctx, srv *server.Server, w *infoWriter) {
	st := &srv.Stats
	ops, in, out := st.CommandsProcessed.Load(), st.NetInputBytes.Load(), st.NetOutputBytes.Load()
	opsRate, inKB, outKB := srv.Rate.Sample(time.Now(), ops, in, out)
	w.int("total_connections_received", st.ConnectionsReceived.Load())
	w.int("total_commands_processed", ops)
	w.int("instantaneous_ops_per_sec", int64(opsRate))
	w.int("total_net_input_bytes", in)
	w.int("total_net_output_bytes", out)
	w.int("total_net_repl_input_bytes", 0)
	w.int("total_net_repl_output_bytes", 0)
	w.float("instantaneous_input_kbps", inKB, 2)
	w.float("instantaneous_output_kbps", outKB, 2)
	w.str("instantaneous_input_repl_kbps", "0.00")
	w.str("instantaneous_output_repl_kbps", "0.00")
	w.int("rejected_connections", st.RejectedConnections.Load())
	w.int("sync_full", st.SyncFull.Load())
	w.int("sync_partial_ok", st.SyncPartialOK.Load())
	w.int("sync_partial_err", st.SyncPartialErr.Load())
	w.int("expired_keys", srv.Store.ExpiredKeys.Load()-st.ExpiredAtReset.Load())
	w.str("expired_stale_perc", "0.00")
	w.int("expired_time_cap_reached_count", 0)
	w.int("expire_cycle_cpu_milliseconds", 0)
	w.int("evicted_keys", 0)
	w.int("evicted_clients", 0)
	w.int("total_eviction_exceeded_time", 0)
	w.int("current_eviction_exceeded_time", 0)
	w.int("keyspace_hits", st.KeyspaceHits.Load())
	w.int("keyspace_misses", st.KeyspaceMisses.Load())
	ps := &srv.PubSub
	w.int("pubsub_channels", int64(ps.Len(pubsub.Channel)))
	w.int("pubsub_patterns", int64(ps.Len(pubsub.Pattern)))
	w.int("pubsubshard_channels", int64(ps.Len(pubsub.ShardChannel)))
	w.int("latest_fork_usec", 0)
	w.int("total_forks", 0)
	w.int("migrate_cached_sockets", 0)
	w.int("slave_expires_tracked_keys", 0)
	w.int("active_defrag_hits", 0)
	w.int("active_defrag_misses", 0)
	w.int("active_defrag_key_hits", 0)
	w.int("active_defrag_key_misses", 0)
	w.int("total_active_defrag_time", 0)
	w.int("current_active_defrag_time", 0)
	var keys, items, prefixes int64
	if srv.Tracking != nil {
		_, keys, items, prefixes = srv.Tracking.Stats()
	}
	w.int("tracking_total_keys", keys)
	w.int("tracking_total_items", items)
	w.int("tracking_total_prefixes", prefixes)
	w.int("unexpected_error_replies", 0)
	w.int("total_error_replies", st.ErrorReplies.Load())
	w.int("dump_payload_sanitizations", 0)
	w.int("total_reads_processed", st.ReadsProcessed.Load())
	w.int("total_writes_processed", st.WritesProcessed.Load())
	w.int("io_threaded_reads_processed", 0)
	w.int("io_threaded_writes_processed", 0)
	w.int("reply_buffer_shrinks", 0)
	w.int("reply_buffer_expands", 0)
}

func infoReplication(c *cmds.Ctx, srv *server.Server, w *infoWriter) {
	in := replicationInfo(srv)
	if in.Replica {
		w.str("role", "slave")
		w.str("master_host", in.MasterHost)
		w.int("master_port", int64(in.MasterPort))
		w.str("master_link_status", map[bool]string{true: "up", false: "down"}[in.LinkUp])
		w.int("master_last_io_seconds_ago", in.LastIOSecs)
		w.int("master_sync_in_progress", b2i(in.SyncInProgress))
		w.str("slave_read_repl_offset", strconv.FormatUint(in.ReplicaReplOffset, 10))
		w.str("slave_repl_offset", strconv.FormatUint(in.ReplicaReplOffset, 10))
		if !in.LinkUp {
			w.int("master_link_down_since_seconds", in.LinkDownSecs)
		}
		w.int("slave_priority", in.ReplicaPriority)
		w.int("slave_read_only", b2i(in.ReplicaReadOnly))
		w.int("replica_announced", 1)
	} else {
		w.str("role", "master")
	}
	w.int("connected_slaves", int64(len(in.Replicas)))
	for i, r := range in.Replicas {
		w.str("slave"+strconv.Itoa(i), fmt.Sprintf("ip=%s,port=%d,state=%s,offset=%d,lag=%d", r.IP, r.Port, r.State, r.Offset, r.Lag))
	}
	w.str("master_failover_state", in.FailoverState)
	w.str("master_replid", in.ReplID)
	w.str("master_replid2", in.ReplID2)
	// The shards' binlogs are the replication stream: its offset is the sum of their last
	// sequence numbers, and the backlog is what they hold.
	w.str("master_repl_offset", strconv.FormatUint(in.Offset, 10))
	w.int("second_repl_offset", in.SecondOffset)
	var held uint64
	st := srv.Store
	for i := range st.NumShards() {
		if first, last := st.Shard(i).BinlogRange(); first != 0 {
			held += last - first + 1
		}
	}
	w.int("repl_backlog_active", b2i(held > 0))
	size, _ := strconv.ParseInt(srv.Config.Value("repl-backlog-size"), 10, 64)
	w.int("repl_backlog_size", size)
	w.str("repl_backlog_first_byte_offset", strconv.FormatUint(in.Offset-held+b2u(held > 0), 10))
	w.str("repl_backlog_histlen", strconv.FormatUint(held, 10))
}

// replicationInfo is srv's replication state; a server made without replication (a replay
// target in tests) is a master with no replicas.
func replicationInfo(srv *server.Server) server.ReplInfo {
	if srv.Replication != nil {
		return srv.Replication.Info()
	}
	var offset uint64
	for _, s := range srv.Store.LastSeqs() {
		offset += s
	}
	return server.ReplInfo{ReplID: srv.ReplID(), ReplID2: strings.Repeat("0", 40), Offset: offset, SecondOffset: -1,
		FailoverState: "no-failover"}
}

func b2i(v bool) int64 {
	if v {
		return 1
	}
	return 0
}

func b2u(v bool) uint64 { return uint64(b2i(v)) }

func infoCPU(_ *cmds.Ctx, _ *server.Server, w *infoWriter) {
	secs := func(tv syscall.Timeval) float64 { return float64(tv.Sec) + float64(tv.Usec)/1e6 }
	var self, children syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &self)
	_ = syscall.Getrusage(syscall.RUSAGE_CHILDREN, &children)
	w.float("used_cpu_sys", secs(self.Stime), 6)
	w.float("used_cpu_user", secs(self.Utime), 6)
	w.float("used_cpu_sys_children", secs(children.Stime), 6)
	w.float("used_cpu_user_children", secs(children.Utime), 6)
	// shardis has no main thread (event loops and shard goroutines share the process's
	// threads): the process's own figures stand for it.
	w.float("used_cpu_sys_main_thread", secs(self.Stime), 6)
	w.float("used_cpu_user_main_thread", secs(self.Utime), 6)
}

// sortedCommands returns every command and subcommand by name.
func sortedCommands() []*cmds.Command {
	var all []*cmds.Command
	for _, cmd := range cmds.All() {
		all = append(all, cmd)
		for _, sub := range cmd.Subs {
			all = append(all, sub)
		}
	}
	slices.SortFunc(all, func(a, b *cmds.Command) int { return strings.Compare(a.Name, b.Name) })
	return all
}

func infoCommandStats(_ *cmds.Ctx, _ *server.Server, w *infoWriter) {
	for _, cmd := range sortedCommands() {
		calls, usec, rejected, failed := cmd.Stats()
		if calls == 0 && rejected == 0 && failed == 0 {
			continue
		}
		perCall := 0.0
		if calls > 0 {
			perCall = float64(usec) / float64(calls)
		}
		w.str("cmdstat_"+cmd.Name, fmt.Sprintf("calls=%d,usec=%d,usec_per_call=%.2f,rejected_calls=%d,failed_calls=%d",
			calls, usec, perCall, rejected, failed))
	}
}

func infoErrorStats(c *cmds.Ctx, srv *server.Server, w *infoWriter) {
	for _, e := range srv.Errors.All() {
		w.str("errorstat_"+e.Name, "count="+strconv.FormatInt(e.Count, 10))
	}
}

// infoLatencyStats prints each tracked command's latency percentiles in µs, as Redis 7.0:
// latency_percentiles_usec_<name>:p50=…,p99=…, nothing while latency-tracking is off.
func infoLatencyStats(c *cmds.Ctx, srv *server.Server, w *infoWriter) {
	cfg := srv.Config
	if !cfg.LatencyTracking() {
		return
	}
	ps := cfg.LatencyPercentiles()
	names := make([]string, len(ps))
	for i, p := range ps {
		names[i] = "p" + strings.TrimSuffix(strings.TrimRight(strconv.FormatFloat(p, 'f', 6, 64), "0"), ".") + "="
	}
	for _, cmd := range sortedCommands() {
		h := cmd.Latency()
		if h == nil {
			continue
		}
		var b []byte
		for i, v := range h.Percentiles(ps) {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, names[i]...)
			b = strconv.AppendFloat(b, float64(v)/1000, 'f', 3, 64)
		}
		w.str("latency_percentiles_usec_"+cmd.Name, string(b))
	}
}

func infoKeyspace(c *cmds.Ctx, _ *server.Server, w *infoWriter) {
	st := c.Keyspace.Store
	for db := range st.Databases() {
		var keys, expires int64
		for i := range st.NumShards() {
			sh := st.Shard(i)
			keys += sh.Keys(db)
			expires += sh.Expires(db)
		}
		if keys > 0 {
			w.str("db"+strconv.Itoa(db), fmt.Sprintf("keys=%d,expires=%d,avg_ttl=0", keys, expires))
		}
	}
}

// infoShardis describes the shards: how many, how many event loops, and for each shard its
// key count and the range of binlog sequence numbers it still holds.
func infoShardis(c *cmds.Ctx, srv *server.Server, w *infoWriter) {
	st := srv.Store
	w.int("shards", int64(st.NumShards()))
	w.int("loops", int64(srv.Config.Loops()))
	for i := range st.NumShards() {
		sh := st.Shard(i)
		var keys int64
		for db := range st.Databases() {
			keys += sh.Keys(db)
		}
		first, last := sh.BinlogRange()
		w.str("shard_"+strconv.Itoa(i), fmt.Sprintf("keys=%d,binlog_first_seq=%d,binlog_last_seq=%d", keys, first, last))
	}
}
