package script

import (
	"testing"
	"time"
)

// The registry of running scripts: oldest first, empty once they finished.
func TestRunningScripts_Registry(t *testing.T) {
	a := Start(nil, "test", nil, false)
	time.Sleep(time.Millisecond) // distinct start times; the order is what is checked
	b := Start(nil, "test", nil, false)
	if Oldest(nil) != a {
		t.Fatal("oldest is not the first started")
	}
	a.Finish()
	if Oldest(nil) != b {
		t.Fatal("oldest after the first finished")
	}
	b.Finish()
	if Oldest(nil) != nil {
		t.Fatal("registry not empty")
	}
	select {
	case <-b.ctx.Done():
	default:
		t.Fatal("finish did not release the script's context")
	}
}
