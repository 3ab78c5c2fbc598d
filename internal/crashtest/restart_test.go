package crashtest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"shardis/codec"
	"shardis/internal/testserver"
	"shardis/shard"
	"shardis/ttl"
)

// checkStoreConsistent checks the bookkeeping a store keeps beside the data: per shard and
// database the key and expire counters equal what a scan finds, every key with an expire time
// has its TTL index entry, and no meta key hides outside the counted databases. It assumes no
// key has expired but not yet been deleted.
func checkStoreConsistent(t *testing.T, st *shard.Store) {
	t.Helper()
	var problems []string
	for id := range st.NumShards() {
		sh := st.Shard(id)
		err := st.Do(id, func(tx *shard.Tx) {
			index := map[string]bool{} // expire ms | user key
			it := tx.IterateShard(id, []byte{ttl.Prefix}, []byte{ttl.Prefix + 1}, false)
			for ; it.Valid(); it.Next() {
				if at, _, key, ok := ttl.DecodeKey(it.Key()); ok {
					index[fmt.Sprintf("%d|%s", at, key)] = true
				}
			}
			it.Close()
			raw := 0
			it = tx.IterateShard(id, []byte{codec.PrefixMeta}, []byte{codec.PrefixMeta + 1}, false)
			for ; it.Valid(); it.Next() {
				raw++
			}
			it.Close()
			var counted int64
			for db := range st.Databases() {
				var live, withExpire int64
				tx.ScanKeys(id, db, nil, func(key []byte, m *codec.Meta) bool {
					live++
					if m.Expire != 0 {
						withExpire++
						if !index[fmt.Sprintf("%d|%s", m.Expire, key)] {
							problems = append(problems, fmt.Sprintf("shard %d db %d: %q expires at %d but has no TTL index entry", id, db, key, m.Expire))
						}
					}
					return true
				})
				if live != sh.Keys(db) {
					problems = append(problems, fmt.Sprintf("shard %d db %d: %d keys on disk, counter says %d", id, db, live, sh.Keys(db)))
				}
				if withExpire != sh.Expires(db) {
					problems = append(problems, fmt.Sprintf("shard %d db %d: %d keys with expire on disk, counter says %d", id, db, withExpire, sh.Expires(db)))
				}
				counted += sh.Keys(db)
			}
			if int64(raw) != counted {
				problems = append(problems, fmt.Sprintf("shard %d: %d meta keys on disk, the databases count %d", id, raw, counted))
			}
		})
		if err != nil {
			t.Fatalf("shard %d: %v", id, err)
		}
	}
	for i, p := range problems {
		if i == 20 {
			t.Errorf("… and %d more", len(problems)-20)
			break
		}
		t.Error(p)
	}
}

// restartData is what the restart tests write: plain keys, keys with an absolute expire and keys
// with a relative one.
type restartData struct {
	n            int
	pxat         int64 // the PXAT of every i%4 == 2 key
	exFrom, exTo int64 // bounds of now+3600s when the EX keys were set
}

func (d *restartData) key(i int) string { return fmt.Sprintf("r:{%d}:%d", i%97, i) }
func (d *restartData) val(i int) string {
	return fmt.Sprintf("value-%d-%s", i, strings.Repeat("x", i%50))
}

func writeRestartData(t *testing.T, c *redis.Client, n int) *restartData {
	t.Helper()
	ctx := context.Background()
	d := &restartData{n: n, pxat: time.Now().Add(time.Hour).UnixMilli()}
	d.exFrom = time.Now().UnixMilli() + 3600_000
	pipe := c.Pipeline()
	for i := range n {
		switch i % 4 {
		case 2:
			pipe.Do(ctx, "SET", d.key(i), d.val(i), "PXAT", d.pxat)
		case 3:
			pipe.Do(ctx, "SET", d.key(i), d.val(i), "EX", 3600)
		default:
			pipe.Do(ctx, "SET", d.key(i), d.val(i))
		}
	}
	cmds, err := pipe.Exec(ctx)
	if err != nil {
		for _, cmd := range cmds {
			if cmd.Err() != nil {
				t.Fatalf("%v: %v", cmd.Args(), cmd.Err())
			}
		}
		t.Fatal(err)
	}
	d.exTo = time.Now().UnixMilli() + 3600_000
	return d
}

