package cmds_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"runtime"
	"slices"
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

var hashCtx = context.Background()

type hashCase struct {
	name string
	fn   func(t *testing.T, c *redis.Client)
}

// hashSuite runs cases on one server, each on a database of its own: one server start for
// a group of cases keeps the tests fast.
func hashSuite(t *testing.T, cases []hashCase) {
	t.Parallel()
	if len(cases) > 16 {
		t.Fatalf("%d cases, but a server has 16 databases", len(cases))
	}
	s := testserver.Start(t)
	for i, tc := range cases {
		c := s.Client(t, func(o *redis.Options) { o.DB = i })
		t.Run(tc.name, func(t *testing.T) { tc.fn(t, c) })
	}
}

func hashStrings(t *testing.T, c *redis.Client, args ...any) []string {
	t.Helper()
	v, err := c.Do(hashCtx, args...).StringSlice()
	if err != nil {
		t.Fatalf("%v: %v", args, err)
	}
	return v
}

const hashWrongType = "WRONGTYPE Operation against a key holding the wrong kind of value"

func TestHash_WriteCommands(t *testing.T) {
	hashSuite(t, []hashCase{
		{"HSet_CountsOnlyNewFields", func(t *testing.T, c *redis.Client) {
			expect(t, c, int64(2), "HSET", "h", "a", "1", "b", "2")
			expect(t, c, int64(1), "HSET", "h", "a", "3", "c", "4")
			expect(t, c, int64(1), "HSET", "h", "d", "1", "d", "2") // the same field twice: one new field, last value
			expect(t, c, "3", "HGET", "h", "a")
			expect(t, c, "2", "HGET", "h", "d")
			expect(t, c, int64(4), "HLEN", "h")
			expect(t, c, "hash", "TYPE", "h")
		}},
		{"HSet_OddArgumentsIsArityError", func(t *testing.T, c *redis.Client) {
			expectErr(t, c, "ERR wrong number of arguments for 'hset' command", "HSET", "h", "a", "1", "b")
			expectErr(t, c, "ERR wrong number of arguments for 'hmset' command", "HMSET", "h", "a", "1", "b")
			expectErr(t, c, "ERR wrong number of arguments for 'hset' command", "HSET", "h", "a")
			expect(t, c, int64(0), "EXISTS", "h")
		}},
		{"HSet_WrongTypeEverywhere", func(t *testing.T, c *redis.Client) {
			expect(t, c, "OK", "SET", "s", "x")
			for _, args := range [][]any{
				{"HSET", "s", "f", "v"}, {"HMSET", "s", "f", "v"}, {"HSETNX", "s", "f", "v"}, {"HGET", "s", "f"},
				{"HMGET", "s", "f"}, {"HDEL", "s", "f"}, {"HLEN", "s"}, {"HSTRLEN", "s", "f"}, {"HEXISTS", "s", "f"},
				{"HKEYS", "s"}, {"HVALS", "s"}, {"HGETALL", "s"}, {"HINCRBY", "s", "f", "1"},
				{"HINCRBYFLOAT", "s", "f", "1"}, {"HSCAN", "s", "0"}, {"HRANDFIELD", "s"}, {"HRANDFIELD", "s", "2"},
			} {
				expectErr(t, c, hashWrongType, args...)
			}
			expect(t, c, "x", "GET", "s")
		}},
		{"HMSet_RepliesOK", func(t *testing.T, c *redis.Client) {
			expect(t, c, "OK", "HMSET", "h", "a", "1", "b", "2")
			expect(t, c, []any{"1", "2", nil}, "HMGET", "h", "a", "b", "c")
		}},
		{"HSetNX_ExistingFieldUnchanged", func(t *testing.T, c *redis.Client) {
			expect(t, c, int64(1), "HSETNX", "h", "f", "first")
			expect(t, c, int64(0), "HSETNX", "h", "f", "second")
			expect(t, c, "first", "HGET", "h", "f")
			expect(t, c, int64(1), "HLEN", "h")
		}},
		{"HDel_RemovesFieldsAndTheEmptyKey", func(t *testing.T, c *redis.Client) {
			expect(t, c, int64(0), "HDEL", "missing", "a")
			expect(t, c, int64(3), "HSET", "h", "a", "1", "b", "2", "c", "3")
			expect(t, c, int64(1), "HDEL", "h", "a", "x", "a")
			expect(t, c, int64(2), "HLEN", "h")
			expect(t, c, int64(2), "HDEL", "h", "b", "c")
			expect(t, c, int64(0), "EXISTS", "h")
			expect(t, c, "none", "TYPE", "h")
			expect(t, c, int64(1), "HSET", "h", "z", "9") // a new hash under the same key starts empty
			expect(t, c, []any{"z"}, "HKEYS", "h")
		}},
		{"HSet_KeepsTTL", func(t *testing.T, c *redis.Client) {
			expect(t, c, int64(1), "HSET", "h", "a", "1")
			expect(t, c, int64(1), "EXPIRE", "h", "100")
			expect(t, c, int64(1), "HSET", "h", "b", "2")
			expect(t, c, int64(1), "HDEL", "h", "a")
			expect(t, c, int64(3), "HINCRBY", "h", "b", "1")
			expect(t, c, "3.5", "HINCRBYFLOAT", "h", "b", "0.5")
			if ttl := c.TTL(hashCtx, "h").Val(); ttl <= 0 || ttl > 100*time.Second {
				t.Fatalf("TTL after hash writes = %v, want the 100 s set before", ttl)
			}
		}},
		{"HIncrBy_IntegersAndErrors", func(t *testing.T, c *redis.Client) {
			expect(t, c, int64(5), "HINCRBY", "h", "n", "5")
			expect(t, c, int64(-2), "HINCRBY", "h", "n", "-7")
			expect(t, c, "-2", "HGET", "h", "n")
			expect(t, c, int64(3), "HSET", "h", "s", "abc", "big", "9223372036854775807", "lead", "07")
			expectErr(t, c, "ERR hash value is not an integer", "HINCRBY", "h", "s", "1")
			expectErr(t, c, "ERR hash value is not an integer", "HINCRBY", "h", "lead", "1")
			expectErr(t, c, "ERR increment or decrement would overflow", "HINCRBY", "h", "big", "1")
			expectErr(t, c, "ERR value is not an integer or out of range", "HINCRBY", "h", "n", "1.5")
			expectErr(t, c, "ERR value is not an integer or out of range", "HINCRBY", "nokey", "n", "x")
			expect(t, c, int64(0), "EXISTS", "nokey")
		}},
		{"HIncrByFloat_LongDoubleAndErrors", func(t *testing.T, c *redis.Client) {
			expect(t, c, "10.5", "HINCRBYFLOAT", "h", "f", "10.5")
			expect(t, c, "10.6", "HINCRBYFLOAT", "h", "f", "0.1")
			expect(t, c, "5000", "HINCRBYFLOAT", "h", "g", "5.0e3")
			expect(t, c, "5200", "HINCRBYFLOAT", "h", "g", "2.0e2")
			expect(t, c, "5200", "HGET", "h", "g")
			expect(t, c, "5200.25", "HINCRBYFLOAT", "h", "g", "0x1p-2")
			expectErr(t, c, "ERR value is NaN or Infinity", "HINCRBYFLOAT", "h", "f", "inf")
			expectErr(t, c, "ERR value is not a valid float", "HINCRBYFLOAT", "h", "f", "nan")
			expectErr(t, c, "ERR value is not a valid float", "HINCRBYFLOAT", "h", "f", "1x")
			expect(t, c, int64(2), "HSET", "h", "word", "abc", "inf", "inf")
			expectErr(t, c, "ERR hash value is not a float", "HINCRBYFLOAT", "h", "word", "1")
			expectErr(t, c, "ERR increment would produce NaN or Infinity", "HINCRBYFLOAT", "h", "inf", "1")
			if v, err := c.Do(hashCtx, "HINCRBYFLOAT", "h", "huge", "1e4932").Text(); err != nil || len(v) != 4933 {
				t.Fatalf("HINCRBYFLOAT h huge 1e4932 = %d digits, %v", len(v), err)
			}
			expectErr(t, c, "ERR increment would produce NaN or Infinity", "HINCRBYFLOAT", "h", "huge", "1e4932")
			expect(t, c, "10.6", "HGET", "h", "f")
		}},
		{"CopyAndRename_KeepTheFields", func(t *testing.T, c *redis.Client) {
			expect(t, c, int64(2), "HSET", "{x}src", "a", "1", "b", "2")
			expect(t, c, int64(1), "COPY", "{x}src", "other")
			expect(t, c, "OK", "RENAME", "{x}src", "moved")
			for _, k := range []string{"other", "moved"} {
				if got := c.HGetAll(hashCtx, k).Val(); fmt.Sprint(got) != "map[a:1 b:2]" {
					t.Fatalf("HGETALL %s = %v", k, got)
				}
			}
			expect(t, c, int64(0), "EXISTS", "{x}src")
		}},
	})
}

