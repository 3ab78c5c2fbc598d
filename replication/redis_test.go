package replication_test

import (
	"bufio"
	"bytes"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"shardis/internal/testserver"
	"shardis/rdb"
)

// startRedis starts a redis-server 7.0 on a free loopback port (the test is skipped without
// one) with the extra arguments, and returns a client of it, its port and its directory.
func startRedis(t *testing.T, args ...string) (*redis.Client, int, string) {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		t.Skip("redis-server is not installed")
	}
	dir := t.TempDir()
	port := testserver.FreePort(t)
	argv := append([]string{"--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--save", "",
		"--appendonly", "no", "--dir", dir, "--enable-debug-command", "yes"}, args...)
	cmd := exec.Command(bin, argv...)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	c := redis.NewClient(&redis.Options{Addr: "127.0.0.1:" + strconv.Itoa(port), DisableIdentity: true,
		Protocol: 2, MaxRetries: -1})
	t.Cleanup(func() { c.Close() })
	waitFor(t, "redis-server to answer", func() bool { return c.Ping(ctx).Err() == nil })
	return c, port, dir
}

// loadEveryType writes keys of every type (a stream with a group and pending entries, an
// HLL, expiries) into databases 0 and 3, some across shards in one MULTI.
func loadEveryType(t *testing.T, c *redis.Client, prefix string, n int) {
	t.Helper()
	for _, db := range []int{0, 3} {
		p := c.Pipeline()
		p.Select(ctx, db)
		for i := range n {
			k := fmt.Sprintf("%s:%d:%d", prefix, db, i)
			p.Set(ctx, k+":s", i, 0)
			p.HSet(ctx, k+":h", "f", i, "g", strings.Repeat("x", i%100))
			p.RPush(ctx, k+":l", "a", "b", i)
			p.SAdd(ctx, k+":set", "m", i)
			p.ZAdd(ctx, k+":z", redis.Z{Score: float64(i) / 3, Member: "m"})
			if i%10 == 0 {
				p.XAdd(ctx, &redis.XAddArgs{Stream: k + ":x", ID: "*", Values: []string{"f", "v", "g", strconv.Itoa(i)}})
				p.PFAdd(ctx, k+":hll", "a", "b", i)
				p.Expire(ctx, k+":s", time.Hour)
			}
		}
		if _, err := p.Exec(ctx); err != nil {
			t.Fatalf("load db %d: %v", db, err)
		}
	}
	x := prefix + ":grp:x"
	for i := range 20 {
		c.XAdd(ctx, &redis.XAddArgs{Stream: x, ID: "*", Values: []string{"n", strconv.Itoa(i)}})
	}
	if err := c.XGroupCreate(ctx, x, "g", "0").Err(); err != nil {
		t.Fatal(err)
	}
	if err := c.XReadGroup(ctx, &redis.XReadGroupArgs{Group: "g", Consumer: "c1", Streams: []string{x, ">"}, Count: 5}).Err(); err != nil {
		t.Fatal(err)
	}
	tx := c.TxPipeline()
	tx.MSet(ctx, prefix+":m1", 1, prefix+":m2", 2, prefix+":m3", 3)
	tx.Incr(ctx, prefix+":m1")
	if _, err := tx.Exec(ctx); err != nil {
		t.Fatal(err)
	}
}

// digestOf is DEBUG DIGEST, which shardis computes as Redis does.
func digestOf(t *testing.T, c *redis.Client) string {
	t.Helper()
	d, err := c.Do(ctx, "DEBUG", "DIGEST").Text()
	if err != nil {
		t.Fatalf("DEBUG DIGEST: %v", err)
	}
	return d
}

