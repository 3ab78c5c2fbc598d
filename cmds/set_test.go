package cmds_test

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"shardis/codec"
	"shardis/datatype"
	"shardis/internal/testserver"
	"shardis/shard"
)

var setCtx = context.Background()

// setStart starts a server of the test's own and returns a RESP2 client.
func setStart(t *testing.T) (*testserver.Server, *redis.Client) {
	t.Helper()
	t.Parallel()
	s := testserver.Start(t)
	return s, s.Client(t)
}

// setStrings returns an array reply as strings.
func setStrings(t *testing.T, c *redis.Client, args ...any) []string {
	t.Helper()
	v, err := doCmd(t, c, args...)
	if err != nil {
		t.Fatalf("%v: %v", args, err)
	}
	arr, ok := v.([]any)
	if !ok {
		t.Fatalf("%v = %#v, want an array", args, v)
	}
	out := make([]string, len(arr))
	for i, x := range arr {
		s, ok := x.(string)
		if !ok {
			t.Fatalf("%v: element %d is %#v", args, i, x)
		}
		out[i] = s
	}
	return out
}

// setSorted returns an array reply as sorted strings (set replies have no order).
func setSorted(t *testing.T, c *redis.Client, args ...any) []string {
	t.Helper()
	out := setStrings(t, c, args...)
	sort.Strings(out)
	return out
}

func setWantMembers(t *testing.T, c *redis.Client, key string, want ...string) {
	t.Helper()
	sort.Strings(want)
	if got := setSorted(t, c, "SMEMBERS", key); !slices.Equal(got, want) {
		t.Fatalf("SMEMBERS %s = %q, want %q", key, got, want)
	}
}

// setOtherShard returns a key named prefix<n> that lives in another shard than key.
func setOtherShard(s *testserver.Server, key, prefix string) string {
	for i := 0; ; i++ {
		if k := prefix + strconv.Itoa(i); s.Store.ShardOf([]byte(k)) != s.Store.ShardOf([]byte(key)) {
			return k
		}
	}
}

const setWrongType = "WRONGTYPE Operation against a key holding the wrong kind of value"

func TestSADD_SREM_SCARD(t *testing.T) {
	_, c := setStart(t)
	expect(t, c, int64(3), "SADD", "s", "a", "b", "c")
	expect(t, c, int64(1), "SADD", "s", "a", "d", "d")
	expect(t, c, int64(0), "SADD", "s", "a")
	expect(t, c, int64(1), "SADD", "s", "")
	expect(t, c, int64(5), "SCARD", "s")
	expect(t, c, "set", "TYPE", "s")
	expect(t, c, int64(2), "SREM", "s", "a", "a", "zz", "")
	expect(t, c, int64(3), "SCARD", "s")
	setWantMembers(t, c, "s", "b", "c", "d")
	expect(t, c, int64(0), "SREM", "nokey", "a")
	expect(t, c, int64(0), "SCARD", "nokey")
	// The last member out removes the key.
	expect(t, c, int64(3), "SREM", "s", "b", "c", "d")
	expect(t, c, int64(0), "EXISTS", "s")
	expect(t, c, int64(1), "SADD", "s", "x")
	setWantMembers(t, c, "s", "x")

	expect(t, c, "OK", "SET", "str", "v")
	expectErr(t, c, setWrongType, "SADD", "str", "a")
	expectErr(t, c, setWrongType, "SREM", "str", "a")
	expectErr(t, c, setWrongType, "SCARD", "str")
	expectErr(t, c, "ERR wrong number of arguments for 'sadd' command", "SADD", "s")
	expectErr(t, c, "ERR wrong number of arguments for 'srem' command", "SREM", "s")
	expectErr(t, c, "ERR wrong number of arguments for 'scard' command", "SCARD", "s", "t")
}

