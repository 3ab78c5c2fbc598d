package cmds_test

import "testing"

// Consumer groups' replies and errors, recorded from redis-server 7.0.15
// (testdata/streamgroup: explicit ids, and no reply that shows a time).
func TestStreamGroup_Recorded_MatchesRedis(t *testing.T) {
	t.Parallel()
	replayRecorded(t, "testdata/streamgroup")
}

// The same in RESP3, where XREADGROUP answers a map of streams (testdata/streamgroup3).
func TestStreamGroup_RecordedRESP3_MatchesRedis(t *testing.T) {
	t.Parallel()
	replayRecordedRESP3(t, "testdata/streamgroup3")
}
