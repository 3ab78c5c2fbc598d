package replication_test

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"shardis/internal/testserver"
)

var ctx = context.Background()

// infoField returns field of INFO section on c ("" when absent).
func infoField(t *testing.T, c *redis.Client, section, field string) string {
	t.Helper()
	info, err := c.Info(ctx, section).Result()
	if err != nil {
		t.Fatalf("INFO %s: %v", section, err)
	}
	for _, line := range strings.Split(info, "\r\n") {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			return v
		}
	}
	return ""
}

// waitFor polls cond every 20 ms for up to a minute (the machine may be busy) and fails with
// what it waited for.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("waited a minute for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func hostPort(t *testing.T, s *testserver.Server) (string, int) {
	t.Helper()
	host, port, _ := net.SplitHostPort(s.Addr)
	p, _ := strconv.Atoi(port)
	return host, p
}

// replicate makes replica a replica of master and waits until its link is up.
func replicate(t *testing.T, replica, master *testserver.Server) *redis.Client {
	t.Helper()
	rc := replica.Client(t)
	host, port := hostPort(t, master)
	if err := rc.Do(ctx, "REPLICAOF", host, port).Err(); err != nil {
		t.Fatalf("REPLICAOF: %v", err)
	}
	waitFor(t, "the link to come up", func() bool { return infoField(t, rc, "replication", "master_link_status") == "up" })
	return rc
}

// digest returns DEBUG DIGEST.
func digest(t *testing.T, c *redis.Client) string {
	t.Helper()
	d, err := c.Do(ctx, "DEBUG", "DIGEST").Text()
	if err != nil {
		t.Fatalf("DEBUG DIGEST: %v", err)
	}
	return d
}

// load writes n keys of every type, some across shards in one command.
func load(t *testing.T, c *redis.Client, prefix string, n int) {
	t.Helper()
	p := c.Pipeline()
	for i := range n {
		k := fmt.Sprintf("%s:%d", prefix, i)
		p.Set(ctx, k+":s", i, 0)
		p.HSet(ctx, k+":h", "f", i, "g", "x")
		p.RPush(ctx, k+":l", "a", "b", i)
		p.SAdd(ctx, k+":set", "m", i)
		p.ZAdd(ctx, k+":z", redis.Z{Score: float64(i), Member: "m"})
		if i%10 == 0 {
			p.MSet(ctx, k+":m1", 1, k+":m2", 2, k+":m3", 3) // several shards, one unit
			p.Expire(ctx, k+":s", time.Hour)
		}
	}
	if _, err := p.Exec(ctx); err != nil {
		t.Fatalf("load: %v", err)
	}
}

var debugFlags = []string{"--enable-debug-command", "yes"}

// startReplicaIn starts a server on dir configured as a replica of master (replicaof) and
// waits until its link is up.
func startReplicaIn(t *testing.T, dir string, master *testserver.Server) (*testserver.Server, *redis.Client) {
	t.Helper()
	host, port := hostPort(t, master)
	s := testserver.StartIn(t, dir, append([]string{"--replicaof", host + " " + strconv.Itoa(port)}, debugFlags...)...)
	c := s.Client(t)
	waitFor(t, "the link to come up", func() bool { return infoField(t, c, "replication", "master_link_status") == "up" })
	return s, c
}

// acked waits (WAIT 1) until the replica of mc acknowledged everything written so far.
func acked(t *testing.T, mc *redis.Client) {
	t.Helper()
	if n, err := mc.Do(ctx, "WAIT", 1, 60000).Int(); err != nil || n != 1 {
		t.Fatalf("WAIT 1: %d %v: the replica did not acknowledge", n, err)
	}
}

// sameDigest fails unless both servers hold the same data (DEBUG DIGEST).
func sameDigest(t *testing.T, mc, rc *redis.Client) {
	t.Helper()
	if m, r := digest(t, mc), digest(t, rc); m != r {
		t.Fatalf("replica's digest %s, master's %s", r, m)
	}
}

func TestReplica_FullSyncThenStream_SameDataAsMaster(t *testing.T) {
	t.Parallel()
	master := testserver.Start(t, debugFlags...)
	replica := testserver.Start(t, debugFlags...)
	mc := master.Client(t)
	load(t, mc, "before", 300)
	rc := replicate(t, replica, master)
	load(t, mc, "after", 300)
	if err := mc.Do(ctx, "FLUSHDB").Err(); err != nil { // everything through the stream too
		t.Fatal(err)
	}
	load(t, mc, "again", 200)
	mc.Del(ctx, "again:3:h", "again:4:l")
	n, err := mc.Do(ctx, "WAIT", 1, 60000).Int()
	if err != nil || n != 1 {
		t.Fatalf("WAIT 1: %d %v", n, err)
	}
	sameDigest(t, mc, rc)
	if got, want := rc.DBSize(ctx).Val(), mc.DBSize(ctx).Val(); got != want || want == 0 {
		t.Fatalf("replica holds %d keys, master %d", got, want)
	}
	if mo, ro := infoField(t, mc, "replication", "master_repl_offset"), infoField(t, rc, "replication", "master_repl_offset"); mo != ro {
		t.Fatalf("replica's offset %s, master's %s", ro, mo)
	}
	if infoField(t, mc, "stats", "sync_full") != "1" {
		t.Fatalf("sync_full %s, want 1", infoField(t, mc, "stats", "sync_full"))
	}
}

