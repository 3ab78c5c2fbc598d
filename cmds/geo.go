package cmds

import (
	"bytes"
	"math"
	"sort"
	"strconv"

	"shardis/cmdspec"
	"shardis/datatype"
	"shardis/pubsub"
)

// The geo family: points are members of a sorted set whose score is Redis's 52-bit geohash
// (the arithmetic is datatype/geohash.go). GEOADD is ZADD of the encoded scores (logged and
// notified as ZADD, as Redis propagates it); searches visit the nine cells Redis's
// geohashCalculateAreasByShapeWGS84 picks, each one seek into the set's score order, and keep
// the points the exact distance check accepts, in Redis's order.

const (
	geoRadiusComplexity = "O(N+log(M)) where N is the number of elements inside the bounding box of the circular area delimited by center and radius and M is the number of items inside the index."
	geoSearchComplexity = "O(N+log(M)) where N is the number of elements in the grid-aligned bounding box area around the shape provided as the filter and M is the number of items inside the shape"
	geoRadiusOpts       = "[WITHCOORD] [WITHDIST] [WITHHASH] [COUNT count [ANY]] [ASC | DESC]"
	geoSearchArea       = "<FROMMEMBER member | FROMLONLAT longitude latitude> <BYRADIUS radius <M | KM | FT | MI> | BYBOX width height <M | KM | FT | MI>> [ASC | DESC] [COUNT count [ANY]]"
)

var (
	geoReadACL  = []string{"read", "geo", "slow"}
	geoWriteACL = []string{"write", "geo", "slow"}
	geoReadSpec = []cmdspec.KeySpec{{Flags: cmdspec.RO | cmdspec.Access, Begin: cmdspec.Index(1), Find: cmdspec.Range(0, 1, 0)}}
)

// geoRadiusSpecs are GEORADIUS's and GEORADIUSBYMEMBER's key specs: the source, then the
// STORE and STOREDIST destinations searched from argument from.
func geoRadiusSpecs(from int) []cmdspec.KeySpec {
	return []cmdspec.KeySpec{
		{Flags: cmdspec.RO | cmdspec.Access, Begin: cmdspec.Index(1), Find: cmdspec.Range(0, 1, 0)},
		{Flags: cmdspec.OW | cmdspec.Update, Begin: cmdspec.Keyword("STORE", from), Find: cmdspec.Range(0, 1, 0)},
		{Flags: cmdspec.OW | cmdspec.Update, Begin: cmdspec.Keyword("STOREDIST", from), Find: cmdspec.Range(0, 1, 0)},
	}
}