func waitSameDigest(t *testing.T, a, b *redis.Client) {
	t.Helper()
	var da, db string
	deadline := time.Now().Add(2 * time.Minute)
	for {
		da, db = digestOf(t, a), digestOf(t, b)
		if da == db {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("digests still differ after two minutes: %s vs %s", da, db)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func TestRedisReplica_OfShardis_SameDigestUnderWrites(t *testing.T) {
	master := testserver.Start(t, debugFlags...)
	mc := master.Client(t)
	loadEveryType(t, mc, "before", 300)
	host, port := hostPort(t, master)
	rc, _, _ := startRedis(t, "--replicaof", host, strconv.Itoa(port))
	loadEveryType(t, mc, "during", 100) // while the replica syncs
	waitFor(t, "the redis-server replica's link", func() bool {
		return infoField(t, rc, "replication", "master_link_status") == "up"
	})
	loadEveryType(t, mc, "after", 100)
	mc.Del(ctx, "before:0:1:s", "before:0:2:h")
	waitSameDigest(t, mc, rc)
	if n, err := mc.Do(ctx, "WAIT", 1, 60000).Int(); err != nil || n != 1 {
		t.Fatalf("WAIT 1 with a redis-server replica: %d %v", n, err)
	}
	if got := infoField(t, mc, "replication", "connected_slaves"); got != "1" {
		t.Fatalf("connected_slaves = %q", got)
	}
}

func TestShardisReplica_OfRedis_SameDigestThenTakesWritesAfterNoOne(t *testing.T) {
	mc, port, _ := startRedis(t)
	loadEveryType(t, mc, "before", 300)
	if err := mc.Do(ctx, "FUNCTION", "LOAD", "#!lua name=lib\nredis.register_function{function_name='f', callback=function() return 1 end, flags={'no-writes'}}").Err(); err != nil {
		t.Fatal(err)
	}
	replica := testserver.Start(t, debugFlags...)
	rc := replica.Client(t)
	if err := rc.Do(ctx, "REPLICAOF", "127.0.0.1", port).Err(); err != nil {
		t.Fatal(err)
	}
	loadEveryType(t, mc, "during", 100)
	waitFor(t, "the link to the redis-server", func() bool {
		return infoField(t, rc, "replication", "master_link_status") == "up"
	})
	loadEveryType(t, mc, "after", 100)
	mc.Do(ctx, "PEXPIRE", "after:0:1:h", 1) // expiry reaches the replica as a DEL
	mc.FlushDB(ctx)                         // database 0 only
	waitSameDigest(t, mc, rc)
	if got, err := rc.Do(ctx, "FCALL_RO", "f", 0).Int(); err != nil || got != 1 {
		t.Fatalf("the master's function on the replica: %d %v", got, err)
	}
	if err := rc.Set(ctx, "x", 1, 0).Err(); err == nil || !strings.HasPrefix(err.Error(), "READONLY") {
		t.Fatalf("a write on the replica: %v, want READONLY", err)
	}
	if err := rc.Do(ctx, "REPLICAOF", "NO", "ONE").Err(); err != nil {
		t.Fatal(err)
	}
	if err := rc.Set(ctx, "x", 1, 0).Err(); err != nil {
		t.Fatalf("a write after REPLICAOF NO ONE: %v", err)
	}
}

func TestRedisCliRDB_FromShardis_RedisLoadsSameDigest(t *testing.T) {
	if _, err := exec.LookPath("redis-cli"); err != nil {
		t.Skip("redis-cli is not installed")
	}
	master := testserver.Start(t, debugFlags...)
	mc := master.Client(t)
	loadEveryType(t, mc, "k", 200)
	host, port := hostPort(t, master)
	dir := t.TempDir()
	file := filepath.Join(dir, "dump.rdb")
	out, err := exec.Command("redis-cli", "-h", host, "-p", strconv.Itoa(port), "--rdb", file).CombinedOutput()
	if err != nil {
		t.Fatalf("redis-cli --rdb: %v\n%s", err, out)
	}
	if out, err := exec.Command("redis-check-rdb", file).CombinedOutput(); err != nil {
		t.Fatalf("redis-check-rdb refused the file: %v\n%s", err, out)
	}
	rc, _, rdir := startRedisOn(t, file)
	_ = rdir
	if a, b := digestOf(t, mc), digestOf(t, rc); a != b {
		t.Fatalf("redis-server loaded the file to digest %s, shardis has %s", b, a)
	}
}

// startRedisOn starts a redis-server that loads file at start.
func startRedisOn(t *testing.T, file string) (*redis.Client, int, string) {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "dump.rdb"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	return startRedis(t, "--dir", dir, "--dbfilename", "dump.rdb")
}

func TestShardisReplica_OfRedis_LinkDropped_ContinuesWithAPartialSync(t *testing.T) {
	mc, port, _ := startRedis(t)
	loadEveryType(t, mc, "before", 50)
	replica := testserver.Start(t, debugFlags...)
	rc := replica.Client(t)
	if err := rc.Do(ctx, "REPLICAOF", "127.0.0.1", port).Err(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the link to the redis-server", func() bool {
		return infoField(t, rc, "replication", "master_link_status") == "up"
	})
	waitSameDigest(t, mc, rc)
	if err := mc.Do(ctx, "CLIENT", "KILL", "TYPE", "replica").Err(); err != nil {
		t.Fatal(err)
	}
	loadEveryType(t, mc, "while-down", 50)
	waitFor(t, "a partial resync on the redis-server", func() bool {
		return infoField(t, mc, "stats", "sync_partial_ok") == "1"
	})
	waitSameDigest(t, mc, rc)
	if got := infoField(t, mc, "stats", "sync_full"); got != "1" {
		t.Fatalf("sync_full = %s on the redis-server: the link synced in full again", got)
	}
	waitFor(t, "the replica's offset to reach the master's", func() bool {
		return infoField(t, rc, "replication", "slave_repl_offset") == infoField(t, mc, "replication", "master_repl_offset")
	})
}

func TestRedisCliFunctionsRDB_FromShardis_OnlyTheLibraries(t *testing.T) {
	if _, err := exec.LookPath("redis-cli"); err != nil {
		t.Skip("redis-cli is not installed")
	}
	master := testserver.Start(t, debugFlags...)
	mc := master.Client(t)
	loadEveryType(t, mc, "k", 10)
	if err := mc.Do(ctx, "FUNCTION", "LOAD", "#!lua name=lib\nredis.register_function('f', function() return 1 end)").Err(); err != nil {
		t.Fatal(err)
	}
	host, port := hostPort(t, master)
	file := filepath.Join(t.TempDir(), "functions.rdb")
	out, err := exec.Command("redis-cli", "-h", host, "-p", strconv.Itoa(port), "--functions-rdb", file).CombinedOutput()
	if err != nil {
		t.Fatalf("redis-cli --functions-rdb: %v\n%s", err, out)
	}
	rc, _, _ := startRedisOn(t, file)
	if n, err := rc.DBSize(ctx).Result(); err != nil || n != 0 {
		t.Fatalf("keys in the functions-only file: %d %v", n, err)
	}
	if got, err := rc.Do(ctx, "FCALL", "f", 0).Int(); err != nil || got != 1 {
		t.Fatalf("the library from the file: %d %v", got, err)
	}
}

// A redis-cli --replica sees what a Redis replica applies: an EXEC's and a script's writes,
// even all in one shard, come inside MULTI … EXEC.
func TestRedisCliReplica_ExecInOneShard_InsideMultiExec(t *testing.T) {
	if _, err := exec.LookPath("redis-cli"); err != nil {
		t.Skip("redis-cli is not installed")
	}
	master := testserver.Start(t, "--shards", "1")
	mc := master.Client(t)
	host, port := hostPort(t, master)
	cli := exec.Command("redis-cli", "-h", host, "-p", strconv.Itoa(port), "--replica")
	out, err := cli.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cli.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cli.Process.Kill(); _ = cli.Wait() })
	waitFor(t, "redis-cli to be a replica", func() bool {
		return infoField(t, mc, "replication", "connected_slaves") == "1"
	})
	lines := make(chan string, 100)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	// redis-cli may drop what follows the RDB in the same read: the first write is only a
	// marker that the stream is being printed.
	for started := false; !started; {
		mc.Set(ctx, "start", 1, 0)
		select {
		case l := <-lines:
			started = strings.Contains(l, `"start"`)
		case <-time.After(100 * time.Millisecond):
		}
	}
	tx := mc.TxPipeline()
	tx.Set(ctx, "a", 1, 0)
	tx.Incr(ctx, "a")
	if _, err := tx.Exec(ctx); err != nil {
		t.Fatal(err)
	}
	if err := mc.Eval(ctx, "redis.call('set', 'b', 1); redis.call('incr', 'b')", nil).Err(); err != nil && err != redis.Nil {
		t.Fatal(err)
	}
	mc.Set(ctx, "end", 1, 0)
	var got []string
	deadline := time.After(time.Minute)
	for len(got) == 0 || !strings.Contains(got[len(got)-1], `"end"`) {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatalf("redis-cli stopped; it printed %q", got)
			}
			if strings.HasPrefix(l, `"`) && !strings.HasPrefix(l, `"PING"`) && !strings.HasPrefix(l, `"SELECT"`) &&
				!strings.Contains(l, `"start"`) {
				got = append(got, l)
			}
		case <-deadline:
			t.Fatalf("waited a minute; redis-cli printed %q", got)
		}
	}
	// INCR is logged as its effect, a SET (the binlog's deterministic form).
	want := []string{`"MULTI"`, `"SET","a","1"`, `"SET","a","2","KEEPTTL"`, `"EXEC"`,
		`"MULTI"`, `"SET","b","1"`, `"SET","b","2","KEEPTTL"`, `"EXEC"`, `"SET","end","1"`}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("the stream:\n%q\nwant:\n%q", got, want)
	}
}

