package rdb

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestRead_RedisTestAssets_SameAsRedisLoads reads the RDB files of Redis's own test suite
// (tests/assets/*.rdb: old encodings Redis 7.0 still loads but no longer writes) and
// compares them with what redis-server 7.0.15 holds after loading each. Redis's files are
// not part of this repository: RDB_REDIS_ASSETS=/path/to/redis/tests/assets enables it.
func TestRead_RedisTestAssets_SameAsRedisLoads(t *testing.T) {
	dir := os.Getenv("RDB_REDIS_ASSETS")
	if dir == "" {
		t.Skip("set RDB_REDIS_ASSETS to Redis's tests/assets directory")
	}
	for _, name := range []string{"encodings.rdb", "hash-zipmap.rdb", "hash-ziplist.rdb",
		"list-quicklist.rdb", "zset-ziplist.rdb", "corrupt_empty_keys.rdb", "scriptbackup.rdb"} {
		t.Run(name, func(t *testing.T) {
			file, err := os.ReadFile(filepath.Join(dir, name))
			if err != nil {
				t.Fatal(err)
			}
			loadDir := t.TempDir()
			if err := os.WriteFile(filepath.Join(loadDir, name), file, 0o644); err != nil {
				t.Fatal(err)
			}
			rc := startRedis(t, "--dir", loadDir, "--dbfilename", name)
			rec := newRecorder()
			if err := NewReader(strings.NewReader(string(file))).Read(rec); err != nil {
				t.Fatal(err)
			}
			// Redis drops keys already expired when it loads a file; the reader gives them.
			now := time.Now().UnixMilli()
			for k, lines := range rec.keys {
				for _, l := range lines {
					if ms, ok := strings.CutPrefix(l, "expire "); ok {
						if n, _ := strconv.ParseInt(ms, 10, 64); n < now {
							delete(rec.keys, k)
						}
					}
				}
			}
			dbs := []int{}
			for db := 0; db < 16; db++ {
				dbs = append(dbs, db)
			}
			compareKeys(t, rec.keys, redisContents(t, rc.Client, dbs...), nil)
			t.Logf("%d keys", len(rec.keys))
		})
	}
}
