package cmds_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"

	"shardis/internal/testserver"
)

// A real Redis Sentinel (Debian's redis-server in sentinel mode) monitoring shardis sees it
// as a healthy master: its pub/sub link subscribes to the hello channel, and the hellos it
// publishes through shardis reach a subscriber.
func TestPubSub_SentinelSeesMasterThroughHelloChannel(t *testing.T) {
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		t.Skip("redis-server is not installed")
	}
	s := testserver.Start(t)
	ctx := context.Background()
	c := s.Client(t)
	ps := s.Client(t).Subscribe(ctx, "__sentinel__:hello")
	defer ps.Close()
	if _, err := ps.Receive(ctx); err != nil {
		t.Fatal(err)
	}

	dir := t.TempDir()
	port := testserver.FreePort(t)
	_, masterPort, _ := strings.Cut(s.Addr, ":")
	conf := fmt.Sprintf("port %d\nbind 127.0.0.1\ndir %s\nsentinel monitor mymaster 127.0.0.1 %s 1\n"+
		"sentinel down-after-milliseconds mymaster 5000\n", port, dir, masterPort)
	path := filepath.Join(dir, "sentinel.conf")
	if err := os.WriteFile(path, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, path, "--sentinel")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })

	// Sentinel publishes a hello every 2 s on every master it monitors.
	msg, err := ps.ReceiveMessage(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(msg.Payload, ",mymaster,127.0.0.1,"+masterPort+",") {
		t.Fatalf("hello %q", msg.Payload)
	}
	if n := c.PubSubNumSub(ctx, "__sentinel__:hello").Val()["__sentinel__:hello"]; n != 2 {
		t.Fatalf("hello channel has %d subscribers, want the sentinel's and ours", n)
	}
	sentinel := redis.NewClient(&redis.Options{Addr: "127.0.0.1:" + strconv.Itoa(port), DisableIdentity: true, Protocol: 2})
	defer sentinel.Close()
	// "master" alone: no "disconnected" (or s_down) flag.
	waitFor(t, func() bool {
		m, err := sentinel.Do(ctx, "SENTINEL", "MASTER", "mymaster").StringSlice()
		if err != nil {
			return false
		}
		for i := 0; i+1 < len(m); i += 2 {
			if m[i] == "flags" {
				return m[i+1] == "master"
			}
		}
		return false
	})
}
