package cmds_test

import (
	"bytes"
	"context"
	"fmt"
	"net"
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

var zsetCtx = context.Background()

const zsetWrongType = "WRONGTYPE Operation against a key holding the wrong kind of value"

// zsetStart starts a server of the test's own and returns a RESP2 client.
func zsetStart(t *testing.T) (*testserver.Server, *redis.Client) {
	t.Helper()
	t.Parallel()
	s := testserver.Start(t)
	return s, s.Client(t)
}

// zsetStrs returns an array reply as strings ("<nil>" for nil elements).
func zsetStrs(t *testing.T, c *redis.Client, args ...any) []string {
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
		out[i] = fmt.Sprint(x)
	}
	return out
}

// zsetWantStrs checks an array reply given as space-separated words ("" for empty).
func zsetWantStrs(t *testing.T, c *redis.Client, want string, args ...any) {
	t.Helper()
	got := strings.Join(zsetStrs(t, c, args...), " ")
	if got != want {
		t.Fatalf("%v = %q, want %q", args, got, want)
	}
}

// zsetOtherShard returns a key named prefix<n> that lives in another shard than key.
func zsetOtherShard(s *testserver.Server, key, prefix string) string {
	for i := 0; ; i++ {
		if k := prefix + strconv.Itoa(i); s.Store.ShardOf([]byte(k)) != s.Store.ShardOf([]byte(key)) {
			return k
		}
	}
}

// zsetFill gives key n members m0000.. with scores 0..n-1 (in batches).
func zsetFill(t testing.TB, c *redis.Client, key string, n int) {
	t.Helper()
	for lo := 0; lo < n; lo += 1000 {
		args := []any{"ZADD", key}
		for i := lo; i < min(lo+1000, n); i++ {
			args = append(args, i, fmt.Sprintf("m%04d", i))
		}
		if err := c.Do(zsetCtx, args...).Err(); err != nil {
			t.Fatal(err)
		}
	}
}

