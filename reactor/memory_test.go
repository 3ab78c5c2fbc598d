package reactor_test

import (
	"bufio"
	"bytes"
	"net"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"strconv"
	"strings"
	"testing"
	"time"

	"shardis/internal/testserver"
)

// allocatedDuring returns the bytes the process allocated on the Go heap while f ran (the
// server runs in-process; the test's own writes come from buffers made before).
func allocatedDuring(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// writeInPieces writes p to c in pieces of size n, as a client streaming a request does.
func writeInPieces(t *testing.T, c net.Conn, p []byte, n int) {
	t.Helper()
	for len(p) > 0 {
		k := min(n, len(p))
		if _, err := c.Write(p[:k]); err != nil {
			t.Error(err)
			return
		}
		p = p[k:]
	}
}

// TestMemory_ManySmallArgumentsProportionalToInput streams one command of a million one-byte
// arguments in 64 KiB writes and measures what the server allocated per byte received: the
// parser, the input buffers and the batch must hold a small constant multiple of the input,
// and must not re-copy what arrived earlier on every read (which is quadratic).
func TestMemory_ManySmallArgumentsProportionalToInput(t *testing.T) {
	if raceDetector {
		t.Skip("the race detector's own allocations would be measured")
	}
	s := testserver.Start(t, "--loops", "1")
	c, r := dialReader(t, s.Addr)
	const args = 1 << 20
	// ECHO with a million arguments: parsed whole, then refused for its arity.
	req := []byte("*" + strconv.Itoa(args+1) + "\r\n$4\r\nECHO\r\n")
	req = append(req, bytes.Repeat([]byte("$1\r\nx\r\n"), args)...)
	var reply []byte
	alloc := allocatedDuring(func() {
		go writeInPieces(t, c, req, 64<<10)
		var err error
		if reply, err = rtReadReply(r); err != nil {
			t.Error(err)
		}
	})
	if string(reply) != "-ERR wrong number of arguments for 'echo' command\r\n" {
		t.Fatalf("reply %q", reply)
	}
	perByte := float64(alloc) / float64(len(req))
	t.Logf("%d bytes received in one command of %d arguments: %d bytes allocated, %.2f per byte received",
		len(req), args+1, alloc, perByte)
	if perByte > 8 {
		t.Fatalf("%.2f bytes allocated per byte received; want a small constant (at most 8)", perByte)
	}
	// Another client is served while a command of many arguments is still arriving.
	other := s.Client(t)
	half := len(req) / 2
	writeInPieces(t, c, req[:half], 64<<10)
	if err := other.Set(t.Context(), "k", "v", 0).Err(); err != nil {
		t.Fatal(err)
	}
	writeInPieces(t, c, req[half:], 64<<10)
	if reply, err := rtReadReply(r); err != nil || string(reply) != "-ERR wrong number of arguments for 'echo' command\r\n" {
		t.Fatalf("second command: %q, %v", reply, err)
	}
}

// TestMemory_BigValueFewCopies sets and gets a 64 MiB value and measures the Go heap
// allocated for each: a value must move through the server with a small constant number of
// copies.
func TestMemory_BigValueFewCopies(t *testing.T) {
	if raceDetector {
		t.Skip("the race detector's own allocations would be measured")
	}
	s := testserver.Start(t)
	c, r := dialReader(t, s.Addr)
	_ = c.SetReadDeadline(time.Now().Add(120 * time.Second))
	r = bufio.NewReaderSize(r, 1<<20)
	const size = 64 << 20
	val := bytes.Repeat([]byte("0123456789abcdef"), size/16)
	req := append([]byte("*3\r\n$3\r\nSET\r\n$6\r\nbigval\r\n$"+strconv.Itoa(size)+"\r\n"), val...)
	req = append(req, "\r\n"...)
	setAlloc := allocatedDuring(func() {
		go writeInPieces(t, c, req, 64<<10)
		if got, err := rtReadReply(r); err != nil || string(got) != "+OK\r\n" {
			t.Errorf("SET: %q, %v", got, err)
		}
	})
	var got []byte
	getAlloc := allocatedDuring(func() {
		if _, err := c.Write(rtCommand("GET", "bigval")); err != nil {
			t.Error(err)
			return
		}
		var err error
		if got, err = rtReadReply(r); err != nil {
			t.Error(err)
		}
	})
	head := "$" + strconv.Itoa(size) + "\r\n"
	if !bytes.Equal(got, append(append([]byte(head), val...), "\r\n"...)) {
		t.Fatalf("GET returned %d bytes: not the value", len(got))
	}
	// The test's reader made two copies of the reply (rtReadReply): not the server's.
	getAlloc -= 2 * uint64(len(got))
	t.Logf("64 MiB value: SET allocated %.2f bytes per byte of value, GET %.2f",
		float64(setAlloc)/size, float64(getAlloc)/size)
	// SET: the input, received into a buffer that doubles as the value arrives (twice its
	// size allocated in all); the meta and the binlog record go into RocksDB's WriteBatch
	// (outside the Go heap) from it, with no Go copy of their own. GET: the value read from RocksDB
	// and the reply; the socket takes the reply in pieces (drainOut), so gnet holds at most
	// about a MiB of it at a time (its buffers pooled; without the pieces it copied what the
	// socket did not take, up to the whole reply: 3 copies). A margin for what else a command
	// and the collector's emptying of pools cost.
	if setAlloc > size*26/10 || getAlloc > size*25/10 {
		t.Fatalf("SET allocated %d bytes, GET %d, for a value of %d; want at most 2 and 2 copies", setAlloc, getAlloc, size)
	}
}

// TestPartial_CompletedWhilePausedRunsAtUnpause: a command that arrived in two pieces (its
// start moved out of gnet's buffer) and is complete while CLIENT PAUSE holds it runs when the
// pause ends, though nothing new arrives to wake the connection's reads.
func TestPartial_CompletedWhilePausedRunsAtUnpause(t *testing.T) {
	s := testserver.Start(t)
	admin, ar := dialReader(t, s.Addr)
	ask := asker(t, admin, ar)
	c, r := dialReader(t, s.Addr)
	id := clientID(t, c, r)
	if got := ask("CLIENT", "PAUSE", "600000", "WRITE"); got != "+OK\r\n" {
		t.Fatalf("CLIENT PAUSE = %q", got)
	}
	req := rtCommand("SET", "k", "v")
	if _, err := c.Write(req[:len(req)-5]); err != nil {
		t.Fatal(err)
	}
	waitQbuf(t, ask, id, 2) // the "$1" of the value's header: what Redis's qbuf shows
	if _, err := c.Write(req[len(req)-5:]); err != nil {
		t.Fatal(err)
	}
	waitQbuf(t, ask, id, len(req)) // complete, and held by the pause
	if got := ask("CLIENT", "UNPAUSE"); got != "+OK\r\n" {
		t.Fatalf("CLIENT UNPAUSE = %q", got)
	}
	if got, err := rtReadReply(r); err != nil || string(got) != "+OK\r\n" {
		t.Fatalf("the held SET after UNPAUSE: %q, %v", got, err)
	}
	if got := ask("GET", "k"); got != "$1\r\nv\r\n" {
		t.Fatalf("GET k = %q", got)
	}
}

// heapInUse returns the bytes of live objects on the Go heap after a collection.
func heapInUse() int64 {
	var m runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&m)
	return int64(m.HeapAlloc)
}

