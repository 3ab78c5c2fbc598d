package cmds_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"shardis/internal/testserver"
)

const (
	busyScript   = "BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE."
	busyFunction = "BUSY Redis is busy running a script. You can only call FUNCTION KILL or SHUTDOWN NOSAVE."
	unkillable   = "UNKILLABLE Sorry the script already executed write commands against the dataset. You can either wait the script termination or kill the server in a hard way using the SHUTDOWN NOSAVE command."
)

// waitBusy polls PING (bounded, no timing assumed) until the server answers want: a script
// ran past busy-reply-threshold.
func waitBusy(t *testing.T, c *redis.Client, want string) {
	t.Helper()
	waitFor(t, func() bool {
		err := c.Ping(testCtx).Err()
		return err != nil && err.Error() == want
	})
}

// scriptClient returns a client for a script that runs until killed: it waits for the reply
// longer than the bounded waits of the test.
func scriptClient(t *testing.T, s *testserver.Server) *redis.Client {
	return s.Client(t, func(o *redis.Options) { o.ReadTimeout = 5 * time.Minute })
}

// wantErr checks that cmd was answered the error want.
func wantErr(t *testing.T, what string, err error, want string) {
	t.Helper()
	if err == nil || err.Error() != want {
		t.Errorf("%s: %v, want %s", what, err, want)
	}
}

