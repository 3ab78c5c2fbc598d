package crashtest

import (
	"context"
	"math/rand/v2"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// transferFunc moves amount from one account to another in one atomic unit (MULTI/EXEC, a
// script); an error means the connection is gone.
type transferFunc func(ctx context.Context, c *redis.Client, from, to string, amount int64) error

// killNineDuringTransfers moves money between accounts in different shards with transfer under
// appendfsync always, kills the server with SIGKILL mid-load several times, and checks after
// each restart that the total is intact: every unit is on disk whole or not at all.
func killNineDuringTransfers(t *testing.T, transfer transferFunc) {
	shardisBinary(t)
	dir := t.TempDir()
	flags := []string{"--appendfsync", "always", "--shards", "4"}
	ctx := context.Background()
	accounts := []string{"acct:a", "acct:b", "acct:c", "acct:d", "acct:e", "acct:f", "acct:g", "acct:h"}
	shards := map[int]bool{}
	for _, a := range accounts {
		shards[shardOf4(a)] = true
	}
	if len(shards) < 2 {
		t.Fatal("the accounts all live in one shard")
	}
	const start = 1000
	total := start * len(accounts)

	p, _ := startShardis(t, dir, flags...)
	c := p.client(t)
	for _, a := range accounts {
		if err := c.Set(ctx, a, start, 0).Err(); err != nil {
			t.Fatal(err)
		}
	}
	sum := func(c *redis.Client) int {
		vals, err := c.MGet(ctx, accounts...).Result()
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, v := range vals {
			x, err := strconv.Atoi(v.(string))
			if err != nil {
				t.Fatalf("account value %#v", v)
			}
			n += x
		}
		return n
	}
	const cycles, clients = 3, 8
	for cycle := range cycles {
		if cycle > 0 {
			p, _ = startShardis(t, dir, flags...)
			if n := sum(p.client(t)); n != total {
				t.Fatalf("cycle %d: after kill -9 the accounts hold %d, want %d", cycle, n, total)
			}
		}
		var wg sync.WaitGroup
		var mu sync.Mutex
		acked := 0
		for i := range clients {
			c := p.client(t)
			wg.Add(1)
			go func() {
				defer wg.Done()
				rng := rand.New(rand.NewPCG(uint64(cycle), uint64(i)))
				for {
					from, to := accounts[rng.IntN(len(accounts))], accounts[rng.IntN(len(accounts))]
					if err := transfer(ctx, c, from, to, int64(1+rng.IntN(100))); err != nil {
						return // the kill
					}
					mu.Lock()
					acked++
					mu.Unlock()
				}
			}()
		}
		// Kill once the load runs (bounded, not timed: a busy machine only makes it slower),
		// at a random point after that.
		for i := 0; ; i++ {
			mu.Lock()
			n := acked
			mu.Unlock()
			if n >= 20 || i == 3000 {
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
		time.Sleep(time.Duration(rand.IntN(300)) * time.Millisecond)
		p.kill9(t)
		wg.Wait()
		t.Logf("cycle %d: %d transfers acknowledged before kill -9", cycle, acked)
		if acked == 0 {
			t.Fatalf("cycle %d: no transfer was acknowledged: the workload did not run", cycle)
		}
	}
	p, _ = startShardis(t, dir, flags...)
	if n := sum(p.client(t)); n != total {
		t.Fatalf("after the last kill -9 the accounts hold %d, want %d", n, total)
	}
}
