package executor

import (
	"testing"
	"time"
)

// A frame hands the end of its last loop command out once, as the next command's clock; after
// that, or after ResetClock, TakeClock reads the clock.
func TestFrame_TakeClock_EndOnceThenNow(t *testing.T) {
	var f Frame
	old := time.Now().Add(-time.Hour)
	f.ended = old
	if got := f.TakeClock(); !got.Equal(old) {
		t.Fatalf("first TakeClock %v, want the end %v", got, old)
	}
	if got := f.TakeClock(); got.Before(old.Add(time.Minute)) {
		t.Fatalf("second TakeClock %v: the end again", got)
	}
	f.ended = old
	f.ResetClock()
	if got := f.TakeClock(); got.Before(old.Add(time.Minute)) {
		t.Fatalf("TakeClock after ResetClock %v: the stale end", got)
	}
}
