package ttl

import (
	"bytes"
	"context"
	"sync/atomic"
	"testing"
	"time"
)

// The TTL entry of docs/ENCODING.md's example.
func TestAppendKey_DocExample(t *testing.T) {
	want := []byte{0x74, 0, 0, 1, 0x8b, 0xcf, 0xe5, 0x7b, 0x88, 0, '{', 'u', '}', '1'}
	k := AppendKey(nil, 1700000005000, 0, []byte("{u}1"))
	if !bytes.Equal(k, want) {
		t.Fatalf("% x", k)
	}
	at, db, key, ok := DecodeKey(k)
	if !ok || at != 1700000005000 || db != 0 || string(key) != "{u}1" {
		t.Fatalf("decode: %v %v %q %v", at, db, key, ok)
	}
}

func TestUpperBound_OrdersAfterDueEntries(t *testing.T) {
	due := AppendKey(nil, 100, 3, []byte("zzz"))
	later := AppendKey(nil, 101, 0, nil)
	ub := UpperBound(100)
	if bytes.Compare(due, ub) >= 0 || bytes.Compare(later, ub) < 0 {
		t.Fatalf("bound % x vs due % x, later % x", ub, due, later)
	}
}

type countingExpirer struct{ calls atomic.Int64 }

func (c *countingExpirer) ExpireDue(int) (int, error) { c.calls.Add(1); return 0, nil }

// Run tells pass about each tick's walks.
func TestRun_ReportsPasses(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	passes := make(chan time.Duration, 16)
	var e countingExpirer
	done := make(chan struct{})
	go func() {
		defer close(done)
		Run(ctx, &e, func() time.Duration { return time.Millisecond }, func(d time.Duration) {
			select {
			case passes <- d:
			default:
			}
		})
	}()
	for range 3 {
		select {
		case d := <-passes:
			if d < 0 {
				t.Fatalf("pass of %v", d)
			}
		case <-time.After(30 * time.Second):
			t.Fatal("no pass reported")
		}
	}
	cancel()
	<-done
	if e.calls.Load() < 3 {
		t.Fatalf("%d walks for 3 passes", e.calls.Load())
	}
}
