package cmds_test

import (
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"shardis/internal/testserver"
)

// LATENCY's help, errors and empty-monitor replies, and its parameters' CONFIG SET errors,
// byte for byte as redis-server 7.0.15 answered them (testdata/latency).
func TestLatency_ErrorsMatchRedis(t *testing.T) { replayRecorded(t, "testdata/latency") }

// A command that takes at least latency-monitor-threshold is sampled as the "command" event
// (DEBUG SLEEP 0.01 takes at least 10 ms, and is not a fast command): LATENCY LATEST,
// HISTORY, GRAPH and DOCTOR show it, RESET drops it. Other commands of the test may be
// sampled too on a busy machine (the threshold is 1 ms), so only the DEBUG SLEEP's 10 ms is
// looked for, never an exact sample list.
func TestLatency_Monitor_RecordsSlowCommands(t *testing.T) {
	s := testserver.Start(t, "--enable-debug-command", "yes")
	c := s.Client(t)
	if err := c.ConfigSet(testCtx, "latency-monitor-threshold", "1").Err(); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if err := c.Do(testCtx, "DEBUG", "SLEEP", "0.01").Err(); err != nil {
			t.Fatal(err)
		}
	}
	latest, err := c.Do(testCtx, "LATENCY", "LATEST").Slice()
	if err != nil {
		t.Fatal(err)
	}
	var found bool
	for _, e := range latest {
		ev := e.([]any)
		if ev[0] != "command" {
			continue
		}
		found = true
		if at, ms, worst := ev[1].(int64), ev[2].(int64), ev[3].(int64); at < time.Now().Add(-time.Hour).Unix() || ms < 1 || worst < 10 || worst < ms {
			t.Fatalf("LATENCY LATEST command event = %v", ev)
		}
	}
	if !found {
		t.Fatalf("LATENCY LATEST has no command event: %v", latest)
	}
	history, err := c.Do(testCtx, "LATENCY", "HISTORY", "command").Slice()
	if err != nil || len(history) == 0 {
		t.Fatalf("LATENCY HISTORY command = %v, %v", history, err)
	}
	var slow bool
	for _, h := range history {
		ms := h.([]any)[1].(int64)
		if ms < 1 {
			t.Fatalf("LATENCY HISTORY sample of %d ms under the 1 ms threshold: %v", ms, history)
		}
		slow = slow || ms >= 10
	}
	if !slow {
		t.Fatalf("LATENCY HISTORY command has no sample of DEBUG SLEEP 0.01's 10 ms: %v", history)
	}
	graph, err := c.Do(testCtx, "LATENCY", "GRAPH", "command").Text()
	if err != nil || !strings.HasPrefix(graph, "command - high ") || !strings.Contains(graph, "\n"+strings.Repeat("-", 80)+"\n") {
		t.Fatalf("LATENCY GRAPH command = %q, %v", graph, err)
	}
	doctor, err := c.Do(testCtx, "LATENCY", "DOCTOR").Text()
	if err != nil || !strings.Contains(doctor, ". command: ") || !strings.Contains(doctor, "Check your Slow Log") {
		t.Fatalf("LATENCY DOCTOR = %q, %v", doctor, err)
	}
	// Off, then reset: nothing more is sampled, not even the RESET itself.
	c.ConfigSet(testCtx, "latency-monitor-threshold", "0")
	if n, err := c.Do(testCtx, "LATENCY", "RESET", "COMMAND", "nosuchevent").Int(); err != nil || n != 1 {
		t.Fatalf("LATENCY RESET COMMAND nosuchevent = %d, %v; want 1", n, err)
	}
	if h, err := c.Do(testCtx, "LATENCY", "HISTORY", "command").Slice(); err != nil || len(h) != 0 {
		t.Fatalf("LATENCY HISTORY command after RESET = %v, %v", h, err)
	}
	if err := c.Do(testCtx, "LATENCY", "GRAPH", "command").Err(); err == nil || err.Error() != "ERR No samples available for event 'command'" {
		t.Fatalf("LATENCY GRAPH command after RESET: %v", err)
	}
	c.Do(testCtx, "DEBUG", "SLEEP", "0.01")
	if h, _ := c.Do(testCtx, "LATENCY", "HISTORY", "command").Slice(); len(h) != 0 {
		t.Fatalf("LATENCY HISTORY command with the monitor off = %v", h)
	}
}