func TestHash_ReadCommands(t *testing.T) {
	hashSuite(t, []hashCase{
		{"HGet_MissingKeyAndField", func(t *testing.T, c *redis.Client) {
			expect(t, c, nil, "HGET", "nokey", "f")
			expect(t, c, int64(1), "HSET", "h", "f", "v")
			expect(t, c, nil, "HGET", "h", "g")
			expect(t, c, "v", "HGET", "h", "f")
		}},
		{"HMGet_MissingKeyGivesNulls", func(t *testing.T, c *redis.Client) {
			expect(t, c, []any{nil, nil}, "HMGET", "nokey", "a", "b")
		}},
		{"HLenHStrLenHExists", func(t *testing.T, c *redis.Client) {
			expect(t, c, int64(0), "HLEN", "nokey")
			expect(t, c, int64(0), "HSTRLEN", "nokey", "f")
			expect(t, c, int64(0), "HEXISTS", "nokey", "f")
			expect(t, c, int64(2), "HSET", "h", "f", "hello", "e", "")
			expect(t, c, int64(5), "HSTRLEN", "h", "f")
			expect(t, c, int64(0), "HSTRLEN", "h", "e")
			expect(t, c, int64(1), "HEXISTS", "h", "e")
			expect(t, c, int64(0), "HEXISTS", "h", "x")
			expect(t, c, int64(2), "HLEN", "h")
		}},
		{"HKeysHValsHGetAll", func(t *testing.T, c *redis.Client) {
			expect(t, c, []any{}, "HKEYS", "nokey")
			expect(t, c, []any{}, "HVALS", "nokey")
			expect(t, c, []any{}, "HGETALL", "nokey")
			expect(t, c, int64(3), "HSET", "h", "b", "2", "a", "1", "", "empty")
			expect(t, c, []any{"", "a", "b"}, "HKEYS", "h")
			expect(t, c, []any{"empty", "1", "2"}, "HVALS", "h")
			expect(t, c, []any{"", "empty", "a", "1", "b", "2"}, "HGETALL", "h")
		}},
		{"HScan_FullIterationAndMatch", func(t *testing.T, c *redis.Client) {
			want := []string{""} // the empty field must not restart the walk
			args := []any{"HSET", "h", "", "e"}
			for i := range 100 {
				f := fmt.Sprintf("f%03d", i)
				want = append(want, f)
				args = append(args, f, "v"+f)
			}
			expect(t, c, int64(101), args...)
			got := hashScanAll(t, c, "h", "COUNT", "7")
			if keys := slices.Sorted(mapsKeys(got)); !slices.Equal(keys, want) {
				t.Fatalf("HSCAN fields = %q, want %q", keys, want)
			}
			if got["f042"] != "vf042" || got[""] != "e" {
				t.Fatalf("HSCAN values wrong: %q", got)
			}
			m := hashScanAll(t, c, "h", "MATCH", "f01*")
			if keys := slices.Sorted(mapsKeys(m)); len(keys) != 10 || keys[0] != "f010" || keys[9] != "f019" {
				t.Fatalf("HSCAN MATCH f01* = %q", keys)
			}
			expect(t, c, []any{"0", []any{}}, "HSCAN", "nokey", "0", "COUNT", "abc")
		}},
		{"HScan_Errors", func(t *testing.T, c *redis.Client) {
			expect(t, c, int64(1), "HSET", "h", "f", "v")
			expectErr(t, c, "ERR invalid cursor", "HSCAN", "h", "abc")
			expectErr(t, c, "ERR syntax error", "HSCAN", "h", "0", "COUNT", "0")
			expectErr(t, c, "ERR syntax error", "HSCAN", "h", "0", "TYPE", "string")
			expectErr(t, c, "ERR syntax error", "HSCAN", "h", "0", "MATCH")
			expectErr(t, c, "ERR value is not an integer or out of range", "HSCAN", "h", "0", "COUNT", "x")
		}},
		{"HRandField_Counts", func(t *testing.T, c *redis.Client) {
			expect(t, c, nil, "HRANDFIELD", "nokey")
			expect(t, c, []any{}, "HRANDFIELD", "nokey", "3")
			fields := map[string]string{}
			args := []any{"HSET", "h"}
			for i := range 20 {
				f := "f" + strconv.Itoa(i)
				fields[f] = "v" + strconv.Itoa(i)
				args = append(args, f, fields[f])
			}
			expect(t, c, int64(20), args...)
			one, err := c.Do(hashCtx, "HRANDFIELD", "h").Text()
			if err != nil || fields[one] == "" {
				t.Fatalf("HRANDFIELD h = %q, %v", one, err)
			}
			expect(t, c, []any{}, "HRANDFIELD", "h", "0")
			pick := hashStrings(t, c, "HRANDFIELD", "h", "5")
			if len(pick) != 5 || len(slices.Compact(slices.Sorted(slices.Values(pick)))) != 5 {
				t.Fatalf("HRANDFIELD h 5 = %q, want 5 distinct fields", pick)
			}
			if all := hashStrings(t, c, "HRANDFIELD", "h", "50"); len(all) != 20 {
				t.Fatalf("HRANDFIELD h 50 gave %d fields, want all 20", len(all))
			}
			rep := hashStrings(t, c, "HRANDFIELD", "h", "-100")
			if len(rep) != 100 {
				t.Fatalf("HRANDFIELD h -100 gave %d fields", len(rep))
			}
			for _, f := range rep {
				if fields[f] == "" {
					t.Fatalf("HRANDFIELD returned unknown field %q", f)
				}
			}
			wv := hashStrings(t, c, "HRANDFIELD", "h", "-7", "WITHVALUES")
			if len(wv) != 14 {
				t.Fatalf("HRANDFIELD h -7 WITHVALUES gave %d items", len(wv))
			}
			for i := 0; i < len(wv); i += 2 {
				if fields[wv[i]] != wv[i+1] {
					t.Fatalf("pair %q %q is not in the hash", wv[i], wv[i+1])
				}
			}
		}},
		{"HRandField_Errors", func(t *testing.T, c *redis.Client) {
			expect(t, c, int64(1), "HSET", "h", "f", "v")
			expectErr(t, c, "ERR value is not an integer or out of range", "HRANDFIELD", "h", "x")
			expectErr(t, c, "ERR value is out of range, value must between -9223372036854775807 and 9223372036854775807",
				"HRANDFIELD", "h", "-9223372036854775808")
			expectErr(t, c, "ERR value is out of range", "HRANDFIELD", "h", "-9223372036854775807", "WITHVALUES")
			expectErr(t, c, "ERR syntax error", "HRANDFIELD", "h", "1", "WITHVALUE")
			expectErr(t, c, "ERR syntax error", "HRANDFIELD", "nokey", "1", "WITHVALUES", "x")
		}},
	})
}

