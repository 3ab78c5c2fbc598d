package cmds_test

import (
	"errors"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"shardis/internal/testserver"
)

// go-redis's Script.Run sends EVALSHA, gets NOSCRIPT the first time and falls back to EVAL;
// later runs are served from the script cache.
func TestScript_GoRedisRun_FallsBackToEval(t *testing.T) {
	s := testserver.Start(t)
	c := s.Client(t)
	script := redis.NewScript(`
redis.call('SET', KEYS[1], ARGV[1])
redis.call('INCRBY', KEYS[2], ARGV[2])
return {redis.call('GET', KEYS[1]), redis.call('GET', KEYS[2])}`)
	if err := c.EvalSha(testCtx, script.Hash(), []string{"a", "b"}, "v", 1).Err(); err == nil ||
		!strings.HasPrefix(err.Error(), "NOSCRIPT") {
		t.Fatalf("EVALSHA before loading: %v, want NOSCRIPT", err)
	}
	for i := 1; i <= 3; i++ {
		got, err := script.Run(testCtx, c, []string{"s:{x}", "n:{y}"}, "v", 5).Slice()
		if err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(got) != fmt.Sprintf("[v %d]", 5*i) {
			t.Fatalf("run %d: %v", i, got)
		}
	}
	exists, err := script.Exists(testCtx, c).Result()
	if err != nil || len(exists) != 1 || !exists[0] {
		t.Fatalf("SCRIPT EXISTS: %v %v", exists, err)
	}
	if err := c.ScriptFlush(testCtx).Err(); err != nil {
		t.Fatal(err)
	}
	if err := c.EvalSha(testCtx, script.Hash(), []string{"a", "b"}, "v", 1).Err(); err == nil ||
		!strings.HasPrefix(err.Error(), "NOSCRIPT") {
		t.Fatalf("EVALSHA after SCRIPT FLUSH: %v, want NOSCRIPT", err)
	}
}

// A fixed-window rate limiter under 16 concurrent clients admits exactly the limit.
func TestScript_RateLimiter_ExactUnderConcurrency(t *testing.T) {
	s := testserver.Start(t)
	const clients, each, limit = 16, 50, 300
	limiter := redis.NewScript(`
local n = redis.call('INCR', KEYS[1])
if n == 1 then redis.call('EXPIRE', KEYS[1], 3600) end
if n > tonumber(ARGV[1]) then return 0 end
return 1`)
	var admitted sync.WaitGroup
	var mu sync.Mutex
	ok, no := 0, 0
	errs := make(chan error, clients)
	for range clients {
		admitted.Add(1)
		go func() {
			defer admitted.Done()
			c := s.Client(t)
			for range each {
				r, err := limiter.Run(testCtx, c, []string{"rate:user1"}, limit).Int()
				if err != nil {
					errs <- err
					return
				}
				mu.Lock()
				if r == 1 {
					ok++
				} else {
					no++
				}
				mu.Unlock()
			}
		}()
	}
	admitted.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if ok != limit || no != clients*each-limit {
		t.Fatalf("admitted %d refused %d, want %d and %d", ok, no, limit, clients*each-limit)
	}
	if n, _ := s.Client(t).Get(testCtx, "rate:user1").Int(); n != clients*each {
		t.Fatalf("counter %d, want %d", n, clients*each)
	}
}

