package cmds_test

import (
	"strconv"
	"testing"
)

// BenchmarkGEOADD adds points to 16 sets.
func BenchmarkGEOADD(b *testing.B) {
	c := zsetBenchServer(b, "", 0)
	zsetBenchRun(b, c, func(i int) []any {
		return []any{"GEOADD", "g" + strconv.Itoa(i%16), 13 + float64(i%1000)/1000, 38, "m" + strconv.Itoa(i)}
	})
}

// BenchmarkGEOSEARCH_OnePoint searches 1,000 sets of one point each, as shardis-bench's
// GEOSEARCH BYRADIUS figure does.
func BenchmarkGEOSEARCH_OnePoint(b *testing.B) {
	c := zsetBenchServer(b, "", 0)
	for i := 0; i < 1000; i++ {
		if err := c.Do(zsetCtx, "GEOADD", "g"+strconv.Itoa(i), 13.361389, 38.115556, "Palermo").Err(); err != nil {
			b.Fatal(err)
		}
	}
	zsetBenchRun(b, c, func(i int) []any {
		return []any{"GEOSEARCH", "g" + strconv.Itoa(i%1000), "FROMLONLAT", 13.36, 38.11, "BYRADIUS", 100, "km", "WITHDIST"}
	})
}

// BenchmarkGEOSEARCH_OnePointZRANGE is BenchmarkGEOSEARCH_OnePoint's ZRANGE of the same sets,
// to set a search against the plainest read of its set.
func BenchmarkGEOSEARCH_OnePointZRANGE(b *testing.B) {
	c := zsetBenchServer(b, "", 0)
	for i := 0; i < 1000; i++ {
		if err := c.Do(zsetCtx, "GEOADD", "g"+strconv.Itoa(i), 13.361389, 38.115556, "Palermo").Err(); err != nil {
			b.Fatal(err)
		}
	}
	zsetBenchRun(b, c, func(i int) []any {
		return []any{"ZRANGE", "g" + strconv.Itoa(i%1000), 0, -1, "WITHSCORES"}
	})
}
