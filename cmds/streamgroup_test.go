package cmds_test

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"shardis/internal/testserver"
)

// Consumer groups' replies and errors, recorded from redis-server 7.0.15
// (testdata/streamgroup: explicit ids, and no reply that shows a time).
func TestStreamGroup_Recorded_MatchesRedis(t *testing.T) {
	t.Parallel()
	replayRecorded(t, "testdata/streamgroup")
}

// The same in RESP3, where XREADGROUP answers a map of streams (testdata/streamgroup3).
func TestStreamGroup_RecordedRESP3_MatchesRedis(t *testing.T) {
	t.Parallel()
	replayRecordedRESP3(t, "testdata/streamgroup3")
}

// streamKeysInShards returns n keys that live in n different shards of s.
func streamKeysInShards(t *testing.T, s *testserver.Server, n int) []string {
	t.Helper()
	var keys []string
	seen := map[int]bool{}
	for i := 0; len(keys) < n && i < 1000; i++ {
		k := fmt.Sprintf("jobs:%d", i)
		if sh := s.Store.ShardOf([]byte(k)); !seen[sh] {
			seen[sh] = true
			keys = append(keys, k)
		}
	}
	if len(keys) < n {
		t.Fatalf("found keys in %d shards, want %d", len(keys), n)
	}
	return keys
}

// Consumers of one group read 20,000 entries from 4 streams in 4 shards with blocking
// XREADGROUP while producers add them: every entry is delivered exactly once and, each
// acknowledged by its reader, none is left pending.
func TestStreamGroup_BlockingConsumersAcrossShards_EachEntryOnce(t *testing.T) {
	t.Parallel()
	s := testserver.Start(t)
	keys := streamKeysInShards(t, s, 4)
	admin := s.Client(t)
	for _, k := range keys {
		expect(t, admin, "OK", "XGROUP", "CREATE", k, "g", "$", "MKSTREAM")
	}
	const perStream, consumers = 5000, 6
	total := perStream * len(keys)
	var mu sync.Mutex
	seen := make(map[string]string, total) // key/id -> consumer
	var dup []string
	var wg sync.WaitGroup
	done := make(chan struct{})
	errs := make(chan error, consumers+len(keys))
	for i := range consumers {
		c := s.Client(t)
		name := fmt.Sprintf("c%d", i)
		wg.Add(1)
		go func() {
			defer wg.Done()
			ids := make([]string, len(keys))
			for i := range ids {
				ids[i] = ">"
			}
			for {
				select {
				case <-done:
					return
				default:
				}
				res, err := c.XReadGroup(testCtx, &redis.XReadGroupArgs{Group: "g", Consumer: name,
					Streams: append(append([]string(nil), keys...), ids...), Count: 50, Block: 200 * time.Millisecond}).Result()
				if errors.Is(err, redis.Nil) {
					continue
				}
				if err != nil {
					errs <- fmt.Errorf("%s: XREADGROUP: %w", name, err)
					return
				}
				for _, st := range res {
					acks := make([]string, 0, len(st.Messages))
					mu.Lock()
					for _, m := range st.Messages {
						k := st.Stream + "/" + m.ID
						if prev, ok := seen[k]; ok {
							dup = append(dup, k+" to "+prev+" and "+name)
						}
						seen[k] = name
						acks = append(acks, m.ID)
					}
					mu.Unlock()
					if n, err := c.XAck(testCtx, st.Stream, "g", acks...).Result(); err != nil || n != int64(len(acks)) {
						errs <- fmt.Errorf("%s: XACK %d ids: %d, %v", name, len(acks), n, err)
						return
					}
				}
			}
		}()
	}
	var pwg sync.WaitGroup
	for _, k := range keys {
		c := s.Client(t)
		pwg.Add(1)
		go func() {
			defer pwg.Done()
			for i := 0; i < perStream; i += 100 {
				p := c.Pipeline()
				for j := i; j < i+100; j++ {
					p.XAdd(testCtx, &redis.XAddArgs{Stream: k, Values: []any{"n", j}})
				}
				if _, err := p.Exec(testCtx); err != nil {
					errs <- fmt.Errorf("XADD %s: %w", k, err)
					return
				}
			}
		}()
	}
	pwg.Wait()
	for i := 0; ; i++ {
		mu.Lock()
		n := len(seen)
		mu.Unlock()
		if n == total {
			break
		}
		select {
		case err := <-errs:
			t.Fatal(err)
		default:
		}
		if i == 6000 {
			t.Fatalf("%d of %d entries delivered after 60s", n, total)
		}
		time.Sleep(10 * time.Millisecond)
	}
	close(done)
	wg.Wait()
	select {
	case err := <-errs:
		t.Fatal(err)
	default:
	}
	if len(dup) > 0 {
		t.Fatalf("%d entries delivered twice, first %s", len(dup), dup[0])
	}
	for _, k := range keys {
		v, err := admin.Do(testCtx, "XPENDING", k, "g").Slice()
		if err != nil || v[0] != int64(0) {
			t.Errorf("XPENDING %s g = %v, %v: want nothing pending", k, v, err)
		}
		info, err := admin.XInfoGroups(testCtx, k).Result()
		if err != nil || len(info) != 1 || info[0].Lag != 0 || info[0].EntriesRead != perStream {
			t.Errorf("XINFO GROUPS %s = %+v, %v: want entries-read %d, lag 0", k, info, err, perStream)
		}
	}
}

