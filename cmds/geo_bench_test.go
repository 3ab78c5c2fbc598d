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

// BenchmarkGEOSEARCH_BigSet searches 10 km around a point of a set of 2,000 points spread
// over 3 x 2 degrees (about a dozen found, a few hundred candidates in the cells).
func BenchmarkGEOSEARCH_BigSet(b *testing.B) {
	c := zsetBenchServer(b, "", 0)
	args := []any{"GEOADD", "g"}
	for i := 0; i < 2000; i++ {
		args = append(args, 11.5+3*float64((i*7919)%2000)/2000, 37+2*float64((i*104729)%2000)/2000, "p"+strconv.Itoa(i))
	}
	if err := c.Do(zsetCtx, args...).Err(); err != nil {
		b.Fatal(err)
	}
	zsetBenchRun(b, c, func(i int) []any {
		return []any{"GEOSEARCH", "g", "FROMLONLAT", 13.2, 38.1, "BYRADIUS", 10, "km", "ASC", "WITHDIST"}
	})
}
