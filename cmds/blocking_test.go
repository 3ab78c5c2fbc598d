package cmds_test

import (
	"bufio"
	"fmt"
	"net"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"shardis/internal/testserver"
)

// keysInShards returns n keys with the given prefix, each in a shard of its own.
func keysInShards(t *testing.T, s *testserver.Server, prefix string, n int) []string {
	t.Helper()
	seen := map[int]bool{}
	var keys []string
	for i := 0; len(keys) < n; i++ {
		if i > 10000 {
			t.Fatalf("no %d keys in distinct shards", n)
		}
		k := prefix + strconv.Itoa(i)
		if id := s.Store.ShardOf([]byte(k)); !seen[id] {
			seen[id] = true
			keys = append(keys, k)
		}
	}
	return keys
}

// waitBlocked waits until n clients are blocked (generous bound: the machine may be busy).
func waitBlocked(t *testing.T, s *testserver.Server, n int) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		if got, _ := s.Store.Blocked(); got == n {
			return
		}
		if time.Now().After(deadline) {
			got, _ := s.Store.Blocked()
			t.Fatalf("%d clients blocked, want %d", got, n)
		}
		time.Sleep(time.Millisecond)
	}
}

// result is one blocked command's outcome.
type result struct {
	v   any
	err error
}

// async runs f in a goroutine and returns where its outcome arrives.
func async(f func() (any, error)) chan result {
	ch := make(chan result, 1)
	go func() {
		v, err := f()
		ch <- result{v, err}
	}()
	return ch
}

func recv(t *testing.T, ch chan result) result {
	t.Helper()
	select {
	case r := <-ch:
		return r
	case <-time.After(20 * time.Second):
		t.Fatal("blocked command not answered in 20s")
	}
	return result{}
}

func TestBlocking_BLPOPServedByLaterPush(t *testing.T) {
	s := testserver.Start(t)
	waiter, pusher := s.Client(t), s.Client(t)
	got := async(func() (any, error) { return waiter.BLPop(testCtx, 0, "q0", "q1").Result() })
	waitBlocked(t, s, 1)
	expect(t, pusher, int64(2), "LPUSH", "q1", "a", "b")
	if r := recv(t, got); r.err != nil || fmt.Sprint(r.v) != "[q1 b]" {
		t.Fatalf("BLPOP = %v, %v; want [q1 b]", r.v, r.err)
	}
	expect(t, pusher, []any{"a"}, "LRANGE", "q1", "0", "-1")
	waitBlocked(t, s, 0)
	if _, keys := s.Store.Blocked(); keys != 0 {
		t.Fatalf("%d keys still have waiters", keys)
	}
}

func TestBlocking_FIFOAmongWaiters(t *testing.T) {
	s := testserver.Start(t)
	pusher := s.Client(t)
	var got []chan result
	for i := range 3 {
		c := s.Client(t)
		got = append(got, async(func() (any, error) { return c.BRPop(testCtx, 0, "q").Result() }))
		waitBlocked(t, s, i+1)
	}
	expect(t, pusher, int64(3), "LPUSH", "q", "1", "2", "3")
	for i, ch := range got {
		want := fmt.Sprintf("[q %d]", i+1)
		if r := recv(t, ch); r.err != nil || fmt.Sprint(r.v) != want {
			t.Fatalf("waiter %d: %v, %v; want %s", i+1, r.v, r.err, want)
		}
	}
	expect(t, pusher, int64(0), "EXISTS", "q")
}

func TestBlocking_BLMOVEAcrossShards(t *testing.T) {
	s := testserver.Start(t)
	keys := keysInShards(t, s, "l", 2)
	src, dst := keys[0], keys[1]
	waiter, pusher := s.Client(t), s.Client(t)
	expect(t, pusher, int64(1), "RPUSH", dst, "old")
	got := async(func() (any, error) { return waiter.BLMove(testCtx, src, dst, "LEFT", "LEFT", 0).Result() })
	waitBlocked(t, s, 1)
	expect(t, pusher, int64(2), "RPUSH", src, "x", "y")
	if r := recv(t, got); r.err != nil || r.v != "x" {
		t.Fatalf("BLMOVE = %v, %v; want x", r.v, r.err)
	}
	expect(t, pusher, []any{"y"}, "LRANGE", src, "0", "-1")
	expect(t, pusher, []any{"x", "old"}, "LRANGE", dst, "0", "-1")

	// BRPOPLPUSH to a destination of another shard that holds the wrong type: WRONGTYPE, and
	// the element stays.
	expect(t, pusher, "OK", "SET", dst, "str")
	expect(t, pusher, int64(1), "DEL", src)
	//lint:ignore SA1019 the deprecated command itself is under test
	got = async(func() (any, error) { return waiter.BRPopLPush(testCtx, src, dst, 0).Result() })
	waitBlocked(t, s, 1)
	expect(t, pusher, int64(1), "RPUSH", src, "z")
	if r := recv(t, got); r.err == nil || r.err.Error() != "WRONGTYPE Operation against a key holding the wrong kind of value" {
		t.Fatalf("BRPOPLPUSH = %v, %v; want WRONGTYPE", r.v, r.err)
	}
	expect(t, pusher, []any{"z"}, "LRANGE", src, "0", "-1")
}

