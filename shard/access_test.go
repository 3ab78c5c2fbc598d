package shard

import (
	"fmt"
	"testing"
)

func TestAccess_CreatedTouchedAndUnknown(t *testing.T) {
	s := openTestStore(t, t.TempDir(), 2)
	const t0 = int64(1_700_000_000_000)
	key := []byte("k")
	err := s.Do(s.ShardOf(key), func(tx *Tx) {
		tx.nowMs = t0
		if _, ok := tx.AccessField(0, key); ok {
			t.Error("a key nothing touched is known")
		}
		tx.SetMeta(0, key, str("v"))
		if f, ok := tx.AccessField(0, key); !ok || f != LRUClock(t0) {
			t.Errorf("new key: field %d %v, want the LRU clock %d", f, ok, LRUClock(t0))
		}
		if _, ok := tx.AccessField(1, key); ok {
			t.Error("the same name in another database shares the field")
		}
		tx.nowMs = t0 + 5000
		prev := tx.SetTouch(false)
		tx.Meta(0, key)
		if f, _ := tx.AccessField(0, key); f != LRUClock(t0) {
			t.Errorf("a lookup without touch moved the field to %d", f)
		}
		tx.SetTouch(prev)
		tx.Meta(0, key)
		if f, _ := tx.AccessField(0, key); f != LRUClock(t0+5000) {
			t.Errorf("a lookup left the field at %d, want %d", f, LRUClock(t0+5000))
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	// GET answered in the event loop touches through TouchKey.
	s.TouchKey(0, key, t0+9000)
	if f, _ := s.shards[s.ShardOf(key)].accessField(0, key); f != LRUClock(t0+9000) {
		t.Errorf("TouchKey left the field at %d", f)
	}
}

func TestAccess_LFU_CountsAndDecays(t *testing.T) {
	s := openTestStore(t, t.TempDir(), 1)
	s.SetAccessPolicy(AccessPolicy{LFU: true, LogFactor: 0, DecayTime: 1}) // factor 0: every access counts
	const t0 = int64(1_700_000_000_000)
	key := []byte("k")
	err := s.Do(0, func(tx *Tx) {
		tx.nowMs = t0
		tx.SetMeta(0, key, str("v"))
		if f, _ := tx.AccessField(0, key); f&255 != LFUInitVal {
			t.Errorf("new key's counter %d, want %d", f&255, LFUInitVal)
		}
		tx.SetTouch(true)
		tx.Meta(0, key)
		tx.SetMeta(0, key, str("w")) // HSET's shape: a lookup, then a write
		if f, _ := tx.AccessField(0, key); f&255 != LFUInitVal+1 {
			t.Errorf("a lookup and a write in one command counted %d times", f&255-LFUInitVal)
		}
		for range 300 {
			tx.Meta(0, key)
		}
		f, _ := tx.AccessField(0, key)
		if got := LFUDecr(f, t0, 1); got != 255 {
			t.Errorf("counter after 300 accesses with lfu-log-factor 0: %d, want 255 (saturated)", got)
		}
		// Three minutes later, with lfu-decay-time 1, it has lost 3.
		if got := LFUDecr(f, t0+3*60000, 1); got != 252 {
			t.Errorf("decayed counter %d, want 252", got)
		}
		if got := LFUDecr(f, t0+3*60000, 0); got != 255 {
			t.Errorf("lfu-decay-time 0 decayed the counter to %d", got)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestAccess_LFULogIncr_SlowsAsItGrows(t *testing.T) {
	// With Redis's default factor 10, a counter at 5+20 grows with probability 1/201: a
	// thousand tries move it by a handful, never by hundreds; at 5 every try counts.
	if got := lfuLogIncr(LFUInitVal, 10); got != LFUInitVal+1 {
		t.Errorf("at LFU_INIT_VAL the counter must grow: %d", got)
	}
	c := uint32(LFUInitVal + 20)
	for range 1000 {
		c = lfuLogIncr(c, 10)
	}
	if c < LFUInitVal+20 || c > LFUInitVal+40 {
		t.Errorf("counter %d after 1000 tries from 25 with factor 10", c)
	}
	if lfuLogIncr(255, 10) != 255 {
		t.Error("the counter does not saturate at 255")
	}
}

// BenchmarkAccess_Touch is the cost a read pays for access tracking (one touch), over keys
// spread like a 100k-key load.
var benchKeys = 100000

func BenchmarkAccess_Touch(b *testing.B) {
	s, err := Open(Options{Dir: b.TempDir(), Shards: 8, Databases: 16, BlockCacheSize: 8 << 20, WriteBufferSize: 8 << 20})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	keys := make([][]byte, benchKeys)
	for i := range keys {
		keys[i] = fmt.Appendf(nil, "memtier-%d", i)
	}
	now := int64(1_700_000_000_000)
	b.ResetTimer()
	for i := range b.N {
		s.TouchKey(0, keys[i%len(keys)], now+int64(i))
	}
}
