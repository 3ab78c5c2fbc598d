package cmds_test

import "testing"

// LATENCY's help, errors and empty-monitor replies, and its parameters' CONFIG SET errors,
// byte for byte as redis-server 7.0.15 answered them (testdata/latency).
func TestLatency_ErrorsMatchRedis(t *testing.T) { replayRecorded(t, "testdata/latency") }
