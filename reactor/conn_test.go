package reactor_test

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"shardis/internal/testserver"
)

// rawCommand sends cmd on c and returns the reply's first line (and a bulk reply's body).
func rawCommand(t *testing.T, c net.Conn, r *bufio.Reader, cmd string) string {
	t.Helper()
	if _, err := c.Write([]byte(cmd)); err != nil {
		t.Fatal(err)
	}
	line, err := r.ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	if line[0] != '$' {
		return line
	}
	n, _ := strconv.Atoi(strings.TrimSpace(line[1:]))
	body := make([]byte, n+2)
	if _, err := io.ReadFull(r, body); err != nil {
		t.Fatal(err)
	}
	return string(body[:n])
}

// qbufOf returns the qbuf field of the client named name in a CLIENT LIST reply.
func qbufOf(list, name string) string {
	for _, line := range strings.Split(list, "\n") {
		if strings.Contains(line, " name="+name+" ") {
			for _, f := range strings.Fields(line) {
				if v, ok := strings.CutPrefix(f, "qbuf="); ok {
					return v
				}
			}
		}
	}
	return ""
}

// CLIENT LIST's qbuf is the query buffer as redis-server 7.0.15 shows it: 0 for an idle or a
// blocked client, the part of the argument being received for a half-sent command (its bulk
// header parsed), and the caller's own command while it runs.
func TestConn_ClientList_QueryBufferAsRedis(t *testing.T) {
	s := testserver.Start(t)
	dial := func(name string) (net.Conn, *bufio.Reader) {
		c, err := net.Dial("tcp", s.Addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		r := bufio.NewReader(c)
		if got := rawCommand(t, c, r, fmt.Sprintf("CLIENT SETNAME %s\r\n", name)); got != "+OK\r\n" {
			t.Fatalf("CLIENT SETNAME: %q", got)
		}
		return c, r
	}
	idle, idleR := dial("idle")
	rawCommand(t, idle, idleR, "PING\r\n")
	blocked, _ := dial("blocked")
	if _, err := blocked.Write([]byte("BLPOP q 0\r\n")); err != nil {
		t.Fatal(err)
	}
	half, _ := dial("half")
	if _, err := half.Write([]byte("*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$10\r\n01234")); err != nil {
		t.Fatal(err)
	}
	caller, callerR := dial("caller")
	want := map[string]string{"idle": "0", "blocked": "0", "half": "5", "caller": "26"}
	deadline := time.Now().Add(10 * time.Second)
	for {
		list := rawCommand(t, caller, callerR, "*2\r\n$6\r\nCLIENT\r\n$4\r\nLIST\r\n")
		var wrong []string
		for name, q := range want {
			if got := qbufOf(list, name); got != q {
				wrong = append(wrong, fmt.Sprintf("%s qbuf=%s, want %s", name, got, q))
			}
		}
		if len(wrong) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s\n%s", strings.Join(wrong, "; "), list)
		}
		time.Sleep(50 * time.Millisecond) // the blocked and half-sent commands may not be in yet
	}
}