// fakeRedisMaster accepts replica connections and plays a Redis master's part of the
// handshake; serve then writes what the test wants on the connection.
func fakeRedisMaster(t *testing.T, serve func(n int, c net.Conn, br *bufio.Reader)) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for n := 1; ; n++ {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func(n int, c net.Conn) {
				defer c.Close()
				br := bufio.NewReader(c)
				for {
					args, err := readCommand(br)
					if err != nil {
						return
					}
					switch strings.ToUpper(args[0]) {
					case "PING":
						c.Write([]byte("+PONG\r\n"))
					case "REPLCONF":
						if strings.EqualFold(args[1], "shardis-positions") {
							c.Write([]byte("-ERR Unrecognized REPLCONF option: shardis-positions\r\n"))
						} else if !strings.EqualFold(args[1], "ack") {
							c.Write([]byte("+OK\r\n"))
						}
					case "PSYNC":
						serve(n, c, br)
						return
					}
				}
			}(n, c)
		}
	}()
	return ln.Addr().(*net.TCPAddr).Port
}

// readCommand reads one RESP array of bulk strings.
func readCommand(br *bufio.Reader) ([]string, error) {
	line, err := br.ReadString('\n')
	if err != nil {
		return nil, err
	}
	n, _ := strconv.Atoi(strings.TrimSpace(line[1:]))
	args := make([]string, 0, n)
	for range n {
		if _, err := br.ReadString('\n'); err != nil {
			return nil, err
		}
		a, err := br.ReadString('\n')
		if err != nil {
			return nil, err
		}
		args = append(args, strings.TrimRight(a, "\r\n"))
	}
	return args, nil
}

