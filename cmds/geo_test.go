package cmds_test

import "testing"

// TestGeo_Commands_MatchRedis replays testdata/geo: every geo command's replies and errors
// (edge points, scores GEOADD did not make, stores into other shards, MULTI, scripts), byte
// for byte as redis-server 7.0.15 answered them.
func TestGeo_Commands_MatchRedis(t *testing.T) { replayRecorded(t, "testdata/geo") }

// TestGeo_RESP3_MatchesRedis replays testdata/geo/resp3: coordinates as RESP3 doubles, and
// the keyspace events of GEOADD and the stores where Redis sends them.
func TestGeo_RESP3_MatchesRedis(t *testing.T) { replayRecordedRESP3(t, "testdata/geo/resp3") }
