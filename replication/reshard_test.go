package replication_test

import (
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"shardis/internal/testserver"
)

// A replica whose shard count differs from its master's (docs/REPLICATION.md, "A replica
// with another shard count"). The test servers start with 4 shards unless told otherwise.

func shardsFlags(n int) []string {
	return append([]string{"--shards", strconv.Itoa(n)}, debugFlags...)
}

// writeMix writes what a replica must apply by key while it runs: MSET across shards,
// MULTI/EXEC, a script, keys that expire within the test, until stop closes.
func writeMix(t *testing.T, c *redis.Client, prefix string, stop <-chan struct{}) {
	for i := 0; ; i++ {
		select {
		case <-stop:
			return
		default:
		}
		k := fmt.Sprintf("%s:%d", prefix, i)
		if err := c.MSet(ctx, k+":a", i, k+":b", i, k+":c", i).Err(); err != nil {
			t.Errorf("MSET: %v", err)
			return
		}
		tx := c.TxPipeline()
		tx.Incr(ctx, k+":a")
		tx.RPush(ctx, k+":l", "x", i)
		tx.HSet(ctx, k+":h", "f", i)
		if _, err := tx.Exec(ctx); err != nil {
			t.Errorf("EXEC: %v", err)
			return
		}
		if err := c.Eval(ctx, "redis.call('SET', KEYS[1], ARGV[1]); return redis.call('SADD', KEYS[2], ARGV[1])",
			[]string{k + ":e", k + ":set"}, i).Err(); err != nil {
			t.Errorf("EVAL: %v", err)
			return
		}
		if err := c.Set(ctx, k+":ttl", i, 50*time.Millisecond).Err(); err != nil {
			t.Errorf("SET PX: %v", err)
			return
		}
	}
}

// offsetsMatch reports whether the replica's slave_repl_offset is the master's
// master_repl_offset.
func offsetsMatch(t *testing.T, mc, rc *redis.Client) bool {
	m := infoField(t, mc, "replication", "master_repl_offset")
	return m != "" && m == infoField(t, rc, "replication", "slave_repl_offset") &&
		m == infoField(t, rc, "replication", "master_repl_offset")
}

func TestReplica_OtherShardCount_FullSyncUnderWritesThenStream_SameDigest(t *testing.T) {
	t.Parallel()
	master := testserver.Start(t, shardsFlags(4)...)
	mc := master.Client(t)
	load(t, mc, "before", 300)
	if err := mc.Do(ctx, "FUNCTION", "LOAD", "#!lua name=lib\nredis.register_function('f', function(keys) return redis.call('INCR', keys[1]) end)").Err(); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); writeMix(t, master.Client(t), "during", stop) }()
	r3 := testserver.Start(t, shardsFlags(3)...)
	r8 := testserver.Start(t, shardsFlags(8)...)
	rc3 := replicate(t, r3, master)
	rc8 := replicate(t, r8, master)
	time.Sleep(300 * time.Millisecond) // writes go on through the stream
	close(stop)
	wg.Wait()
	// Whole-keyspace writes and functions through the stream.
	load(t, mc, "db0", 50)
	if err := mc.Do(ctx, "SWAPDB", 0, 1).Err(); err != nil {
		t.Fatal(err)
	}
	load(t, mc, "db0again", 20)
	if err := mc.Do(ctx, "FCALL", "f", 1, "counted").Err(); err != nil {
		t.Fatal(err)
	}
	if err := mc.Do(ctx, "FUNCTION", "LOAD", "#!lua name=lib2\nredis.register_function('g', function() return 1 end)").Err(); err != nil {
		t.Fatal(err)
	}
	tx := mc.TxPipeline() // SWAPDB between keyed writes, inside one unit
	tx.Set(ctx, "in:unit:1", "a", 0)
	tx.SwapDB(ctx, 0, 2)
	tx.Set(ctx, "in:unit:1", "b", 0)
	tx.Set(ctx, "in:unit:2", "c", 0)
	if _, err := tx.Exec(ctx); err != nil {
		t.Fatal(err)
	}
	if n, err := mc.Do(ctx, "WAIT", 2, 60000).Int(); err != nil || n != 2 {
		t.Fatalf("WAIT 2: %d %v", n, err)
	}
	for _, rc := range []*redis.Client{rc3, rc8} {
		waitSameDigest(t, mc, rc) // the expiring keys' DELs arrive as the master expires them
		waitFor(t, "the replica's offset to be the master's", func() bool { return offsetsMatch(t, mc, rc) })
		if role := rc.Do(ctx, "ROLE").Val().([]any); role[0] != "slave" || role[3] != "connected" {
			t.Fatalf("ROLE on the replica: %v", role)
		}
		if err := rc.Set(ctx, "x", 1, 0).Err(); err == nil || err.Error() != "READONLY You can't write against a read only replica." {
			t.Fatalf("a write on the replica: %v", err)
		}
		if got, err := rc.Do(ctx, "FCALL_RO", "f", 1, "x").Result(); err == nil {
			t.Fatalf("FCALL_RO of a write function answered %v", got)
		}
		if fl := rc.Do(ctx, "FUNCTION", "LIST").Val().([]any); len(fl) != 2 {
			t.Fatalf("FUNCTION LIST on the replica: %v", fl)
		}
	}
	if full := infoField(t, mc, "stats", "sync_full"); full != "2" {
		t.Fatalf("sync_full %s, want 2", full)
	}
}