func mapsKeys(m map[string]string) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// hashScanAll iterates HSCAN to cursor 0 and returns the union of what it gave.
func hashScanAll(t *testing.T, c *redis.Client, key string, opts ...any) map[string]string {
	t.Helper()
	out := map[string]string{}
	cursor := "0"
	for calls := 0; ; calls++ {
		if calls > 1000 {
			t.Fatal("HSCAN did not return cursor 0 in 1000 calls")
		}
		v, err := c.Do(hashCtx, append([]any{"HSCAN", key, cursor}, opts...)...).Slice()
		if err != nil {
			t.Fatal(err)
		}
		cursor = v[0].(string)
		items := v[1].([]any)
		for i := 0; i < len(items); i += 2 {
			out[items[i].(string)] = items[i+1].(string)
		}
		if cursor == "0" {
			return out
		}
	}
}

func TestHash_RESP3Shapes(t *testing.T) {
	t.Parallel()
	s := testserver.Start(t)
	c := s.Client(t, func(o *redis.Options) { o.Protocol = 3 })
	expect(t, c, int64(2), "HSET", "h", "a", "1", "b", "2")
	expect(t, c, map[any]any{"a": "1", "b": "2"}, "HGETALL", "h")
	expect(t, c, map[any]any{}, "HGETALL", "nokey")
	v, err := c.Do(hashCtx, "HRANDFIELD", "h", "-3", "WITHVALUES").Slice()
	if err != nil || len(v) != 3 {
		t.Fatalf("HRANDFIELD -3 WITHVALUES = %#v, %v", v, err)
	}
	for _, p := range v {
		pair, ok := p.([]any)
		if !ok || len(pair) != 2 || (pair[0] != "a" || pair[1] != "1") && (pair[0] != "b" || pair[1] != "2") {
			t.Fatalf("RESP3 WITHVALUES item %#v, want a [field value] pair", p)
		}
	}
	if all, err := c.Do(hashCtx, "HRANDFIELD", "h", "5", "WITHVALUES").Slice(); err != nil || len(all) != 2 {
		t.Fatalf("HRANDFIELD 5 WITHVALUES = %#v, %v", all, err)
	}
}

