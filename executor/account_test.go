package executor_test

import (
	"testing"
	"time"

	"shardis/cmds"
	"shardis/config"
	"shardis/executor"
	"shardis/server"
)

// Account samples a command at or past latency-monitor-threshold as "fast-command" when the
// command is flagged fast, else "command", and nothing with the threshold 0; errors are
// counted by prefix.
func TestAccount_LatencyEventsAndErrors(t *testing.T) {
	cfg := config.Default()
	srv := &server.Server{Config: cfg}
	e := executor.New(srv)
	get := [][]byte{[]byte("get"), []byte("k")}
	sleep := [][]byte{[]byte("debug"), []byte("sleep"), []byte("0")}
	e.Account(cmds.Lookup(get), get, 50*time.Millisecond, []byte("$-1\r\n"), nil)
	if srv.Latency.Len() != 0 {
		t.Fatal("sampled with latency-monitor-threshold 0")
	}
	if err := cfg.Set([][2]string{{"latency-monitor-threshold", "10"}}); err != nil {
		t.Fatal(err)
	}
	e.Account(cmds.Lookup(get), get, 9*time.Millisecond, []byte("$-1\r\n"), nil)
	e.Account(cmds.Lookup(get), get, 12*time.Millisecond, []byte("$-1\r\n"), nil)
	e.Account(cmds.Lookup(sleep), sleep, 30*time.Millisecond, []byte("-ERR boom\r\n"), nil)
	latest := srv.Latency.Latest()
	if len(latest) != 2 || latest[0].Event != "command" || latest[0].Latency != 30 ||
		latest[1].Event != "fast-command" || latest[1].Latency != 12 {
		t.Fatalf("events = %+v", latest)
	}
	if errs := srv.Errors.All(); len(errs) != 1 || errs[0] != (server.ErrorCount{Name: "ERR", Count: 1}) {
		t.Fatalf("error counts = %v", errs)
	}
}