// zsetRaw sends commands on one connection (after HELLO 3 when resp3) and returns what
// arrives before the reply of a closing ECHO.
func zsetRaw(t *testing.T, s *testserver.Server, resp3 bool, cmds ...[]string) string {
	t.Helper()
	var b bytes.Buffer
	enc := func(args []string) {
		fmt.Fprintf(&b, "*%d\r\n", len(args))
		for _, a := range args {
			fmt.Fprintf(&b, "$%d\r\n%s\r\n", len(a), a)
		}
	}
	if resp3 {
		enc([]string{"HELLO", "3"})
	}
	for _, c := range cmds {
		enc(c)
	}
	enc([]string{"ECHO", "END"})
	conn, err := net.Dial("tcp", s.Addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.Write(b.Bytes()); err != nil {
		t.Fatal(err)
	}
	_ = conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	var out []byte
	buf := make([]byte, 64<<10)
	for !bytes.HasSuffix(out, []byte("$3\r\nEND\r\n")) {
		n, err := conn.Read(buf)
		out = append(out, buf[:n]...)
		if err != nil {
			t.Fatalf("read: %v after %q", err, out)
		}
	}
	return string(out[:len(out)-len("$3\r\nEND\r\n")])
}

func TestZAdd_OptionsAndReplies(t *testing.T) {
	_, c := zsetStart(t)
	expect(t, c, int64(3), "ZADD", "z", 1, "a", 2, "b", 3, "c")
	expect(t, c, int64(0), "ZADD", "z", 10, "a")
	expect(t, c, "10", "ZSCORE", "z", "a")
	expect(t, c, int64(1), "ZADD", "z", "CH", 11, "a")
	expect(t, c, int64(1), "ZADD", "z", "NX", 5, "a", 4, "d")
	expect(t, c, "11", "ZSCORE", "z", "a")
	expect(t, c, int64(0), "ZADD", "z", "XX", 5, "a", 4, "e")
	expectNil(t, c, "ZSCORE", "z", "e")
	expect(t, c, int64(1), "ZADD", "z", "XX", "CH", 6, "a", 4, "e")
	expect(t, c, int64(0), "ZADD", "z", "GT", "CH", 1, "a")
	expect(t, c, int64(1), "ZADD", "z", "gt", "ch", 7, "a")
	expect(t, c, int64(1), "ZADD", "z", "LT", "CH", 1, "a", 9, "b")
	expect(t, c, "1", "ZSCORE", "z", "a")
	expect(t, c, int64(1), "ZADD", "z", "GT", 100, "new") // GT/LT only gate existing members
	expect(t, c, "3.5", "ZADD", "z", "INCR", 2.5, "a")
	expectNil(t, c, "ZADD", "z", "NX", "INCR", 1, "a")
	expectNil(t, c, "ZADD", "z", "GT", "INCR", -1, "a")
	expectNil(t, c, "ZADD", "z", "GT", "INCR", 0, "a") // GT: an unchanged score is not greater
	expect(t, c, "3.5", "ZADD", "z", "INCR", 0, "a")
	expect(t, c, int64(2), "ZADD", "z", "CH", 1, "x", 1, "x", 2, "x")
	expect(t, c, int64(1), "ZADD", "z", 1, "y", 2, "y")
	expect(t, c, "2", "ZSCORE", "z", "y")
	// -0 is stored as 0, as Redis's compact encoding does.
	expect(t, c, int64(1), "ZADD", "z", "-0", "negzero")
	expect(t, c, "0", "ZSCORE", "z", "negzero")

	// XX on a missing key creates nothing.
	expect(t, c, int64(0), "ZADD", "nokey", "XX", 1, "a")
	expectNil(t, c, "ZADD", "nokey", "XX", "INCR", 1, "a")
	expect(t, c, int64(0), "EXISTS", "nokey")

	expectErr(t, c, "ERR XX and NX options at the same time are not compatible", "ZADD", "z", "NX", "XX", 1, "a")
	expectErr(t, c, "ERR GT, LT, and/or NX options at the same time are not compatible", "ZADD", "z", "GT", "NX", 1, "a")
	expectErr(t, c, "ERR GT, LT, and/or NX options at the same time are not compatible", "ZADD", "z", "GT", "LT", 1, "a")
	expectErr(t, c, "ERR INCR option supports a single increment-element pair", "ZADD", "z", "INCR", 1, "a", 2, "b")
	expectErr(t, c, "ERR syntax error", "ZADD", "z", "FOO", 1, "a")
	expectErr(t, c, "ERR syntax error", "ZADD", "z", "GT", "LT", "NX", "XX", 1)
	expectErr(t, c, "ERR syntax error", "ZADD", "z", 1, "a", 2)
	expectErr(t, c, "ERR value is not a valid float", "ZADD", "z", "FOO", 1)
	expectErr(t, c, "ERR wrong number of arguments for 'zadd' command", "ZADD", "z", 1)
	expect(t, c, "inf", "ZADD", "z", "INCR", "inf", "a")
	expectErr(t, c, "ERR resulting score is not a number (NaN)", "ZADD", "z", "INCR", "-inf", "a")
	expect(t, c, "inf", "ZSCORE", "z", "a")

	expect(t, c, "OK", "SET", "str", "v")
	expectErr(t, c, zsetWrongType, "ZADD", "str", 1, "a")
	expectErr(t, c, "ERR value is not a valid float", "ZADD", "str", "nan", "a") // scores first
}

// Scores parse as C's strtod does for Redis's getDoubleFromObject.
func TestZAdd_ScoreParsing(t *testing.T) {
	_, c := zsetStart(t)
	for in, want := range map[string]string{
		"0x10": "16", "0x1p3": "8", "0x.8": "0.5", "0x1.8p1": "3", "1e-310": "9.9999999999999694e-311",
		".5": "0.5", "5.": "5", "-.5e1": "-5", "+inf": "inf", "INFINITY": "inf", "-Inf": "-inf",
		"1e-5": "1.0000000000000001e-05", "+.5": "0.5", "1e308": "1e+308", "0e-400": "0",
	} {
		expect(t, c, int64(1), "ZADD", "p"+in, in, "m")
		expect(t, c, want, "ZSCORE", "p"+in, "m")
	}
	for _, in := range []string{"nan", "NaN", "nan(1)", "1e400", "-1e400", "1e-400", " 1", "1 ", "", "0x", "1e",
		"1e+", "inf1", "infin", "1\x00", "-", "+", ".", "0x1g", "1_0", "1,5", "(1"} {
		expectErr(t, c, "ERR value is not a valid float", "ZADD", "bad", in, "m")
	}
	expect(t, c, int64(0), "EXISTS", "bad")
}

func TestZIncrBy(t *testing.T) {
	_, c := zsetStart(t)
	expect(t, c, "2.5", "ZINCRBY", "z", 2.5, "a")
	expect(t, c, "1.5", "ZINCRBY", "z", -1, "a")
	expect(t, c, int64(1), "ZCARD", "z")
	expect(t, c, "inf", "ZINCRBY", "z", "inf", "a")
	expectErr(t, c, "ERR resulting score is not a number (NaN)", "ZINCRBY", "z", "-inf", "a")
	expectErr(t, c, "ERR value is not a valid float", "ZINCRBY", "z", "abc", "a")
	// ZINCRBY reads options as ZADD does, which leaves an odd number of arguments.
	expectErr(t, c, "ERR syntax error", "ZINCRBY", "z", "nx", "a")
	expectErr(t, c, "ERR syntax error", "ZINCRBY", "z", "xx", 1)
	expectErr(t, c, "ERR wrong number of arguments for 'zincrby' command", "ZINCRBY", "z", 1, "a", "b")
	expect(t, c, "OK", "SET", "str", "v")
	expectErr(t, c, zsetWrongType, "ZINCRBY", "str", 1, "a")
}

func TestZRem_ZCard_ZScore_ZMScore(t *testing.T) {
	_, c := zsetStart(t)
	expect(t, c, int64(3), "ZADD", "z", 1, "a", 2, "b", 3, "c")
	expect(t, c, int64(3), "ZCARD", "z")
	expect(t, c, int64(0), "ZCARD", "nokey")
	expect(t, c, "2", "ZSCORE", "z", "b")
	expectNil(t, c, "ZSCORE", "z", "x")
	expectNil(t, c, "ZSCORE", "nokey", "x")
	expect(t, c, []any{"1", nil, "3"}, "ZMSCORE", "z", "a", "x", "c")
	expect(t, c, []any{nil, nil}, "ZMSCORE", "nokey", "a", "b")
	expect(t, c, int64(2), "ZREM", "z", "a", "b", "b", "x")
	expect(t, c, int64(1), "ZCARD", "z")
	expect(t, c, int64(0), "ZREM", "nokey", "a")
	expect(t, c, int64(1), "ZREM", "z", "c")
	expect(t, c, int64(0), "EXISTS", "z") // an emptied set is deleted
	expect(t, c, "OK", "SET", "str", "v")
	for _, args := range [][]any{{"ZREM", "str", "a"}, {"ZCARD", "str"}, {"ZSCORE", "str", "a"}, {"ZMSCORE", "str", "a"}} {
		expectErr(t, c, zsetWrongType, args...)
	}
}

func TestZRank_ZRevRank(t *testing.T) {
	_, c := zsetStart(t)
	expect(t, c, int64(3), "ZADD", "z", 1, "a", 2, "b", 3, "c")
	expect(t, c, int64(0), "ZRANK", "z", "a")
	expect(t, c, int64(2), "ZRANK", "z", "c")
	expect(t, c, int64(2), "ZREVRANK", "z", "a")
	expectNil(t, c, "ZRANK", "z", "x")
	expectNil(t, c, "ZREVRANK", "nokey", "x")
	expectErr(t, c, "ERR wrong number of arguments for 'zrank' command", "ZRANK", "z", "a", "WITHSCORE")
	// A bigger set is walked from both ends.
	zsetFill(t, c, "big", 500)
	for _, i := range []int{0, 1, 100, 249, 250, 251, 400, 498, 499} {
		m := fmt.Sprintf("m%04d", i)
		expect(t, c, int64(i), "ZRANK", "big", m)
		expect(t, c, int64(499-i), "ZREVRANK", "big", m)
	}
}

func TestZRange_ByRank(t *testing.T) {
	_, c := zsetStart(t)
	expect(t, c, int64(4), "ZADD", "z", 1, "a", 2, "b", 3, "c", 4, "d")
	zsetWantStrs(t, c, "a b c d", "ZRANGE", "z", 0, -1)
	zsetWantStrs(t, c, "b c", "ZRANGE", "z", 1, 2)
	zsetWantStrs(t, c, "c d", "ZRANGE", "z", -2, 100)
	zsetWantStrs(t, c, "a b c d", "ZRANGE", "z", -100, 100)
	zsetWantStrs(t, c, "", "ZRANGE", "z", 3, 1)
	zsetWantStrs(t, c, "", "ZRANGE", "z", 4, 10)
	zsetWantStrs(t, c, "d c", "ZRANGE", "z", 0, 1, "REV")
	zsetWantStrs(t, c, "d c", "ZREVRANGE", "z", 0, 1)
	zsetWantStrs(t, c, "b a", "ZREVRANGE", "z", -2, -1)
	zsetWantStrs(t, c, "a 1 b 2", "ZRANGE", "z", 0, 1, "WITHSCORES")
	zsetWantStrs(t, c, "d 4", "ZREVRANGE", "z", 0, 0, "withscores")
	zsetWantStrs(t, c, "", "ZRANGE", "nokey", 0, -1)

	// Ranges near the far end are walked from it (buffered when small) or from the start.
	zsetFill(t, c, "big", 6000)
	got := zsetStrs(t, c, "ZRANGE", "big", -3, -1)
	if strings.Join(got, " ") != "m5997 m5998 m5999" {
		t.Fatalf("ZRANGE big -3 -1 = %q", got)
	}
	got = zsetStrs(t, c, "ZRANGE", "big", 500, -1)
	if len(got) != 5500 || got[0] != "m0500" || got[5499] != "m5999" {
		t.Fatalf("ZRANGE big 500 -1: %d elements, %q..%q", len(got), got[0], got[len(got)-1])
	}
	got = zsetStrs(t, c, "ZRANGE", "big", 5000, 5999, "REV")
	if len(got) != 1000 || got[0] != "m0999" || got[999] != "m0000" {
		t.Fatalf("ZRANGE big 5000 5999 REV: %d elements, %q..%q", len(got), got[0], got[len(got)-1])
	}
	got = zsetStrs(t, c, "ZRANGE", "big", 4000, 4001, "WITHSCORES")
	if strings.Join(got, " ") != "m4000 4000 m4001 4001" {
		t.Fatalf("ZRANGE big 4000 4001 WITHSCORES = %q", got)
	}
}

func TestZRange_ByScore(t *testing.T) {
	_, c := zsetStart(t)
	expect(t, c, int64(6), "ZADD", "z", "-inf", "ninf", 1, "a", 2, "b", 2, "bb", 3, "c", "inf", "pinf")
	zsetWantStrs(t, c, "ninf a b bb c pinf", "ZRANGEBYSCORE", "z", "-inf", "+inf")
	zsetWantStrs(t, c, "a b bb", "ZRANGEBYSCORE", "z", 1, 2)
	zsetWantStrs(t, c, "b bb", "ZRANGEBYSCORE", "z", "(1", 2)
	zsetWantStrs(t, c, "a", "ZRANGEBYSCORE", "z", 1, "(2")
	zsetWantStrs(t, c, "", "ZRANGEBYSCORE", "z", "(2", "(2")
	zsetWantStrs(t, c, "", "ZRANGEBYSCORE", "z", 3, 1)
	zsetWantStrs(t, c, "a b bb c pinf", "ZRANGEBYSCORE", "z", "(-inf", "inf")
	zsetWantStrs(t, c, "a 1 b 2", "ZRANGEBYSCORE", "z", 0, 10, "WITHSCORES", "LIMIT", 0, 2)
	zsetWantStrs(t, c, "b bb c", "ZRANGEBYSCORE", "z", 0, 10, "LIMIT", 1, -1)
	zsetWantStrs(t, c, "", "ZRANGEBYSCORE", "z", 0, 10, "LIMIT", -1, 5) // negative offset: nothing
	zsetWantStrs(t, c, "", "ZRANGEBYSCORE", "z", 0, 10, "LIMIT", 1, 0)
	zsetWantStrs(t, c, "c bb b", "ZREVRANGEBYSCORE", "z", 3, "(1")
	zsetWantStrs(t, c, "bb b", "ZREVRANGEBYSCORE", "z", 10, 0, "LIMIT", 1, 2)
	zsetWantStrs(t, c, "b bb", "ZRANGE", "z", 2, 2, "BYSCORE")
	zsetWantStrs(t, c, "c 3 bb 2", "ZRANGE", "z", 3, "(1", "BYSCORE", "REV", "LIMIT", 0, 2, "WITHSCORES")
	// Bounds parse like Redis's zslParseRange: white space before, empty is 0, overflow is inf.
	zsetWantStrs(t, c, "a", "ZRANGEBYSCORE", "z", " 1", "1")
	zsetWantStrs(t, c, "pinf", "ZRANGEBYSCORE", "z", "1e400", "+inf")
	zsetWantStrs(t, c, "ninf", "ZRANGEBYSCORE", "z", "-inf", "")
	zsetWantStrs(t, c, "a", "ZRANGEBYSCORE", "z", "1\x00junk", "(2")
	for _, b := range []string{"abc", "nan", "((1", "[1", "1 ", "(nan"} {
		expectErr(t, c, "ERR min or max is not a float", "ZRANGEBYSCORE", "z", b, 10)
		expectErr(t, c, "ERR min or max is not a float", "ZRANGE", "z", 0, b, "BYSCORE")
	}
	expectErr(t, c, "ERR min or max is not a float", "ZRANGEBYSCORE", "nokey", "x", 1)
	zsetWantStrs(t, c, "", "ZRANGEBYSCORE", "nokey", 0, 1)
	expectErr(t, c, "ERR syntax error", "ZRANGEBYSCORE", "z", 0, 1, "REV")
	expectErr(t, c, "ERR syntax error", "ZRANGEBYSCORE", "z", 0, 1, "BYSCORE")
	expectErr(t, c, "ERR syntax error", "ZRANGEBYSCORE", "z", 0, 1, "LIMIT", 1)
	expectErr(t, c, "ERR value is not an integer or out of range", "ZRANGEBYSCORE", "z", 0, 1, "LIMIT", "a", 1)
}

func TestZRange_ByLex(t *testing.T) {
	_, c := zsetStart(t)
	expect(t, c, int64(7), "ZADD", "z", 0, "a", 0, "b", 0, "c", 0, "d", 0, "e", 0, "", 0, "bb")
	zsetWantStrs(t, c, " a b bb c d e", "ZRANGEBYLEX", "z", "-", "+")
	zsetWantStrs(t, c, "b bb c", "ZRANGEBYLEX", "z", "[b", "[c")
	zsetWantStrs(t, c, "bb", "ZRANGEBYLEX", "z", "(b", "(c")
	zsetWantStrs(t, c, " a", "ZRANGEBYLEX", "z", "-", "(b")
	zsetWantStrs(t, c, "", "ZRANGEBYLEX", "z", "[", "(")
	zsetWantStrs(t, c, "", "ZRANGEBYLEX", "z", "+", "-")
	zsetWantStrs(t, c, "", "ZRANGEBYLEX", "z", "-", "-")
	zsetWantStrs(t, c, "", "ZRANGEBYLEX", "z", "[c", "[b")
	zsetWantStrs(t, c, "bb c", "ZRANGEBYLEX", "z", "[b", "+", "LIMIT", 1, 2)
	zsetWantStrs(t, c, "e d c", "ZREVRANGEBYLEX", "z", "+", "[c")
	zsetWantStrs(t, c, "c bb", "ZREVRANGEBYLEX", "z", "(d", "(b")
	zsetWantStrs(t, c, "bb b", "ZREVRANGEBYLEX", "z", "[c", "-", "LIMIT", 1, 2)
	zsetWantStrs(t, c, "e d", "ZRANGE", "z", "+", "(c", "BYLEX", "REV")
	zsetWantStrs(t, c, "c d e", "ZRANGE", "z", "[bc", "+", "BYLEX")
	zsetWantStrs(t, c, "", "ZRANGE", "z", "(e", "+", "BYLEX")
	for _, b := range []string{"a", "", "+x", "-x", "*"} {
		expectErr(t, c, "ERR min or max not valid string range item", "ZRANGEBYLEX", "z", b, "+")
		expectErr(t, c, "ERR min or max not valid string range item", "ZLEXCOUNT", "z", "-", b)
	}
	expectErr(t, c, "ERR syntax error, WITHSCORES not supported in combination with BYLEX", "ZRANGEBYLEX", "z", "-", "+", "WITHSCORES")
	expectErr(t, c, "ERR syntax error, WITHSCORES not supported in combination with BYLEX", "ZRANGE", "z", "-", "+", "BYLEX", "WITHSCORES")

	// Equal scores in a bigger set: the start is found by seeking, not scanning.
	args := []any{"ZADD", "big"}
	for i := range 3000 {
		args = append(args, 7, fmt.Sprintf("k%05d", i))
	}
	expect(t, c, int64(3000), args...)
	zsetWantStrs(t, c, "k02000 k02001", "ZRANGEBYLEX", "big", "[k02", "+", "LIMIT", 0, 2)
	zsetWantStrs(t, c, "k01999 k01998", "ZREVRANGEBYLEX", "big", "(k02", "-", "LIMIT", 0, 2)
	expect(t, c, int64(1000), "ZLEXCOUNT", "big", "[k01", "(k02")
}

func TestZRange_OptionErrors(t *testing.T) {
	_, c := zsetStart(t)
	expect(t, c, int64(2), "ZADD", "z", 1, "a", 2, "b")
	const limitRank = "ERR syntax error, LIMIT is only supported in combination with either BYSCORE or BYLEX"
	expectErr(t, c, limitRank, "ZRANGE", "z", 0, 1, "LIMIT", 0, 1)
	expectErr(t, c, limitRank, "ZREVRANGE", "z", 0, 1, "LIMIT", 0, 1)
	zsetWantStrs(t, c, "a b", "ZRANGE", "z", 0, 1, "LIMIT", 5, -1) // a count of -1 is no LIMIT
	for _, opts := range [][]any{{"REV", "REV"}, {"BYSCORE", "BYLEX"}, {"BYSCORE", "BYSCORE"}, {"FOO"}, {"LIMIT", 1}} {
		expectErr(t, c, "ERR syntax error", append([]any{"ZRANGE", "z", 0, 1}, opts...)...)
	}
	expectErr(t, c, "ERR syntax error", "ZREVRANGE", "z", 0, 1, "BYSCORE")
	expectErr(t, c, "ERR value is not an integer or out of range", "ZRANGE", "z", 0, 1, "LIMIT", "a", "b")
	expectErr(t, c, "ERR value is not an integer or out of range", "ZRANGE", "z", "a", 1)
	expectErr(t, c, "ERR value is not an integer or out of range", "ZRANGE", "z", 0, "1.5")
	expectErr(t, c, "ERR min or max not valid string range item", "ZRANGE", "z", "a", "b", "BYLEX")
	expectErr(t, c, "ERR syntax error", "ZRANGESTORE", "d", "z", 0, 1, "WITHSCORES")
	expectErr(t, c, limitRank, "ZRANGESTORE", "d", "z", 0, 1, "LIMIT", 0, 1)
	expect(t, c, "OK", "SET", "str", "v")
	expectErr(t, c, zsetWrongType, "ZRANGE", "str", 0, 1)
	expectErr(t, c, "ERR value is not an integer or out of range", "ZRANGE", "str", "x", 1) // parse first
}

// RESP3 replies: WITHSCORES elements are [member, double] arrays, as Redis 7.0 sends them.
func TestZSet_RESP3Replies(t *testing.T) {
	s, c := zsetStart(t)
	expect(t, c, int64(3), "ZADD", "z", 1, "a", 2, "b", 3.5, "c")
	expect(t, c, int64(2), "ZADD", "{z}y", 1, "a", 5, "x")
	cases := []struct {
		args         []string
		resp2, resp3 string
	}{
		{[]string{"ZRANGE", "z", "0", "1", "WITHSCORES"},
			"*4\r\n$1\r\na\r\n$1\r\n1\r\n$1\r\nb\r\n$1\r\n2\r\n",
			"*2\r\n*2\r\n$1\r\na\r\n,1\r\n*2\r\n$1\r\nb\r\n,2\r\n"},
		{[]string{"ZRANGEBYSCORE", "z", "(2", "+inf", "WITHSCORES"},
			"*2\r\n$1\r\nc\r\n$3\r\n3.5\r\n", "*1\r\n*2\r\n$1\r\nc\r\n,3.5\r\n"},
		{[]string{"ZSCORE", "z", "c"}, "$3\r\n3.5\r\n", ",3.5\r\n"},
		{[]string{"ZSCORE", "z", "x"}, "$-1\r\n", "_\r\n"},
		{[]string{"ZMSCORE", "z", "a", "x"}, "*2\r\n$1\r\n1\r\n$-1\r\n", "*2\r\n,1\r\n_\r\n"},
		{[]string{"ZUNION", "2", "z", "{z}y", "WITHSCORES"},
			"*8\r\n$1\r\na\r\n$1\r\n2\r\n$1\r\nb\r\n$1\r\n2\r\n$1\r\nc\r\n$3\r\n3.5\r\n$1\r\nx\r\n$1\r\n5\r\n",
			"*4\r\n*2\r\n$1\r\na\r\n,2\r\n*2\r\n$1\r\nb\r\n,2\r\n*2\r\n$1\r\nc\r\n,3.5\r\n*2\r\n$1\r\nx\r\n,5\r\n"},
		{[]string{"ZRANDMEMBER", "{z}y", "5", "WITHSCORES"}, "", ""}, // shape only, see below
		{[]string{"ZADD", "nokey", "XX", "INCR", "1", "a"}, "$-1\r\n", "_\r\n"},
		{[]string{"ZMPOP", "1", "nokey", "MIN"}, "*-1\r\n", "_\r\n"},
		{[]string{"ZPOPMIN", "nokey"}, "*0\r\n", "*0\r\n"},
		{[]string{"ZSCAN", "z", "0"}, "*2\r\n$1\r\n0\r\n*6\r\n$1\r\na\r\n$1\r\n1\r\n$1\r\nb\r\n$1\r\n2\r\n$1\r\nc\r\n$3\r\n3.5\r\n",
			"*2\r\n$1\r\n0\r\n*6\r\n$1\r\na\r\n$1\r\n1\r\n$1\r\nb\r\n$1\r\n2\r\n$1\r\nc\r\n$3\r\n3.5\r\n"},
	}
	for _, tc := range cases {
		if tc.resp2 == "" {
			continue
		}
		if got := zsetRaw(t, s, false, tc.args); got != tc.resp2 {
			t.Errorf("RESP2 %v:\n got  %q\n want %q", tc.args, got, tc.resp2)
		}
		got := zsetRaw(t, s, true, tc.args)
		if !strings.HasSuffix(got, tc.resp3) {
			t.Errorf("RESP3 %v:\n got  %q\n want suffix %q", tc.args, got, tc.resp3)
		}
	}
	// ZRANDMEMBER with a count covering the set: every element, as pairs in RESP3.
	got := zsetRaw(t, s, true, []string{"ZRANDMEMBER", "{z}y", "5", "WITHSCORES"})
	if !strings.HasSuffix(got, "*2\r\n*2\r\n$1\r\na\r\n,1\r\n*2\r\n$1\r\nx\r\n,5\r\n") {
		t.Errorf("RESP3 ZRANDMEMBER: %q", got)
	}
	// Pops: flat without a count, nested with one (RESP3); ZMPOP always nested.
	got = zsetRaw(t, s, true, []string{"ZPOPMIN", "z"}, []string{"ZPOPMAX", "z", "1"}, []string{"ZMPOP", "1", "z", "MIN"})
	if !strings.HasSuffix(got, "*2\r\n$1\r\na\r\n,1\r\n*1\r\n*2\r\n$1\r\nc\r\n,3.5\r\n*2\r\n$1\r\nz\r\n*1\r\n*2\r\n$1\r\nb\r\n,2\r\n") {
		t.Errorf("RESP3 pops: %q", got)
	}
	got = zsetRaw(t, s, false, []string{"ZMPOP", "1", "{z}y", "MAX", "COUNT", "5"})
	if got != "*2\r\n$4\r\n{z}y\r\n*2\r\n*2\r\n$1\r\nx\r\n$1\r\n5\r\n*2\r\n$1\r\na\r\n$1\r\n1\r\n" {
		t.Errorf("RESP2 ZMPOP: %q", got)
	}
}

func TestZRangeStore(t *testing.T) {
	s, c := zsetStart(t)
	expect(t, c, int64(4), "ZADD", "src", 1, "a", 2, "b", 3, "c", 4, "d")
	dst := zsetOtherShard(s, "src", "dst")
	expect(t, c, int64(2), "ZRANGESTORE", dst, "src", 1, 2)
	zsetWantStrs(t, c, "b 2 c 3", "ZRANGE", dst, 0, -1, "WITHSCORES")
	expect(t, c, int64(2), "ZRANGESTORE", dst, "src", "(1", 3, "BYSCORE", "LIMIT", 0, 2)
	zsetWantStrs(t, c, "b c", "ZRANGE", dst, 0, -1)
	expect(t, c, int64(2), "ZRANGESTORE", dst, "src", 4, 1, "BYSCORE", "REV", "LIMIT", 1, 2)
	zsetWantStrs(t, c, "b c", "ZRANGE", dst, 0, -1)
	expect(t, c, int64(4), "ZRANGESTORE", dst, "src", "-", "+", "BYLEX")
	// The destination is replaced, TTL included.
	expect(t, c, int64(1), "EXPIRE", dst, 100)
	expect(t, c, int64(1), "ZRANGESTORE", dst, "src", 0, 0, "REV")
	zsetWantStrs(t, c, "d", "ZRANGE", dst, 0, -1)
	expect(t, c, int64(-1), "TTL", dst)
	// Source and destination may be the same key.
	expect(t, c, int64(2), "ZRANGESTORE", "src", "src", 2, 3)
	zsetWantStrs(t, c, "c d", "ZRANGE", "src", 0, -1)
	// An empty result deletes the destination; a wrong-type source changes nothing.
	expect(t, c, int64(0), "ZRANGESTORE", dst, "src", 5, 10)
	expect(t, c, int64(0), "EXISTS", dst)
	expect(t, c, "OK", "SET", dst, "v")
	expect(t, c, int64(0), "ZRANGESTORE", dst, "nokey", 0, -1)
	expect(t, c, int64(0), "EXISTS", dst)
	expect(t, c, "OK", "SET", "str", "v")
	expect(t, c, int64(1), "ZADD", dst, 1, "keep")
	expectErr(t, c, zsetWrongType, "ZRANGESTORE", dst, "str", 0, -1)
	zsetWantStrs(t, c, "keep", "ZRANGE", dst, 0, -1)
	expect(t, c, int64(2), "ZRANGESTORE", "str", "src", 0, -1) // any type is overwritten
	expect(t, c, "zset", "TYPE", "str")
}

func TestZCount_ZLexCount(t *testing.T) {
	_, c := zsetStart(t)
	expect(t, c, int64(4), "ZADD", "z", 1, "a", 2, "b", 3, "c", 4, "d")
	expect(t, c, int64(4), "ZCOUNT", "z", "-inf", "+inf")
	expect(t, c, int64(2), "ZCOUNT", "z", "(1", 3)
	expect(t, c, int64(0), "ZCOUNT", "z", 3, 2)
	expect(t, c, int64(0), "ZCOUNT", "nokey", 0, 1)
	expectErr(t, c, "ERR min or max is not a float", "ZCOUNT", "z", "x", 1)
	expect(t, c, int64(4), "ZLEXCOUNT", "z", "-", "+")
	expect(t, c, int64(2), "ZLEXCOUNT", "z", "[b", "(d")
	expect(t, c, int64(0), "ZLEXCOUNT", "nokey", "-", "+")
	// A bigger set: counted from whichever side finishes first.
	zsetFill(t, c, "big", 1000)
	for _, tc := range []struct {
		min, max any
		want     int64
	}{{"-inf", "+inf", 1000}, {0, 9, 10}, {"(0", 999, 999}, {10, "(990", 980}, {500, 500, 1}, {"(500", "(501", 0}, {2000, 3000, 0}} {
		expect(t, c, tc.want, "ZCOUNT", "big", tc.min, tc.max)
	}
	expect(t, c, "OK", "SET", "str", "v")
	expectErr(t, c, zsetWrongType, "ZCOUNT", "str", 0, 1)
	expectErr(t, c, zsetWrongType, "ZLEXCOUNT", "str", "-", "+")
}

func TestZPop_ZMPop(t *testing.T) {
	_, c := zsetStart(t)
	expect(t, c, int64(4), "ZADD", "z", 1, "a", 2, "b", 3, "c", 4, "d")
	zsetWantStrs(t, c, "a 1", "ZPOPMIN", "z")
	zsetWantStrs(t, c, "d 4 c 3", "ZPOPMAX", "z", 2)
	zsetWantStrs(t, c, "", "ZPOPMAX", "z", 0)
	zsetWantStrs(t, c, "b 2", "ZPOPMAX", "z", 10)
	expect(t, c, int64(0), "EXISTS", "z")
	zsetWantStrs(t, c, "", "ZPOPMIN", "nokey")
	expectErr(t, c, "ERR value is out of range, must be positive", "ZPOPMIN", "z", -1)
	expectErr(t, c, "ERR value is out of range, must be positive", "ZPOPMIN", "z", "abc")
	expectErr(t, c, "ERR syntax error", "ZPOPMIN", "z", 1, 2)

	expect(t, c, int64(3), "ZADD", "{m}b", 1, "a", 2, "b", 3, "c")
	expect(t, c, []any{"{m}b", []any{[]any{"c", "3"}, []any{"b", "2"}}}, "ZMPOP", 2, "{m}a", "{m}b", "MAX", "COUNT", 2)
	expect(t, c, []any{"{m}b", []any{[]any{"a", "1"}}}, "ZMPOP", 2, "{m}a", "{m}b", "min")
	expectNil(t, c, "ZMPOP", 2, "{m}a", "{m}b", "MIN")
	expect(t, c, "OK", "SET", "{m}s", "v")
	expectErr(t, c, zsetWrongType, "ZMPOP", 2, "{m}a", "{m}s", "MIN")
	expectErr(t, c, "ERR numkeys should be greater than 0", "ZMPOP", 0, "z", "MIN")
	expectErr(t, c, "ERR numkeys should be greater than 0", "ZMPOP", "abc", "z", "MIN")
	expectErr(t, c, "ERR syntax error", "ZMPOP", 5, "z", "MIN")
	expectErr(t, c, "ERR syntax error", "ZMPOP", 1, "z", "MID")
	expectErr(t, c, "ERR count should be greater than 0", "ZMPOP", 1, "z", "MIN", "COUNT", 0)
	expectErr(t, c, "ERR syntax error", "ZMPOP", 1, "z", "MIN", "COUNT", 1, "COUNT", 1)

	// Popping part of a big set, then all of it.
	zsetFill(t, c, "big", 300)
	got := zsetStrs(t, c, "ZPOPMAX", "big", 100)
	if len(got) != 200 || got[0] != "m0299" || got[198] != "m0200" {
		t.Fatalf("ZPOPMAX big 100: %q..", got[:4])
	}
	expect(t, c, int64(200), "ZCARD", "big")
	zsetWantStrs(t, c, "m0000", "ZRANGE", "big", 0, 0)
	zsetWantStrs(t, c, "m0199", "ZRANGE", "big", -1, -1)
	if got := zsetStrs(t, c, "ZPOPMIN", "big", 1000); len(got) != 400 {
		t.Fatalf("ZPOPMIN big 1000: %d", len(got))
	}
	expect(t, c, int64(0), "EXISTS", "big")
	expect(t, c, int64(1), "ZADD", "big", 1, "fresh")
	zsetWantStrs(t, c, "fresh", "ZRANGE", "big", 0, -1)
}

func TestZRemRangeBy(t *testing.T) {
	_, c := zsetStart(t)
	add := func() {
		expect(t, c, int64(5), "ZADD", "z", 1, "a", 2, "b", 3, "c", 4, "d", 5, "e")
	}
	add()
	expect(t, c, int64(2), "ZREMRANGEBYRANK", "z", 0, 1)
	zsetWantStrs(t, c, "c d e", "ZRANGE", "z", 0, -1)
	expect(t, c, int64(1), "ZREMRANGEBYRANK", "z", -1, -1)
	expect(t, c, int64(0), "ZREMRANGEBYRANK", "z", 5, 10)
	expect(t, c, int64(2), "ZREMRANGEBYRANK", "z", 0, -1)
	expect(t, c, int64(0), "EXISTS", "z")
	add()
	expect(t, c, int64(2), "ZREMRANGEBYSCORE", "z", "(1", 3)
	expect(t, c, int64(0), "ZREMRANGEBYSCORE", "z", 2, 3)
	zsetWantStrs(t, c, "a d e", "ZRANGE", "z", 0, -1)
	expect(t, c, int64(3), "ZREMRANGEBYSCORE", "z", "-inf", "+inf")
	expect(t, c, int64(0), "EXISTS", "z")
	expect(t, c, int64(5), "ZADD", "z", 0, "a", 0, "b", 0, "c", 0, "d", 0, "e")
	expect(t, c, int64(2), "ZREMRANGEBYLEX", "z", "(a", "[c")
	zsetWantStrs(t, c, "a d e", "ZRANGE", "z", 0, -1)
	expect(t, c, int64(3), "ZREMRANGEBYLEX", "z", "-", "+")
	expect(t, c, int64(0), "EXISTS", "z")
	expect(t, c, int64(0), "ZREMRANGEBYRANK", "nokey", 0, -1)
	expectErr(t, c, "ERR value is not an integer or out of range", "ZREMRANGEBYRANK", "z", "a", 1)
	expectErr(t, c, "ERR min or max is not a float", "ZREMRANGEBYSCORE", "z", "a", 1)
	expectErr(t, c, "ERR min or max not valid string range item", "ZREMRANGEBYLEX", "z", "a", "+")
	// Big sets: a part, then a range that covers the rest (the key goes at once).
	zsetFill(t, c, "big", 1000)
	expect(t, c, int64(100), "ZREMRANGEBYSCORE", "big", 100, "(200")
	expect(t, c, int64(10), "ZREMRANGEBYRANK", "big", -10, -1)
	expect(t, c, int64(890), "ZCARD", "big")
	zsetWantStrs(t, c, "m0099 m0200", "ZRANGE", "big", 99, 100)
	expect(t, c, int64(890), "ZREMRANGEBYSCORE", "big", "-inf", "+inf")
	expect(t, c, int64(0), "EXISTS", "big")
	expect(t, c, "OK", "SET", "str", "v")
	expectErr(t, c, zsetWrongType, "ZREMRANGEBYRANK", "str", 0, 1)
}

func TestZUnionInterDiff(t *testing.T) {
	_, c := zsetStart(t)
	expect(t, c, int64(3), "ZADD", "{k}a", 1, "x", 2, "y", 3, "z")
	expect(t, c, int64(2), "ZADD", "{k}b", 10, "y", 20, "w")
	expect(t, c, int64(2), "SADD", "{k}s", "y", "q") // sets count with score 1
	zsetWantStrs(t, c, "x 1 z 3 y 12 w 20", "ZUNION", 2, "{k}a", "{k}b", "WITHSCORES")
	zsetWantStrs(t, c, "x z y w", "ZUNION", 3, "{k}a", "{k}b", "{k}nokey")
	zsetWantStrs(t, c, "q 1 x 1 z 3 y 13 w 20", "ZUNION", 3, "{k}a", "{k}b", "{k}s", "WITHSCORES")
	zsetWantStrs(t, c, "x 2 z 6 y 14 w 20", "ZUNION", 2, "{k}a", "{k}b", "WEIGHTS", 2, 1, "WITHSCORES")
	zsetWantStrs(t, c, "x 1 y 2 z 3 w 20", "ZUNION", 2, "{k}a", "{k}b", "AGGREGATE", "MIN", "WITHSCORES")
	zsetWantStrs(t, c, "x 1 z 3 y 10 w 20", "ZUNION", 2, "{k}a", "{k}b", "aggregate", "max", "withscores")
	zsetWantStrs(t, c, "y 12", "ZINTER", 2, "{k}a", "{k}b", "WITHSCORES")
	zsetWantStrs(t, c, "y 13", "ZINTER", 3, "{k}a", "{k}b", "{k}s", "WITHSCORES")
	zsetWantStrs(t, c, "", "ZINTER", 2, "{k}a", "{k}nokey")
	zsetWantStrs(t, c, "x 1 z 3", "ZDIFF", 2, "{k}a", "{k}b", "WITHSCORES")
	zsetWantStrs(t, c, "x z", "ZDIFF", 3, "{k}a", "{k}b", "{k}s")
	zsetWantStrs(t, c, "", "ZDIFF", 2, "{k}nokey", "{k}a")
	zsetWantStrs(t, c, "q y", "ZDIFF", 1, "{k}s")
	// inf + -inf is 0; weight 0 times inf is 0.
	expect(t, c, int64(1), "ZADD", "{k}pinf", "inf", "m")
	expect(t, c, int64(1), "ZADD", "{k}ninf", "-inf", "m")
	zsetWantStrs(t, c, "m 0", "ZUNION", 2, "{k}pinf", "{k}ninf", "WITHSCORES")
	zsetWantStrs(t, c, "m 0", "ZINTER", 2, "{k}pinf", "{k}ninf", "WITHSCORES")
	zsetWantStrs(t, c, "m 0", "ZUNION", 1, "{k}pinf", "WEIGHTS", 0, "WITHSCORES")
	zsetWantStrs(t, c, "m -inf", "ZUNION", 2, "{k}pinf", "{k}ninf", "WEIGHTS", 0, 1, "AGGREGATE", "MIN", "WITHSCORES")

	expectErr(t, c, "ERR at least 1 input key is needed for 'zunion' command", "ZUNION", 0, "{k}a")
	expectErr(t, c, "ERR at least 1 input key is needed for 'zinterstore' command", "ZINTERSTORE", "{k}d", 0, "{k}a")
	expectErr(t, c, "ERR value is not an integer or out of range", "ZUNION", "x", "{k}a")
	expectErr(t, c, "ERR syntax error", "ZUNION", 3, "{k}a", "{k}b")
	expectErr(t, c, "ERR syntax error", "ZUNION", 2, "{k}a", "{k}b", "WEIGHTS", 1)
	expectErr(t, c, "ERR weight value is not a float", "ZUNION", 2, "{k}a", "{k}b", "WEIGHTS", 1, "x")
	expectErr(t, c, "ERR syntax error", "ZUNION", 2, "{k}a", "{k}b", "AGGREGATE", "AVG")
	expectErr(t, c, "ERR syntax error", "ZDIFF", 2, "{k}a", "{k}b", "WEIGHTS", 1, 2)
	expectErr(t, c, "ERR syntax error", "ZUNIONSTORE", "{k}d", 2, "{k}a", "{k}b", "WITHSCORES")
	expect(t, c, "OK", "SET", "{k}str", "v")
	// Types are checked before the options.
	expectErr(t, c, zsetWrongType, "ZUNION", 2, "{k}a", "{k}str", "FOO")
	expectErr(t, c, zsetWrongType, "ZINTER", 2, "{k}nokey", "{k}str")
}

func TestZStore_AcrossShards(t *testing.T) {
	s, c := zsetStart(t)
	a := "a"
	b := zsetOtherShard(s, a, "b")
	d := zsetOtherShard(s, b, "d")
	expect(t, c, int64(3), "ZADD", a, 1, "x", 2, "y", 3, "z")
	expect(t, c, int64(2), "ZADD", b, 10, "y", 20, "w")
	expect(t, c, int64(4), "ZUNIONSTORE", d, 2, a, b, "WEIGHTS", 1, 2)
	zsetWantStrs(t, c, "x 1 z 3 y 22 w 40", "ZRANGE", d, 0, -1, "WITHSCORES")
	expect(t, c, int64(1), "ZINTERSTORE", d, 2, a, b, "AGGREGATE", "MAX")
	zsetWantStrs(t, c, "y 10", "ZRANGE", d, 0, -1, "WITHSCORES")
	expect(t, c, int64(2), "ZDIFFSTORE", d, 2, a, b)
	zsetWantStrs(t, c, "x z", "ZRANGE", d, 0, -1)
	// The destination may be an input.
	expect(t, c, int64(4), "ZUNIONSTORE", a, 3, a, b, d)
	zsetWantStrs(t, c, "x 2 z 6 y 12 w 20", "ZRANGE", a, 0, -1, "WITHSCORES")
	// An empty result deletes the destination.
	expect(t, c, int64(0), "ZINTERSTORE", d, 2, a, "nokey")
	expect(t, c, int64(0), "EXISTS", d)
	expect(t, c, int64(0), "ZDIFFSTORE", d, 1, "nokey")
	expect(t, c, "OK", "SET", d, "v")
	expect(t, c, int64(2), "ZDIFFSTORE", d, 2, b, "nokey")
	expect(t, c, "zset", "TYPE", d)
	// The other numkeys commands across shards.
	expect(t, c, int64(2), "ZINTERCARD", 3, a, b, d)
	zsetWantStrs(t, c, "y 20 w 40", "ZINTER", 2, b, d, "WITHSCORES")
	expect(t, c, []any{b, []any{[]any{"w", "20"}}}, "ZMPOP", 3, "nokey", b, a, "MAX")
}

func TestZInterCard(t *testing.T) {
	_, c := zsetStart(t)
	expect(t, c, int64(4), "ZADD", "{k}a", 1, "w", 2, "x", 3, "y", 4, "z")
	expect(t, c, int64(3), "SADD", "{k}s", "x", "y", "z")
	expect(t, c, int64(3), "ZINTERCARD", 2, "{k}a", "{k}s")
	expect(t, c, int64(2), "ZINTERCARD", 2, "{k}a", "{k}s", "LIMIT", 2)
	expect(t, c, int64(3), "ZINTERCARD", 2, "{k}a", "{k}s", "LIMIT", 0)
	expect(t, c, int64(0), "ZINTERCARD", 2, "{k}a", "{k}nokey")
	expectErr(t, c, "ERR at least 1 input key is needed for 'zintercard' command", "ZINTERCARD", 0, "{k}a")
	expectErr(t, c, "ERR syntax error", "ZINTERCARD", 2, "{k}a")
	expectErr(t, c, "ERR LIMIT can't be negative", "ZINTERCARD", 1, "{k}a", "LIMIT", -1)
	expectErr(t, c, "ERR LIMIT can't be negative", "ZINTERCARD", 1, "{k}a", "LIMIT", "abc")
	expectErr(t, c, "ERR syntax error", "ZINTERCARD", 1, "{k}a", "WITHSCORES")
	expectErr(t, c, "ERR syntax error", "ZINTERCARD", 1, "{k}a", "WEIGHTS", 1)
}

func TestZRandMember(t *testing.T) {
	_, c := zsetStart(t)
	expectNil(t, c, "ZRANDMEMBER", "nokey")
	zsetWantStrs(t, c, "", "ZRANDMEMBER", "nokey", 5)
	zsetFill(t, c, "z", 100)
	in := func(m string) bool { return len(m) == 5 && m[0] == 'm' && m < "m0100" }
	for range 20 {
		v, err := doCmd(t, c, "ZRANDMEMBER", "z")
		if err != nil || !in(v.(string)) {
			t.Fatalf("ZRANDMEMBER z = %v, %v", v, err)
		}
	}
	got := zsetStrs(t, c, "ZRANDMEMBER", "z", 30)
	seen := map[string]bool{}
	for _, m := range got {
		if !in(m) || seen[m] {
			t.Fatalf("ZRANDMEMBER z 30: bad or repeated %q in %q", m, got)
		}
		seen[m] = true
	}
	if len(got) != 30 {
		t.Fatalf("ZRANDMEMBER z 30: %d members", len(got))
	}
	if got := zsetStrs(t, c, "ZRANDMEMBER", "z", 1000); len(got) != 100 {
		t.Fatalf("ZRANDMEMBER z 1000: %d members", len(got))
	}
	got = zsetStrs(t, c, "ZRANDMEMBER", "z", -500)
	if len(got) != 500 {
		t.Fatalf("ZRANDMEMBER z -500: %d members", len(got))
	}
	for _, m := range got {
		if !in(m) {
			t.Fatalf("ZRANDMEMBER z -500: %q", m)
		}
	}
	// Member m0042 has score 42; draws cover the whole set.
	for _, count := range []int{3, 60, -3, -2000} {
		got = zsetStrs(t, c, "ZRANDMEMBER", "z", count, "WITHSCORES")
		distinct := map[string]bool{}
		for i := 0; i < len(got); i += 2 {
			n, err := strconv.Atoi(got[i][1:])
			if err != nil || !in(got[i]) || got[i+1] != strconv.Itoa(n) {
				t.Fatalf("ZRANDMEMBER z %d WITHSCORES: pair %q %q", count, got[i], got[i+1])
			}
			distinct[got[i]] = true
		}
		if len(got) != 2*max(count, -count) || (count == -2000 && len(distinct) < 95) || (count > 0 && len(distinct) != count) {
			t.Fatalf("ZRANDMEMBER z %d WITHSCORES: %d elements, %d distinct", count, len(got)/2, len(distinct))
		}
	}
	zsetWantStrs(t, c, "", "ZRANDMEMBER", "z", 0)
	expectErr(t, c, "ERR value is out of range, value must between -9223372036854775807 and 9223372036854775807", "ZRANDMEMBER", "z", "-9223372036854775808")
	expectErr(t, c, "ERR value is not an integer or out of range", "ZRANDMEMBER", "z", "abc")
	expectErr(t, c, "ERR syntax error", "ZRANDMEMBER", "z", 1, "foo")
	expectErr(t, c, "ERR value is out of range", "ZRANDMEMBER", "z", "9223372036854775807", "WITHSCORES")
	expect(t, c, "OK", "SET", "str", "v")
	expectErr(t, c, zsetWrongType, "ZRANDMEMBER", "str")
	expectErr(t, c, zsetWrongType, "ZRANDMEMBER", "str", 2)
}

func TestZScan(t *testing.T) {
	_, c := zsetStart(t)
	zsetWantStrs(t, c, "0 []", "ZSCAN", "nokey", 0, "BADOPTION") // a missing key is not parsed further
	args := []any{"ZADD", "z", 7, ""}                            // the empty member can be a cursor position
	want := map[string]string{"": "7"}
	for i := range 300 { // more than a set Redis returns whole
		m := fmt.Sprintf("m%03d", i)
		args = append(args, i, m)
		want[m] = strconv.Itoa(i)
	}
	expect(t, c, int64(301), args...)
	got := map[string]string{}
	cursor, calls := "0", 0
	for {
		v := zsetStrsAny(t, c, "ZSCAN", "z", cursor, "COUNT", 3)
		cursor = v[0].(string)
		page := v[1].([]any)
		for i := 0; i < len(page); i += 2 {
			got[page[i].(string)] = page[i+1].(string)
		}
		calls++
		if cursor == "0" || calls > 1000 {
			break
		}
	}
	if fmt.Sprint(got) != fmt.Sprint(want) || calls < 100 {
		t.Fatalf("ZSCAN collected %v in %d calls", got, calls)
	}
	// A small set comes whole in the first reply, as from Redis.
	expect(t, c, int64(3), "ZADD", "small", 1, "a", 2, "b", 3, "c")
	zsetWantStrs(t, c, "0 [a 1 b 2 c 3]", "ZSCAN", "small", 0, "COUNT", 1)
	v := zsetStrsAny(t, c, "ZSCAN", "z", 0, "MATCH", "m09*", "COUNT", 1000)
	if v[0] != "0" || fmt.Sprint(v[1]) != "[m090 90 m091 91 m092 92 m093 93 m094 94 m095 95 m096 96 m097 97 m098 98 m099 99]" {
		t.Fatalf("ZSCAN MATCH: %v", v)
	}
	expectErr(t, c, "ERR invalid cursor", "ZSCAN", "z", "abc")
	expectErr(t, c, "ERR syntax error", "ZSCAN", "z", 0, "COUNT", 0)
	expectErr(t, c, "ERR value is not an integer or out of range", "ZSCAN", "z", 0, "COUNT", "x")
	expectErr(t, c, "ERR syntax error", "ZSCAN", "z", 0, "TYPE", "zset")
	expect(t, c, "OK", "SET", "str", "v")
	expectErr(t, c, zsetWrongType, "ZSCAN", "str", 0)
}

func zsetStrsAny(t *testing.T, c *redis.Client, args ...any) []any {
	t.Helper()
	v, err := doCmd(t, c, args...)
	if err != nil {
		t.Fatalf("%v: %v", args, err)
	}
	return v.([]any)
}

// The numkeys commands declare their keys through Keys funcs; COMMAND GETKEYS sees them.
func TestZSetFamily_CommandGetKeys(t *testing.T) {
	_, c := zsetStart(t)
	for _, tc := range []struct {
		args []any
		want string
	}{
		{[]any{"ZUNIONSTORE", "d", 2, "a", "b", "WEIGHTS", 1, 2}, "d a b"},
		{[]any{"ZDIFFSTORE", "d", 1, "a"}, "d a"},
		{[]any{"ZINTER", 2, "a", "b"}, "a b"},
		{[]any{"ZINTERCARD", 1, "a", "LIMIT", 1}, "a"},
		{[]any{"ZMPOP", 2, "a", "b", "MIN"}, "a b"},
		{[]any{"ZRANGESTORE", "d", "s", 0, 1}, "d s"},
	} {
		zsetWantStrs(t, c, tc.want, append([]any{"COMMAND", "GETKEYS"}, tc.args...)...)
	}
	expectErr(t, c, "ERR Invalid arguments specified for command", "COMMAND", "GETKEYS", "ZUNIONSTORE", "d", 3, "a", "b")
	expectErr(t, c, "ERR Invalid arguments specified for command", "COMMAND", "GETKEYS", "ZUNION", 0, "a")
}

// zsetDump returns every sorted set of db 0 in st as "key=member:score,..." lines (checking
// both entries of every member and the count), and every other key as "key:type".
func zsetDump(t *testing.T, st *shard.Store) []string {
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
				if f.m.Type != codec.TypeZSet {
					out = append(out, fmt.Sprintf("%q:%s", f.key, f.m.Type))
					continue
				}
				var members, order []string
				// Both entries of every member, in data keys or packed in the meta.
				_ = datatype.ValueScan(tx, 0, f.key, &f.m)(nil, nil, false, func(e, v []byte) error {
					if e[0] == codec.ZSetMemberTag {
						members = append(members, fmt.Sprintf("%s:%s", e[1:], codec.FormatDouble(nil, codec.ScoreValue(v))))
					} else {
						order = append(order, fmt.Sprintf("%s:%s", e[9:], codec.FormatDouble(nil, codec.SortableScore(e[1:9]))))
					}
					return nil
				})
				a, b := slices.Clone(members), slices.Clone(order)
				sort.Strings(a)
				sort.Strings(b)
				if uint64(len(members)) != f.m.Count || !slices.Equal(a, b) {
					t.Errorf("%q: count %d, members %q, order entries %q", f.key, f.m.Count, members, order)
				}
				out = append(out, fmt.Sprintf("%q=%q", f.key, order))
			}
		}); err != nil {
			t.Fatal(err)
		}
	}
	sort.Strings(out)
	return out
}

