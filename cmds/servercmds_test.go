package cmds_test

import (
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"shardis/config"
	"shardis/executor"
	"shardis/internal/testserver"
	"shardis/reactor"
	"shardis/server"
	"shardis/shard"
)

func TestConfig_GetSet(t *testing.T) {
	s := testserver.Start(t)
	c := s.Client(t)
	got, err := c.ConfigGet(connCtx, "maxclients").Result()
	if err != nil || got["maxclients"] != "10000" || len(got) != 1 {
		t.Fatalf("CONFIG GET maxclients = %v, %v", got, err)
	}
	if err := c.ConfigSet(connCtx, "hz", "20").Err(); err != nil {
		t.Fatal(err)
	}
	if err := c.Do(connCtx, "CONFIG", "SET", "slowlog-max-len", "7", "timeout", "30").Err(); err != nil {
		t.Fatal(err)
	}
	flat, err := c.Do(connCtx, "CONFIG", "GET", "hz", "slowlog-*", "TIMEOUT").StringSlice()
	if err != nil || len(flat)%2 != 0 {
		t.Fatalf("CONFIG GET = %v, %v", flat, err)
	}
	got = map[string]string{}
	for i := 0; i < len(flat); i += 2 {
		got[flat[i]] = flat[i+1]
	}
	want := map[string]string{"hz": "20", "slowlog-max-len": "7", "slowlog-log-slower-than": "10000", "TIMEOUT": "30"}
	if len(got) != len(want) {
		t.Fatalf("CONFIG GET = %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Fatalf("CONFIG GET = %v, want %v", got, want)
		}
	}
	if got, _ := c.ConfigGet(connCtx, "no-such-*").Result(); len(got) != 0 {
		t.Fatalf("CONFIG GET no-such-* = %v", got)
	}

	r := connDial(t, s.Addr)
	r.do("-ERR syntax error\r\n", "CONFIG", "SET", "hz", "10", "timeout")
	r.do("-ERR wrong number of arguments for 'config|set' command\r\n", "CONFIG", "SET", "hz")
	r.do("-ERR wrong number of arguments for 'config|get' command\r\n", "CONFIG", "GET")
	r.do("-ERR Unknown option or number of arguments for CONFIG SET - 'nope'\r\n", "CONFIG", "SET", "nope", "1")
	r.do("-ERR CONFIG SET failed (possibly related to argument 'maxclients') - argument couldn't be parsed into an integer\r\n",
		"CONFIG", "SET", "maxclients", "many")
	r.do("-ERR The server is running without a config file\r\n", "CONFIG", "REWRITE")
	r.do("-ERR unknown subcommand 'FOO'. Try CONFIG HELP.\r\n", "CONFIG", "FOO")
	r.cmd("CONFIG", "HELP")
	r.expect("*11\r\n+CONFIG <subcommand> [<arg> [value] [opt] ...]. Subcommands are:\r\n+GET <pattern>\r\n")
}

