package tracking

import (
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"shardis/pubsub"
	"shardis/shard"
)

type fakeWrites struct{ on []bool }

func (f *fakeWrites) TrackWrites(on bool) { f.on = append(f.on, on) }

func newSub(resp3 bool) *pubsub.Subscriber {
	s := pubsub.NewSubscriber(func() {}, func() pubsub.Limit { return pubsub.Limit{} }, func(int64) {})
	s.RESP3.Store(resp3)
	return s
}

type fixture struct {
	t       *testing.T
	writes  *fakeWrites
	targets map[int64]Target
	max     int64
	table   *Table
}

func newFixture(t *testing.T) *fixture {
	f := &fixture{t: t, writes: &fakeWrites{}, targets: map[int64]Target{}}
	f.table = NewTable(f.writes, func(id int64) (Target, bool) { tg, ok := f.targets[id]; return tg, ok },
		func() int64 { return f.max })
	return f
}

func (f *fixture) enable(c *Conn, o Options) {
	f.t.Helper()
	if err := f.table.Enable(c, o); err != nil {
		f.t.Fatal(err)
	}
}

func drained(s *pubsub.Subscriber) string { return string(s.Drain(nil, pubsub.DrainAll)) }

func written(writer int64, keys ...string) []shard.Access {
	var out []shard.Access
	for _, k := range keys {
		out = append(out, shard.Access{Key: []byte(k), Client: writer})
	}
	return out
}

var flush = []shard.Access{{Flush: true}}

const invK = ">2\r\n$10\r\ninvalidate\r\n*1\r\n$1\r\nk\r\n"

func TestEnable_ErrorsInRedisOrder(t *testing.T) {
	f := newFixture(t)
	c := NewConn(1, newSub(true))
	cases := []struct {
		o    Options
		want error
	}{
		{Options{Prefixes: []string{"a"}, OptIn: true, OptOut: true}, ErrPrefixNeedsBCAST},
		{Options{BCAST: true, OptIn: true, OptOut: true}, ErrOptWithBCAST},
		{Options{OptIn: true, OptOut: true}, ErrOptInAndOut},
	}
	for _, tc := range cases {
		if err := f.table.Enable(c, tc.o); !errors.Is(err, tc.want) {
			t.Fatalf("Enable(%+v) = %v, want %v", tc.o, err, tc.want)
		}
	}
	if err := f.table.Enable(c, Options{BCAST: true, Prefixes: []string{"ab", "a"}}); err == nil ||
		err.Error() != "Prefix 'ab' overlaps with another provided prefix 'a'. Prefixes for a single client must not overlap." {
		t.Fatalf("overlap: %v", err)
	}
	if c.On() || len(f.writes.on) != 0 {
		t.Fatal("a refused Enable changed something")
	}
	f.enable(c, Options{OptIn: true})
	if err := f.table.Enable(c, Options{OptOut: true}); err != ErrSwitchOpt {
		t.Fatalf("switch opt: %v", err)
	}
	if err := f.table.Enable(c, Options{BCAST: true}); err != ErrSwitchBCAST {
		t.Fatalf("switch bcast: %v", err)
	}
	f.table.Disable(c)
	f.enable(c, Options{BCAST: true, Prefixes: []string{"user:"}})
	if err := f.table.Enable(c, Options{BCAST: true, Prefixes: []string{"use"}}); err == nil ||
		err.Error() != "Prefix 'use' overlaps with an existing prefix 'user:'. Prefixes for a single client must not overlap." {
		t.Fatalf("existing overlap: %v", err)
	}
	f.enable(c, Options{BCAST: true, Prefixes: []string{"obj:"}})
	if o, _ := c.Mode(); len(o.Prefixes) != 2 || o.Prefixes[0] != "obj:" {
		t.Fatalf("prefixes %v", o.Prefixes)
	}
}

func TestTable_SwitchesWritesOnFirstAndLast(t *testing.T) {
	f := newFixture(t)
	a, b := NewConn(1, newSub(true)), NewConn(2, newSub(true))
	f.enable(a, Options{})
	f.enable(a, Options{NoLoop: true}) // already on: no switch
	f.enable(b, Options{})
	f.table.Disable(a)
	f.table.Disable(a)
	f.table.Disable(b)
	if got := f.writes.on; len(got) != 2 || !got[0] || got[1] {
		t.Fatalf("TrackWrites calls %v, want [true false]", got)
	}
}

func TestTable_DefaultModeInvalidatesOnceAndNoLoop(t *testing.T) {
	f := newFixture(t)
	a := NewConn(1, newSub(true))
	resp2 := NewConn(2, newSub(false))
	loop := NewConn(3, newSub(true))
	f.enable(a, Options{})
	f.enable(resp2, Options{})
	f.enable(loop, Options{NoLoop: true})
	for _, c := range []*Conn{a, resp2, loop} {
		f.table.Remember(c, [][]byte{[]byte("k")})
	}
	f.table.Apply(written(3, "k", "other"))
	if got := drained(a.sub); got != invK {
		t.Fatalf("a got %q", got)
	}
	if got := drained(resp2.sub) + drained(loop.sub); got != "" {
		t.Fatalf("RESP2 without redirect / NOLOOP got %q", got)
	}
	f.table.Apply(written(0, "k"))
	if got := drained(a.sub); got != "" {
		t.Fatalf("invalidated twice: %q", got)
	}
	if _, keys, items, _ := f.table.Stats(); keys != 0 || items != 0 {
		t.Fatalf("table not empty: %d keys, %d items", keys, items)
	}
}

