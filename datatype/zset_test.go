package datatype

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"

	"shardis/shard"
)

// zsetString returns the members of z in score order as "member:score".
func zsetString(z *ZSet) string {
	var out []string
	it := z.Ordered(false)
	for ; it.Valid(); it.Next() {
		out = append(out, fmt.Sprintf("%s:%g", it.Member(), it.Score()))
	}
	it.Close()
	return strings.Join(out, " ")
}

// fillZSet gives zset key the members m00..m<n-1> with scores 0..n-1.
func fillZSet(t *testing.T, s *shard.Store, key string, n int) {
	do(t, s, func(tx *shard.Tx) {
		z := NewZSet(tx, 0, []byte(key))
		for i := range n {
			z.Insert(fmt.Appendf(nil, "m%02d", i), float64(i))
		}
		z.Save()
	})
}

func TestZSet_InsertUpdateRemove(t *testing.T) {
	s := openStore(t)
	key := []byte("z")
	do(t, s, func(tx *shard.Tx) {
		z, err := LookupZSet(tx, 0, key)
		if err != nil || z.Exists() || z.Len() != 0 {
			t.Errorf("missing zset: %v", err)
			return
		}
		if _, ok := z.Score([]byte("a")); ok {
			t.Error("score in a missing zset")
		}
		z.Insert([]byte("a"), 2)
		z.Insert([]byte("b"), -1.5)
		z.Insert([]byte("c"), math.Inf(1))
		z.Save()
	})
	do(t, s, func(tx *shard.Tx) {
		z, _ := LookupZSet(tx, 0, key)
		if got := zsetString(&z); got != "b:-1.5 a:2 c:+Inf" || z.Len() != 3 {
			t.Errorf("zset %q len %d", got, z.Len())
		}
		z.Update([]byte("a"), 2, -3)
		if sc, ok := z.Score([]byte("a")); !ok || sc != -3 {
			t.Errorf("score a = %v %v", sc, ok)
		}
		if !z.Delete([]byte("b")) || z.Delete([]byte("b")) {
			t.Error("Delete: wrong results")
		}
		if got := zsetString(&z); got != "a:-3 c:+Inf" {
			t.Errorf("zset %q", got)
		}
		if r := z.RankOf([]byte("c"), math.Inf(1)); r != 1 {
			t.Errorf("rank of c = %d", r)
		}
		m, sc, ok := z.Edge(true)
		if !ok || string(m) != "c" || !math.IsInf(sc, 1) {
			t.Errorf("last edge %q %v", m, sc)
		}
		z.Save()
	})
	do(t, s, func(tx *shard.Tx) {
		z, _ := LookupZSet(tx, 0, key)
		if !z.Drop() || tx.Exists(0, key) {
			t.Error("Drop kept the key")
		}
	})
	putString(t, s, "str")
	do(t, s, func(tx *shard.Tx) {
		if _, err := LookupZSet(tx, 0, []byte("str")); !errors.Is(err, ErrWrongType) {
			t.Errorf("LookupZSet of a string: %v", err)
		}
	})
}

func TestZSet_RankBigSet(t *testing.T) {
	s := openStore(t)
	fillZSet(t, s, "z", 100) // above zsetSmall: walked from both ends
	do(t, s, func(tx *shard.Tx) {
		z, _ := LookupZSet(tx, 0, []byte("z"))
		for _, i := range []int{0, 10, 50, 89, 99} {
			if r := z.RankOf(fmt.Appendf(nil, "m%02d", i), float64(i)); r != int64(i) {
				t.Errorf("rank of m%02d = %d", i, r)
			}
		}
	})
}

// walkString returns the elements Walk gives for r, as member names.
func walkString(z *ZSet, r *ZRange, anyOrder bool) string {
	var out []string
	n := z.Walk(r, anyOrder, func(m []byte, _ float64) { out = append(out, string(m)) })
	if int(n) != len(out) {
		return "count mismatch"
	}
	return strings.Join(out, " ")
}

