package reactor_test

import (
	"bufio"
	"context"
	"net"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"shardis/internal/testserver"
)

const loadingReply = "-LOADING Redis is loading the dataset in memory\r\n"

// TestLoading_AnswersLoadingUntilTheStoreIsOpen starts a server whose store is not open yet
// (as main does while RocksDB replays its log) and checks that it answers what Redis answers
// while loading: LOADING to every command without the loading flag, the others as usual,
// INFO loading:1; that a command with the flag that needs the store (EXEC, WATCH) waits for
// it with what follows; and that once the store is open, the data is served.
func TestLoading_AnswersLoadingUntilTheStoreIsOpen(t *testing.T) {
	dir := t.TempDir()
	first := testserver.StartIn(t, dir)
	if _, err := first.Client(t).Set(context.Background(), "k", "v", 0).Result(); err != nil {
		t.Fatal(err)
	}
	if _, err := first.Client(t).HSet(context.Background(), "h", "f", "hv").Result(); err != nil {
		t.Fatal(err)
	}
	first.Stop()

	s := testserver.StartLoading(t, dir)
	c, r := dialReader(t, s.Addr)
	ask := asker(t, c, r)
	for _, args := range [][]string{{"PING"}, {"GET", "k"}, {"DBSIZE"}, {"SET", "k", "x"}, {"HGETALL", "h"}} {
		if got := ask(args...); got != loadingReply {
			t.Fatalf("%v while loading = %q, want %q", args, got, loadingReply)
		}
	}
	if got := ask("ECHO", "hi"); got != "$2\r\nhi\r\n" {
		t.Fatalf("ECHO while loading = %q", got)
	}
	if got := ask("CLIENT", "SETNAME", "probe"); got != "+OK\r\n" {
		t.Fatalf("CLIENT SETNAME while loading = %q", got)
	}
	// Every section answers before the store is open (nothing in it may touch RocksDB).
	if all := ask("INFO", "everything"); !strings.Contains(all, "# Keyspace") || !strings.Contains(all, "\r\nloading:1\r\n") {
		t.Fatalf("INFO everything while loading:\n%s", all)
	}
	for _, args := range [][]string{{"CONFIG", "SET", "key-cache-size", "32mb"}, {"CONFIG", "SET", "block-cache-size", "128mb"}} {
		if got := ask(args...); got != "+OK\r\n" {
			t.Fatalf("%v while loading = %q", args, got)
		}
	}
	info := ask("INFO", "persistence")
	for _, re := range []string{`\r\nloading:1\r\n`, `\r\nloading_start_time:\d+\r\n`, `\r\nloading_total_bytes:\d+\r\n`,
		`\r\nloading_loaded_perc:0\.00\r\n`, `\r\nloading_eta_seconds:\d+\r\n`} {
		if !regexp.MustCompile(re).MatchString(info) {
			t.Fatalf("INFO persistence while loading lacks %s:\n%s", re, info)
		}
	}

	// A transaction: the refused GET dooms it; EXEC needs the shards, so it waits for the
	// store, and so does the GET behind it.
	tx, txr := dialReader(t, s.Addr)
	txID := clientID(t, tx, txr)
	for _, step := range []struct{ send, want string }{{"MULTI", "+OK\r\n"}, {"GET k", loadingReply}} {
		if _, err := tx.Write(rtCommand(strings.Fields(step.send)...)); err != nil {
			t.Fatal(err)
		}
		if got, err := rtReadReply(txr); err != nil || string(got) != step.want {
			t.Fatalf("%s while loading = %q, %v; want %q", step.send, got, err, step.want)
		}
	}
	held := append(rtCommand("EXEC"), rtCommand("GET", "k")...)
	if _, err := tx.Write(held); err != nil {
		t.Fatal(err)
	}
	// WATCH waits too, with the GET behind it.
	w, wr := dialReader(t, s.Addr)
	wID := clientID(t, w, wr)
	watched := append(rtCommand("WATCH", "k"), rtCommand("GET", "k")...)
	if _, err := w.Write(watched); err != nil {
		t.Fatal(err)
	}
	// Both connections hold their commands unread (qbuf) before the store opens.
	waitQbuf(t, ask, txID, len(held))
	waitQbuf(t, ask, wID, len(watched))
	if got := ask("INFO", "errorstats"); !strings.Contains(got, "errorstat_LOADING:count=6\r\n") {
		t.Fatalf("INFO errorstats while loading:\n%s", got)
	}

	if err := s.Load(); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"-EXECABORT Transaction discarded because of previous errors.\r\n", "$1\r\nv\r\n"} {
		if got, err := rtReadReply(txr); err != nil || string(got) != want {
			t.Fatalf("after loading, the held transaction got %q, %v; want %q", got, err, want)
		}
	}
	for _, want := range []string{"+OK\r\n", "$1\r\nv\r\n"} {
		if got, err := rtReadReply(wr); err != nil || string(got) != want {
			t.Fatalf("after loading, the held WATCH got %q, %v; want %q", got, err, want)
		}
	}
	if got := ask("GET", "k"); got != "$1\r\nv\r\n" {
		t.Fatalf("GET k after loading = %q", got)
	}
	if got := ask("HGET", "h", "f"); got != "$2\r\nhv\r\n" {
		t.Fatalf("HGET h f after loading = %q", got)
	}
	if got := ask("PING"); got != "+PONG\r\n" {
		t.Fatalf("PING after loading = %q", got)
	}
	info = ask("INFO", "persistence")
	if !strings.Contains(info, "\r\nloading:0\r\n") || strings.Contains(info, "loading_start_time") {
		t.Fatalf("INFO persistence after loading:\n%s", info)
	}
}

func dialReader(t *testing.T, addr string) (net.Conn, *bufio.Reader) {
	c := rtDial(t, addr)
	_ = c.SetReadDeadline(time.Now().Add(60 * time.Second))
	return c, bufio.NewReader(c)
}

func clientID(t *testing.T, c net.Conn, r *bufio.Reader) string {
	t.Helper()
	if _, err := c.Write(rtCommand("CLIENT", "ID")); err != nil {
		t.Fatal(err)
	}
	reply, err := rtReadReply(r)
	if err != nil || reply[0] != ':' {
		t.Fatalf("CLIENT ID = %q, %v", reply, err)
	}
	return strings.TrimSpace(string(reply[1:]))
}

// waitQbuf waits until CLIENT LIST shows client id holding n unread bytes.
func waitQbuf(t *testing.T, ask func(...string) string, id string, n int) {
	t.Helper()
	want := " qbuf=" + strconv.Itoa(n) + " "
	for i := 0; ; i++ {
		got := ask("CLIENT", "LIST", "ID", id)
		if strings.Contains(got, want) {
			return
		}
		if i == 3000 {
			t.Fatalf("client %s does not hold %d bytes: %q", id, n, got)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
