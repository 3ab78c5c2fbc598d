package cmds_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"shardis/internal/testserver"
)

// Shared by the integration tests of every family: run a command through go-redis and check
// its reply as go-redis decodes it.

var testCtx = context.Background()

// doCmd runs a command and fails the test on a transport error (an error reply is returned).
func doCmd(t *testing.T, c *redis.Client, args ...any) (any, error) {
	t.Helper()
	v, err := c.Do(testCtx, args...).Result()
	if err != nil && err != redis.Nil {
		if _, ok := err.(redis.Error); !ok {
			t.Fatalf("%v: %v", args, err)
		}
	}
	return v, err
}

// expect checks a reply printed with %#v; a nil reply matches want nil.
func expect(t *testing.T, c *redis.Client, want any, args ...any) {
	t.Helper()
	v, err := doCmd(t, c, args...)
	if err != nil && err != redis.Nil {
		t.Fatalf("%v: error %v, want %#v", args, err, want)
	}
	if fmt.Sprintf("%#v", v) != fmt.Sprintf("%#v", want) {
		t.Fatalf("%v = %#v, want %#v", args, v, want)
	}
}

// expectErr checks that a command replies exactly the error msg.
func expectErr(t *testing.T, c *redis.Client, msg string, args ...any) {
	t.Helper()
	v, err := doCmd(t, c, args...)
	if err == nil || err == redis.Nil || err.Error() != msg {
		t.Fatalf("%v = %#v, %v; want error %q", args, v, err, msg)
	}
}

// expectNil checks that a command replies nil.
func expectNil(t *testing.T, c *redis.Client, args ...any) {
	t.Helper()
	v, err := doCmd(t, c, args...)
	if err != redis.Nil {
		t.Fatalf("%v = %#v, %v; want nil", args, v, err)
	}
}

// replayRecorded replays every NAME.cmds stream of dir (inline commands sent in one write on
// one connection of a fresh server) and checks the replies are, byte for byte, NAME.redis:
// what redis-server 7.0.15 answered to the same stream (see testdata/multi/README.md).
func replayRecorded(t *testing.T, dir string) {
	t.Helper()
	replayStreams(t, dir, false)
}

// replayRecordedRESP3 is replayRecorded on a connection that sent HELLO 3 first (its reply,
// which holds the client id, is not part of the streams).
func replayRecordedRESP3(t *testing.T, dir string) {
	t.Helper()
	replayStreams(t, dir, true)
}

func replayStreams(t *testing.T, dir string, resp3 bool, flags ...string) {
	t.Helper()
	streams, _ := filepath.Glob(filepath.Join(dir, "*.cmds"))
	if len(streams) == 0 {
		t.Fatalf("no streams in %s", dir)
	}
	for _, path := range streams {
		name := strings.TrimSuffix(filepath.Base(path), ".cmds")
		t.Run(name, func(t *testing.T) {
			s := testserver.Start(t, flags...)
			in, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			want, err := os.ReadFile(strings.TrimSuffix(path, ".cmds") + ".redis")
			if err != nil {
				t.Fatal(err)
			}
			in = bytes.ReplaceAll(in, []byte("\n"), []byte("\r\n"))
			var got []byte
			if resp3 {
				rc := dialResp(t, s.Addr, true)
				if _, err := rc.c.Write(in); err != nil {
					t.Fatal(err)
				}
				got = make([]byte, len(want))
				_ = rc.c.SetReadDeadline(time.Now().Add(60 * time.Second))
				if n, err := io.ReadFull(rc.r, got); err != nil {
					got = got[:n]
				}
			} else {
				got = testserver.Exchange(t, s.Addr, in, len(want))
			}
			if bytes.Equal(got, want) {
				return
			}
			gl, wl := strings.Split(string(got), "\r\n"), strings.Split(string(want), "\r\n")
			for i := range min(len(gl), len(wl)) {
				if gl[i] != wl[i] {
					t.Fatalf("reply line %d: got %q, want %q\ngot:\n%s", i+1, gl[i], wl[i], got)
				}
			}
			t.Fatalf("got %d lines, want %d:\n%s", len(gl), len(wl), got)
		})
	}
}

// pythonWithRedis returns a python3 that has the redis module (redis-py), or skips the test.
func pythonWithRedis(t *testing.T) string {
	t.Helper()
	for _, candidate := range []string{"/usr/bin/python3", "python3"} {
		if exec.Command(candidate, "-c", "import redis").Run() == nil {
			return candidate
		}
	}
	t.Skip("no python3 with the redis module (apt-get install python3-redis)")
	return ""
}

// startRedis starts a redis-server 7.0 on a free loopback port for the test (the test is
// skipped without one) and returns a client of it.
func startRedis(t *testing.T) *redis.Client {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		t.Skip("redis-server is not installed")
	}
	port := testserver.FreePort(t)
	cmd := exec.Command(bin, "--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--save", "",
		"--appendonly", "no", "--dir", t.TempDir())
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	rc := redis.NewClient(&redis.Options{Addr: "127.0.0.1:" + strconv.Itoa(port), DisableIdentity: true,
		Protocol: 2, MaxRetries: -1})
	t.Cleanup(func() { rc.Close() })
	waitFor(t, func() bool { return rc.Ping(testCtx).Err() == nil })
	return rc
}
