package reactor_test

import (
	"bufio"
	"context"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"shardis/internal/testserver"
)

// A lone GET is answered in the event loop from the shard's key cache or RocksDB
// (Command.Peek). These tests pin down that it sees exactly what the shard would.

// Every GET sees at least the last write acknowledged before it was sent, with the default
// cache and with a tiny one that misses and evicts all the time (readers then fill the cache
// from RocksDB, racing the writer's commits).
func TestPeek_GetSeesEveryAcknowledgedWrite(t *testing.T) {
	for _, cache := range []string{"64mb", "2kb"} {
		t.Run("cache="+cache, func(t *testing.T) {
			t.Parallel()
			s := testserver.Start(t, "--key-cache-size", cache)
			ctx := context.Background()
			const keys, writes = 8, 1500
			var acked [keys]atomic.Int64
			var wg sync.WaitGroup
			done := make(chan struct{})
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer close(done)
				w := s.Client(t)
				for i := 1; i <= writes; i++ {
					k := i % keys
					if err := w.Set(ctx, fmt.Sprintf("k%d", k), i, 0).Err(); err != nil {
						t.Error(err)
						return
					}
					acked[k].Store(int64(i))
				}
			}()
			for r := range 3 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					c := s.Client(t)
					for n := 0; ; n++ {
						select {
						case <-done:
							return
						default:
						}
						k := (n + r) % keys
						floor := acked[k].Load()
						v, err := c.Get(ctx, fmt.Sprintf("k%d", k)).Int64()
						if err == redis.Nil && floor == 0 {
							continue
						}
						if err != nil || v < floor {
							t.Errorf("GET k%d = %d, %v after SET of %d was acknowledged", k, v, err, floor)
							return
						}
					}
				}()
			}
			wg.Wait()
		})
	}
}

// Commands pipelined behind a write see it: a GET waits for what precedes it in its batch.
func TestPeek_PipelinedGetSeesEarlierWrite(t *testing.T) {
	t.Parallel()
	s := testserver.Start(t)
	c := rtDial(t, s.Addr)
	var req []byte
	for i := range 200 {
		req = append(req, rtCommand("SET", "k", strconv.Itoa(i))...)
		req = append(req, rtCommand("GET", "k")...)
	}
	if _, err := c.Write(req); err != nil {
		t.Fatal(err)
	}
	r := bufio.NewReader(c)
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	for i := range 200 {
		for _, want := range []string{"+OK\r\n", fmt.Sprintf("$%d\r\n%d\r\n", len(strconv.Itoa(i)), i)} {
			got, err := rtReadReply(r)
			if err != nil || string(got) != want {
				t.Fatalf("reply %d = %q, %v; want %q", i, got, err, want)
			}
		}
	}
}

// A GET that finds the key's time has come leaves it to the shard, which deletes it (DBSIZE
// drops, expired_keys counts it) as Redis's lazy expiry does; SWAPDB and FLUSHDB show at once.
func TestPeek_ExpiryAndSwapAndFlushGoThroughTheShard(t *testing.T) {
	t.Parallel()
	s := testserver.Start(t, "--hz", "1")
	c := s.Client(t)
	ctx := context.Background()
	if err := c.Set(ctx, "gone", "v", 30*time.Millisecond).Err(); err != nil {
		t.Fatal(err)
	}
	if v, err := c.Get(ctx, "gone").Result(); v != "v" || err != nil {
		t.Fatalf("GET gone = %q, %v", v, err)
	}
	time.Sleep(60 * time.Millisecond)
	if err := c.Get(ctx, "gone").Err(); err != redis.Nil {
		t.Fatalf("GET of an expired key = %v, want nil", err)
	}
	if n, _ := c.DBSize(ctx).Result(); n != 0 {
		t.Fatalf("DBSIZE = %d after the expired key was read, want 0", n)
	}
	c.Set(ctx, "k", "db0", 0)
	c1 := s.Client(t, func(o *redis.Options) { o.DB = 1 })
	c1.Set(ctx, "k", "db1", 0)
	if err := c.Do(ctx, "SWAPDB", 0, 1).Err(); err != nil {
		t.Fatal(err)
	}
	if v, _ := c.Get(ctx, "k").Result(); v != "db1" {
		t.Fatalf("GET k after SWAPDB = %q, want db1", v)
	}
	c.FlushDB(ctx)
	if err := c.Get(ctx, "k").Err(); err != redis.Nil {
		t.Fatalf("GET k after FLUSHDB = %v, want nil", err)
	}
}

