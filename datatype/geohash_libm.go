package datatype

// The distance and the bounding box use sin, cos and asin, where Go's math package and the C
// library Redis links may differ in the last bit; a distance Redis stores (STOREDIST) or
// compares with a radius must be the same double. So these few lines run in C, over the same
// libm as redis-server, one call per distance.

/*
#cgo LDFLAGS: -lm
#include <math.h>

static double shardis_geo_distance(double lon1d, double lat1d, double lon2d, double lat2d,
                                   double dr, double radius) {
	double lon1r = lon1d * dr, lon2r = lon2d * dr;
	double v = sin((lon2r - lon1r) / 2);
	if (v == 0.0)
		return radius * fabs(lat2d * dr - lat1d * dr);
	double lat1r = lat1d * dr, lat2r = lat2d * dr;
	double u = sin((lat2r - lat1r) / 2);
	double a = u * u + cos(lat1r) * cos(lat2r) * v * v;
	return 2.0 * radius * asin(sqrt(a));
}

static double shardis_cos(double x) { return cos(x); }
*/
import "C"

// GeoDistance is the haversine distance in metres between two points, as Redis's
// geohashGetDistance computes it (the same meridian: the distance between the latitudes).
func GeoDistance(lon1, lat1, lon2, lat2 float64) float64 {
	return float64(C.shardis_geo_distance(C.double(lon1), C.double(lat1), C.double(lon2),
		C.double(lat2), C.double(geoDegRad), C.double(geoEarthRadius)))
}

func geoCos(x float64) float64 { return float64(C.shardis_cos(C.double(x))) }
