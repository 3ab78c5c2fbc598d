package executor_test

import (
	"strings"
	"testing"
	"time"

	"shardis/internal/testserver"
)

// Through the real protocol: while the disk guard turns writes away, a client's write, a
// script's redis.call of a write and EXEC of a writing transaction all get Redis's MISCONF from
// the one admission check, reads go on, and writes resume once there is room again.
func TestAdmit_DiskLow_EveryPathRefusesWritesWithMISCONF(t *testing.T) {
	s := testserver.Start(t)
	c := s.Client(t)
	ctx := t.Context()
	const misconf = "MISCONF Errors writing to the AOF file: No space left on device"
	if err := c.Set(ctx, "k", "v", 0).Err(); err != nil {
		t.Fatal(err)
	}
	tx := s.Client(t)
	if err := tx.Do(ctx, "MULTI").Err(); err != nil {
		t.Fatal(err)
	}
	if err := tx.Do(ctx, "SET", "k", "from-multi").Err(); err != nil {
		t.Fatal(err)
	}
	// A reserve larger than any disk: the guard sees the disk low at its next look.
	if err := c.ConfigSet(ctx, "disk-reserve", "4611686018427387904").Err(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(60 * time.Second)
	for { // a probe key: writes are taken until the guard's next look
		err := c.Set(ctx, "probe", "x", 0).Err()
		if err != nil && err.Error() == misconf {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("SET while the disk is low: %v, want %s", err, misconf)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if got, err := c.Get(ctx, "k").Result(); err != nil || got != "v" {
		t.Fatalf("GET while the disk is low = %q, %v; want the value before", got, err)
	}
	err := c.Eval(ctx, "return redis.call('set', KEYS[1], 'from-script')", []string{"k"}).Err()
	if err == nil || !strings.HasPrefix(err.Error(), "MISCONF Errors writing to the AOF file") {
		t.Errorf("a script's write: %v, want MISCONF", err)
	}
	got, err := c.Eval(ctx, "local r = redis.pcall('set', KEYS[1], 'x'); return r['err']", []string{"k"}).Result()
	if err != nil || got != misconf {
		t.Errorf("redis.pcall of a write: %#v, %v; want the error table's %q", got, err, misconf)
	}
	if got, err := c.Eval(ctx, "return redis.call('get', KEYS[1])", []string{"k"}).Result(); err != nil || got != "v" {
		t.Errorf("a script's read: %#v, %v", got, err)
	}
	if err := tx.Do(ctx, "EXEC").Err(); err == nil || !strings.HasPrefix(err.Error(), "EXECABORT") || !strings.Contains(err.Error(), "MISCONF") {
		t.Errorf("EXEC of a writing transaction: %v, want EXECABORT for MISCONF", err)
	}
	if err := c.ConfigSet(ctx, "disk-reserve", "0").Err(); err != nil {
		t.Fatal(err)
	}
	for {
		err := c.Set(ctx, "k", "after", 0).Err()
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("SET once there is room again: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if got, err := c.Get(ctx, "k").Result(); err != nil || got != "after" {
		t.Fatalf("GET after = %q, %v", got, err)
	}
}