func TestSADD_KeepsTTLAndExpires(t *testing.T) {
	_, c := setStart(t)
	expect(t, c, int64(1), "SADD", "s", "a")
	expect(t, c, int64(1), "PEXPIRE", "s", 100000)
	expect(t, c, int64(1), "SADD", "s", "b")
	if ttl := c.PTTL(setCtx, "s").Val(); ttl <= 0 {
		t.Fatalf("PTTL after SADD = %v, want the TTL kept", ttl)
	}
	expect(t, c, int64(1), "PEXPIRE", "s", 30)
	time.Sleep(60 * time.Millisecond)
	expect(t, c, int64(0), "SCARD", "s")
	expect(t, c, int64(0), "SISMEMBER", "s", "a")
	expect(t, c, int64(1), "SADD", "s", "c")
	setWantMembers(t, c, "s", "c")
}

func TestSISMEMBER_SMISMEMBER(t *testing.T) {
	_, c := setStart(t)
	expect(t, c, int64(3), "SADD", "s", "a", "b\x00\r\n", "")
	expect(t, c, int64(1), "SISMEMBER", "s", "a")
	expect(t, c, int64(1), "SISMEMBER", "s", "b\x00\r\n")
	expect(t, c, int64(1), "SISMEMBER", "s", "")
	expect(t, c, int64(0), "SISMEMBER", "s", "b")
	expect(t, c, int64(0), "SISMEMBER", "nokey", "a")
	expect(t, c, []any{int64(1), int64(0), int64(1), int64(1)}, "SMISMEMBER", "s", "a", "zz", "", "a")
	expect(t, c, []any{int64(0), int64(0)}, "SMISMEMBER", "nokey", "a", "b")
	expect(t, c, "OK", "SET", "str", "v")
	expectErr(t, c, setWrongType, "SISMEMBER", "str", "a")
	expectErr(t, c, setWrongType, "SMISMEMBER", "str", "a")
	expectErr(t, c, "ERR wrong number of arguments for 'smismember' command", "SMISMEMBER", "s")
}

func TestSMEMBERS_RESP2AndRESP3(t *testing.T) {
	s, c := setStart(t)
	expect(t, c, []any{}, "SMEMBERS", "nokey")
	expect(t, c, int64(3), "SADD", "s", "b", "a", "c")
	setWantMembers(t, c, "s", "a", "b", "c")
	expect(t, c, "OK", "SET", "str", "v")
	expectErr(t, c, setWrongType, "SMEMBERS", "str")

	// RESP3 replies sets as sets; SRANDMEMBER and SSCAN stay arrays, as in Redis 7.0.
	out := testserver.Raw(t, s.Addr, []byte("HELLO 3\r\nSMEMBERS s\r\nSMEMBERS nokey\r\nSPOP nokey 2\r\nSRANDMEMBER s 5\r\nSUNION s\r\n"), 300*time.Millisecond)
	for _, want := range []string{
		"~3\r\n$1\r\na\r\n$1\r\nb\r\n$1\r\nc\r\n~0\r\n~0\r\n*3\r\n",
		"~3\r\n$1\r\na\r\n$1\r\nb\r\n$1\r\nc\r\n",
	} {
		if !bytes.Contains(out, []byte(want)) {
			t.Fatalf("RESP3 replies %q do not contain %q", out, want)
		}
	}
}

