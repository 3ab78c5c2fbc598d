package cmds_test

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"shardis/internal/testserver"
)

// MEMORY's help, arity and argument errors, byte for byte as redis-server 7.0.15.
func TestMemory_ErrorsMatchRedis(t *testing.T) { replayRecorded(t, "testdata/memory") }

// MEMORY USAGE is what a key takes in the store: it grows with the value, estimates a
// collection from its samples, and is nil for a missing key.
func TestMemory_Usage_FollowsTheValue(t *testing.T) {
	s := testserver.Start(t)
	ctx := context.Background()
	c := s.Client(t)
	c.Set(ctx, "small", "x", 0)
	c.Set(ctx, "big", strings.Repeat("x", 10000), 0)
	small, err := c.MemoryUsage(ctx, "small").Result()
	if err != nil {
		t.Fatal(err)
	}
	big := c.MemoryUsage(ctx, "big").Val()
	if small <= 0 || big < 10000 || big > 10000+200 {
		t.Fatalf("MEMORY USAGE small = %d, big = %d (10,000-byte value)", small, big)
	}
	for i := range 1000 {
		c.HSet(ctx, "h", "field"+strings.Repeat("f", i%10), strings.Repeat("v", 100))
		c.RPush(ctx, "l", strings.Repeat("e", 100))
	}
	// 1,000 elements of about 100 bytes: the estimate from 5 samples and the exact sum agree.
	est := c.MemoryUsage(ctx, "l").Val()
	all := c.MemoryUsage(ctx, "l", 0).Val()
	if est < 100_000 || all < 100_000 || est > 2*all || all > 2*est {
		t.Fatalf("MEMORY USAGE l = %d (5 samples), %d (all)", est, all)
	}
	// A list's nodes hold 64 elements each: 1,000 elements of 10 bytes take about 13 KB, not a
	// node's size per element.
	for range 1000 {
		c.RPush(ctx, "sl", "0123456789")
	}
	for _, samples := range []int{5, 0} {
		if n := c.MemoryUsage(ctx, "sl", samples).Val(); n < 10_000 || n > 50_000 {
			t.Fatalf("MEMORY USAGE sl SAMPLES %d = %d for 1,000 elements of 10 bytes", samples, n)
		}
	}
	if h := c.MemoryUsage(ctx, "h").Val(); h < 1000 {
		t.Fatalf("MEMORY USAGE h = %d for 10 fields of 100 bytes", h)
	}
	if err := c.MemoryUsage(ctx, "missing").Err(); err == nil || err.Error() != "redis: nil" {
		t.Fatalf("MEMORY USAGE missing: %v, want nil", err)
	}
}

// MEMORY STATS has Redis's fields, with the key count; DOCTOR answers one of Redis's reports.
func TestMemory_StatsAndDoctor(t *testing.T) {
	s := testserver.Start(t)
	ctx := context.Background()
	c := s.Client(t)
	for _, k := range []string{"a", "b", "c"} {
		c.Set(ctx, k, "v", 0)
	}
	c.Do(ctx, "SELECT", "3")
	stats, err := c.Do(ctx, "MEMORY", "STATS").Slice()
	if err != nil {
		t.Fatal(err)
	}
	fields := map[string]any{}
	for i := 0; i+1 < len(stats); i += 2 {
		fields[stats[i].(string)] = stats[i+1]
	}
	for _, name := range []string{"peak.allocated", "total.allocated", "startup.allocated", "replication.backlog",
		"clients.slaves", "clients.normal", "cluster.links", "aof.buffer", "lua.caches", "functions.caches", "db.0",
		"overhead.total", "keys.count", "keys.bytes-per-key", "dataset.bytes", "dataset.percentage",
		"peak.percentage", "allocator.allocated", "allocator.active", "allocator.resident",
		"allocator-fragmentation.ratio", "allocator-fragmentation.bytes", "allocator-rss.ratio",
		"allocator-rss.bytes", "rss-overhead.ratio", "rss-overhead.bytes", "fragmentation", "fragmentation.bytes"} {
		if _, ok := fields[name]; !ok {
			t.Errorf("MEMORY STATS has no %q: %v", name, stats)
		}
	}
	if len(fields) != 28 {
		t.Errorf("MEMORY STATS has %d fields, want 27 and db.0", len(fields))
	}
	if n := fields["keys.count"]; n != int64(3) {
		t.Errorf("keys.count = %v, want 3", n)
	}
	doctor, err := c.Do(ctx, "MEMORY", "DOCTOR").Text()
	if err != nil || !strings.HasPrefix(doctor, "Hi Sam") && !strings.HasPrefix(doctor, "Sam, I detected") {
		t.Fatalf("MEMORY DOCTOR = %q, %v", doctor, err)
	}
	if got := c.Do(ctx, "MEMORY", "MALLOC-STATS").Val(); got != "Stats not supported for the current allocator" {
		t.Fatalf("MEMORY MALLOC-STATS = %v", got)
	}
}

// INFO used_memory counts what the data holds in memory (memtables, the key cache, the Go
// heap): after a FLUSHALL it falls back near where it started, as Redis's does, rather than
// keep the deleted data's memtables and cached keys.
func TestMemory_UsedMemory_FallsAfterFlushAll(t *testing.T) {
	s := testserver.Start(t)
	ctx := context.Background()
	c := s.Client(t)
	used := func() int64 {
		info := c.Info(ctx, "memory").Val()
		for _, line := range strings.Split(info, "\r\n") {
			if v, ok := strings.CutPrefix(line, "used_memory:"); ok {
				n, _ := strconv.ParseInt(v, 10, 64)
				return n
			}
		}
		t.Fatalf("no used_memory in %q", info)
		return 0
	}
	base := used()
	member := strings.Repeat("m", 40)
	for k := range 200 {
		p := c.Pipeline()
		for i := range 20 {
			args := []any{"SADD", fmt.Sprintf("set%d", k)}
			for j := range 100 {
				args = append(args, fmt.Sprintf("%s%d-%d", member, i, j))
			}
			p.Do(ctx, args...)
		}
		if _, err := p.Exec(ctx); err != nil {
			t.Fatal(err)
		}
	}
	high := used()
	if high-base < 32<<20 {
		t.Fatalf("used_memory grew by %d MB for 400,000 members of 40 bytes", (high-base)>>20)
	}
	if err := c.Do(ctx, "FLUSHALL", "ASYNC").Err(); err != nil {
		t.Fatal(err)
	}
	limit := base + (high-base)/4
	deadline := time.Now().Add(30 * time.Second)
	for now := used(); now > limit; now = used() {
		if time.Now().After(deadline) {
			t.Fatalf("used_memory %d MB 30 s after FLUSHALL: started at %d MB, was %d MB with the data",
				now>>20, base>>20, high>>20)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