// A blocked XREADGROUP is answered Redis's error when its stream is deleted or its group
// destroyed, nil at its timeout, UNBLOCKED by CLIENT UNBLOCK … ERROR, and in MULTI it does not
// block.
func TestStreamGroup_BlockedReader_WokenAsRedisWakesIt(t *testing.T) {
	t.Parallel()
	s := testserver.Start(t)
	admin := s.Client(t)
	for _, k := range []string{"a", "b", "c", "d"} {
		expect(t, admin, "OK", "XGROUP", "CREATE", k, "g", "$", "MKSTREAM")
	}
	type result struct {
		v   any
		err error
	}
	block := func(key, timeout string) (*redis.Client, chan result) {
		c := s.Client(t)
		ch := make(chan result, 1)
		go func() {
			v, err := c.Do(testCtx, "XREADGROUP", "GROUP", "g", "alice", "BLOCK", timeout, "STREAMS", key, ">").Result()
			ch <- result{v, err}
		}()
		return c, ch
	}
	waitBlocked := func(n int) {
		t.Helper()
		for i := 0; ; i++ {
			if w, _ := s.Store.Blocked(); w == n {
				return
			}
			if i == 3000 {
				t.Fatalf("%d clients never blocked", n)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	get := func(ch chan result) result {
		t.Helper()
		select {
		case r := <-ch:
			return r
		case <-time.After(30 * time.Second):
			t.Fatal("the blocked client was never answered")
		}
		return result{}
	}
	_, ra := block("a", "0")
	_, rb := block("b", "0")
	_, rc := block("c", "0")
	_, rd := block("d", "100")
	waitBlocked(4)
	expect(t, admin, int64(1), "DEL", "a")
	if r := get(ra); r.err == nil || r.err.Error() != "UNBLOCKED the stream key no longer exists" {
		t.Errorf("deleted stream: %v %v", r.v, r.err)
	}
	expect(t, admin, int64(1), "XGROUP", "DESTROY", "b", "g")
	if r := get(rb); r.err == nil || r.err.Error() != "NOGROUP the consumer group this client was blocked on no longer exists" {
		t.Errorf("destroyed group: %v %v", r.v, r.err)
	}
	if r := get(rd); !errors.Is(r.err, redis.Nil) {
		t.Errorf("timeout: %v %v, want nil", r.v, r.err)
	}
	ids, _ := admin.Do(testCtx, "CLIENT", "LIST").Text()
	var cid string
	for _, line := range strings.Split(ids, "\n") {
		if strings.Contains(line, "cmd=xreadgroup") && strings.Contains(line, " flags=b ") {
			cid = strings.TrimPrefix(strings.Fields(line)[0], "id=")
		}
	}
	expect(t, admin, int64(1), "CLIENT", "UNBLOCK", cid, "ERROR")
	if r := get(rc); r.err == nil || r.err.Error() != "UNBLOCKED client unblocked via CLIENT UNBLOCK" {
		t.Errorf("CLIENT UNBLOCK: %v %v", r.v, r.err)
	}
	// An XADD that is not beyond the group's last id (XGROUP SETID ahead) serves nobody.
	expect(t, admin, "OK", "XGROUP", "SETID", "d", "g", "100-0")
	_, rd2 := block("d", "0")
	waitBlocked(1)
	expect(t, admin, "50-0", "XADD", "d", "50-0", "f", "v")
	expect(t, admin, "150-0", "XADD", "d", "150-0", "f", "v")
	if r := get(rd2); r.err != nil || fmt.Sprint(r.v) != "[[d [[150-0 [f v]]]]]" {
		t.Errorf("served: %v %v", r.v, r.err)
	}
}

// MEMORY USAGE of a stream counts its consumer groups: a group with 1,000 pending entries adds
// at least their ids twice over (the PEL and its owner's index).
func TestStreamGroup_MemoryUsage_CountsPEL(t *testing.T) {
	t.Parallel()
	s := testserver.Start(t)
	c := s.Client(t)
	p := c.Pipeline()
	for i := 1; i <= 1000; i++ {
		p.XAdd(testCtx, &redis.XAddArgs{Stream: "s", ID: fmt.Sprintf("%d-1", i), Values: []any{"f", "v"}})
	}
	if _, err := p.Exec(testCtx); err != nil {
		t.Fatal(err)
	}
	before, err := c.MemoryUsage(testCtx, "s", 0).Result()
	if err != nil {
		t.Fatal(err)
	}
	expect(t, c, "OK", "XGROUP", "CREATE", "s", "g", "0")
	if err := c.XReadGroup(testCtx, &redis.XReadGroupArgs{Group: "g", Consumer: "alice", Streams: []string{"s", ">"}}).Err(); err != nil {
		t.Fatal(err)
	}
	after, err := c.MemoryUsage(testCtx, "s", 0).Result()
	if err != nil {
		t.Fatal(err)
	}
	if after-before < 1000*2*16 || after-before > 1000*1000 {
		t.Fatalf("MEMORY USAGE %d before the group, %d after: want about 1000 pending entries more", before, after)
	}
}

// FLUSHALL, FLUSHDB and SWAPDB that take a stream away answer its blocked XREADGROUP with
// Redis's UNBLOCKED error (scanDatabaseForDeletedStreams); a list waiter stays.
func TestStreamGroup_BlockedReader_WokenByFlushAndSwap(t *testing.T) {
	t.Parallel()
	s := testserver.Start(t)
	admin := s.Client(t)
	for _, tc := range []struct{ name, cmd string }{{"flushdb", "FLUSHDB"}, {"flushall", "FLUSHALL"}, {"swapdb", "SWAPDB"}} {
		expect(t, admin, "OK", "XGROUP", "CREATE", "s", "g", "$", "MKSTREAM")
		c := s.Client(t)
		done := make(chan error, 1)
		go func() {
			done <- c.Do(testCtx, "XREADGROUP", "GROUP", "g", "alice", "BLOCK", "0", "STREAMS", "s", ">").Err()
		}()
		for i := 0; ; i++ {
			if w, _ := s.Store.Blocked(); w == 1 {
				break
			}
			if i == 3000 {
				t.Fatalf("%s: the reader never blocked", tc.name)
			}
			time.Sleep(10 * time.Millisecond)
		}
		args := []any{tc.cmd}
		if tc.cmd == "SWAPDB" {
			args = []any{"SWAPDB", "0", "1"}
		}
		expect(t, admin, "OK", args...)
		select {
		case err := <-done:
			if err == nil || err.Error() != "UNBLOCKED the stream key no longer exists" {
				t.Errorf("%s: %v, want UNBLOCKED the stream key no longer exists", tc.name, err)
			}
		case <-time.After(30 * time.Second):
			t.Fatalf("%s: the blocked reader was never answered", tc.name)
		}
		expect(t, admin, "OK", "FLUSHALL")
	}
}
