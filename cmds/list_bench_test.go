package cmds_test

import (
	"context"
	"strconv"
	"testing"

	"github.com/redis/go-redis/v9"

	"shardis/internal/testserver"
)

// The list family's throughput through the real protocol: go-redis pipelines of listBenchPipe
// commands against an in-process server, reported as ops/s.

const listBenchPipe = 100

// listBench runs b.N commands made by cmd(i) in pipelines and reports ops/s.
func listBench(b *testing.B, c *redis.Client, cmd func(p redis.Pipeliner, i int)) {
	b.Helper()
	ctx := context.Background()
	b.ResetTimer()
	for done := 0; done < b.N; {
		p := c.Pipeline()
		n := min(listBenchPipe, b.N-done)
		for i := range n {
			cmd(p, done+i)
		}
		if _, err := p.Exec(ctx); err != nil && err != redis.Nil {
			b.Fatal(err)
		}
		done += n
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "ops/s")
}

// listBenchFill makes list key hold n elements.
func listBenchFill(b *testing.B, c *redis.Client, key string, n int) {
	b.Helper()
	ctx := context.Background()
	for start := 0; start < n; start += 1000 {
		vals := make([]any, 0, 1000)
		for i := start; i < min(start+1000, n); i++ {
			vals = append(vals, "element-"+strconv.Itoa(i))
		}
		if err := c.RPush(ctx, key, vals...).Err(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkLPUSH pushes onto 1000 lists.
func BenchmarkLPUSH(b *testing.B) {
	s := testserver.Start(b)
	c := s.Client(b)
	listBench(b, c, func(p redis.Pipeliner, i int) {
		p.LPush(context.Background(), "list:"+strconv.Itoa(i%1000), "0123456789abcdef")
	})
}

// BenchmarkLPUSH_RPOP alternates a push and a pop on 10000 mostly short lists, so lists are
// created and deleted all the time (the shape of the lpush-rpop load of BENCHMARKS.md).
func BenchmarkLPUSH_RPOP(b *testing.B) {
	s := testserver.Start(b)
	c := s.Client(b)
	listBench(b, c, func(p redis.Pipeliner, i int) {
		key := "list:" + strconv.Itoa((i/2*7919)%10000)
		if i%2 == 0 {
			p.LPush(context.Background(), key, "0123456789abcdef")
		} else {
			p.RPop(context.Background(), key)
		}
	})
}

// BenchmarkLINDEX reads random positions of a 100000-element list: one point read each.
func BenchmarkLINDEX(b *testing.B) {
	s := testserver.Start(b)
	c := s.Client(b)
	listBenchFill(b, c, "big", 100_000)
	listBench(b, c, func(p redis.Pipeliner, i int) {
		p.LIndex(context.Background(), "big", int64(i*7919%100_000))
	})
}

// BenchmarkLRANGE_10 reads 10 elements from random offsets of a 100000-element list.
func BenchmarkLRANGE_10(b *testing.B) {
	s := testserver.Start(b)
	c := s.Client(b)
	listBenchFill(b, c, "big", 100_000)
	listBench(b, c, func(p redis.Pipeliner, i int) {
		start := int64(i * 7919 % 99_990)
		p.LRange(context.Background(), "big", start, start+9)
	})
}

// BenchmarkLSET overwrites random positions of a 100000-element list.
func BenchmarkLSET(b *testing.B) {
	s := testserver.Start(b)
	c := s.Client(b)
	listBenchFill(b, c, "big", 100_000)
	listBench(b, c, func(p redis.Pipeliner, i int) {
		p.LSet(context.Background(), "big", int64(i*7919%100_000), "0123456789abcdef")
	})
}

// BenchmarkLPUSH_OneList pushes onto one list, as redis-benchmark's LPUSH does: every push of
// a group writes the next lower position of the same list.
func BenchmarkLPUSH_OneList(b *testing.B) {
	s := testserver.Start(b)
	c := s.Client(b)
	listBench(b, c, func(p redis.Pipeliner, i int) {
		p.LPush(context.Background(), "mylist", "xxx")
	})
}

// BenchmarkRPOP_Queue pops the oldest elements of a list that LPUSH filled, as
// redis-benchmark's RPOP after its LPUSH does: each pop takes an element no command read
// before.
func BenchmarkRPOP_Queue(b *testing.B) {
	s := testserver.Start(b)
	c := s.Client(b)
	ctx := context.Background()
	for start := 0; start < b.N; start += 1000 {
		vals := make([]any, min(1000, b.N-start))
		for i := range vals {
			vals[i] = "xxx"
		}
		if err := c.LPush(ctx, "mylist", vals...).Err(); err != nil {
			b.Fatal(err)
		}
	}
	listBench(b, c, func(p redis.Pipeliner, i int) {
		p.RPop(ctx, "mylist")
	})
}

// BenchmarkLRANGE_100_Head reads the 100 newest elements of a list LPUSH filled, as
// redis-benchmark's LRANGE_100 does: the pushes left them in the key cache.
func BenchmarkLRANGE_100_Head(b *testing.B) {
	s := testserver.Start(b)
	c := s.Client(b)
	ctx := context.Background()
	vals := make([]any, 1000)
	for i := range vals {
		vals[i] = "xxx"
	}
	for range 100 {
		if err := c.LPush(ctx, "mylist", vals...).Err(); err != nil {
			b.Fatal(err)
		}
	}
	listBench(b, c, func(p redis.Pipeliner, i int) {
		p.LRange(ctx, "mylist", 0, 99)
	})
}
