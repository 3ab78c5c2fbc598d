package binlog

import (
	"testing"
	"time"
)

func TestKeepFrom(t *testing.T) {
	var ages Ages
	ages.Note(11, 1_000_000) // records 1-10 written at 1,000 s
	ages.Note(21, 2_000_000) // records 11-20 at 2,000 s
	for _, c := range []struct {
		name       string
		first      uint64
		maxEntries int64
		maxAge     time.Duration
		want       uint64
	}{
		{"unlimited", 1, 0, 0, 1},
		{"by count", 1, 5, 0, 16},
		{"count larger than the log", 1, 50, 0, 1},
		{"by age", 1, 0, 500 * time.Second, 11},
		{"the stricter limit wins", 1, 15, 500 * time.Second, 11},
		{"already trimmed past the age cut", 12, 0, 500 * time.Second, 12},
		{"the newest record stays", 1, 0, time.Millisecond, 20},
	} {
		if got := KeepFrom(c.first, 20, c.maxEntries, c.maxAge, 2_100_000, &ages); got != c.want {
			t.Errorf("%s: KeepFrom = %d, want %d", c.name, got, c.want)
		}
	}
}
