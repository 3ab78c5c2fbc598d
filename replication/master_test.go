package replication_test

import (
	"bufio"
	"net"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"shardis/internal/testserver"
)

// heapInUse returns the process's live heap after a collection (the test server runs in this
// process).
func heapInUse() int64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return int64(ms.HeapAlloc)
}

// stalledReplica connects to master as a shardis replica asking for a full sync and then
// reads nothing: the master must keep what it did not send in RocksDB, not in memory.
func stalledReplica(t *testing.T, master *testserver.Server) net.Conn {
	t.Helper()
	conn, err := net.Dial("tcp", master.Addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	br := bufio.NewReader(conn)
	for _, cmd := range []string{"REPLCONF capa shardis", "PSYNC ? -1"} {
		var b strings.Builder
		parts := strings.Fields(cmd)
		b.WriteString("*" + strconv.Itoa(len(parts)) + "\r\n")
		for _, p := range parts {
			b.WriteString("$" + strconv.Itoa(len(p)) + "\r\n" + p + "\r\n")
		}
		if _, err := conn.Write([]byte(b.String())); err != nil {
			t.Fatal(err)
		}
		if cmd == "PSYNC ? -1" {
			break // the stream follows: nothing more is read
		}
		if line, err := br.ReadString('\n'); err != nil || line != "+OK\r\n" {
			t.Fatalf("%s: %q %v", cmd, line, err)
		}
	}
	return conn
}

// Not parallel: it measures the process's heap, which the parallel tests would move.
func TestFullSync_ReplicaNotReading_MasterHoldsABoundedAmountInMemory(t *testing.T) {
	master := testserver.Start(t)
	mc := master.Client(t)
	value := strings.Repeat("v", 1<<20)
	p := mc.Pipeline()
	const keys = 192 // 192 MB of values, spread over the shards
	for i := range keys {
		p.Set(ctx, "big:"+strconv.Itoa(i), value, 0)
	}
	if _, err := p.Exec(ctx); err != nil {
		t.Fatal(err)
	}
	before := heapInUse()
	stalledReplica(t, master)
	waitFor(t, "the full sync to start", func() bool {
		return strings.Contains(infoField(t, mc, "replication", "slave0"), "state=send_bulk")
	})
	// However long the master had, it may not have handed the connection more than a bound:
	// sample the heap over a few seconds and keep the largest.
	var peak int64
	for range 10 {
		time.Sleep(300 * time.Millisecond)
		peak = max(peak, heapInUse()-before)
	}
	if peak > 64<<20 {
		t.Fatalf("the master's heap grew by %d MB while a replica read nothing of a %d MB full sync", peak>>20, keys)
	}
}

// loadMB writes n keys of 64 KiB values, strings and hashes, spread over the shards: n/16 MB.
func loadMB(t *testing.T, c *redis.Client, prefix string, n int) {
	t.Helper()
	value := strings.Repeat("x", 64<<10)
	p := c.Pipeline()
	for i := range n {
		k := prefix + ":" + strconv.Itoa(i)
		if i%2 == 0 {
			p.Set(ctx, k, value, 0)
		} else {
			p.HSet(ctx, k, "f", value, "g", i)
		}
	}
	if _, err := p.Exec(ctx); err != nil {
		t.Fatal(err)
	}
}

func TestFullSync_MaxRate_TakesAtLeastTheDataOverTheRate(t *testing.T) {
	t.Parallel()
	master := testserver.Start(t, debugFlags...)
	replica := testserver.Start(t, debugFlags...)
	mc := master.Client(t)
	loadMB(t, mc, "k", 64) // 4 MB
	if err := mc.ConfigSet(ctx, "repl-fullsync-max-rate", "1mb").Err(); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	rc := replicate(t, replica, master)
	// At 1 MB a second, 4 MB of snapshot cannot go in less than 3 seconds (the first
	// megabyte goes at once). A busy machine only makes it longer.
	if took := time.Since(start); took < 3*time.Second {
		t.Fatalf("a 4 MB full sync at 1 MB/s took %v", took)
	}
	acked(t, mc)
	sameDigest(t, mc, rc)
}

func TestReplica_LinkLostMidFullSync_SyncsAgainToTheMastersData(t *testing.T) {
	t.Parallel()
	master := testserver.Start(t, debugFlags...)
	replica := testserver.Start(t, debugFlags...)
	mc := master.Client(t)
	loadMB(t, mc, "k", 128) // 8 MB
	load(t, mc, "small", 200)
	// Slow enough that the link is cut half way.
	if err := mc.ConfigSet(ctx, "repl-fullsync-max-rate", "1mb").Err(); err != nil {
		t.Fatal(err)
	}
	rc := replica.Client(t)
	host, port := hostPort(t, master)
	if err := rc.Do(ctx, "REPLICAOF", host, port).Err(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the full sync to start", func() bool {
		return strings.Contains(infoField(t, mc, "replication", "slave0"), "state=send_bulk")
	})
	time.Sleep(1500 * time.Millisecond) // some of the snapshot is loaded
	killed := false
	for _, line := range strings.Split(mc.ClientList(ctx).Val(), "\n") {
		if strings.Contains(line, " cmd=psync") {
			id := strings.TrimPrefix(strings.Fields(line)[0], "id=")
			if err := mc.Do(ctx, "CLIENT", "KILL", "ID", id).Err(); err != nil {
				t.Fatal(err)
			}
			killed = true
		}
	}
	if !killed {
		t.Fatal("no connection ran PSYNC on the master")
	}
	if err := mc.ConfigSet(ctx, "repl-fullsync-max-rate", "0").Err(); err != nil {
		t.Fatal(err)
	}
	load(t, mc, "meanwhile", 100)
	waitFor(t, "the link to come up", func() bool { return infoField(t, rc, "replication", "master_link_status") == "up" })
	acked(t, mc)
	sameDigest(t, mc, rc)
	if got, want := infoField(t, rc, "keyspace", "db0"), infoField(t, mc, "keyspace", "db0"); got != want {
		t.Fatalf("replica's keyspace %q, master's %q", got, want)
	}
	if got := infoField(t, mc, "stats", "sync_full"); got != "2" {
		t.Fatalf("sync_full %s, want 2: the cut sync and the one after it", got)
	}
}

