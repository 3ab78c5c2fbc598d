package server

import (
	"testing"
	"time"
)

// waitBusy polls (bounded) until Error reports a script busy.
func waitBusy(t *testing.T, b *ScriptBusy) string {
	t.Helper()
	for i := 0; i < 30000; i++ {
		if msg := b.Error(); msg != "" {
			return msg
		}
		time.Sleep(time.Millisecond)
	}
	t.Fatal("never busy")
	return ""
}

func TestScriptBusy_NoScript_NotBusy(t *testing.T) {
	var b ScriptBusy
	if b.Error() != "" {
		t.Fatal("busy with no script")
	}
}

func TestScriptBusy_BeforeThreshold_NotBusy(t *testing.T) {
	var b ScriptBusy
	sl := b.Start(1<<40, false) // a threshold far away: running, not busy
	defer b.Stop(sl)
	if got := b.Error(); got != "" {
		t.Fatalf("before the threshold: %q", got)
	}
}

// One script past its threshold makes the server busy whatever others run; its kind picks
// the text; the server is busy until every busy script stopped.
func TestScriptBusy_ScriptsAtOnce_BusyWhileAnyIsPastThreshold(t *testing.T) {
	var b ScriptBusy
	fast := b.Start(1<<40, false)
	fn := b.Start(-1, true) // a threshold already passed (clamped to 1 ns)
	if got := waitBusy(t, &b); got != ErrBusyFunction {
		t.Fatalf("function: %q", got)
	}
	b.Stop(fn)
	if got := b.Error(); got != "" {
		t.Fatalf("after the function stopped: %q", got)
	}
	script := b.Start(-1, false)
	if got := waitBusy(t, &b); got != ErrBusyScript {
		t.Fatalf("script: %q", got)
	}
	b.Stop(script)
	b.Stop(fast)
	b.Stop(script) // a second Stop changes nothing
	if b.Error() != "" {
		t.Fatal("busy after all stopped")
	}
}