// A link that drops inside a MULTI block counts none of it: the next session's offset is
// what it applied, whatever the unfinished block held.
func TestShardisReplica_OfRedis_DroppedInsideMulti_OffsetCountsOnlyWhatApplied(t *testing.T) {
	var empty bytes.Buffer
	w := rdb.NewWriter(&empty, rdb.DefaultOptions())
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	ping := "*1\r\n$4\r\nPING\r\n"
	port := fakeRedisMaster(t, func(n int, c net.Conn, br *bufio.Reader) {
		if n == 1 {
			fmt.Fprintf(c, "+FULLRESYNC %s 0\r\n$%d\r\n", strings.Repeat("a", 40), empty.Len())
			c.Write(empty.Bytes())
			c.Write([]byte("*1\r\n$5\r\nMULTI\r\n*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$1\r\nv\r\n"))
			time.Sleep(200 * time.Millisecond)
			return // the link drops inside the MULTI
		}
		c.Write([]byte("+CONTINUE\r\n" + ping))
		for { // keep the link up, reading the ACKs
			if _, err := readCommand(br); err != nil {
				return
			}
		}
	})
	replica := testserver.Start(t)
	rc := replica.Client(t)
	if err := rc.Do(ctx, "REPLICAOF", "127.0.0.1", port).Err(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the second session to apply its PING", func() bool {
		return infoField(t, rc, "replication", "master_link_status") == "up" &&
			infoField(t, rc, "replication", "slave_repl_offset") != "0"
	})
	if got := infoField(t, rc, "replication", "slave_repl_offset"); got != strconv.Itoa(len(ping)) {
		t.Fatalf("slave_repl_offset = %s, want %d: the unfinished MULTI of the dropped link was counted", got, len(ping))
	}
	if n, _ := rc.Exists(ctx, "k").Result(); n != 0 {
		t.Fatal("the unfinished MULTI's SET was applied")
	}
}