func TestConfig_Rewrite_WithConfigFile(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "shardis.conf")
	port := testserver.FreePort(t)
	conf := "port " + strconv.Itoa(port) + "\nbind 127.0.0.1\ndir " + dir + "\nshards 2\nloops 1\ncpu-pin no\nhz 15\n"
	if err := os.WriteFile(file, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load([]string{file})
	if err != nil {
		t.Fatal(err)
	}
	st, err := shard.Open(shard.Options{Dir: cfg.Dir(), Shards: cfg.Shards(), Databases: cfg.Databases(),
		WriteBufferSize: 32 << 20})
	if err != nil {
		t.Fatal(err)
	}
	state := server.New(cfg, st)
	srv := reactor.New(state, executor.New(state))
	done := make(chan error, 1)
	go func() { done <- srv.Serve() }()
	t.Cleanup(func() {
		srv.Stop()
		<-done
		_ = st.Close()
	})
	<-srv.Ready()
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	var r *connRaw
	for range 100 {
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	r = connDial(t, addr)
	r.do("*2\r\n$2\r\nhz\r\n$2\r\n15\r\n", "CONFIG", "GET", "hz")
	r.do("-ERR Rewriting config file: CONFIG REWRITE is not supported by shardis, edit "+file+" instead\r\n",
		"CONFIG", "REWRITE")
	r.cmd("INFO", "server")
	if info := r.bulk(); !strings.Contains(info, "\r\nconfig_file:"+file+"\r\n") {
		t.Fatalf("INFO server does not name the config file:\n%s", info)
	}
}

func TestConfig_MaxClients_RejectsExtraConnection(t *testing.T) {
	s := testserver.Start(t)
	a := connDial(t, s.Addr)
	a.do("+OK\r\n", "CONFIG", "SET", "maxclients", "2")
	b := connDial(t, s.Addr)
	b.do("+PONG\r\n", "PING")
	c := connDial(t, s.Addr)
	c.expect("-ERR max number of clients reached\r\n")
	c.expectEOF()
	a.cmd("INFO", "stats")
	if stats := a.bulk(); !strings.Contains(stats, "\r\nrejected_connections:1\r\n") {
		t.Fatalf("INFO stats after a rejected connection:\n%s", stats)
	}
	// Raising the limit lets the next one in.
	a.do("+OK\r\n", "CONFIG", "SET", "maxclients", "3")
	d := connDial(t, s.Addr)
	d.do("+PONG\r\n", "PING")
}

func TestConfig_ResetStat(t *testing.T) {
	s := testserver.Start(t)
	c := clientOneConn(t, s)
	for range 3 {
		c.Get(connCtx, "missing")
	}
	if err := c.Do(connCtx, "CONFIG", "SET", "slowlog-log-slower-than", "0").Err(); err != nil {
		t.Fatal(err)
	}
	c.Ping(connCtx)
	if err := c.Do(connCtx, "CONFIG", "RESETSTAT").Err(); err != nil {
		t.Fatal(err)
	}
	info, err := c.Info(connCtx, "commandstats", "stats").Result()
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(info, "cmdstat_get:") || !strings.Contains(info, "cmdstat_config|resetstat:calls=1,") {
		t.Fatalf("commandstats after RESETSTAT:\n%s", info)
	}
	if !strings.Contains(info, "\r\ntotal_commands_processed:1\r\n") {
		t.Fatalf("stats after RESETSTAT:\n%s", info)
	}
	// As in Redis, RESETSTAT leaves the slow log alone.
	if n, err := c.Do(connCtx, "SLOWLOG", "LEN").Int(); err != nil || n < 3 {
		t.Fatalf("SLOWLOG LEN after RESETSTAT = %d, %v", n, err)
	}
}

func TestTime_ReturnsServerTime(t *testing.T) {
	s := testserver.Start(t)
	c := s.Client(t)
	got, err := c.Time(connCtx).Result()
	if err != nil {
		t.Fatal(err)
	}
	// The server's clock, not a speed check: a reply delayed by a busy machine stays within.
	before := time.Now()
	got, err = c.Time(connCtx).Result()
	if err != nil {
		t.Fatal(err)
	}
	if d := time.Since(got); got.Before(before.Add(-time.Second)) || d < -time.Second {
		t.Fatalf("TIME = %v, %v away from now", got, d)
	}
	r := connDial(t, s.Addr)
	r.do("-ERR wrong number of arguments for 'time' command\r\n", "TIME", "x")
}

func TestSave_CreatesCheckpointAndUpdatesLastsave(t *testing.T) {
	s := testserver.Start(t)
	c := s.Client(t)
	if err := c.Set(connCtx, "saved", "1", 0).Err(); err != nil {
		t.Fatal(err)
	}
	before, err := c.LastSave(connCtx).Result()
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(1100 * time.Millisecond) // LASTSAVE has a one-second resolution
	if err := c.Save(connCtx).Err(); err != nil {
		t.Fatal(err)
	}
	after, _ := c.LastSave(connCtx).Result()
	if after <= before {
		t.Fatalf("LASTSAVE %d after SAVE, %d before", after, before)
	}
	if _, err := os.Stat(filepath.Join(s.Dir, "checkpoint", "CURRENT")); err != nil {
		t.Fatalf("checkpoint not written: %v", err)
	}
	info, _ := c.Info(connCtx, "persistence").Result()
	if !strings.Contains(info, "\r\nrdb_changes_since_last_save:0\r\n") || !strings.Contains(info, "\r\nrdb_saves:1\r\n") {
		t.Fatalf("INFO persistence after SAVE:\n%s", info)
	}
	r := connDial(t, s.Addr)
	r.do("-ERR wrong number of arguments for 'save' command\r\n", "SAVE", "x")
}

// bgsaveWait polls INFO until no BGSAVE runs.
func bgsaveWait(t *testing.T, c *redis.Client) string {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		info, err := c.Info(connCtx, "persistence").Result()
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(info, "\r\nrdb_bgsave_in_progress:0\r\n") {
			return info
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatal("BGSAVE did not finish in 10s")
	return ""
}

func TestBgsave_CreatesCheckpointDir(t *testing.T) {
	s := testserver.Start(t)
	c := s.Client(t)
	for i := range 100 {
		if err := c.Set(connCtx, "bg:"+strconv.Itoa(i), "v", 0).Err(); err != nil {
			t.Fatal(err)
		}
	}
	if v, err := c.BgSave(connCtx).Result(); err != nil || v != "Background saving started" {
		t.Fatalf("BGSAVE = %q, %v", v, err)
	}
	info := bgsaveWait(t, c)
	if !strings.Contains(info, "\r\nrdb_last_bgsave_status:ok\r\n") || strings.Contains(info, "rdb_last_bgsave_time_sec:-1") {
		t.Fatalf("INFO persistence after BGSAVE:\n%s", info)
	}
	if _, err := os.Stat(filepath.Join(s.Dir, "checkpoint", "CURRENT")); err != nil {
		t.Fatalf("checkpoint not written: %v", err)
	}
	// The checkpoint is a RocksDB database holding the keys: open it as a store's data
	// directory (which keeps its database in "rocksdb").
	s.Stop()
	restore := t.TempDir()
	if err := os.Symlink(filepath.Join(s.Dir, "checkpoint"), filepath.Join(restore, "rocksdb")); err != nil {
		t.Fatal(err)
	}
	st := testserver.OpenStore(t, restore, 4)
	var keys int64
	for i := range st.NumShards() {
		keys += st.Shard(i).Keys(0)
	}
	if keys != 100 {
		t.Fatalf("checkpoint holds %d keys, want 100", keys)
	}
}

func TestBgsave_Errors(t *testing.T) {
	s := testserver.Start(t)
	r := connDial(t, s.Addr)
	r.do("-ERR syntax error\r\n", "BGSAVE", "NOW")
	r.do("-ERR syntax error\r\n", "BGSAVE", "SCHEDULE", "x")
	// Two in one pipeline: the second finds the first still running or done.
	r.send("BGSAVE SCHEDULE\r\n")
	r.expect("+Background saving started\r\n")
	bgsaveWait(t, s.Client(t))
}

func TestShutdown_StopsServer(t *testing.T) {
	s := testserver.Start(t)
	r := connDial(t, s.Addr)
	r.do("-ERR syntax error\r\n", "SHUTDOWN", "NOSAVE", "SAVE")
	r.do("-ERR syntax error\r\n", "SHUTDOWN", "ABORT", "NOW")
	r.do("-ERR syntax error\r\n", "SHUTDOWN", "FOO")
	r.do("-ERR No shutdown in progress.\r\n", "SHUTDOWN", "ABORT")
	r.cmd("SHUTDOWN", "NOSAVE")
	r.expectEOF()
	select {
	case <-s.Srv.Stopped():
	case <-time.After(10 * time.Second):
		t.Fatal("server still running 10s after SHUTDOWN")
	}
	// The listener closes as the engine stops.
	deadline := time.Now().Add(5 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", s.Addr, time.Second)
		if err != nil {
			break
		}
		c.Close()
		if time.Now().After(deadline) {
			t.Fatal("server still accepts connections 5s after SHUTDOWN")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestShutdown_SaveTakesCheckpoint(t *testing.T) {
	s := testserver.Start(t)
	r := connDial(t, s.Addr)
	r.do("+OK\r\n", "SET", "k", "v")
	r.cmd("SHUTDOWN", "SAVE")
	r.expectEOF()
	<-s.Srv.Stopped()
	if _, err := os.Stat(filepath.Join(s.Dir, "checkpoint", "CURRENT")); err != nil {
		t.Fatalf("SHUTDOWN SAVE wrote no checkpoint: %v", err)
	}
}

func TestSlowlog_ThresholdZeroLogsEverything(t *testing.T) {
	start := time.Now()
	s := testserver.Start(t)
	c := clientOneConn(t, s, func(o *redis.Options) { o.ClientName = "slowpoke" })
	if err := c.ConfigSet(connCtx, "slowlog-log-slower-than", "0").Err(); err != nil {
		t.Fatal(err)
	}
	if err := c.Set(connCtx, "slow:key", "value", 0).Err(); err != nil {
		t.Fatal(err)
	}
	logs, err := c.SlowLogGet(connCtx, 2).Result()
	if err != nil {
		t.Fatal(err)
	}
	if len(logs) != 2 {
		t.Fatalf("SLOWLOG GET 2 returned %d entries", len(logs))
	}
	e := logs[0] // newest first
	if strings.Join(e.Args, " ") != "set slow:key value" || e.ClientName != "slowpoke" || e.ClientAddr == "" {
		t.Fatalf("newest entry = %+v", e)
	}
	if logs[1].ID >= e.ID || e.Time.After(time.Now().Add(time.Second)) || e.Time.Before(start.Add(-time.Second)) {
		t.Fatalf("entries = %+v", logs)
	}
	n, err := c.Do(connCtx, "SLOWLOG", "LEN").Int()
	if err != nil || n < 3 {
		t.Fatalf("SLOWLOG LEN = %d, %v", n, err)
	}
	all, _ := c.Do(connCtx, "SLOWLOG", "GET", "-1").Slice()
	if len(all) < n {
		t.Fatalf("SLOWLOG GET -1 returned %d of %d", len(all), n)
	}
	if err := c.Do(connCtx, "SLOWLOG", "RESET").Err(); err != nil {
		t.Fatal(err)
	}
	// SLOWLOG RESET itself is the one entry left.
	logs, _ = c.SlowLogGet(connCtx, -1).Result()
	if len(logs) != 1 || strings.Join(logs[0].Args, " ") != "SLOWLOG RESET" {
		t.Fatalf("after RESET: %+v", logs)
	}
	// -1 disables it.
	if err := c.ConfigSet(connCtx, "slowlog-log-slower-than", "-1").Err(); err != nil {
		t.Fatal(err)
	}
	c.Do(connCtx, "SLOWLOG", "RESET")
	c.Ping(connCtx)
	if n, _ := c.Do(connCtx, "SLOWLOG", "LEN").Int(); n != 0 {
		t.Fatalf("SLOWLOG LEN with logging disabled = %d", n)
	}

	r := connDial(t, s.Addr)
	r.do("-ERR count should be greater than or equal to -1\r\n", "SLOWLOG", "GET", "-2")
	r.do("-ERR count should be greater than or equal to -1\r\n", "SLOWLOG", "GET", "x")
	r.do("-ERR unknown subcommand or wrong number of arguments for 'GET'. Try SLOWLOG HELP.\r\n", "SLOWLOG", "GET", "1", "2")
	r.do("*0\r\n", "SLOWLOG", "GET", "0")
	r.cmd("SLOWLOG", "HELP")
	r.expect("*12\r\n+SLOWLOG <subcommand> [<arg> [value] [opt] ...]. Subcommands are:\r\n")
}

func TestMonitor_ReceivesOtherClientsCommands(t *testing.T) {
	s := testserver.Start(t)
	m := connDial(t, s.Addr)
	m.do("+OK\r\n", "MONITOR")
	c := s.Client(t)
	if err := c.Do(connCtx, "SELECT", "2").Err(); err != nil {
		t.Fatal(err)
	}
	r := connDial(t, s.Addr)
	r.do("+OK\r\n", "SET", "mon:key", "a b")
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		l := m.line()
		if strings.Contains(l, `"mon:key"`) {
			want := ` [0 ` + r.c.LocalAddr().String() + `] "SET" "mon:key" "a b"`
			if !strings.HasPrefix(l, "+") || !strings.HasSuffix(l, want) {
				t.Fatalf("MONITOR line %q, want suffix %q", l, want)
			}
			// CLIENT LIST shows the monitor with flag O.
			list, _ := c.ClientList(connCtx).Result()
			if !strings.Contains(list, " flags=O ") {
				t.Fatalf("CLIENT LIST has no monitor:\n%s", list)
			}
			return
		}
	}
	t.Fatal("MONITOR did not show the SET")
}

func TestDebug_SleepAndHelp(t *testing.T) {
	s := testserver.Start(t)
	r := connDial(t, s.Addr)
	start := time.Now()
	r.do("+OK\r\n", "DEBUG", "SLEEP", "0.2")
	if d := time.Since(start); d < 200*time.Millisecond {
		t.Fatalf("DEBUG SLEEP 0.2 took %v", d)
	}
	r.do("+OK\r\n", "DEBUG", "SLEEP", "abc") // strtod: no number is 0
	r.do("-ERR unknown subcommand or wrong number of arguments for 'foo'. Try DEBUG HELP.\r\n", "DEBUG", "foo")
	r.do("-ERR unknown subcommand or wrong number of arguments for 'sleep'. Try DEBUG HELP.\r\n", "debug", "sleep")
	r.do("-ERR wrong number of arguments for 'debug' command\r\n", "DEBUG")
	r.cmd("DEBUG", "HELP")
	r.expect("*5\r\n+DEBUG <subcommand> [<arg> [value] [opt] ...]. Subcommands are:\r\n+SLEEP <seconds>\r\n")
}
