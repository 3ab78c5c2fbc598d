package crashtest

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"shardis/codec"
	"shardis/datatype"
	"shardis/internal/testserver"
	"shardis/shard"
)

// TestCrash_KillNine_StreamGroupStateUnchanged: under appendfsync always, consumers read,
// acknowledge and claim entries of streams in several shards; once their replies are in, the
// server is killed with SIGKILL, and after the restart every group's state (last delivered id,
// entries read, PEL with owners, delivery times and counts, consumers and their seen times) is
// exactly what it was: XINFO STREAM … FULL answers the same, byte for byte.
func TestCrash_KillNine_StreamGroupStateUnchanged(t *testing.T) {
	shardisBinary(t)
	dir := t.TempDir()
	flags := []string{"--appendfsync", "always", "--shards", "4"}
	ctx := context.Background()
	keys := []string{"q:a", "q:b", "q:c", "q:d", "q:e"}
	shards := map[int]bool{}
	for _, k := range keys {
		shards[shardOf4(k)] = true
	}
	if len(shards) < 2 {
		t.Fatal("the streams all live in one shard")
	}
	p, _ := startShardis(t, dir, flags...)
	c := p.client(t)
	for _, k := range keys {
		if err := c.XGroupCreateMkStream(ctx, k, "g", "$").Err(); err != nil {
			t.Fatal(err)
		}
	}
	snapshot := func(c *redis.Client) string {
		out := ""
		for _, k := range keys {
			v, err := c.Do(ctx, "XINFO", "STREAM", k, "FULL", "COUNT", "0").Slice()
			if err != nil {
				t.Fatalf("XINFO STREAM %s FULL: %v", k, err)
			}
			out += fmt.Sprint(v) + "\n"
		}
		return out
	}
	for cycle := range 3 {
		var wg sync.WaitGroup
		stop := make(chan struct{})
		for i := range 4 {
			wc := p.client(t)
			wg.Add(1)
			go func() {
				defer wg.Done()
				rng := rand.New(rand.NewPCG(uint64(cycle), uint64(i)))
				name := fmt.Sprintf("c%d", i)
				for n := 0; ; n++ {
					select {
					case <-stop:
						return
					default:
					}
					k := keys[rng.IntN(len(keys))]
					var err error
					switch rng.IntN(5) {
					case 0, 1:
						err = wc.XAdd(ctx, &redis.XAddArgs{Stream: k, Values: []any{"n", n}}).Err()
					case 2:
						var res []redis.XStream
						res, err = wc.XReadGroup(ctx, &redis.XReadGroupArgs{Group: "g", Consumer: name,
							Streams: []string{k, ">"}, Count: 3, Block: -1}).Result()
						if err == nil && rng.IntN(2) == 0 {
							for _, m := range res[0].Messages {
								if err = wc.XAck(ctx, k, "g", m.ID).Err(); err != nil {
									break
								}
							}
						}
					case 3:
						err = wc.XAutoClaim(ctx, &redis.XAutoClaimArgs{Stream: k, Group: "g", Consumer: name,
							Start: "0", Count: 2}).Err()
					case 4:
						err = wc.XReadGroup(ctx, &redis.XReadGroupArgs{Group: "g", Consumer: name,
							Streams: []string{k, "0"}, Count: 2, Block: -1}).Err()
					}
					if err != nil && !errors.Is(err, redis.Nil) {
						t.Errorf("cycle %d: %v", cycle, err)
						return
					}
				}
			}()
		}
		time.Sleep(time.Duration(200+rand.IntN(300)) * time.Millisecond)
		close(stop)
		wg.Wait()
		before := snapshot(c)
		p.kill9(t)
		p, _ = startShardis(t, dir, flags...)
		c = p.client(t)
		if after := snapshot(c); after != before {
			t.Fatalf("cycle %d: the groups changed across kill -9\nbefore:\n%s\nafter:\n%s", cycle, before, after)
		}
		t.Logf("cycle %d: %d bytes of group state kept", cycle, len(before))
	}
}

