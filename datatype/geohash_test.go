package datatype

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"testing"

	"shardis/shard"
)

// The expected values below are what redis-server 7.0.15 answers (ZSCORE after GEOADD,
// GEOPOS, GEOHASH, GEODIST).

func TestGeoEncode_KnownPoints_RedisScores(t *testing.T) {
	for _, c := range []struct {
		lon, lat float64
		want     uint64
	}{
		{13.361389, 38.115556, 3479099956230698},
		{15.087269, 37.502669, 3479447370796909},
		{0, 0, 3377699720527872},
		{-180, -85.05112878, 0},
		{180, 85.05112878, 13510798882111488}, // the limits carry past 52 bits, as in Redis
	} {
		got, ok := GeoEncode(c.lon, c.lat)
		if !ok || got != c.want {
			t.Errorf("GeoEncode(%v, %v) = %d, %v; want %d", c.lon, c.lat, got, ok, c.want)
		}
	}
	if _, ok := GeoEncode(180.0001, 0); ok {
		t.Error("a longitude past 180 encoded")
	}
	if GeoValid(0, 85.06) || GeoValid(-181, 0) || !GeoValid(-180, -85.05112878) {
		t.Error("GeoValid disagrees with Redis's limits")
	}
}

func TestGeoDecode_Scores_RedisCoordinates(t *testing.T) {
	f := func(v float64) string { return strconv.FormatFloat(v, 'f', 17, 64) }
	for _, c := range []struct {
		score    float64
		lon, lat string
	}{
		{3479099956230698, "13.36138933897018433", "38.11555639549629859"},
		{-5, "180.00000000000000000", "85.05112877999999910"},            // wraps to all ones
		{1e300, "-179.99999731779098511", "-85.05112751263942528"},       // past 2^64: 0
		{-1e20, "180.00000000000000000", "-85.05112751263942528"},        // 2^63
		{math.Inf(1), "-179.99999731779098511", "-85.05112751263942528"}, // 0
		{4503599627370496, "-179.99999731779098511", "85.05112877999999910"},
	} {
		lon, lat := GeoDecode(c.score)
		if f(lon) != c.lon || f(lat) != c.lat {
			t.Errorf("GeoDecode(%v) = %s, %s; want %s, %s", c.score, f(lon), f(lat), c.lon, c.lat)
		}
	}
}

func TestGeoScoreBits_OutOfRange_AsCConverts(t *testing.T) {
	for _, c := range []struct {
		score float64
		want  uint64
	}{
		{12.75, 12}, {-5, math.MaxUint64 - 4}, {1e20, 0}, {-1e20, 1 << 63},
		{math.Inf(-1), 1 << 63}, {math.Inf(1), 0}, {1 << 63, 1 << 63},
	} {
		if got := GeoScoreBits(c.score); got != c.want {
			t.Errorf("GeoScoreBits(%v) = %#x, want %#x", c.score, got, c.want)
		}
	}
}

func TestGeoHashString_Scores_RedisStrings(t *testing.T) {
	for _, c := range []struct {
		score float64
		want  string
	}{
		{3479099956230698, "sqc8b49rny0"},
		{3479447370796909, "sqdtr74hyu0"},
		{-5, "bp05b5048p0"},
		{0, "00bh0hbj200"},
		{3377699720527872, "s0000000000"},
	} {
		if got := string(GeoHashString(nil, c.score)); got != c.want {
			t.Errorf("GeoHashString(%v) = %s, want %s", c.score, got, c.want)
		}
	}
}

func TestGeoDistance_Points_RedisMetres(t *testing.T) {
	lon1, lat1 := GeoDecode(3479099956230698)
	lon2, lat2 := GeoDecode(3479447370796909)
	if d := GeoDistance(lon1, lat1, lon2, lat2); math.Abs(d-166274.1516) > 0.00005 {
		t.Errorf("Palermo-Catania %v m, want 166274.1516", d)
	}
	// The same meridian takes the latitudes' distance.
	if d, want := GeoDistance(10, 0, 10, 1), GeoLatDistance(0, 1); d != want {
		t.Errorf("same meridian %v, want %v", d, want)
	}
}

