package memfree

import (
	"testing"
	"time"
)

func TestReleased_SmallBufferAsksNothing_BigOneAsksOneReturn(t *testing.T) {
	before := Returns.Load()
	Released(Threshold - 1)
	time.Sleep(3 * Delay)
	if n := Returns.Load() - before; n != 0 {
		t.Fatalf("a release under the threshold made %d returns", n)
	}
	// The memory reported is garbage already, so the first return collects it: one return
	// for several reports close together.
	garbage(2 * Threshold)
	for range 3 {
		Released(2 * Threshold)
	}
	deadline := time.Now().Add(20 * time.Second)
	for Returns.Load() == before {
		if time.Now().After(deadline) {
			t.Fatal("no return 20 s after a big release")
		}
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(2 * Interval)
	if n := Returns.Load() - before; n >= 3 {
		t.Fatalf("%d returns for three reports close together; want them merged", n)
	}
}

// garbage allocates and touches n bytes and lets them go.
func garbage(n int) {
	b := make([]byte, n)
	for i := range b {
		b[i] = 1
	}
}