// A snapshot of several frames a shard: the master interleaves its shards' frames and the
// replica loads each shard's in parallel.
func TestReplica_FullSyncOfSeveralFramesPerShard_SameDigestAndKeyCounts(t *testing.T) {
	t.Parallel()
	master := testserver.Start(t, debugFlags...)
	replica := testserver.Start(t, debugFlags...)
	mc := master.Client(t)
	loadMB(t, mc, "big", 160) // 10 MB over 4 shards: several 1 MB frames each
	load(t, mc, "small", 300)
	load(t, master.Client(t, func(o *redis.Options) { o.DB = 3 }), "db3", 50)
	rc := replicate(t, replica, master)
	acked(t, mc)
	sameDigest(t, mc, rc)
	if got, want := infoKeyspace(t, rc), infoKeyspace(t, mc); got != want {
		t.Fatalf("replica's keyspace %q, master's %q", got, want)
	}
}

// infoKeyspace returns INFO keyspace's lines.
func infoKeyspace(t *testing.T, c *redis.Client) string {
	t.Helper()
	info, err := c.Info(ctx, "keyspace").Result()
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(info)
}

// A rate slow enough that a 1 MB frame would take longer than the replica's repl-timeout:
// the frames shrink with the rate, so the link never goes quiet that long.
func TestFullSync_SlowRate_TheReplicaHearsFromTheMasterWithinItsTimeout(t *testing.T) {
	t.Parallel()
	master := testserver.Start(t, debugFlags...)
	replica := testserver.Start(t, append([]string{"--repl-timeout", "2"}, debugFlags...)...)
	mc := master.Client(t)
	loadMB(t, mc, "k", 32) // 2 MB: at 256 KB/s, 4 s between two 1 MB frames
	if err := mc.ConfigSet(ctx, "repl-fullsync-max-rate", "256kb").Err(); err != nil {
		t.Fatal(err)
	}
	rc := replicate(t, replica, master)
	acked(t, mc)
	sameDigest(t, mc, rc)
	if got := infoField(t, mc, "stats", "sync_full"); got != "1" {
		t.Fatalf("sync_full %s, want 1: the first sync went through", got)
	}
}