func TestBlocking_BZPOPMINAndBZMPOP(t *testing.T) {
	s := testserver.Start(t)
	keys := keysInShards(t, s, "z", 2)
	waiter, pusher := s.Client(t), s.Client(t)
	got := async(func() (any, error) { return waiter.BZPopMin(testCtx, 0, keys[0], keys[1]).Result() })
	waitBlocked(t, s, 1)
	expect(t, pusher, int64(2), "ZADD", keys[1], "2", "b", "1", "a")
	r := recv(t, got)
	if z, ok := r.v.(*redis.ZWithKey); r.err != nil || !ok || z.Key != keys[1] || z.Member != "a" || z.Score != 1 {
		t.Fatalf("BZPOPMIN = %#v, %v; want %s a 1", r.v, r.err, keys[1])
	}
	expect(t, pusher, []any{"b"}, "ZRANGE", keys[1], "0", "-1")

	expect(t, pusher, int64(1), "DEL", keys[1])
	got = async(func() (any, error) {
		return doCmdResult(waiter, "BZMPOP", "0", "2", keys[0], keys[1], "MAX", "COUNT", "2")
	})
	waitBlocked(t, s, 1)
	expect(t, pusher, int64(3), "ZADD", keys[0], "1", "a", "2", "b", "3", "c")
	if r := recv(t, got); r.err != nil || fmt.Sprint(r.v) != fmt.Sprintf("[%s [[c 3] [b 2]]]", keys[0]) {
		t.Fatalf("BZMPOP = %v, %v", r.v, r.err)
	}
}

func doCmdResult(c *redis.Client, args ...any) (any, error) { return c.Do(testCtx, args...).Result() }

func TestBlocking_TimeoutReturnsNil(t *testing.T) {
	s := testserver.Start(t)
	c := s.Client(t)
	if v, err := doCmdResult(c, "BLPOP", "none", "0.05"); err != redis.Nil {
		t.Fatalf("BLPOP = %v, %v; want nil", v, err)
	}
	if v, err := doCmdResult(c, "BLMOVE", "none", "d", "LEFT", "RIGHT", "0.02"); err != redis.Nil {
		t.Fatalf("BLMOVE = %v, %v; want nil", v, err)
	}
	if v, err := doCmdResult(c, "BZMPOP", "0.02", "1", "none", "MIN"); err != redis.Nil {
		t.Fatalf("BZMPOP = %v, %v; want nil", v, err)
	}
	waitBlocked(t, s, 0)
	expectErr(t, c, "ERR timeout is negative", "BLPOP", "k", "-1")
	expectErr(t, c, "ERR timeout is negative", "BLPOP", "k", "inf")
	expectErr(t, c, "ERR timeout is negative", "BLPOP", "k", "1e20")
	expectErr(t, c, "ERR timeout is not a float or out of range", "BLPOP", "k", "abc")
	expectErr(t, c, "ERR timeout is not a float or out of range", "BLPOP", "k", "")
	expectErr(t, c, "ERR timeout is not a float or out of range", "BLPOP", "k", " 1")
	expectErr(t, c, "ERR timeout is not a float or out of range", "BLMPOP", "x", "1", "k", "LEFT")
	expectErr(t, c, "ERR numkeys should be greater than 0", "BZMPOP", "x", "0", "k", "MIN")
	expectErr(t, c, "ERR syntax error", "BLMOVE", "a", "b", "UP", "LEFT", "x")
	// A key of another type answers at once.
	expect(t, c, "OK", "SET", "str", "v")
	expectErr(t, c, "WRONGTYPE Operation against a key holding the wrong kind of value", "BLPOP", "none", "str", "0")
}