func TestReplica_ReadOnly_RefusesClientWrites(t *testing.T) {
	t.Parallel()
	master := testserver.Start(t)
	replica := testserver.Start(t)
	rc := replicate(t, replica, master)
	for _, args := range [][]any{{"SET", "k", "v"}, {"HSET", "h", "f", "v"}, {"EVAL", "#!lua\nreturn redis.call('set','k','v')", "0"}} {
		if err := rc.Do(ctx, args...).Err(); err == nil || err.Error() != "READONLY You can't write against a read only replica." {
			t.Errorf("%v on a replica: %v", args, err)
		}
	}
	if err := rc.Do(ctx, "EVAL", "return redis.call('set','k','v')", "0").Err(); err == nil || !strings.Contains(err.Error(), "READONLY") {
		t.Errorf("a script's write on a replica: %v", err)
	}
	if err := rc.Get(ctx, "k").Err(); err != redis.Nil {
		t.Errorf("GET on a replica: %v", err)
	}
}

func TestRole_MasterAndReplica_AsRedis(t *testing.T) {
	t.Parallel()
	master := testserver.Start(t)
	replica := testserver.Start(t)
	mc := master.Client(t)
	rc := replicate(t, replica, master)
	mc.Set(ctx, "k", "v", 0)
	if n, err := mc.Do(ctx, "WAIT", 1, 60000).Int(); err != nil || n != 1 {
		t.Fatalf("WAIT: %d %v", n, err)
	}
	host, port := hostPort(t, master)
	role, err := rc.Do(ctx, "ROLE").Slice()
	if err != nil || len(role) != 5 || role[0] != "slave" || role[1] != host || role[2] != int64(port) || role[3] != "connected" {
		t.Fatalf("replica's ROLE %v %v", role, err)
	}
	role, err = mc.Do(ctx, "ROLE").Slice()
	if err != nil || len(role) != 3 || role[0] != "master" {
		t.Fatalf("master's ROLE %v %v", role, err)
	}
	if replicas, ok := role[2].([]any); !ok || len(replicas) != 1 {
		t.Fatalf("master's ROLE lists replicas %v", role[2])
	}
}

func TestReplicaOf_NoOne_PromotesWithTheOldHistoryAsReplid2(t *testing.T) {
	t.Parallel()
	master := testserver.Start(t)
	replica := testserver.Start(t)
	mc := master.Client(t)
	rc := replicate(t, replica, master)
	mc.Set(ctx, "k", "v", 0)
	acked(t, mc)
	old := infoField(t, rc, "replication", "master_replid")
	if err := rc.Do(ctx, "REPLICAOF", "NO", "ONE").Err(); err != nil {
		t.Fatal(err)
	}
	if err := rc.Set(ctx, "k2", "v", 0).Err(); err != nil {
		t.Fatalf("a promoted replica refuses writes: %v", err)
	}
	if got := infoField(t, rc, "replication", "master_replid2"); got != old {
		t.Fatalf("master_replid2 %s, want the old master's %s", got, old)
	}
	if infoField(t, rc, "replication", "role") != "master" || rc.Get(ctx, "k").Val() != "v" {
		t.Fatal("the promoted replica lost its role or its data")
	}
}

func TestReplica_Restart_ResumesWithAPartialSync(t *testing.T) {
	t.Parallel()
	master := testserver.Start(t, debugFlags...)
	mc := master.Client(t)
	load(t, mc, "a", 100)
	dir := t.TempDir()
	replica, _ := startReplicaIn(t, dir, master)
	load(t, mc, "b", 100)
	acked(t, mc)
	replica.Stop()
	load(t, mc, "c", 100) // while the replica is away
	_, rc := startReplicaIn(t, dir, master)
	acked(t, mc)
	if full, partial := infoField(t, mc, "stats", "sync_full"), infoField(t, mc, "stats", "sync_partial_ok"); full != "1" || partial != "1" {
		t.Fatalf("sync_full %s sync_partial_ok %s, want 1 and 1", full, partial)
	}
	sameDigest(t, mc, rc)
}

