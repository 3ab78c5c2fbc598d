package crashtest

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"shardis/internal/testserver"
)

// startSentinel runs Debian's redis-sentinel monitoring master as "mymaster" with quorum 1.
func startSentinel(t *testing.T, masterAddr string) (addr string) {
	t.Helper()
	bin, err := exec.LookPath("redis-sentinel")
	if err != nil {
		t.Skip("redis-sentinel is not installed (make deps installs it)")
	}
	host, port, _ := net.SplitHostPort(masterAddr)
	sport := testserver.FreePort(t)
	dir := t.TempDir()
	conf := filepath.Join(dir, "sentinel.conf")
	body := fmt.Sprintf("port %d\nbind 127.0.0.1\ndir %s\nsentinel monitor mymaster %s %s 1\n"+
		"sentinel down-after-milliseconds mymaster 1000\nsentinel failover-timeout mymaster 10000\n"+
		"sentinel parallel-syncs mymaster 1\n", sport, dir, host, port)
	if err := os.WriteFile(conf, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	out := &syncBuffer{}
	cmd := exec.Command(bin, conf)
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("sentinel's log:\n%s", out)
		}
	})
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(sport))
}

// TestSentinel_KillNineMaster_ReplicaPromotedNoAcknowledgedWriteLost runs a master and a
// replica under Debian's redis-sentinel with go-redis's failover client writing through it:
// kill -9 of the master, sentinel promotes the replica, every write WAIT 1 acknowledged before
// the kill is there, the clients go on writing, and the old master, back on its address,
// becomes a replica of the new one.
func TestSentinel_KillNineMaster_ReplicaPromotedNoAcknowledgedWriteLost(t *testing.T) {
	mport := testserver.FreePort(t)
	mdir := t.TempDir()
	mflags := []string{"--shards", "4", "--appendfsync", "always"}
	master := launchShardisOn(t, mport, mdir, mflags...)
	if _, err := master.waitReady(15 * time.Second); err != nil {
		t.Fatal(err)
	}
	replica, _ := startShardis(t, t.TempDir(), "--shards", "4", "--replicaof", strings.Replace(master.addr, ":", " ", 1))
	rc := replica.client(t)
	waitFor(t, "the link to come up", linkUp(t, rc))
	saddr := startSentinel(t, master.addr)
	sc := redis.NewSentinelClient(&redis.Options{Addr: saddr})
	defer sc.Close()
	ctx := context.Background()
	waitFor(t, "sentinel to see the replica", func() bool {
		replicas, err := sc.Replicas(ctx, "mymaster").Result()
		return err == nil && len(replicas) == 1
	})

	fc := redis.NewFailoverClient(&redis.FailoverOptions{MasterName: "mymaster", SentinelAddrs: []string{saddr},
		MaxRetries: 50, MinRetryBackoff: 50 * time.Millisecond, MaxRetryBackoff: 500 * time.Millisecond,
		DialTimeout: time.Second, ReadTimeout: 5 * time.Second, WriteTimeout: 5 * time.Second})
	defer fc.Close()
	var mu sync.Mutex
	var acked []string
	writeAcked := func(k string) {
		if fc.Set(ctx, k, k, 0).Err() != nil {
			return
		}
		if n, err := fc.Do(ctx, "WAIT", 1, 2000).Int(); err == nil && n == 1 {
			mu.Lock()
			acked = append(acked, k)
			mu.Unlock()
		}
	}
	for i := range 200 {
		writeAcked("before:" + strconv.Itoa(i))
	}
	master.kill9(t)
	waitFor(t, "sentinel to promote the replica", func() bool {
		addr, err := sc.GetMasterAddrByName(ctx, "mymaster").Result()
		return err == nil && net.JoinHostPort(addr[0], addr[1]) == replica.addr
	})
	if role := infoOf(t, rc, "replication", "role"); role != "master" {
		t.Fatalf("the promoted replica's role is %q", role)
	}
	for i := range 50 { // the failover client follows the new master
		if err := fc.Set(ctx, "after:"+strconv.Itoa(i), "v", 0).Err(); err != nil {
			t.Fatalf("a write through sentinel after the failover: %v", err)
		}
	}
	// redis-py's Sentinel finds the new master and writes through it.
	shost, sport, _ := net.SplitHostPort(saddr)
	py := fmt.Sprintf(`from redis.sentinel import Sentinel
m = Sentinel([(%q, %s)], socket_timeout=5).master_for("mymaster", socket_timeout=5)
m.set("py", "1")
print(m.get("py").decode())`, shost, sport)
	if out, err := exec.Command("/usr/bin/python3", "-c", py).CombinedOutput(); err != nil || strings.TrimSpace(string(out)) != "1" {
		t.Fatalf("redis-py through sentinel after the failover: %v\n%s", err, out)
	}
	mu.Lock()
	for _, k := range acked {
		if v, err := rc.Get(ctx, k).Result(); err != nil || v != k {
			t.Fatalf("%s acknowledged by WAIT 1 before the kill is missing on the new master: %q %v", k, v, err)
		}
	}
	mu.Unlock()

	old := launchShardisOn(t, mport, mdir, mflags...) // the old master comes back on its address
	if _, err := old.waitReady(30 * time.Second); err != nil {
		t.Fatal(err)
	}
	oc := old.client(t)
	waitFor(t, "sentinel to make the old master a replica of the new one", func() bool {
		return infoOf(t, oc, "replication", "role") == "slave" && infoOf(t, oc, "replication", "master_link_status") == "up" &&
			infoOf(t, oc, "replication", "master_port") == strings.Split(replica.addr, ":")[1]
	})
	if n, err := rc.Do(ctx, "WAIT", 1, 60000).Int(); err != nil || n != 1 {
		t.Fatalf("WAIT 1 on the new master: %d %v", n, err)
	}
	if v, err := oc.Get(ctx, "after:49").Result(); err != nil || v != "v" {
		t.Fatalf("the old master, now a replica, lacks a write made after the failover: %q %v", v, err)
	}
}
