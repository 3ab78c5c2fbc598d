package datatype

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"shardis/codec"
	"shardis/shard"
)

// listString returns the elements of l, space-separated, from a Range over all of them.
func listString(l *List) string {
	var out []string
	l.Range(0, l.Len(), false, func(v []byte) bool {
		out = append(out, string(v))
		return true
	})
	return strings.Join(out, " ")
}

// withList runs fn on list key in one transaction and saves it after.
func withList(t *testing.T, s *shard.Store, key string, fn func(l *List)) {
	t.Helper()
	do(t, s, func(tx *shard.Tx) {
		l, err := LookupList(tx, 0, []byte(key))
		if err != nil {
			t.Error(err)
			return
		}
		fn(&l)
		l.Save()
	})
}

// makeList stores the elements of spec (space-separated) as list key, replacing it.
func makeList(t *testing.T, s *shard.Store, key, spec string) {
	t.Helper()
	do(t, s, func(tx *shard.Tx) {
		l := NewList(tx, 0, []byte(key))
		for _, e := range strings.Fields(spec) {
			l.Push([]byte(e), false)
		}
		l.Save()
	})
}

func TestList_PushPopIndexSet(t *testing.T) {
	s := openStore(t)
	withList(t, s, "l", func(l *List) {
		if l.Exists() || l.Len() != 0 {
			t.Error("missing list not empty")
		}
		l.Push([]byte("b"), true)
		l.Push([]byte("a"), true)
		l.Push([]byte("c"), false)
	})
	withList(t, s, "l", func(l *List) {
		if got := listString(l); got != "a b c" {
			t.Errorf("list %q", got)
		}
		for idx, want := range map[int64]string{0: "a", 2: "c", -1: "c", -3: "a"} {
			if v, ok := l.Index(idx); !ok || string(v) != want {
				t.Errorf("Index(%d) = %q %v", idx, v, ok)
			}
		}
		if _, ok := l.Index(3); ok {
			t.Error("Index(3) in range")
		}
		if _, ok := l.Index(-4); ok {
			t.Error("Index(-4) in range")
		}
		if !l.Set(-2, []byte("B")) || l.Set(5, []byte("x")) {
			t.Error("Set: wrong results")
		}
		if v := l.PopOne(true); string(v) != "a" {
			t.Errorf("PopOne left %q", v)
		}
		if v := l.PopOne(false); string(v) != "c" {
			t.Errorf("PopOne right %q", v)
		}
	})
	withList(t, s, "l", func(l *List) {
		if got := listString(l); got != "B" {
			t.Errorf("list %q", got)
		}
		l.PopOne(true)
	})
	do(t, s, func(tx *shard.Tx) {
		if tx.Exists(0, []byte("l")) {
			t.Error("empty list kept")
		}
	})
}

func TestList_Pop(t *testing.T) {
	s := openStore(t)
	makeList(t, s, "l", "1 2 3 4 5 6")
	withList(t, s, "l", func(l *List) {
		var got []string
		n := l.Pop(2, false, func(v []byte) { got = append(got, string(v)) })
		if n != 2 || strings.Join(got, " ") != "6 5" {
			t.Errorf("Pop right: %d %v", n, got)
		}
		got = got[:0]
		l.Pop(3, true, func(v []byte) { got = append(got, string(v)) })
		if strings.Join(got, " ") != "1 2 3" || l.Len() != 1 {
			t.Errorf("Pop left: %v, len %d", got, l.Len())
		}
	})
	withList(t, s, "l", func(l *List) {
		if got := listString(l); got != "4" {
			t.Errorf("list %q", got)
		}
		l.Pop(1, true, func([]byte) {})
	})
	do(t, s, func(tx *shard.Tx) {
		if tx.Exists(0, []byte("l")) {
			t.Error("emptied list kept")
		}
	})
}