// Every write of the family logs its effect: replaying the binlog of each shard into an empty
// store rebuilds the same sets, increments, pops and cross-shard stores included.
func TestZSetFamily_BinlogReplay(t *testing.T) {
	s, c := zsetStart(t)
	a := "a"
	b := zsetOtherShard(s, a, "b")
	d := zsetOtherShard(s, b, "d")
	var pairs, many []any
	for i := range 100 {
		pairs = append(pairs, float64(i)/4, fmt.Sprintf("m%d", i))
	}
	for i := range 700 { // stores of more than one ZADD record
		many = append(many, i%7, fmt.Sprintf("n%d", i))
	}
	steps := [][]any{
		append([]any{"ZADD", "{a}many"}, many...),
		{"ZUNIONSTORE", "{a}many2", 2, "{a}many", a, "WEIGHTS", 1, -1},
		{"ZRANGESTORE", "{a}many3", "{a}many", 1, -2},
		append([]any{"ZADD", a}, pairs...),
		append([]any{"ZADD", b}, pairs[40:120]...),
		{"ZADD", a, "XX", "GT", "CH", 100, "m1", 100, "new", -1, "m2"},
		{"ZADD", a, "INCR", 0.1, "m3"},
		{"ZINCRBY", b, "0.3", "m30"},
		{"ZINCRBY", b, "inf", "m31"},
		{"ZADD", a, "-0", "negzero", "1e-310", "tiny", "0x10", "hex"},
		{"ZREM", a, "m4", "nope"},
		{"ZPOPMIN", a, 3},
		{"ZPOPMAX", b},
		{"ZMPOP", 2, "{z}none", "{z}one", "MIN"},
		{"ZREMRANGEBYRANK", a, 0, 2},
		{"ZREMRANGEBYSCORE", a, "(10", 12},
		{"ZREMRANGEBYLEX", b, "[m40", "(m45"},
		{"ZUNIONSTORE", d, 2, a, b, "WEIGHTS", 2, 3, "AGGREGATE", "MAX"},
		{"ZINTERSTORE", "i", 2, a, b},
		{"ZDIFFSTORE", "{a}df", 2, a, b},
		{"ZRANGESTORE", "rs", b, 5, 1, "BYSCORE", "REV", "LIMIT", 1, 4},
		{"SET", "str", "v"},
		{"ZUNIONSTORE", "str", 1, b},
		{"ZADD", "gone", 1, "x"},
		{"ZPOPMIN", "gone", 5},
		{"ZADD", "gone2", 1, "x", 2, "y"},
		{"ZREMRANGEBYSCORE", "gone2", "-inf", "+inf"},
		{"ZADD", "gone3", 1, "x"},
		{"ZINTERSTORE", "gone3", 2, "gone3", "nokey"},
		{"ZADD", "ttl", 1, "x"},
		{"EXPIRE", "ttl", 1000},
		{"ZADD", "ttl", 2, "y"},
		{"ZADD", "cp", 1, "p", 2, "q"},
		{"RENAME", "cp", "cp2"},
	}
	expect(t, c, int64(2), "ZADD", "{z}one", 1, "x", 2, "y")
	for _, st := range steps {
		if _, err := doCmd(t, c, st...); err != nil {
			t.Fatalf("%v: %v", st, err)
		}
	}
	want := zsetDump(t, s.Store)
	dst, srv := testserver.ReplayTarget(t, s.Store.NumShards())
	for id := range s.Store.NumShards() {
		if _, err := srv.ReplayShard(s.Store, id); err != nil {
			t.Fatalf("shard %d: %v", id, err)
		}
	}
	if got := zsetDump(t, dst); !slices.Equal(got, want) {
		t.Fatalf("after replay:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if len(want) < 12 {
		t.Fatalf("only %d keys: %q", len(want), want)
	}
}

// A sorted set of a million members is built through the Tx API, then used through the
// protocol: point reads and short ranges stay cheap, and DEL drops it at once. Writing its two
// million data keys takes 8-20 s depending on the machine, so -short skips it.
func TestZSetFamily_BigKey(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a sorted set of a million members")
	}
	const n = 1_000_000
	const batch = 10_000
	s, c := zsetStart(t)
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
			var mk, ok, sv, member []byte
			for i := lo; i < lo+batch; i++ {
				member = strconv.AppendInt(append(member[:0], 'm'), int64(i), 10)
				score := float64(i)
				mk = codec.AppendZSetMember(append(mk[:0], prefix...), member)
				tx.PutData(key, mk, codec.AppendScoreValue(sv[:0], score))
				ok = codec.AppendZSetScore(append(ok[:0], prefix...), score, member)
				tx.PutData(key, ok, nil)
			}
			if lo+batch >= n {
				tx.SetMeta(0, key, &codec.Meta{Type: codec.TypeZSet, Version: version, Count: n})
			}
		}); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("built %d members in %v", n, time.Since(start))

	expect(t, c, int64(n), "ZCARD", "big")
	expect(t, c, "500000", "ZSCORE", "big", "m500000")
	expectNil(t, c, "ZSCORE", "big", "m1000000")
	zsetWantStrs(t, c, "m0 m1 m2 m3 m4 m5 m6 m7 m8 m9", "ZRANGE", "big", 0, 9)
	zsetWantStrs(t, c, "m999999 999999", "ZRANGE", "big", -1, -1, "WITHSCORES")
	zsetWantStrs(t, c, "m999999 m999998", "ZREVRANGE", "big", 0, 1)
	zsetWantStrs(t, c, "m500000 m500001", "ZRANGEBYSCORE", "big", 500000, "+inf", "LIMIT", 0, 2)
	expect(t, c, int64(3), "ZRANK", "big", "m3")
	expect(t, c, int64(2), "ZREVRANK", "big", "m999997")
	expect(t, c, int64(n), "ZCOUNT", "big", "-inf", "+inf")
	expect(t, c, int64(11), "ZCOUNT", "big", 10, 20)
	v := zsetStrsAny(t, c, "ZSCAN", "big", 0, "COUNT", 10)
	if v[0] == "0" || len(v[1].([]any)) != 20 {
		t.Fatalf("ZSCAN big 0 COUNT 10 = %v", v)
	}
	zsetWantStrs(t, c, "m0 0", "ZPOPMIN", "big")
	expect(t, c, int64(1), "ZADD", "big", -1, "first")
	expect(t, c, int64(n), "ZCARD", "big")

	start = time.Now()
	expect(t, c, int64(1), "DEL", "big")
	t.Logf("DEL of %d members took %v", n, time.Since(start)) // speed belongs in benchmarks
	expect(t, c, int64(0), "ZCARD", "big")
	expectNil(t, c, "ZSCORE", "big", "m500000")
	expect(t, c, int64(1), "ZADD", "big", 1, "x")
	zsetWantStrs(t, c, "x", "ZRANGE", "big", 0, -1)
}