func init() {
	Register(
		&Command{Name: "geoadd", Arity: -5, Flags: []string{"write", "denyoom"}, ACL: geoWriteACL,
			Group: "geo", Since: "3.2.0",
			Summary:    "Add one or more geospatial items in the geospatial index represented using a sorted set",
			Complexity: "O(log(N)) for each item added, where N is the number of elements in the sorted set.",
			Syntax:     "key [NX | XX] [CH] longitude latitude member [longitude latitude member ...]",
			KeySpecs:   []cmdspec.KeySpec{{Flags: cmdspec.RW | cmdspec.Update, Begin: cmdspec.Index(1), Find: cmdspec.Range(0, 1, 0)}},
			Run:        geoaddCmd},
		&Command{Name: "geodist", Arity: -4, Flags: []string{"readonly"}, ACL: geoReadACL,
			Group: "geo", Since: "3.2.0",
			Summary:    "Returns the distance between two members of a geospatial index",
			Complexity: "O(log(N))", Syntax: "key member1 member2 [M | KM | FT | MI]",
			KeySpecs: geoReadSpec, Run: geodistCmd},
		&Command{Name: "geohash", Arity: -2, Flags: []string{"readonly"}, ACL: geoReadACL,
			Group: "geo", Since: "3.2.0",
			Summary:    "Returns members of a geospatial index as standard geohash strings",
			Complexity: "O(log(N)) for each member requested, where N is the number of elements in the sorted set.",
			Syntax:     "key member [member ...]",
			KeySpecs:   geoReadSpec, Run: func(c *Ctx) { geoMembersCmd(c, true) }},
		&Command{Name: "geopos", Arity: -2, Flags: []string{"readonly"}, ACL: geoReadACL,
			Group: "geo", Since: "3.2.0",
			Summary:    "Returns longitude and latitude of members of a geospatial index",
			Complexity: "O(N) where N is the number of members requested.",
			Syntax:     "key member [member ...]",
			KeySpecs:   geoReadSpec, Run: func(c *Ctx) { geoMembersCmd(c, false) }},
		&Command{Name: "geosearch", Arity: -7, Flags: []string{"readonly"}, ACL: geoReadACL,
			Group: "geo", Since: "6.2.0",
			Summary:    "Query a sorted set representing a geospatial index to fetch members inside an area of a box or a circle.",
			Complexity: geoSearchComplexity,
			Syntax:     "key " + geoSearchArea + " [WITHCOORD] [WITHDIST] [WITHHASH]",
			KeySpecs:   geoReadSpec, Run: func(c *Ctx) { georadiusGeneric(c, 1, geoSearch) }},
		&Command{Name: "geosearchstore", Arity: -8, Flags: []string{"write", "denyoom"}, ACL: geoWriteACL,
			Group: "geo", Since: "6.2.0",
			Summary:    "Query a sorted set representing a geospatial index to fetch members inside an area of a box or a circle, and store the result in another key.",
			Complexity: geoSearchComplexity,
			Syntax:     "destination source " + geoSearchArea + " [STOREDIST]",
			KeySpecs: []cmdspec.KeySpec{
				{Flags: cmdspec.OW | cmdspec.Update, Begin: cmdspec.Index(1), Find: cmdspec.Range(0, 1, 0)},
				{Flags: cmdspec.RO | cmdspec.Access, Begin: cmdspec.Index(2), Find: cmdspec.Range(0, 1, 0)},
			},
			Run: func(c *Ctx) { georadiusGeneric(c, 2, geoSearch|geoSearchStore) }},
		&Command{Name: "georadius", Arity: -6, Flags: []string{"write", "denyoom"}, ACL: geoWriteACL,
			Group: "geo", Since: "3.2.0",
			Summary:    "Query a sorted set representing a geospatial index to fetch members matching a given maximum distance from a point",
			Complexity: geoRadiusComplexity,
			DocFlags:   []string{"deprecated"}, DeprecatedSince: "6.2.0",
			ReplacedBy: "`GEOSEARCH` and `GEOSEARCHSTORE` with the `BYRADIUS` argument",
			Syntax:     "key longitude latitude radius <M | KM | FT | MI> " + geoRadiusOpts + " [STORE key] [STOREDIST key]",
			KeySpecs:   geoRadiusSpecs(6), Keys: georadiusKeys,
			Run: func(c *Ctx) { georadiusGeneric(c, 1, geoFromCoords) }},
		&Command{Name: "georadius_ro", Arity: -6, Flags: []string{"readonly"}, ACL: geoReadACL,
			Group: "geo", Since: "3.2.10",
			Summary:    "A read-only variant for GEORADIUS",
			Complexity: geoRadiusComplexity,
			DocFlags:   []string{"deprecated"}, DeprecatedSince: "6.2.0",
			ReplacedBy: "`GEOSEARCH` with the `BYRADIUS` argument",
			Syntax:     "key longitude latitude radius <M | KM | FT | MI> " + geoRadiusOpts,
			KeySpecs:   geoReadSpec,
			Run:        func(c *Ctx) { georadiusGeneric(c, 1, geoFromCoords|geoNoStore) }},
		&Command{Name: "georadiusbymember", Arity: -5, Flags: []string{"write", "denyoom"}, ACL: geoWriteACL,
			Group: "geo", Since: "3.2.0",
			Summary:    "Query a sorted set representing a geospatial index to fetch members matching a given maximum distance from a member",
			Complexity: geoRadiusComplexity,
			DocFlags:   []string{"deprecated"}, DeprecatedSince: "6.2.0",
			ReplacedBy: "`GEOSEARCH` and `GEOSEARCHSTORE` with the `BYRADIUS` and `FROMMEMBER` arguments",
			Syntax:     "key member radius <M | KM | FT | MI> " + geoRadiusOpts + " [STORE key] [STOREDIST key]",
			KeySpecs:   geoRadiusSpecs(5), Keys: georadiusKeys,
			Run: func(c *Ctx) { georadiusGeneric(c, 1, geoFromMember) }},
		&Command{Name: "georadiusbymember_ro", Arity: -5, Flags: []string{"readonly"}, ACL: geoReadACL,
			Group: "geo", Since: "3.2.10",
			Summary:    "A read-only variant for GEORADIUSBYMEMBER",
			Complexity: geoRadiusComplexity,
			DocFlags:   []string{"deprecated"}, DeprecatedSince: "6.2.0",
			ReplacedBy: "`GEOSEARCH` with the `BYRADIUS` and `FROMMEMBER` arguments",
			Syntax:     "key member radius <M | KM | FT | MI> " + geoRadiusOpts,
			KeySpecs:   geoReadSpec,
			Run:        func(c *Ctx) { georadiusGeneric(c, 1, geoFromMember|geoNoStore) }},
	)
}