func TestGeoShapeCells_HugeRadius_NeighboursDeduplicatable(t *testing.T) {
	s := GeoShape{Lon: 0, Lat: 0, Radius: 20000, Conv: 1000}
	cells := s.Cells()
	if cells[0].Step != 1 {
		t.Fatalf("step %d, want 1", cells[0].Step)
	}
	// Two columns: east and west are the same cell, which a search visits once.
	if cells[geoEast] != cells[geoWest] {
		t.Errorf("east %v, west %v", cells[geoEast], cells[geoWest])
	}
}

func TestGeoShapeCells_SmallRadius_FarNeighboursDropped(t *testing.T) {
	s := GeoShape{Lon: 13.361389, Lat: 38.115556, Radius: 1, Conv: 1000}
	cells := s.Cells()
	if cells[0].Zero() || cells[0].Step < 10 {
		t.Fatalf("centre %v", cells[0])
	}
	kept := 0
	for _, h := range cells {
		if !h.Zero() {
			kept++
		}
	}
	if kept == 9 {
		t.Error("no neighbour dropped for a 1 km circle")
	}
	lo, hi := cells[0].ScoreRange()
	if score := 3479099956230698.0; score < lo || score >= hi {
		t.Errorf("Palermo's score outside its cell [%v, %v)", lo, hi)
	}
}

func TestGeoShapeWithin_BoxAndCircle(t *testing.T) {
	circle := GeoShape{Lon: 15, Lat: 37, Radius: 200, Conv: 1000}
	if _, _, d, ok := circle.Within(3479447370796909); !ok || math.Abs(d-56441.3) > 1 {
		t.Errorf("Catania in a 200 km circle: %v %v", d, ok)
	}
	if _, _, _, ok := circle.Within(3377699720527872); ok {
		t.Error("(0, 0) in a 200 km circle around Sicily")
	}
	box := GeoShape{Box: true, Lon: 15, Lat: 37, Width: 400, Height: 100, Conv: 1000}
	if _, _, _, ok := box.Within(3479099956230698); ok { // Palermo is 124 km north
		t.Error("Palermo in a box 50 km tall either side")
	}
}

// TestZSet_ScoreRanges_SmallAndBig_SameWalk walks ranges in a given order (not score order)
// over a set read whole (small) and one walked by seeks (big).
func TestZSet_ScoreRanges_SmallAndBig_SameWalk(t *testing.T) {
	s := openStore(t)
	fillZSet(t, s, "small", 50)
	fillZSet(t, s, "big", ZSetListpackMax+50)
	// Ranges out of order, empty, meeting (no seek between them), and past the end.
	ranges := [][2]float64{{40, 43}, {3, 5}, {7, 7}, {45.5, 47}, {-10, 1}, {10, 11}, {11, 12}, {12.5, 13.5}, {500, 600}, {600, 700}}
	want := "m40:40 m41:41 m42:42 m03:3 m04:4 m46:46 m00:0 m10:10 m11:11 m13:13"
	for _, key := range []string{"small", "big"} {
		do(t, s, func(tx *shard.Tx) {
			z, err := LookupZSet(tx, 0, []byte(key))
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			z.ScoreRanges(ranges, func(m []byte, score float64) bool {
				got = append(got, fmt.Sprintf("%s:%g", m, score))
				return true
			})
			if g := strings.Join(got, " "); g != want {
				t.Errorf("%s: %s, want %s", key, g, want)
			}
			got = got[:0]
			z.ScoreRanges(ranges, func(m []byte, score float64) bool {
				got = append(got, string(m))
				return len(got) < 4
			})
			if len(got) != 4 {
				t.Errorf("%s: stopped after %d, want 4", key, len(got))
			}
		})
	}
}
