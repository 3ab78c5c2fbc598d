package cmds_test

import (
	"testing"
	"time"

	"shardis/internal/testserver"
)

// OBJECT FREQ and IDLETIME answer by maxmemory-policy with Redis's errors, and under an LFU
// policy with lfu-log-factor 0 (every access counts) FREQ counts what Redis counts: each
// lookup (MGET k k counts twice), a write once, nothing for EXISTS, TYPE, TTL, OBJECT;
// recorded from redis-server 7.0.15.
func TestObject_FreqAsRedis(t *testing.T) { replayRecorded(t, "testdata/objectfreq") }

// OBJECT IDLETIME is the time since the key's last access: it grows while nothing reads the
// key, lookups that do not touch (EXISTS, TYPE, OBJECT) leave it, a GET resets it, and a
// CLIENT NO-TOUCH client's GET leaves it too (TOUCH still touches).
func TestObject_IdletimeTracksAccess(t *testing.T) {
	s := testserver.Start(t)
	c := s.Client(t)
	idle := func() int64 {
		t.Helper()
		n, err := c.Do(testCtx, "OBJECT", "IDLETIME", "k").Int64()
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	c.Set(testCtx, "k", "v", 0)
	time.Sleep(2100 * time.Millisecond)
	c.Exists(testCtx, "k")
	c.Type(testCtx, "k")
	c.TTL(testCtx, "k")
	if n := idle(); n < 2 {
		t.Fatalf("IDLETIME %d more than 2 s after the SET (EXISTS, TYPE, TTL do not touch)", n)
	}
	nt := s.Client(t)
	if err := nt.Do(testCtx, "CLIENT", "NO-TOUCH", "ON").Err(); err != nil {
		t.Fatal(err)
	}
	nt.Get(testCtx, "k")
	if n := idle(); n < 2 {
		t.Fatalf("IDLETIME %d after a NO-TOUCH client's GET", n)
	}
	sent := time.Now()
	c.Get(testCtx, "k")
	// The GET reset it: at most the whole seconds since it was sent (plus the clock's tick).
	if n, most := idle(), int64(time.Since(sent)/time.Second)+1; n > most {
		t.Fatalf("IDLETIME %d after a GET (at most %d)", n, most)
	}
	time.Sleep(1100 * time.Millisecond)
	sent = time.Now()
	nt.Do(testCtx, "TOUCH", "k")
	if n, most := idle(), int64(time.Since(sent)/time.Second)+1; n > most {
		t.Fatalf("IDLETIME %d after a NO-TOUCH client's TOUCH (at most %d)", n, most)
	}
}

// OBJECT ENCODING of a hash or set answers what Redis 7.0 answers after the same history:
// listpack and intset until a write passes hash-max-listpack-entries/-value or
// set-max-intset-entries (or a set member is not an integer), hashtable after, never back;
// CONFIG SET changes what later writes do. Recorded from redis-server 7.0.15.
func TestObject_EncodingOfHashesAndSets_AsRedis(t *testing.T) {
	replayRecorded(t, "testdata/objectencoding")
}
