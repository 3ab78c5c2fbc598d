package rdb

import (
	"context"
	"net"
	"os/exec"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

var testCtx = context.Background()

// referenceRedis is a redis-server 7.0 started for one test: the reference the format is
// checked against (payloads it DUMPs, RESTOREs and files it SAVEs and loads).
type referenceRedis struct {
	*redis.Client
	Dir string // its working directory: dump.rdb is written and read here
}

// startRedis starts a redis-server on a free loopback port with the extra arguments (the
// test is skipped without one) and returns a client of it.
func startRedis(t *testing.T, args ...string) *referenceRedis {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		t.Skip("redis-server is not installed")
	}
	dir := t.TempDir()
	port := freePort(t)
	argv := append([]string{"--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--save", "",
		"--appendonly", "no", "--dir", dir}, args...)
	cmd := exec.Command(bin, argv...)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	rc := redis.NewClient(&redis.Options{Addr: "127.0.0.1:" + strconv.Itoa(port), DisableIdentity: true,
		Protocol: 2, MaxRetries: -1})
	t.Cleanup(func() { rc.Close() })
	deadline := time.Now().Add(30 * time.Second)
	for rc.Ping(testCtx).Err() != nil {
		if time.Now().After(deadline) {
			t.Fatal("redis-server did not answer PING within 30 s")
		}
		time.Sleep(20 * time.Millisecond)
	}
	return &referenceRedis{Client: rc, Dir: dir}
}

// freePort returns a loopback port nobody listens on. The package's tests cannot use
// internal/testserver: it builds a whole server, which imports this package.
func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}
