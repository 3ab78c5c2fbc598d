package pubsub

import (
	"testing"
	"time"
)

// The soft limit, as Redis's: the first time over it starts the clock; over it for longer
// than SoftFor breaks it; back under it resets the clock. The hard limit breaks at once.
func TestLimit_Over_SoftLimitNeedsTime(t *testing.T) {
	l := Limit{Hard: 100, Soft: 50, SoftFor: 10 * time.Second}
	t0 := time.Unix(1000, 0)
	if over, _ := l.over(101, t0, time.Time{}); !over {
		t.Fatal("past the hard limit: not over")
	}
	over, since := l.over(60, t0, time.Time{})
	if over || !since.Equal(t0) {
		t.Fatalf("first time over the soft limit: over %v, clock %v", over, since)
	}
	if over, _ := l.over(60, t0.Add(10*time.Second), since); over {
		t.Fatal("over the soft limit for exactly SoftFor: broken")
	}
	if over, _ := l.over(60, t0.Add(11*time.Second), since); !over {
		t.Fatal("over the soft limit for longer than SoftFor: not broken")
	}
	if over, since := l.over(40, t0.Add(11*time.Second), since); over || !since.IsZero() {
		t.Fatal("back under the soft limit: the clock did not reset")
	}
	if over, _ := (Limit{}).over(1<<40, t0, t0.Add(-time.Hour)); over {
		t.Fatal("no limits: over")
	}
}