// TestMemory_AnnouncedBulkLengthNotAllocatedUpFront: connections that announce 512 MB bulks
// and send a few KB cost memory for what they sent, not for what they announced; a big value
// announced the same way and sent whole is received right; and closing the connections lets
// their memory go.
func TestMemory_AnnouncedBulkLengthNotAllocatedUpFront(t *testing.T) {
	if raceDetector {
		t.Skip("the race detector's own allocations would be measured")
	}
	s := testserver.Start(t)
	admin, ar := dialReader(t, s.Addr)
	ask := asker(t, admin, ar)
	base := heapInUse()
	const announced = 512 << 20
	head := "*2\r\n$3\r\nGET\r\n$" + strconv.Itoa(announced) + "\r\n"
	payload := bytes.Repeat([]byte("x"), 4<<10)
	var conns []net.Conn
	for range 3 {
		c, r := dialReader(t, s.Addr)
		id := clientID(t, c, r)
		if _, err := c.Write(append([]byte(head), payload...)); err != nil {
			t.Fatal(err)
		}
		waitQbuf(t, ask, id, len(payload)) // Redis's qbuf: the part of the bulk received
		conns = append(conns, c)
	}
	held := heapInUse() - base
	t.Logf("3 connections announcing %d MiB, %d KiB sent each: heap grew %d KiB", announced>>20, len(payload)>>10, held>>10)
	if held > 64<<20 {
		t.Fatalf("3 connections that sent 4 KiB each hold %d MiB; want memory for what arrived", held>>20)
	}

	// A value announced and sent in pieces grows its buffer as it arrives, and arrives whole.
	c, r := dialReader(t, s.Addr)
	const size = 8 << 20
	val := bytes.Repeat([]byte("0123456789abcdef"), size/16)
	req := append([]byte("*3\r\n$3\r\nSET\r\n$3\r\nbig\r\n$"+strconv.Itoa(size)+"\r\n"), val...)
	writeInPieces(t, c, append(req, "\r\n"...), 16<<10)
	if got, err := rtReadReply(r); err != nil || string(got) != "+OK\r\n" {
		t.Fatalf("SET: %q, %v", got, err)
	}
	if _, err := c.Write(rtCommand("GET", "big")); err != nil {
		t.Fatal(err)
	}
	if got, err := rtReadReply(r); err != nil || !bytes.Equal(got, append(append([]byte("$"+strconv.Itoa(size)+"\r\n"), val...), "\r\n"...)) {
		t.Fatalf("GET returned %d bytes, %v: not the value", len(got), err)
	}

	for _, c := range conns {
		_ = c.Close()
	}
	waitFor(t, "the closed connections gone", func() bool {
		return strings.Contains(ask("INFO", "clients"), "connected_clients:2\r\n")
	})
	if left := heapInUse() - base; left > 32<<20 {
		t.Fatalf("%d MiB still held after the connections closed", left>>20)
	}
}