// TestHash_BinlogReplay replays the binlog the hash commands wrote into an empty store and
// checks the hashes come out the same: HINCRBYFLOAT and HINCRBY must have been logged as their
// results.
func TestHash_BinlogReplay(t *testing.T) {
	t.Parallel()
	s := testserver.Start(t)
	c := s.Client(t)
	for _, args := range [][]any{
		{"HSET", "h1", "a", "1", "b", "2", "c", "3"},
		{"HMSET", "h1", "d", "4"},
		{"HSETNX", "h1", "a", "no"},
		{"HSETNX", "h1", "e", "5"},
		{"HDEL", "h1", "b", "zz"},
		{"HINCRBY", "h1", "c", "10"},
		{"HINCRBYFLOAT", "h1", "f", "0.1"},
		{"HINCRBYFLOAT", "h1", "f", "0.2"},
		{"HSET", "h2", "x", "1"},
		{"HDEL", "h2", "x"},
		{"HSET", "h3", "only", "1"},
		{"EXPIRE", "h3", "1000"},
	} {
		if err := c.Do(hashCtx, args...).Err(); err != nil {
			t.Fatalf("%v: %v", args, err)
		}
	}
	want := map[string]string{"a": "1", "c": "13", "d": "4", "e": "5", "f": "0.3"}
	if got := c.HGetAll(hashCtx, "h1").Val(); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("HGETALL h1 = %v, want %v", got, want)
	}
	dst, dstSrv := testserver.ReplayTarget(t, 4)
	for id := range s.Store.NumShards() {
		if _, err := dstSrv.ReplayShard(s.Store, id); err != nil {
			t.Fatalf("replay shard %d: %v", id, err)
		}
	}
	if got := hashRead(t, dst, "h1"); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("replayed h1 = %v, want %v", got, want)
	}
	if got := hashRead(t, dst, "h2"); got != nil {
		t.Fatalf("replayed h2 = %v, want no key", got)
	}
	if m, ok := testserver.MetaOf(t, dst, 0, "h3"); !ok || m.Expire == 0 || m.Count != 1 {
		t.Fatalf("replayed h3 meta = %+v, %v; want one field and an expire", m, ok)
	}
}

