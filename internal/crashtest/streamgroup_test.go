package crashtest

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
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
