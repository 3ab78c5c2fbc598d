package cmds_test

import "testing"

// The replies of PFADD, PFCOUNT, PFMERGE, PFDEBUG and PFSELFTEST, their errors (other types,
// strings that are not HLLs, corrupt HLLs), the cache, TTLs, MULTI and scripts, recorded from
// redis-server 7.0.15 (testdata/hll).
func TestHLL_Replies_MatchRedis(t *testing.T) { replayRecorded(t, "testdata/hll") }
