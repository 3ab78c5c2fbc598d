package shard

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"shardis/codec"
	"shardis/ttl"
)

func TestKeyCache_StaysWithinBudget(t *testing.T) {
	c := newKeyCache(10 * (cacheEntryOverhead + 10))
	for i := range 1000 {
		c.put(fmt.Appendf(nil, "key%05d", i), []byte("v"), true, true)
		if c.used > c.budget {
			t.Fatalf("used %d over budget %d after %d puts", c.used, c.budget, i+1)
		}
	}
	if len(c.index) == 0 || len(c.index) > 10 {
		t.Fatalf("%d entries cached", len(c.index))
	}
}

func TestKeyCache_ReturnedValueIsPrivate(t *testing.T) {
	c := newKeyCache(1 << 20)
	src := []byte("hello")
	c.put([]byte("k"), src, true, true)
	src[0] = 'j'
	v, _, _ := c.get([]byte("k"))
	if string(v) != "hello" || cap(v) != len(v) {
		t.Fatalf("cached %q cap %d: must be a private copy with no room to append into", v, cap(v))
	}
}

func TestKeyCache_UpdateOnlyDoesNotInsert(t *testing.T) {
	c := newKeyCache(1 << 20)
	if _, ok := c.put([]byte("d1"), []byte("x"), true, false); ok {
		t.Fatal("insert=false added a new entry")
	}
	if _, _, hit := c.get([]byte("d1")); hit {
		t.Fatal("entry present")
	}
}

// Random writes, deletes, expiries and FLUSHDBs through transactions on a store whose cache is
// tiny (constant eviction) must read back exactly what a plain map model says.
func TestKeyCache_MatchesModelUnderChurn(t *testing.T) {
	s, err := Open(Options{Dir: t.TempDir(), Shards: 1, Databases: 16, KeyCacheSize: 2048})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	model := map[string]string{}
	rng := rand.New(rand.NewPCG(1, 2))
	for round := range 300 {
		_ = s.Do(0, func(tx *Tx) {
			for range 1 + rng.IntN(8) {
				k := fmt.Sprintf("k%d", rng.IntN(40))
				switch op := rng.IntN(10); {
				case op < 5:
					v := fmt.Sprintf("v%d", rng.IntN(1000))
					tx.SetMeta(0, []byte(k), str(v))
					model[k] = v
				case op < 8:
					tx.Delete(0, []byte(k))
					delete(model, k)
				case op < 9 && round%50 == 0:
					tx.FlushDB(0, 0)
					clear(model)
				default:
					m, ok := tx.Meta(0, []byte(k))
					if want, inModel := model[k]; ok != inModel || (ok && string(m.Value) != want) {
						t.Errorf("round %d: in-group read of %s = %v %q, model %v %q", round, k, ok, m.Value, inModel, want)
					}
				}
			}
		})
		_ = s.Do(0, func(tx *Tx) {
			for i := range 40 {
				k := fmt.Sprintf("k%d", i)
				m, ok := tx.Meta(0, []byte(k))
				if want, inModel := model[k]; ok != inModel || (ok && string(m.Value) != want) {
					t.Fatalf("round %d: %s = %v %q, model %v %q", round, k, ok, m.Value, inModel, want)
				}
			}
		})
	}
	if got := s.Shard(0).Keys(0); got != int64(len(model)) {
		t.Fatalf("key count %d, model %d", got, len(model))
	}
}

// A commit that fails leaves the cache as it was: it must never serve uncommitted values.
func TestKeyCache_FailedCommitNotCached(t *testing.T) {
	s := openTestStore(t, t.TempDir(), 1)
	_ = s.Do(0, func(tx *Tx) { tx.SetMeta(0, []byte("a"), str("committed")) })
	_ = s.Do(0, func(tx *Tx) {
		tx.SetMeta(0, []byte("a"), str("doomed"))
		tx.Fail(fmt.Errorf("injected"))
	})
	_ = s.Do(0, func(tx *Tx) {
		if m, ok := tx.Meta(0, []byte("a")); !ok || string(m.Value) != "committed" {
			t.Fatalf("read %v %q after a failed commit", ok, m.Value)
		}
	})
}

// Random puts, updates and evictions straight on the cache, against a map of what each key
// last held: a hit must return exactly that, and a key never put must never hit. Small
// budgets keep the CLOCK hand evicting; many keys make the index grow and entries move.
func TestKeyCache_Get_MatchesLastPut(t *testing.T) {
	for _, budget := range []int64{1 << 10, 64 << 10, 8 << 20} {
		c := newKeyCache(budget)
		last := map[string]string{}
		rng := rand.New(rand.NewPCG(3, uint64(budget)))
		for i := range 200_000 {
			k := fmt.Appendf(nil, "key:%d", rng.IntN(20_000))
			switch op := rng.IntN(4); op {
			case 0, 1:
				v := fmt.Sprintf("v%d", i)
				exists := op == 0
				if !exists {
					v = ""
				}
				c.put(k, []byte(v), exists, true)
				last[string(k)] = v
			default:
				v, exists, hit := c.get(k)
				if !hit {
					continue
				}
				want, ok := last[string(k)]
				if !ok || string(v) != want || exists != (want != "") {
					t.Fatalf("budget %d: get %s = %q %v, last put %q (put: %v)", budget, k, v, exists, want, ok)
				}
			}
			if c.used > c.budget {
				t.Fatalf("budget %d: used %d", budget, c.used)
			}
		}
		if _, _, hit := c.get([]byte("never-put")); hit {
			t.Fatalf("budget %d: a key never put hits", budget)
		}
	}
}

