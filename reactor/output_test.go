package reactor_test

import (
	"bufio"
	"bytes"
	"io"
	"strconv"
	"strings"
	"testing"
	"time"

	"shardis/internal/testserver"
)

// outputAdmin is a reading client of s that sets client-output-buffer-limit and the 1 MiB
// value "{big}", and answers ask.
func outputAdmin(t *testing.T, s *testserver.Server, limit string) (ask func(...string) string) {
	t.Helper()
	c, r := dialReader(t, s.Addr)
	r = bufio.NewReaderSize(r, 2<<20)
	ask = asker(t, c, r)
	if got := ask("CONFIG", "SET", "client-output-buffer-limit", limit); got != "+OK\r\n" {
		t.Fatalf("CONFIG SET client-output-buffer-limit %q = %q", limit, got)
	}
	if got := ask("SET", "{big}", strings.Repeat("v", 1<<20)); got != "+OK\r\n" {
		t.Fatalf("SET {big} = %q", got)
	}
	return ask
}

// waitGone waits (bounded) until CLIENT LIST no longer shows client id.
func waitGone(t *testing.T, ask func(...string) string, id string) {
	t.Helper()
	for i := 0; ; i++ {
		if got := ask("CLIENT", "LIST", "ID", id); !strings.Contains(got, "id="+id+" ") {
			return
		}
		if i == 6000 {
			t.Fatalf("client %s that does not read is still connected after 60s: %s",
				id, ask("CLIENT", "LIST", "ID", id))
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// clientField returns field name (e.g. "omem") of client id in CLIENT LIST, -1 when absent.
func clientField(ask func(...string) string, id, name string) int {
	line := ask("CLIENT", "LIST", "ID", id)
	i := strings.Index(line, " "+name+"=")
	if i < 0 {
		return -1
	}
	v := line[i+len(name)+2:]
	v = v[:strings.IndexByte(v, ' ')]
	n, _ := strconv.Atoi(v)
	return n
}

// A client that pipelines many GETs of a 1 MiB value and never reads is dropped as soon as
// the replies it holds reach client-output-buffer-limit's hard limit, as in Redis: the
// server produces little more than the limit's worth of replies (not one per GET), the write
// pipelined behind the GETs never runs, and other clients are served. Whether the GETs are
// answered in the event loop (nothing before them waits) or in their shard (behind a write).
func TestOutputLimit_PipelinedBigGetsNeverRead_DroppedAtHardLimit(t *testing.T) {
	for _, tc := range []struct{ name, first, get, last string }{
		{"in the loop", "", "GET {big}", "SET {big}after 1"},
		// The GETs wait behind the first SET, and the last writes their shard: they run there.
		{"in the shard", "SET {big}first x\r\n", "GET {big}", "SET {big}after 1"},
		// Multi-shard commands, run holding their shards, the last one with them.
		{"holding shards", "", "MGET {big} a b c d", "MSET {big}after 1 a 1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := testserver.Start(t)
			ask := outputAdmin(t, s, "normal 8mb 4mb 60")
			lazy, lr := dialReader(t, s.Addr)
			id := clientID(t, lazy, lr)
			const gets = 300 // 300 MiB of replies asked for
			var req bytes.Buffer
			req.WriteString(tc.first)
			for range gets {
				req.WriteString(tc.get + "\r\n")
			}
			req.WriteString(tc.last + "\r\n")
			alloc := allocatedDuring(func() {
				if _, err := lazy.Write(req.Bytes()); err != nil {
					t.Fatal(err)
				}
				waitGone(t, ask, id)
			})
			t.Logf("%d MiB allocated for %d GETs of 1 MiB, limit 8 MiB", alloc>>20, gets)
			// The replies up to the limit, the values read for them, and slack for the
			// slices the shards account in; far below one reply per GET.
			if alloc > gets<<20/3 && !raceDetector { // the race detector's allocations count too
				t.Fatalf("%d MiB allocated while %d MiB of replies were asked for: the replies "+
					"were produced past the limit", alloc>>20, gets)
			}
			// What was sent before the close arrives, then EOF or a reset: not every reply.
			_ = lazy.SetReadDeadline(time.Now().Add(120 * time.Second))
			n, err := io.Copy(io.Discard, lr)
			if err != nil && !strings.Contains(err.Error(), "reset") {
				t.Fatalf("after %d bytes: %v, want the server to close the connection", n, err)
			}
			if n >= gets<<20 {
				t.Fatalf("every reply arrived (%d bytes)", n)
			}
			if got := ask("EXISTS", "{big}after"); got != ":0\r\n" {
				t.Fatalf("the SET pipelined after the limit was hit ran: EXISTS = %q", got)
			}
			if got := ask("STRLEN", "{big}"); got != ":1048576\r\n" {
				t.Fatalf("another client after the drop: STRLEN = %q", got)
			}
		})
	}
}

// Past the soft limit for longer than its seconds, a client that does not read is dropped,
// though the socket takes a little of its output all the time.
func TestOutputLimit_OverSoftLimitTooLong_Dropped(t *testing.T) {
	s := testserver.Start(t)
	ask := outputAdmin(t, s, "normal 0 4mb 1")
	lazy, lr := dialReader(t, s.Addr)
	id := clientID(t, lazy, lr)
	if _, err := lazy.Write(bytes.Repeat([]byte("GET {big}\r\n"), 32)); err != nil {
		t.Fatal(err)
	}
	waitGone(t, ask, id)
	if got := ask("PING"); got != "+PONG\r\n" {
		t.Fatalf("PING = %q", got)
	}
}

// CLIENT LIST's omem counts every reply the server holds for a client that does not read,
// not only what the network buffer holds (which the server keeps near 1 MiB).
func TestOutputLimit_HeldRepliesShownAsOmem(t *testing.T) {
	s := testserver.Start(t)
	ask := outputAdmin(t, s, "normal 0 0 0")
	lazy, lr := dialReader(t, s.Addr)
	id := clientID(t, lazy, lr)
	const gets = 32
	if _, err := lazy.Write(bytes.Repeat([]byte("GET {big}\r\n"), gets)); err != nil {
		t.Fatal(err)
	}
	// The kernel's socket buffers take a few MiB of the 32; the server holds the rest.
	const want = 16 << 20
	for i := 0; ; i++ {
		omem, tot := clientField(ask, id, "omem"), clientField(ask, id, "tot-mem")
		if omem >= want && tot >= omem {
			break
		}
		if i == 3000 {
			t.Fatalf("omem=%d tot-mem=%d for %d unread replies of 1 MiB; want omem at least %d",
				omem, tot, gets, want)
		}
		time.Sleep(10 * time.Millisecond)
	}
	// Read it all: every reply arrives.
	_ = lazy.SetReadDeadline(time.Now().Add(120 * time.Second))
	r := bufio.NewReaderSize(lr, 2<<20)
	for i := range gets {
		if got, err := rtReadReply(r); err != nil || len(got) != 1<<20+len("$1048576\r\n\r\n") {
			t.Fatalf("reply %d: %d bytes, %v", i, len(got), err)
		}
	}
}

// As in Redis, a client's first 16 KiB of output are not counted against its limit (Redis
// keeps them in the client's own buffer): with a hard limit of 10 bytes a reply of 16,310
// bytes is sent, one of 16,410 drops the client.
func TestOutputLimit_First16KiBNotCounted(t *testing.T) {
	s := testserver.Start(t)
	ask := outputAdmin(t, s, "normal 10 0 0")
	ask("SET", "v16", strings.Repeat("a", 16300))
	ask("SET", "v17", strings.Repeat("a", 16400))
	c, r := dialReader(t, s.Addr)
	id := clientID(t, c, r)
	if _, err := c.Write(rtCommand("GET", "v16")); err != nil {
		t.Fatal(err)
	}
	if got, err := rtReadReply(r); err != nil || len(got) != 16310 {
		t.Fatalf("GET v16: %d bytes, %v", len(got), err)
	}
	if _, err := c.Write(rtCommand("GET", "v17")); err != nil {
		t.Fatal(err)
	}
	waitGone(t, ask, id)
}

// A reply whose size the client's count sets, not the data (SRANDMEMBER, HRANDFIELD and
// ZRANDMEMBER with a negative count), stops being made where it passes the hard limit, as
// Redis stops adding to a client it is to close: one such command cannot make gigabytes.
func TestOutputLimit_CountSizedReply_StopsAtHardLimit(t *testing.T) {
	s := testserver.Start(t)
	ask := outputAdmin(t, s, "normal 4mb 0 0")
	for _, setup := range [][]string{{"SADD", "s", "a", "b"}, {"HSET", "h", "f", "v"}, {"ZADD", "z", "1", "m"}} {
		if got := ask(setup...); got != ":1\r\n" && got != ":2\r\n" {
			t.Fatalf("%v = %q", setup, got)
		}
	}
	// 20 million draws: about 140 MB of reply each (280 MB with values or scores).
	for _, cmd := range []string{"SRANDMEMBER s -20000000", "HRANDFIELD h -20000000 WITHVALUES",
		"ZRANDMEMBER z -20000000 WITHSCORES"} {
		t.Run(strings.Fields(cmd)[0], func(t *testing.T) {
			lazy, lr := dialReader(t, s.Addr)
			id := clientID(t, lazy, lr)
			alloc := allocatedDuring(func() {
				if _, err := lazy.Write([]byte(cmd + "\r\nSET after 1\r\n")); err != nil {
					t.Fatal(err)
				}
				waitGone(t, ask, id)
			})
			t.Logf("%s: %d MiB allocated, limit 4 MiB", cmd, alloc>>20)
			if alloc > 64<<20 && !raceDetector {
				t.Fatalf("%s: %d MiB allocated with a 4 MiB limit: the reply was made whole", cmd, alloc>>20)
			}
			_ = lazy.SetReadDeadline(time.Now().Add(120 * time.Second))
			if n, _ := io.Copy(io.Discard, lr); n >= 4<<20 {
				t.Fatalf("%s: %d bytes arrived past a 4 MiB limit", cmd, n)
			}
			if got := ask("EXISTS", "after"); got != ":0\r\n" {
				t.Fatalf("the SET after the cut reply ran: EXISTS = %q", got)
			}
		})
	}
}