// dumpGroups describes every consumer group of every stream of st: last id, entries read, PEL
// entries with owner, delivery time and count, and consumers with their pending counts (not
// their seen times, which Redis does not propagate either).
func dumpGroups(t *testing.T, st *shard.Store) map[string]string {
	t.Helper()
	out := map[string]string{}
	for id := range st.NumShards() {
		if err := st.Do(id, func(tx *shard.Tx) {
			tx.ScanKeys(id, 0, nil, func(key []byte, m *codec.Meta) bool {
				if m.Type != codec.TypeStream {
					return true
				}
				s, err := datatype.StreamFromMeta(tx, 0, key, *m, true)
				if err != nil {
					t.Errorf("%s: %v", key, err)
					return true
				}
				info := s.Info()
				out[string(key)] = fmt.Sprintf("len=%d last=%v added=%d groups=%d", s.Len(), info.LastID, info.EntriesAdded, info.Groups)
				for _, name := range s.GroupNames() {
					g, _ := s.Group(name)
					desc := fmt.Sprintf("last=%v read=%d pending=%d consumers=%d;", g.LastID, g.EntriesRead, g.Pending(), g.Consumers())
					it := g.PEL(codec.MinStreamID, codec.MaxStreamID)
					for ; it.Valid(); it.Next() {
						n := it.NACK()
						desc += fmt.Sprintf(" %v:%s@%d#%d", it.ID(), n.Consumer, n.DeliveryTime, n.DeliveryCount)
					}
					it.Close()
					for _, cn := range g.ConsumerNames() {
						desc += fmt.Sprintf(" consumer %s:%d", cn, g.Consumer(cn, false, 0).Pending())
					}
					out[string(key)+"/"+string(name)] = desc
				}
				return true
			})
		}); err != nil {
			t.Fatalf("dump shard %d: %v", id, err)
		}
	}
	return out
}

// TestReplay_StreamGroupsRebuiltExactly: after deliveries (plain, NOACK, history), acks,
// claims (FORCE, RETRYCOUNT, TIME, LASTID, deleted entries), autoclaims, SETID, consumer
// deletion and group destruction on streams in 4 shards, replaying the binlogs into a fresh
// store gives every group the same last id, read counter, PEL (owners, delivery times and
// counts) and consumers.
func TestReplay_StreamGroupsRebuiltExactly(t *testing.T) {
	s := testserver.Start(t, "--shards", "4", "--binlog-max-entries", "0", "--binlog-max-age", "0")
	ctx := context.Background()
	c := s.Client(t)
	rng := rand.New(rand.NewPCG(3, 9))
	keys := []string{"s:a", "s:b", "s:c", "s:d", "s:e", "s:f"}
	groups := []string{"g1", "g2"}
	consumers := []string{"alice", "bob", "carol"}
	id := 0
	for range 3000 {
		k, g, cn := keys[rng.IntN(len(keys))], groups[rng.IntN(len(groups))], consumers[rng.IntN(len(consumers))]
		var args []any
		switch n := rng.IntN(100); {
		case n < 30:
			id++
			args = []any{"XADD", k, fmt.Sprintf("%d-1", id), "f", id}
		case n < 36:
			args = []any{"XGROUP", "CREATE", k, g, pick(rng, "$", "0"), "MKSTREAM"}
		case n < 56:
			args = []any{"XREADGROUP", "GROUP", g, cn, "COUNT", 1 + rng.IntN(4), "STREAMS", k, ">"}
			if rng.IntN(4) == 0 {
				args = []any{"XREADGROUP", "GROUP", g, cn, "COUNT", 2, "NOACK", "STREAMS", k, ">"}
			}
		case n < 62:
			args = []any{"XREADGROUP", "GROUP", g, cn, "STREAMS", k, "0"}
		case n < 72:
			args = []any{"XACK", k, g, fmt.Sprintf("%d-1", 1+rng.IntN(id+1)), fmt.Sprintf("%d-1", 1+rng.IntN(id+1))}
		case n < 78:
			args = []any{"XCLAIM", k, g, cn, "0", fmt.Sprintf("%d-1", 1+rng.IntN(id+1)), pick(rng, "FORCE", "JUSTID"),
				"RETRYCOUNT", rng.IntN(5), "TIME", 1700000000000 + rng.IntN(1000)}
			if rng.IntN(3) == 0 {
				args = append(args, "LASTID", fmt.Sprintf("%d-1", id+1))
			}
		case n < 83:
			args = []any{"XAUTOCLAIM", k, g, cn, "0", "0", "COUNT", 1 + rng.IntN(3)}
		case n < 88:
			args = []any{"XDEL", k, fmt.Sprintf("%d-1", 1+rng.IntN(id+1))}
		case n < 91:
			args = []any{"XGROUP", "SETID", k, g, fmt.Sprintf("%d-1", rng.IntN(id+1))}
		case n < 94:
			args = []any{"XGROUP", "DELCONSUMER", k, g, cn}
		case n < 96:
			args = []any{"XGROUP", "CREATECONSUMER", k, g, cn}
		case n < 97:
			args = []any{"XGROUP", "DESTROY", k, g}
		default:
			args = []any{"XTRIM", k, "MAXLEN", rng.IntN(5)}
		}
		if err := c.Do(ctx, args...).Err(); err != nil && !errors.Is(err, redis.Nil) &&
			!strings.HasPrefix(err.Error(), "NOGROUP") && !strings.HasPrefix(err.Error(), "BUSYGROUP") &&
			!strings.HasPrefix(err.Error(), "ERR The XGROUP subcommand requires the key to exist") {
			t.Fatalf("%v: %v", args, err)
		}
	}
	want := dumpGroups(t, s.Store)
	dst, _, n := replayInto(t, s.Store)
	got := dumpGroups(t, dst)
	if diffs := diffDumps(want, got); len(diffs) > 0 {
		t.Fatalf("%d differences after replaying %d records, first: %s", len(diffs), n, strings.Join(diffs[:min(5, len(diffs))], "\n"))
	}
	t.Logf("%d streams and groups rebuilt from %d records", len(want), n)
}

