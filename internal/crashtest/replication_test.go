package crashtest

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// The replication link across kill -9 of either side, on real processes.

func infoOf(t *testing.T, c *redis.Client, section, field string) string {
	t.Helper()
	info, err := c.Info(context.Background(), section).Result()
	if err != nil {
		return ""
	}
	for _, line := range strings.Split(info, "\r\n") {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			return v
		}
	}
	return ""
}

// writeLoad writes to c until ctx ends: SETs, INCRs and cross-shard MSETs, each acknowledged
// write counted.
func writeLoad(ctx context.Context, c *redis.Client, wg *sync.WaitGroup) {
	defer wg.Done()
	for i := 0; ctx.Err() == nil; i++ {
		k := fmt.Sprintf("load:%d", i%500)
		_ = c.Set(ctx, k, i, 0).Err()
		_ = c.Incr(ctx, "counter").Err()
		if i%7 == 0 {
			_ = c.MSet(ctx, k+":a", i, k+":b", i, k+":c", i).Err()
		}
	}
}

func linkUp(t *testing.T, c *redis.Client) func() bool {
	return func() bool { return infoOf(t, c, "replication", "master_link_status") == "up" }
}

// sameData waits until the master has no writer and the replica acknowledged everything,
// then compares their digests.
func sameData(t *testing.T, mc, rc *redis.Client) {
	t.Helper()
	ctx := context.Background()
	if n, err := mc.Do(ctx, "WAIT", 1, 60000).Int(); err != nil || n != 1 {
		t.Fatalf("WAIT 1: %d %v", n, err)
	}
	m, err1 := mc.Do(ctx, "DEBUG", "DIGEST").Text()
	r, err2 := rc.Do(ctx, "DEBUG", "DIGEST").Text()
	if err1 != nil || err2 != nil || m != r {
		t.Fatalf("replica's digest %s (%v), master's %s (%v)", r, err2, m, err1)
	}
}

func TestCrash_KillNineReplicaUnderLoad_ResumesWithAPartialSync(t *testing.T) {
	killNineReplicaUnderLoad(t, "4")
}

// A replica with 3 shards of a master with 4 applies the master's steps by key and keeps the
// master's positions with its data (replication/reshard.go).
func TestCrash_KillNineReplicaWithOtherShardCountUnderLoad_ResumesWithAPartialSync(t *testing.T) {
	killNineReplicaUnderLoad(t, "3")
}

// killNineReplicaUnderLoad kills -9 a replica with replicaShards shards of a 4-shard master
// under writes, restarts it and checks it resumed with a partial sync to the master's data.
func killNineReplicaUnderLoad(t *testing.T, replicaShards string) {
	master, _ := startShardis(t, t.TempDir(), "--shards", "4", "--enable-debug-command", "yes")
	mc := master.client(t)
	dir := t.TempDir()
	flags := []string{"--shards", replicaShards, "--enable-debug-command", "yes", "--replicaof", strings.Replace(master.addr, ":", " ", 1)}
	replica, _ := startShardis(t, dir, flags...)
	rc := replica.client(t)
	waitFor(t, "the link to come up", linkUp(t, rc))

	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(2)
	go writeLoad(ctx, master.client(t), &wg)
	go writeLoad(ctx, master.client(t), &wg)
	time.Sleep(300 * time.Millisecond)
	replica.kill9(t)
	time.Sleep(300 * time.Millisecond) // the master goes on meanwhile
	replica, _ = startShardis(t, dir, flags...)
	rc = replica.client(t)
	waitFor(t, "the link to come up again", linkUp(t, rc))
	time.Sleep(200 * time.Millisecond)
	cancel()
	wg.Wait()

	sameData(t, mc, rc)
	if full, partial := infoOf(t, mc, "stats", "sync_full"), infoOf(t, mc, "stats", "sync_partial_ok"); full != "1" || partial != "1" {
		t.Fatalf("sync_full %s sync_partial_ok %s: want one full sync and one partial", full, partial)
	}
}

func TestCrash_KillNineMasterUnderLoad_ReplicaResumesAfterItsRestart(t *testing.T) {
	mdir := t.TempDir()
	mflags := []string{"--shards", "4", "--enable-debug-command", "yes", "--appendfsync", "always"}
	master, _ := startShardis(t, mdir, mflags...)
	replica, _ := startShardis(t, t.TempDir(), "--shards", "4", "--enable-debug-command", "yes",
		"--replicaof", strings.Replace(master.addr, ":", " ", 1))
	rc := replica.client(t)
	waitFor(t, "the link to come up", linkUp(t, rc))

	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	go writeLoad(ctx, master.client(t), &wg)
	time.Sleep(400 * time.Millisecond)
	master.kill9(t)
	cancel()
	wg.Wait()

	master, _ = startShardis(t, mdir, mflags...) // on another port: the replica is told
	mc := master.client(t)
	if err := rc.Do(context.Background(), "REPLICAOF", strings.Split(master.addr, ":")[0], strings.Split(master.addr, ":")[1]).Err(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the link to the restarted master", linkUp(t, rc))
	sameData(t, mc, rc)
	if full, partial := infoOf(t, mc, "stats", "sync_full"), infoOf(t, mc, "stats", "sync_partial_ok"); full != "0" || partial != "1" {
		t.Fatalf("sync_full %s sync_partial_ok %s after the master's restart: want a partial sync", full, partial)
	}
}
