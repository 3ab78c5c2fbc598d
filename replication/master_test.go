package replication_test

import (
	"bufio"
	"net"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

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