// TestReplay_RenamedStreamKeepsGroups: RENAME and COPY log a stream as a rebuild; its groups,
// consumers and PEL come back with it when the binlogs are replayed.
func TestReplay_RenamedStreamKeepsGroups(t *testing.T) {
	s := testserver.Start(t, "--shards", "4", "--binlog-max-entries", "0", "--binlog-max-age", "0")
	ctx := context.Background()
	c := s.Client(t)
	run := func(args ...any) {
		t.Helper()
		if err := c.Do(ctx, args...).Err(); err != nil && !errors.Is(err, redis.Nil) {
			t.Fatalf("%v: %v", args, err)
		}
	}
	for i := 1; i <= 20; i++ {
		run("XADD", "src", fmt.Sprintf("%d-1", i), "f", i)
	}
	run("XGROUP", "CREATE", "src", "g1", "0")
	run("XGROUP", "CREATE", "src", "g2", "5-1", "ENTRIESREAD", "5")
	run("XGROUP", "CREATECONSUMER", "src", "g2", "idle")
	run("XREADGROUP", "GROUP", "g1", "alice", "COUNT", "7", "STREAMS", "src", ">")
	run("XREADGROUP", "GROUP", "g1", "bob", "COUNT", "3", "STREAMS", "src", ">")
	run("XREADGROUP", "GROUP", "g2", "carol", "COUNT", "4", "STREAMS", "src", ">")
	run("XCLAIM", "src", "g1", "bob", "0", "2-1", "RETRYCOUNT", "9", "TIME", "1700000000000")
	run("XACK", "src", "g1", "3-1")
	run("COPY", "src", "copy")
	run("RENAME", "src", "dst")
	want := dumpGroups(t, s.Store)
	if len(want) != 6 {
		t.Fatalf("dump: %v", want)
	}
	dst, _, _ := replayInto(t, s.Store)
	if diffs := diffDumps(want, dumpGroups(t, dst)); len(diffs) > 0 {
		t.Fatalf("%d differences after the replay: %s", len(diffs), strings.Join(diffs, "\n"))
	}
}