// Random pipelines of reads and writes over a few keys in several shards get exactly the
// replies of running them one by one: whichever way each GET is answered (in the loop before
// the batch, in the loop after it, or in its shard), it sees every earlier write of its
// pipeline and none of the later ones.
func TestPeek_RandomPipelinesMatchSequentialModel(t *testing.T) {
	t.Parallel()
	s := testserver.Start(t)
	c := rtDial(t, s.Addr)
	r := bufio.NewReader(c)
	model := map[string]string{}
	rng := rand.New(rand.NewPCG(1, 2))
	keys := []string{"a", "b", "c", "d", "e", "f", "{a}2"}
	for round := range 40 {
		var req []byte
		var want []string
		for range 1 + rng.IntN(60) {
			k := keys[rng.IntN(len(keys))]
			switch op := rng.IntN(10); {
			case op < 2: // answered by a view when it leads its batch
				req = append(req, rtCommand("EXISTS", k)...)
				if _, ok := model[k]; ok {
					want = append(want, ":1\r\n")
				} else {
					want = append(want, ":0\r\n")
				}
			case op < 6:
				req = append(req, rtCommand("GET", k)...)
				if v, ok := model[k]; ok {
					want = append(want, fmt.Sprintf("$%d\r\n%s\r\n", len(v), v))
				} else {
					want = append(want, "$-1\r\n")
				}
			case op < 8:
				v := strconv.Itoa(rng.IntN(1000))
				req = append(req, rtCommand("SET", k, v)...)
				model[k] = v
				want = append(want, "+OK\r\n")
			case op < 9:
				req = append(req, rtCommand("DEL", k)...)
				if _, ok := model[k]; ok {
					want = append(want, ":1\r\n")
				} else {
					want = append(want, ":0\r\n")
				}
				delete(model, k)
			default:
				k2 := keys[rng.IntN(len(keys))] // often in another shard: a multi-shard write
				req = append(req, rtCommand("MSET", k, "m", k2, "n")...)
				model[k], model[k2] = "m", "n"
				want = append(want, "+OK\r\n")
			}
		}
		if _, err := c.Write(req); err != nil {
			t.Fatal(err)
		}
		_ = c.SetDeadline(time.Now().Add(10 * time.Second))
		for i, w := range want {
			got, err := rtReadReply(r)
			if err != nil || string(got) != w {
				t.Fatalf("round %d reply %d = %q, %v; want %q", round, i, got, err, w)
			}
		}
	}
}

// A read command other than GET is answered in the loop by a view of its shard when nothing
// before it waits; what only the shard may do sends it there: here, HGET of a hash whose time
// has come deletes it (DBSIZE drops to 0).
func TestView_ExpiredCollectionGoesToTheShard(t *testing.T) {
	t.Parallel()
	s := testserver.Start(t, "--hz", "1")
	c := s.Client(t)
	ctx := context.Background()
	c.HSet(ctx, "h", "f", "v")
	c.PExpire(ctx, "h", 30*time.Millisecond)
	if v, err := c.HGet(ctx, "h", "f").Result(); v != "v" || err != nil {
		t.Fatalf("HGET = %q, %v", v, err)
	}
	time.Sleep(60 * time.Millisecond)
	if err := c.HGet(ctx, "h", "f").Err(); err != redis.Nil {
		t.Fatalf("HGET of an expired hash = %v, want nil", err)
	}
	if n, _ := c.DBSize(ctx).Result(); n != 0 {
		t.Fatalf("DBSIZE = %d after the expired hash was read, want 0", n)
	}
	hits := func() string {
		info, _ := c.Info(ctx, "stats").Result()
		for _, l := range strings.Split(info, "\r\n") {
			if strings.HasPrefix(l, "keyspace_hits:") {
				return l
			}
		}
		return ""
	}
	before := hits()
	c.Set(ctx, "s", "abc", 0)
	if n, _ := c.StrLen(ctx, "s").Result(); n != 3 {
		t.Fatalf("STRLEN = %d", n)
	}
	if after := hits(); after == before {
		t.Fatalf("keyspace_hits did not count a read answered in the loop (%s)", after)
	}
}

// A write that changes nothing (SADD of a member already there) is answered in the loop by a
// view of its shard, like a read: it does not wait for a script holding that shard. The script
// announces that it runs (PUBLISH), spins for 5 s and then sets "done"; the SADD sent meanwhile
// must come back while "done" is still unset. Through the shard it would wait for the script.
func TestView_NoOpSADDAnsweredWhileAScriptHoldsItsShard(t *testing.T) {
	t.Parallel()
	s := testserver.Start(t, "--busy-reply-threshold", "60000")
	ctx := context.Background()
	c := s.Client(t)
	if err := c.SAdd(ctx, "s", "m").Err(); err != nil {
		t.Fatal(err)
	}
	sub := s.Client(t).Subscribe(ctx, "started")
	defer sub.Close()
	if _, err := sub.Receive(ctx); err != nil {
		t.Fatal(err)
	}
	const script = `redis.call('PUBLISH', 'started', '1')
local t0 = redis.call('TIME')
while true do
  local t = redis.call('TIME')
  if (t[1] - t0[1]) * 1000000 + (t[2] - t0[2]) > 5000000 then break end
end
redis.call('SET', KEYS[2], '1')
return 1`
	scriptDone := make(chan error, 1)
	go func() { scriptDone <- s.Client(t).Eval(ctx, script, []string{"s", "done"}).Err() }()
	select {
	case <-sub.Channel():
	case err := <-scriptDone:
		t.Fatalf("the script ended before it announced itself: %v", err)
	case <-time.After(30 * time.Second):
		t.Fatal("the script did not start")
	}
	if n, err := c.SAdd(ctx, "s", "m").Result(); n != 0 || err != nil {
		t.Fatalf("SADD of a member already there = %d, %v", n, err)
	}
	if err := c.Get(ctx, "done").Err(); err != redis.Nil {
		t.Errorf("the no-op SADD was answered after the script that held its shard (GET done: %v)", err)
	}
	if err := <-scriptDone; err != nil {
		t.Fatal(err)
	}
	if n, err := c.SAdd(ctx, "s", "m2").Result(); n != 1 || err != nil {
		t.Fatalf("SADD of a new member = %d, %v", n, err)
	}
}

