package datatype

import (
	"errors"
	"fmt"
	"math/rand/v2"
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
	for i := range 100 { // more than one node
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

// openCachedStore is openStore with the server's key cache and memtable budget: nodes are
// served from the key cache.
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

// Pops read their nodes from the transaction, then the key cache: what they return must be the
// transaction's own writes first, then what is committed, across groups.
func TestList_PopOne_OwnWritesThenCommitted_Seen(t *testing.T) {
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
		pop(l, false) // reads the committed last node, e198 among its slots
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

// Walks read nodes from the key cache or RocksDB: with a cache that holds only the newest
// pushes, every range, either way, must still be the list.
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

// The nodes a pop read stay in the key cache until other commits change them: a later
// group's LSET, LREM-like rewrite, push or DEL of the list must be what the next pops see.
func TestList_PopOne_LaterCommits_AreSeen(t *testing.T) {
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
	popWant(false, "e199") // caches the last node
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

// listKeysValid checks the stored layout of list key against its meta: every data key is a
// node spanning live positions or the big element of a live big slot, and every live slot is
// filled. It returns the number of node keys and of big element keys.
func listKeysValid(t *testing.T, tx *shard.Tx, key string) (nodes, bigs int) {
	t.Helper()
	m, ok := tx.Meta(0, []byte(key))
	if !ok {
		return 0, 0
	}
	it := tx.IterateData(0, []byte(key), m.Version, nil, nil, false)
	defer it.Close()
	for ; it.Valid(); it.Next() {
		node, seq, big, ok := codec.ParseListElem(it.Elem())
		switch {
		case !ok:
			t.Errorf("data key element %x", it.Elem())
		case big:
			bigs++
			n, slot := codec.ListNodeOf(seq)
			v, _ := tx.GetData([]byte(key), append(tx.DataPrefix(0, []byte(key), m.Version), codec.AppendListNodeElem(nil, n)...))
			if k, _ := codec.ListNodeSlot(v, slot); seq < m.Head || seq >= m.Tail || k != codec.ListSlotBig {
				t.Errorf("big element at %d (slot kind %d) out of [%d, %d)", seq, k, m.Head, m.Tail)
			}
		default:
			nodes++
			if node < m.Head>>codec.ListNodeShift || node > (m.Tail-1)>>codec.ListNodeShift {
				t.Errorf("node %d holds no position of [%d, %d)", node, m.Head, m.Tail)
			}
			for i := range codec.ListNodeSlots {
				seq := node<<codec.ListNodeShift + uint64(i)
				if k, _ := codec.ListNodeSlot(it.Value(), i); seq >= m.Head && seq < m.Tail && k == codec.ListSlotEmpty {
					t.Errorf("live position %d empty in its node", seq)
				}
			}
		}
	}
	return nodes, bigs
}

// listElem is the i-th element a test pushes: every seventh one longer than the inline limit,
// so it goes to a key of its own.
func listElem(i int) string {
	if i%7 == 3 {
		return fmt.Sprintf("big%d-%s", i, strings.Repeat("x", codec.ListInlineMax))
	}
	return fmt.Sprint("e", i)
}

// Random pushes, pops, sets, inserts, removals and trims across node boundaries, in groups of
// a few operations per transaction, against a slice: the list reads back equal after every
// group, its stored keys stay exactly its live nodes and big elements, and an emptied list
// made again starts empty.
func TestList_Nodes_RandomOperations_MatchModel(t *testing.T) {
	s := openCachedStore(t)
	rng := rand.New(rand.NewPCG(7, 27))
	var model []string
	next := 0
	elem := func() string { next++; return listElem(next) }
	for round := range 400 {
		var ops []string
		before := slices.Clone(model)
		withList(t, s, "l", func(l *List) {
			for range 1 + rng.IntN(4) {
				op := rng.IntN(10)
				ops = append(ops, fmt.Sprint(op, " len ", len(model)))
				switch {
				case op < 3: // pushes, sometimes many: a whole node and more
					n := 1 + rng.IntN(3)
					if rng.IntN(8) == 0 {
						n = 70 + rng.IntN(70)
					}
					left := rng.IntN(2) == 0
					ops = append(ops, fmt.Sprint("push ", n, left))
					for range n {
						e := elem()
						l.Push([]byte(e), left)
						if left {
							model = append([]string{e}, model...)
						} else {
							model = append(model, e)
						}
					}
				case op < 5 && len(model) > 0: // pops
					left := rng.IntN(2) == 0
					n := 1 + rng.IntN(min(len(model), 80))
					ops = append(ops, fmt.Sprint("pop ", n, left))
					var got []string
					if n == 1 {
						got = append(got, string(l.PopOne(left)))
					} else {
						l.Pop(uint64(n), left, func(v []byte) { got = append(got, string(v)) })
					}
					var want []string
					if left {
						want, model = slices.Clone(model[:n]), model[n:]
					} else {
						want = slices.Clone(model[len(model)-n:])
						slices.Reverse(want)
						model = model[:len(model)-n]
					}
					if !slices.Equal(got, want) {
						t.Errorf("round %d: pop %d left=%v = %.80q, want %.80q", round, n, left, got, want)
					}
				case op == 5 && len(model) > 0:
					i, e := rng.IntN(len(model)), elem()
					l.Set(int64(i), []byte(e))
					model[i] = e
				case op == 6 && len(model) > 0:
					i, e, before := rng.IntN(len(model)), elem(), rng.IntN(2) == 0
					pivot := model[i]
					i = slices.Index(model, pivot)
					if !before {
						i++
					}
					l.Insert([]byte(pivot), []byte(e), before)
					model = slices.Insert(model, i, e)
				case op == 7 && len(model) > 0:
					// Duplicate an element so LREM has several matches, then remove some.
					e := model[rng.IntN(len(model))]
					l.Push([]byte(e), false)
					model = append(model, e)
					count := int64(rng.IntN(5) - 2)
					ops = append(ops, fmt.Sprintf("lrem %q %d", e, count))
					l.RemoveMatches([]byte(e), count)
					model = removeModel(model, e, count)
				case op == 8 && len(model) > 0:
					off := rng.IntN(len(model))
					kept := rng.IntN(len(model) - off + 1)
					if rng.IntN(3) > 0 { // mostly trims of a few at either end
						off = rng.IntN(min(len(model), 3))
						kept = max(0, len(model)-off-rng.IntN(3))
					}
					ops = append(ops, fmt.Sprint("trim ", off, kept))
					l.Trim(int64(off), int64(kept))
					model = model[off : off+kept]
					if kept == 0 {
						model = nil
					}
				}
			}
		})
		do(t, s, func(tx *shard.Tx) {
			l, _ := LookupList(tx, 0, []byte("l"))
			if got := listString(&l); got != strings.Join(model, " ") {
				t.Errorf("round %d: list %.300q\nwant %.300q", round, got, strings.Join(model, " "))
			}
			if len(model) == 0 && l.Exists() {
				t.Errorf("round %d: an emptied list kept", round)
			}
			listKeysValid(t, tx, "l")
		})
		if t.Failed() {
			t.Logf("round %d: operations %q, %d elements, before %q", round, ops, len(model), before)
			return
		}
	}
}

// removeModel is LREM on a slice.
func removeModel(model []string, e string, count int64) []string {
	var out []string
	removed := int64(0)
	limit := count
	if limit < 0 {
		limit = -limit
	}
	if count >= 0 {
		for _, v := range model {
			if v == e && (limit == 0 || removed < limit) {
				removed++
				continue
			}
			out = append(out, v)
		}
		return out
	}
	for i := len(model) - 1; i >= 0; i-- {
		if model[i] == e && removed < limit {
			removed++
			continue
		}
		out = append(out, model[i])
	}
	slices.Reverse(out)
	return out
}

// A queue's pops change only the meta until a node's last position goes: popping 63 of a
// full node's 64 positions keeps its key, the 64th deletes it; pushes fill one node per 64
// elements; a big element has a key of its own, gone with its pop.
func TestList_Nodes_PopsDeleteANodeWhenItEmpties(t *testing.T) {
	s := openStore(t)
	withList(t, s, "q", func(l *List) {
		for i := range 3 * codec.ListNodeSlots {
			l.Push([]byte(fmt.Sprint("e", i)), false) // from ListInitialSeq: node-aligned
		}
		l.Push([]byte(strings.Repeat("b", 1000)), false)
	})
	counts := func() (nodes, bigs int) {
		do(t, s, func(tx *shard.Tx) { nodes, bigs = listKeysValid(t, tx, "q") })
		return nodes, bigs
	}
	if n, b := counts(); n != 4 || b != 1 {
		t.Fatalf("after 193 pushes: %d nodes, %d big elements, want 4 and 1", n, b)
	}
	for range codec.ListNodeSlots - 1 {
		withList(t, s, "q", func(l *List) { l.PopOne(true) })
	}
	if n, _ := counts(); n != 4 {
		t.Fatalf("after 63 pops: %d nodes, want 4", n)
	}
	withList(t, s, "q", func(l *List) { l.PopOne(true) })
	if n, _ := counts(); n != 3 {
		t.Fatalf("after 64 pops: %d nodes, want 3", n)
	}
	withList(t, s, "q", func(l *List) {
		if v := l.PopOne(false); len(v) != 1000 {
			t.Fatalf("popped %d bytes, want the big element", len(v))
		}
	})
	if n, b := counts(); n != 2 || b != 0 {
		t.Fatalf("after the big element's pop: %d nodes, %d big elements, want 2 and 0", n, b)
	}
}

// A node stays small whatever its elements' size: 64 elements of 1 KB make 64 keys of their
// own and a node of a few hundred bytes, so a push does not rewrite kilobytes.
func TestList_Nodes_BigElementsOutOfNode(t *testing.T) {
	s := openStore(t)
	big := strings.Repeat("z", 1024)
	withList(t, s, "q", func(l *List) {
		for range codec.ListNodeSlots {
			l.Push([]byte(big), true)
		}
		l.Push([]byte("small"), true)
	})
	do(t, s, func(tx *shard.Tx) {
		m, _ := tx.Meta(0, []byte("q"))
		prefix := tx.DataPrefix(0, []byte("q"), m.Version)
		for n := m.Head >> codec.ListNodeShift; n <= (m.Tail-1)>>codec.ListNodeShift; n++ {
			if v, _ := tx.GetData([]byte("q"), codec.AppendListNodeElem(slices.Clone(prefix), n)); len(v) > 512 {
				t.Errorf("node %d is %d bytes", n, len(v))
			}
		}
		if _, b := listKeysValid(t, tx, "q"); b != codec.ListNodeSlots {
			t.Errorf("%d big elements, want %d", b, codec.ListNodeSlots)
		}
		l, _ := LookupList(tx, 0, []byte("q"))
		if v, _ := l.Index(0); string(v) != "small" {
			t.Errorf("index 0 = %q", v)
		}
		if v, _ := l.Index(-1); string(v) != big {
			t.Errorf("index -1 = %.10q", v)
		}
	})
}