func TestSPOP(t *testing.T) {
	_, c := setStart(t)
	expectNil(t, c, "SPOP", "nokey")
	expect(t, c, []any{}, "SPOP", "nokey", 3)
	expect(t, c, int64(5), "SADD", "s", "a", "b", "c", "d", "e")
	all := map[string]bool{"a": true, "b": true, "c": true, "d": true, "e": true}

	v, err := doCmd(t, c, "SPOP", "s")
	if err != nil || !all[v.(string)] {
		t.Fatalf("SPOP s = %#v, %v", v, err)
	}
	delete(all, v.(string))
	expect(t, c, int64(0), "SISMEMBER", "s", v)
	expect(t, c, int64(4), "SCARD", "s")

	popped := setStrings(t, c, "SPOP", "s", 2)
	if len(popped) != 2 || popped[0] == popped[1] || !all[popped[0]] || !all[popped[1]] {
		t.Fatalf("SPOP s 2 = %q, want two distinct members of %v", popped, all)
	}
	delete(all, popped[0])
	delete(all, popped[1])
	expect(t, c, int64(2), "SCARD", "s")
	expect(t, c, []any{}, "SPOP", "s", 0)

	// A count covering the set pops all of it and removes the key.
	rest := setSorted(t, c, "SPOP", "s", 10)
	var want []string
	for m := range all {
		want = append(want, m)
	}
	sort.Strings(want)
	if !slices.Equal(rest, want) {
		t.Fatalf("SPOP s 10 = %q, want %q", rest, want)
	}
	expect(t, c, int64(0), "EXISTS", "s")

	// Popping the last member alone removes the key too.
	expect(t, c, int64(1), "SADD", "one", "x")
	expect(t, c, "x", "SPOP", "one")
	expect(t, c, int64(0), "EXISTS", "one")

	expect(t, c, "OK", "SET", "str", "v")
	expectErr(t, c, setWrongType, "SPOP", "str")
	expectErr(t, c, setWrongType, "SPOP", "str", 0)
	for _, bad := range []string{"-1", "x", "9223372036854775808", ""} {
		expectErr(t, c, "ERR value is out of range, must be positive", "SPOP", "str", bad)
	}
	expectErr(t, c, "ERR syntax error", "SPOP", "s", 1, 2)
}

func TestSRANDMEMBER(t *testing.T) {
	_, c := setStart(t)
	expectNil(t, c, "SRANDMEMBER", "nokey")
	expect(t, c, []any{}, "SRANDMEMBER", "nokey", 3)
	expect(t, c, []any{}, "SRANDMEMBER", "nokey", -3)
	members := []string{"a", "b", "c", "d", "e", "f", "g", "h", "i", "j"}
	args := []any{"SADD", "s"}
	for _, m := range members {
		args = append(args, m)
	}
	expect(t, c, int64(10), args...)
	in := func(m string) bool { return slices.Contains(members, m) }

	seen := map[string]bool{}
	for range 500 {
		v, err := doCmd(t, c, "SRANDMEMBER", "s")
		if err != nil || !in(v.(string)) {
			t.Fatalf("SRANDMEMBER s = %#v, %v", v, err)
		}
		seen[v.(string)] = true
	}
	if len(seen) != len(members) {
		t.Fatalf("500 draws saw only %d of %d members: %v", len(seen), len(members), seen)
	}

	got := setStrings(t, c, "SRANDMEMBER", "s", 4)
	distinct := map[string]bool{}
	for _, m := range got {
		if !in(m) {
			t.Fatalf("SRANDMEMBER s 4 returned %q", m)
		}
		distinct[m] = true
	}
	if len(got) != 4 || len(distinct) != 4 {
		t.Fatalf("SRANDMEMBER s 4 = %q, want 4 distinct members", got)
	}
	if got := setSorted(t, c, "SRANDMEMBER", "s", 100); !slices.Equal(got, members) {
		t.Fatalf("SRANDMEMBER s 100 = %q, want the whole set", got)
	}
	for _, n := range []int{-3, -10, -25} {
		got := setStrings(t, c, "SRANDMEMBER", "s", n)
		if len(got) != -n {
			t.Fatalf("SRANDMEMBER s %d returned %d members", n, len(got))
		}
		for _, m := range got {
			if !in(m) {
				t.Fatalf("SRANDMEMBER s %d returned %q", n, m)
			}
		}
	}
	expect(t, c, []any{}, "SRANDMEMBER", "s", 0)
	expect(t, c, int64(10), "SCARD", "s")

	expect(t, c, "OK", "SET", "str", "v")
	expectErr(t, c, setWrongType, "SRANDMEMBER", "str")
	expectErr(t, c, setWrongType, "SRANDMEMBER", "str", 0)
	expectErr(t, c, "ERR value is not an integer or out of range", "SRANDMEMBER", "s", "x")
	expectErr(t, c, "ERR value is not an integer or out of range", "SRANDMEMBER", "nokey", "9223372036854775808")
	expectErr(t, c, "ERR value is out of range, value must between -9223372036854775807 and 9223372036854775807",
		"SRANDMEMBER", "s", "-9223372036854775808")
	expectErr(t, c, "ERR syntax error", "SRANDMEMBER", "s", 1, 2)
}

