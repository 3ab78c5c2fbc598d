package cmds_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"shardis/datatype"
	"shardis/internal/testserver"
	"shardis/shard"
)

// sortSuite is hashSuite for SORT: cases on one server, one database each.
func sortSuite(t *testing.T, cases []hashCase) *testserver.Server {
	t.Parallel()
	s := testserver.Start(t)
	for i, tc := range cases {
		c := s.Client(t, func(o *redis.Options) { o.DB = i })
		t.Run(tc.name, func(t *testing.T) { tc.fn(t, c) })
	}
	return s
}

func sortList(vals ...string) []any {
	out := make([]any, len(vals))
	for i, v := range vals {
		out[i] = v
	}
	return out
}

func TestSort_Commands(t *testing.T) {
	sortSuite(t, []hashCase{
		{"Sort_NumericAndAlpha", func(t *testing.T, c *redis.Client) {
			expect(t, c, int64(7), "RPUSH", "l", "3", "1", "2", "10", "-1", "1.5", "0x10")
			expect(t, c, sortList("-1", "1", "1.5", "2", "3", "10", "0x10"), "SORT", "l")
			expect(t, c, sortList("0x10", "10", "3", "2", "1.5", "1", "-1"), "SORT", "l", "DESC")
			expect(t, c, sortList("-1", "0x10", "1", "1.5", "10", "2", "3"), "SORT", "l", "ALPHA")
			expect(t, c, sortList("-1", "1", "1.5", "2", "3", "10", "0x10"), "SORT_RO", "l")
			expect(t, c, sortList(), "SORT", "nokey")
		}},
		{"Sort_StrtodRules", func(t *testing.T, c *redis.Client) {
			// strtod's leading blanks, empty string as 0, inf, and an exact subnormal are numbers.
			expect(t, c, int64(5), "RPUSH", "l", " 7", "", "-inf", "0x1p-1074", "infinity")
			expect(t, c, sortList("-inf", "", "0x1p-1074", " 7", "infinity"), "SORT", "l")
			for _, bad := range []string{"7 ", "nan", "1e400", "1e-310", "0x", "1e", "abc"} {
				expect(t, c, int64(2), "RPUSH", "bad", "1", bad)
				expectErr(t, c, "ERR One or more scores can't be converted into double", "SORT", "bad")
				expect(t, c, int64(1), "DEL", "bad")
			}
		}},
		{"Sort_LimitClamps", func(t *testing.T, c *redis.Client) {
			expect(t, c, int64(5), "RPUSH", "l", "3", "1", "2", "5", "4")
			expect(t, c, sortList("2", "3", "4"), "SORT", "l", "LIMIT", "1", "3")
			expect(t, c, sortList("4", "3", "2"), "SORT", "l", "LIMIT", "1", "3", "DESC")
			expect(t, c, sortList("1", "2"), "SORT", "l", "LIMIT", "-5", "2")
			expect(t, c, sortList("2", "3", "4", "5"), "SORT", "l", "LIMIT", "1", "-1")
			expect(t, c, sortList(), "SORT", "l", "LIMIT", "9", "2")
			expect(t, c, sortList(), "SORT", "l", "LIMIT", "0", "0")
			expect(t, c, sortList("3", "4", "5"), "SORT", "l", "LIMIT", "2", "9223372036854775807")
		}},
		{"Sort_ByNosortKeepsNativeOrder", func(t *testing.T, c *redis.Client) {
			expect(t, c, int64(5), "RPUSH", "l", "c", "a", "e", "b", "d")
			expect(t, c, sortList("c", "a", "e", "b", "d"), "SORT", "l", "BY", "nosort")
			expect(t, c, sortList("d", "b", "e", "a", "c"), "SORT", "l", "BY", "nosort", "DESC")
			expect(t, c, sortList("a", "e"), "SORT", "l", "BY", "nosort", "LIMIT", "1", "2")
			expect(t, c, sortList("b", "e"), "SORT", "l", "BY", "nosort", "LIMIT", "1", "2", "DESC")
			expect(t, c, int64(9), "LPUSH", "l", "x", "y", "z", "w") // the list now starts below its first sequence
			expect(t, c, sortList("z", "y", "x"), "SORT", "l", "BY", "nosort", "LIMIT", "1", "3")
			expect(t, c, int64(4), "ZADD", "z", "3", "c", "1", "a", "2", "b", "1", "aa")
			expect(t, c, sortList("a", "aa", "b", "c"), "SORT", "z", "BY", "nosort")
			expect(t, c, sortList("b", "aa"), "SORT", "z", "BY", "nosort", "LIMIT", "1", "2", "DESC")
		}},
		{"Sort_ByAndGetPatterns", func(t *testing.T, c *redis.Client) {
			expect(t, c, int64(3), "RPUSH", "l", "1", "2", "3")
			expect(t, c, "OK", "MSET", "w_1", "30", "w_2", "10", "w_3", "20", "v_1", "one", "v_3", "three")
			expect(t, c, sortList("2", "3", "1"), "SORT", "l", "BY", "w_*")
			expect(t, c, sortList("1", "3", "2"), "SORT", "l", "BY", "w_*", "DESC")
			expect(t, c, []any{"2", nil, "3", "three", "1", "one"}, "SORT", "l", "BY", "w_*", "GET", "#", "GET", "v_*")
			expect(t, c, sortList("10", "20"), "SORT", "l", "BY", "w_*", "GET", "w_*", "LIMIT", "0", "2")
			expect(t, c, []any{nil, nil, nil}, "SORT", "l", "GET", "nostar")
			expect(t, c, int64(2), "HSET", "h_1", "f", "5", "g", "x")
			expect(t, c, int64(1), "HSET", "h_2", "f", "-5")
			expect(t, c, sortList("2", "3", "1"), "SORT", "l", "BY", "h_*->f")
			expect(t, c, []any{"-5", nil, "5"}, "SORT", "l", "BY", "h_*->f", "GET", "h_*->f")
			expect(t, c, []any{nil, nil, "x"}, "SORT", "l", "BY", "h_*->f", "GET", "h_*->g")
			expect(t, c, sortList("2", "1", "3"), "SORT", "l", "BY", "v_*", "ALPHA") // a missing BY value sorts first
			expect(t, c, int64(2), "RPUSH", "bad", "1", "2")
			expect(t, c, "OK", "SET", "x_1", "notanumber")
			expectErr(t, c, "ERR One or more scores can't be converted into double", "SORT", "bad", "BY", "x_*")
		}},
		{"Sort_StoreWritesList", func(t *testing.T, c *redis.Client) {
			expect(t, c, int64(3), "RPUSH", "l", "3", "1", "2")
			expect(t, c, "OK", "SET", "dst", "old", "EX", "100")
			expect(t, c, int64(3), "SORT", "l", "STORE", "dst")
			expect(t, c, sortList("1", "2", "3"), "LRANGE", "dst", "0", "-1")
			expect(t, c, "list", "TYPE", "dst")
			expect(t, c, int64(-1), "TTL", "dst")
			expect(t, c, "OK", "MSET", "g_1", "one")
			expect(t, c, int64(6), "SORT", "l", "GET", "#", "GET", "g_*", "STORE", "dst")
			expect(t, c, sortList("1", "one", "2", "", "3", ""), "LRANGE", "dst", "0", "-1")
			expect(t, c, int64(0), "SORT", "l", "LIMIT", "5", "5", "STORE", "dst")
			expect(t, c, int64(0), "EXISTS", "dst")
			expect(t, c, int64(3), "SORT", "l", "DESC", "STORE", "l") // the source itself
			expect(t, c, sortList("3", "2", "1"), "LRANGE", "l", "0", "-1")
			expect(t, c, int64(2), "RPUSH", "bad", "x", "1")
			expectErr(t, c, "ERR One or more scores can't be converted into double", "SORT", "bad", "STORE", "dst")
			expect(t, c, int64(0), "EXISTS", "dst")
		}},
		{"Sort_SetStoreSortsAlpha", func(t *testing.T, c *redis.Client) {
			expect(t, c, int64(4), "SADD", "s", "b", "10", "a", "9")
			expect(t, c, int64(4), "SORT", "s", "BY", "nosort", "STORE", "d")
			expect(t, c, sortList("10", "9", "a", "b"), "LRANGE", "d", "0", "-1")
			expect(t, c, sortList("10", "9", "a", "b"), "SORT", "s", "ALPHA")
			expectErr(t, c, "ERR One or more scores can't be converted into double", "SORT", "s")
		}},
		{"Sort_Errors", func(t *testing.T, c *redis.Client) {
			expect(t, c, "OK", "SET", "str", "x")
			expect(t, c, int64(1), "HSET", "h", "f", "v")
			expect(t, c, int64(1), "RPUSH", "l", "1")
			expectErr(t, c, hashWrongType, "SORT", "str")
			expectErr(t, c, hashWrongType, "SORT", "h")
			expectErr(t, c, hashWrongType, "SORT_RO", "str")
			expectErr(t, c, "ERR syntax error", "SORT", "str", "FOO") // options are checked first
			expectErr(t, c, "ERR syntax error", "SORT", "l", "LIMIT", "1")
			expectErr(t, c, "ERR syntax error", "SORT", "l", "BY")
			expectErr(t, c, "ERR syntax error", "SORT_RO", "l", "STORE", "d")
			expectErr(t, c, "ERR value is not an integer or out of range", "SORT", "l", "LIMIT", "a", "1")
			expectErr(t, c, "ERR wrong number of arguments for 'sort' command", "SORT")
			expect(t, c, int64(0), "EXISTS", "d")
		}},
		{"Sort_CommandGetKeys", func(t *testing.T, c *redis.Client) {
			expect(t, c, sortList("a", "c"), "COMMAND", "GETKEYS", "SORT", "a", "STORE", "b", "STORE", "c")
			expect(t, c, sortList("a", "b"), "COMMAND", "GETKEYS", "SORT", "a", "LIMIT", "STORE", "x", "STORE", "b")
			expect(t, c, sortList("a"), "COMMAND", "GETKEYS", "SORT", "a", "BY", "x_*", "GET", "#")
			expect(t, c, sortList("a"), "COMMAND", "GETKEYS", "SORT_RO", "a", "STORE", "b")
		}},
	})
}

