package pubsub

import (
	"bytes"
	"testing"
	"time"
)

// The soft limit, as Redis's: the first time over it starts the clock; over it for longer
// than SoftFor breaks it; back under it resets the clock. The hard limit breaks at once.
func TestLimit_Over_SoftLimitNeedsTime(t *testing.T) {
	l := Limit{Hard: 100, Soft: 50, SoftFor: 10 * time.Second}
	t0 := time.Unix(1000, 0)
	if over, _ := l.over(replyBuffer+100, t0, time.Time{}); !over {
		t.Fatal("at the hard limit: not over")
	}
	over, since := l.over(replyBuffer+60, t0, time.Time{})
	if over || !since.Equal(t0) {
		t.Fatalf("first time over the soft limit: over %v, clock %v", over, since)
	}
	if over, _ := l.over(replyBuffer+60, t0.Add(10*time.Second), since); over {
		t.Fatal("over the soft limit for exactly SoftFor: broken")
	}
	if over, _ := l.over(replyBuffer+60, t0.Add(11*time.Second), since); !over {
		t.Fatal("over the soft limit for longer than SoftFor: not broken")
	}
	if over, since := l.over(replyBuffer+40, t0.Add(11*time.Second), since); over || !since.IsZero() {
		t.Fatal("back under the soft limit: the clock did not reset")
	}
	if over, _ := (Limit{}).over(1<<40, t0, t0.Add(-time.Hour)); over {
		t.Fatal("no limits: over")
	}
}

// As Redis counts a client's output: the bytes within its 16 KiB reply buffer are not counted,
// and a queue that reaches the hard limit past them breaks it (one byte under does not).
func TestLimit_Over_CountsPastTheReplyBufferAndBreaksAtTheLimit(t *testing.T) {
	l := Limit{Hard: 1000}
	t0 := time.Unix(1000, 0)
	if over, _ := l.over(replyBuffer+999, t0, time.Time{}); over {
		t.Fatal("one byte under the hard limit past the reply buffer: over")
	}
	if over, _ := l.over(replyBuffer+1000, t0, time.Time{}); !over {
		t.Fatal("at the hard limit past the reply buffer: not over")
	}
}

func TestSubscriber_Drain_WholeChunksUpToMax(t *testing.T) {
	s := NewSubscriber(func() {}, func() Limit { return Limit{} }, func(int64) { t.Fatal("overflow") })
	small := []byte("$1\r\nx\r\n")
	big := bytes.Repeat([]byte("b"), queueChunk)
	s.deliver(1, small) // chunk 1: 11 bytes
	s.deliver(1, big)   // too big to share: chunk 2
	s.deliver(1, small) // chunk 3
	total := 2*(4+len(small)) + 4 + len(big)
	if s.Queued() != total || !s.Pending() {
		t.Fatalf("Queued = %d, Pending = %v; want %d, true", s.Queued(), s.Pending(), total)
	}
	got := s.Drain(nil, 1) // at least one whole chunk
	if string(got) != "*1\r\n$1\r\nx\r\n" {
		t.Fatalf("first drain = %q", got)
	}
	got = s.Drain(got, 1)
	if len(got) != 2*4+len(small)+len(big) || !s.Pending() {
		t.Fatalf("second drain: %d bytes, pending %v", len(got), s.Pending())
	}
	got = s.Drain(got, DrainAll)
	if len(got) != total || s.Pending() || s.Queued() != 0 {
		t.Fatalf("last drain: %d bytes of %d, pending %v, queued %d", len(got), total, s.Pending(), s.Queued())
	}
}

func TestSubscriber_Deliver_SmallFramesShareAChunk(t *testing.T) {
	s := NewSubscriber(func() {}, func() Limit { return Limit{} }, func(int64) {})
	for range 1000 {
		s.deliver(1, []byte("$1\r\nx\r\n"))
	}
	s.mu.Lock()
	chunks := len(s.queue)
	s.mu.Unlock()
	if chunks != 1 { // 11,000 bytes: one chunk, grown by append
		t.Fatalf("%d chunks for 11,000 bytes of small frames", chunks)
	}
}
