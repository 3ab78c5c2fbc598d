package server

import "testing"

// waitBusy spins (bounded in count) until Error(id) reports the script busy.
func waitBusy(t *testing.T, b *ScriptBusy, id int) string {
	t.Helper()
	for i := 0; i < 1e7; i++ {
		if msg := b.Error(id); msg != "" {
			return msg
		}
	}
	t.Fatalf("shard %d never busy", id)
	return ""
}

func TestScriptBusy_NoScript(t *testing.T) {
	var b ScriptBusy
	if b.Running() || b.Error(0) != "" || b.Error(-1) != "" {
		t.Fatal("busy with no script")
	}
}

func TestScriptBusy_BeforeThreshold(t *testing.T) {
	var b ScriptBusy
	b.Start([]int{0, 1}, 1<<40, false) // a threshold far away: running, not busy
	if !b.Running() {
		t.Fatal("not running")
	}
	if got := b.Error(-1); got != "" {
		t.Fatalf("before the threshold: %q", got)
	}
}

// A busy script refuses only the shards it holds; another script on other shards does not
// change them.
func TestScriptBusy_PerShard(t *testing.T) {
	var b ScriptBusy
	script := []int{1, 3}
	b.Start(script, -1, false) // a threshold already passed (clamped to 1 ns)
	if got := waitBusy(t, &b, 3); got != ErrBusyScript {
		t.Fatalf("script's shard: %q", got)
	}
	if got := b.Error(1); got != ErrBusyScript {
		t.Fatalf("script's other shard: %q", got)
	}
	for _, id := range []int{0, 2, 7} {
		if got := b.Error(id); got != "" {
			t.Fatalf("shard %d not held by the script: %q", id, got)
		}
	}
	if got := b.Error(-1); got != ErrBusyScript {
		t.Fatalf("any shard: %q", got)
	}
	function := []int{5}
	b.Start(function, -1, true)
	if got := waitBusy(t, &b, 5); got != ErrBusyFunction {
		t.Fatalf("function: %q", got)
	}
	b.Stop(script)
	if got := b.Error(3); got != "" {
		t.Fatalf("after the script stopped: %q", got)
	}
	if got := b.Error(5); got != ErrBusyFunction {
		t.Fatalf("the function still runs: %q", got)
	}
	b.Stop(function)
	if b.Running() || b.Error(-1) != "" {
		t.Fatal("busy after both stopped")
	}
}