func TestSMOVE_AcrossShards(t *testing.T) {
	s, c := setStart(t)
	src := "src"
	dst := setOtherShard(s, src, "dst")
	expect(t, c, int64(2), "SADD", src, "a", "b")
	expect(t, c, int64(1), "SMOVE", src, dst, "a")
	setWantMembers(t, c, src, "b")
	setWantMembers(t, c, dst, "a")
	expect(t, c, int64(0), "SMOVE", src, dst, "zz")
	// Already in the destination: removed from the source all the same.
	expect(t, c, int64(1), "SADD", dst, "b")
	expect(t, c, int64(1), "SMOVE", src, dst, "b")
	expect(t, c, int64(0), "EXISTS", src)
	setWantMembers(t, c, dst, "a", "b")
	// Same key: only reports membership.
	expect(t, c, int64(1), "SMOVE", dst, dst, "a")
	expect(t, c, int64(0), "SMOVE", dst, dst, "zz")
	setWantMembers(t, c, dst, "a", "b")

	expect(t, c, "OK", "SET", "str", "v")
	expect(t, c, int64(0), "SMOVE", "nokey", "str", "a") // a missing source wins over a wrong type
	expectErr(t, c, setWrongType, "SMOVE", dst, "str", "zz")
	expectErr(t, c, setWrongType, "SMOVE", "str", dst, "a")
	setWantMembers(t, c, dst, "a", "b")
}

func TestSINTER_SUNION_SDIFF(t *testing.T) {
	s, c := setStart(t)
	a := "a"
	b := setOtherShard(s, a, "b")
	d := "{a}d"
	expect(t, c, int64(5), "SADD", a, "1", "2", "3", "4", "")
	expect(t, c, int64(4), "SADD", b, "2", "4", "6", "")
	expect(t, c, int64(3), "SADD", d, "4", "8", "9")

	for _, tc := range []struct {
		args []any
		want []string
	}{
		{[]any{"SINTER", a}, []string{"", "1", "2", "3", "4"}},
		{[]any{"SINTER", a, b}, []string{"", "2", "4"}},
		{[]any{"SINTER", a, b, d}, []string{"4"}},
		{[]any{"SINTER", a, a}, []string{"", "1", "2", "3", "4"}},
		{[]any{"SINTER", a, "nokey"}, []string{}},
		{[]any{"SUNION", a, b}, []string{"", "1", "2", "3", "4", "6"}},
		{[]any{"SUNION", a, "nokey", d, a}, []string{"", "1", "2", "3", "4", "8", "9"}},
		{[]any{"SUNION", "nokey"}, []string{}},
		{[]any{"SDIFF", a, b}, []string{"1", "3"}},
		{[]any{"SDIFF", a, b, d}, []string{"1", "3"}},
		{[]any{"SDIFF", b, a, "nokey"}, []string{"6"}},
		{[]any{"SDIFF", a, a}, []string{}},
		{[]any{"SDIFF", a}, []string{"", "1", "2", "3", "4"}},
		{[]any{"SDIFF", "nokey", a}, []string{}},
	} {
		if got := setSorted(t, c, tc.args...); !slices.Equal(got, tc.want) {
			t.Fatalf("%v = %q, want %q", tc.args, got, tc.want)
		}
	}

	expect(t, c, "OK", "SET", "str", "v")
	for _, name := range []string{"SINTER", "SUNION", "SDIFF"} {
		// Every key is type-checked, even after a missing one.
		expectErr(t, c, setWrongType, name, "nokey", "str")
		expectErr(t, c, setWrongType, name, a, "str")
	}
}

