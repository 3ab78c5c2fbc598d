package datatype

import "math"

// Geo points are sorted-set members whose score is Redis's 52-bit geohash: longitude and
// latitude, each scaled to 26 bits over [-180, 180] and [-85.05112878, 85.05112878]
// (EPSG:900913's limits), interleaved with the latitude's bits in the even positions. The
// arithmetic below follows Redis 7.0's geohash.c and geohash_helper.c step for step (the same
// operations in the same order, C's conversions where a double meets an integer), so that
// scores, decoded coordinates, distances and the cells a search visits are Redis's own.

// Geo limits, as Redis's GEO_* constants.
const (
	GeoLonMin  = -180.0
	GeoLonMax  = 180.0
	GeoLatMin  = -85.05112878
	GeoLatMax  = 85.05112878
	GeoStepMax = 26 // 26*2 = 52 bits

	geoEarthRadius = 6372797.560856 // metres: the Earth's quadratic mean radius (WGS-84)
	geoMercatorMax = 20037726.37
)

// geoDegRad is Redis's D_R, M_PI/180.0 evaluated in double precision at run time (a Go
// constant expression would be rounded once from the exact quotient, which can differ).
var geoDegRad = geoPi / 180.0

var geoPi = math.Pi

func geoRad(deg float64) float64 { return deg * geoDegRad }
func geoDeg(rad float64) float64 { return rad / geoDegRad }

// GeoHash is a geohash of step*2 bits (Redis's GeoHashBits). The zero value (Step 0) is the
// "no cell" a search skips.
type GeoHash struct {
	Bits uint64
	Step uint8
}

func (h GeoHash) zero() bool { return h.Bits == 0 && h.Step == 0 }

// geoRange is an interval of one coordinate.
type geoRange struct{ min, max float64 }

var (
	geoLonRange    = geoRange{GeoLonMin, GeoLonMax}
	geoLatRange    = geoRange{GeoLatMin, GeoLatMax}
	geoStdLatRange = geoRange{-90, 90} // the standard geohash's, for GEOHASH's strings
)

// geoSpread spreads the low 32 bits of v to the even bit positions.
func geoSpread(v uint64) uint64 {
	v = (v | v<<16) & 0x0000FFFF0000FFFF
	v = (v | v<<8) & 0x00FF00FF00FF00FF
	v = (v | v<<4) & 0x0F0F0F0F0F0F0F0F
	v = (v | v<<2) & 0x3333333333333333
	v = (v | v<<1) & 0x5555555555555555
	return v
}

// geoSqueeze gathers the even bit positions of v into its low 32 bits.
func geoSqueeze(v uint64) uint64 {
	v &= 0x5555555555555555
	v = (v | v>>1) & 0x3333333333333333
	v = (v | v>>2) & 0x0F0F0F0F0F0F0F0F
	v = (v | v>>4) & 0x00FF00FF00FF00FF
	v = (v | v>>8) & 0x0000FFFF0000FFFF
	v = (v | v>>16) & 0x00000000FFFFFFFF
	return v
}

// geoToUint32 is C's conversion of a non-negative double to uint32_t (truncation); offsets
// are in [0, 2^step], so it never overflows.
func geoToUint32(f float64) uint32 { return uint32(uint64(f)) }

// geoEncode encodes a point over the given ranges at step; ok is false outside the ranges.
func geoEncode(lonR, latR geoRange, lon, lat float64, step uint8) (GeoHash, bool) {
	if step == 0 || step > 32 {
		return GeoHash{}, false
	}
	if lon > GeoLonMax || lon < GeoLonMin || lat > GeoLatMax || lat < GeoLatMin {
		return GeoHash{}, false
	}
	if lat < latR.min || lat > latR.max || lon < lonR.min || lon > lonR.max {
		return GeoHash{Step: step}, false
	}
	latOff := (lat - latR.min) / (latR.max - latR.min)
	lonOff := (lon - lonR.min) / (lonR.max - lonR.min)
	scale := float64(uint64(1) << step)
	latOff *= scale
	lonOff *= scale
	bits := geoSpread(uint64(geoToUint32(latOff))) | geoSpread(uint64(geoToUint32(lonOff)))<<1
	return GeoHash{Bits: bits, Step: step}, true
}