func TestBlocking_ClientUnblock(t *testing.T) {
	s := testserver.Start(t)
	admin := s.Client(t)
	one := s.Client(t, func(o *redis.Options) { o.PoolSize = 1 })
	id, err := one.ClientID(testCtx).Result()
	if err != nil {
		t.Fatal(err)
	}
	expect(t, admin, int64(0), "CLIENT", "UNBLOCK", id)
	got := async(func() (any, error) { return one.BLPop(testCtx, 0, "q").Result() })
	waitBlocked(t, s, 1)
	list, _ := admin.ClientList(testCtx).Result()
	if !containsAll(list, "flags=b", "cmd=blpop") {
		t.Fatalf("CLIENT LIST does not show the blocked client: %s", list)
	}
	expect(t, admin, int64(1), "CLIENT", "UNBLOCK", id)
	if r := recv(t, got); r.err != redis.Nil {
		t.Fatalf("BLPOP after UNBLOCK = %v, %v; want nil", r.v, r.err)
	}
	got = async(func() (any, error) { return one.BZPopMax(testCtx, 0, "z").Result() })
	waitBlocked(t, s, 1)
	expect(t, admin, int64(1), "CLIENT", "UNBLOCK", id, "ERROR")
	if r := recv(t, got); r.err == nil || r.err.Error() != "UNBLOCKED client unblocked via CLIENT UNBLOCK" {
		t.Fatalf("BZPOPMAX after UNBLOCK ERROR = %v, %v", r.v, r.err)
	}
	expectErr(t, admin, "ERR CLIENT UNBLOCK reason should be TIMEOUT or ERROR", "CLIENT", "UNBLOCK", id, "x")
	waitBlocked(t, s, 0)

	// CLIENT KILL of a blocked client removes its waiter.
	got = async(func() (any, error) { return one.BLPop(testCtx, 0, "q", "r").Result() })
	waitBlocked(t, s, 1)
	expect(t, admin, int64(1), "CLIENT", "KILL", "ID", strconv.FormatInt(id, 10))
	if r := recv(t, got); r.err == nil {
		t.Fatalf("BLPOP of a killed client = %v", r.v)
	}
	waitBlocked(t, s, 0)
	expect(t, admin, int64(1), "RPUSH", "r", "kept")
	expect(t, admin, []any{"kept"}, "LRANGE", "r", "0", "-1")
}

func containsAll(s string, parts ...string) bool {
	for _, p := range parts {
		if !slices.Contains(splitFields(s), p) {
			return false
		}
	}
	return true
}

func splitFields(s string) []string {
	var out []string
	start := 0
	for i := 0; i <= len(s); i++ {
		if i == len(s) || s[i] == ' ' || s[i] == '\n' {
			if i > start {
				out = append(out, s[start:i])
			}
			start = i + 1
		}
	}
	return out
}

// A client that leaves while blocked leaves no waiter: a later push is not lost to it.
func TestBlocking_DisconnectRemovesWaiter(t *testing.T) {
	s := testserver.Start(t)
	c := s.Client(t)
	conn, err := net.Dial("tcp", s.Addr)
	if err != nil {
		t.Fatal(err)
	}
	// What is pipelined behind the blocked command never runs once the client is gone.
	_, _ = conn.Write([]byte("*3\r\n$5\r\nBLPOP\r\n$1\r\nq\r\n$1\r\n0\r\n*3\r\n$5\r\nRPUSH\r\n$5\r\nafter\r\n$1\r\nx\r\n"))
	waitBlocked(t, s, 1)
	_ = conn.Close()
	waitBlocked(t, s, 0)
	expect(t, c, int64(1), "LPUSH", "q", "x")
	expect(t, c, []any{"x"}, "LRANGE", "q", "0", "-1")
	expect(t, c, int64(0), "EXISTS", "after")
}