func TestZSet_Walk(t *testing.T) {
	s := openStore(t)
	fillZSet(t, s, "z", 10)
	do(t, s, func(tx *shard.Tx) {
		z, _ := LookupZSet(tx, 0, []byte("z"))
		for _, tc := range []struct {
			r    ZRange
			want string
		}{
			{ZRange{By: ZByRank, Start: 0, Stop: 2, Limit: -1}, "m00 m01 m02"},
			{ZRange{By: ZByRank, Start: -2, Stop: -1, Limit: -1}, "m08 m09"},
			{ZRange{By: ZByRank, Start: 0, Stop: 1, Rev: true, Limit: -1}, "m09 m08"},
			{ZRange{By: ZByRank, Start: 5, Stop: 2, Limit: -1}, ""},
			{ZRange{By: ZByScore, Min: 2, Max: 4, Limit: -1}, "m02 m03 m04"},
			{ZRange{By: ZByScore, Min: 2, Max: 4, MinEx: true, MaxEx: true, Limit: -1}, "m03"},
			{ZRange{By: ZByScore, Min: 0, Max: 9, Offset: 8, Limit: 5}, "m08 m09"},
			{ZRange{By: ZByScore, Min: 3, Max: 6, Rev: true, Limit: 2}, "m06 m05"},
			{ZRange{By: ZByScore, Min: 0, Max: 9, Offset: -1, Limit: -1}, ""},
			{ZRange{By: ZByScore, Min: 5, Max: 1, Limit: -1}, ""},
		} {
			if got := walkString(&z, &tc.r, false); got != tc.want {
				t.Errorf("%+v: %q, want %q", tc.r, got, tc.want)
			}
		}
		r := ZRange{By: ZByScore, Min: 2, Max: 7, Limit: -1}
		if n := z.CountScore(&r); n != 6 {
			t.Errorf("CountScore = %d", n)
		}
		if z.CoversAll(&r) {
			t.Error("CoversAll of a part")
		}
		all := ZRange{By: ZByRank, Start: 0, Stop: -1}
		if !z.CoversAll(&all) {
			t.Error("CoversAll of 0..-1 false")
		}
	})
}

func TestZSet_WalkLex(t *testing.T) {
	s := openStore(t)
	do(t, s, func(tx *shard.Tx) {
		z := NewZSet(tx, 0, []byte("z"))
		for _, m := range []string{"a", "b", "c", "d", "e"} {
			z.Insert([]byte(m), 0)
		}
		z.Save()
	})
	do(t, s, func(tx *shard.Tx) {
		z, _ := LookupZSet(tx, 0, []byte("z"))
		inc := func(v string) ZLexBound { return ZLexBound{Val: []byte(v)} }
		exc := func(v string) ZLexBound { return ZLexBound{Val: []byte(v), Ex: true} }
		for _, tc := range []struct {
			r    ZRange
			want string
		}{
			{ZRange{By: ZByLex, LexMin: ZLexBound{Inf: -1, Ex: true}, LexMax: ZLexBound{Inf: 1, Ex: true}, Limit: -1}, "a b c d e"},
			{ZRange{By: ZByLex, LexMin: inc("b"), LexMax: exc("d"), Limit: -1}, "b c"},
			{ZRange{By: ZByLex, LexMin: inc("b"), LexMax: inc("d"), Rev: true, Limit: -1}, "d c b"},
			{ZRange{By: ZByLex, LexMin: inc("b"), LexMax: inc("e"), Offset: 1, Limit: 2}, "c d"},
			{ZRange{By: ZByLex, LexMin: inc("d"), LexMax: inc("b"), Limit: -1}, ""},
		} {
			if got := walkString(&z, &tc.r, false); got != tc.want {
				t.Errorf("%+v: %q, want %q", tc.r, got, tc.want)
			}
		}
	})
}

func TestZSet_PopMembersAtNew(t *testing.T) {
	s := openStore(t)
	fillZSet(t, s, "z", 10)
	do(t, s, func(tx *shard.Tx) {
		z, _ := LookupZSet(tx, 0, []byte("z"))
		var got []string
		members, dropped := z.Pop(3, true, func(i int, m []byte, sc float64) { got = append(got, fmt.Sprintf("%d%s:%g", i, m, sc)) })
		if dropped || len(members) != 3 || strings.Join(got, " ") != "0m09:9 1m08:8 2m07:7" {
			t.Errorf("Pop max: %v %v", got, dropped)
		}
		if e := z.MemberAt(6); string(e.Member) != "m06" || e.Score != 6 {
			t.Errorf("MemberAt(6) = %q", e.Member)
		}
		at := z.MembersAt([]uint64{0, 3, 6})
		if string(at[0].Member) != "m00" || string(at[1].Member) != "m03" || string(at[2].Member) != "m06" {
			t.Errorf("MembersAt: %v", at)
		}
		var ms []string
		it := z.Members([]byte("m05"))
		for ; it.Valid(); it.Next() {
			ms = append(ms, string(it.Member()))
		}
		it.Close()
		if strings.Join(ms, " ") != "m05 m06" {
			t.Errorf("Members from m05: %v", ms)
		}
	})
	do(t, s, func(tx *shard.Tx) {
		z, _ := LookupZSet(tx, 0, []byte("z"))
		if z.Len() != 7 {
			t.Errorf("len %d after popping 3 of 10", z.Len())
		}
		_, dropped := z.Pop(100, false, func(int, []byte, float64) {})
		if !dropped || tx.Exists(0, []byte("z")) {
			t.Error("popping everything kept the key")
		}
	})
}