// SDIFF merges with seeks across gaps: a big second set and a small first one.
func TestSDIFF_LargeGaps(t *testing.T) {
	_, c := setStart(t)
	args := []any{"SADD", "{g}big"}
	for i := range 2000 {
		args = append(args, fmt.Sprintf("m%05d", i))
	}
	expect(t, c, int64(2000), args...)
	expect(t, c, int64(5), "SADD", "{g}small", "a", "m00000", "m01000", "m01000x", "m01999")
	if got := setSorted(t, c, "SDIFF", "{g}small", "{g}big"); !slices.Equal(got, []string{"a", "m01000x"}) {
		t.Fatalf("SDIFF = %q", got)
	}
	if got := len(setStrings(t, c, "SDIFF", "{g}big", "{g}small")); got != 1997 {
		t.Fatalf("SDIFF big small has %d members, want 1997", got)
	}
	expect(t, c, int64(3), "SINTERCARD", 2, "{g}big", "{g}small")
	expect(t, c, int64(2002), "SUNIONSTORE", "{g}u", "{g}small", "{g}big")
}

func TestSINTERSTORE_SUNIONSTORE_SDIFFSTORE(t *testing.T) {
	s, c := setStart(t)
	a := "a"
	b := setOtherShard(s, a, "b")
	dst := setOtherShard(s, b, "dst")
	expect(t, c, int64(3), "SADD", a, "1", "2", "3")
	expect(t, c, int64(3), "SADD", b, "2", "3", "4")

	// The destination is overwritten whatever its type, and loses its TTL.
	expect(t, c, "OK", "SET", dst, "v", "EX", 1000)
	expect(t, c, int64(2), "SINTERSTORE", dst, a, b)
	setWantMembers(t, c, dst, "2", "3")
	expect(t, c, int64(-1), "TTL", dst)
	expect(t, c, int64(4), "SUNIONSTORE", dst, a, b)
	setWantMembers(t, c, dst, "1", "2", "3", "4")
	expect(t, c, int64(1), "SDIFFSTORE", dst, a, b)
	setWantMembers(t, c, dst, "1")

	// The destination may be a source.
	expect(t, c, int64(4), "SUNIONSTORE", dst, dst, b)
	setWantMembers(t, c, dst, "1", "2", "3", "4")
	expect(t, c, int64(3), "SINTERSTORE", dst, dst, a, dst)
	setWantMembers(t, c, dst, "1", "2", "3")

	// An empty result deletes the destination.
	expect(t, c, int64(0), "SDIFFSTORE", dst, a, a)
	expect(t, c, int64(0), "EXISTS", dst)
	expect(t, c, "OK", "SET", dst, "v")
	expect(t, c, int64(0), "SINTERSTORE", dst, a, "nokey")
	expect(t, c, int64(0), "EXISTS", dst)
	expect(t, c, int64(0), "SUNIONSTORE", dst, "nokey")

	expect(t, c, "OK", "SET", "str", "v")
	expect(t, c, int64(1), "SADD", dst, "keep")
	expectErr(t, c, setWrongType, "SINTERSTORE", dst, "nokey", "str")
	expectErr(t, c, setWrongType, "SUNIONSTORE", dst, a, "str")
	expectErr(t, c, setWrongType, "SDIFFSTORE", dst, "str")
	setWantMembers(t, c, dst, "keep") // nothing written before the error
	expectErr(t, c, "ERR wrong number of arguments for 'sinterstore' command", "SINTERSTORE", dst)
}

