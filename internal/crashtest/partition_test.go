package crashtest

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"shardis/internal/testserver"
)

// netnsPair makes a network namespace joined to this one by a veth pair and returns the
// address on this side, the address inside, the namespace's name and a function that cuts
// (false) or heals (true) the link. Everything is removed when the test ends; the test is
// skipped, with the reason, where namespaces cannot be made.
func netnsPair(t *testing.T) (here, there, ns string, link func(up bool)) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("network namespaces need root")
	}
	id := rand.IntN(200) + 20
	ns = fmt.Sprintf("shardis%d-%d", os.Getpid()%10000, id)
	outer, inner := fmt.Sprintf("shv%da", id), fmt.Sprintf("shv%db", id)
	here, there = fmt.Sprintf("10.231.%d.1", id), fmt.Sprintf("10.231.%d.2", id)
	run := func(args ...string) error {
		out, err := exec.Command("ip", args...).CombinedOutput()
		if err != nil {
			return fmt.Errorf("ip %s: %v: %s", strings.Join(args, " "), err, out)
		}
		return nil
	}
	if err := run("netns", "add", ns); err != nil {
		t.Skipf("cannot make a network namespace here: %v", err)
	}
	t.Cleanup(func() {
		_ = run("link", "del", outer)
		_ = run("netns", "del", ns)
	})
	for _, args := range [][]string{
		{"link", "add", outer, "type", "veth", "peer", "name", inner},
		{"link", "set", inner, "netns", ns},
		{"addr", "add", here + "/24", "dev", outer},
		{"link", "set", outer, "up"},
		{"netns", "exec", ns, "ip", "addr", "add", there + "/24", "dev", inner},
		{"netns", "exec", ns, "ip", "link", "set", inner, "up"},
		{"netns", "exec", ns, "ip", "link", "set", "lo", "up"},
	} {
		if err := run(args...); err != nil {
			t.Skipf("cannot set up the veth pair here: %v", err)
		}
	}
	link = func(up bool) {
		state := "down"
		if up {
			state = "up"
		}
		if err := run("link", "set", outer, state); err != nil {
			t.Fatal(err)
		}
	}
	return here, there, ns, link
}

// launchInNetns starts shardis inside namespace ns, listening on addr:port.
func launchInNetns(t *testing.T, ns, addr string, port int, dir string, flags ...string) *proc {
	t.Helper()
	args := append([]string{"netns", "exec", ns, shardisBinary(t), "--port", strconv.Itoa(port), "--bind", addr,
		"--dir", dir, "--loops", "2", "--cpu-pin", "no"}, flags...)
	p := &proc{addr: net.JoinHostPort(addr, strconv.Itoa(port)), out: &syncBuffer{}, done: make(chan struct{})}
	p.cmd = exec.Command("ip", args...)
	p.cmd.Stdout, p.cmd.Stderr = p.out, p.out
	p.started = time.Now()
	if err := p.cmd.Start(); err != nil {
		t.Fatalf("start shardis in %s: %v", ns, err)
	}
	go func() { _ = p.cmd.Wait(); close(p.done) }()
	t.Cleanup(func() {
		if !p.exited() {
			_ = p.cmd.Process.Kill()
			<-p.done
		}
	})
	if _, err := p.waitReady(30 * time.Second); err != nil {
		t.Fatalf("shardis in %s did not become ready: %v\n%s", ns, err, p.out)
	}
	return p
}

// TestPartition_ReplicaCutOff_CatchesUpByPartialSyncAndMinReplicasRefuses puts the replica in
// a network namespace joined to the master's by a veth pair. Cut: the master goes on taking
// writes; healed: the replica catches up with a partial sync. With min-replicas-to-write 1,
// the master refuses writes while the replica is cut off and takes them again once it is back.
func TestPartition_ReplicaCutOff_CatchesUpByPartialSyncAndMinReplicasRefuses(t *testing.T) {
	here, there, ns, link := netnsPair(t)
	mport := testserver.FreePort(t)
	master := launchShardisOn(t, mport, t.TempDir(), "--shards", "4", "--enable-debug-command", "yes",
		"--bind", here+" 127.0.0.1", "--protected-mode", "no", "--repl-timeout", "3", "--repl-ping-replica-period", "1")
	if _, err := master.waitReady(15 * time.Second); err != nil {
		t.Fatal(err)
	}
	replica := launchInNetns(t, ns, there, 6400, t.TempDir(), "--shards", "4", "--enable-debug-command", "yes",
		"--replicaof", here+" "+strconv.Itoa(mport), "--repl-timeout", "3", "--protected-mode", "no")
	mc, rc := master.client(t), replica.client(t)
	ctx := context.Background()
	waitFor(t, "the link to come up", linkUp(t, rc))

	write := func(prefix string, n int) {
		for i := range n {
			if err := mc.Set(ctx, prefix+strconv.Itoa(i), i, 0).Err(); err != nil {
				t.Fatalf("a write to the master: %v", err)
			}
		}
	}
	write("before:", 100)
	link(false)
	write("during:", 300) // the master goes on while its replica is cut off
	waitFor(t, "the master to drop the silent replica", func() bool {
		return infoOf(t, mc, "replication", "connected_slaves") == "0"
	})
	link(true)
	waitFor(t, "the replica to come back", func() bool { return infoOf(t, mc, "replication", "connected_slaves") == "1" })
	write("after:", 100)
	sameData(t, mc, rc)
	if full, partial := infoOf(t, mc, "stats", "sync_full"), infoOf(t, mc, "stats", "sync_partial_ok"); full != "1" || partial != "1" {
		t.Fatalf("sync_full %s sync_partial_ok %s: the replica should have caught up with a partial sync", full, partial)
	}

	if err := mc.ConfigSet(ctx, "min-replicas-to-write", "1").Err(); err != nil {
		t.Fatal(err)
	}
	if err := mc.ConfigSet(ctx, "min-replicas-max-lag", "2").Err(); err != nil {
		t.Fatal(err)
	}
	link(false)
	waitFor(t, "NOREPLICAS while the replica is cut off", func() bool {
		err := mc.Set(ctx, "k", "v", 0).Err()
		return err != nil && err.Error() == "NOREPLICAS Not enough good replicas to write."
	})
	link(true)
	waitFor(t, "writes to be taken again", func() bool { return mc.Set(ctx, "k", "v", 0).Err() == nil })
	sameData(t, mc, rc)
}