// BenchmarkKeyCache_Get looks up random keys among 100,000 cached ones, the shape of a GET
// load whose keys all fit the cache.
func BenchmarkKeyCache_Get(b *testing.B) {
	c := newKeyCache(1 << 30)
	keys := make([][]byte, 100_000)
	for i := range keys {
		keys[i] = fmt.Appendf(nil, "m\x00\x12\x34memtier-%d", i)
		c.put(keys[i], []byte("\x00\x00\x00\x00\x00\x00\x00\x00\x00value-of-32-bytes-xxxxxxxxxxxxxx"), true, true)
	}
	rng := rand.New(rand.NewPCG(1, 1))
	order := make([]int32, 1<<16)
	for i := range order {
		order[i] = int32(rng.IntN(len(keys)))
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		if _, _, hit := c.get(keys[order[i&(len(order)-1)]]); !hit {
			b.Fatal("miss")
		}
	}
}

// Under pressure a long string meta is cut to its header before it is dropped: a full read
// misses it, a header lookup still finds its type and expire.
func TestKeyCache_Evict_CutsLongStringToHead(t *testing.T) {
	big := codec.AppendMeta(nil, &codec.Meta{Type: codec.TypeString, Expire: 1234, Value: make([]byte, 1000)})
	c := newKeyCache(10 * (cacheEntryOverhead + 1010))
	c.put([]byte("m\x00\x00\x01first"), big, true, true)
	for i := range 9 { // fill the budget, then a little more: the hand cuts instead of dropping
		c.put(fmt.Appendf(nil, "m\x00\x00\x01k%d", i), big, true, true)
	}
	c.put([]byte("m\x00\x00\x01last"), big, true, true)
	if _, _, hit := c.get([]byte("m\x00\x00\x01first")); hit {
		t.Fatal("a full read hit an entry that had to go")
	}
	v, exists, hit := c.lookup([]byte("m\x00\x00\x01first"), true)
	if !hit || !exists || len(v) != codec.MetaHeaderLen || codec.MetaExpire(v) != 1234 ||
		codec.MetaType(v) != codec.TypeString {
		t.Fatalf("header lookup = %x %v %v: want the header (type, expire 1234)", v, exists, hit)
	}
	if c.used > c.budget {
		t.Fatalf("used %d over budget %d", c.used, c.budget)
	}
	// Writing the key again restores a full entry.
	c.put([]byte("m\x00\x00\x01first"), big, true, false)
	if v, _, hit := c.get([]byte("m\x00\x00\x01first")); !hit || len(v) != len(big) {
		t.Fatalf("after a write: hit %v, %d bytes", hit, len(v))
	}
}

// Overwriting strings whose cached values were cut to their headers keeps the bookkeeping
// that SET takes from the old value: the key count (DBSIZE) and the TTL index (the old expire
// must be removed), and reads still return the full current values.
func TestTx_SetMeta_OverCutEntriesKeepsCountsAndExpires(t *testing.T) {
	// 160 KB: the 400 keys' headers fit in the quarter of it that cut entries may keep, their
	// values (~270 KB) do not.
	s, err := Open(Options{Dir: t.TempDir(), Shards: 1, Databases: 16, KeyCacheSize: 160 << 10})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	val := func(i, round int) []byte { return fmt.Appendf(make([]byte, 0, 600), "%d-%d-%0500d", round, i, 0) }
	const n = 400
	far := time.Now().Add(time.Hour).UnixMilli()
	for round := range 3 {
		for i := range n {
			_ = s.Do(0, func(tx *Tx) {
				m := &codec.Meta{Type: codec.TypeString, Value: val(i, round)}
				if round == 1 {
					m.Expire = far + int64(i) // the second round sets expires, the third clears them
				}
				tx.SetMeta(0, fmt.Appendf(nil, "key%d", i), m)
			})
		}
	}
	if got := s.Shard(0).Keys(0); got != n {
		t.Fatalf("key count %d, want %d", got, n)
	}
	if got := s.Shard(0).expires[0].Load(); got != 0 {
		t.Fatalf("%d keys counted with an expire, want 0", got)
	}
	var ttlKeys int
	_ = s.Do(0, func(tx *Tx) {
		it := tx.iterPart(0, []byte{ttl.Prefix}, []byte{ttl.Prefix + 1}, false)
		defer it.Close()
		for ; it.Valid(); it.Next() {
			ttlKeys++
		}
		for i := range n {
			m, ok := tx.Meta(0, fmt.Appendf(nil, "key%d", i))
			if !ok || string(m.Value) != string(val(i, 2)) || m.Expire != 0 {
				t.Fatalf("key%d = %v %q expire %d", i, ok, m.Value, m.Expire)
			}
		}
	})
	if ttlKeys != 0 {
		t.Fatalf("%d TTL index entries left, want 0", ttlKeys)
	}
}
