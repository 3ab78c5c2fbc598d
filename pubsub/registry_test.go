package pubsub

import (
	"bytes"
	"sync/atomic"
	"testing"
)

func newTestSubscriber(limit int64) (*Subscriber, *atomic.Int32, *atomic.Int64) {
	var wakes atomic.Int32
	var over atomic.Int64
	s := NewSubscriber(func() { wakes.Add(1) }, func() Limit { return Limit{Hard: limit} }, func(n int64) { over.Store(n) })
	return s, &wakes, &over
}

func TestRegistry_PublishCountsAsRedis(t *testing.T) {
	var r Registry
	a, _, _ := newTestSubscriber(0)
	b, _, _ := newTestSubscriber(0)
	if r.Active() || r.Publish([]byte("news"), []byte("x")) != 0 {
		t.Fatal("empty registry delivered")
	}
	r.Subscribe(a, Channel, "news")
	r.Subscribe(b, Channel, "news")
	r.Subscribe(a, Pattern, "n*")
	r.Subscribe(a, Pattern, "*s")
	if r.Subscribe(a, Channel, "news") {
		t.Fatal("second subscription to the same channel was added")
	}
	// Two channel subscribers plus two matching patterns of one client: Redis counts 4.
	if n := r.Publish([]byte("news"), []byte("x")); n != 4 {
		t.Fatalf("PUBLISH counted %d receivers, want 4", n)
	}
	if n := r.PublishShard([]byte("news"), []byte("x")); n != 0 {
		t.Fatalf("SPUBLISH reached %d channel subscribers", n)
	}
	want := "*3\r\n$7\r\nmessage\r\n$4\r\nnews\r\n$1\r\nx\r\n"
	got := string(a.Drain(nil, DrainAll))
	if !bytes.HasPrefix([]byte(got), []byte(want)) || !bytes.Contains([]byte(got), []byte("*4\r\n$8\r\npmessage\r\n$2\r\nn*\r\n$4\r\nnews\r\n$1\r\nx\r\n")) {
		t.Fatalf("frames %q", got)
	}
	if r.NumSub(Channel, []byte("news")) != 2 || r.NumPat() != 2 {
		t.Fatal("NUMSUB/NUMPAT wrong")
	}
	r.UnsubscribeAll(a)
	if r.Count(a, Channel) != 0 || r.Count(a, Pattern) != 0 || r.NumPat() != 0 {
		t.Fatal("UnsubscribeAll left subscriptions")
	}
	if !r.Unsubscribe(b, Channel, "news") || r.Active() {
		t.Fatal("registry still active after the last unsubscribe")
	}
}

func TestRegistry_NamesKeepOrder(t *testing.T) {
	var r Registry
	s, _, _ := newTestSubscriber(0)
	for _, n := range []string{"c", "a", "b"} {
		r.Subscribe(s, Channel, n)
	}
	r.Unsubscribe(s, Channel, "a")
	if got := r.Names(s, Channel); len(got) != 2 || got[0] != "c" || got[1] != "b" {
		t.Fatalf("names %v", got)
	}
	if got := r.Channels(Channel, []byte("[bc]")); len(got) != 2 {
		t.Fatalf("channels %v", got)
	}
}

func TestSubscriber_WakesOnceAndFramesRESP3(t *testing.T) {
	var r Registry
	s, wakes, _ := newTestSubscriber(0)
	s.RESP3.Store(true)
	r.Subscribe(s, ShardChannel, "s")
	for range 3 {
		r.PublishShard([]byte("s"), []byte("m"))
	}
	if wakes.Load() != 1 || !s.Pending() {
		t.Fatalf("woken %d times for 3 messages, want once", wakes.Load())
	}
	out := s.Drain(nil, DrainAll)
	frame := ">3\r\n$8\r\nsmessage\r\n$1\r\ns\r\n$1\r\nm\r\n"
	if string(out) != frame+frame+frame || s.Pending() {
		t.Fatalf("drained %q", out)
	}
	r.PublishShard([]byte("s"), []byte("m"))
	if wakes.Load() != 2 {
		t.Fatal("not woken again after a drain")
	}
}

func TestSubscriber_OverflowClosesOnce(t *testing.T) {
	var r Registry
	s, _, over := newTestSubscriber(150)
	r.Subscribe(s, Channel, "c")
	msg := bytes.Repeat([]byte("x"), 40)
	// Redis's reply buffer is not counted: 34 bytes of this frame are, then 71 of msg's.
	r.Publish([]byte("c"), bytes.Repeat([]byte("x"), replyBuffer))
	r.Publish([]byte("c"), msg)
	if over.Load() != 0 {
		t.Fatal("overflowed under the limit")
	}
	r.Publish([]byte("c"), msg)
	if over.Load() == 0 || s.Pending() || s.Queued() != 0 {
		t.Fatal("queue past its limit was kept")
	}
	over.Store(0)
	r.Publish([]byte("c"), msg)
	if over.Load() != 0 || s.Queued() != 0 {
		t.Fatal("a closed subscriber took a message")
	}
}
