package cmds_test

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"shardis/internal/testserver"
)

// infoParse splits an INFO reply into its section titles (in order) and its fields; it fails
// the test on any line that is neither a "# Title", a blank separator nor "field:value".
func infoParse(t *testing.T, info string) ([]string, map[string]string) {
	t.Helper()
	if !strings.HasSuffix(info, "\r\n") {
		t.Fatalf("INFO does not end with CRLF: %q", info)
	}
	var titles []string
	fields := map[string]string{}
	for _, l := range strings.Split(strings.TrimSuffix(info, "\r\n"), "\r\n") {
		switch {
		case strings.HasPrefix(l, "# "):
			titles = append(titles, l[2:])
		case l == "":
		default:
			k, v, ok := strings.Cut(l, ":")
			if !ok || k == "" {
				t.Fatalf("bad INFO line %q", l)
			}
			if _, dup := fields[k]; dup {
				t.Fatalf("INFO field %q twice", k)
			}
			fields[k] = v
		}
	}
	return titles, fields
}

// infoInt returns an integer INFO field.
func infoInt(t *testing.T, fields map[string]string, k string) int64 {
	t.Helper()
	n, err := strconv.ParseInt(fields[k], 10, 64)
	if err != nil {
		t.Fatalf("INFO %s = %q: not an integer", k, fields[k])
	}
	return n
}

func TestInfo_Default_SectionsAndFields(t *testing.T) {
	s := testserver.Start(t)
	c := s.Client(t)
	info, err := c.Info(connCtx).Result()
	if err != nil {
		t.Fatal(err)
	}
	titles, f := infoParse(t, info)
	want := "Server Clients Memory Persistence Stats Replication CPU Modules Errorstats Cluster Keyspace Shardis"
	if got := strings.Join(titles, " "); got != want {
		t.Fatalf("INFO sections %q, want %q", got, want)
	}
	for k, v := range map[string]string{"redis_version": "7.0.15", "redis_mode": "standalone", "role": "master",
		"maxmemory": "0", "aof_enabled": "1", "loading": "0", "evicted_keys": "0", "connected_slaves": "0",
		"aof_rewrite_in_progress": "0", "cluster_enabled": "0", "rdb_bgsave_in_progress": "0", "shards": "4", "loops": "2"} {
		if f[k] != v {
			t.Errorf("INFO %s = %q, want %q", k, f[k], v)
		}
	}
	for _, k := range []string{"arch_bits", "process_id", "tcp_port", "uptime_in_seconds", "uptime_in_days", "hz",
		"connected_clients", "blocked_clients", "maxclients", "used_memory", "used_memory_rss",
		"rdb_changes_since_last_save", "rdb_last_save_time", "total_connections_received",
		"total_commands_processed", "instantaneous_ops_per_sec", "total_net_input_bytes", "total_net_output_bytes",
		"rejected_connections", "expired_keys", "keyspace_hits", "keyspace_misses", "total_error_replies",
		"master_repl_offset"} {
		infoInt(t, f, k)
	}
	for _, k := range []string{"used_cpu_sys", "used_cpu_user"} {
		if _, err := strconv.ParseFloat(f[k], 64); err != nil {
			t.Errorf("INFO %s = %q", k, f[k])
		}
	}
	if infoInt(t, f, "tcp_port") != int64(s.Config.Port()) || infoInt(t, f, "connected_clients") != 1 ||
		len(f["run_id"]) != 40 || len(f["master_replid"]) != 40 || infoInt(t, f, "used_memory") <= 0 ||
		!strings.HasSuffix(f["used_memory_human"], "M") && !strings.HasSuffix(f["used_memory_human"], "K") {
		t.Fatalf("INFO fields: %v", f)
	}
	if _, ok := f["cmdstat_info"]; ok {
		t.Fatal("commandstats in the default INFO")
	}
}