func TestReplica_OtherShardCount_LinkDropped_ResumesWithAPartialSync(t *testing.T) {
	t.Parallel()
	master := testserver.Start(t, shardsFlags(4)...)
	mc := master.Client(t)
	load(t, mc, "a", 200)
	replica := testserver.Start(t, shardsFlags(3)...)
	rc := replicate(t, replica, master)
	load(t, mc, "b", 100)
	acked(t, mc)
	if err := mc.Do(ctx, "CLIENT", "KILL", "TYPE", "replica").Err(); err != nil {
		t.Fatal(err)
	}
	load(t, mc, "c", 100) // while the link is down or coming back
	waitFor(t, "the partial resync", func() bool { return infoField(t, mc, "stats", "sync_partial_ok") == "1" })
	acked(t, mc)
	if full := infoField(t, mc, "stats", "sync_full"); full != "1" {
		t.Fatalf("sync_full %s after the link dropped, want 1", full)
	}
	waitSameDigest(t, mc, rc)
	if err := mc.FlushAll(ctx).Err(); err != nil { // and on, through the stream
		t.Fatal(err)
	}
	load(t, mc, "d", 50)
	acked(t, mc)
	waitSameDigest(t, mc, rc)
	waitFor(t, "equal offsets", func() bool { return offsetsMatch(t, mc, rc) })
}

func TestReplica_OtherShardCount_Restart_ResumesWithAPartialSync(t *testing.T) {
	t.Parallel()
	master := testserver.Start(t, shardsFlags(4)...)
	mc := master.Client(t)
	load(t, mc, "a", 200)
	dir := t.TempDir()
	host, port := hostPort(t, master)
	replicaOf := []string{"--replicaof", host + " " + strconv.Itoa(port)}
	start := func() (*testserver.Server, *redis.Client) {
		s := testserver.StartIn(t, dir, append(replicaOf, shardsFlags(8)...)...)
		c := s.Client(t)
		waitFor(t, "the link to come up", func() bool { return infoField(t, c, "replication", "master_link_status") == "up" })
		return s, c
	}
	replica, _ := start()
	load(t, mc, "b", 100)
	acked(t, mc)
	replica.Stop()
	load(t, mc, "c", 100) // while the replica is away
	_, rc := start()
	acked(t, mc)
	if full, partial := infoField(t, mc, "stats", "sync_full"), infoField(t, mc, "stats", "sync_partial_ok"); full != "1" || partial != "1" {
		t.Fatalf("sync_full %s sync_partial_ok %s, want 1 and 1", full, partial)
	}
	waitSameDigest(t, mc, rc)
	waitFor(t, "equal offsets", func() bool { return offsetsMatch(t, mc, rc) })
}

func TestReplica_OtherShardCount_ServesNoReplicasAndPromotesToANewHistory(t *testing.T) {
	t.Parallel()
	master := testserver.Start(t, shardsFlags(4)...)
	mc := master.Client(t)
	load(t, mc, "a", 100)
	replica := testserver.Start(t, shardsFlags(3)...)
	rc := replicate(t, replica, master)
	acked(t, mc)
	// Its binlog is not its master's history: no replica of its own, no FAILOVER to it.
	if err := rc.Do(ctx, "PSYNC", "?", "-1").Err(); err == nil || !strings.Contains(err.Error(), "cannot serve replicas") {
		t.Fatalf("PSYNC to a replica with another shard count: %v", err)
	}
	id := infoField(t, rc, "replication", "master_replid")
	if err := rc.Do(ctx, "PSYNC", id, "1", "FAILOVER").Err(); err == nil || !strings.Contains(err.Error(), "shard count differs") {
		t.Fatalf("PSYNC FAILOVER to a replica with another shard count: %v", err)
	}
	if infoField(t, rc, "replication", "role") != "slave" {
		t.Fatal("the refused PSYNC FAILOVER promoted the replica")
	}
	// Promoted, it starts a history of its own; the old master syncs from it in full.
	if err := rc.Do(ctx, "REPLICAOF", "NO", "ONE").Err(); err != nil {
		t.Fatal(err)
	}
	if got := infoField(t, rc, "replication", "master_replid2"); got != strings.Repeat("0", 40) {
		t.Fatalf("master_replid2 %s after the promotion, want none", got)
	}
	load(t, rc, "b", 50)
	mc2 := replicate(t, master, replica)
	if n, err := rc.Do(ctx, "WAIT", 1, 60000).Int(); err != nil || n != 1 {
		t.Fatalf("WAIT 1 on the promoted replica: %d %v", n, err)
	}
	waitSameDigest(t, rc, mc2)
	if full := infoField(t, rc, "stats", "sync_full"); full != "1" {
		t.Fatalf("sync_full %s on the promoted replica, want 1", full)
	}
}

// A replica with another shard count restarted while its master is down shows the master's
// offset it applied up to, as sentinel reads it to choose whom to promote: not 0 until the
// link comes back.
func TestReplica_OtherShardCount_RestartedWhileMasterDown_ShowsItsOffset(t *testing.T) {
	t.Parallel()
	master := testserver.Start(t, shardsFlags(4)...)
	mc := master.Client(t)
	load(t, mc, "a", 200)
	dir := t.TempDir()
	host, port := hostPort(t, master)
	args := append([]string{"--replicaof", host + " " + strconv.Itoa(port)}, shardsFlags(3)...)
	replica := testserver.StartIn(t, dir, args...)
	rc := replica.Client(t)
	waitFor(t, "equal offsets", func() bool { return offsetsMatch(t, mc, rc) })
	want := infoField(t, rc, "replication", "slave_repl_offset")
	master.Stop()
	replica.Stop()
	rc = testserver.StartIn(t, dir, args...).Client(t)
	if got := infoField(t, rc, "replication", "slave_repl_offset"); got != want || want == "0" {
		t.Fatalf("slave_repl_offset %s after a restart with the master down, want %s", got, want)
	}
}