func TestSINTERCARD(t *testing.T) {
	_, c := setStart(t)
	expect(t, c, int64(4), "SADD", "{c}a", "1", "2", "3", "4")
	expect(t, c, int64(3), "SADD", "{c}b", "2", "3", "4")
	expect(t, c, int64(3), "SINTERCARD", 2, "{c}a", "{c}b")
	expect(t, c, int64(4), "SINTERCARD", 1, "{c}a")
	expect(t, c, int64(2), "SINTERCARD", 2, "{c}a", "{c}b", "LIMIT", 2)
	expect(t, c, int64(3), "SINTERCARD", 2, "{c}a", "{c}b", "limit", 0)
	expect(t, c, int64(1), "SINTERCARD", 2, "{c}a", "{c}b", "LIMIT", 5, "LIMIT", 1)
	expect(t, c, int64(0), "SINTERCARD", 2, "{c}a", "nokey")

	expect(t, c, "OK", "SET", "str", "v")
	expectErr(t, c, setWrongType, "SINTERCARD", 2, "nokey", "str")
	for _, n := range []string{"0", "-1", "x"} {
		expectErr(t, c, "ERR numkeys should be greater than 0", "SINTERCARD", n, "{c}a")
	}
	expectErr(t, c, "ERR Number of keys can't be greater than number of args", "SINTERCARD", 3, "{c}a", "{c}b")
	for _, l := range []string{"-1", "x", "9223372036854775808"} {
		expectErr(t, c, "ERR LIMIT can't be negative", "SINTERCARD", 1, "{c}a", "LIMIT", l)
	}
	expectErr(t, c, "ERR syntax error", "SINTERCARD", 1, "{c}a", "LIMIT")
	expectErr(t, c, "ERR syntax error", "SINTERCARD", 1, "{c}a", "FOO", 1)

	expect(t, c, []any{"{c}a", "{c}b"}, "COMMAND", "GETKEYS", "SINTERCARD", 2, "{c}a", "{c}b", "LIMIT", 1)
	expectErr(t, c, "ERR Invalid arguments specified for command", "COMMAND", "GETKEYS", "SINTERCARD", 3, "{c}a", "{c}b")
}

// Keys of SINTERCARD in several shards run atomically through the coordinator.
func TestSINTERCARD_AcrossShards(t *testing.T) {
	s, c := setStart(t)
	a := "a"
	b := setOtherShard(s, a, "b")
	expect(t, c, int64(3), "SADD", a, "1", "2", "3")
	expect(t, c, int64(2), "SADD", b, "2", "3")
	expect(t, c, int64(2), "SINTERCARD", 2, a, b)
}

func TestSSCAN(t *testing.T) {
	_, c := setStart(t)
	want := []string{""}
	args := []any{"SADD", "s", ""}
	for i := range 25 {
		m := fmt.Sprintf("m%02d", i)
		want = append(want, m)
		args = append(args, m)
	}
	expect(t, c, int64(26), args...)
	for _, count := range []int{1, 3, 10, 100} {
		var got []string
		cursor := "0"
		for calls := 0; ; calls++ {
			if calls > 100 {
				t.Fatalf("COUNT %d: no cursor 0 after 100 calls", count)
			}
			v, err := doCmd(t, c, "SSCAN", "s", cursor, "COUNT", count)
			if err != nil {
				t.Fatal(err)
			}
			page := v.([]any)
			cursor = page[0].(string)
			for _, m := range page[1].([]any) {
				got = append(got, m.(string))
			}
			if cursor == "0" {
				break
			}
		}
		sort.Strings(got)
		if !slices.Equal(got, want) {
			t.Fatalf("SSCAN COUNT %d returned %q, want %q", count, got, want)
		}
	}
	v, err := doCmd(t, c, "SSCAN", "s", 0, "MATCH", "m1*", "COUNT", 1000)
	if err != nil {
		t.Fatal(err)
	}
	if page := v.([]any); page[0] != "0" || len(page[1].([]any)) != 10 {
		t.Fatalf("SSCAN MATCH m1* = %#v", v)
	}
	expect(t, c, []any{"0", []any{}}, "SSCAN", "nokey", 0, "COUNT", 0) // a missing key skips the options
	expect(t, c, "OK", "SET", "str", "v")
	expectErr(t, c, setWrongType, "SSCAN", "str", 0)
	expectErr(t, c, "ERR invalid cursor", "SSCAN", "s", "x")
	expectErr(t, c, "ERR invalid cursor", "SSCAN", "nokey", "18446744073709551616")
	expectErr(t, c, "ERR syntax error", "SSCAN", "s", 0, "COUNT", 0)
	expectErr(t, c, "ERR value is not an integer or out of range", "SSCAN", "s", 0, "COUNT", "x")
	expectErr(t, c, "ERR syntax error", "SSCAN", "s", 0, "TYPE", "set")
	expectErr(t, c, "ERR syntax error", "SSCAN", "s", 0, "MATCH")
}

