package cmds_test

import (
	"fmt"
	"testing"

	"shardis/internal/testserver"
)

// TestGeo_Commands_MatchRedis replays testdata/geo: every geo command's replies and errors
// (edge points, scores GEOADD did not make, stores into other shards, MULTI, scripts), byte
// for byte as redis-server 7.0.15 answered them.
func TestGeo_Commands_MatchRedis(t *testing.T) { replayRecorded(t, "testdata/geo") }

// TestGeo_RESP3_MatchesRedis replays testdata/geo/resp3: coordinates as RESP3 doubles, and
// the keyspace events of GEOADD and the stores where Redis sends them.
func TestGeo_RESP3_MatchesRedis(t *testing.T) { replayRecordedRESP3(t, "testdata/geo/resp3") }

// TestGeo_StoreInAnotherShard_Stored stores searches into destinations held by other shards
// than the source, as ZRANGESTORE does: both shards are held, the store is the search's.
func TestGeo_StoreInAnotherShard_Stored(t *testing.T) {
	s := testserver.Start(t)
	c := s.Client(t)
	keys := keysInShards(t, s, "g", 3)
	src, dst, dst2 := keys[0], keys[1], keys[2]
	if err := c.Do(testCtx, "GEOADD", src, 13.361389, 38.115556, "Palermo", 15.087269, 37.502669, "Catania").Err(); err != nil {
		t.Fatal(err)
	}
	n, err := c.Do(testCtx, "GEOSEARCHSTORE", dst, src, "FROMMEMBER", "Palermo", "BYRADIUS", 200, "km", "STOREDIST").Int()
	if err != nil || n != 2 {
		t.Fatalf("GEOSEARCHSTORE = %d, %v", n, err)
	}
	got, err := c.Do(testCtx, "ZRANGE", dst, 0, -1, "WITHSCORES").StringSlice()
	if want := "[Palermo 0 Catania 166.27415156960032]"; err != nil || fmt.Sprint(got) != want {
		t.Errorf("stored %v, %v; want %s", got, err, want)
	}
	n, err = c.Do(testCtx, "GEORADIUS", src, 15, 37, 100, "km", "STORE", dst2).Int()
	if err != nil || n != 1 {
		t.Fatalf("GEORADIUS STORE = %d, %v", n, err)
	}
	if score, err := c.Do(testCtx, "ZSCORE", dst2, "Catania").Text(); err != nil || score != "3479447370796909" {
		t.Errorf("ZSCORE = %q, %v", score, err)
	}
	// A search that finds nothing deletes the destination, in its shard.
	if n, err := c.Do(testCtx, "GEORADIUS", src, 0, 0, 1, "km", "STORE", dst2).Int(); err != nil || n != 0 {
		t.Fatalf("empty GEORADIUS STORE = %d, %v", n, err)
	}
	if n, err := c.Exists(testCtx, dst2).Result(); err != nil || n != 0 {
		t.Errorf("EXISTS %s = %d, %v after an empty store", dst2, n, err)
	}
}
