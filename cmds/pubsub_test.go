package cmds_test

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"shardis/internal/testserver"
)

func TestPubSub_GoRedisChannelsAndPatterns(t *testing.T) {
	s := testserver.Start(t)
	ctx := context.Background()
	pub := s.Client(t)
	sub := s.Client(t)
	ps := sub.Subscribe(ctx, "news")
	defer ps.Close()
	if _, err := ps.Receive(ctx); err != nil { // the subscribe confirmation
		t.Fatal(err)
	}
	if err := ps.PSubscribe(ctx, "n*"); err != nil {
		t.Fatal(err)
	}
	if _, err := ps.Receive(ctx); err != nil {
		t.Fatal(err)
	}
	if n, err := pub.Publish(ctx, "news", "hello").Result(); err != nil || n != 2 {
		t.Fatalf("PUBLISH = %d, %v; want 2 (channel + pattern)", n, err)
	}
	got := map[string]string{}
	for range 2 {
		m, err := ps.ReceiveMessage(ctx)
		if err != nil {
			t.Fatal(err)
		}
		got[m.Pattern] = m.Channel + "=" + m.Payload
	}
	if got[""] != "news=hello" || got["n*"] != "news=hello" {
		t.Fatalf("messages %v", got)
	}
	if n := pub.PubSubNumSub(ctx, "news").Val()["news"]; n != 1 {
		t.Fatalf("NUMSUB %d", n)
	}
	if n := pub.PubSubNumPat(ctx).Val(); n != 1 {
		t.Fatalf("NUMPAT %d", n)
	}
	if ch := pub.PubSubChannels(ctx, "*").Val(); len(ch) != 1 || ch[0] != "news" {
		t.Fatalf("CHANNELS %v", ch)
	}
	info := pub.Info(ctx, "stats").Val()
	if !strings.Contains(info, "pubsub_channels:1\r\npubsub_patterns:1\r\npubsubshard_channels:0\r\n") {
		t.Fatalf("INFO stats:\n%s", info)
	}
	list := pub.ClientList(ctx).Val()
	if !strings.Contains(list, "flags=P db=0 sub=1 psub=1 ssub=0") {
		t.Fatalf("CLIENT LIST does not show the subscriber:\n%s", list)
	}
	if err := ps.Unsubscribe(ctx, "news"); err != nil {
		t.Fatal(err)
	}
	if err := ps.PUnsubscribe(ctx, "n*"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool {
		return pub.PubSubNumSub(ctx, "news").Val()["news"] == 0 && pub.PubSubNumPat(ctx).Val() == 0
	})
}

