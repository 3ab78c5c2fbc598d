package cmds

import (
	"sync/atomic"
	"time"
)

// cmdStats are one command's INFO commandstats counters.
type cmdStats struct {
	calls, usec, rejected, failed atomic.Int64
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

// resetStats zeroes every command's counters (CONFIG RESETSTAT).
func resetStats() {
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
}
