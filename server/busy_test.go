package server

import "testing"

func TestScriptBusy(t *testing.T) {
	var b ScriptBusy
	if got := b.Error(); got != "" {
		t.Fatalf("no script: %q", got)
	}
	b.Start(1<<40, false) // a threshold far away: running, not busy
	if got := b.Error(); got != "" {
		t.Fatalf("before the threshold: %q", got)
	}
	b.Start(-1, false) // a threshold already passed (clamped to 1 ns)
	for i := 0; b.Error() == ""; i++ {
		if i == 1e6 {
			t.Fatal("never busy")
		}
	}
	if got := b.Error(); got != ErrBusyScript {
		t.Fatalf("script: %q", got)
	}
	b.Start(-1, true)
	for i := 0; b.Error() == ""; i++ {
		if i == 1e6 {
			t.Fatal("never busy")
		}
	}
	if got := b.Error(); got != ErrBusyFunction {
		t.Fatalf("function: %q", got)
	}
	b.Stop()
	if got := b.Error(); got != "" {
		t.Fatalf("after Stop: %q", got)
	}
}
