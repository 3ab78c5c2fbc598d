package cmds_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"shardis/internal/testserver"
)

// The scripts in testdata/multi replay, byte for byte, what redis-server 7.0.15 answered.
func TestMulti_Scripts_MatchRedis(t *testing.T) {
	replayRecorded(t, "testdata/multi")
}

// go-redis's TxPipelined wraps its commands in MULTI/EXEC; keys in different shards.
func TestMulti_TxPipelined_GoRedis(t *testing.T) {
	s := testserver.Start(t)
	c := s.Client(t)
	cmds, err := c.TxPipelined(testCtx, func(p redis.Pipeliner) error {
		for i := range 8 {
			p.Set(testCtx, "tx:"+strconv.Itoa(i), i, 0)
		}
		p.Incr(testCtx, "tx:3")
		p.MGet(testCtx, "tx:0", "tx:3", "tx:7")
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := cmds[8].(*redis.IntCmd).Val(); got != 4 {
		t.Fatalf("INCR inside the transaction = %d, want 4", got)
	}
	if got := fmt.Sprint(cmds[9].(*redis.SliceCmd).Val()); got != "[0 4 7]" {
		t.Fatalf("MGET inside the transaction = %s", got)
	}
	// A run-time error is an element of EXEC's array; the other commands still run.
	c.Set(testCtx, "str", "x", 0)
	cmds, err = c.TxPipelined(testCtx, func(p redis.Pipeliner) error {
		p.LPush(testCtx, "str", "a")
		p.Set(testCtx, "after", "ran", 0)
		return nil
	})
	if err == nil || !strings.HasPrefix(err.Error(), "WRONGTYPE") {
		t.Fatalf("err = %v, want WRONGTYPE", err)
	}
	if len(cmds) != 2 || cmds[1].Err() != nil {
		t.Fatalf("EXEC's replies %v, want the LPUSH's error and the SET's OK", cmds)
	}
	expect(t, c, "ran", "GET", "after")
}

// 16 clients × 500 optimistic increments of one counter through WATCH end at exactly 8,000.
func TestWatch_ConcurrentOptimisticIncrements(t *testing.T) {
	s := testserver.Start(t)
	const clients, each = 16, 500
	var wg sync.WaitGroup
	errs := make(chan error, clients)
	for range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := s.Client(t)
			for done := 0; done < each; {
				err := c.Watch(testCtx, func(tx *redis.Tx) error {
					n, err := tx.Get(testCtx, "counter").Int()
					if err != nil && err != redis.Nil {
						return err
					}
					_, err = tx.TxPipelined(testCtx, func(p redis.Pipeliner) error {
						p.Set(testCtx, "counter", n+1, 0)
						return nil
					})
					return err
				}, "counter")
				switch {
				case err == nil:
					done++
				case errors.Is(err, redis.TxFailedErr):
				default:
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	expect(t, s.Client(t), "8000", "GET", "counter")
}

// bank moves money between accounts with MULTI/EXEC while readers check the total with MGET
// and with EXEC: no reader may ever see part of a transfer.
func bank(t *testing.T, s *testserver.Server, accounts []string) {
	const start, writers, transfers, readers = 1000, 16, 200, 4
	c := s.Client(t)
	for _, a := range accounts {
		c.Set(testCtx, a, start, 0)
	}
	total := start * len(accounts)
	sum := func(vals []any) (int, error) {
		n := 0
		for _, v := range vals {
			s, ok := v.(string)
			if !ok {
				return 0, fmt.Errorf("value %#v", v)
			}
			x, err := strconv.Atoi(s)
			if err != nil {
				return 0, err
			}
			n += x
		}
		return n, nil
	}
	ctx, stop := context.WithCancel(testCtx)
	var wg, rg sync.WaitGroup
	errs := make(chan error, writers+readers)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := s.Client(t)
			rng := rand.New(rand.NewPCG(uint64(w), 7))
			for range transfers {
				from, to := accounts[rng.IntN(len(accounts))], accounts[rng.IntN(len(accounts))]
				amount := rng.IntN(50)
				if _, err := c.TxPipelined(testCtx, func(p redis.Pipeliner) error {
					p.DecrBy(testCtx, from, int64(amount))
					p.IncrBy(testCtx, to, int64(amount))
					return nil
				}); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	checks := make([]int, readers)
	for r := range readers {
		rg.Add(1)
		go func() {
			defer rg.Done()
			c := s.Client(t)
			for i := 0; ctx.Err() == nil; i++ {
				var vals []any
				if i%2 == 0 {
					v, err := c.MGet(testCtx, accounts...).Result()
					if err != nil {
						errs <- err
						return
					}
					vals = v
				} else {
					cmds, err := c.TxPipelined(testCtx, func(p redis.Pipeliner) error {
						for _, a := range accounts {
							p.Get(testCtx, a)
						}
						return nil
					})
					if err != nil {
						errs <- err
						return
					}
					for _, cmd := range cmds {
						vals = append(vals, cmd.(*redis.StringCmd).Val())
					}
				}
				n, err := sum(vals)
				if err != nil {
					errs <- err
					return
				}
				if n != total {
					errs <- fmt.Errorf("read %d (MGET: %v) in %v, want a total of %d", n, i%2 == 0, vals, total)
					return
				}
				checks[r]++
			}
		}()
	}
	wg.Wait()
	stop()
	rg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	vals, err := c.MGet(testCtx, accounts...).Result()
	if err != nil {
		t.Fatal(err)
	}
	if n, err := sum(vals); err != nil || n != total {
		t.Fatalf("final total %d (%v), want %d", n, err, total)
	}
	for r, n := range checks {
		if n == 0 {
			t.Fatalf("reader %d checked nothing", r)
		}
	}
}

func TestExec_BankTransfer_AcrossShards_NeverTorn(t *testing.T) {
	s := testserver.Start(t)
	bank(t, s, []string{"acct:a", "acct:b", "acct:c", "acct:d", "acct:e", "acct:f", "acct:g", "acct:h"})
}

// Keys of one shard: MGET may be answered in the event loop from committed state, which must
// not show half of a transaction either.
func TestExec_BankTransfer_OneShard_NeverTorn(t *testing.T) {
	s := testserver.Start(t)
	bank(t, s, []string{"{bank}a", "{bank}b", "{bank}c", "{bank}d"})
}

// MONITOR shows MULTI, then each queued command as EXEC runs it, then EXEC, as Redis does.
func TestExec_MonitorShowsQueuedCommandsAsTheyRun(t *testing.T) {
	s := testserver.Start(t)
	mon := testserver.Monitor(t, s.Addr)
	buf := make([]byte, 64<<10)
	var got []byte
	c := s.Client(t)
	if _, err := c.TxPipelined(testCtx, func(p redis.Pipeliner) error {
		p.Set(testCtx, "a", "1", 0)
		p.Get(testCtx, "a")
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	got = got[:0]
	for !bytes.Contains(got, []byte(`"exec"`+"\r\n")) {
		n, err := mon.Read(buf)
		if err != nil {
			t.Fatalf("%v after %q", err, got)
		}
		got = append(got, buf[:n]...)
	}
	var names []string
	for _, line := range strings.Split(strings.TrimSpace(string(got)), "\r\n") {
		f := strings.Fields(line)
		if f[3] != `"hello"` { // the client's handshake, which MONITOR shows as Redis does
			names = append(names, f[3])
		}
	}
	if strings.Join(names, " ") != `"multi" "set" "get" "exec"` {
		t.Fatalf("MONITOR showed %v:\n%s", names, got)
	}
}

// CLIENT LIST shows a connection in MULTI with flag x and its queued command count.
func TestClientList_ShowsMulti(t *testing.T) {
	s := testserver.Start(t)
	out := testserver.Exchange(t, s.Addr, []byte("MULTI\r\nSET a 1\r\nGET a\r\n"), len("+OK\r\n+QUEUED\r\n+QUEUED\r\n"))
	if string(out) != "+OK\r\n+QUEUED\r\n+QUEUED\r\n" {
		t.Fatalf("replies %q", out)
	}
	c, err := net.Dial("tcp", s.Addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_, _ = c.Write([]byte("MULTI\r\nSET a 1\r\nGET a\r\n"))
	list := s.Client(t)
	deadline := time.Now().Add(20 * time.Second)
	for {
		v, err := list.ClientList(testCtx).Result()
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(v, "flags=x ") && strings.Contains(v, " multi=2 ") {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("no client in MULTI with 2 commands queued:\n%s", v)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// The TTL worker deleting a watched key makes EXEC fail, as a write would.
func TestWatch_ActiveExpiryFailsExec(t *testing.T) {
	s := testserver.Start(t)
	c := s.Client(t)
	c.Set(testCtx, "soon", "v", 300*time.Millisecond)
	if err := c.Watch(testCtx, func(tx *redis.Tx) error {
		// Wait until the TTL worker removed the key (DBSIZE counts it until then; EXISTS
		// would expire it lazily, which is not what this test is about).
		for i := 0; c.DBSize(testCtx).Val() != 0; i++ {
			if i == 2000 {
				return errors.New("the key was not expired in 20s")
			}
			time.Sleep(10 * time.Millisecond)
		}
		_, err := tx.TxPipelined(testCtx, func(p redis.Pipeliner) error {
			p.Set(testCtx, "soon", "again", 0)
			return nil
		})
		return err
	}, "soon"); !errors.Is(err, redis.TxFailedErr) {
		t.Fatalf("EXEC after the watched key expired: %v, want the transaction to fail", err)
	}
}

// In RESP3 a failed EXEC is the null reply.
func TestExec_WatchFailure_RESP3Null(t *testing.T) {
	s := testserver.Start(t)
	c := s.Client(t)
	c.Set(testCtx, "k", "v", 0)
	conn, err := net.Dial("tcp", s.Addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	read := func(want string) {
		t.Helper()
		_ = conn.SetReadDeadline(time.Now().Add(20 * time.Second))
		buf := make([]byte, 4096)
		var got []byte
		for !bytes.HasSuffix(got, []byte(want)) {
			n, err := conn.Read(buf)
			if err != nil {
				t.Fatalf("%v after %q, want it to end with %q", err, got, want)
			}
			got = append(got, buf[:n]...)
		}
	}
	_, _ = conn.Write([]byte("HELLO 3\r\nWATCH k\r\n"))
	read("+OK\r\n")
	c.Set(testCtx, "k", "changed", 0)
	_, _ = conn.Write([]byte("MULTI\r\nGET k\r\nEXEC\r\n"))
	read("+OK\r\n+QUEUED\r\n_\r\n")
}

// INFO commandstats counts EXEC and each command it ran, as Redis does; an EXECABORT is a
// failed EXEC, a command refused while queueing a rejected call of its own.
func TestExec_CommandStats(t *testing.T) {
	s := testserver.Start(t)
	c := s.Client(t)
	// The command table, and so its counters, is the process's: start from zero.
	if err := c.ConfigResetStat(testCtx).Err(); err != nil {
		t.Fatal(err)
	}
	out := testserver.Exchange(t, s.Addr, []byte("MULTI\r\nSET a 1\r\nGET a\r\nEXEC\r\nMULTI\r\nSET a\r\nEXEC\r\n"),
		len("+OK\r\n+QUEUED\r\n+QUEUED\r\n*2\r\n+OK\r\n$1\r\n1\r\n+OK\r\n-ERR wrong number of arguments for 'set' command\r\n-EXECABORT Transaction discarded because of previous errors.\r\n"))
	if !strings.HasSuffix(string(out), "-EXECABORT Transaction discarded because of previous errors.\r\n") {
		t.Fatalf("replies %q", out)
	}
	info, err := c.Info(testCtx, "commandstats").Result()
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"cmdstat_multi:calls=2,", "cmdstat_set:calls=1,", "cmdstat_get:calls=1,",
		"cmdstat_exec:calls=2,",
	} {
		if !strings.Contains(info, want) {
			t.Errorf("INFO commandstats lacks %q:\n%s", want, info)
		}
	}
	for _, line := range strings.Split(info, "\r\n") {
		switch {
		case strings.HasPrefix(line, "cmdstat_exec:") && !strings.HasSuffix(line, "rejected_calls=0,failed_calls=1"):
			t.Errorf("EXEC: %s, want 1 failed call (the EXECABORT)", line)
		case strings.HasPrefix(line, "cmdstat_set:") && !strings.HasSuffix(line, "rejected_calls=1,failed_calls=0"):
			t.Errorf("SET: %s, want 1 rejected call (wrong arity while queueing)", line)
		}
	}
}

// What a client queues in MULTI is held by the server: past client-query-buffer-limit the
// client is disconnected, nothing it queued runs, and everyone else is served.
func TestMulti_QueueIsBounded(t *testing.T) {
	s := testserver.Start(t, "--client-query-buffer-limit", "1mb")
	var payload bytes.Buffer
	payload.WriteString("MULTI\r\n")
	value := strings.Repeat("v", 64<<10)
	for range 40 { // 2.5 MB queued
		fmt.Fprintf(&payload, "*3\r\n$3\r\nSET\r\n$5\r\nbound\r\n$%d\r\n%s\r\n", len(value), value)
	}
	payload.WriteString("EXEC\r\n")
	out := testserver.Exchange(t, s.Addr, payload.Bytes(), 1<<30) // reads until the server closes
	if bytes.Contains(out, []byte("*40")) {
		t.Fatal("the transaction ran")
	}
	if !bytes.HasPrefix(out, []byte("+OK\r\n+QUEUED\r\n")) {
		t.Fatalf("replies %.80q", out)
	}
	c := s.Client(t)
	expectNil(t, c, "GET", "bound")
}

// execWithin runs cmds (each a command's arguments) in MULTI/EXEC on c and returns EXEC's
// replies, failing the test when EXEC does not answer within 20 s (a reply missing from
// EXEC's array leaves the client waiting for it).
func execWithin(t *testing.T, c *redis.Client, cmds ...[]any) []redis.Cmder {
	t.Helper()
	ctx, cancel := context.WithTimeout(testCtx, 20*time.Second)
	defer cancel()
	replies, err := c.TxPipelined(ctx, func(p redis.Pipeliner) error {
		for _, args := range cmds {
			p.Do(ctx, args...)
		}
		return nil
	})
	if err != nil && !errors.As(err, new(redis.Error)) {
		t.Fatalf("EXEC of %v: %v", cmds, err)
	}
	return replies
}

// A script queued in MULTI holds every shard in EXEC, since EXEC cannot run its queue again:
// one with no keys that calls a command of every shard (or of a key in another shard than
// its route would guess) gets its reply inside EXEC's array, as redis-server 7.0.15 answers.
// Each body is this test's own: the script cache outlives the test's server.
func TestExec_ScriptReachingEveryShard_Replies(t *testing.T) {
	s := testserver.Start(t)
	c := s.Client(t, func(o *redis.Options) { o.ContextTimeoutEnabled, o.ReadTimeout = true, 20*time.Second })
	other := keyInAnotherShard(t, s, "only")
	for _, tc := range []struct {
		body string
		want string
	}{
		{"return redis.pcall('DBSIZE')", "1"},
		{"return redis.call('DBSIZE')", "1"},
		{"return redis.pcall('KEYS', '*')", "[only]"},
		{"local cur, ks = '0', {} repeat local r = redis.pcall('SCAN', cur) cur = r[1] " +
			"for _, k in ipairs(r[2]) do ks[#ks+1] = k end until cur == '0' return ks", "[only]"},
		{"return redis.pcall('RANDOMKEY')", "only"},
		{"return redis.pcall('INFO', 'keyspace')", "# Keyspace\r\ndb0:keys=1,expires=0,avg_ttl=0\r\n"},
		{"return redis.pcall('EXISTS', 'only', '" + other + "')", "1"},
		{"return redis.pcall('SET', '" + other + "', 'x')", "OK"},
		{"return redis.pcall('SWAPDB', '0', '1')", "OK"},
		{"return redis.pcall('FLUSHDB')", "OK"},
		{"return redis.pcall('FLUSHALL')", "OK"},
	} {
		body := tc.body + " -- TestExec_ScriptReachingEveryShard_Replies"
		// The orders the fault was first seen in: a whole-keyspace write just before.
		for _, setup := range [][][]any{
			{{"flushall"}, {"set", "only", "v"}},
			{{"flushall"}, {"set", "only", "v"}, {"flushdb"}, {"set", "only", "v"}},
			{{"flushall"}, {"set", "only", "v"}, {"swapdb", 0, 1}, {"swapdb", 0, 1}},
		} {
			for _, args := range setup {
				if err := c.Do(testCtx, args...).Err(); err != nil {
					t.Fatal(err)
				}
			}
			replies := execWithin(t, c, []any{"eval", body, 0})
			if len(replies) != 1 {
				t.Fatalf("%s after %v: EXEC answered %d replies", tc.body, setup, len(replies))
			}
			v, err := replies[0].(*redis.Cmd).Result()
			if got := fmt.Sprint(v); err != nil || got != tc.want {
				t.Fatalf("%s after %v: %q, %v; want %q", tc.body, setup, got, err, tc.want)
			}
			body += " " // a fresh script for the next order: the first run is the one that went wrong
		}
	}
}

// The other orders, in one pipeline: a script that strays outside MULTI just before a
// transaction with a script, and FLUSHALL before a transaction with a script and a function
// that call DBSIZE. The replies are, byte for byte, redis-server 7.0.15's.
func TestExec_ScriptsAndFunctionsAfterStrayAndFlush_MatchRedis(t *testing.T) {
	s := testserver.Start(t)
	const tag = " -- TestExec_ScriptsAndFunctionsAfterStrayAndFlush_MatchRedis"
	var in []byte
	for _, args := range [][]string{
		{"FUNCTION", "LOAD", "#!lua name=execlib\nredis.register_function('execdbsize', function() return redis.call('DBSIZE') end)"},
		{"SET", "only", "v"},
		{"EVAL", "return redis.call('DBSIZE')" + tag, "0"},
		{"MULTI"},
		{"EVAL", "return redis.call('KEYS', '*')" + tag, "0"},
		{"EXEC"},
		{"FLUSHALL"},
		{"MULTI"},
		{"EVAL", "return redis.call('DBSIZE') " + tag, "0"},
		{"FCALL", "execdbsize", "0"},
		{"EXEC"},
		{"PING"},
	} {
		in = fmt.Appendf(in, "*%d\r\n", len(args))
		for _, a := range args {
			in = fmt.Appendf(in, "$%d\r\n%s\r\n", len(a), a)
		}
	}
	const want = "$7\r\nexeclib\r\n+OK\r\n:1\r\n+OK\r\n+QUEUED\r\n*1\r\n*1\r\n$4\r\nonly\r\n" +
		"+OK\r\n+OK\r\n+QUEUED\r\n+QUEUED\r\n*2\r\n:0\r\n:0\r\n+PONG\r\n"
	if got := string(testserver.ExchangeUntil(t, s.Addr, in, "+PONG\r\n")); got != want {
		t.Fatalf("replies %q\nwant     %q", got, want)
	}
}
