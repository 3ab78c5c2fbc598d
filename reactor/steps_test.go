package reactor_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"shardis/internal/testserver"
)

// Pipelines whose steps alternate between fanouts over several shards and multi-shard
// commands, from many clients at once: every reply must belong to its own command. Run under
// -race (make test does) it also checks that a finishing step never races the one posting it.
func TestSteps_FanoutAndCoordinatedInterleaved(t *testing.T) {
	s := testserver.Start(t, "--shards", "8")
	ctx := context.Background()
	var wg sync.WaitGroup
	for c := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cl := s.Client(t)
			for round := range 30 {
				pipe := cl.Pipeline()
				gets := make([]interface{ Val() string }, 0, 16)
				for i := range 16 {
					k := fmt.Sprintf("c%d:k%d", c, i)
					pipe.Set(ctx, k, fmt.Sprint(round, i), 0)
					if i%4 == 3 { // a multi-shard command between fanouts
						pipe.MSet(ctx, fmt.Sprintf("c%d:m%d", c, i), round, fmt.Sprintf("c%d:n%d", c, i), round)
					}
					gets = append(gets, pipe.Get(ctx, k))
				}
				if _, err := pipe.Exec(ctx); err != nil {
					t.Errorf("client %d round %d: %v", c, round, err)
					return
				}
				for i, g := range gets {
					if want := fmt.Sprint(round, i); g.Val() != want {
						t.Errorf("client %d round %d: GET k%d = %q, want %q", c, round, i, g.Val(), want)
						return
					}
				}
			}
		}()
	}
	wg.Wait()
}

// A pipeline whose replies are large in total and many in number goes out with writev in
// chunks of at most IOV_MAX buffers; every reply must arrive, in order.
func TestFlush_ManyLargeReplies(t *testing.T) {
	s := testserver.Start(t)
	ctx := context.Background()
	c := s.Client(t)
	value := strings.Repeat("v", 200)
	if err := c.Set(ctx, "big", value, 0).Err(); err != nil {
		t.Fatal(err)
	}
	pipe := c.Pipeline()
	var gets []interface{ Val() string }
	for range 3000 { // 3000 replies of 200 bytes: over the copy threshold and over IOV_MAX
		gets = append(gets, pipe.Get(ctx, "big"))
		pipe.Echo(ctx, "e")
	}
	if _, err := pipe.Exec(ctx); err != nil {
		t.Fatal(err)
	}
	for i, g := range gets {
		if g.Val() != value {
			t.Fatalf("reply %d: %d bytes", i, len(g.Val()))
		}
	}
}