// TestMemory_BigValueNotHeldAfterItsReply: once a 64 MiB SET is answered, nothing the
// connection keeps between commands (routing scratch, the executor's frames, the input
// buffer) holds the value's input: a slice of it, the key, would keep all of it in memory.
func TestMemory_BigValueNotHeldAfterItsReply(t *testing.T) {
	if raceDetector {
		t.Skip("the race detector's own allocations would be measured")
	}
	s := testserver.Start(t)
	c, r := dialReader(t, s.Addr)
	const size = 64 << 20
	req := []byte("*3\r\n$3\r\nSET\r\n$3\r\nbig\r\n$" + strconv.Itoa(size) + "\r\n")
	req = append(append(req, bytes.Repeat([]byte("v"), size)...), "\r\n"...)
	base := heapInUse()
	writeInPieces(t, c, req, 64<<10)
	if got, err := rtReadReply(r); err != nil || string(got) != "+OK\r\n" {
		t.Fatalf("SET: %q, %v", got, err)
	}
	req = nil
	base -= size
	// The batch lets go of its input once its replies are written, just after the reply left.
	heldAfter := func(what string) {
		t.Helper()
		var held int64
		for range 100 {
			if held = heapInUse() - base; held < size/4 {
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
		t.Logf("after %s was answered, the server holds %d MiB", what, held>>20)
		if held >= size/4 {
			t.Fatalf("%d MiB held after %s was answered", held>>20, what)
		}
	}
	heldAfter("a 64 MiB SET")
	if _, err := c.Write(rtCommand("GET", "big")); err != nil {
		t.Fatal(err)
	}
	if got, err := r.Discard(len("$67108864\r\n") + size + 2); err != nil {
		t.Fatalf("GET: %d bytes, %v", got, err)
	}
	heldAfter("a GET of it")
}

// peakHeapDuring returns the most the heap's objects (live, or dead and not yet collected)
// exceeded base while f ran, sampled every 100 µs.
func peakHeapDuring(base int64, f func()) int64 {
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	stop, done := make(chan struct{}), make(chan int64)
	go func() {
		var peak int64
		for {
			metrics.Read(sample)
			peak = max(peak, int64(sample[0].Value.Uint64())-base)
			select {
			case <-stop:
				done <- peak
				return
			case <-time.After(100 * time.Microsecond):
			}
		}
	}()
	f()
	close(stop)
	return <-done
}

// TestMemory_BigSetPeakHeapSmallMultipleOfValue: while a 64 MiB SET is received and committed,
// the Go heap holds about one copy of the value (the input, growing as it arrives), not one
// more per layer (the encoded meta, the binlog record): RocksDB copies the value from the
// input into its WriteBatch.
func TestMemory_BigSetPeakHeapSmallMultipleOfValue(t *testing.T) {
	if raceDetector {
		t.Skip("the race detector's own allocations would be measured")
	}
	// Garbage is collected soon, so what is measured is what the server keeps alive.
	defer debug.SetGCPercent(debug.SetGCPercent(10))
	s := testserver.Start(t)
	c, r := dialReader(t, s.Addr)
	const size = 64 << 20
	req := []byte("*3\r\n$3\r\nSET\r\n$3\r\nbig\r\n$" + strconv.Itoa(size) + "\r\n")
	req = append(append(req, bytes.Repeat([]byte("v"), size)...), "\r\n"...)
	base := heapInUse()
	peak := peakHeapDuring(base, func() {
		writeInPieces(t, c, req, 256<<10)
		if got, err := rtReadReply(r); err != nil || string(got) != "+OK\r\n" {
			t.Errorf("SET: %q, %v", got, err)
		}
	})
	runtime.KeepAlive(req) // the client's request is in base
	t.Logf("a %d MiB SET: the heap grew by %d MiB at most (%.2f times the value)", size>>20, peak>>20, float64(peak)/size)
	if peak > size*9/4 {
		t.Fatalf("the heap grew by %d MiB for a %d MiB value; want at most 2.25 times", peak>>20, size>>20)
	}
}

// An idle connection holds little: what runs a command in a shard is made the first time the
// connection sends one there, not when it connects (Redis: about 1.9 KB per idle client). The
// heap held per connection counts both ends here, the test's client sockets too.
func TestMemory_IdleConnectionsHoldLittle(t *testing.T) {
	s := testserver.Start(t, "--shards", "16")
	const conns = 1000
	heap := func() uint64 {
		var m runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&m)
		return m.HeapAlloc
	}
	before := heap()
	open := make([]net.Conn, 0, conns)
	defer func() {
		for _, c := range open {
			c.Close()
		}
	}()
	for range conns {
		c, r := dialReader(t, s.Addr)
		open = append(open, c)
		if _, err := c.Write([]byte("PING\r\n")); err != nil {
			t.Fatal(err)
		}
		if line, err := r.ReadString('\n'); err != nil || line != "+PONG\r\n" {
			t.Fatalf("PING = %q, %v", line, err)
		}
	}
	per := (int64(heap()) - int64(before)) / conns
	t.Logf("%d bytes of heap per idle connection (both ends), 16 shards", per)
	if per > 6<<10 {
		t.Fatalf("%d bytes of heap per idle connection, want under 6 KiB", per)
	}
}