// zsetReport runs every kind of read over the sorted set at key and returns what they gave.
func zsetReport(t *testing.T, s *shard.Store, key string) string {
	t.Helper()
	var out strings.Builder
	do(t, s, func(tx *shard.Tx) {
		z, _ := LookupZSet(tx, 0, []byte(key))
		emit := func(m []byte, sc float64) { fmt.Fprintf(&out, "%s:%g ", m, sc) }
		ranges := []ZRange{
			{By: ZByRank, Start: 2, Stop: 7, Limit: -1},
			{By: ZByRank, Start: 0, Stop: -1, Rev: true, Limit: -1},
			{By: ZByScore, Min: 3, Max: 9, MaxEx: true, Limit: -1},
			{By: ZByScore, Min: 1, Max: 20, Rev: true, Offset: 2, Limit: 4},
			{By: ZByLex, LexMin: ZLexBound{Val: []byte("m05")}, LexMax: ZLexBound{Inf: 1}, Limit: -1},
			{By: ZByLex, LexMin: ZLexBound{Inf: -1}, LexMax: ZLexBound{Val: []byte("m12"), Ex: true}, Rev: true, Limit: 3},
		}
		for i := range ranges {
			fmt.Fprintf(&out, "| n=%d ", z.Walk(&ranges[i], false, emit))
			fmt.Fprintf(&out, "count=%d ", z.CountScore(&ranges[i]))
		}
		for _, m := range []string{"m00", "m07", "m29", "none"} {
			sc, ok := z.Score([]byte(m))
			fmt.Fprintf(&out, "| %s %g %v ", m, sc, ok)
			if ok {
				fmt.Fprintf(&out, "rank %d ", z.RankOf([]byte(m), sc))
			}
		}
		m, sc, _ := z.Edge(true)
		fmt.Fprintf(&out, "| last %s:%g | at %v ", m, sc, z.MembersAt([]uint64{0, 5, 5, 29}))
		z.ScoreRanges([][2]float64{{2, 4}, {8, 9}}, func(m []byte, sc float64) bool { emit(m, sc); return true })
		for _, it := range []ZSetIter{z.Members([]byte("m2")), z.Ordered(true)} {
			out.WriteString("| ")
			for ; it.Valid(); it.Next() {
				emit(it.Member(), it.Score())
			}
			it.Close()
		}
	})
	return out.String()
}

// A sorted set of up to 128 members of up to 64 bytes is packed in its meta; the insert past
// either converts it to data keys in its transaction. Every read gives the same in both forms.
func TestZSet_PackedAndDataKeys_ReadAlike(t *testing.T) {
	fill := func(s *shard.Store, n int) {
		do(t, s, func(tx *shard.Tx) {
			z, _ := LookupZSet(tx, 0, []byte("z"))
			for i := range n {
				z.Insert(fmt.Appendf(nil, "m%02d", i), float64(i%15)) // ties: member order
			}
			z.Save()
		})
	}
	packed, unpacked := openStore(t), openStore(t)
	fill(packed, 30)
	fill(unpacked, 129) // converted by its 129th member
	do(t, unpacked, func(tx *shard.Tx) {
		z, _ := LookupZSet(tx, 0, []byte("z"))
		for i := 30; i < 129; i++ {
			z.Delete(fmt.Appendf(nil, "m%02d", i))
		}
		z.Save()
	})
	for _, c := range []struct {
		s      *shard.Store
		packed bool
	}{{packed, true}, {unpacked, false}} {
		if m, n := stored(t, c.s, "z"); m.Packed != c.packed || m.Count != 30 || n != map[bool]int{true: 0, false: 60}[c.packed] {
			t.Fatalf("packed %v count %d, %d data keys; want packed %v", m.Packed, m.Count, n, c.packed)
		}
	}
	if a, b := zsetReport(t, packed, "z"), zsetReport(t, unpacked, "z"); a != b {
		t.Fatalf("packed:\n%s\ndata keys:\n%s", a, b)
	}
	long := openStore(t)
	do(t, long, func(tx *shard.Tx) {
		z := NewZSet(tx, 0, []byte("z"))
		z.Insert([]byte("a"), 1)
		z.Insert([]byte(strings.Repeat("x", 65)), 2)
		z.Save()
	})
	if m, n := stored(t, long, "z"); m.Packed || n != 4 {
		t.Fatalf("a 65-byte member: packed %v, %d data keys", m.Packed, n)
	}
}