// setDump returns every set of db 0 in st as "key=m1,m2,..." lines, and every other key as
// "key:type".
func setDump(t *testing.T, st *shard.Store) []string {
	t.Helper()
	var out []string
	for id := range st.NumShards() {
		if err := st.Do(id, func(tx *shard.Tx) {
			type found struct {
				key []byte
				m   codec.Meta
			}
			var keys []found
			tx.ScanKeys(id, 0, nil, func(key []byte, m *codec.Meta) bool {
				keys = append(keys, found{bytes.Clone(key), *m})
				return true
			})
			for _, f := range keys {
				if f.m.Type != codec.TypeSet {
					out = append(out, fmt.Sprintf("%q:%s", f.key, f.m.Type))
					continue
				}
				var members []string
				set, _ := datatype.SetFromMeta(tx, 0, f.key, f.m, true) // packed in the meta or in data keys
				it := set.Iter(nil)
				for ; it.Valid(); it.Next() {
					members = append(members, string(it.Member()))
				}
				it.Close()
				if uint64(len(members)) != f.m.Count {
					t.Errorf("%q: count %d, %d members", f.key, f.m.Count, len(members))
				}
				out = append(out, fmt.Sprintf("%q=%q", f.key, members))
			}
		}); err != nil {
			t.Fatal(err)
		}
	}
	sort.Strings(out)
	return out
}