// waitFor polls cond with a generous bound: it waits for behaviour, never asserts a time.
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	for i := 0; !cond(); i++ {
		if i == 3000 {
			t.Fatal("condition not reached in 30s")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// The replies of a RESP2 and a RESP3 subscriber, byte for byte as redis-server 7.0.15 wrote
// them for the same input.
func TestPubSub_SubscribedModeMatchesRedis(t *testing.T) {
	s := testserver.Start(t)
	in := "SSUBSCRIBE a\r\nGET x\r\nPING\r\nPING hi\r\nSUBSCRIBE b\r\nUNSUBSCRIBE\r\nSUNSUBSCRIBE\r\nGET x\r\n" +
		"UNSUBSCRIBE\r\nPUNSUBSCRIBE\r\nMULTI\r\nSUBSCRIBE c\r\nSSUBSCRIBE d\r\nEXEC\r\nPUBSUB NUMSUB c\r\n"
	want := "*3\r\n$10\r\nssubscribe\r\n$1\r\na\r\n:1\r\n" +
		"-ERR Can't execute 'get': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / QUIT / RESET are allowed in this context\r\n" +
		"*2\r\n$4\r\npong\r\n$0\r\n\r\n*2\r\n$4\r\npong\r\n$2\r\nhi\r\n" +
		"*3\r\n$9\r\nsubscribe\r\n$1\r\nb\r\n:1\r\n*3\r\n$11\r\nunsubscribe\r\n$1\r\nb\r\n:0\r\n" +
		"*3\r\n$12\r\nsunsubscribe\r\n$1\r\na\r\n:0\r\n$-1\r\n" +
		"*3\r\n$11\r\nunsubscribe\r\n$-1\r\n:0\r\n*3\r\n$12\r\npunsubscribe\r\n$-1\r\n:0\r\n" +
		"+OK\r\n+QUEUED\r\n+QUEUED\r\n*2\r\n*3\r\n$9\r\nsubscribe\r\n$1\r\nc\r\n:1\r\n" +
		"-ERR SSUBSCRIBE isn't allowed for a DENY BLOCKING client\r\n" +
		"-ERR Can't execute 'pubsub|numsub': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / QUIT / RESET are allowed in this context\r\n"
	if got := testserver.Exchange(t, s.Addr, []byte(in), len(want)); string(got) != want {
		t.Fatalf("got\n%q\nwant\n%q", got, want)
	}
	// The first connection's subscription to c ends when the server has seen it close, which
	// the next connection's PUBSUB CHANNELS must not race.
	c := s.Client(t)
	waitFor(t, func() bool { return c.PubSubNumSub(context.Background(), "c").Val()["c"] == 0 })

	in = "HELLO 3\r\nSUBSCRIBE a b\r\nPSUBSCRIBE a*\r\nPUBLISH a x\r\nPING\r\nUNSUBSCRIBE\r\nPUNSUBSCRIBE\r\n" +
		"UNSUBSCRIBE\r\nSSUBSCRIBE s\r\nSPUBLISH s m\r\nPUBSUB NUMSUB a s\r\nPUBSUB SHARDNUMSUB s\r\nPUBSUB NUMPAT\r\n" +
		"PUBSUB CHANNELS\r\nPUBSUB SHARDCHANNELS\r\nPUBSUB FOO\r\nPUBSUB CHANNELS a b\r\nRESET\r\nPUBSUB SHARDNUMSUB s\r\n"
	want = ">3\r\n$9\r\nsubscribe\r\n$1\r\na\r\n:1\r\n>3\r\n$9\r\nsubscribe\r\n$1\r\nb\r\n:2\r\n" +
		">3\r\n$10\r\npsubscribe\r\n$2\r\na*\r\n:3\r\n>3\r\n$7\r\nmessage\r\n$1\r\na\r\n$1\r\nx\r\n" +
		">4\r\n$8\r\npmessage\r\n$2\r\na*\r\n$1\r\na\r\n$1\r\nx\r\n:2\r\n+PONG\r\n" +
		">3\r\n$11\r\nunsubscribe\r\n$1\r\na\r\n:2\r\n>3\r\n$11\r\nunsubscribe\r\n$1\r\nb\r\n:1\r\n" +
		">3\r\n$12\r\npunsubscribe\r\n$2\r\na*\r\n:0\r\n>3\r\n$11\r\nunsubscribe\r\n_\r\n:0\r\n" +
		">3\r\n$10\r\nssubscribe\r\n$1\r\ns\r\n:1\r\n>3\r\n$8\r\nsmessage\r\n$1\r\ns\r\n$1\r\nm\r\n:1\r\n" +
		"*4\r\n$1\r\na\r\n:0\r\n$1\r\ns\r\n:0\r\n*2\r\n$1\r\ns\r\n:1\r\n:0\r\n*0\r\n*1\r\n$1\r\ns\r\n" +
		"-ERR unknown subcommand 'FOO'. Try PUBSUB HELP.\r\n" +
		"-ERR unknown subcommand or wrong number of arguments for 'CHANNELS'. Try PUBSUB HELP.\r\n" +
		"+RESET\r\n*2\r\n$1\r\ns\r\n:0\r\n"
	got := testserver.ExchangeUntil(t, s.Addr, []byte(in), "+RESET\r\n*2\r\n$1\r\ns\r\n:0\r\n")
	if i := bytes.Index(got, []byte("*0\r\n>3")); i >= 0 { // skip HELLO's map
		got = got[i+4:]
	}
	if string(got) != want {
		t.Fatalf("got\n%q\nwant\n%q", got, want)
	}
}

// CLIENT KILL of a subscriber removes its subscriptions.
func TestPubSub_ClientKillClears(t *testing.T) {
	s := testserver.Start(t)
	ctx := context.Background()
	c := s.Client(t)
	ps := s.Client(t).Subscribe(ctx, "k")
	defer ps.Close()
	if _, err := ps.Receive(ctx); err != nil {
		t.Fatal(err)
	}
	if n, _ := c.ClientKillByFilter(ctx, "TYPE", "pubsub").Result(); n != 1 {
		t.Fatalf("CLIENT KILL TYPE pubsub killed %d", n)
	}
	waitFor(t, func() bool { return c.PubSubNumSub(ctx, "k").Val()["k"] == 0 })
}

// Subscribers spread over every event loop each receive every message of every publisher,
// in each publisher's order: 1,000 subscribers x 10,000 messages (two publishers of 5,000),
// as the issue asks; -short runs 100 x 200.
func TestPubSub_ManySubscribersInOrder(t *testing.T) {
	subscribers, perPublisher, publishers := 1000, 5000, 2
	if testing.Short() {
		subscribers, perPublisher = 100, 100
	}
	s := testserver.Start(t, "--loops", "4", "--maxclients", "5000")
	ctx := context.Background()
	total := perPublisher * publishers
	var wg sync.WaitGroup
	errs := make(chan error, subscribers)
	ready := make(chan struct{}, subscribers)
	for i := range subscribers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- receiveInOrder(ctx, s.Addr, i, publishers, total, ready)
		}()
	}
	for range subscribers {
		select {
		case <-ready:
		case err := <-errs:
			t.Fatal(err)
		}
	}
	var pw sync.WaitGroup
	for p := range publishers {
		pw.Add(1)
		go func() {
			defer pw.Done()
			c := s.Client(t)
			for i := 0; i < perPublisher; i += 100 {
				pipe := c.Pipeline()
				cmds := make([]*redis.IntCmd, 0, 100)
				for j := i; j < min(i+100, perPublisher); j++ {
					cmds = append(cmds, pipe.Publish(ctx, "ch", strconv.Itoa(p)+":"+strconv.Itoa(j)))
				}
				if _, err := pipe.Exec(ctx); err != nil {
					errs <- err
					return
				}
				for _, cmd := range cmds {
					if cmd.Val() != int64(subscribers) {
						errs <- fmt.Errorf("PUBLISH reached %d, want %d", cmd.Val(), subscribers)
						return
					}
				}
			}
		}()
	}
	pw.Wait()
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
}