// georadiusKeys finds GEORADIUS's and GEORADIUSBYMEMBER's keys: the source, and from argument
// 5 on the key after each STORE or STOREDIST (Redis's georadiusGetKeys keeps the last, which
// the command writes; its key specs, which COMMAND GETKEYS and ACL read, find STORE's and
// STOREDIST's both).
func georadiusKeys(args [][]byte) [][]byte {
	if len(args) < 2 {
		return nil
	}
	keys := [][]byte{args[1]}
	for i := 5; i < len(args); i++ {
		if (EqualFold(args[i], "store") || EqualFold(args[i], "storedist")) && i+1 < len(args) {
			keys = append(keys, args[i+1])
			i++
		}
	}
	return keys
}

// ---- arguments ----

// geoParseLonLat parses a longitude and a latitude at args i and i+1, replying Redis's errors.
func geoParseLonLat(c *Ctx, i int) (lon, lat float64, ok bool) {
	if lon, ok = zsetParseScore(c.Args[i]); !ok {
		c.Error(errNotFloat)
		return 0, 0, false
	}
	if lat, ok = zsetParseScore(c.Args[i+1]); !ok {
		c.Error(errNotFloat)
		return 0, 0, false
	}
	if !datatype.GeoValid(lon, lat) {
		c.Error("ERR invalid longitude,latitude pair " + geoCFloat(lon) + "," + geoCFloat(lat))
		return 0, 0, false
	}
	return lon, lat, true
}

// geoCFloat formats f as C's "%f".
func geoCFloat(f float64) string {
	switch {
	case math.IsInf(f, 1):
		return "inf"
	case math.IsInf(f, -1):
		return "-inf"
	}
	return strconv.FormatFloat(f, 'f', 6, 64)
}

const errGeoUnit = "ERR unsupported unit provided. please use M, KM, FT, MI"

// geoUnit returns the metres in a unit; ok is false (nothing replied) for an unknown one.
func geoUnit(u []byte) (float64, bool) {
	switch {
	case EqualFold(u, "m"):
		return 1, true
	case EqualFold(u, "km"):
		return 1000, true
	case EqualFold(u, "ft"):
		return 0.3048, true
	case EqualFold(u, "mi"):
		return 1609.34, true
	}
	return 0, false
}

// geoParseLength parses a non-negative number at args i, replying need (Redis's "need numeric
// radius"), or what as the negative error.
func geoParseLength(c *Ctx, i int, need string) (float64, bool) {
	v, ok := zsetParseScore(c.Args[i])
	if !ok {
		c.Error("ERR " + need)
		return 0, false
	}
	return v, true
}

// geoParseRadius parses "radius unit" at args i into s.
func geoParseRadius(c *Ctx, i int, s *datatype.GeoShape) bool {
	r, ok := geoParseLength(c, i, "need numeric radius")
	if !ok {
		return false
	}
	if r < 0 {
		c.Error("ERR radius cannot be negative")
		return false
	}
	conv, ok := geoUnit(c.Args[i+1])
	if !ok {
		c.Error(errGeoUnit)
		return false
	}
	s.Box, s.Radius, s.Conv = false, r, conv
	return true
}