func TestWait_NoReplica_TimesOutWithZero(t *testing.T) {
	t.Parallel()
	master := testserver.Start(t)
	mc := master.Client(t)
	mc.Set(ctx, "k", "v", 0)
	if n, err := mc.Do(ctx, "WAIT", 1, 50).Int(); err != nil || n != 0 {
		t.Fatalf("WAIT 1 50 without replicas: %d %v", n, err)
	}
	if err := mc.Do(ctx, "WAIT", 1, -1).Err(); err == nil || err.Error() != "ERR timeout is negative" {
		t.Fatalf("WAIT with a negative timeout: %v", err)
	}
}

func TestReplica_RestartAfterTheBinlogWasTrimmed_FullSyncsAgain(t *testing.T) {
	t.Parallel()
	master := testserver.Start(t, append([]string{"--binlog-max-entries", "20"}, debugFlags...)...)
	mc := master.Client(t)
	load(t, mc, "first", 5)
	dir := t.TempDir()
	replica, _ := startReplicaIn(t, dir, master)
	replica.Stop()
	load(t, mc, "away", 200) // far more than 20 records per shard
	waitFor(t, "retention to trim the binlog", func() bool {
		n, _ := strconv.Atoi(infoField(t, mc, "replication", "repl_backlog_histlen"))
		return n <= 4*20
	})
	_, rc := startReplicaIn(t, dir, master)
	acked(t, mc)
	if full, err := infoField(t, mc, "stats", "sync_full"), infoField(t, mc, "stats", "sync_partial_err"); full != "2" || err != "1" {
		t.Fatalf("sync_full %s sync_partial_err %s, want 2 and 1", full, err)
	}
	sameDigest(t, mc, rc)
}

func TestReplica_OfAReplica_HoldsTheMastersData(t *testing.T) {
	t.Parallel()
	master := testserver.Start(t, debugFlags...)
	middle := testserver.Start(t, debugFlags...)
	leaf := testserver.Start(t, debugFlags...)
	mc := master.Client(t)
	load(t, mc, "a", 100)
	replicate(t, middle, master)
	lc := replicate(t, leaf, middle)
	load(t, mc, "b", 100)
	if n, _ := mc.Do(ctx, "WAIT", 1, 60000).Int(); n != 1 {
		t.Fatal("WAIT: the middle replica did not acknowledge")
	}
	want := digest(t, mc)
	waitFor(t, "the leaf to hold the master's data", func() bool { return digest(t, lc) == want })
	if mo, lo := infoField(t, mc, "replication", "master_repl_offset"), infoField(t, lc, "replication", "master_repl_offset"); mo != lo {
		t.Fatalf("leaf's offset %s, master's %s", lo, mo)
	}
}

func TestMinReplicasToWrite_RefusesWritesUntilAReplicaIsThere(t *testing.T) {
	t.Parallel()
	master := testserver.Start(t, "--min-replicas-to-write", "1", "--min-replicas-max-lag", "10")
	mc := master.Client(t)
	waitFor(t, "NOREPLICAS", func() bool {
		err := mc.Set(ctx, "k", "v", 0).Err()
		return err != nil && err.Error() == "NOREPLICAS Not enough good replicas to write."
	})
	if err := mc.Get(ctx, "k").Err(); err != nil && err != redis.Nil {
		t.Fatalf("a read is refused too: %v", err)
	}
	replica := testserver.Start(t)
	replicate(t, replica, master)
	waitFor(t, "writes to be accepted with a replica", func() bool { return mc.Set(ctx, "k", "v", 0).Err() == nil })
}

// Sentinel promotes a replica with SLAVEOF NO ONE inside MULTI/EXEC (with CONFIG REWRITE and
// CLIENT KILL): the transaction holds every shard, and the promotion must not wait for one.
func TestSlaveOfNoOne_InsideExec_PromotesWithoutDeadlock(t *testing.T) {
	t.Parallel()
	master := testserver.Start(t)
	replica := testserver.Start(t)
	mc := master.Client(t)
	load(t, mc, "a", 50)
	rc := replicate(t, replica, master)
	master.Stop() // as when sentinel fails over: the master is gone
	waitFor(t, "the link to go down", func() bool { return infoField(t, rc, "replication", "master_link_status") == "down" })
	c := replica.Client(t, func(o *redis.Options) { o.ReadTimeout = time.Minute })
	_, err := c.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.Do(ctx, "SLAVEOF", "NO", "ONE")
		p.Do(ctx, "CLIENT", "KILL", "TYPE", "pubsub")
		return nil
	})
	if err != nil {
		t.Fatalf("MULTI SLAVEOF NO ONE EXEC: %v", err)
	}
	if err := c.Set(ctx, "k", "v", 0).Err(); err != nil {
		t.Fatalf("a write after the promotion: %v", err)
	}
}