// receiveInOrder subscribes to "ch" on a raw connection (go-redis's PubSub would be 1,000
// goroutines and channels more) and reads total messages, checking each publisher's order.
func receiveInOrder(ctx context.Context, addr string, id, publishers, total int, ready chan<- struct{}) error {
	c := redis.NewClient(&redis.Options{Addr: addr, DisableIdentity: true, Protocol: 2,
		ReadTimeout: 30 * time.Second, PoolSize: 1})
	defer c.Close()
	ps := c.Subscribe(ctx, "ch")
	defer ps.Close()
	if _, err := ps.Receive(ctx); err != nil {
		return err
	}
	ready <- struct{}{}
	next := make([]int, publishers)
	for n := 0; n < total; n++ {
		m, err := ps.ReceiveMessage(ctx)
		if err != nil {
			return fmt.Errorf("subscriber %d after %d messages: %w", id, n, err)
		}
		p, i, _ := strings.Cut(m.Payload, ":")
		pi, _ := strconv.Atoi(p)
		seq, _ := strconv.Atoi(i)
		if seq != next[pi] {
			return fmt.Errorf("subscriber %d: publisher %d's message %d arrived when %d was due", id, pi, seq, next[pi])
		}
		next[pi]++
	}
	return nil
}

// A subscriber that stops reading is disconnected at its output limit; the others are
// still served.
func TestPubSub_SlowSubscriberDisconnected(t *testing.T) {
	s := testserver.Start(t)
	ctx := context.Background()
	pub := s.Client(t)
	slow, err := net.Dial("tcp", s.Addr)
	if err != nil {
		t.Fatal(err)
	}
	defer slow.Close()
	if _, err := slow.Write([]byte("SUBSCRIBE big\r\n")); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool { return pub.PubSubNumSub(ctx, "big").Val()["big"] == 1 })
	ps := s.Client(t).Subscribe(ctx, "big")
	defer ps.Close()
	if _, err := ps.Receive(ctx); err != nil {
		t.Fatal(err)
	}
	ch := ps.Channel(redis.WithChannelSize(10000))
	msg := strings.Repeat("x", 64<<10)
	sent := 0
	runtime.GC()
	rssBefore := processRSS(t)
	// 32 MB of queue, plus what gnet and the kernel hold: far less than 4,000 x 64 KB.
	for ; sent < 4000; sent++ {
		if n := pub.Publish(ctx, "big", msg).Val(); n == 1 {
			break // the slow subscriber is gone
		}
		select {
		case <-ch:
		case <-time.After(30 * time.Second):
			t.Fatal("the reading subscriber got nothing")
		}
	}
	if sent == 4000 {
		t.Fatal("a subscriber that never reads was never disconnected")
	}
	// The server (this process) grew by about the pubsub class's hard limit (32 MB) and the
	// garbage of the messages, not by the 256 MB that 4,000 messages would be.
	if grew := processRSS(t) - rssBefore; grew > 128<<20 {
		t.Fatalf("RSS grew by %d MB while the slow subscriber was fed %d messages of 64 KB", grew>>20, sent)
	} else {
		t.Logf("RSS grew by %d MB; the slow subscriber went after %d messages of 64 KB", grew>>20, sent)
	}
	if n := pub.Publish(ctx, "big", "after").Val(); n != 1 {
		t.Fatalf("PUBLISH after the disconnect reached %d", n)
	}
}

