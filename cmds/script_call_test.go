package cmds_test

import (
	"context"
	"runtime"
	"runtime/metrics"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"shardis/internal/testserver"
)

// heapPeak samples the Go heap's live objects every few milliseconds until stop is called,
// which returns the highest sample.
func heapPeak() (stop func() uint64) {
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	var peak uint64
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(5 * time.Millisecond)
		defer t.Stop()
		for {
			metrics.Read(sample)
			peak = max(peak, sample[0].Value.Uint64())
			select {
			case <-done:
				return
			case <-t.C:
			}
		}
	}()
	return func() uint64 {
		close(done)
		wg.Wait()
		return peak
	}
}

// A script's writes wait in its transaction until it ends (it commits as one), but what each
// small write holds there is small: 200,000 SADDs of short members hold far less than the
// hundreds of bytes per call the transaction once kept (the meta re-encoded per call, a copy
// of every binlog record, the map entry of every member) and allocate little per call.
func TestScriptCall_ManySmallWrites_BoundedHeap(t *testing.T) {
	s := testserver.Start(t)
	ctx := context.Background()
	// The script may take long on a busy machine: the bound is on memory, not on time.
	c := s.Client(t, func(o *redis.Options) { o.ReadTimeout = 5 * time.Minute })
	const n = 200_000
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	stop := heapPeak()
	got, err := c.Eval(ctx, "for i=1,200000 do redis.call('sadd','s',i) end return redis.call('scard','s')", nil).Result()
	peak := stop()
	runtime.ReadMemStats(&after)
	if err != nil || got != int64(n) {
		t.Fatalf("EVAL = %v, %v; want %d", got, err, n)
	}
	growth := int64(peak) - int64(before.HeapAlloc)
	allocated := after.TotalAlloc - before.TotalAlloc
	t.Logf("heap peak growth %.1f MB (%d bytes per SADD); allocated %.1f MB (%d bytes per SADD)",
		float64(growth)/(1<<20), growth/n, float64(allocated)/(1<<20), allocated/n)
	if growth > 95<<20 {
		t.Errorf("the heap grew by %d MB during the script: %d bytes per SADD", growth>>20, growth/n)
	}
	if allocated > 220<<20 {
		t.Errorf("the script allocated %d MB: %d bytes per SADD", allocated>>20, allocated/n)
	}
	if v := c.SCard(ctx, "s").Val(); v != n {
		t.Fatalf("SCARD s = %d after the script, want %d", v, n)
	}
}

// replOffset reads INFO replication's master_repl_offset: how many binlog records the server
// logged.
func replOffset(t *testing.T, c *redis.Client) int64 {
	t.Helper()
	info := c.Info(context.Background(), "replication").Val()
	for _, line := range strings.Split(info, "\r\n") {
		if v, ok := strings.CutPrefix(line, "master_repl_offset:"); ok {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				t.Fatalf("master_repl_offset %q", v)
			}
			return n
		}
	}
	t.Fatalf("no master_repl_offset in %q", info)
	return 0
}

// A script's writes of one kind to one key are logged as a few records with many items, not
// one record per call: what the script holds until it commits, and what replicas receive.
// Its replicas and its own replay still see every member (replication tests; Replay).
func TestScriptCall_ManyWritesToOneKey_FewBinlogRecords(t *testing.T) {
	s := testserver.Start(t)
	ctx := context.Background()
	c := s.Client(t)
	before := replOffset(t, c)
	script := `for i=1,3000 do redis.call('sadd',KEYS[1],i) redis.call('rpush',KEYS[2],i) end
		for i=1,3000 do redis.call('hset',KEYS[3],i,i) end return redis.call('scard',KEYS[1])`
	if got, err := c.Eval(ctx, script, []string{"{k}s", "{k}l", "{k}h"}).Result(); err != nil || got != int64(3000) {
		t.Fatalf("EVAL = %v, %v", got, err)
	}
	// Alternating keys close each other's records: 6,000 of them; the HSETs join.
	if logged := replOffset(t, c) - before; logged > 6000+10 {
		t.Fatalf("the script logged %d records, want at most %d", logged, 6010)
	}
	if n := c.HLen(ctx, "{k}h").Val(); n != 3000 || c.LLen(ctx, "{k}l").Val() != 3000 {
		t.Fatalf("HLEN %d LLEN %d, want 3000", n, c.LLen(ctx, "{k}l").Val())
	}
	before = replOffset(t, c)
	if _, err := c.Eval(ctx, "for i=1,10000 do redis.call('sadd',KEYS[1],'m'..i) end", []string{"big"}).Result(); err != redis.Nil {
		t.Fatalf("EVAL: %v", err)
	}
	if logged := replOffset(t, c) - before; logged > 10 {
		t.Fatalf("10,000 SADDs to one key logged %d records, want a few", logged)
	}
}