// TestSort_PatternKeysInOtherShards sorts a key whose BY and GET keys (and STORE destination)
// live in other shards than it: the command must hold them all.
func TestSort_PatternKeysInOtherShards(t *testing.T) {
	t.Parallel()
	s := testserver.Start(t)
	c := s.Client(t)
	src := "src"
	home := s.Store.ShardOf([]byte(src))
	var elems []string
	for i := 0; len(elems) < 6; i++ {
		e := fmt.Sprint(i)
		if s.Store.ShardOf([]byte("w_"+e)) != home && s.Store.ShardOf([]byte("o_"+e)) != home {
			elems = append(elems, e)
		}
	}
	dst := ""
	for i := 0; dst == ""; i++ {
		if k := fmt.Sprint("dst", i); s.Store.ShardOf([]byte(k)) != home {
			dst = k
		}
	}
	args := []any{"RPUSH", src}
	for i, e := range elems {
		args = append(args, e)
		expect(t, c, "OK", "SET", "w_"+e, fmt.Sprint(100-i))
		expect(t, c, int64(1), "HSET", "o_"+e, "name", "n"+e)
	}
	expect(t, c, int64(len(elems)), args...)
	var want []any
	for i := len(elems) - 1; i >= 0; i-- {
		want = append(want, elems[i], "n"+elems[i])
	}
	expect(t, c, want, "SORT", src, "BY", "w_*", "GET", "#", "GET", "o_*->name")
	expect(t, c, want, "SORT_RO", src, "BY", "w_*", "GET", "#", "GET", "o_*->name")
	expect(t, c, int64(len(want)), "SORT", src, "BY", "w_*", "GET", "#", "GET", "o_*->name", "STORE", dst)
	expect(t, c, want, "LRANGE", dst, "0", "-1")
	expect(t, c, int64(len(elems)), "SORT", src, "BY", "nosort", "STORE", dst)
	expect(t, c, sortList(elems...), "LRANGE", dst, "0", "-1")
}