// geoParseBox parses "width height unit" at args i into s.
func geoParseBox(c *Ctx, i int, s *datatype.GeoShape) bool {
	w, ok := geoParseLength(c, i, "need numeric width")
	if !ok {
		return false
	}
	h, ok := geoParseLength(c, i+1, "need numeric height")
	if !ok {
		return false
	}
	if h < 0 || w < 0 {
		c.Error("ERR height or width cannot be negative")
		return false
	}
	conv, ok := geoUnit(c.Args[i+2])
	if !ok {
		c.Error(errGeoUnit)
		return false
	}
	s.Box, s.Width, s.Height, s.Conv = true, w, h, conv
	return true
}

// ---- replies ----

// geoAppendDistance appends d with four decimals as Redis's fixedpoint_d2string: rounded
// half to even (llrint) at the fourth decimal.
func geoAppendDistance(dst []byte, d float64) []byte {
	v := math.RoundToEven(d * 10000)
	var u uint64
	if v >= -9223372036854775808.0 && v < 9223372036854775808.0 {
		n := int64(v)
		if n < 0 {
			dst = append(dst, '-')
			u = uint64(-n)
		} else {
			u = uint64(n)
		}
	} else { // llrint's out-of-range result, LLONG_MIN
		dst = append(dst, '-')
		u = 1 << 63
	}
	dst = strconv.AppendUint(dst, u/10000, 10)
	dst = append(dst, '.')
	frac := u % 10000
	for p := uint64(1000); p > 0; p /= 10 {
		dst = append(dst, byte('0'+frac/p%10))
	}
	return dst
}

func geoReplyDistance(c *Ctx, d float64) {
	var tmp [32]byte
	c.W.Bulk(geoAppendDistance(tmp[:0], d))
}

// geoAppendHuman appends f as Redis's human long double (ld2string's LD_STR_HUMAN): "%.17Lf"
// with the trailing zeros and point removed.
func geoAppendHuman(dst []byte, f float64) []byte {
	start := len(dst)
	dst = strconv.AppendFloat(dst, f, 'f', 17, 64)
	for dst[len(dst)-1] == '0' {
		dst = dst[:len(dst)-1]
	}
	if dst[len(dst)-1] == '.' {
		dst = dst[:len(dst)-1]
	}
	if string(dst[start:]) == "-0" {
		dst = append(dst[:start], '0')
	}
	return dst
}

// geoReplyCoord writes a coordinate as Redis's addReplyHumanLongDouble: a bulk string in
// RESP2, a double in RESP3.
func geoReplyCoord(c *Ctx, f float64) {
	var tmp [40]byte
	s := geoAppendHuman(tmp[:0], f)
	if c.W.RESP3 {
		c.W.Buf = append(c.W.Buf, ',')
		c.W.Buf = append(c.W.Buf, s...)
		c.W.Buf = append(c.W.Buf, '\r', '\n')
		return
	}
	c.W.Bulk(s)
}

// ---- GEOADD, GEODIST, GEOHASH, GEOPOS ----

// geoaddCmd checks its options and points, then runs ZADD with the points' scores, as Redis
// does (so ZADD's own replies, binlog record and "zadd" event are GEOADD's).
func geoaddCmd(c *Ctx) {
	var xx, nx bool
	lonIdx := 2
opts:
	for ; lonIdx < len(c.Args); lonIdx++ {
		switch a := c.Args[lonIdx]; {
		case EqualFold(a, "nx"):
			nx = true
		case EqualFold(a, "xx"):
			xx = true
		case EqualFold(a, "ch"):
		default:
			break opts
		}
	}
	if (len(c.Args)-lonIdx)%3 != 0 || (xx && nx) {
		c.Error(ErrSyntax)
		return
	}
	n := (len(c.Args) - lonIdx) / 3
	zargs := make([][]byte, 0, lonIdx+2*n)
	zargs = append(zargs, zsetZADD)
	zargs = append(zargs, c.Args[1:lonIdx]...)
	for i := 0; i < n; i++ {
		at := lonIdx + 3*i
		lon, lat, ok := geoParseLonLat(c, at)
		if !ok {
			return
		}
		score, _ := datatype.GeoEncode(lon, lat)
		zargs = append(zargs, strconv.AppendUint(nil, score, 10), c.Args[at+2])
	}
	orig := c.Args
	c.Args = zargs
	zsetAddGeneric(c, false)
	c.Args = orig
}