// GeoEncode returns the 52-bit score of a point; ok is false outside Redis's limits.
func GeoEncode(lon, lat float64) (score uint64, ok bool) {
	h, ok := geoEncode(geoLonRange, geoLatRange, lon, lat, GeoStepMax)
	if !ok {
		return 0, false
	}
	return h.align52(), true
}

// GeoValid reports whether lon, lat is a point GEOADD accepts.
func GeoValid(lon, lat float64) bool {
	return !(lon < GeoLonMin || lon > GeoLonMax || lat < GeoLatMin || lat > GeoLatMax)
}

// align52 shifts the hash to the 52-bit score scale.
func (h GeoHash) align52() uint64 { return h.Bits << (52 - uint(h.Step)*2) }

// geoArea is the cell a hash stands for.
type geoArea struct{ lon, lat geoRange }

// geoDecode returns the cell of h over the given ranges; ok is false for the zero hash.
func geoDecode(lonR, latR geoRange, h GeoHash) (geoArea, bool) {
	if h.zero() {
		return geoArea{}, false
	}
	ilat := uint32(geoSqueeze(h.Bits))
	ilon := uint32(geoSqueeze(h.Bits >> 1))
	latScale := latR.max - latR.min
	lonScale := lonR.max - lonR.min
	div := float64(uint64(1) << h.Step)
	var a geoArea
	a.lat.min = latR.min + (float64(ilat)*1.0/div)*latScale
	a.lat.max = latR.min + (float64(ilat+1)*1.0/div)*latScale // uint32 wraps, as in C
	a.lon.min = lonR.min + (float64(ilon)*1.0/div)*lonScale
	a.lon.max = lonR.min + (float64(ilon+1)*1.0/div)*lonScale
	return a, true
}

// centre returns the middle of the cell, clamped to Redis's limits.
func (a geoArea) centre() (lon, lat float64) {
	lon = (a.lon.min + a.lon.max) / 2
	lon = math.Min(math.Max(lon, GeoLonMin), GeoLonMax)
	lat = (a.lat.min + a.lat.max) / 2
	lat = math.Min(math.Max(lat, GeoLatMin), GeoLatMax)
	return lon, lat
}

// GeoScoreBits is C's (uint64_t) conversion of a sorted-set score, as gcc compiles it on
// x86-64 (where Redis's decodeGeohash meets scores not made by GEOADD): below 2^63 through a
// signed conversion (so -5 wraps and out-of-range values give 2^63), from 2^63 on by
// subtracting 2^63 first (so 2^64 and more, and +inf, give 0).
func GeoScoreBits(score float64) uint64 {
	const two63 = 9223372036854775808.0
	if score < two63 {
		if score >= -two63 {
			return uint64(int64(score))
		}
		return 1 << 63 // cvttsd2si's "integer indefinite"
	}
	d := score - two63
	if d < two63 {
		return uint64(int64(d)) ^ 1<<63
	}
	return 0 // indefinite xor the sign bit; NaN lands here too
}

// GeoScoreInt is C's (long long) conversion of a score (WITHHASH's reply).
func GeoScoreInt(score float64) int64 {
	const two63 = 9223372036854775808.0
	if score >= -two63 && score < two63 {
		return int64(score)
	}
	return math.MinInt64
}

// GeoDecode returns the point a score stands for: the centre of its 52-bit cell. Any score
// decodes (Redis decodes every score it finds, whatever set it is in).
func GeoDecode(score float64) (lon, lat float64) {
	a, _ := geoDecode(geoLonRange, geoLatRange, GeoHash{Bits: GeoScoreBits(score), Step: GeoStepMax})
	return a.centre()
}

const geoAlphabet = "0123456789bcdefghjkmnpqrstuvwxyz"

