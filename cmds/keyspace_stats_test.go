package cmds_test

import (
	"strings"
	"testing"

	"shardis/internal/testserver"
)

// Read commands count keyspace hits and misses in INFO stats, as Redis does; writes do not.
func TestInfo_KeyspaceHitsAndMisses(t *testing.T) {
	s := testserver.Start(t)
	c := s.Client(t)
	stat := func(name string) string {
		info, err := c.Info(testCtx, "stats").Result()
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(info, "\r\n") {
			if v, ok := strings.CutPrefix(line, name+":"); ok {
				return v
			}
		}
		t.Fatalf("no %s in INFO stats", name)
		return ""
	}
	expectNil(t, c, "GET", "missing")
	expect(t, c, "OK", "SET", "k", "v")
	expect(t, c, "v", "GET", "k")
	expect(t, c, []any{"v", nil}, "MGET", "k", "nope")
	expect(t, c, "OK", "SET", "k", "w") // a write looks the key up too, but does not count
	if hits, misses := stat("keyspace_hits"), stat("keyspace_misses"); hits != "2" || misses != "2" {
		t.Fatalf("keyspace_hits %s, keyspace_misses %s; want 2 and 2", hits, misses)
	}
}