func TestReplica_Writable_LocalWritesStayAndTheStreamGoesOn(t *testing.T) {
	t.Parallel()
	master := testserver.Start(t)
	replica := testserver.Start(t)
	mc := master.Client(t)
	rc := replicate(t, replica, master)
	if err := rc.ConfigSet(ctx, "replica-read-only", "no").Err(); err != nil {
		t.Fatal(err)
	}
	if err := rc.Set(ctx, "local", "1", 0).Err(); err != nil {
		t.Fatalf("a write to a writable replica: %v", err)
	}
	load(t, mc, "m", 50)
	if n, _ := mc.Do(ctx, "WAIT", 1, 60000).Int(); n != 1 {
		t.Fatal("WAIT: the replica stopped acknowledging after a local write")
	}
	if rc.Get(ctx, "m:49:s").Val() != "49" || rc.Get(ctx, "local").Val() != "1" {
		t.Fatal("the replica lost the master's writes or its own")
	}
	if err := rc.ConfigSet(ctx, "replica-read-only", "yes").Err(); err != nil {
		t.Fatal(err)
	}
	if err := rc.Set(ctx, "local", "2", 0).Err(); err == nil || !strings.HasPrefix(err.Error(), "READONLY") {
		t.Fatalf("a write after replica-read-only yes: %v", err)
	}
}

func TestFailover_ToAReplica_SwapsRolesAndTheOldMasterContinuesPartially(t *testing.T) {
	t.Parallel()
	master := testserver.Start(t, debugFlags...)
	replica := testserver.Start(t, debugFlags...)
	mc := master.Client(t)
	load(t, mc, "a", 100)
	rc := replicate(t, replica, master)
	host, port := hostPort(t, replica)
	if err := mc.Do(ctx, "FAILOVER", "TO", host, port, "TIMEOUT", 60000).Err(); err != nil {
		t.Fatalf("FAILOVER: %v", err)
	}
	waitFor(t, "the roles to swap", func() bool {
		return infoField(t, rc, "replication", "role") == "master" && infoField(t, mc, "replication", "role") == "slave" &&
			infoField(t, mc, "replication", "master_link_status") == "up" &&
			infoField(t, mc, "replication", "master_failover_state") == "no-failover"
	})
	load(t, rc, "b", 100) // the new master takes writes, the old one replicates them
	if n, err := rc.Do(ctx, "WAIT", 1, 60000).Int(); err != nil || n != 1 {
		t.Fatalf("WAIT on the new master: %d %v", n, err)
	}
	if m, r := digest(t, rc), digest(t, mc); m != r {
		t.Fatalf("old master's digest %s, new master's %s", r, m)
	}
	if partial, full := infoField(t, rc, "stats", "sync_partial_ok"), infoField(t, rc, "stats", "sync_full"); partial != "1" || full != "0" {
		t.Fatalf("the old master synced with sync_partial_ok %s sync_full %s: want a partial sync", partial, full)
	}
	if err := mc.Set(ctx, "x", "1", 0).Err(); err == nil || !strings.HasPrefix(err.Error(), "READONLY") {
		t.Fatalf("a write to the old master: %v", err)
	}
}

func TestFailover_Errors_AsRedis(t *testing.T) {
	t.Parallel()
	master := testserver.Start(t)
	mc := master.Client(t)
	for _, tc := range []struct {
		args []any
		want string
	}{
		{[]any{"FAILOVER"}, "ERR FAILOVER requires connected replicas."},
		{[]any{"FAILOVER", "ABORT"}, "ERR No failover in progress."},
		{[]any{"FAILOVER", "TIMEOUT", 0}, "ERR FAILOVER timeout must be greater than 0"},
		{[]any{"FAILOVER", "TO", "a", "x"}, "ERR value is not an integer or out of range"},
		{[]any{"FAILOVER", "bogus"}, "ERR syntax error"},
		{[]any{"FAILOVER", "ABORT", "TIMEOUT", 5}, "ERR syntax error"},
	} {
		if err := mc.Do(ctx, tc.args...).Err(); err == nil || err.Error() != tc.want {
			t.Errorf("%v: %v, want %s", tc.args, err, tc.want)
		}
	}
	replica := testserver.Start(t)
	rc := replicate(t, replica, master)
	if err := rc.Do(ctx, "FAILOVER").Err(); err == nil || err.Error() != "ERR FAILOVER is not valid when server is a replica." {
		t.Errorf("FAILOVER on a replica: %v", err)
	}
	if err := mc.Do(ctx, "FAILOVER", "FORCE").Err(); err == nil || err.Error() != "ERR FAILOVER with force option requires both a timeout and target HOST and IP." {
		t.Errorf("FAILOVER FORCE alone: %v", err)
	}
	if err := mc.Do(ctx, "FAILOVER", "TO", "10.9.9.9", 1).Err(); err == nil || err.Error() != "ERR FAILOVER target HOST and PORT is not a replica." {
		t.Errorf("FAILOVER to a stranger: %v", err)
	}
}