// LATENCY HISTOGRAM and INFO latencystats report the commands run, with Redis's shapes in
// RESP2 and RESP3; latency-tracking no stops the tracking, CONFIG RESETSTAT forgets it. The
// command table's statistics are the process's, so counts are compared before and after.
func TestLatency_Histogram_TracksCommands(t *testing.T) {
	s := testserver.Start(t, "--enable-debug-command", "yes")
	c := s.Client(t)
	c3 := s.Client(t, func(o *redis.Options) { o.Protocol = 3 })
	// histogram returns the RESP3 LATENCY HISTOGRAM entry of name: calls and buckets.
	histogram := func(name string) (int64, map[any]any) {
		t.Helper()
		all, err := c3.Do(testCtx, "LATENCY", "HISTOGRAM", name).Result()
		if err != nil {
			t.Fatal(err)
		}
		e, ok := all.(map[any]any)[name].(map[any]any)
		if !ok {
			return 0, nil
		}
		return e["calls"].(int64), e["histogram_usec"].(map[any]any)
	}
	setCalls, _ := histogram("set")
	for range 3 {
		c.Set(testCtx, "k", "v", 0)
	}
	c.Do(testCtx, "DEBUG", "SLEEP", "0.01")
	c.ConfigGet(testCtx, "maxclients")
	if calls, buckets := histogram("set"); calls != setCalls+3 || len(buckets) == 0 {
		t.Fatalf("LATENCY HISTOGRAM set: %d calls (%v), want %d", calls, buckets, setCalls+3)
	}
	// DEBUG SLEEP 0.01 lands in a bucket of at least 10,000 µs.
	calls, buckets := histogram("debug")
	var slow bool
	var cum int64
	for bucket, n := range buckets {
		slow = slow || bucket.(int64) >= 10000
		cum = max(cum, n.(int64))
	}
	if !slow || cum != calls {
		t.Fatalf("LATENCY HISTOGRAM debug: %d calls, buckets %v", calls, buckets)
	}
	// RESP2: a flat array of name, [calls, n, histogram_usec, [bucket, cumulative, ...]];
	// a container names its subcommands, an unknown name is skipped.
	reply := string(testserver.ExchangeUntil(t, s.Addr, []byte("LATENCY HISTOGRAM set config nosuch\r\nPING\r\n"), "+PONG\r\n"))
	if !regexp.MustCompile(`^\*\d+\r\n\$3\r\nset\r\n\*4\r\n\$5\r\ncalls\r\n:\d+\r\n\$14\r\nhistogram_usec\r\n\*\d+\r\n(:\d+\r\n)+\$10\r\nconfig\|get\r\n\*4\r\n`).MatchString(reply) {
		t.Fatalf("LATENCY HISTOGRAM set config nosuch (RESP2) = %q", reply)
	}
	info, err := c.Info(testCtx, "latencystats").Result()
	if err != nil {
		t.Fatal(err)
	}
	for _, re := range []string{`\r\nlatency_percentiles_usec_set:p50=\d+\.\d{3},p99=\d+\.\d{3},p99\.9=\d+\.\d{3}\r\n`,
		`\r\nlatency_percentiles_usec_config\|get:p50=`, `\r\nlatency_percentiles_usec_debug:p50=`} {
		if !regexp.MustCompile(re).MatchString(info) {
			t.Fatalf("INFO latencystats lacks %s:\n%s", re, info)
		}
	}
	c.ConfigSet(testCtx, "latency-tracking-info-percentiles", "0 100")
	if info := c.Info(testCtx, "latencystats").Val(); !regexp.MustCompile(`latency_percentiles_usec_set:p0=\d+\.\d{3},p100=\d+\.\d{3}\r\n`).MatchString(info) {
		t.Fatalf("INFO latencystats with percentiles 0 100:\n%s", info)
	}
	c.ConfigSet(testCtx, "latency-tracking", "no")
	setCalls, _ = histogram("set")
	c.Set(testCtx, "k", "v", 0)
	if info := c.Info(testCtx, "latencystats").Val(); strings.Contains(info, "latency_percentiles") {
		t.Fatalf("INFO latencystats with latency-tracking no:\n%s", info)
	}
	if calls, _ := histogram("set"); calls != setCalls {
		t.Fatalf("LATENCY HISTOGRAM set: %d calls after an untracked SET, want %d", calls, setCalls)
	}
	c.ConfigSet(testCtx, "latency-tracking", "yes")
	c.ConfigResetStat(testCtx)
	if calls, buckets := histogram("set"); calls != 0 || buckets != nil {
		t.Fatalf("LATENCY HISTOGRAM set after CONFIG RESETSTAT: %d calls, %v", calls, buckets)
	}
}

// INFO errorstats counts error replies by prefix, those of refused commands too, as Redis.
func TestInfo_ErrorStats(t *testing.T) {
	s := testserver.Start(t)
	c := s.Client(t)
	c.LPush(testCtx, "l", "x")
	c.Get(testCtx, "l")            // WRONGTYPE
	c.Do(testCtx, "NOSUCHCOMMAND") // ERR unknown command (refused)
	c.Do(testCtx, "GET")           // ERR wrong number of arguments (refused)
	c.Do(testCtx, "INCR", "l")     // WRONGTYPE
	c.Do(testCtx, "EVAL", "return redis.error_reply('MYERR x')", "0")
	info, err := c.Info(testCtx, "errorstats").Result()
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"errorstat_ERR:count=2\r\n", "errorstat_WRONGTYPE:count=2\r\n", "errorstat_MYERR:count=1\r\n"} {
		if !strings.Contains(info, want) {
			t.Fatalf("INFO errorstats lacks %q:\n%s", want, info)
		}
	}
	c.ConfigResetStat(testCtx)
	if info := c.Info(testCtx, "errorstats").Val(); strings.Contains(info, "errorstat_") {
		t.Fatalf("INFO errorstats after CONFIG RESETSTAT:\n%s", info)
	}
}
