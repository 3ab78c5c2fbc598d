package cmds_test

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"shardis/internal/testserver"
)

// A script holds its declared keys' shards. One that strays to another shard after it wrote
// runs again holding every shard, and its first attempt leaves nothing behind: the counter it
// increments counts each run once, and so does INFO commandstats.
func TestScriptRoute_StrayAfterWrite_RunsOnce(t *testing.T) {
	s := testserver.Start(t)
	c := s.Client(t)
	other := keyInAnotherShard(t, s, "counter")
	const script = ` -- this test's own script: no other test marks it wide
local n = redis.call('INCR', KEYS[1])
redis.call('SET', ARGV[1], n)
return n`
	before := evalCalls(t, c)
	for want := int64(1); want <= 3; want++ { // the first run strays; later ones start wide
		n, err := c.Eval(testCtx, script, []string{"counter"}, other).Int64()
		if err != nil || n != want {
			t.Fatalf("run %d: %d, %v", want, n, err)
		}
		if v, err := c.Get(testCtx, other).Int64(); err != nil || v != want {
			t.Fatalf("run %d: undeclared key = %d, %v", want, v, err)
		}
	}
	if n := evalCalls(t, c) - before; n != 3 {
		t.Fatalf("INFO commandstats counted %d EVALs, want 3", n)
	}
}

// evalCalls returns the calls of cmdstat_eval (statistics are the process's: tests compare
// before and after).
func evalCalls(t *testing.T, c *redis.Client) int {
	t.Helper()
	info, err := c.Info(testCtx, "commandstats").Result()
	if err != nil {
		t.Fatal(err)
	}
	_, f := infoParse(t, info)
	v, _, _ := strings.Cut(strings.TrimPrefix(f["cmdstat_eval"], "calls="), ",")
	n, _ := strconv.Atoi(v)
	return n
}

// Pipelined scripts share a step; when one of them strays, the whole step runs again and each
// script's effect still lands once, in order.
func TestScriptRoute_PipelinedStray_EachOnce(t *testing.T) {
	s := testserver.Start(t)
	c := s.Client(t)
	other := keyInAnotherShard(t, s, "seq")
	const incr = "return redis.call('INCR', KEYS[1])"
	const stray = "redis.call('SET', ARGV[1], 'x') return redis.call('INCR', KEYS[1])"
	pipe := c.Pipeline()
	var cmds []*redis.Cmd
	for i := range 6 {
		body := incr
		if i == 2 {
			body = stray
		}
		cmds = append(cmds, pipe.Eval(testCtx, body, []string{"seq"}, other))
	}
	if _, err := pipe.Exec(testCtx); err != nil {
		t.Fatal(err)
	}
	for i, cmd := range cmds {
		if n, err := cmd.Int64(); err != nil || n != int64(i+1) {
			t.Fatalf("script %d: %d, %v", i, n, err)
		}
	}
	if v, err := c.Get(testCtx, "seq").Int64(); err != nil || v != 6 {
		t.Fatalf("seq = %d, %v", v, err)
	}
}

// A client blocked on the script's key is served by the run that counts: it gets the element
// once, and the list is empty after.
func TestScriptRoute_StrayServesBlockedClientOnce(t *testing.T) {
	s := testserver.Start(t)
	c := s.Client(t)
	other := keyInAnotherShard(t, s, "jobs")
	popped := make(chan []string, 1)
	errs := make(chan error, 1)
	bc := s.Client(t)
	go func() {
		v, err := bc.BLPop(testCtx, 0, "jobs").Result()
		if err != nil {
			errs <- err
			return
		}
		popped <- v
	}()
	waitFor(t, func() bool {
		n, _ := c.Info(testCtx, "clients").Result()
		return strings.Contains(n, "blocked_clients:1")
	})
	if err := c.Eval(testCtx, "redis.call('LPUSH', KEYS[1], 'job1') redis.call('SET', ARGV[1], 'x') return 1",
		[]string{"jobs"}, other).Err(); err != nil {
		t.Fatal(err)
	}
	select {
	case v := <-popped:
		if strings.Join(v, " ") != "jobs job1" {
			t.Fatalf("BLPOP got %v", v)
		}
	case err := <-errs:
		t.Fatal(err)
	}
	if n, err := c.LLen(testCtx, "jobs").Result(); err != nil || n != 0 {
		t.Fatalf("LLEN after the pop: %d, %v", n, err)
	}
}

// PUBLISH acts at once, outside the transaction: a script narrowed to its keys strays before
// it publishes, so the message goes out once, from the run that counts.
func TestScriptRoute_PublishInScript_DeliveredOnce(t *testing.T) {
	s := testserver.Start(t)
	c := s.Client(t)
	sub := s.Client(t).Subscribe(testCtx, "news")
	if _, err := sub.Receive(testCtx); err != nil { // the subscription's confirmation
		t.Fatal(err)
	}
	ch := sub.Channel()
	if err := c.Eval(testCtx, "redis.call('INCR', KEYS[1]) return redis.call('PUBLISH', 'news', 'hello')",
		[]string{"pubkey"}).Err(); err != nil {
		t.Fatal(err)
	}
	if err := c.Publish(testCtx, "news", "end").Err(); err != nil {
		t.Fatal(err)
	}
	var got []string
	for m := range ch {
		got = append(got, m.Payload)
		if m.Payload == "end" {
			break
		}
	}
	if strings.Join(got, " ") != "hello end" {
		t.Fatalf("subscriber got %v", got)
	}
	if v, err := c.Get(testCtx, "pubkey").Int64(); err != nil || v != 1 {
		t.Fatalf("pubkey = %d, %v", v, err)
	}
}

