package cmds_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/redis/go-redis/v9"
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
