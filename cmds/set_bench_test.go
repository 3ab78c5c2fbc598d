package cmds_test

import (
	"strconv"
	"testing"

	"github.com/redis/go-redis/v9"

	"shardis/internal/testserver"
)

// setBenchPipeline is how many commands each round trip of a set benchmark carries.
const setBenchPipeline = 100

// setBenchRun sends b.N commands built by mk in pipelines and reports commands per second.
func setBenchRun(b *testing.B, c *redis.Client, mk func(i int) []any) {
	b.Helper()
	b.ResetTimer()
	for done := 0; done < b.N; {
		p := c.Pipeline()
		n := min(setBenchPipeline, b.N-done)
		for j := range n {
			p.Do(setCtx, mk(done+j)...)
		}
		if _, err := p.Exec(setCtx); err != nil {
			b.Fatal(err)
		}
		done += n
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "ops/s")
}

// setBenchFill gives key n members m0..m<n-1>.
func setBenchFill(b *testing.B, c *redis.Client, key string, n int) {
	b.Helper()
	for lo := 0; lo < n; lo += 1000 {
		args := []any{"SADD", key}
		for i := lo; i < min(lo+1000, n); i++ {
			args = append(args, "m"+strconv.Itoa(i))
		}
		if err := c.Do(setCtx, args...).Err(); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkSADD(b *testing.B) {
	s := testserver.Start(b)
	c := s.Client(b)
	setBenchRun(b, c, func(i int) []any {
		return []any{"SADD", "s" + strconv.Itoa(i%16), "m" + strconv.Itoa(i)}
	})
}

// BenchmarkSADD_Existing adds one member already there, as redis-benchmark's SADD does:
// nothing is written, and the event loop answers it from a view of the shard.
func BenchmarkSADD_Existing(b *testing.B) {
	s := testserver.Start(b)
	c := s.Client(b)
	setBenchRun(b, c, func(int) []any { return []any{"SADD", "s", "m"} })
}

func BenchmarkSISMEMBER(b *testing.B) {
	s := testserver.Start(b)
	c := s.Client(b)
	setBenchFill(b, c, "s", 10000)
	setBenchRun(b, c, func(i int) []any {
		return []any{"SISMEMBER", "s", "m" + strconv.Itoa(i%20000)}
	})
}

func BenchmarkSMEMBERS_100(b *testing.B) {
	s := testserver.Start(b)
	c := s.Client(b)
	setBenchFill(b, c, "s", 100)
	setBenchRun(b, c, func(int) []any { return []any{"SMEMBERS", "s"} })
}

func BenchmarkSINTER_100x1000(b *testing.B) {
	s := testserver.Start(b)
	c := s.Client(b)
	setBenchFill(b, c, "{x}small", 100)
	setBenchFill(b, c, "{x}big", 1000)
	setBenchRun(b, c, func(int) []any { return []any{"SINTER", "{x}small", "{x}big"} })
}

func BenchmarkSUNION_2x1000(b *testing.B) {
	s := testserver.Start(b)
	c := s.Client(b)
	setBenchFill(b, c, "{x}a", 1000)
	setBenchFill(b, c, "{x}b", 1000)
	setBenchRun(b, c, func(int) []any { return []any{"SUNION", "{x}a", "{x}b"} })
}

func BenchmarkSPOP_SADD(b *testing.B) {
	s := testserver.Start(b)
	c := s.Client(b)
	setBenchFill(b, c, "s", 1000)
	setBenchRun(b, c, func(i int) []any {
		if i%2 == 0 {
			return []any{"SPOP", "s"}
		}
		return []any{"SADD", "s", "n" + strconv.Itoa(i)}
	})
}

// SRANDMEMBER walks to a random position (no rank index): this measures that walk.
func BenchmarkSRANDMEMBER_100k(b *testing.B) {
	s := testserver.Start(b)
	c := s.Client(b)
	setBenchFill(b, c, "s", 100_000)
	setBenchRun(b, c, func(int) []any { return []any{"SRANDMEMBER", "s"} })
}