// A no-op write answered by a view does what Redis does for it: nothing beyond its reply. It
// counts no keyspace hit or miss (Redis's write lookups count none), touches no WATCH, makes
// no keyspace event and no change for the next save.
func TestView_NoOpWritesLeaveStatsWatchAndEventsAlone(t *testing.T) {
	t.Parallel()
	s := testserver.Start(t, "--notify-keyspace-events", "KA")
	ctx := context.Background()
	c := s.Client(t)
	c.SAdd(ctx, "s", "m")
	c.ZAdd(ctx, "z", redis.Z{Score: 1, Member: "m"})
	c.HSet(ctx, "h", "f", "v")
	info := func(field string) string {
		v, _ := c.Info(ctx).Result()
		for _, l := range strings.Split(v, "\r\n") {
			if strings.HasPrefix(l, field+":") {
				return l
			}
		}
		t.Fatalf("INFO has no %s", field)
		return ""
	}
	sub := s.Client(t).PSubscribe(ctx, "__keyspace@0__:*")
	defer sub.Close()
	if _, err := sub.Receive(ctx); err != nil {
		t.Fatal(err)
	}
	noops := []struct {
		key  string
		args []any
		want int64
	}{
		{"s", []any{"sadd", "s", "m"}, 0},
		{"s", []any{"srem", "s", "absent"}, 0},
		{"z", []any{"zadd", "z", "1", "m"}, 0},
		{"z", []any{"zadd", "z", "gt", "ch", "0", "m"}, 0},
		{"z", []any{"zrem", "z", "absent"}, 0},
		{"h", []any{"hsetnx", "h", "f", "other"}, 0},
		{"h", []any{"hdel", "h", "absent"}, 0},
		{"missing", []any{"srem", "missing", "m"}, 0},
		{"missing", []any{"zadd", "missing", "xx", "1", "m"}, 0},
	}
	for _, op := range noops {
		hits, misses, changes := info("keyspace_hits"), info("keyspace_misses"), info("rdb_changes_since_last_save")
		w := s.Client(t)
		if err := w.Watch(ctx, func(tx *redis.Tx) error {
			if n, err := c.Do(ctx, op.args...).Int64(); n != op.want || err != nil {
				t.Errorf("%v = %d, %v; want %d", op.args, n, err, op.want)
			}
			_, err := tx.TxPipelined(ctx, func(p redis.Pipeliner) error {
				p.Ping(ctx)
				return nil
			})
			return err
		}, op.key); err != nil {
			t.Errorf("EXEC after %v under WATCH: %v; want it to run", op.args, err)
		}
		w.Close()
		if h, m, ch := info("keyspace_hits"), info("keyspace_misses"), info("rdb_changes_since_last_save"); h != hits || m != misses || ch != changes {
			t.Errorf("%v moved the stats: %s %s %s, before %s %s %s", op.args, h, m, ch, hits, misses, changes)
		}
	}
	c.Set(ctx, "marker", "1", 0)
	select {
	case msg := <-sub.Channel():
		if msg.Channel != "__keyspace@0__:marker" {
			t.Errorf("first keyspace event after the no-op writes is %s %s, want the marker's", msg.Channel, msg.Payload)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("no keyspace event for the marker")
	}
}

// A command answered in the loop takes as its clock the end of the command before it in the
// same input (Frame.TakeClock), never one from earlier input: a PTTL sent a second after a GET
// answered in the loop counts that second.
func TestPeek_ClockOfNewInput_IsReadAfresh(t *testing.T) {
	s := testserver.Start(t)
	c := rtDial(t, s.Addr)
	r := bufio.NewReader(c)
	ask := asker(t, c, r)
	if got := ask("SET", "k", "v", "PX", "10000"); got != "+OK\r\n" {
		t.Fatalf("SET: %q", got)
	}
	if got := ask("GET", "k"); got != "$1\r\nv\r\n" { // answered in the loop
		t.Fatalf("GET: %q", got)
	}
	time.Sleep(time.Second)
	got := ask("PTTL", "k")
	ms, err := strconv.Atoi(strings.TrimSpace(strings.TrimPrefix(got, ":")))
	if err != nil || ms > 9000 {
		t.Fatalf("PTTL a second after a 10 s expiry was set: %q", got)
	}
}