// Every write of the family logs its effect: replaying the binlog of each shard into an empty
// store rebuilds the same sets, random pops and cross-shard moves included.
func TestSetFamily_BinlogReplay(t *testing.T) {
	s, c := setStart(t)
	a := "a"
	b := setOtherShard(s, a, "b")
	d := setOtherShard(s, b, "d")
	var members []any
	for i := range 40 {
		members = append(members, fmt.Sprintf("m%d", i))
	}
	steps := [][]any{
		append([]any{"SADD", a}, members...),
		append([]any{"SADD", b}, members[10:30]...),
		{"SADD", b, "x", "y", "x"},
		{"SREM", a, "m0", "m1", "nope"},
		{"SPOP", a},
		{"SPOP", a, 3},
		{"SPOP", b, 2},
		{"SMOVE", a, b, "m20"},
		{"SMOVE", a, d, "m21"},
		{"SINTERSTORE", d, a, b},
		{"SUNIONSTORE", "u", a, b, d},
		{"SDIFFSTORE", "{a}df", a, b},
		{"SET", "str", "v"},
		{"SUNIONSTORE", "str", b},
		{"SADD", "gone", "1", "2"},
		{"SPOP", "gone", 5},
		{"SADD", "gone2", "1"},
		{"SPOP", "gone2"},
		{"SADD", "gone3", "1"},
		{"SDIFFSTORE", "gone3", "gone3", "gone3"},
		{"SADD", "ttl", "1"},
		{"EXPIRE", "ttl", 1000},
		{"SADD", "ttl", "2"},
		{"SADD", "cp", "p", "q"},
		{"RENAME", "cp", "cp2"},
	}
	for _, st := range steps {
		if _, err := doCmd(t, c, st...); err != nil {
			t.Fatalf("%v: %v", st, err)
		}
	}
	want := setDump(t, s.Store)
	dst, srv := testserver.ReplayTarget(t, s.Store.NumShards())
	for id := range s.Store.NumShards() {
		if _, err := srv.ReplayShard(s.Store, id); err != nil {
			t.Fatalf("shard %d: %v", id, err)
		}
	}
	if got := setDump(t, dst); !slices.Equal(got, want) {
		t.Fatalf("after replay:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if len(want) < 8 {
		t.Fatalf("only %d keys: %q", len(want), want)
	}
}

// A set of a million members is built through the Tx API, then used through the protocol:
// point reads stay point reads, and DEL drops it at once.
func TestSetFamily_BigKey(t *testing.T) {
	const n = 1_000_000
	const batch = 10_000
	s, c := setStart(t)
	key := []byte("big")
	id := s.Store.ShardOf(key)
	var version uint64
	if err := s.Store.Do(id, func(tx *shard.Tx) { version = tx.NewVersion(key) }); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	for lo := 0; lo < n; lo += batch {
		if err := s.Store.Do(id, func(tx *shard.Tx) {
			prefix := tx.DataPrefix(0, key, version)
			raw := slices.Clone(prefix)
			for i := lo; i < lo+batch; i++ {
				raw = strconv.AppendInt(append(raw[:len(prefix)], 'm'), int64(i), 10)
				tx.PutData(key, raw, nil)
			}
			if lo+batch >= n {
				tx.SetMeta(0, key, &codec.Meta{Type: codec.TypeSet, Version: version, Count: n})
			}
		}); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("built %d members in %v", n, time.Since(start))

	expect(t, c, int64(n), "SCARD", "big")
	expect(t, c, int64(1), "SISMEMBER", "big", "m500000")
	expect(t, c, int64(0), "SISMEMBER", "big", "m1000000")
	expect(t, c, []any{int64(1), int64(0), int64(1)}, "SMISMEMBER", "big", "m0", "x", "m999999")
	v, err := doCmd(t, c, "SSCAN", "big", 0, "COUNT", 10)
	if err != nil {
		t.Fatal(err)
	}
	if page := v.([]any); page[0] == "0" || len(page[1].([]any)) != 10 {
		t.Fatalf("SSCAN big 0 COUNT 10 = %#v", v)
	}
	expect(t, c, int64(1), "SADD", "big", "extra")
	expect(t, c, int64(n+1), "SCARD", "big")

	start = time.Now()
	expect(t, c, int64(1), "DEL", "big")
	t.Logf("DEL of %d members took %v", n, time.Since(start)) // speed belongs in benchmarks
	expect(t, c, int64(0), "SCARD", "big")
	expect(t, c, int64(0), "SISMEMBER", "big", "m500000")
	expect(t, c, int64(1), "SADD", "big", "x")
	setWantMembers(t, c, "big", "x")
}

// Every way of drawing members reaches the whole set, from both ends of it, about evenly.
func TestSRANDMEMBER_CoversTheSet(t *testing.T) {
	_, c := setStart(t)
	const n = 200
	args := []any{"SADD", "s"}
	for i := range n {
		args = append(args, fmt.Sprintf("m%03d", i))
	}
	expect(t, c, int64(n), args...)
	for _, tc := range []struct {
		args  []any
		calls int
	}{
		{[]any{"SRANDMEMBER", "s"}, 4000},
		{[]any{"SRANDMEMBER", "s", 50}, 100},
		{[]any{"SRANDMEMBER", "s", -50}, 100},
	} {
		seen := map[string]int{}
		p := c.Pipeline()
		cmds := make([]*redis.Cmd, tc.calls)
		for i := range cmds {
			cmds[i] = p.Do(setCtx, tc.args...)
		}
		if _, err := p.Exec(setCtx); err != nil {
			t.Fatal(err)
		}
		for _, cmd := range cmds {
			switch v := cmd.Val().(type) {
			case string:
				seen[v]++
			case []any:
				distinct := map[string]bool{}
				for _, x := range v {
					seen[x.(string)]++
					distinct[x.(string)] = true
				}
				if tc.args[2].(int) > 0 && len(distinct) != len(v) {
					t.Fatalf("%v returned repeats: %v", tc.args, v)
				}
			}
		}
		if len(seen) != n {
			t.Fatalf("%v x %d saw %d of %d members", tc.args, tc.calls, len(seen), n)
		}
		for m, k := range seen {
			if k > 80 { // about 20-25 expected
				t.Fatalf("%v x %d drew %s %d times", tc.args, tc.calls, m, k)
			}
		}
	}
}