// A script moves value between keys of different shards while readers MGET both: the sum
// never shows a half-done move.
func TestScript_MoveAcrossShards_ReadersNeverSeeHalf(t *testing.T) {
	s := testserver.Start(t)
	c := s.Client(t)
	keys := []string{"acct:a", "acct:b", "acct:c", "acct:d"}
	for _, k := range keys {
		if err := c.Set(testCtx, k, 100, 0).Err(); err != nil {
			t.Fatal(err)
		}
	}
	move := redis.NewScript(`
local v = tonumber(redis.call('GET', KEYS[1]))
if v < tonumber(ARGV[1]) then return 0 end
redis.call('DECRBY', KEYS[1], ARGV[1])
redis.call('INCRBY', KEYS[2], ARGV[1])
return 1`)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for r := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rc := s.Client(t)
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				vals, err := rc.MGet(testCtx, keys...).Result()
				if err != nil {
					errs <- err
					return
				}
				sum := 0
				for _, v := range vals {
					n, _ := strconv.Atoi(v.(string))
					sum += n
				}
				if sum != 400 {
					errs <- fmt.Errorf("reader %d saw sum %d: %v", r, sum, vals)
					return
				}
			}
		}()
	}
	var movers sync.WaitGroup
	for m := range 4 {
		movers.Add(1)
		go func() {
			defer movers.Done()
			mc := s.Client(t)
			for i := range 200 {
				from, to := keys[(m+i)%4], keys[(m+i+1)%4]
				if err := move.Run(testCtx, mc, []string{from, to}, 1+i%7).Err(); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	movers.Wait()
	close(stop)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}

// A key the script did not declare works, as on a standalone Redis.
func TestScript_UndeclaredKeys(t *testing.T) {
	s := testserver.Start(t)
	c := s.Client(t)
	for i := range 16 {
		k := "u:" + strconv.Itoa(i)
		if err := c.Eval(testCtx, "return redis.call('SET', ARGV[1], ARGV[2])", []string{"decl"}, k, i).Err(); err != nil {
			t.Fatal(err)
		}
		if v, err := c.Get(testCtx, k).Int(); err != nil || v != i {
			t.Fatalf("%s = %d, %v", k, v, err)
		}
	}
}

// Errors, read-only scripts and the sandbox answer with Redis 7.0's texts.
func TestScript_ErrorsAndSandbox(t *testing.T) {
	s := testserver.Start(t)
	c := s.Client(t)
	c.Set(testCtx, "str", "a", 0)
	cases := []struct {
		cmd  []any
		want string
	}{
		{[]any{"eval", "return 1", -1}, "ERR Number of keys can't be negative"},
		{[]any{"eval", "return 1", 2, "a"}, "ERR Number of keys can't be greater than number of args"},
		{[]any{"eval", "return x", 0}, "ERR user_script:1: Script attempted to access nonexistent global variable 'x' script: 03c387736bb5cc009ff35151572cee04677aa374, on @user_script:1."},
		{[]any{"eval", "x=1", 0}, "ERR user_script:1: Attempt to modify a readonly table script: 7caf6056913504f0508c65faf2dc3f94ff65bcfd, on @user_script:1."},
		{[]any{"eval", "return redis.call('nosuch')", 0}, "ERR Unknown Redis command called from script script: 206396248e12c6e742fd7296250433c8d7343b74, on @user_script:1."},
		{[]any{"eval", "return redis.call('incr','str')", 0}, "ERR value is not an integer or out of range script: 851ab5c4815573433b8c8eed0a889f947a2e885a, on @user_script:1."},
		{[]any{"eval_ro", "return redis.call('set','s','1')", 0}, "ERR Write commands are not allowed from read-only scripts. script: 331f1eab19bd8416f59ae02df4f687b1fb44edb5, on @user_script:1."},
		// PUBLISH may replicate: a read-only script may not run it either.
		{[]any{"eval_ro", "return redis.call('publish','c','m')", 0}, "ERR Write commands are not allowed from read-only scripts. script: 3a955b6d325623c001913b7b9046420fd9d06fc8, on @user_script:1."},
		{[]any{"eval", "#!lua flags=no-writes\nreturn redis.call('set','s','1')", 0}, "ERR Write commands are not allowed from read-only scripts. script: af63a09a28673bbcb2d40b6ebb724db6035738ac, on @user_script:2."},
		{[]any{"eval_ro", "#!lua\nreturn 1", 0}, "ERR Can not execute a script with write flag using *_ro command."},
		{[]any{"eval", "#!lua flags=bad\nreturn 1", 0}, "ERR Unexpected flag in script shebang: bad"},
		{[]any{"eval", "return redis.call('multi')", 0}, "ERR This Redis command is not allowed from script script: c329a1a294be6bf95b44144f7502610661ae925a, on @user_script:1."},
		{[]any{"eval", "return nil + 1", 0}, "ERR user_script:1: attempt to perform arithmetic on a nil value script: d13bc48d895ba57f297c4db70c1d256548a54e2d, on @user_script:1."},
		{[]any{"eval", "error({err='X y'})", 0}, "X y script: 4fba4bac04df521d52f90e9091a962514f12c323, on @user_script:1."},
		{[]any{"eval", "return os.time()", 0}, "ERR user_script:1: Script attempted to access nonexistent global variable 'os' script: 13dea82ee9da896aebcd10f5e36f4a1eeb839b48, on @user_script:1."},
		{[]any{"evalsha", "ffffffffffffffffffffffffffffffffffffffff", 0}, "NOSCRIPT No matching script. Please use EVAL."},
		{[]any{"script", "flush", "foo"}, "ERR SCRIPT FLUSH only support SYNC|ASYNC option"},
		{[]any{"script", "kill"}, "NOTBUSY No scripts in execution right now."},
	}
	for _, tc := range cases {
		err := c.Do(testCtx, tc.cmd...).Err()
		if err == nil || err.Error() != tc.want {
			t.Errorf("%q: %v\n want %s", tc.cmd, err, tc.want)
		}
	}
}

// Conversions between Lua and RESP2, as Redis 7.0 makes them.
func TestScript_Conversions(t *testing.T) {
	s := testserver.Start(t)
	c := s.Client(t)
	cases := []struct {
		script string
		want   string
	}{
		{"return {1,2,3.7,nil,5}", "[1 2 3]"},
		{"return -3.99", "-3"},
		{"return true", "1"},
		{"return {ok='fine'}", "fine"},
		{"return redis.call('ping')", "PONG"},
		{"local ok, e = pcall(redis.call, 'incr', 'str'); return e", "ERR value is not an integer or out of range"},
		{"return cjson.encode({1,2,{a='x/y'}})", `[1,2,{"a":"x\/y"}]`},
		{"return bit.tohex(bit.bnot(5))", "fffffffa"},
		{"math.randomseed(42); return {math.random(100), math.random(1,10), tostring(math.random())}", "[75 4 0.11108528222474]"},
		{"return redis.sha1hex('abc')", "a9993e364706816aba3e25717850c26c9cd0d89d"},
		{"return tostring(tonumber(' -inf '))", "-inf"},
	}
	c.Set(testCtx, "str", "a", 0)
	for _, tc := range cases {
		got, err := c.Eval(testCtx, tc.script, nil).Result()
		if err != nil {
			t.Errorf("%s: %v", tc.script, err)
			continue
		}
		if fmt.Sprint(got) != tc.want {
			t.Errorf("%s: %v, want %s", tc.script, got, tc.want)
		}
	}
	if v, err := c.Eval(testCtx, "return false", nil).Result(); !errors.Is(err, redis.Nil) {
		t.Errorf("return false: %v %v, want nil", v, err)
	}
}

// RESP3: redis.setresp(3) makes commands reply maps to the script, and doubles and (from a
// RESP3 script) booleans go back to a RESP3 client as such.
func TestScript_RESP3(t *testing.T) {
	s := testserver.Start(t)
	c := s.Client(t, func(o *redis.Options) { o.Protocol = 3 })
	c.HSet(testCtx, "h", "f", "v")
	got, err := c.Eval(testCtx, "redis.setresp(3); local r = redis.call('hgetall', KEYS[1]); return r.map.f", []string{"h"}).Result()
	if err != nil || got != "v" {
		t.Fatalf("map: %v %v", got, err)
	}
	got, err = c.Eval(testCtx, "return {double=1.5}", nil).Result()
	if err != nil || got != 1.5 {
		t.Fatalf("double: %v %v", got, err)
	}
	// A boolean follows the script's protocol, as in Redis 7.0: nil while the script speaks
	// RESP2 (the default), a boolean once it chose RESP3.
	if err := c.Eval(testCtx, "return false", nil).Err(); err != redis.Nil {
		t.Fatalf("false in a RESP2 script: %v, want nil", err)
	}
	got, err = c.Eval(testCtx, "redis.setresp(3); return false", nil).Result()
	if err != nil || got != false {
		t.Fatalf("false in a RESP3 script: %#v %v", got, err)
	}
}

// EVAL inside MULTI runs in EXEC's transaction; SELECT inside a script does not move the
// caller's database.
func TestScript_InMultiAndSelect(t *testing.T) {
	s := testserver.Start(t)
	c := s.Client(t)
	cmds, err := c.TxPipelined(testCtx, func(p redis.Pipeliner) error {
		p.Eval(testCtx, "return redis.call('INCR', KEYS[1])", []string{"m"})
		p.Eval(testCtx, "redis.call('SELECT', 1); return redis.call('SET', KEYS[1], 'in1')", []string{"m"})
		p.Get(testCtx, "m")
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := cmds[2].(*redis.StringCmd).Val(); got != "1" {
		t.Fatalf("GET after script with SELECT: %q, want 1 (db 0)", got)
	}
	v, err := c.Do(testCtx, "eval", "redis.call('select', 1); return redis.call('get', KEYS[1])", 1, "m").Result()
	if err != nil || v != "in1" {
		t.Fatalf("db 1: %v %v", v, err)
	}
}

// A Lua error, even deep in a loop, is a reply: the server stays up.
func TestScript_RuntimeErrorsAreReplies(t *testing.T) {
	s := testserver.Start(t)
	c := s.Client(t)
	for _, script := range []string{
		"local t = {} t[1] = t return t", // nested without end: cut at the depth limit
		"local function f() return f() + 1 end return f()",
		"return string.rep('x', 10) .. nil",
	} {
		_ = c.Eval(testCtx, script, nil).Err()
	}
	deadline := time.Now().Add(30 * time.Second)
	for c.Ping(testCtx).Err() != nil && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if err := c.Ping(testCtx).Err(); err != nil {
		t.Fatal(err)
	}
}

// redis-py's Lock (acquire, a second process contending, extend, reacquire, release, release
// by a stranger) works through EVALSHA. Skipped where python3 has no redis module.
func TestScript_RedisPyLock(t *testing.T) {
	python := pythonWithRedis(t)
	s := testserver.Start(t)
	out, err := exec.Command(python, "testdata/script/redis_py_lock.py", s.Addr).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "ok") {
		t.Fatalf("redis-py Lock: %v\n%s", err, out)
	}
}

// SCRIPT KILL stops a script that has not written once it ran for the busy threshold (sent
// earlier, it waits until then); one that wrote is UNKILLABLE and runs to its end.
func TestScript_Kill(t *testing.T) {
	s := testserver.Start(t)
	c := s.Client(t)
	if err := c.ScriptKill(testCtx).Err(); err == nil || err.Error() != "NOTBUSY No scripts in execution right now." {
		t.Fatalf("SCRIPT KILL with nothing running: %v", err)
	}
	// killScript retries SCRIPT KILL until the script has started (NOTBUSY before) and
	// returns its last answer.
	killScript := func(done <-chan error) error {
		kc := s.Client(t)
		deadline := time.Now().Add(60 * time.Second)
		for {
			err := kc.ScriptKill(testCtx).Err()
			if err == nil || !strings.HasPrefix(err.Error(), "NOTBUSY") || time.Now().After(deadline) {
				return err
			}
			select {
			case e := <-done:
				t.Fatalf("script ended before SCRIPT KILL found it: %v", e)
			case <-time.After(10 * time.Millisecond):
			}
		}
	}

	done := make(chan error, 1)
	go func() { done <- s.Client(t).Eval(testCtx, "local i = 0 while true do i = i + 1 end", nil).Err() }()
	if err := killScript(done); err != nil {
		t.Fatalf("SCRIPT KILL: %v, want OK", err)
	}
	if err := <-done; err == nil || !strings.HasPrefix(err.Error(), "ERR Script killed by user with SCRIPT KILL... script: ") {
		t.Fatalf("killed script replied %v", err)
	}

	// A script that wrote cannot be killed; this one ends by itself once 7 s passed.
	go func() {
		done <- s.Client(t).Eval(testCtx, `redis.call('SET', 'k:killtest', 'v')
local t0 = tonumber(redis.call('TIME')[1])
while tonumber(redis.call('TIME')[1]) - t0 < 7 do end
return 'done'`, nil).Err()
	}()
	if err := killScript(done); err == nil || !strings.HasPrefix(err.Error(), "UNKILLABLE Sorry the script already executed write commands") {
		t.Fatalf("SCRIPT KILL of a script that wrote: %v", err)
	}
	if err := <-done; err != nil {
		t.Fatalf("unkillable script: %v", err)
	}
	if v, _ := c.Get(testCtx, "k:killtest").Result(); v != "v" {
		t.Fatalf("write of the unkillable script: %q", v)
	}
}

// The streams in testdata/script replay, byte for byte, what redis-server 7.0.15 answered.
func TestScript_Streams_MatchRedis(t *testing.T) {
	replayRecorded(t, "testdata/script")
}

// CLIENT PAUSE WRITE holds back EVAL and EVALSHA (their scripts may write), not EVAL_RO.
func TestScript_ClientPauseWrite(t *testing.T) {
	s := testserver.Start(t)
	admin, c := s.Client(t), s.Client(t)
	if err := c.Set(testCtx, "p:k", "old", 0).Err(); err != nil {
		t.Fatal(err)
	}
	if err := admin.Do(testCtx, "CLIENT", "PAUSE", "60000", "WRITE").Err(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		done <- s.Client(t).Eval(testCtx, "return redis.call('SET', KEYS[1], 'new')", []string{"p:k"}).Err()
	}()
	if v, err := c.EvalRO(testCtx, "return redis.call('GET', KEYS[1])", []string{"p:k"}).Result(); err != nil || v != "old" {
		t.Fatalf("EVAL_RO during the pause: %v %v", v, err)
	}
	select {
	case err := <-done:
		t.Fatalf("EVAL ran during a WRITE pause: %v", err)
	case <-time.After(200 * time.Millisecond):
	}
	if err := admin.Do(testCtx, "CLIENT", "UNPAUSE").Err(); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if v, _ := c.Get(testCtx, "p:k").Result(); v != "new" {
		t.Fatalf("after UNPAUSE: %q", v)
	}
}
