package reactor_test

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"shardis/config"
	"shardis/executor"
	"shardis/internal/testserver"
	"shardis/reactor"
	"shardis/server"
)

// A second server on a port another one serves is refused at start, naming the address:
// SO_REUSEPORT would otherwise let it bind beside the first and take half its connections.
func TestServer_Serve_RefusesAPortInUse(t *testing.T) {
	first := testserver.Start(t)
	cfg, err := config.Load([]string{"--port", strconv.Itoa(first.Config.Port()), "--bind", "127.0.0.1",
		"--dir", t.TempDir(), "--shards", "1", "--cpu-pin", "no"})
	if err != nil {
		t.Fatal(err)
	}
	st := testserver.OpenStore(t, cfg.Dir(), 1)
	state := server.New(cfg, st)
	second := reactor.New(state, executor.New(state))
	done := make(chan error, 1)
	go func() { done <- second.Serve() }()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), first.Addr) {
			t.Fatalf("Serve on a port in use: %v; want an error naming %s", err, first.Addr)
		}
	case <-second.Ready():
		second.Stop()
		t.Fatal("a second server started on a port in use")
	case <-time.After(60 * time.Second):
		t.Fatal("Serve neither failed nor started")
	}
	c := first.Client(t)
	if err := c.Ping(t.Context()).Err(); err != nil {
		t.Fatalf("the first server after the refused start: %v", err)
	}
}