// A script past busy-reply-threshold makes the server busy, as Redis: every other client's
// command but those flagged allow_busy gets BUSY (PING, keys of shards the script does not
// hold, commands answered in the event loop, MULTI's commands and EXEC), the matching kill
// command stops it, and its own client's pipelined commands wait for it. As redis-server
// 7.0.15 answers. Before, only commands needing the script's shards were refused.
func TestScriptKill_BusyScript_EveryClientGetsBusyUntilKilled(t *testing.T) {
	s := testserver.Start(t)
	c := s.Client(t)
	if err := c.ConfigSet(testCtx, "busy-reply-threshold", "100").Err(); err != nil {
		t.Fatal(err)
	}
	if err := c.FunctionLoad(testCtx, "#!lua name=spin\nredis.register_function{function_name='spin', "+
		"callback=function() local i = 0 while true do i = i + 1 end end, flags={'no-writes'}}").Err(); err != nil {
		t.Fatal(err)
	}
	other := keyInAnotherShard(t, s, "k")
	for _, tc := range []struct {
		name            string
		run             func(redis.Pipeliner) *redis.Cmd
		busy, wrongBusy string
		kill, wrongKill []any
		killed          string
	}{
		{"EVAL", func(p redis.Pipeliner) *redis.Cmd {
			return p.Eval(testCtx, "local i = 0 while true do i = i + 1 end", []string{"k"})
		}, busyScript, busyScript, []any{"SCRIPT", "KILL"}, []any{"FUNCTION", "KILL"},
			"ERR Script killed by user with SCRIPT KILL... script: 3fcf51a9b854b8f66cb8685600b0d7df968f4398, on @user_script:1."},
		{"FCALL", func(p redis.Pipeliner) *redis.Cmd { return p.FCall(testCtx, "spin", []string{"k"}) },
			busyFunction, busyFunction, []any{"FUNCTION", "KILL"}, []any{"SCRIPT", "KILL"},
			"ERR Script killed by user with SCRIPT KILL... script: spin, on @user_function:2."},
	} {
		// The script's own client pipelines commands behind it: they wait, and are answered
		// after it.
		pipe := scriptClient(t, s).Pipeline()
		ran := tc.run(pipe)
		ping := pipe.Ping(testCtx)
		get := pipe.Get(testCtx, "k")
		done := make(chan struct{})
		go func() { _, _ = pipe.Exec(testCtx); close(done) }()
		waitBusy(t, c, tc.busy)

		wantErr(t, tc.name+": GET of a key in another shard", c.Get(testCtx, other).Err(), tc.busy)
		wantErr(t, tc.name+": SET of a key in another shard", c.Set(testCtx, other, "v", 0).Err(), tc.busy)
		wantErr(t, tc.name+": ECHO (answered in the event loop)", c.Echo(testCtx, "x").Err(), tc.busy)
		wantErr(t, tc.name+": CLIENT ID", c.ClientID(testCtx).Err(), tc.busy)
		wantErr(t, tc.name+": DBSIZE", c.DBSize(testCtx).Err(), tc.busy)
		wantErr(t, tc.name+": a new EVAL", c.Eval(testCtx, "return 1", nil).Err(), tc.busy)
		wantErr(t, tc.name+": the other kill command", c.Do(testCtx, tc.wrongKill...).Err(), tc.wrongBusy)
		stats, err := c.Do(testCtx, "FUNCTION", "STATS").Result() // allow_busy
		if tc.name == "EVAL" {
			wantErr(t, "EVAL: FUNCTION STATS", err, busyScript)
		} else if err != nil || !strings.Contains(strings.ToLower(fmt.Sprint(stats)), "command [fcall spin 1 k] duration_ms") {
			t.Errorf("FCALL: FUNCTION STATS %v %v", stats, err)
		}
		if err := c.Do(testCtx, "HELLO", "2").Err(); err != nil { // allow_busy
			t.Errorf("%s: HELLO: %v", tc.name, err)
		}

		// MULTI is allow_busy; what it would queue is refused, which dooms it, and EXEC
		// (not allow_busy) is refused and discards it. SCRIPT KILL is queued; SAVE is
		// refused for no_multi first.
		conn := c.Conn()
		if err := conn.Do(testCtx, "MULTI").Err(); err != nil {
			t.Fatalf("%s: MULTI: %v", tc.name, err)
		}
		wantErr(t, tc.name+": SET inside MULTI", conn.Set(testCtx, other, "v", 0).Err(), tc.busy)
		wantErr(t, tc.name+": PING inside MULTI", conn.Ping(testCtx).Err(), tc.busy)
		wantErr(t, tc.name+": SAVE inside MULTI", conn.Do(testCtx, "SAVE").Err(), "ERR Command not allowed inside a transaction")
		if v, err := conn.Do(testCtx, "SCRIPT", "KILL").Result(); err != nil || v != "QUEUED" {
			t.Errorf("%s: SCRIPT KILL inside MULTI: %v %v, want QUEUED", tc.name, v, err)
		}
		wantErr(t, tc.name+": EXEC", conn.Do(testCtx, "EXEC").Err(), "EXECABORT Transaction discarded because of: "+tc.busy)
		if err := conn.Do(testCtx, "WATCH", other).Err(); err != nil { // allow_busy, another shard
			t.Errorf("%s: WATCH: %v", tc.name, err)
		}
		if err := conn.Do(testCtx, "UNWATCH").Err(); err != nil {
			t.Errorf("%s: UNWATCH: %v", tc.name, err)
		}
		_ = conn.Close()

		select {
		case <-done:
			t.Fatalf("%s: the script's pipeline was answered while it ran: %v %v %v", tc.name, ran.Err(), ping.Err(), get.Err())
		default:
		}
		if err := c.Do(testCtx, tc.kill...).Err(); err != nil {
			t.Fatalf("%s: kill: %v", tc.name, err)
		}
		select {
		case <-done:
		case <-time.After(60 * time.Second): // a hang, not a speed check
			t.Fatalf("%s: the killed script's client got no reply", tc.name)
		}
		wantErr(t, tc.name+": the killed script's reply", ran.Err(), tc.killed)
		if ping.Val() != "PONG" || get.Err() != redis.Nil {
			t.Errorf("%s: the script client's PING %q %v, GET %v", tc.name, ping.Val(), ping.Err(), get.Err())
		}
		if err := c.Ping(testCtx).Err(); err != nil {
			t.Fatalf("%s: PING after the kill: %v", tc.name, err)
		}
	}
}