// A Redis replica finds the end of an RDB sent between EOF marks by the mark being the last
// bytes it read: as a Redis master does, the stream after the RDB waits for the replica's
// first ACK (sent once it loaded), or commands glued to the mark hide it and the replica waits
// for the RDB's end forever.
func TestRedisReplica_EOFMarkedRDB_NothingFollowsTheMarkBeforeTheFirstACK(t *testing.T) {
	t.Parallel()
	master := testserver.Start(t, debugFlags...)
	mc := master.Client(t)
	loadEveryType(t, mc, "before", 20)
	conn, err := net.Dial("tcp", master.Addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	br := bufio.NewReader(conn)
	if _, err := conn.Write([]byte("*3\r\n$8\r\nREPLCONF\r\n$4\r\ncapa\r\n$3\r\neof\r\n")); err != nil {
		t.Fatal(err)
	}
	if line, err := br.ReadString('\n'); err != nil || line != "+OK\r\n" {
		t.Fatalf("REPLCONF capa eof: %q %v", line, err)
	}
	if _, err := conn.Write([]byte("*3\r\n$5\r\nPSYNC\r\n$1\r\n?\r\n$2\r\n-1\r\n")); err != nil {
		t.Fatal(err)
	}
	_ = conn.SetReadDeadline(time.Now().Add(time.Minute))
	var head string
	for head == "" || head == "\n" {
		if head, err = br.ReadString('\n'); err != nil {
			t.Fatal(err)
		}
	}
	if !strings.HasPrefix(head, "+FULLRESYNC") {
		t.Fatalf("PSYNC: %q", head)
	}
	mark, err := br.ReadString('\n')
	if err != nil || !strings.HasPrefix(mark, "$EOF:") {
		t.Fatalf("the RDB's head: %q %v", mark, err)
	}
	eof := []byte(strings.TrimSpace(strings.TrimPrefix(mark, "$EOF:")))
	// Writes after the snapshot: their commands wait for the replica's ACK.
	if err := mc.Set(ctx, "after", "1", 0).Err(); err != nil {
		t.Fatal(err)
	}
	var got []byte
	for !bytes.HasSuffix(got, eof) {
		b, err := br.ReadByte()
		if err != nil {
			t.Fatalf("reading the RDB: %v", err)
		}
		got = append(got, b)
	}
	_ = conn.SetReadDeadline(time.Now().Add(time.Second))
	if b, err := br.ReadByte(); err == nil {
		t.Fatalf("the master sent %q right after the EOF mark, before the replica's ACK", b)
	}
	if _, err := conn.Write([]byte("*3\r\n$8\r\nREPLCONF\r\n$3\r\nACK\r\n$1\r\n0\r\n")); err != nil {
		t.Fatal(err)
	}
	_ = conn.SetReadDeadline(time.Now().Add(time.Minute))
	rest := ""
	for !strings.Contains(rest, "after") {
		line, err := br.ReadString('\n')
		if err != nil {
			t.Fatalf("the stream after the ACK: %q %v", rest, err)
		}
		rest += line
	}
}

func TestShardisReplica_OfRedis_Restart_ResumesWithAPartialSync(t *testing.T) {
	mc, port, _ := startRedis(t)
	loadEveryType(t, mc, "before", 50)
	dir := t.TempDir()
	start := func() (*testserver.Server, *redis.Client) {
		s := testserver.StartIn(t, dir, append([]string{"--replicaof", "127.0.0.1 " + strconv.Itoa(port)}, debugFlags...)...)
		c := s.Client(t)
		waitFor(t, "the link to the redis-server", func() bool {
			return infoField(t, c, "replication", "master_link_status") == "up"
		})
		return s, c
	}
	replica, rc := start()
	waitSameDigest(t, mc, rc)
	replica.Stop()
	loadEveryType(t, mc, "while-away", 50)
	_, rc = start()
	waitSameDigest(t, mc, rc)
	if full, partial := infoField(t, mc, "stats", "sync_full"), infoField(t, mc, "stats", "sync_partial_ok"); full != "1" || partial != "1" {
		t.Fatalf("sync_full %s sync_partial_ok %s on the redis-server, want 1 and 1", full, partial)
	}
}

func TestShardisReplica_OfRedis_LinkDroppedAfterASelect_GoesOnInThatDatabase(t *testing.T) {
	mc, port, _ := startRedis(t)
	replica := testserver.Start(t, debugFlags...)
	rc := replica.Client(t)
	if err := rc.Do(ctx, "REPLICAOF", "127.0.0.1", port).Err(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the link to the redis-server", func() bool {
		return infoField(t, rc, "replication", "master_link_status") == "up"
	})
	m3 := redis.NewClient(&redis.Options{Addr: "127.0.0.1:" + strconv.Itoa(port), DB: 3, Protocol: 2, DisableIdentity: true})
	defer m3.Close()
	m3.Set(ctx, "first", "1", 0) // the master's stream selects database 3
	waitSameDigest(t, mc, rc)
	if err := mc.Do(ctx, "CLIENT", "KILL", "TYPE", "replica").Err(); err != nil {
		t.Fatal(err)
	}
	m3.Set(ctx, "second", "2", 0) // no SELECT again: the stream is still in database 3
	waitFor(t, "a partial resync on the redis-server", func() bool {
		return infoField(t, mc, "stats", "sync_partial_ok") == "1"
	})
	waitSameDigest(t, mc, rc)
}
