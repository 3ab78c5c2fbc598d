package binlog

import (
	"context"
	"time"
)

// Trimmer is what the retention worker trims: a shard, which does the trimming in its own
// goroutine so it never races the writes that append records.
type Trimmer interface {
	// TrimBinlog deletes the records older than keep allows and returns how many it deleted.
	TrimBinlog(maxEntries int64, maxAge time.Duration) (int, error)
}

// Limits returns the current retention limits; it is called at every tick so CONFIG SET
// takes effect without a restart. Zero means unlimited.
type Limits func() (maxEntries int64, maxAge time.Duration)

// RunRetention trims t once per interval until ctx is done.
func RunRetention(ctx context.Context, t Trimmer, interval time.Duration, limits Limits) {
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			maxEntries, maxAge := limits()
			if maxEntries == 0 && maxAge == 0 {
				continue
			}
			_, _ = t.TrimBinlog(maxEntries, maxAge)
		}
	}
}

// KeepFrom returns the first sequence to keep of a binlog holding the records first..last
// under the limits: at most maxEntries records, none written more than maxAge before nowMs
// (zero limits are unlimited; ages tells the records' times). The newest record always stays:
// on restart the sequence resumes after it, so sequences never repeat. A result at or below
// first means nothing goes.
func KeepFrom(first, last uint64, maxEntries int64, maxAge time.Duration, nowMs int64, ages *Ages) uint64 {
	cut := first
	if maxEntries > 0 && last-first+1 > uint64(maxEntries) {
		cut = last - uint64(maxEntries) + 1
	}
	if maxAge > 0 {
		cut = max(cut, ages.CutBefore(nowMs-maxAge.Milliseconds()))
	}
	return min(cut, last)
}
