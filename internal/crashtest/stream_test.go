package crashtest

import (
	"context"
	"fmt"
	"strings"
	"testing"
)

// TestCrash_StreamSurvivesKillNine writes streams (XADD * with trimming, `~` trims, XDEL,
// XSETID, an emptied stream) under appendfsync always, kills the server with SIGKILL, and
// checks that the restarted server has the same entries, the same last id (an XADD at or
// below it still fails), entries-added and the same `~` trimming ahead (the node records).
func TestCrash_StreamSurvivesKillNine(t *testing.T) {
	shardisBinary(t)
	dir := t.TempDir()
	flags := []string{"--appendfsync", "always", "--shards", "4"}
	ctx := context.Background()
	p, _ := startShardis(t, dir, flags...)
	c := p.client(t)
	do := func(args ...any) any {
		t.Helper()
		v, err := c.Do(ctx, args...).Result()
		if err != nil {
			t.Fatalf("%v: %v", args, err)
		}
		return v
	}
	for i := range 450 {
		do("XADD", "s", "MAXLEN", "~", "300", "*", "i", i, "pad", strings.Repeat("p", i%90))
	}
	do("XDEL", "s", do("XRANGE", "s", "-", "+", "COUNT", "1").([]any)[0].([]any)[0])
	do("XTRIM", "s", "MINID", "~", "1")
	for i := range 50 {
		do("XADD", "t", fmt.Sprintf("%d-*", 1000+i/3), "i", i)
	}
	do("XSETID", "t", "5000-0", "ENTRIESADDED", "77", "MAXDELETEDID", "4000-0")
	do("XADD", "e", "1-1", "a", "b")
	do("XDEL", "e", "1-1")

	snapshot := func() string {
		var b strings.Builder
		for _, k := range []string{"s", "t", "e"} {
			fmt.Fprintf(&b, "%s len %v range %v\n", k, do("XLEN", k), do("XRANGE", k, "-", "+"))
		}
		return b.String()
	}
	want := snapshot()
	// What a `~` trim removes depends on the node records: trim a copy now, the original
	// after the restart.
	n := do("XLEN", "s").(int64)
	do("COPY", "s", "copy")
	wantTrim := do("XTRIM", "copy", "MAXLEN", "~", n-150)
	p.kill9(t)

	p, _ = startShardis(t, dir, flags...)
	c = p.client(t)
	if got := snapshot(); got != want {
		t.Fatalf("after kill -9:\n%.2000s\nwant\n%.2000s", got, want)
	}
	if err := c.Do(ctx, "XADD", "t", "5000-0", "a", "b").Err(); err == nil || !strings.Contains(err.Error(), "equal or smaller") {
		t.Fatalf("XADD at the last id after restart: %v", err)
	}
	if v := do("XADD", "t", "5000-*", "a", "b"); v != "5000-1" {
		t.Fatalf("XADD 5000-* = %v, want 5000-1", v)
	}
	if v := do("TYPE", "e"); v != "stream" {
		t.Fatalf("emptied stream after restart: TYPE %v", v)
	}
	if got := do("XTRIM", "s", "MAXLEN", "~", n-150); got != wantTrim || got == int64(0) {
		t.Fatalf("XTRIM MAXLEN ~ %d after restart removed %v, before %v", n-150, got, wantTrim)
	}
}