func TestInfo_SectionSelection(t *testing.T) {
	s := testserver.Start(t)
	c := s.Client(t)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"clients", "CPU"}, "Clients CPU"},
		{[]string{"cpu", "clients", "cpu"}, "Clients CPU"},
		{[]string{"keyspace"}, "Keyspace"},
		{[]string{"commandstats"}, "Commandstats"},
		{[]string{"shardis", "server"}, "Server Shardis"},
		{[]string{"default"}, "Server Clients Memory Persistence Stats Replication CPU Modules Errorstats Cluster Keyspace Shardis"},
		{[]string{"all"}, "Server Clients Memory Persistence Stats Replication CPU Modules Commandstats Errorstats Latencystats Cluster Keyspace Shardis"},
		{[]string{"everything"}, "Server Clients Memory Persistence Stats Replication CPU Modules Commandstats Errorstats Latencystats Cluster Keyspace Shardis"},
		{[]string{"default", "commandstats"}, "Server Clients Memory Persistence Stats Replication CPU Modules Commandstats Errorstats Cluster Keyspace Shardis"},
		{[]string{"nosuchsection"}, ""},
	} {
		info, err := c.Info(connCtx, tc.args...).Result()
		if err != nil {
			t.Fatal(err)
		}
		if tc.want == "" {
			if info != "" {
				t.Fatalf("INFO %v = %q, want empty", tc.args, info)
			}
			continue
		}
		titles, _ := infoParse(t, info)
		if got := strings.Join(titles, " "); got != tc.want {
			t.Errorf("INFO %v sections %q, want %q", tc.args, got, tc.want)
		}
	}
	// Exact framing: sections separated by a blank line, each line ending in CRLF.
	r := connDial(t, s.Addr)
	r.cmd("INFO", "cluster", "modules")
	if got := r.bulk(); got != "# Modules\r\n\r\n# Cluster\r\ncluster_enabled:0\r\n" {
		t.Fatalf("INFO cluster modules = %q", got)
	}
}

func TestInfo_Resp3_Verbatim(t *testing.T) {
	s := testserver.Start(t)
	r := connDial(t, s.Addr)
	id := r.clientID()
	r.do(connHello(3, id), "HELLO", "3")
	r.cmd("INFO", "cluster")
	want := "txt:# Cluster\r\ncluster_enabled:0\r\n"
	r.expect("=" + strconv.Itoa(len(want)) + "\r\n" + want + "\r\n")
}

