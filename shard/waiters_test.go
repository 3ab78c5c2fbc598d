package shard

import (
	"sync"
	"sync/atomic"
	"testing"

	"shardis/codec"
)

// fakeOwner records how its waiter was settled.
type fakeOwner struct {
	served atomic.Int32
	closed atomic.Int32
	err    error
}

func (o *fakeOwner) Served(err error) { o.err = err; o.served.Add(1) }
func (o *fakeOwner) StoreClosed()     { o.closed.Add(1) }

func list(n uint64) *codec.Meta {
	return &codec.Meta{Type: codec.TypeList, Version: 1, Count: n, Head: 0, Tail: n}
}

func TestWaiters_RegisterReadyClaimForget(t *testing.T) {
	s := openTestStore(t, t.TempDir(), 1)
	o1, o2 := &fakeOwner{}, &fakeOwner{}
	w1 := &Waiter{Type: codec.TypeList, Owner: o1}
	w2 := &Waiter{Type: codec.TypeList, Owner: o2}
	doOrFail(t, s, func(tx *Tx) {
		tx.Block(0, [][]byte{[]byte("a"), []byte("a"), []byte("b")}, w1) // a twice: once
		tx.Block(0, [][]byte{[]byte("a")}, w2)
	})
	if n, keys := s.Blocked(); n != 2 || keys != 2 {
		t.Fatalf("Blocked() = %d, %d; want 2 waiters on 2 keys", n, keys)
	}
	if got := s.WaitersOf(0, 0, []byte("a")); len(got) != 2 || got[0] != w1 || got[1] != w2 {
		t.Fatalf("waiters of a: %v", got)
	}
	doOrFail(t, s, func(tx *Tx) {
		tx.SetMeta(1, []byte("a"), list(1)) // another db: not ready
		tx.SetMeta(0, []byte("c"), list(1)) // nobody waits
		if rk, ok := tx.NextReady(); ok {
			t.Fatalf("ready %+v", rk)
		}
		tx.SetMeta(0, []byte("a"), list(1))
		rk, ok := tx.NextReady()
		if !ok || string(rk.Key) != "a" || rk.DB != 0 {
			t.Fatalf("NextReady = %+v, %v", rk, ok)
		}
		if w := tx.FirstWaiter(rk, codec.TypeZSet); w != nil {
			t.Fatal("a list key serves a sorted-set waiter")
		}
		if w := tx.FirstWaiter(rk, codec.TypeList); w != w1 || !w.Claim() || w.Claim() {
			t.Fatal("the oldest waiter is not claimed exactly once")
		}
		if w := tx.FirstWaiter(rk, codec.TypeList); w != w2 {
			t.Fatal("a claimed waiter is still first in line")
		}
		w1.Forget()
		tx.Served(w1)
	})
	if o1.served.Load() != 1 || o1.err != nil || o2.served.Load() != 0 {
		t.Fatal("the served waiter was not settled after the commit")
	}
	if n, keys := s.Blocked(); n != 1 || keys != 1 {
		t.Fatalf("Blocked() = %d, %d after forgetting one; want 1, 1", n, keys)
	}
	if !w2.Claim() {
		t.Fatal("claim")
	}
	w2.Forget()
	if n, keys := s.Blocked(); n != 0 || keys != 0 || s.Shard(0).interest.Load() != 0 {
		t.Fatalf("state left behind: %d waiters, %d keys, interest %d", n, keys, s.Shard(0).interest.Load())
	}
	// Nobody waits or watches: writes record no touched keys.
	doOrFail(t, s, func(tx *Tx) {
		tx.SetMeta(0, []byte("a"), list(2))
		if len(tx.touched) != 0 {
			t.Fatal("a write was recorded although nobody waits")
		}
	})
}

// Many goroutines race to claim one waiter registered in several shards: one wins.
func TestWaiters_ClaimOnce(t *testing.T) {
	s := openTestStore(t, t.TempDir(), 4)
	o := &fakeOwner{}
	w := &Waiter{Type: codec.TypeList, Owner: o}
	h := s.AcquireAll()
	keys := [][]byte{[]byte("k0"), []byte("k1"), []byte("k2"), []byte("k3"), []byte("k4")}
	h.Tx().Block(0, keys, w)
	if err := h.Release(); err != nil {
		t.Fatal(err)
	}
	var wins atomic.Int32
	var wg sync.WaitGroup
	for range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if w.Claim() {
				wins.Add(1)
				w.Forget()
			}
		}()
	}
	wg.Wait()
	if wins.Load() != 1 {
		t.Fatalf("%d claims won", wins.Load())
	}
	if n, k := s.Blocked(); n != 0 || k != 0 {
		t.Fatalf("Blocked() = %d, %d", n, k)
	}
}

func TestWaiters_CloseSettlesTheRest(t *testing.T) {
	s, err := Open(Options{Dir: t.TempDir(), Shards: 2, Databases: 16})
	if err != nil {
		t.Fatal(err)
	}
	o := &fakeOwner{}
	w := &Waiter{Type: codec.TypeZSet, Owner: o}
	h := s.AcquireAll()
	h.Tx().Block(3, [][]byte{[]byte("x"), []byte("y")}, w)
	if err := h.Release(); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if o.closed.Load() != 1 {
		t.Fatal("Close did not settle the waiter once")
	}
	if n, k := s.Blocked(); n != 0 || k != 0 {
		t.Fatalf("Blocked() = %d, %d after Close", n, k)
	}
}
