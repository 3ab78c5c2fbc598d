package cmds_test

import (
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"

	"shardis/internal/testserver"
)

// TestCommandTable_DescriptionsMatchRedis compares what each command declares of itself in
// its literal beside the code (key specs and the key range derived from them, tips, doc
// flags, deprecation) with redis-server
// 7.0.15's COMMAND INFO and COMMAND DOCS, for every command and subcommand shardis has and
// Redis 7.0 knows: a command whose Redis counterpart has key specs must declare the same ones.
func TestCommandTable_DescriptionsMatchRedis(t *testing.T) {
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		t.Skip("redis-server is not installed")
	}
	if out, err := exec.Command(bin, "--version").Output(); err != nil || !strings.Contains(string(out), "v=7.0.") {
		t.Skipf("redis-server is not 7.0: %s", out)
	}
	port := testserver.FreePort(t)
	cmd := exec.Command(bin, "--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--save", "",
		"--appendonly", "no", "--dir", t.TempDir())
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	rc := redis.NewClient(&redis.Options{Addr: "127.0.0.1:" + strconv.Itoa(port), DisableIdentity: true,
		Protocol: 2, MaxRetries: -1})
	defer rc.Close()
	waitFor(t, func() bool { return rc.Ping(testCtx).Err() == nil })
	s := testserver.Start(t)
	sc := redis.NewClient(&redis.Options{Addr: s.Addr, DisableIdentity: true, Protocol: 2, MaxRetries: -1})
	defer sc.Close()

	names, err := sc.Do(testCtx, "COMMAND", "LIST").StringSlice()
	if err != nil {
		t.Fatal(err)
	}
	compared, withSpecs := 0, 0
	for _, name := range names {
		want := introInfo(t, rc, name)
		if want == nil {
			continue // not a Redis 7.0 command
		}
		got := introInfo(t, sc, name)
		compared++
		if len(want[8].([]any)) > 0 {
			withSpecs++
		}
		if g, w := fmt.Sprint(got[8]), fmt.Sprint(want[8]); g != w {
			t.Errorf("%s: key specs\n got  %s\n want %s", name, g, w)
		}
		if g, w := fmt.Sprint(got[3:6]), fmt.Sprint(want[3:6]); g != w { // first key, last key, step
			t.Errorf("%s: key range %s, want %s", name, g, w)
		}
		if g, w := fmt.Sprint(got[7]), fmt.Sprint(want[7]); g != w {
			t.Errorf("%s: tips %s, want %s", name, g, w)
		}
		gotDocs, wantDocs := introDocs(t, sc, name), introDocs(t, rc, name)
		for _, field := range []string{"doc_flags", "deprecated_since", "replaced_by"} {
			if g, w := fmt.Sprint(gotDocs[field]), fmt.Sprint(wantDocs[field]); g != w {
				t.Errorf("%s: %s %s, want %s", name, field, g, w)
			}
		}
	}
	t.Logf("%d of %d commands compared, %d with key specs", compared, len(names), withSpecs)
	if compared < 150 || withSpecs < 100 {
		t.Errorf("compared %d commands, %d with key specs: the table looks truncated", compared, withSpecs)
	}
}

// introInfo returns COMMAND INFO's entry for name, nil when the server does not know it.
func introInfo(t *testing.T, c *redis.Client, name string) []any {
	t.Helper()
	v, err := c.Do(testCtx, "COMMAND", "INFO", name).Slice()
	if err != nil {
		t.Fatalf("COMMAND INFO %s: %v", name, err)
	}
	if len(v) != 1 || v[0] == nil {
		return nil
	}
	return v[0].([]any)
}

// introDocs returns COMMAND DOCS's fields for name (RESP2: a flat list of pairs).
func introDocs(t *testing.T, c *redis.Client, name string) map[string]any {
	t.Helper()
	v, err := c.Do(testCtx, "COMMAND", "DOCS", name).Slice()
	if err != nil {
		t.Fatalf("COMMAND DOCS %s: %v", name, err)
	}
	out := map[string]any{}
	if len(v) != 2 {
		return out
	}
	fields := v[1].([]any)
	for i := 0; i+1 < len(fields); i += 2 {
		out[fields[i].(string)] = fields[i+1]
	}
	return out
}