// Commands pipelined behind a blocked one wait for it, and the replies keep their order.
func TestBlocking_PipelineWaitsBehindBlocked(t *testing.T) {
	s := testserver.Start(t)
	c := s.Client(t)
	conn, err := net.Dial("tcp", s.Addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_, _ = conn.Write([]byte("*3\r\n$5\r\nBLPOP\r\n$1\r\nq\r\n$1\r\n0\r\n*2\r\n$4\r\nLLEN\r\n$1\r\nq\r\n*1\r\n$4\r\nPING\r\n"))
	waitBlocked(t, s, 1)
	expect(t, c, int64(2), "RPUSH", "q", "a", "b")
	_ = conn.SetReadDeadline(time.Now().Add(20 * time.Second))
	r := bufio.NewReader(conn)
	want := []string{"*2", "$1", "q", "$1", "a", ":1", "+PONG"}
	for _, w := range want {
		line, err := r.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		if line != w+"\r\n" {
			t.Fatalf("got %q, want %q", line, w)
		}
	}
}

// The test: 20 consumers blocked on 4 lists in different shards, producers push
// 10,000 items: every item is consumed exactly once, in order per list (each consumer sees the
// items of one list in increasing order), and the waiter tables are empty afterwards.
func TestBlocking_ConsumersAndProducers(t *testing.T) {
	const (
		consumers = 20
		items     = 10000
	)
	s := testserver.Start(t)
	lists := keysInShards(t, s, "jobs", 4)
	var consumed atomic.Int64
	var mu sync.Mutex
	seen := map[string]int{} // "list/item" -> times consumed
	errs := make(chan error, consumers)
	var wg sync.WaitGroup
	for i := range consumers {
		c := s.Client(t)
		keys := append(slices.Clone(lists[i%4:]), lists[:i%4]...) // each its own key order
		wg.Add(1)
		go func() {
			defer wg.Done()
			last := map[string]int{}
			for {
				v, err := c.BLPop(testCtx, 0, keys...).Result()
				if err != nil {
					errs <- err
					return
				}
				if v[1] == "end" {
					return
				}
				n, _ := strconv.Atoi(v[1])
				if prev, ok := last[v[0]]; ok && n <= prev {
					errs <- fmt.Errorf("%s: %d after %d", v[0], n, prev)
					return
				}
				last[v[0]] = n
				mu.Lock()
				seen[v[0]+"/"+v[1]]++
				mu.Unlock()
				consumed.Add(1)
			}
		}()
	}
	waitBlocked(t, s, consumers)
	var pw sync.WaitGroup
	for p, list := range lists {
		c := s.Client(t)
		pw.Add(1)
		go func() {
			defer pw.Done()
			per := items / len(lists)
			for n := 0; n < per; {
				batch := []any{}
				for k := 0; k < 1+(n+p)%5 && n < per; k++ {
					batch = append(batch, strconv.Itoa(n))
					n++
				}
				if err := c.RPush(testCtx, list, batch...).Err(); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	pw.Wait()
	deadline := time.Now().Add(60 * time.Second)
	for consumed.Load() < items && len(errs) == 0 {
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d items consumed in 60s", consumed.Load(), items)
		}
		time.Sleep(5 * time.Millisecond)
	}
	end := s.Client(t)
	for range consumers {
		if err := end.RPush(testCtx, lists[0], "end").Err(); err != nil {
			t.Fatal(err)
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if len(seen) != items {
		t.Fatalf("%d distinct items consumed, want %d", len(seen), items)
	}
	for k, n := range seen {
		if n != 1 {
			t.Fatalf("%s consumed %d times", k, n)
		}
	}
	for _, l := range lists {
		expect(t, end, int64(0), "LLEN", l)
	}
	waitBlocked(t, s, 0)
	if _, keys := s.Store.Blocked(); keys != 0 {
		t.Fatalf("%d keys still have waiters", keys)
	}
}

// SWAPDB serves the clients blocked on a key that the database swapped in holds, as Redis 7.0
// does; one waiting for another type (BLPOP on a string) waits on.
func TestBlocking_SwapDBServesReadyKeys(t *testing.T) {
	s := testserver.Start(t)
	c := s.Client(t)
	r := connDial(t, s.Addr)
	for _, step := range [][]string{{"SELECT", "1"}, {"RPUSH", "swq", "x", "y"}, {"SET", "sws", "v"}, {"SELECT", "0"}} {
		r.cmd(step...)
		r.line()
	}
	list, str := s.Client(t), s.Client(t)
	got := async(func() (any, error) { return list.BLPop(testCtx, 0, "swq").Result() })
	waitBlocked(t, s, 1)
	gotStr := async(func() (any, error) { return str.BLPop(testCtx, 0, "sws").Result() })
	waitBlocked(t, s, 2)
	expect(t, c, "OK", "SWAPDB", "0", "1")
	if res := recv(t, got); res.err != nil || fmt.Sprint(res.v) != "[swq x]" {
		t.Fatalf("BLPOP = %v, %v; want [swq x]", res.v, res.err)
	}
	expect(t, c, []any{"y"}, "LRANGE", "swq", "0", "-1")
	waitBlocked(t, s, 1)
	select {
	case res := <-gotStr:
		t.Fatalf("BLPOP on a string answered %v, %v", res.v, res.err)
	default:
	}
}
