package crashtest

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// TestCrash_KillNine_QueuesKeepAcknowledgedPushesAndPops runs queues (LPUSH, and RPOP of the
// oldest element, which reads its node, usually from the key cache) under appendfsync always,
// kills the server with SIGKILL, and checks that each list after the restart holds exactly what the
// acknowledged commands left, give or take the one command in flight.
func TestCrash_KillNine_QueuesKeepAcknowledgedPushesAndPops(t *testing.T) {
	shardisBinary(t)
	dir := t.TempDir()
	flags := []string{"--appendfsync", "always", "--shards", "4"}
	ctx := context.Background()
	p, _ := startShardis(t, dir, flags...)

	const queues = 4
	type queue struct {
		key      string
		model    []string // oldest first
		inflight func([]string) []string
	}
	qs := make([]*queue, queues)
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for w := range queues {
		q := &queue{key: fmt.Sprintf("queue:%d", w)}
		qs[w] = q
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
				if i%3 == 2 && len(q.model) > 0 {
					want := q.model[0]
					q.inflight = func(m []string) []string { return m[1:] }
					v, err := c.RPop(ctx, q.key).Result()
					if err != nil {
						return
					}
					if v != want {
						t.Errorf("%s: RPOP %q, want %q", q.key, v, want)
						return
					}
				} else {
					v := strconv.Itoa(i)
					q.inflight = func(m []string) []string { return append(slices.Clone(m), v) }
					if err := c.LPush(ctx, q.key, v).Err(); err != nil {
						return
					}
				}
				q.model = q.inflight(q.model)
				q.inflight = nil
			}
		}()
	}
	time.Sleep(1500 * time.Millisecond)
	p.kill9(t)
	close(stop)
	wg.Wait()

	p, _ = startShardis(t, dir, flags...)
	c := p.client(t)
	for _, q := range qs {
		got, err := c.LRange(ctx, q.key, 0, -1).Result()
		if err != nil && err != redis.Nil {
			t.Fatal(err)
		}
		slices.Reverse(got) // LRANGE lists the newest push first
		if len(q.model) < 10 {
			t.Errorf("%s: only %d elements acknowledged before the kill", q.key, len(q.model))
		}
		if slices.Equal(got, q.model) || q.inflight != nil && slices.Equal(got, q.inflight(q.model)) {
			continue
		}
		t.Errorf("%s after kill -9: %d elements %.200v\nwant %d %.200v", q.key, len(got), got, len(q.model), q.model)
	}
}
