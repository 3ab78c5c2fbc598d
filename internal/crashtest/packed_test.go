package crashtest

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// TestCrash_KillNine_PackedCollectionsConvertWhole grows sets, hashes and sorted sets past
// the size at which they leave their packed meta for data keys (128 elements; a new key every
// 150), under appendfsync always, kills the server with SIGKILL, and checks that each one
// after the restart holds exactly what the acknowledged commands left, give or take the one
// command in flight, with a count that matches its elements: a conversion is never half done.
func TestCrash_KillNine_PackedCollectionsConvertWhole(t *testing.T) {
	shardisBinary(t)
	dir := t.TempDir()
	flags := []string{"--appendfsync", "always", "--shards", "4"}
	ctx := context.Background()
	p, _ := startShardis(t, dir, flags...)

	const workers, perKey = 4, 150
	type model struct {
		elems    map[string]map[string]string // key -> element -> hash value ("" for a set)
		inflight [2]string                    // key, element of the write in flight
	}
	ms := make([]*model, workers)
	var wg sync.WaitGroup
	var acked atomic.Int64
	stop := make(chan struct{})
	for w := range workers {
		m := &model{elems: map[string]map[string]string{}}
		ms[w] = m
		c := p.client(t)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				kind := [...]string{"set", "hash", "zset"}[i%3]
				key := fmt.Sprintf("%s:%d:%d", kind, w, i/(3*perKey))
				elem := fmt.Sprintf("e%d", i)
				m.inflight = [2]string{key, elem}
				var err error
				switch kind {
				case "set":
					err = c.SAdd(ctx, key, elem).Err()
				case "hash":
					err = c.HSet(ctx, key, elem, "v"+elem).Err()
				default:
					err = c.ZAdd(ctx, key, redis.Z{Score: float64(i % 7), Member: elem}).Err()
				}
				if err != nil {
					return
				}
				if m.elems[key] == nil {
					m.elems[key] = map[string]string{}
				}
				switch kind {
				case "hash":
					m.elems[key][elem] = "v" + elem
				case "zset":
					m.elems[key][elem] = fmt.Sprint(i % 7)
				default:
					m.elems[key][elem] = ""
				}
				m.inflight = [2]string{}
				acked.Add(1)
			}
		}()
	}
	// Kill once every worker's first keys were converted (a busy machine may take long), while
	// the next ones fill and convert.
	for deadline := time.Now().Add(2 * time.Minute); acked.Load() < workers*(3*perKey+200) && time.Now().Before(deadline); {
		time.Sleep(50 * time.Millisecond)
	}
	p.kill9(t)
	close(stop)
	wg.Wait()

	p, _ = startShardis(t, dir, flags...)
	c := p.client(t)
	converted := 0
	for _, m := range ms {
		for key, want := range m.elems {
			got := map[string]string{}
			var n int64
			switch key[0] {
			case 's':
				members, err := c.SMembers(ctx, key).Result()
				if err != nil {
					t.Fatal(err)
				}
				for _, e := range members {
					got[e] = ""
				}
				n = c.SCard(ctx, key).Val()
			case 'z':
				zs, err := c.ZRangeWithScores(ctx, key, 0, -1).Result()
				if err != nil {
					t.Fatal(err)
				}
				for _, z := range zs {
					got[z.Member.(string)] = fmt.Sprint(z.Score)
				}
				// Both entries of every member: a count by score agrees with the members.
				if byScore := c.ZCount(ctx, key, "-inf", "+inf").Val(); byScore != int64(len(got)) {
					t.Errorf("%s: ZCOUNT %d, %d members", key, byScore, len(got))
				}
				n = c.ZCard(ctx, key).Val()
			default:
				var err error
				if got, err = c.HGetAll(ctx, key).Result(); err != nil {
					t.Fatal(err)
				}
				n = c.HLen(ctx, key).Val()
			}
			if n != int64(len(got)) {
				t.Errorf("%s: count %d, %d elements", key, n, len(got))
			}
			if len(want) > 128 {
				converted++
			}
			extra := maps.Clone(got)
			if e := m.inflight; e[0] == key {
				delete(extra, e[1])
			}
			if !maps.Equal(extra, want) && !maps.Equal(got, want) {
				t.Errorf("%s after kill -9: %d elements %.200v\nwant %d %.200v", key, len(got),
					slices.Sorted(maps.Keys(got)), len(want), slices.Sorted(maps.Keys(want)))
			}
		}
	}
	if converted == 0 {
		t.Errorf("no collection grew past 128 elements before the kill")
	}
}