func TestInfo_KeyspaceCounts(t *testing.T) {
	s := testserver.Start(t)
	c := s.Client(t)
	for i := range 5 {
		if err := c.Set(connCtx, "ks:"+strconv.Itoa(i), "v", 0).Err(); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.Expire(connCtx, "ks:0", time.Hour).Err(); err != nil {
		t.Fatal(err)
	}
	if err := c.Set(connCtx, "ks:ttl", "v", time.Hour).Err(); err != nil {
		t.Fatal(err)
	}
	c5 := s.Client(t, func(o *redis.Options) { o.DB = 5 })
	for i := range 3 {
		if err := c5.Set(connCtx, "five:"+strconv.Itoa(i), "v", 0).Err(); err != nil {
			t.Fatal(err)
		}
	}
	info, err := c.Info(connCtx, "keyspace").Result()
	if err != nil {
		t.Fatal(err)
	}
	want := "# Keyspace\r\ndb0:keys=6,expires=2,avg_ttl=0\r\ndb5:keys=3,expires=0,avg_ttl=0\r\n"
	if info != want {
		t.Fatalf("INFO keyspace = %q, want %q", info, want)
	}
	if err := c5.Del(connCtx, "five:0", "five:1", "five:2").Err(); err != nil {
		t.Fatal(err)
	}
	info, _ = c.Info(connCtx, "keyspace").Result()
	if info != "# Keyspace\r\ndb0:keys=6,expires=2,avg_ttl=0\r\n" {
		t.Fatalf("INFO keyspace after emptying db5 = %q", info)
	}
}

func TestInfo_Shardis_PerShardBinlogRange(t *testing.T) {
	s := testserver.Start(t)
	c := s.Client(t)
	const n = 40
	for i := range n {
		if err := c.Set(connCtx, "bl:"+strconv.Itoa(i), "v", 0).Err(); err != nil {
			t.Fatal(err)
		}
	}
	info, err := c.Info(connCtx, "shardis").Result()
	if err != nil {
		t.Fatal(err)
	}
	_, f := infoParse(t, info)
	if f["shards"] != "4" {
		t.Fatalf("shards = %q", f["shards"])
	}
	var keys int64
	for i := range 4 {
		v, ok := f["shard_"+strconv.Itoa(i)]
		if !ok {
			t.Fatalf("no shard_%d in %q", i, info)
		}
		var k, first, last int64
		if _, err := fmt.Sscanf(v, "keys=%d,binlog_first_seq=%d,binlog_last_seq=%d", &k, &first, &last); err != nil {
			t.Fatalf("shard_%d = %q: %v", i, v, err)
		}
		gotFirst, gotLast := s.Store.Shard(i).BinlogRange()
		if k != s.Store.Shard(i).Keys(0) || uint64(first) != gotFirst || uint64(last) != gotLast {
			t.Fatalf("shard_%d = %q; store says keys=%d binlog %d..%d", i, v, s.Store.Shard(i).Keys(0), gotFirst, gotLast)
		}
		// Every SET is one binlog record in its shard.
		if k > 0 && (first != 1 || last != k) {
			t.Fatalf("shard_%d = %q: want binlog 1..%d", i, v, k)
		}
		keys += k
	}
	if keys != n {
		t.Fatalf("shards hold %d keys, want %d", keys, n)
	}
}

func TestInfo_CommandstatsAndStats(t *testing.T) {
	s := testserver.Start(t)
	c := clientOneConn(t, s)
	// Command statistics live in the process-wide command table: start from zero.
	if err := c.Do(connCtx, "CONFIG", "RESETSTAT").Err(); err != nil {
		t.Fatal(err)
	}
	if err := c.Set(connCtx, "cs", "v", 0).Err(); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		c.Get(connCtx, "cs")
	}
	c.Do(connCtx, "CLIENT", "ID")
	c.LPush(connCtx, "cs", "x") // WRONGTYPE, or unknown command while lists are not built
	info, err := c.Info(connCtx, "commandstats", "stats").Result()
	if err != nil {
		t.Fatal(err)
	}
	_, f := infoParse(t, info)
	for name, calls := range map[string]string{"get": "3", "set": "1", "client|id": "1"} {
		v := f["cmdstat_"+name]
		if !strings.HasPrefix(v, "calls="+calls+",usec=") || !strings.Contains(v, ",usec_per_call=") ||
			!strings.HasSuffix(v, ",rejected_calls=0,failed_calls=0") {
			t.Errorf("cmdstat_%s = %q", name, v)
		}
	}
	if infoInt(t, f, "total_commands_processed") < 5 || infoInt(t, f, "total_error_replies") < 1 ||
		infoInt(t, f, "total_net_input_bytes") <= 0 {
		t.Fatalf("INFO stats: %v", f)
	}
}

func TestInfo_Persistence_DirtyCounter(t *testing.T) {
	s := testserver.Start(t)
	c := s.Client(t)
	for i := range 3 {
		c.Set(connCtx, "dirty:"+strconv.Itoa(i), "v", 0)
	}
	info, _ := c.Info(connCtx, "persistence").Result()
	_, f := infoParse(t, info)
	if infoInt(t, f, "rdb_changes_since_last_save") < 3 || f["rdb_last_bgsave_time_sec"] != "-1" ||
		infoInt(t, f, "rdb_last_save_time") > time.Now().Unix() {
		t.Fatalf("INFO persistence: %v", f)
	}
	if err := c.Save(connCtx).Err(); err != nil {
		t.Fatal(err)
	}
	info, _ = c.Info(connCtx, "persistence").Result()
	if _, f = infoParse(t, info); f["rdb_changes_since_last_save"] != "0" {
		t.Fatalf("rdb_changes_since_last_save after SAVE = %q", f["rdb_changes_since_last_save"])
	}
}
