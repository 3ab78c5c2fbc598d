package cmds_test

import (
	"context"
	"runtime"
	"runtime/metrics"
	"sync"
	"testing"
	"time"

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
	c := s.Client(t)
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