func TestList_Insert(t *testing.T) {
	s := openStore(t)
	for _, tc := range []struct {
		pivot  string
		before bool
		want   string
	}{
		{"a", true, "x a b c d e"},
		{"a", false, "a x b c d e"},
		{"d", false, "a b c d x e"},
		{"e", false, "a b c d e x"},
		{"c", true, "a b x c d e"},
	} {
		makeList(t, s, "l", "a b c d e")
		withList(t, s, "l", func(l *List) {
			if !l.Insert([]byte(tc.pivot), []byte("x"), tc.before) {
				t.Errorf("pivot %s not found", tc.pivot)
			}
			if l.Insert([]byte("nope"), []byte("y"), true) {
				t.Error("missing pivot found")
			}
		})
		withList(t, s, "l", func(l *List) {
			if got := listString(l); got != tc.want || l.Len() != 6 {
				t.Errorf("insert x %v %s: %q, want %q", tc.before, tc.pivot, got, tc.want)
			}
		})
	}
}

func TestList_RemoveMatches(t *testing.T) {
	s := openStore(t)
	for _, tc := range []struct {
		spec  string
		count int64
		n     int64
		want  string
	}{
		{"a x b x c x", 0, 3, "a b c"},
		{"a x b x c x", 2, 2, "a b c x"},
		{"a x b x c x", -1, 1, "a x b x c"},
		{"x x x x x a", 0, 5, "a"},
		{"a b c d e x", 1, 1, "a b c d e"},
		{"x a b c d e", -1, 1, "a b c d e"},
		{"x x", 0, 2, ""},
		{"a b", 0, 0, "a b"},
	} {
		makeList(t, s, "l", tc.spec)
		var n int64
		withList(t, s, "l", func(l *List) { n = l.RemoveMatches([]byte("x"), tc.count) })
		withList(t, s, "l", func(l *List) {
			if got := listString(l); n != tc.n || got != tc.want || l.Len() != int64(len(strings.Fields(tc.want))) {
				t.Errorf("LREM %d x of %q: removed %d, left %q", tc.count, tc.spec, n, got)
			}
		})
	}
}

func TestList_Trim(t *testing.T) {
	s := openStore(t)
	for _, tc := range []struct {
		off, kept int64
		res       TrimResult
		want      string
	}{
		{0, 6, TrimNothing, "a b c d e f"},
		{1, 4, TrimSome, "b c d e"}, // delete the ends
		{4, 1, TrimSome, "e"},       // copy the kept one under a new version
		{0, 0, TrimAll, ""},
	} {
		makeList(t, s, "l", "a b c d e f")
		do(t, s, func(tx *shard.Tx) {
			l, _ := LookupList(tx, 0, []byte("l"))
			if res := l.Trim(tc.off, tc.kept); res != tc.res {
				t.Errorf("Trim(%d, %d) = %v, want %v", tc.off, tc.kept, res, tc.res)
			}
		})
		withList(t, s, "l", func(l *List) {
			if got := listString(l); got != tc.want {
				t.Errorf("Trim(%d, %d) left %q, want %q", tc.off, tc.kept, got, tc.want)
			}
		})
	}
}

func TestList_PositionsIterRangeStream(t *testing.T) {
	s := openStore(t)
	var spec []string
	for i := range 100 { // longer than listPointReads: walks use an iterator
		spec = append(spec, fmt.Sprint(i%10))
	}
	makeList(t, s, "l", strings.Join(spec, " "))
	var st *shard.Stream
	do(t, s, func(tx *shard.Tx) {
		l, _ := LookupList(tx, 0, []byte("l"))
		for _, tc := range []struct {
			rank, count, maxlen int64
			want                string
		}{
			{1, -1, 0, "[3]"},
			{2, -1, 0, "[13]"},
			{-1, -1, 0, "[93]"},
			{1, 0, 0, "[3 13 23 33 43 53 63 73 83 93]"},
			{-2, 3, 0, "[83 73 63]"},
			{1, 0, 30, "[3 13 23]"},
			{-1, 0, 15, "[93]"},
			{20, -1, 0, "[]"},
		} {
			if got := fmt.Sprint(l.Positions([]byte("3"), tc.rank, tc.count, tc.maxlen)); got != tc.want {
				t.Errorf("Positions rank %d count %d maxlen %d = %s, want %s", tc.rank, tc.count, tc.maxlen, got, tc.want)
			}
		}
		var got []string
		it := l.Iter(95, false)
		for ; it.Valid(); it.Next() {
			got = append(got, string(it.Value()))
		}
		it.Close()
		it = l.Iter(97, true)
		for ; it.Valid(); it.Next() {
			got = append(got, string(it.Value()))
		}
		it.Close()
		if strings.Join(got, "") != "56789210" {
			t.Errorf("Iter: %v", got)
		}
		got = got[:0]
		l.Range(40, 45, true, func(v []byte) bool {
			got = append(got, string(v))
			return len(got) < 3
		})
		if strings.Join(got, "") != "432" {
			t.Errorf("Range reverse: %v", got)
		}
		var err error
		if st, err = l.Stream(10, 50, func(w *codec.Writer, _, v []byte) { w.Bulk(v) }); err != nil {
			t.Error(err)
		}
	})
	if st == nil {
		t.FailNow()
	}
	if out := drain(t, st); strings.Count(out, "$1\r\n") != 50 || !strings.HasPrefix(out, "$1\r\n0\r\n") {
		t.Fatalf("stream: %q", out)
	}
}