// MONITOR shows a PUBLISH once, whether the loop ran it at once or after a pipelined write.
// A PUBLISH pipelined behind a write runs after it; RESET ends the subscriptions.
func TestPubSub_PublishInPipelineAndMonitorAndReset(t *testing.T) {
	s := testserver.Start(t)
	mon := testserver.Monitor(t, s.Addr)
	buf := make([]byte, 64<<10)
	var got []byte
	out := testserver.ExchangeUntil(t, s.Addr, []byte("PUBLISH a 1\r\nSET k v\r\nPUBLISH a 2\r\nSUBSCRIBE a\r\nRESET\r\nPUBSUB NUMSUB a\r\n"),
		"+RESET\r\n*2\r\n$1\r\na\r\n:0\r\n")
	want := ":0\r\n+OK\r\n:0\r\n*3\r\n$9\r\nsubscribe\r\n$1\r\na\r\n:1\r\n+RESET\r\n*2\r\n$1\r\na\r\n:0\r\n"
	if string(out) != want {
		t.Fatalf("got %q, want %q", out, want)
	}
	got = got[:0]
	for bytes.Count(got, []byte("\r\n")) < 6 {
		n, err := mon.Read(buf)
		if err != nil {
			t.Fatalf("%v after %q", err, got)
		}
		got = append(got, buf[:n]...)
	}
	var names []string
	for _, line := range strings.Split(strings.TrimSpace(string(got)), "\r\n") {
		names = append(names, strings.Fields(line)[3])
	}
	if strings.Join(names, " ") != `"PUBLISH" "SET" "PUBLISH" "SUBSCRIBE" "RESET" "PUBSUB"` {
		t.Fatalf("MONITOR showed %v:\n%s", names, got)
	}
}

// go-redis over RESP3: messages arrive as push frames, and the subscribed connection may
// still run other commands.
func TestPubSub_GoRedisRESP3(t *testing.T) {
	s := testserver.Start(t)
	ctx := context.Background()
	sub := s.Client(t, func(o *redis.Options) { o.Protocol = 3 })
	ps := sub.Subscribe(ctx, "r3")
	defer ps.Close()
	if _, err := ps.Receive(ctx); err != nil {
		t.Fatal(err)
	}
	pub := s.Client(t, func(o *redis.Options) { o.Protocol = 3 })
	for i := range 3 {
		if n, err := pub.Publish(ctx, "r3", strconv.Itoa(i)).Result(); err != nil || n != 1 {
			t.Fatalf("PUBLISH = %d, %v", n, err)
		}
	}
	for i := range 3 {
		m, err := ps.ReceiveMessage(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if m.Channel != "r3" || m.Payload != strconv.Itoa(i) {
			t.Fatalf("message %d: %+v", i, m)
		}
	}
	if err := ps.Ping(ctx); err != nil {
		t.Fatal(err)
	}
}

// processRSS returns this process's resident set size, from /proc.
func processRSS(t *testing.T) int64 {
	t.Helper()
	status, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Skipf("no /proc: %v", err)
	}
	for _, line := range strings.Split(string(status), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			if err != nil {
				t.Fatalf("VmRSS %q: %v", v, err)
			}
			return kb << 10
		}
	}
	t.Fatal("no VmRSS in /proc/self/status")
	return 0
}

// redis-py's PubSub (channels and patterns, keyspace notifications, a handler in a subscriber
// thread, unsubscribing) works as against Redis. Skipped where python3 has no redis module.
func TestPubSub_RedisPy(t *testing.T) {
	python := pythonWithRedis(t)
	s := testserver.Start(t)
	out, err := exec.Command(python, "testdata/pubsub/redis_py_pubsub.py", s.Addr).CombinedOutput()
	if err != nil || strings.TrimSpace(string(out)) != "ok" {
		t.Fatalf("redis-py PubSub: %v\n%s", err, out)
	}
}
