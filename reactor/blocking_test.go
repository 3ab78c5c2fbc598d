package reactor_test

import (
	"context"
	"fmt"
	"strconv"
	"testing"
	"time"

	"shardis/internal/testserver"
)

// waitFor polls cond (generous bound: the machine may be busy).
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("not %s in 20s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

// keysInShards returns n keys, each in a shard of its own.
func keysInShards(s *testserver.Server, n int) []string {
	seen := map[int]bool{}
	var keys []string
	for i := 0; len(keys) < n; i++ {
		k := "k" + strconv.Itoa(i)
		if id := s.Store.ShardOf([]byte(k)); !seen[id] {
			seen[id] = true
			keys = append(keys, k)
		}
	}
	return keys
}

// A pipeline with blocking commands in a coordinated step (keys in two shards) and in a fanout
// step: what follows each blocked command waits for it, and the replies keep their order.
func TestBlocking_PipelinedAcrossSteps(t *testing.T) {
	s := testserver.Start(t)
	ctx := context.Background()
	keys := keysInShards(s, 3)
	c, pusher := s.Client(t), s.Client(t)
	pipe := c.Pipeline()
	set := pipe.Set(ctx, "a", "1", 0)
	first := pipe.BLPop(ctx, 0, keys[0], keys[1])
	get := pipe.Get(ctx, keys[1]+"x")
	second := pipe.BRPop(ctx, 0, keys[2])
	echo := pipe.Echo(ctx, "e")
	done := make(chan error, 1)
	go func() { _, err := pipe.Exec(ctx); done <- err }()

	waiting := func(k string) func() bool {
		return func() bool { return len(s.Store.WaitersOf(s.Store.ShardOf([]byte(k)), 0, []byte(k))) == 1 }
	}
	waitFor(t, "blocked on the first keys", waiting(keys[1]))
	if err := pusher.Set(ctx, keys[1]+"x", "late", 0).Err(); err != nil {
		t.Fatal(err)
	}
	if err := pusher.RPush(ctx, keys[1], "x").Err(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "blocked on the third key", waiting(keys[2]))
	if err := pusher.RPush(ctx, keys[2], "y", "z").Err(); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("pipeline not answered in 20s")
	}
	got := fmt.Sprint(set.Val(), first.Val(), get.Val(), second.Val(), echo.Val())
	if want := fmt.Sprint("OK", []string{keys[1], "x"}, "late", []string{keys[2], "z"}, "e"); got != want {
		t.Fatalf("replies %s, want %s", got, want)
	}
}

// Stopping the server while clients are blocked (SHUTDOWN) ends their waits: nothing hangs,
// and no waiter is left.
func TestBlocking_StopWithBlockedClients(t *testing.T) {
	s := testserver.Start(t)
	ctx := context.Background()
	keys := keysInShards(s, 3)
	for i := range 6 {
		c := s.Client(t)
		go func() { _ = c.BLPop(ctx, 0, keys[i%3], keys[(i+1)%3]).Err() }()
	}
	waitFor(t, "6 clients blocked", func() bool { n, _ := s.Store.Blocked(); return n == 6 })
	stopped := make(chan struct{})
	go func() { s.Stop(); close(stopped) }()
	select {
	case <-stopped:
	case <-time.After(30 * time.Second):
		t.Fatal("Stop hangs with blocked clients")
	}
	if n, k := s.Store.Blocked(); n != 0 || k != 0 {
		t.Fatalf("%d waiters on %d keys left after Stop", n, k)
	}
}