// TestSort_StoreReplays checks that SORT ... STORE is logged as a rebuild of the destination:
// replaying the binlog into an empty store gives the same list.
func TestSort_StoreReplays(t *testing.T) {
	t.Parallel()
	s := testserver.Start(t)
	c := s.Client(t)
	expect(t, c, int64(4), "RPUSH", "src", "4", "2", "3", "1")
	expect(t, c, "OK", "SET", "dst", "x")
	expect(t, c, int64(4), "SORT", "src", "STORE", "dst")
	expect(t, c, int64(0), "SORT", "nokey", "STORE", "gone")
	dst, dstSrv := testserver.ReplayTarget(t, 4)
	for id := range s.Store.NumShards() {
		if _, err := dstSrv.ReplayShard(s.Store, id); err != nil {
			t.Fatalf("replay shard %d: %v", id, err)
		}
	}
	var got []string
	key := []byte("dst")
	if err := dst.Do(dst.ShardOf(key), func(tx *shard.Tx) {
		m, ok := tx.Meta(0, key)
		if !ok {
			return
		}
		l, _ := datatype.ListFromMeta(tx, 0, key, m, true)
		it := l.Iter(0, false)
		for ; it.Valid(); it.Next() {
			got = append(got, string(it.Value()))
		}
		it.Close()
	}); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(got) != "[1 2 3 4]" {
		t.Fatalf("replayed dst = %q, want [1 2 3 4]", got)
	}
}

// TestSort_BigList sorts a 100,000-element list with a LIMIT and stores it.
func TestSort_BigList(t *testing.T) {
	t.Parallel()
	s := testserver.Start(t)
	c := s.Client(t)
	const n = 100_000
	pipe := c.Pipeline()
	for base := 0; base < n; base += 1000 {
		args := []any{"RPUSH", "big"}
		for i := base; i < base+1000; i++ {
			args = append(args, (i*7919)%n)
		}
		pipe.Do(hashCtx, args...)
	}
	if _, err := pipe.Exec(hashCtx); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	expect(t, c, sortList("0", "1", "2"), "SORT", "big", "LIMIT", "0", "3")
	expect(t, c, sortList("99999", "99998"), "SORT", "big", "DESC", "LIMIT", "0", "2")
	expect(t, c, int64(n), "SORT", "big", "STORE", "sorted")
	expect(t, c, sortList("50000"), "LRANGE", "sorted", "50000", "50000")
	t.Logf("three sorts of %d elements in %v", n, time.Since(start))
}

// The stream in testdata/sortacl replays what redis-server 7.0.15 answered: a user without
// read access to every key (~app:*, %W~*) is refused BY patterns with '*' and every GET, at
// the option's place among the others, directly, in a script and in MULTI; %R~*, allkeys and a
// selector with ~* that permits SORT are not. Recorded after ACL DELUSER of its users.
func TestSort_RestrictedUser_PatternsRefusedAsRedis(t *testing.T) {
	replayRecorded(t, "testdata/sortacl")
}