// GeoHashString appends the 11-character standard geohash of the point a score stands for:
// decoded, encoded again over the standard latitude range [-90, 90], its 52 bits as ten
// base-32 characters and a final '0', as Redis's GEOHASH.
func GeoHashString(dst []byte, score float64) []byte {
	lon, lat := GeoDecode(score)
	h, _ := geoEncode(geoLonRange, geoStdLatRange, lon, lat, GeoStepMax)
	for i := 0; i < 10; i++ {
		dst = append(dst, geoAlphabet[(h.Bits>>(52-(i+1)*5))&0x1f])
	}
	return append(dst, geoAlphabet[0])
}

// geoMoveX moves h one cell east (d > 0) or west, wrapping around the antimeridian.
func geoMoveX(h *GeoHash, d int) {
	x := h.Bits & 0xaaaaaaaaaaaaaaaa
	y := h.Bits & 0x5555555555555555
	zz := uint64(0x5555555555555555) >> (64 - uint(h.Step)*2)
	if d > 0 {
		x += zz + 1
	} else {
		x |= zz
		x -= zz + 1
	}
	x &= 0xaaaaaaaaaaaaaaaa >> (64 - uint(h.Step)*2)
	h.Bits = x | y
}

// geoMoveY moves h one cell north (d > 0) or south, wrapping from one pole to the other.
func geoMoveY(h *GeoHash, d int) {
	x := h.Bits & 0xaaaaaaaaaaaaaaaa
	y := h.Bits & 0x5555555555555555
	zz := uint64(0xaaaaaaaaaaaaaaaa) >> (64 - uint(h.Step)*2)
	if d > 0 {
		y += zz + 1
	} else {
		y |= zz
		y -= zz + 1
	}
	y &= 0x5555555555555555 >> (64 - uint(h.Step)*2)
	h.Bits = x | y
}

// Indexes of a cell's neighbours in GeoShape.Cells, in the order Redis searches them.
const (
	geoCentre = iota
	geoNorth
	geoSouth
	geoEast
	geoWest
	geoNorthEast
	geoNorthWest
	geoSouthEast
	geoSouthWest
)

// geoNeighbours returns h and its eight neighbours in search order.
func geoNeighbours(h GeoHash) [9]GeoHash {
	moves := [9][2]int{{0, 0}, {0, 1}, {0, -1}, {1, 0}, {-1, 0}, {1, 1}, {-1, 1}, {1, -1}, {-1, -1}}
	var out [9]GeoHash
	for i, m := range moves {
		n := h
		if m[0] != 0 {
			geoMoveX(&n, m[0])
		}
		if m[1] != 0 {
			geoMoveY(&n, m[1])
		}
		out[i] = n
	}
	return out
}

// geoSteps is the step (cell size) a search of radius metres around latitude lat starts
// from: Redis's geohashEstimateStepsByRadius.
func geoSteps(radius, lat float64) uint8 {
	if radius == 0 {
		return 26
	}
	step := 1
	for radius < geoMercatorMax {
		radius *= 2
		step++
	}
	step -= 2
	if lat > 66 || lat < -66 {
		step--
		if lat > 80 || lat < -80 {
			step--
		}
	}
	if step < 1 {
		step = 1
	}
	if step > 26 {
		step = 26
	}
	return uint8(step)
}

// GeoShape is a search area: a circle of Radius or a box of Width x Height, in the unit of
// Conv metres, around Lon, Lat.
type GeoShape struct {
	Box                   bool
	Lon, Lat              float64
	Radius, Width, Height float64
	Conv                  float64 // metres per unit
}

// bounds returns the shape's bounding box: min lon, min lat, max lon, max lat.
func (s *GeoShape) bounds() [4]float64 {
	height, width := s.Conv*s.Radius, s.Conv*s.Radius
	if s.Box {
		height, width = s.Conv*(s.Height/2), s.Conv*(s.Width/2)
	}
	latDelta := geoDeg(height / geoEarthRadius)
	lonDeltaTop := geoDeg(width / geoEarthRadius / geoCos(geoRad(s.Lat+latDelta)))
	lonDeltaBottom := geoDeg(width / geoEarthRadius / geoCos(geoRad(s.Lat-latDelta)))
	var b [4]float64
	if s.Lat < 0 { // the southern hemisphere is widest at its top edge
		b[0], b[2] = s.Lon-lonDeltaBottom, s.Lon+lonDeltaBottom
	} else {
		b[0], b[2] = s.Lon-lonDeltaTop, s.Lon+lonDeltaTop
	}
	b[1], b[3] = s.Lat-latDelta, s.Lat+latDelta
	return b
}