// hashRead returns the fields of hash key in db 0 of st (nil when there is no such key),
// checking the meta's count against the fields.
func hashRead(t *testing.T, st *shard.Store, key string) map[string]string {
	t.Helper()
	var out map[string]string
	k := []byte(key)
	if err := st.Do(st.ShardOf(k), func(tx *shard.Tx) {
		m, ok := tx.Meta(0, k)
		if !ok {
			return
		}
		if m.Type != codec.TypeHash {
			t.Errorf("%s has type %v", key, m.Type)
			return
		}
		out = map[string]string{}
		h, _ := datatype.HashFromMeta(tx, 0, k, m, true) // packed in the meta or in data keys
		it := h.Iter(nil)
		for ; it.Valid(); it.Next() {
			out[string(it.Field())] = string(it.Value())
		}
		it.Close()
		if uint64(len(out)) != m.Count {
			t.Errorf("%s: meta count %d, %d fields", key, m.Count, len(out))
		}
	}); err != nil {
		t.Fatal(err)
	}
	return out
}

// buildBigHash writes hash key (db 0) with n fields "f%07d" straight through the Tx API, in
// groups of 10,000, which is much faster than the network; value appends field i's value.
func buildBigHash(t *testing.T, s *testserver.Server, key string, n int, value func(i int, b []byte) []byte) {
	t.Helper()
	const batch = 10_000
	k := []byte(key)
	id := s.Store.ShardOf(k)
	var version uint64
	if err := s.Store.Do(id, func(tx *shard.Tx) { version = tx.NewVersion(k) }); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	for base := 0; base < n; base += batch {
		if err := s.Store.Do(id, func(tx *shard.Tx) {
			prefix := tx.DataPrefix(0, k, version)
			dk := prefix
			var val []byte
			for i := base; i < min(base+batch, n); i++ {
				dk = fmt.Appendf(dk[:len(prefix)], "f%07d", i)
				val = value(i, val[:0])
				tx.PutData(k, dk, val)
			}
			if base+batch >= n {
				tx.SetMeta(0, k, &codec.Meta{Type: codec.TypeHash, Version: version, Count: uint64(n)})
			}
		}); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("built %d fields in %v", n, time.Since(start))
}

// TestHash_BigKey builds a hash of a million fields directly through the Tx API, then checks
// that HLEN is one meta read, that point reads and a scan page work, and that DEL drops it at
// once, leaving nothing visible under the same key.
func TestHash_BigKey(t *testing.T) {
	t.Parallel()
	s := testserver.Start(t)
	c := s.Client(t)
	const n = 1_000_000
	buildBigHash(t, s, "big", n, func(i int, b []byte) []byte { return strconv.AppendInt(b, int64(i), 10) })
	expect(t, c, int64(n), "HLEN", "big")
	expect(t, c, "500000", "HGET", "big", "f0500000")
	expect(t, c, []any{"999999", nil}, "HMGET", "big", "f0999999", "f1000000")
	expect(t, c, int64(1), "HEXISTS", "big", "f0000000")
	expect(t, c, int64(6), "HSTRLEN", "big", "f0123456")
	expect(t, c, int64(7), "HINCRBY", "big", "f0000007", "0")
	page, err := c.Do(hashCtx, "HSCAN", "big", "0", "COUNT", "5").Slice()
	if err != nil || page[0] == "0" || len(page[1].([]any)) != 10 {
		t.Fatalf("HSCAN page = %v, %v", page, err)
	}
	if f, err := c.Do(hashCtx, "HRANDFIELD", "big").Text(); err != nil || len(f) != 8 {
		t.Fatalf("HRANDFIELD big = %q, %v", f, err)
	}
	start := time.Now()
	expect(t, c, int64(1), "DEL", "big")
	t.Logf("DEL of a million fields took %v", time.Since(start)) // speed belongs in benchmarks
	expect(t, c, int64(0), "HLEN", "big")
	expect(t, c, nil, "HGET", "big", "f0500000")
	expect(t, c, int64(1), "HSET", "big", "new", "1")
	expect(t, c, []any{"new", "1"}, "HGETALL", "big")
	expect(t, c, nil, "HGET", "big", "f0500000")
}

// TestHash_GetAll_StreamsBigHash sends HGETALL of a million fields with 100-byte values (a
// reply of about 130 MB) to a client that reads it slowly. The server must stream it: its
// heap stays far below the reply's size. The reply must be complete and in order and show
// the hash as it was when HGETALL ran (a write pipelined before it shows, one after it does
// not), and the replies pipelined behind it follow in order. It is not parallel: it measures
// the process's heap.
func TestHash_GetAll_StreamsBigHash(t *testing.T) {
	s := testserver.Start(t)
	const n, valLen = 1_000_000, 100
	value := func(i int, b []byte) []byte {
		b = fmt.Appendf(b, "%07d", i)
		for len(b) < valLen {
			b = append(b, 'v')
		}
		return b
	}
	buildBigHash(t, s, "big", n, value)

	t.Run("BoundedMemory", func(t *testing.T) {
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		base, peak := ms.HeapInuse, ms.HeapInuse
		nc, r := dialRaw(t, s.Addr)
		send(t, nc, "HSET big a 1\r\nHGETALL big\r\nHSET big f0000000 changed\r\nHGET big f0000000\r\nPING\r\n")
		readLine(t, r, ":1")
		readLine(t, r, fmt.Sprintf("*%d", 2*(n+1)))
		readBulk(t, r, "a")
		readBulk(t, r, "1")
		var want []byte
		for i := range n {
			readBulk(t, r, fmt.Sprintf("f%07d", i))
			want = value(i, want[:0])
			readBulk(t, r, string(want))
			if i%100_000 == 0 {
				time.Sleep(20 * time.Millisecond) // a slow reader: the server must wait, not buffer
			}
			if i%20_000 == 0 {
				runtime.ReadMemStats(&ms)
				peak = max(peak, ms.HeapInuse)
			}
		}
		readLine(t, r, ":0")
		readBulk(t, r, "changed")
		readLine(t, r, "+PONG")
		growth := int64(peak) - int64(base)
		t.Logf("reply ~%d MB; heap in use grew by %.1f MB at most", n*(2*8+12+valLen+6)>>20, float64(growth)/(1<<20))
		if growth > 48<<20 {
			t.Fatalf("heap in use grew by %d MB while HGETALL streamed: the reply is being held", growth>>20)
		}
		waitNoStreams(t, s)
	})

	t.Run("ClientGoneMidStream", func(t *testing.T) {
		nc, r := dialRaw(t, s.Addr)
		send(t, nc, "HVALS big\r\n")
		if _, err := io.CopyN(io.Discard, r, 1<<20); err != nil {
			t.Fatal(err)
		}
		nc.Close()
		waitNoStreams(t, s)
		expect(t, s.Client(t), int64(n+1), "HLEN", "big")
	})

	t.Run("ShutdownWhileStreaming", func(t *testing.T) {
		nc, r := dialRaw(t, s.Addr)
		send(t, nc, "HKEYS big\r\n")
		readLine(t, r, fmt.Sprintf("*%d", n+1))
		s.Stop() // the reader never reads on: the stream's iterator must still be released
	})
}

// dialRaw connects to addr with a deadline that bounds the test.
func dialRaw(t *testing.T, addr string) (net.Conn, *bufio.Reader) {
	t.Helper()
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	_ = nc.SetDeadline(time.Now().Add(2 * time.Minute))
	return nc, bufio.NewReaderSize(nc, 64<<10)
}

func send(t *testing.T, nc net.Conn, s string) {
	t.Helper()
	if _, err := nc.Write([]byte(s)); err != nil {
		t.Fatal(err)
	}
}

func readLine(t *testing.T, r *bufio.Reader, want string) {
	t.Helper()
	line, err := r.ReadString('\n')
	if err != nil || line != want+"\r\n" {
		t.Fatalf("read %q, %v; want %q", line, err, want)
	}
}

func readBulk(t *testing.T, r *bufio.Reader, want string) {
	t.Helper()
	readLine(t, r, "$"+strconv.Itoa(len(want)))
	buf := make([]byte, len(want)+2)
	if _, err := io.ReadFull(r, buf); err != nil || string(buf) != want+"\r\n" {
		t.Fatalf("read bulk %q, %v; want %q", buf, err, want)
	}
}

// waitNoStreams waits (bounded) until the server has released every reply stream.
func waitNoStreams(t *testing.T, s *testserver.Server) {
	t.Helper()
	for range 500 {
		if s.Store.OpenStreams() == 0 {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("%d reply streams still open", s.Store.OpenStreams())
}

// HSET of a field to the value it holds writes no data, but Redis still counts it a change of
// the key: it aborts a WATCHing transaction, makes an "hset" event and counts a change.
func TestHSET_SameValue_StillAChangeOfTheKey(t *testing.T) {
	t.Parallel()
	s := testserver.Start(t, "--notify-keyspace-events", "KA")
	c := s.Client(t)
	c.HSet(hashCtx, "h", "f", "v")
	sub := s.Client(t).PSubscribe(hashCtx, "__keyspace@0__:*")
	defer sub.Close()
	if _, err := sub.Receive(hashCtx); err != nil {
		t.Fatal(err)
	}
	changes := func() string {
		v, _ := c.Info(hashCtx, "persistence").Result()
		for _, l := range strings.Split(v, "\r\n") {
			if strings.HasPrefix(l, "rdb_changes_since_last_save:") {
				return l
			}
		}
		return ""
	}
	before := changes()
	w := s.Client(t)
	err := w.Watch(hashCtx, func(tx *redis.Tx) error {
		if n, err := c.HSet(hashCtx, "h", "f", "v").Result(); n != 0 || err != nil {
			t.Errorf("HSET h f v again = %d, %v", n, err)
		}
		_, err := tx.TxPipelined(hashCtx, func(p redis.Pipeliner) error {
			p.Ping(hashCtx)
			return nil
		})
		return err
	}, "h")
	if err != redis.TxFailedErr {
		t.Errorf("EXEC after HSET of the same value under WATCH: %v, want it aborted", err)
	}
	if after := changes(); after == before {
		t.Errorf("HSET of the same value counted no change (%s)", after)
	}
	select {
	case msg := <-sub.Channel():
		if msg.Channel != "__keyspace@0__:h" || msg.Payload != "hset" {
			t.Errorf("event %s %s, want hset on h", msg.Channel, msg.Payload)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("no hset event")
	}
	if v, err := c.HGet(hashCtx, "h", "f").Result(); v != "v" || err != nil {
		t.Errorf("HGET = %q, %v", v, err)
	}
}
