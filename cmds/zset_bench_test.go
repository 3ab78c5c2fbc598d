package cmds_test

import (
	"strconv"
	"testing"

	"github.com/redis/go-redis/v9"

	"shardis/internal/testserver"
)

// zsetBenchPipeline is how many commands each round trip of a sorted-set benchmark carries.
const zsetBenchPipeline = 100

// zsetBenchRun sends b.N commands built by mk in pipelines and reports commands per second.
func zsetBenchRun(b *testing.B, c *redis.Client, mk func(i int) []any) {
	b.Helper()
	zsetBenchRunDepth(b, c, zsetBenchPipeline, mk)
}

// zsetBenchRunDepth is zsetBenchRun with depth commands per round trip.
func zsetBenchRunDepth(b *testing.B, c *redis.Client, depth int, mk func(i int) []any) {
	b.Helper()
	b.ResetTimer()
	for done := 0; done < b.N; {
		p := c.Pipeline()
		n := min(depth, b.N-done)
		for j := range n {
			p.Do(zsetCtx, mk(done+j)...)
		}
		if _, err := p.Exec(zsetCtx); err != nil && err != redis.Nil {
			b.Fatal(err)
		}
		done += n
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "ops/s")
}

func zsetBenchServer(b *testing.B, key string, n int) *redis.Client {
	s := testserver.Start(b)
	c := s.Client(b)
	if n > 0 {
		zsetFill(b, c, key, n)
	}
	return c
}

func BenchmarkZADD(b *testing.B) {
	c := zsetBenchServer(b, "", 0)
	zsetBenchRun(b, c, func(i int) []any {
		return []any{"ZADD", "z" + strconv.Itoa(i%16), i, "m" + strconv.Itoa(i)}
	})
}

// BenchmarkZADD_SameScore re-adds one member at its score, as redis-benchmark's ZADD does:
// nothing is written, and the event loop answers it from a view of the shard.
func BenchmarkZADD_SameScore(b *testing.B) {
	c := zsetBenchServer(b, "", 0)
	zsetBenchRunDepth(b, c, 16, func(int) []any { return []any{"ZADD", "z", 0, "m"} })
}

func BenchmarkZADD_Update(b *testing.B) {
	c := zsetBenchServer(b, "z", 10000)
	zsetBenchRun(b, c, func(i int) []any {
		return []any{"ZADD", "z", i, "m" + strconv.Itoa(i%10000)}
	})
}

func BenchmarkZINCRBY(b *testing.B) {
	c := zsetBenchServer(b, "z", 10000)
	zsetBenchRun(b, c, func(i int) []any {
		return []any{"ZINCRBY", "z", 1, "m" + strconv.Itoa(i%10000)}
	})
}

func BenchmarkZSCORE(b *testing.B) {
	c := zsetBenchServer(b, "z", 10000)
	zsetBenchRun(b, c, func(i int) []any {
		return []any{"ZSCORE", "z", "m" + strconv.Itoa(i%20000)}
	})
}

func BenchmarkZRANGE_First10(b *testing.B) {
	c := zsetBenchServer(b, "z", 10000)
	zsetBenchRun(b, c, func(int) []any { return []any{"ZRANGE", "z", 0, 9, "WITHSCORES"} })
}

func BenchmarkZRANGE_Last10(b *testing.B) {
	c := zsetBenchServer(b, "z", 10000)
	zsetBenchRun(b, c, func(int) []any { return []any{"ZRANGE", "z", -10, -1} })
}

func BenchmarkZRANGEBYSCORE_Limit10(b *testing.B) {
	c := zsetBenchServer(b, "z", 10000)
	zsetBenchRun(b, c, func(i int) []any {
		return []any{"ZRANGEBYSCORE", "z", i % 10000, "+inf", "LIMIT", 0, 10}
	})
}

func BenchmarkZRANK_10000(b *testing.B) {
	c := zsetBenchServer(b, "z", 10000)
	zsetBenchRun(b, c, func(i int) []any {
		return []any{"ZRANK", "z", "m" + strconv.Itoa(i%10000)}
	})
}

func BenchmarkZPOPMIN_ZADD(b *testing.B) {
	c := zsetBenchServer(b, "z", 1000)
	zsetBenchRun(b, c, func(i int) []any {
		if i%2 == 0 {
			return []any{"ZPOPMIN", "z"}
		}
		return []any{"ZADD", "z", i, "m" + strconv.Itoa(i)}
	})
}

// A store writes two data keys per member; one per round trip, since a group of many big
// writes in one transaction is slower per command (each iterator a command opens walks the
// group's uncommitted writes).
func BenchmarkZUNIONSTORE_2x1000(b *testing.B) {
	s := testserver.Start(b)
	c := s.Client(b)
	zsetFill(b, c, "{x}a", 1000)
	zsetFill(b, c, "{x}b", 1000)
	zsetBenchRunDepth(b, c, 1, func(int) []any { return []any{"ZUNIONSTORE", "{x}d", 2, "{x}a", "{x}b"} })
}

func BenchmarkZUNION_2x1000(b *testing.B) {
	s := testserver.Start(b)
	c := s.Client(b)
	zsetFill(b, c, "{x}a", 1000)
	zsetFill(b, c, "{x}b", 1000)
	zsetBenchRunDepth(b, c, 1, func(int) []any { return []any{"ZUNION", 2, "{x}a", "{x}b"} })
}