func TestList_NewListReplacesAndWrongType(t *testing.T) {
	s := openStore(t)
	putString(t, s, "k")
	do(t, s, func(tx *shard.Tx) {
		if _, err := LookupList(tx, 0, []byte("k")); !errors.Is(err, ErrWrongType) {
			t.Errorf("LookupList of a string: %v", err)
		}
		l := NewList(tx, 0, []byte("k"))
		l.Push([]byte("v"), false)
		l.Save()
	})
	withList(t, s, "k", func(l *List) {
		if got := listString(l); got != "v" {
			t.Errorf("list %q", got)
		}
	})
}

// openCachedStore is openStore with the server's key cache and memtable budget: pops read
// ahead into the key cache only when it has room.
func openCachedStore(t testing.TB) *shard.Store {
	t.Helper()
	s, err := shard.Open(shard.Options{Dir: t.TempDir(), Shards: 1, Databases: 16, BlockCacheSize: 64 << 20,
		WriteBufferSize: 256 << 20, KeyCacheSize: 8 << 20})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// Pops read the elements the next pops take into the key cache: what they return must still
// be the transaction's own writes first, then what is committed, across groups.
func TestList_PopOne_ReadAheadFollowsWrites(t *testing.T) {
	s := openCachedStore(t)
	var model []string
	var spec []string
	for i := range 200 {
		spec = append(spec, fmt.Sprint("e", i))
	}
	model = append(model, spec...)
	makeList(t, s, "l", strings.Join(spec, " "))
	pop := func(l *List, left bool) {
		t.Helper()
		want := model[len(model)-1]
		if left {
			want, model = model[0], model[1:]
		} else {
			model = model[:len(model)-1]
		}
		if got := string(l.PopOne(left)); got != want {
			t.Fatalf("pop left=%v: %q, want %q", left, got, want)
		}
	}
	withList(t, s, "l", func(l *List) {
		l.Set(-2, []byte("new"))
		model[len(model)-2] = "new"
		pop(l, false) // reads ahead the committed e136..e199, e198 among them
		pop(l, false) // the transaction's "new", not the committed e198
		pop(l, true)
		l.Set(1, []byte("new1"))
		model[1] = "new1"
		pop(l, true)
		pop(l, true)
	})
	withList(t, s, "l", func(l *List) {
		pop(l, true)
		pop(l, false)
		l.Push([]byte("p"), false)
		model = append(model, "p")
		pop(l, false)
		pop(l, false)
	})
	withList(t, s, "l", func(l *List) {
		if got := listString(l); got != strings.Join(model, " ") {
			t.Fatalf("list %q\nwant %q", got, strings.Join(model, " "))
		}
		for i := 0; len(model) > 0; i++ {
			pop(l, i%3 == 0)
		}
	})
	do(t, s, func(tx *shard.Tx) {
		if tx.Exists(0, []byte("l")) {
			t.Error("emptied list kept")
		}
	})
}

// Walks of up to listCachedReads positions read what the key cache holds and go on with an
// iterator at the first element it does not: with a cache that holds only the newest pushes,
// every range, either way, must still be the list.
func TestList_Range_PartlyCachedMatchesList(t *testing.T) {
	s, err := shard.Open(shard.Options{Dir: t.TempDir(), Shards: 1, Databases: 16, BlockCacheSize: 8 << 20,
		WriteBufferSize: 8 << 20, KeyCacheSize: 64 << 10})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	var model []string
	for g := range 20 {
		withList(t, s, "l", func(l *List) {
			for i := range 100 {
				e := fmt.Sprint("e", g*100+i)
				l.Push([]byte(e), false)
				model = append(model, e)
			}
		})
	}
	withList(t, s, "l", func(l *List) {
		l.Set(1990, []byte("set"))
		model[1990] = "set"
		for _, r := range [][2]int64{{0, 100}, {0, 1000}, {1000, 1000}, {1900, 100}, {1500, 500}, {990, 40}} {
			for _, reverse := range []bool{false, true} {
				var got []string
				l.Range(r[0], r[1], reverse, func(v []byte) bool {
					got = append(got, string(v))
					return true
				})
				want := slices.Clone(model[r[0] : r[0]+r[1]])
				if reverse {
					slices.Reverse(want)
				}
				if !slices.Equal(got, want) {
					t.Errorf("Range(%d, %d, reverse %v): %d elements, first %q, want %d first %q", r[0], r[1], reverse, len(got), got[:min(1, len(got))], len(want), want[0])
				}
			}
		}
	})
}

// A queue's last pops delete the key: the few elements left must go with it, found by their
// positions, whatever the tombstones of the elements popped before them (either end), and a
// list made again under the key must start empty.
func TestList_EmptiedAfterManyPops_LeavesNoElement(t *testing.T) {
	s := openCachedStore(t)
	for _, left := range []bool{false, true} {
		for g := range 10 {
			withList(t, s, "q", func(l *List) {
				for i := range 100 {
					l.Push([]byte(fmt.Sprint("e", g*100+i)), true)
				}
			})
		}
		var version uint64
		for range 99 {
			withList(t, s, "q", func(l *List) {
				version = l.Meta().Version
				for range 10 {
					l.PopOne(left)
				}
			})
		}
		withList(t, s, "q", func(l *List) {
			if l.Len() != 10 {
				t.Fatalf("left=%v: %d elements before the last pops, want 10", left, l.Len())
			}
			l.Pop(10, left, func([]byte) {})
		})
		do(t, s, func(tx *shard.Tx) {
			if tx.Exists(0, []byte("q")) {
				t.Fatalf("left=%v: emptied list kept", left)
			}
			it := tx.IterateData(0, []byte("q"), version, nil, nil, false)
			defer it.Close()
			if it.Valid() {
				t.Errorf("left=%v: element %q of the emptied list is still stored", left, it.Value())
			}
		})
		withList(t, s, "q", func(l *List) { l.Push([]byte("new"), false) })
		withList(t, s, "q", func(l *List) {
			if got := listString(l); got != "new" {
				t.Errorf("left=%v: list made again holds %q, want \"new\"", left, got)
			}
			l.PopOne(left)
		})
	}
}

// The elements a pop read ahead stay the shard's until other commits change them: a later
// group's LSET, LREM-like rewrite, push or DEL of the list must be what the next pops see.
func TestList_PopOne_CommitsAfterTheReadAhead_AreSeen(t *testing.T) {
	s := openCachedStore(t)
	var spec []string
	for i := range 200 {
		spec = append(spec, fmt.Sprint("e", i))
	}
	makeList(t, s, "l", strings.Join(spec, " "))
	popWant := func(left bool, want string) {
		t.Helper()
		withList(t, s, "l", func(l *List) {
			if got := string(l.PopOne(left)); got != want {
				t.Errorf("pop left=%v: %q, want %q", left, got, want)
			}
		})
	}
	popWant(false, "e199") // reads e136..e199 ahead
	withList(t, s, "l", func(l *List) { l.Set(-1, []byte("set")) })
	popWant(false, "set")
	withList(t, s, "l", func(l *List) {
		if l.RemoveMatches([]byte("e197"), 1) != 1 {
			t.Error("e197 not removed")
		}
	})
	popWant(false, "e196")
	withList(t, s, "l", func(l *List) { l.Push([]byte("pushed"), false) })
	popWant(false, "pushed")
	popWant(false, "e195")
	do(t, s, func(tx *shard.Tx) { tx.Delete(0, []byte("l")) })
	makeList(t, s, "l", "a b c")
	popWant(false, "c")
	popWant(false, "b")
	popWant(true, "a")
}