// checkRestartDataOnDisk checks values and exact expire times in the store.
func checkRestartDataOnDisk(t *testing.T, st *shard.Store, d *restartData) {
	t.Helper()
	type rec struct {
		val    string
		expire int64
	}
	got := map[string]rec{}
	for id := range st.NumShards() {
		if err := st.Do(id, func(tx *shard.Tx) {
			tx.ScanKeys(id, 0, nil, func(key []byte, m *codec.Meta) bool {
				got[string(key)] = rec{string(m.Value), m.Expire}
				return true
			})
		}); err != nil {
			t.Fatal(err)
		}
	}
	if len(got) != d.n {
		t.Errorf("%d keys on disk, want %d", len(got), d.n)
	}
	bad := 0
	for i := range d.n {
		r, ok := got[d.key(i)]
		var problem string
		switch {
		case !ok:
			problem = "missing"
		case r.val != d.val(i):
			problem = fmt.Sprintf("value %q", r.val)
		case i%4 == 2 && r.expire != d.pxat:
			problem = fmt.Sprintf("expire %d, want PXAT %d", r.expire, d.pxat)
		case i%4 == 3 && (r.expire < d.exFrom || r.expire > d.exTo):
			problem = fmt.Sprintf("expire %d, want EX 3600 from the write: %d..%d", r.expire, d.exFrom, d.exTo)
		case i%4 < 2 && r.expire != 0:
			problem = fmt.Sprintf("expire %d on a key set without one", r.expire)
		}
		if problem != "" {
			if bad++; bad <= 10 {
				t.Errorf("%s: %s", d.key(i), problem)
			}
		}
	}
	if bad > 10 {
		t.Errorf("… %d keys wrong in all", bad)
	}
}

// serverView is what a client sees of the restart data: values and, when the server has
// PEXPIRETIME (else PTTL), expire times.
type serverView struct {
	vals   []string
	ttls   []int64
	ttlCmd string
	at     time.Time
}

func readServerView(t *testing.T, c *redis.Client, d *restartData) *serverView {
	t.Helper()
	ctx := context.Background()
	v := &serverView{}
	for _, name := range []string{"PEXPIRETIME", "PTTL"} {
		if !isUnknownCommand(c.Do(ctx, name, d.key(0)).Err()) {
			v.ttlCmd = name
			break
		}
	}
	pipe := c.Pipeline()
	gets := make([]*redis.StringCmd, d.n)
	ttls := make([]*redis.Cmd, d.n)
	for i := range d.n {
		gets[i] = pipe.Get(ctx, d.key(i))
		if v.ttlCmd != "" {
			ttls[i] = pipe.Do(ctx, v.ttlCmd, d.key(i))
		}
	}
	v.at = time.Now()
	_, _ = pipe.Exec(ctx)
	for i := range d.n {
		s, err := gets[i].Result()
		if err != nil && err != redis.Nil {
			t.Fatalf("GET %s: %v", d.key(i), err)
		}
		v.vals = append(v.vals, s)
		if v.ttlCmd != "" {
			n, err := ttls[i].Int64()
			if err != nil {
				t.Fatalf("%s %s: %v", v.ttlCmd, d.key(i), err)
			}
			v.ttls = append(v.ttls, n)
		}
	}
	return v
}

func compareServerViews(t *testing.T, before, after *serverView, d *restartData) {
	t.Helper()
	bad := 0
	for i := range d.n {
		problem := ""
		switch {
		case after.vals[i] != before.vals[i]:
			problem = fmt.Sprintf("GET %q, was %q", after.vals[i], before.vals[i])
		case before.ttlCmd == "PEXPIRETIME" && after.ttls[i] != before.ttls[i]:
			problem = fmt.Sprintf("PEXPIRETIME %d, was %d", after.ttls[i], before.ttls[i])
		case before.ttlCmd == "PTTL":
			elapsed := after.at.Sub(before.at).Milliseconds()
			if diff := before.ttls[i] - after.ttls[i]; before.ttls[i] >= 0 && (diff < -50 || diff > elapsed+1000) ||
				before.ttls[i] < 0 && after.ttls[i] != before.ttls[i] {
				problem = fmt.Sprintf("PTTL %d, was %d %dms earlier", after.ttls[i], before.ttls[i], elapsed)
			}
		}
		if problem != "" {
			if bad++; bad <= 10 {
				t.Errorf("after restart %s: %s", d.key(i), problem)
			}
		}
	}
	if before.ttlCmd == "" {
		t.Log("neither PEXPIRETIME nor PTTL in the server yet: TTLs are checked on disk only")
	}
}

var openedIn = regexp.MustCompile(`opened in (\S+)`)

