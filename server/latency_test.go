package server

import (
	"testing"
	"time"

	"shardis/config"
)

// A TTL worker pass at or past latency-monitor-threshold is an expire-cycle sample; with the
// monitor off, or under the threshold, nothing is recorded.
func TestExpirePassed_SamplesExpireCycle(t *testing.T) {
	cfg := config.Default()
	s := &Server{Config: cfg}
	s.expirePassed(50 * time.Millisecond)
	if s.Latency.Len() != 0 {
		t.Fatal("expire-cycle sampled with latency-monitor-threshold 0")
	}
	if err := cfg.Set([][2]string{{"latency-monitor-threshold", "20"}}); err != nil {
		t.Fatal(err)
	}
	s.expirePassed(19 * time.Millisecond)
	if s.Latency.Len() != 0 {
		t.Fatal("expire-cycle sampled under the threshold")
	}
	s.expirePassed(25 * time.Millisecond)
	h, high, ok := s.Latency.History("expire-cycle")
	if !ok || len(h) != 1 || h[0].Latency != 25 || high != 25 {
		t.Fatalf("expire-cycle history = %v, %d, %v", h, high, ok)
	}
}

// Errors are counted by their first word, ERR when there is none within 32 bytes.
func TestErrorStats_CountsByPrefix(t *testing.T) {
	var e ErrorStats
	e.Count([]byte("-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"))
	e.Count([]byte("ERR unknown command 'x'"))
	e.Count([]byte("-NOSPACEINTHEFIRSTTHIRTYTWOBYTESATALL"))
	e.Count([]byte("-MYERR x"))
	got := e.All()
	want := []ErrorCount{{"ERR", 2}, {"MYERR", 1}, {"WRONGTYPE", 1}}
	if len(got) != len(want) {
		t.Fatalf("All = %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("All = %v, want %v", got, want)
		}
	}
	for i := range 2 * maxErrorKinds {
		e.Count([]byte("-E" + string(rune('A'+i%26)) + string(rune('A'+i/26)) + " x"))
	}
	if n := len(e.All()); n != maxErrorKinds {
		t.Fatalf("%d kinds counted, want the cap %d", n, maxErrorKinds)
	}
	e.Reset()
	if len(e.All()) != 0 {
		t.Fatal("Reset left counts")
	}
}