// A script declaring keys of two shards runs coordinated; when it strays to a third shard,
// the scripts before it in the pipeline keep their effect, and it and those after it run
// again holding every shard, each once.
func TestScriptRoute_CoordinatedStray_EachOnce(t *testing.T) {
	s := testserver.Start(t)
	c := s.Client(t)
	a := "multi:a"
	b := keyInAnotherShard(t, s, a)
	var third string
	for i := range 1000 {
		k := "third:" + strconv.Itoa(i)
		if sh := s.Store.ShardOf([]byte(k)); sh != s.Store.ShardOf([]byte(a)) && sh != s.Store.ShardOf([]byte(b)) {
			third = k
			break
		}
	}
	const move = "redis.call('INCR', KEYS[1]) return redis.call('INCR', KEYS[2])"
	const stray = "redis.call('INCR', KEYS[1]) redis.call('INCR', ARGV[1]) return redis.call('INCR', KEYS[2])"
	pipe := c.Pipeline()
	var replies []*redis.Cmd
	for i := range 5 {
		body := move
		if i == 2 {
			body = stray + " -- coordinated" // this test's own script: no other test marks it wide
		}
		replies = append(replies, pipe.Eval(testCtx, body, []string{a, b}, third))
	}
	if _, err := pipe.Exec(testCtx); err != nil {
		t.Fatal(err)
	}
	for i, r := range replies {
		if n, err := r.Int64(); err != nil || n != int64(i+1) {
			t.Fatalf("script %d: %d, %v", i, n, err)
		}
	}
	for key, want := range map[string]int64{a: 5, b: 5, third: 1} {
		if v, err := c.Get(testCtx, key).Int64(); err != nil || v != want {
			t.Fatalf("%s = %d, %v; want %d", key, v, err, want)
		}
	}
}

// Commands pipelined after a script that strays run after it ran again, and once: APPENDs
// to the key it strayed to land after its own, and a GET between them sees its write.
func TestScriptRoute_StrayKeepsPipelineOrder(t *testing.T) {
	s := testserver.Start(t)
	c := s.Client(t)
	x := keyInAnotherShard(t, s, "order:k")
	pipe := c.Pipeline()
	pipe.Eval(testCtx, "redis.call('APPEND', ARGV[1], 's') return redis.call('INCR', KEYS[1]) -- order 1",
		[]string{"order:k"}, x)
	get := pipe.Get(testCtx, x)
	pipe.Append(testCtx, x, "p")
	pipe.Eval(testCtx, "redis.call('APPEND', ARGV[1], 't') return redis.call('INCR', KEYS[1]) -- order 2",
		[]string{"order:k"}, x)
	pipe.Append(testCtx, x, "q")
	last := pipe.Get(testCtx, x)
	if _, err := pipe.Exec(testCtx); err != nil {
		t.Fatal(err)
	}
	if get.Val() != "s" || last.Val() != "sptq" {
		t.Fatalf("GET after the first script %q (want s), GET at the end %q (want sptq)", get.Val(), last.Val())
	}
}

// A busy script stops a SHUTDOWN (BUSY, as Redis) but not a SHUTDOWN NOSAVE: the server then
// stops the script and nothing of it commits. Before, the server waited for the script
// forever.
func TestScript_ShutdownNosaveStopsBusyScript(t *testing.T) {
	dir := t.TempDir()
	s := testserver.StartIn(t, dir)
	c := s.Client(t)
	if err := c.ConfigSet(testCtx, "busy-reply-threshold", "50").Err(); err != nil {
		t.Fatal(err)
	}
	go s.Client(t).Eval(testCtx, "redis.call('SET', KEYS[1], 'half') while true do end", []string{"sk"})
	const busy = "BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE."
	waitFor(t, func() bool {
		err := c.Get(testCtx, "sk").Err()
		return err != nil && err.Error() == busy
	})
	if err := c.Do(testCtx, "SHUTDOWN").Err(); err == nil || err.Error() != busy {
		t.Fatalf("SHUTDOWN while a script is busy: %v, want %s", err, busy)
	}
	c.Do(testCtx, "SHUTDOWN", "NOSAVE") // the connection closes
	stopped := make(chan struct{})
	go func() { s.Stop(); close(stopped) }()
	select {
	case <-stopped:
	case <-time.After(60 * time.Second): // a hang, not a speed check
		t.Fatal("the server did not stop while a script ran")
	}
	s = testserver.StartIn(t, dir)
	if err := s.Client(t).Get(testCtx, "sk").Err(); err != redis.Nil {
		t.Fatalf("the stopped script's write: %v, want none", err)
	}
}