func TestTable_RedirectAndBroken(t *testing.T) {
	f := newFixture(t)
	target := newSub(false)
	f.targets[9] = Target{Sub: target, Subscribed: true}
	a := NewConn(1, newSub(true))
	f.enable(a, Options{Redirect: 9})
	f.table.Remember(a, [][]byte{[]byte("k")})
	f.table.Apply(written(0, "k"))
	if got, want := drained(target), "*3\r\n$7\r\nmessage\r\n$20\r\n__redis__:invalidate\r\n*1\r\n$1\r\nk\r\n"; got != want {
		t.Fatalf("target got %q", got)
	}
	f.table.Remember(a, [][]byte{[]byte("k")})
	f.table.Apply(flush) // the null of a's protocol (RESP3), framed for the RESP2 target
	if got, want := drained(target), "*3\r\n$7\r\nmessage\r\n$20\r\n__redis__:invalidate\r\n_\r\n"; got != want {
		t.Fatalf("target got %q", got)
	}
	delete(f.targets, 9)
	f.table.Remember(a, [][]byte{[]byte("k")})
	f.table.Apply(written(0, "k"))
	if got, want := drained(a.sub), ">2\r\n$21\r\ntracking-redir-broken\r\n:9\r\n"; got != want || !a.BrokenRedirect() {
		t.Fatalf("a got %q, broken %v", got, a.BrokenRedirect())
	}
}

func TestTable_BCASTOneMessagePerPrefix(t *testing.T) {
	f := newFixture(t)
	a := NewConn(1, newSub(true))
	f.enable(a, Options{BCAST: true, Prefixes: []string{"u:", "o:"}, NoLoop: true})
	f.table.Apply(append(written(2, "u:1", "x", "o:1", "u:2", "u:1"), written(1, "o:2")...))
	want := ">2\r\n$10\r\ninvalidate\r\n*1\r\n$3\r\no:1\r\n" +
		">2\r\n$10\r\ninvalidate\r\n*2\r\n$3\r\nu:1\r\n$3\r\nu:2\r\n"
	if got := drained(a.sub); got != want {
		t.Fatalf("got %q\nwant %q", got, want)
	}
	f.table.Apply(flush)
	if got := drained(a.sub); got != ">2\r\n$10\r\ninvalidate\r\n_\r\n" {
		t.Fatalf("flush: %q", got)
	}
}

func TestTable_BoundEvictsAndInvalidates(t *testing.T) {
	f := newFixture(t)
	f.max = 3
	a := NewConn(1, newSub(false))
	f.targets[5] = Target{Sub: newSub(true)}
	f.enable(a, Options{Redirect: 5})
	for _, k := range []string{"a", "b", "c", "d", "e"} {
		f.table.Remember(a, [][]byte{[]byte(k)})
	}
	if _, keys, _, _ := f.table.Stats(); keys != 3 {
		t.Fatalf("%d keys, want 3", keys)
	}
	got := drained(f.targets[5].Sub)
	if n := len(got) / len(">2\r\n$10\r\ninvalidate\r\n*1\r\n$1\r\nk\r\n"); n != 2 {
		t.Fatalf("evictions sent %q", got)
	}
}

type tail struct{ got []byte }

func (t *tail) AfterReply(frame []byte) bool { t.got = append(t.got, frame...); return true }

// Accesses apply in order: a connection's own write invalidates it after that command's reply
// (its owner), a read in between registers it again, so the next write invalidates it again.
func TestTable_ApplyInOrderWithOwners(t *testing.T) {
	f := newFixture(t)
	a := NewConn(1, newSub(true))
	f.enable(a, Options{})
	f.table.Remember(a, [][]byte{[]byte("k")})
	first, second := &tail{}, &tail{}
	f.table.Apply([]shard.Access{
		{Key: []byte("k"), Client: 1, Owner: first},
		{Key: []byte("k"), Client: 1, Reader: a},
		{Key: []byte("k"), Client: 1, Owner: second},
		{Key: []byte("k"), Client: 1, Reader: a},
		{Key: []byte("k"), Client: 2, Owner: second}, // another client's write: a's queue
	})
	if string(first.got) != invK || string(second.got) != invK {
		t.Fatalf("after replies: %q / %q", first.got, second.got)
	}
	if got := drained(a.sub); got != invK {
		t.Fatalf("queue: %q", got)
	}
}

// A lowered bound is reached in passes as Redis's trackingLimitUsedSlots: the first evicts
// 100 keys, each later one (every trimPeriod) 100 more than the one before.
func TestTable_TrimEvictsInGrowingPasses(t *testing.T) {
	f := newFixture(t)
	a := NewConn(1, newSub(true))
	f.enable(a, Options{})
	for i := range 500 {
		f.table.Remember(a, [][]byte{[]byte("k" + strconv.Itoa(i))})
	}
	f.table.mu.Lock()
	f.max = 1
	f.table.mu.Unlock()
	f.table.Trim()
	if _, keys, _, _ := f.table.Stats(); keys != 400 {
		t.Fatalf("%d keys after the first pass, want 400", keys)
	}
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if _, keys, _, _ := f.table.Stats(); keys == 1 {
			break
		}
		if time.Now().After(deadline) {
			_, keys, _, _ := f.table.Stats()
			t.Fatalf("%d keys left, want 1", keys)
		}
	}
	if got := drained(a.sub); strings.Count(got, "invalidate") != 499 {
		t.Fatalf("%d invalidations, want 499", strings.Count(got, "invalidate"))
	}
}