func geodistCmd(c *Ctx) {
	toMeter := 1.0
	if len(c.Args) == 5 {
		var ok bool
		if toMeter, ok = geoUnit(c.Args[4]); !ok {
			c.Error(errGeoUnit)
			return
		}
	} else if len(c.Args) > 5 {
		c.Error(ErrSyntax)
		return
	}
	z, ok := c.zsetLoad(c.Args[1])
	if !ok {
		return
	}
	s1, ok1 := z.Score(c.Args[2])
	s2, ok2 := z.Score(c.Args[3])
	if !ok1 || !ok2 {
		c.W.Null()
		return
	}
	lon1, lat1 := datatype.GeoDecode(s1)
	lon2, lat2 := datatype.GeoDecode(s2)
	geoReplyDistance(c, datatype.GeoDistance(lon1, lat1, lon2, lat2)/toMeter)
}

// geoMembersCmd is GEOHASH (hash) and GEOPOS: one entry per member, null for a missing one.
func geoMembersCmd(c *Ctx, hash bool) {
	z, ok := c.zsetLoad(c.Args[1])
	if !ok {
		return
	}
	c.W.ArrayLen(len(c.Args) - 2)
	for _, m := range c.Args[2:] {
		score, found := z.Score(m)
		switch {
		case !found && hash:
			c.W.Null()
		case !found:
			c.W.NullArray()
		case hash:
			var tmp [11]byte
			c.W.Bulk(datatype.GeoHashString(tmp[:0], score))
		default:
			lon, lat := datatype.GeoDecode(score)
			c.W.ArrayLen(2)
			geoReplyCoord(c, lon)
			geoReplyCoord(c, lat)
		}
	}
}

// ---- searches ----

// georadiusGeneric's kinds, as Redis's flags.
const (
	geoFromCoords  = 1 << iota // GEORADIUS: around a point
	geoFromMember              // GEORADIUSBYMEMBER: around a member
	geoNoStore                 // the _RO forms: no STORE or STOREDIST
	geoSearch                  // GEOSEARCH's arguments
	geoSearchStore             // GEOSEARCHSTORE: STOREDIST without a key
)

const (
	geoSortNone = iota
	geoSortAsc
	geoSortDesc
)

// geoPoint is a point a search found.
type geoPoint struct {
	member         []byte
	lon, lat, dist float64
	score          float64
}

// geoFind returns the points of z in shape s, visiting s's cells in Redis's order and each
// cell's members in score order (one seek per cell); with limit > 0 (ANY) it stops once it
// has that many.
func geoFind(z *datatype.ZSet, s *datatype.GeoShape, limit int) []geoPoint {
	cells := s.Cells()
	var ranges [][2]float64
	last := 0 // the last cell searched; 0 (the centre) counts as none, as in Redis
	for i, h := range cells {
		if h.Zero() {
			continue
		}
		if last != 0 && h == cells[last] { // huge areas: neighbours can be the same cell
			continue
		}
		min, max := h.ScoreRange()
		ranges = append(ranges, [2]float64{min, max})
		last = i
	}
	var pts []geoPoint
	z.ScoreRanges(ranges, func(member []byte, score float64) bool {
		if lon, lat, dist, ok := s.Within(score); ok {
			pts = append(pts, geoPoint{member: bytes.Clone(member), lon: lon, lat: lat, dist: dist, score: score})
		}
		return limit <= 0 || len(pts) < limit
	})
	return pts
}

