package reactor_test

import (
	"bufio"
	"bytes"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"shardis/codec"
	"shardis/internal/testserver"
)

// A write sent alone is answered by the shard that ran it, not by a wake-up of the loop: at
// pipeline 1 each such wake-up was an eventfd write and a loop's trip through epoll.
func TestWriteDirect_WritesOneAtATime_LoopNotWokenPerReply(t *testing.T) {
	s := testserver.Start(t)
	c := rtDial(t, s.Addr)
	ask := asker(t, c, bufio.NewReader(c))
	if got := ask("SET", "warm", "up"); got != "+OK\r\n" {
		t.Fatalf("SET: %q", got)
	}
	const n = 200
	before := s.Srv.Wakes()
	for i := range n {
		if got := ask("SET", "k"+strconv.Itoa(i), "v"); got != "+OK\r\n" {
			t.Fatalf("SET %d: %q", i, got)
		}
		// A command sent the moment the previous reply arrived may find that batch not yet
		// marked done, and its loop is then woken (under the race detector a quarter of
		// them): the pause leaves the shard the time to finish.
		time.Sleep(2 * time.Millisecond)
	}
	// Before, every one of them woke the loop (n wake-ups); none is needed.
	if woken := s.Srv.Wakes() - before; woken > n/4 {
		t.Fatalf("%d SETs sent one at a time woke the loop %d times", n, woken)
	}
	if got := ask("GET", "k199"); got != "$1\r\nv\r\n" {
		t.Fatalf("GET: %q", got)
	}
}

// Replies the socket does not take at once (the client reads nothing until it sent all its
// commands, one at a time) arrive whole and in order: the loop writes what the shard could not.
func TestWriteDirect_RepliesLargerThanTheSocketTakes_ArriveWholeInOrder(t *testing.T) {
	s := testserver.Start(t)
	c := rtDial(t, s.Addr)
	_ = c.(*net.TCPConn).SetReadBuffer(64 << 10)
	r := bufio.NewReaderSize(c, 64<<10)
	size := 960 << 10 // below a streamed reply's size
	value := func(i int) string { return strings.Repeat(strconv.Itoa(i%10), size) }
	if got := asker(t, c, r)("SET", "big", value(0)); got != "+OK\r\n" {
		t.Fatalf("SET: %q", got)
	}
	// Eight replies of 960 KiB: more than the server's socket buffer (4 MiB at most) and the
	// client's hold, so some write finds the socket full.
	const rounds = 8
	for i := 1; i <= rounds; i++ {
		if _, err := c.Write(rtCommand("SET", "big", value(i), "GET")); err != nil {
			t.Fatal(err)
		}
		time.Sleep(20 * time.Millisecond) // its own batch
	}
	_ = c.SetReadDeadline(time.Now().Add(60 * time.Second))
	for i := 1; i <= rounds; i++ {
		got, err := rtReadReply(r)
		if err != nil {
			t.Fatalf("reply %d: %v", i, err)
		}
		if want := codec.AppendBulkString(nil, value(i-1)); !bytes.Equal(got, want) {
			t.Fatalf("reply %d: %d bytes starting %q, want %d of %q", i, len(got), got[:min(len(got), 8)], len(want), want[:8])
		}
	}
	if got := asker(t, c, r)("PING"); got != "+PONG\r\n" {
		t.Fatalf("PING after them: %q", got)
	}
}

// Clients that send a write and leave at once never make a reply reach another connection,
// whatever socket the closed one's number goes to next.
func TestWriteDirect_ClientsLeavingBeforeTheirReply_OthersGetOnlyTheirOwn(t *testing.T) {
	s := testserver.Start(t)
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for w := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				c, err := net.Dial("tcp", s.Addr)
				if err != nil {
					continue
				}
				_, _ = c.Write(rtCommand("SET", "gone"+strconv.Itoa(w), strconv.Itoa(i)))
				_ = c.Close()
			}
		}()
	}
	defer func() { close(stop); wg.Wait() }()
	for range 50 {
		c := rtDial(t, s.Addr)
		ask := asker(t, c, bufio.NewReader(c))
		for j := range 5 {
			want := "e" + strconv.Itoa(j)
			if got := ask("ECHO", want); got != string(codec.AppendBulkString(nil, want)) {
				t.Fatalf("ECHO %s: %q", want, got)
			}
			if got := ask("INCR", "mine"); !strings.HasPrefix(got, ":") {
				t.Fatalf("INCR: %q", got)
			}
		}
		_ = c.Close()
	}
}