// Cells returns the nine cells a search of the shape visits, in Redis's order (the centre,
// then N, S, E, W, NE, NW, SE, SW), the ones it can skip as the zero GeoHash: Redis's
// geohashCalculateAreasByShapeWGS84.
func (s *GeoShape) Cells() [9]GeoHash {
	b := s.bounds()
	minLon, minLat, maxLon, maxLat := b[0], b[1], b[2], b[3]
	radius := s.Radius
	if s.Box {
		radius = math.Sqrt((s.Width/2)*(s.Width/2) + (s.Height/2)*(s.Height/2))
	}
	radius *= s.Conv
	steps := geoSteps(radius, s.Lat)
	h, _ := geoEncode(geoLonRange, geoLatRange, s.Lon, s.Lat, steps)
	n := geoNeighbours(h)
	area, _ := geoDecode(geoLonRange, geoLatRange, h)

	// A step too coarse for an area near a cell's edge: one size smaller.
	north, _ := geoDecode(geoLonRange, geoLatRange, n[geoNorth])
	south, _ := geoDecode(geoLonRange, geoLatRange, n[geoSouth])
	east, _ := geoDecode(geoLonRange, geoLatRange, n[geoEast])
	west, _ := geoDecode(geoLonRange, geoLatRange, n[geoWest])
	decrease := north.lat.max < maxLat || south.lat.min > minLat ||
		east.lon.max < maxLon || west.lon.min > minLon
	if steps > 1 && decrease {
		steps--
		h, _ = geoEncode(geoLonRange, geoLatRange, s.Lon, s.Lat, steps)
		n = geoNeighbours(h)
		area, _ = geoDecode(geoLonRange, geoLatRange, h)
	}
	if steps >= 2 { // drop the neighbours the area cannot reach
		if area.lat.min < minLat {
			n[geoSouth], n[geoSouthWest], n[geoSouthEast] = GeoHash{}, GeoHash{}, GeoHash{}
		}
		if area.lat.max > maxLat {
			n[geoNorth], n[geoNorthEast], n[geoNorthWest] = GeoHash{}, GeoHash{}, GeoHash{}
		}
		if area.lon.min < minLon {
			n[geoWest], n[geoSouthWest], n[geoNorthWest] = GeoHash{}, GeoHash{}, GeoHash{}
		}
		if area.lon.max > maxLon {
			n[geoEast], n[geoSouthEast], n[geoNorthEast] = GeoHash{}, GeoHash{}, GeoHash{}
		}
	}
	return n
}

// ScoreRange returns the scores [min, max) of the points in cell h.
func (h GeoHash) ScoreRange() (min, max float64) {
	lo := h.align52()
	h.Bits++
	return float64(lo), float64(h.align52())
}

// Zero reports whether h is the "no cell" of Cells.
func (h GeoHash) Zero() bool { return h.zero() }

// Within reports whether the point a score stands for lies in the shape, with the point and
// its distance from the centre in metres.
func (s *GeoShape) Within(score float64) (lon, lat, dist float64, ok bool) {
	lon, lat = GeoDecode(score)
	if s.Box {
		widthM, heightM := s.Width*s.Conv, s.Height*s.Conv
		if GeoLatDistance(lat, s.Lat) > heightM/2 {
			return lon, lat, 0, false
		}
		if GeoDistance(lon, lat, s.Lon, lat) > widthM/2 {
			return lon, lat, 0, false
		}
		return lon, lat, GeoDistance(s.Lon, s.Lat, lon, lat), true
	}
	dist = GeoDistance(s.Lon, s.Lat, lon, lat)
	if dist > s.Radius*s.Conv {
		return lon, lat, dist, false
	}
	return lon, lat, dist, true
}

// GeoLatDistance is the distance in metres between two latitudes on a meridian.
func GeoLatDistance(lat1, lat2 float64) float64 {
	return geoEarthRadius * math.Abs(geoRad(lat2)-geoRad(lat1))
}
