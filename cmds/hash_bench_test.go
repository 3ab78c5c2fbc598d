package cmds_test

import (
	"strconv"
	"testing"

	"github.com/redis/go-redis/v9"

	"shardis/internal/testserver"
)

// hashBenchPipeline is how many commands each round trip of a hash benchmark carries.
const hashBenchPipeline = 100

// hashBenchRun sends b.N commands built by mk in pipelines and reports commands per second.
func hashBenchRun(b *testing.B, c *redis.Client, mk func(i int) []any) {
	b.Helper()
	b.ResetTimer()
	for done := 0; done < b.N; {
		p := c.Pipeline()
		n := min(hashBenchPipeline, b.N-done)
		for j := range n {
			p.Do(hashCtx, mk(done+j)...)
		}
		if _, err := p.Exec(hashCtx); err != nil {
			b.Fatal(err)
		}
		done += n
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "ops/s")
}

// hashBenchFill gives hash key the fields f0..f<n-1>.
func hashBenchFill(b *testing.B, c *redis.Client, key string, n int) {
	b.Helper()
	for lo := 0; lo < n; lo += 1000 {
		args := []any{"HSET", key}
		for i := lo; i < min(lo+1000, n); i++ {
			args = append(args, "f"+strconv.Itoa(i), strconv.Itoa(i))
		}
		if err := c.Do(hashCtx, args...).Err(); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkHSET(b *testing.B) {
	s := testserver.Start(b)
	c := s.Client(b)
	hashBenchRun(b, c, func(i int) []any {
		return []any{"HSET", "h" + strconv.Itoa(i%16), "f" + strconv.Itoa(i), "v"}
	})
}

// BenchmarkHSET_SameValue rewrites one field with the value it holds, as redis-benchmark's
// HSET does: only its binlog record is written.
func BenchmarkHSET_SameValue(b *testing.B) {
	s := testserver.Start(b)
	c := s.Client(b)
	hashBenchRun(b, c, func(int) []any { return []any{"HSET", "h", "f", "v"} })
}

func BenchmarkHGET(b *testing.B) {
	s := testserver.Start(b)
	c := s.Client(b)
	hashBenchFill(b, c, "h", 10000)
	hashBenchRun(b, c, func(i int) []any {
		return []any{"HGET", "h", "f" + strconv.Itoa(i%10000)}
	})
}

func BenchmarkHINCRBYFLOAT(b *testing.B) {
	s := testserver.Start(b)
	c := s.Client(b)
	hashBenchRun(b, c, func(i int) []any {
		return []any{"HINCRBYFLOAT", "h", "f" + strconv.Itoa(i%64), "0.5"}
	})
}

func BenchmarkHGETALL_100(b *testing.B) {
	s := testserver.Start(b)
	c := s.Client(b)
	hashBenchFill(b, c, "h", 100)
	hashBenchRun(b, c, func(int) []any { return []any{"HGETALL", "h"} })
}

func BenchmarkHSCAN_Page(b *testing.B) {
	s := testserver.Start(b)
	c := s.Client(b)
	hashBenchFill(b, c, "h", 10000)
	hashBenchRun(b, c, func(int) []any { return []any{"HSCAN", "h", "0", "COUNT", "10"} })
}

func BenchmarkHRANDFIELD_Count5Of1000(b *testing.B) {
	s := testserver.Start(b)
	c := s.Client(b)
	hashBenchFill(b, c, "h", 1000)
	hashBenchRun(b, c, func(int) []any { return []any{"HRANDFIELD", "h", "5"} })
}

// BenchmarkSORT_1000 sorts a 1000-element list numerically, reading the top ten.
func BenchmarkSORT_1000(b *testing.B) {
	s := testserver.Start(b)
	c := s.Client(b)
	args := []any{"RPUSH", "l"}
	for i := range 1000 {
		args = append(args, (i*7919)%1000)
	}
	if err := c.Do(hashCtx, args...).Err(); err != nil {
		b.Fatal(err)
	}
	hashBenchRun(b, c, func(int) []any { return []any{"SORT", "l", "LIMIT", "0", "10"} })
}

// BenchmarkSORT_ByGet_100 sorts 100 elements by other keys and fetches a hash field for each:
// the command holds every shard.
func BenchmarkSORT_ByGet_100(b *testing.B) {
	s := testserver.Start(b)
	c := s.Client(b)
	args := []any{"RPUSH", "l"}
	for i := range 100 {
		args = append(args, i)
		if err := c.Do(hashCtx, "SET", "w_"+strconv.Itoa(i), (i*37)%100).Err(); err != nil {
			b.Fatal(err)
		}
		if err := c.Do(hashCtx, "HSET", "o_"+strconv.Itoa(i), "name", "n"+strconv.Itoa(i)).Err(); err != nil {
			b.Fatal(err)
		}
	}
	if err := c.Do(hashCtx, args...).Err(); err != nil {
		b.Fatal(err)
	}
	hashBenchRun(b, c, func(int) []any { return []any{"SORT", "l", "BY", "w_*", "GET", "o_*->name"} })
}