// A busy script or function that wrote cannot be killed by either kill command (UNKILLABLE,
// before the kind is looked at, as in Redis); SHUTDOWN is refused with BUSY, SHUTDOWN NOSAVE
// stops the server and nothing of the script commits.
func TestScriptKill_WroteThenBusy_UnkillableUntilShutdownNosave(t *testing.T) {
	for _, tc := range []struct {
		name string
		run  func(*redis.Client) error
		busy string
	}{
		{"EVAL", func(r *redis.Client) error {
			return r.Eval(testCtx, "redis.call('SET', KEYS[1], 'half') while true do end", []string{"sk"}).Err()
		}, busyScript},
		{"FCALL", func(r *redis.Client) error { return r.FCall(testCtx, "spinw", []string{"sk"}).Err() }, busyFunction},
	} {
		dir := t.TempDir()
		s := testserver.StartIn(t, dir)
		c := s.Client(t)
		if err := c.ConfigSet(testCtx, "busy-reply-threshold", "100").Err(); err != nil {
			t.Fatal(err)
		}
		if err := c.FunctionLoad(testCtx, "#!lua name=spinw\nredis.register_function('spinw', "+
			"function(k) redis.call('SET', k[1], 'half') while true do end end)").Err(); err != nil {
			t.Fatal(err)
		}
		go func() { _ = tc.run(scriptClient(t, s)) }()
		waitBusy(t, c, tc.busy)
		wantErr(t, tc.name+": SCRIPT KILL", c.Do(testCtx, "SCRIPT", "KILL").Err(), unkillable)
		wantErr(t, tc.name+": FUNCTION KILL", c.Do(testCtx, "FUNCTION", "KILL").Err(), unkillable)
		wantErr(t, tc.name+": SHUTDOWN", c.Do(testCtx, "SHUTDOWN").Err(), tc.busy)
		c.Do(testCtx, "SHUTDOWN", "NOSAVE") // the connection closes
		stopped := make(chan struct{})
		go func() { s.Stop(); close(stopped) }()
		select {
		case <-stopped:
		case <-time.After(60 * time.Second): // a hang, not a speed check
			t.Fatalf("%s: the server did not stop while a script ran", tc.name)
		}
		s = testserver.StartIn(t, dir)
		if err := s.Client(t).Get(testCtx, "sk").Err(); err != redis.Nil {
			t.Fatalf("%s: the stopped script's write: %v, want none", tc.name, err)
		}
		s.Stop()
	}
}

// A busy script refuses commands before CLIENT PAUSE holds them, as Redis checks BUSY first:
// a write during a WRITE pause gets BUSY rather than waiting for the script and the pause.
func TestScriptKill_BusyDuringPause_WritesGetBusyNotHeld(t *testing.T) {
	s := testserver.Start(t)
	c := s.Client(t, func(o *redis.Options) { o.ReadTimeout = 30 * time.Second })
	if err := c.ConfigSet(testCtx, "busy-reply-threshold", "100").Err(); err != nil {
		t.Fatal(err)
	}
	if err := c.Do(testCtx, "CLIENT", "PAUSE", "600000", "WRITE").Err(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- scriptClient(t, s).EvalRO(testCtx, "while true do end", []string{"k"}).Err() }()
	waitBusy(t, c, busyScript)
	wantErr(t, "SET during the pause", c.Set(testCtx, keyInAnotherShard(t, s, "k"), "v", 0).Err(), busyScript)
	wantErr(t, "CLIENT UNPAUSE", c.Do(testCtx, "CLIENT", "UNPAUSE").Err(), busyScript)
	if err := c.Do(testCtx, "SCRIPT", "KILL").Err(); err != nil {
		t.Fatalf("SCRIPT KILL: %v", err)
	}
	if err := <-done; err == nil || !strings.HasPrefix(err.Error(), "ERR Script killed by user with SCRIPT KILL...") {
		t.Fatalf("the killed script replied %v", err)
	}
	if err := c.Do(testCtx, "CLIENT", "UNPAUSE").Err(); err != nil {
		t.Fatal(err)
	}
}
