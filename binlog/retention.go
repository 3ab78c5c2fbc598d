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