// geoSort orders the points by distance as Redis does: all of them with glibc's qsort (a
// stable merge sort), or only the first count with Redis's pqsort when fewer are returned.
func geoSort(pts []geoPoint, count int64, desc bool) {
	if count == 0 || int64(len(pts)) <= count {
		if desc {
			sort.SliceStable(pts, func(i, j int) bool { return pts[i].dist > pts[j].dist })
		} else {
			sort.SliceStable(pts, func(i, j int) bool { return pts[i].dist < pts[j].dist })
		}
		return
	}
	cmp := func(a, b *geoPoint) int {
		r := 0
		if a.dist > b.dist {
			r = 1
		} else if a.dist < b.dist {
			r = -1
		}
		if desc {
			r = -r
		}
		return r
	}
	geoPartialSort(pts, int(count), cmp)
}

// georadiusGeneric is GEORADIUS, GEORADIUSBYMEMBER, their _RO forms, GEOSEARCH and
// GEOSEARCHSTORE, with Redis's order of checks and replies (georadiusGeneric in geo.c).
func georadiusGeneric(c *Ctx, srcIdx int, flags int) {
	var (
		z   datatype.ZSet
		ok  bool
		src = c.Args[srcIdx]
	)
	if c.Cmd != nil && c.Cmd.IsWrite() {
		z, ok = c.zsetLoadRead(src)
	} else {
		z, ok = c.zsetLoad(src)
	}
	if !ok {
		return
	}
	exists := z.Exists()

	var (
		shape     datatype.GeoShape
		base      int
		storeKey  []byte
		storeDist bool
	)
	switch {
	case flags&geoFromCoords != 0:
		base = 6
		var ok bool
		if shape.Lon, shape.Lat, ok = geoParseLonLat(c, 2); !ok {
			return
		}
		if !geoParseRadius(c, base-2, &shape) {
			return
		}
	case flags&geoFromMember != 0 && !exists:
		base = 5 // parse the options for the reply a missing key gets
	case flags&geoFromMember != 0:
		base = 5
		score, found := z.Score(c.Args[2])
		if !found {
			c.Error("ERR could not decode requested zset member")
			return
		}
		shape.Lon, shape.Lat = datatype.GeoDecode(score)
		if !geoParseRadius(c, base-2, &shape) {
			return
		}
	default: // GEOSEARCH, GEOSEARCHSTORE
		base = 2
		if flags&geoSearchStore != 0 {
			base = 3
			storeKey = c.Args[1]
		}
	}

	var (
		withDist, withHash, withCoord bool
		fromMember, fromLoc           bool
		byRadius, byBox               bool
		anyOpt                        bool
		sortBy                        = geoSortNone
		count                         int64
	)
	args := c.Args
	search := flags&geoSearch != 0
	store := flags&(geoNoStore|geoSearch) == 0
	for i := base; i < len(args); i++ {
		a, left := args[i], len(args)-i-1 // arguments after a
		switch {
		case EqualFold(a, "withdist"):
			withDist = true
		case EqualFold(a, "withhash"):
			withHash = true
		case EqualFold(a, "withcoord"):
			withCoord = true
		case EqualFold(a, "any"):
			anyOpt = true
		case EqualFold(a, "asc"):
			sortBy = geoSortAsc
		case EqualFold(a, "desc"):
			sortBy = geoSortDesc
		case EqualFold(a, "count") && left >= 1:
			n, ok := c.IntArg(i + 1)
			if !ok {
				return
			}
			if n <= 0 {
				c.Error("ERR COUNT must be > 0")
				return
			}
			count = n
			i++
		case EqualFold(a, "store") && left >= 1 && store:
			storeKey, storeDist = args[i+1], false
			i++
		case EqualFold(a, "storedist") && left >= 1 && store:
			storeKey, storeDist = args[i+1], true
			i++
		case EqualFold(a, "storedist") && search && flags&geoSearchStore != 0:
			storeDist = true
		case EqualFold(a, "frommember") && left >= 1 && search && !fromLoc:
			if exists {
				score, found := z.Score(args[i+1])
				if !found {
					c.Error("ERR could not decode requested zset member")
					return
				}
				shape.Lon, shape.Lat = datatype.GeoDecode(score)
			}
			fromMember = true
			i++
		case EqualFold(a, "fromlonlat") && left >= 2 && search && !fromMember:
			lon, lat, ok := geoParseLonLat(c, i+1)
			if !ok {
				return
			}
			shape.Lon, shape.Lat = lon, lat
			fromLoc = true
			i += 2
		case EqualFold(a, "byradius") && left >= 2 && search && !byBox:
			if !geoParseRadius(c, i+1, &shape) {
				return
			}
			byRadius = true
			i += 2
		case EqualFold(a, "bybox") && left >= 3 && search && !byRadius:
			if !geoParseBox(c, i+1, &shape) {
				return
			}
			byBox = true
			i += 3
		default:
			c.Error(ErrSyntax)
			return
		}
	}

	if storeKey != nil && (withDist || withHash || withCoord) {
		what := "STORE option in GEORADIUS"
		if flags&geoSearchStore != 0 {
			what = "GEOSEARCHSTORE"
		}
		c.Error("ERR " + what + " is not compatible with WITHDIST, WITHHASH and WITHCOORD options")
		return
	}
	if search && !fromMember && !fromLoc {
		c.Error("ERR exactly one of FROMMEMBER or FROMLONLAT can be specified for " + string(args[0]))
		return
	}
	if search && !byRadius && !byBox {
		c.Error("ERR exactly one of BYRADIUS and BYBOX can be specified for " + string(args[0]))
		return
	}
	if anyOpt && count == 0 {
		c.Error("ERR the ANY argument requires COUNT argument")
		return
	}

	if !exists {
		if storeKey != nil {
			geoFinishStore(c.zsetNewWriter(storeKey), "")
		} else {
			c.W.ArrayLen(0)
		}
		return
	}
	if count != 0 && sortBy == geoSortNone && !anyOpt {
		sortBy = geoSortAsc // the nearest count points
	}
	limit := 0
	if anyOpt {
		limit = int(min(count, math.MaxInt32))
	}
	pts := geoFind(&z, &shape, limit)
	if len(pts) == 0 && storeKey == nil {
		c.W.ArrayLen(0)
		return
	}
	if sortBy != geoSortNone {
		geoSort(pts, count, sortBy == geoSortDesc)
	}
	if count != 0 && int64(len(pts)) > count {
		pts = pts[:count]
	}

	if storeKey == nil {
		opts := 0
		for _, on := range []bool{withDist, withHash, withCoord} {
			if on {
				opts++
			}
		}
		c.W.ArrayLen(len(pts))
		for i := range pts {
			p := &pts[i]
			if opts > 0 {
				c.W.ArrayLen(opts + 1)
			}
			c.W.Bulk(p.member)
			if withDist {
				geoReplyDistance(c, p.dist/shape.Conv)
			}
			if withHash {
				c.W.Int(datatype.GeoScoreInt(p.score))
			}
			if withCoord {
				c.W.ArrayLen(2)
				geoReplyCoord(c, p.lon)
				geoReplyCoord(c, p.lat)
			}
		}
		return
	}
	w := c.zsetNewWriter(storeKey)
	for i := range pts {
		p := &pts[i]
		score := p.score
		if storeDist {
			score = p.dist / shape.Conv
		}
		if _, dup := w.z.Score(p.member); dup { // a cell searched twice: keep one
			continue
		}
		w.add(p.member, score)
	}
	event := "georadiusstore"
	if search {
		event = "geosearchstore"
	}
	geoFinishStore(w, event)
}

// geoFinishStore replaces the destination with the points stored, or deletes it when there
// are none, and replies how many were stored: zsetWriter.finish with the event before the
// reply, where Redis's georadiusGeneric notifies.
func geoFinishStore(w *zsetWriter, event string) {
	c, key := w.c, w.z.Key()
	if w.z.Len() == 0 {
		if w.z.Save() {
			c.Tx.Log(c.DB, key, zsetDEL, key)
			c.notify(pubsub.Generic, "del", key)
		}
		c.W.Int(0)
		return
	}
	w.z.Save()
	w.flush()
	c.notify(pubsub.ZSet, event, key)
	c.W.Int(w.z.Len())
}
