package cmds_test

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"shardis/internal/testserver"
)

// A normal client that pipelines requests for big values and never reads its replies is
// disconnected at client-output-buffer-limit's normal hard limit, and everyone else is
// served.
func TestOutputLimit_NormalClientThatDoesNotRead(t *testing.T) {
	s := testserver.Start(t)
	c := s.Client(t)
	if err := c.ConfigSet(testCtx, "client-output-buffer-limit", "normal 1mb 0 0").Err(); err != nil {
		t.Fatal(err)
	}
	// 10,000 GETs of 16 KB, 160 MB of replies. The limit is checked as the replies are made,
	// so the client is dropped at the one that reaches it and the GETs after it never run.
	value := strings.Repeat("v", 16<<10)
	if err := c.Set(testCtx, "big", value, 0).Err(); err != nil {
		t.Fatal(err)
	}
	lazy, err := net.Dial("tcp", s.Addr)
	if err != nil {
		t.Fatal(err)
	}
	defer lazy.Close()
	var req bytes.Buffer
	const gets = 10000
	for range gets {
		req.WriteString("GET big\r\n")
	}
	if _, err := lazy.Write(req.Bytes()); err != nil {
		t.Fatal(err)
	}
	// Without reading a byte, wait (bounded) until the server dropped the connection: CLIENT
	// LIST shows only the client asking.
	for i := 0; ; i++ {
		list, err := c.ClientList(testCtx).Result()
		if err != nil {
			t.Fatal(err)
		}
		if strings.Count(list, "\n") <= 1 {
			break
		}
		if i == 6000 {
			t.Fatalf("the client that does not read is still connected after 60s:\n%s", list)
		}
		time.Sleep(10 * time.Millisecond)
	}
	// What was sent before the close arrives, then EOF or a reset: not every reply.
	_ = lazy.SetReadDeadline(time.Now().Add(120 * time.Second))
	n, err := io.Copy(io.Discard, lazy)
	if err != nil && !strings.Contains(err.Error(), "reset") {
		t.Fatalf("after %d bytes: %v, want the server to close the connection", n, err)
	}
	if n >= gets*(16<<10) {
		t.Fatalf("every reply arrived (%d bytes): the limit did not apply", n)
	}
	if got, err := c.StrLen(testCtx, "big").Result(); err != nil || got != 16<<10 {
		t.Fatalf("another client after the disconnect: STRLEN = %d, %v", got, err)
	}
}

func TestOutputLimit_ConfigSetAndErrors(t *testing.T) {
	s := testserver.Start(t)
	c := s.Client(t)
	for _, tc := range []struct{ value, err string }{
		{"pubsub 1mb 512kb", "Wrong number of arguments in buffer limit configuration."},
		{"foo 1 2 3", "Invalid client class specified in buffer limit configuration."},
		{"normal x 2 3", "Error in hard, soft or soft_seconds setting in buffer limit configuration."},
		{"normal -1 2 3", "Error in hard, soft or soft_seconds setting in buffer limit configuration."},
	} {
		want := fmt.Sprintf("ERR CONFIG SET failed (possibly related to argument 'client-output-buffer-limit') - %s", tc.err)
		expectErr(t, c, want, "CONFIG", "SET", "client-output-buffer-limit", tc.value)
	}
	expect(t, c, "OK", "CONFIG", "SET", "client-output-buffer-limit", "replica 1 2 3 normal 5 6 7")
	got, err := c.ConfigGet(testCtx, "client-output-buffer-limit").Result()
	if err != nil || got["client-output-buffer-limit"] != "normal 5 6 7 slave 1 2 3 pubsub 33554432 8388608 60" {
		t.Fatalf("CONFIG GET = %v, %v", got, err)
	}
}
