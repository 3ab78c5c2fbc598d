package cmds

import (
	"sync/atomic"
	"time"

	"shardis/latency"
)

// cmdStats are one command's INFO commandstats counters.
type cmdStats struct {
	calls, usec, rejected, failed atomic.Int64
	// hist is the latency histogram (LATENCY HISTOGRAM, INFO latencystats), made by the
	// command's first tracked call, as Redis allocates it; dropped by CONFIG RESETSTAT.
	hist atomic.Pointer[latency.Histogram]
}

// Record counts one call of cmd that took d; failed when it replied with an error.
func (cmd *Command) Record(d time.Duration, failed bool) {
	if cmd.stats == nil { // not registered (tests)
		return
	}
	cmd.stats.calls.Add(1)
	cmd.stats.usec.Add(d.Microseconds())
	if failed {
		cmd.stats.failed.Add(1)
	}
}

// RecordLatency adds d to the command's latency histogram, in whole microseconds as Redis
// measures it.
func (cmd *Command) RecordLatency(d time.Duration) {
	st := cmd.stats
	if st == nil {
		return
	}
	h := st.hist.Load()
	if h == nil {
		st.hist.CompareAndSwap(nil, new(latency.Histogram))
		h = st.hist.Load()
	}
	h.Record(d.Microseconds() * 1000)
}

// Latency returns the command's latency histogram, nil before its first tracked call.
func (cmd *Command) Latency() *latency.Histogram {
	if cmd.stats == nil {
		return nil
	}
	return cmd.stats.hist.Load()
}

// Stats returns the command's INFO commandstats counters.
func (cmd *Command) Stats() (calls, usec, rejected, failed int64) {
	st := cmd.stats
	if st == nil {
		return 0, 0, 0, 0
	}
	return st.calls.Load(), st.usec.Load(), st.rejected.Load(), st.failed.Load()
}

// Reject counts a call refused before it ran (arity, auth, a queue-time error).
func (cmd *Command) Reject() {
	if cmd.stats != nil {
		cmd.stats.rejected.Add(1)
	}
}

// ResetStats zeroes every command's counters (CONFIG RESETSTAT).
func ResetStats() {
	for _, cmd := range table {
		cmd.stats.reset()
		for _, sub := range cmd.Subs {
			sub.stats.reset()
		}
	}
}

func (c *cmdStats) reset() {
	c.calls.Store(0)
	c.usec.Store(0)
	c.rejected.Store(0)
	c.failed.Store(0)
	c.hist.Store(nil)
}
