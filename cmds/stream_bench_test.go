package cmds_test

import (
	"strconv"
	"testing"

	"shardis/internal/testserver"
)

func BenchmarkXADD(b *testing.B) {
	s := testserver.Start(b)
	c := s.Client(b)
	hashBenchRun(b, c, func(i int) []any {
		return []any{"XADD", "s" + strconv.Itoa(i%1000), "*", "f", "vvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvv"}
	})
}

func BenchmarkHSETSameField(b *testing.B) {
	s := testserver.Start(b)
	c := s.Client(b)
	hashBenchRun(b, c, func(i int) []any {
		return []any{"HSET", "h" + strconv.Itoa(i%1000), "f", "vvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvv"}
	})
}
