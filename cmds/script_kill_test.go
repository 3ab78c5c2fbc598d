package cmds

import (
	"testing"
	"time"
)

// The registry of running scripts: oldest first, empty once they finished.
func TestRunningScripts_Registry(t *testing.T) {
	a, _ := startScript(nil, "test", nil, false, nil)
	time.Sleep(time.Millisecond) // distinct start times; the order is what is checked
	b, ctxB := startScript(nil, "test", nil, false, nil)
	if oldestScript(nil) != a {
		t.Fatal("oldest is not the first started")
	}
	a.finish()
	if oldestScript(nil) != b {
		t.Fatal("oldest after the first finished")
	}
	b.finish()
	if oldestScript(nil) != nil {
		t.Fatal("registry not empty")
	}
	select {
	case <-ctxB.Done():
	default:
		t.Fatal("finish did not release the script's context")
	}
}