// TestRestart_SIGTERMKeepsDataAndTTLs stops a server with SIGTERM and restarts it on the same
// directory: every value and expire time is kept, the restart takes under a second, and the
// store's bookkeeping is consistent.
func TestRestart_SIGTERMKeepsDataAndTTLs(t *testing.T) {
	dir := t.TempDir()
	flags := []string{"--shards", "4"}
	p, _ := startShardis(t, dir, flags...)
	d := writeRestartData(t, p.client(t), 2000)
	before := readServerView(t, p.client(t), d)
	if code := p.stop(t, 10*time.Second); code != 0 {
		t.Fatalf("SIGTERM: exit code %d; output:\n%s", code, p.out)
	}
	if !strings.Contains(p.out.String(), "shardis stopped") {
		t.Errorf("no clean-stop line in the output:\n%s", p.out)
	}

	p, ready := startShardis(t, dir, flags...)
	open := "?"
	if m := openedIn.FindStringSubmatch(p.out.String()); m != nil {
		open = m[1]
	}
	t.Logf("restart: exec to first PONG %v (store opened in %s)", ready.Round(time.Millisecond), open)
	// How long the restart took is logged, not asserted: speed belongs in benchmarks, and a
	// busy machine makes any bound flaky.
	after := readServerView(t, p.client(t), d)
	compareServerViews(t, before, after, d)
	if code := p.stop(t, 10*time.Second); code != 0 {
		t.Fatalf("second SIGTERM: exit code %d; output:\n%s", code, p.out)
	}

	st := testserver.OpenStore(t, dir, 4)
	checkRestartDataOnDisk(t, st, d)
	checkStoreConsistent(t, st)
}

// TestRestart_ShutdownCommandLeavesCleanStore stops the server with SHUTDOWN: the process exits
// 0 and the store holds everything, with consistent bookkeeping.
func TestRestart_ShutdownCommandLeavesCleanStore(t *testing.T) {
	dir := t.TempDir()
	p, _ := startShardis(t, dir, "--shards", "4")
	c := p.client(t)
	d := writeRestartData(t, c, 800)
	err := c.Do(context.Background(), "SHUTDOWN").Err()
	if isUnknownCommand(err) {
		p.stop(t, 10*time.Second)
		t.Skip("SHUTDOWN is not in the server yet")
	}
	var rerr redis.Error
	if errors.As(err, &rerr) {
		t.Fatalf("SHUTDOWN replied %v", err)
	}
	if code := p.waitExit(t, 10*time.Second); code != 0 {
		t.Fatalf("after SHUTDOWN: exit code %d; output:\n%s", code, p.out)
	}
	st := testserver.OpenStore(t, dir, 4)
	checkRestartDataOnDisk(t, st, d)
	checkStoreConsistent(t, st)
}

// walBytes returns the size of the RocksDB write-ahead log files of data directory dir.
func walBytes(t *testing.T, dir string) int64 {
	t.Helper()
	logs, err := filepath.Glob(filepath.Join(dir, "rocksdb", "*.log"))
	if err != nil {
		t.Fatal(err)
	}
	var n int64
	for _, l := range logs {
		if fi, err := os.Stat(l); err == nil {
			n += fi.Size()
		}
	}
	return n
}

// TestRestart_GracefulStopLeavesNoLogToReplay: SIGTERM flushes the memtables, so the next
// start has no write-ahead log to replay (what made a restart after millions of keys take
// seconds); the data is all there.
func TestRestart_GracefulStopLeavesNoLogToReplay(t *testing.T) {
	dir := t.TempDir()
	// appendfsync always: every acknowledged write is in the log file, so the test can see it.
	p, _ := startShardis(t, dir, "--shards", "4", "--appendfsync", "always")
	d := writeRestartData(t, p.client(t), 2000)
	if n := walBytes(t, dir); n < 64<<10 {
		t.Fatalf("the write-ahead log holds %d bytes after 2,000 writes; expected the writes", n)
	}
	if code := p.stop(t, 30*time.Second); code != 0 {
		t.Fatalf("SIGTERM: exit code %d; output:\n%s", code, p.out)
	}
	if n := walBytes(t, dir); n > 4<<10 {
		t.Fatalf("the write-ahead log holds %d bytes after a graceful stop; want it flushed", n)
	}
	st := testserver.OpenStore(t, dir, 4)
	checkRestartDataOnDisk(t, st, d)
	checkStoreConsistent(t, st)
}
