package cmds_test

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"shardis/internal/testserver"
)

var keysCtx = context.Background()

// keysEnv is what a keyspace test case gets: the server, a client on the case's own
// database, and that database's index.
type keysEnv struct {
	s  *testserver.Server
	c  *redis.Client
	db int
}

type keysCase struct {
	name string
	fn   func(t *testing.T, e keysEnv)
}

// keysSuite runs cases one after another on one server, each on a database of its own (so
// DBSIZE, KEYS and SCAN see only the case's keys): a group of cases pays for one server start
// and stop, which is most of an integration test's time.
func keysSuite(t *testing.T, cases []keysCase) {
	t.Parallel()
	if len(cases) > 16 {
		t.Fatalf("%d cases, but a server has 16 databases", len(cases))
	}
	s := testserver.Start(t)
	for i, tc := range cases {
		c := s.Client(t, func(o *redis.Options) { o.DB = i })
		t.Run(tc.name, func(t *testing.T) { tc.fn(t, keysEnv{s: s, c: c, db: i}) })
	}
}

// keysStart starts a server of the test's own, for cases that use several databases.
func keysStart(t *testing.T) (*testserver.Server, *redis.Client) {
	t.Helper()
	t.Parallel()
	s := testserver.Start(t)
	return s, s.Client(t)
}

// keysOtherShard returns a key named prefix<n> that lives in another shard than key.
func keysOtherShard(s *testserver.Server, key, prefix string) string {
	for i := 0; ; i++ {
		if k := prefix + strconv.Itoa(i); s.Store.ShardOf([]byte(k)) != s.Store.ShardOf([]byte(key)) {
			return k
		}
	}
}

func TestDel(t *testing.T) {
	keysSuite(t, []keysCase{
		{"CountsDeletedKeysAcrossShards", func(t *testing.T, e keysEnv) {
			c := e.c
			args := []any{"DEL"}
			for i := range 20 {
				expect(t, c, "OK", "SET", fmt.Sprintf("k%d", i), "v")
				args = append(args, fmt.Sprintf("k%d", i))
			}
			// 20 keys spread over 4 shards, a missing key, a repeated key.
			args = append(args, "missing", "k0")
			expect(t, c, int64(20), args...)
			expect(t, c, int64(0), "DBSIZE")
			expect(t, c, int64(0), "EXISTS", "k0", "k19")
		}},
		{"ExpiredKeyIsNotCounted", func(t *testing.T, e keysEnv) {
			expect(t, e.c, "OK", "SET", "k", "v")
			expect(t, e.c, int64(1), "PEXPIRE", "k", "20")
			time.Sleep(60 * time.Millisecond)
			expect(t, e.c, int64(0), "DEL", "k")
		}},
		{"WrongArity", func(t *testing.T, e keysEnv) {
			expectErr(t, e.c, "ERR wrong number of arguments for 'del' command", "DEL")
		}},
		{"Unlink", func(t *testing.T, e keysEnv) {
			c := e.c
			expect(t, c, "OK", "SET", "a", "1")
			expect(t, c, "OK", "SET", "b", "2")
			expect(t, c, int64(2), "UNLINK", "a", "b", "c")
			expectNil(t, c, "GET", "a")
			expect(t, c, int64(0), "DBSIZE")
			expectErr(t, c, "ERR wrong number of arguments for 'unlink' command", "UNLINK")
		}},
	})
}

func TestExists(t *testing.T) {
	keysSuite(t, []keysCase{
		{"CountsRepeatedKeys", func(t *testing.T, e keysEnv) {
			c := e.c
			expect(t, c, "OK", "SET", "a", "1")
			expect(t, c, "OK", "SET", "b", "1")
			expect(t, c, int64(4), "EXISTS", "a", "a", "b", "nope", "a")
			expect(t, c, int64(0), "EXISTS", "nope")
			expectErr(t, c, "ERR wrong number of arguments for 'exists' command", "EXISTS")
		}},
		{"TouchCountsExistingKeys", func(t *testing.T, e keysEnv) {
			expect(t, e.c, "OK", "SET", "a", "1")
			expect(t, e.c, int64(2), "TOUCH", "a", "nope", "a")
			expectErr(t, e.c, "ERR wrong number of arguments for 'touch' command", "TOUCH")
		}},
		{"TypeRepliesSimpleStrings", func(t *testing.T, e keysEnv) {
			expect(t, e.c, "OK", "SET", "a", "1")
			got := string(testserver.Raw(t, e.s.Addr,
				[]byte(fmt.Sprintf("SELECT %d\r\nTYPE a\r\nTYPE nope\r\n", e.db)), 300*time.Millisecond))
			if got != "+OK\r\n+string\r\n+none\r\n" {
				t.Fatalf("TYPE replies %q", got)
			}
			expectErr(t, e.c, "ERR wrong number of arguments for 'type' command", "TYPE", "a", "b")
		}},
	})
}

func TestRename(t *testing.T) {
	keysSuite(t, []keysCase{
		{"MovesValueAndTTLAcrossShards", func(t *testing.T, e keysEnv) {
			c, src := e.c, "src"
			dst := keysOtherShard(e.s, src, "dst")
			expect(t, c, "OK", "SET", src, "hello")
			expect(t, c, int64(1), "EXPIRE", src, "1000")
			expect(t, c, "OK", "SET", dst, "old")
			expect(t, c, "OK", "RENAME", src, dst)
			expect(t, c, "hello", "GET", dst)
			expect(t, c, int64(1000), "TTL", dst)
			expect(t, c, int64(0), "EXISTS", src)
			expect(t, c, int64(1), "DBSIZE")
		}},
		{"ReplacesDestinationTTL", func(t *testing.T, e keysEnv) {
			c := e.c
			expect(t, c, "OK", "SET", "a", "1")
			expect(t, c, "OK", "SET", "b", "2")
			expect(t, c, int64(1), "EXPIRE", "b", "1000")
			expect(t, c, "OK", "RENAME", "a", "b")
			expect(t, c, int64(-1), "TTL", "b")
			expect(t, c, "1", "GET", "b")
		}},
		{"KeepsEncoding", func(t *testing.T, e keysEnv) {
			c := e.c
			expect(t, c, "OK", "SET", "a", "123")
			expect(t, c, "OK", "RENAME", "a", "b")
			expect(t, c, "int", "OBJECT", "ENCODING", "b")
		}},
		{"MissingSourceIsError", func(t *testing.T, e keysEnv) {
			c := e.c
			expectErr(t, c, "ERR no such key", "RENAME", "nope", "b")
			expectErr(t, c, "ERR no such key", "RENAME", "nope", "nope")
			expectErr(t, c, "ERR no such key", "RENAMENX", "nope", "b")
			expectErr(t, c, "ERR wrong number of arguments for 'rename' command", "RENAME", "a")
			expectErr(t, c, "ERR wrong number of arguments for 'renamenx' command", "RENAMENX", "a", "b", "c")
		}},
		{"SameKeyKeepsIt", func(t *testing.T, e keysEnv) {
			c := e.c
			expect(t, c, "OK", "SET", "a", "1")
			expect(t, c, "OK", "RENAME", "a", "a")
			expect(t, c, int64(0), "RENAMENX", "a", "a")
			expect(t, c, "1", "GET", "a")
		}},
		{"NX_ExistingDestination", func(t *testing.T, e keysEnv) {
			c := e.c
			expect(t, c, "OK", "SET", "a", "1")
			expect(t, c, "OK", "SET", "b", "2")
			expect(t, c, int64(0), "RENAMENX", "a", "b")
			expect(t, c, "2", "GET", "b")
			expect(t, c, int64(1), "RENAMENX", "a", "c")
			expect(t, c, "1", "GET", "c")
			expect(t, c, int64(0), "EXISTS", "a")
		}},
	})
}

func TestCopy(t *testing.T) {
	keysSuite(t, []keysCase{
		{"CopiesValueAndTTL", func(t *testing.T, e keysEnv) {
			c := e.c
			dst := keysOtherShard(e.s, "a", "b")
			expect(t, c, "OK", "SET", "a", "v")
			expect(t, c, int64(1), "PEXPIRE", "a", "5000000")
			expect(t, c, int64(1), "COPY", "a", dst)
			expect(t, c, "v", "GET", dst)
			expect(t, c, "v", "GET", "a")
			pa, _ := doCmd(t, c, "PEXPIRETIME", "a")
			expect(t, c, pa, "PEXPIRETIME", dst)
		}},
		{"ExistingDestinationNeedsReplace", func(t *testing.T, e keysEnv) {
			c := e.c
			expect(t, c, "OK", "SET", "a", "new")
			expect(t, c, "OK", "SET", "b", "old")
			expect(t, c, int64(0), "COPY", "a", "b")
			expect(t, c, "old", "GET", "b")
			expect(t, c, int64(1), "COPY", "a", "b", "replace")
			expect(t, c, "new", "GET", "b")
			expect(t, c, int64(0), "COPY", "nope", "b", "REPLACE")
			expect(t, c, "new", "GET", "b")
		}},
		{"Errors", func(t *testing.T, e keysEnv) {
			c, db := e.c, strconv.Itoa(e.db)
			expect(t, c, "OK", "SET", "a", "v")
			expectErr(t, c, "ERR source and destination objects are the same", "COPY", "a", "a")
			expectErr(t, c, "ERR source and destination objects are the same", "COPY", "a", "a", "DB", db)
			expectErr(t, c, "ERR syntax error", "COPY", "a", "b", "DB")
			expectErr(t, c, "ERR syntax error", "COPY", "a", "b", "foo")
			expectErr(t, c, "ERR DB index is out of range", "COPY", "a", "b", "DB", "16")
			expectErr(t, c, "ERR DB index is out of range", "COPY", "a", "b", "DB", "-1")
			expectErr(t, c, "ERR value is not an integer or out of range", "COPY", "a", "b", "DB", "x")
			expectErr(t, c, "ERR value is out of range, value must between -2147483648 and 2147483647", "COPY", "a", "b", "DB", "-2147483649")
			expectErr(t, c, "ERR wrong number of arguments for 'copy' command", "COPY", "a")
			expect(t, c, int64(0), "EXISTS", "b")
		}},
	})
}

func TestCopy_ToAnotherDB(t *testing.T) {
	s, c := keysStart(t)
	expect(t, c, "OK", "SET", "a", "v")
	expect(t, c, int64(1), "COPY", "a", "a", "DB", "3")
	c3 := s.Client(t, func(o *redis.Options) { o.DB = 3 })
	expect(t, c3, "v", "GET", "a")
	expect(t, c3, int64(1), "DBSIZE")
	expect(t, c, int64(0), "COPY", "a", "a", "DB", "3")
	expect(t, c, "OK", "SET", "a", "v2")
	expect(t, c, int64(1), "COPY", "a", "a", "db", "3", "replace")
	expect(t, c3, "v2", "GET", "a")
}

func TestMove_MovesKeyWithTTL(t *testing.T) {
	s, c := keysStart(t)
	expect(t, c, "OK", "SET", "a", "v")
	expect(t, c, int64(1), "EXPIRE", "a", "1000")
	expect(t, c, int64(1), "MOVE", "a", "2")
	expect(t, c, int64(0), "EXISTS", "a")
	c2 := s.Client(t, func(o *redis.Options) { o.DB = 2 })
	expect(t, c2, "v", "GET", "a")
	expect(t, c2, int64(1000), "TTL", "a")
	expect(t, c, int64(0), "DBSIZE")
	expect(t, c2, int64(1), "DBSIZE")
}

func TestMove_DestinationExistsOrSourceMissing(t *testing.T) {
	s, c := keysStart(t)
	c1 := s.Client(t, func(o *redis.Options) { o.DB = 1 })
	expect(t, c, "OK", "SET", "a", "src")
	expect(t, c1, "OK", "SET", "a", "dst")
	expect(t, c, int64(0), "MOVE", "a", "1")
	expect(t, c, "src", "GET", "a")
	expect(t, c1, "dst", "GET", "a")
	expect(t, c, int64(0), "MOVE", "nope", "1")
	expect(t, c, int64(1), "DBSIZE")
	expect(t, c1, int64(1), "DBSIZE")
}

func TestMove_Errors(t *testing.T) {
	_, c := keysStart(t)
	expect(t, c, "OK", "SET", "a", "v")
	expectErr(t, c, "ERR source and destination objects are the same", "MOVE", "a", "0")
	expectErr(t, c, "ERR source and destination objects are the same", "MOVE", "nope", "0")
	expectErr(t, c, "ERR DB index is out of range", "MOVE", "a", "16")
	expectErr(t, c, "ERR value is not an integer or out of range", "MOVE", "a", "x")
	expectErr(t, c, "ERR value is out of range, value must between -2147483648 and 2147483647", "MOVE", "a", "99999999999")
	expectErr(t, c, "ERR wrong number of arguments for 'move' command", "MOVE", "a")
	expect(t, c, "v", "GET", "a")
}

func keysSorted(t *testing.T, c *redis.Client, args ...any) []string {
	t.Helper()
	v, err := doCmd(t, c, args...)
	if err != nil {
		t.Fatalf("%v: %v", args, err)
	}
	var out []string
	for _, x := range v.([]any) {
		out = append(out, x.(string))
	}
	slices.Sort(out)
	return out
}

// keysScanAll iterates SCAN to cursor 0 with extra options and returns every key returned,
// failing on a duplicate.
func keysScanAll(t *testing.T, c *redis.Client, opts ...any) map[string]bool {
	t.Helper()
	seen := map[string]bool{}
	cursor := "0"
	for calls := 0; ; calls++ {
		if calls > 10000 {
			t.Fatal("SCAN does not end")
		}
		v, err := doCmd(t, c, append([]any{"SCAN", cursor}, opts...)...)
		if err != nil {
			t.Fatalf("SCAN %s: %v", cursor, err)
		}
		page := v.([]any)
		cursor = page[0].(string)
		for _, k := range page[1].([]any) {
			if seen[k.(string)] {
				t.Fatalf("SCAN returned %q twice", k)
			}
			seen[k.(string)] = true
		}
		if cursor == "0" {
			return seen
		}
	}
}

func TestScan(t *testing.T) {
	keysSuite(t, []keysCase{
		{"IteratesEveryKeyOnceAcrossShards", func(t *testing.T, e keysEnv) {
			pipe := e.c.Pipeline()
			for i := range 1000 {
				pipe.Set(keysCtx, "key:"+strconv.Itoa(i), "v", 0)
			}
			if _, err := pipe.Exec(keysCtx); err != nil {
				t.Fatal(err)
			}
			for _, opts := range [][]any{nil, {"COUNT", "1"}, {"COUNT", "7"}, {"count", "1000"}, {"COUNT", "100000"}} {
				got := keysScanAll(t, e.c, opts...)
				if len(got) != 1000 {
					t.Fatalf("SCAN %v returned %d keys, want 1000", opts, len(got))
				}
				for i := range 1000 {
					if !got["key:"+strconv.Itoa(i)] {
						t.Fatalf("SCAN %v missed key:%d", opts, i)
					}
				}
			}
		}},
		{"MatchAndTypeFilter", func(t *testing.T, e keysEnv) {
			for i := range 100 {
				expect(t, e.c, "OK", "SET", fmt.Sprintf("a%d", i), "v")
				expect(t, e.c, "OK", "SET", fmt.Sprintf("b%d", i), "v")
			}
			got := keysScanAll(t, e.c, "MATCH", "a*", "COUNT", "3")
			if len(got) != 100 {
				t.Fatalf("SCAN MATCH a* returned %d keys", len(got))
			}
			for k := range got {
				if !strings.HasPrefix(k, "a") {
					t.Fatalf("SCAN MATCH a* returned %q", k)
				}
			}
			if got := keysScanAll(t, e.c, "TYPE", "STRING"); len(got) != 200 {
				t.Fatalf("SCAN TYPE STRING returned %d keys", len(got))
			}
			if got := keysScanAll(t, e.c, "TYPE", "hash", "MATCH", "*"); len(got) != 0 {
				t.Fatalf("SCAN TYPE hash returned %v", got)
			}
		}},
		{"SkipsExpiredKeys", func(t *testing.T, e keysEnv) {
			expect(t, e.c, "OK", "SET", "live", "v")
			expect(t, e.c, "OK", "SET", "dying", "v")
			expect(t, e.c, int64(1), "PEXPIRE", "dying", "50")
			time.Sleep(120 * time.Millisecond)
			if got := keysScanAll(t, e.c); len(got) != 1 || !got["live"] {
				t.Fatalf("SCAN returned %v", got)
			}
		}},
		{"EmptyCursorIsZero", func(t *testing.T, e keysEnv) {
			// strtoul reads "" as 0: a full iteration starts.
			expect(t, e.c, "OK", "SET", "a", "v")
			v, err := doCmd(t, e.c, "SCAN", "", "COUNT", "1000")
			if err != nil {
				t.Fatal(err)
			}
			if page := v.([]any); len(page) != 2 {
				t.Fatalf("SCAN \"\" = %#v", v)
			}
		}},
		{"CursorOutsideTheShardsEnds", func(t *testing.T, e keysEnv) {
			expect(t, e.c, "OK", "SET", "a", "v")
			expect(t, e.c, []any{"0", []any{}}, "SCAN", "-1")
		}},
		{"Errors", func(t *testing.T, e keysEnv) {
			c := e.c
			expectErr(t, c, "ERR invalid cursor", "SCAN", "abc")
			expectErr(t, c, "ERR invalid cursor", "SCAN", "1.5")
			expectErr(t, c, "ERR invalid cursor", "SCAN", " 0")
			expectErr(t, c, "ERR invalid cursor", "SCAN", "+")
			expectErr(t, c, "ERR invalid cursor", "SCAN", "18446744073709551616")
			expectErr(t, c, "ERR syntax error", "SCAN", "0", "COUNT", "0")
			expectErr(t, c, "ERR value is not an integer or out of range", "SCAN", "0", "COUNT", "x")
			expectErr(t, c, "ERR syntax error", "SCAN", "0", "MATCH")
			expectErr(t, c, "ERR syntax error", "SCAN", "0", "FOO", "bar")
			expectErr(t, c, "ERR wrong number of arguments for 'scan' command", "SCAN")
		}},
		{"KeysMatchesPatternAcrossShards", func(t *testing.T, e keysEnv) {
			c := e.c
			for _, k := range []string{"user:1", "user:2", "user:10", "order:1", ""} {
				expect(t, c, "OK", "SET", k, "v")
			}
			if got, want := keysSorted(t, c, "KEYS", "user:?"), []string{"user:1", "user:2"}; !slices.Equal(got, want) {
				t.Fatalf("KEYS user:? = %q, want %q", got, want)
			}
			if got, want := keysSorted(t, c, "KEYS", "*"), []string{"", "order:1", "user:1", "user:10", "user:2"}; !slices.Equal(got, want) {
				t.Fatalf("KEYS * = %q, want %q", got, want)
			}
			if got := keysSorted(t, c, "KEYS", "nomatch*"); len(got) != 0 {
				t.Fatalf("KEYS nomatch* = %q", got)
			}
			expectErr(t, c, "ERR wrong number of arguments for 'keys' command", "KEYS")
		}},
		{"RandomKeyEmptyAndNonEmpty", func(t *testing.T, e keysEnv) {
			c := e.c
			expectNil(t, c, "RANDOMKEY")
			expect(t, c, "OK", "SET", "", "empty key")
			expect(t, c, "", "RANDOMKEY")
			for i := range 20 {
				expect(t, c, "OK", "SET", fmt.Sprintf("k%d", i), "v")
			}
			seen := map[string]bool{}
			for range 50 {
				v, err := doCmd(t, c, "RANDOMKEY")
				if err != nil {
					t.Fatal(err)
				}
				seen[v.(string)] = true
			}
			if len(seen) < 2 {
				t.Fatalf("RANDOMKEY returned only %v", seen)
			}
			for k := range seen {
				expect(t, c, int64(1), "EXISTS", k)
			}
			expectErr(t, c, "ERR wrong number of arguments for 'randomkey' command", "RANDOMKEY", "x")
		}},
	})
}

func TestObject(t *testing.T) {
	keysSuite(t, []keysCase{
		{"Encoding", func(t *testing.T, e keysEnv) {
			for _, tc := range []struct{ val, enc string }{
				{"12345", "int"},
				{"-9223372036854775808", "int"},
				{"007", "embstr"},
				{"", "embstr"},
				{strings.Repeat("x", 44), "embstr"},
				{strings.Repeat("x", 45), "raw"},
				{"12345678901234567890", "embstr"},
			} {
				expect(t, e.c, "OK", "SET", "k", tc.val)
				expect(t, e.c, tc.enc, "OBJECT", "ENCODING", "k")
			}
			expectNil(t, e.c, "OBJECT", "ENCODING", "nope")
			// A string modified in place is "raw" in Redis, even when it reads as an integer.
			expect(t, e.c, "OK", "SET", "k", "1")
			expect(t, e.c, int64(2), "APPEND", "k", "2")
			expect(t, e.c, "raw", "OBJECT", "ENCODING", "k")
			expect(t, e.c, int64(1), "OBJECT", "REFCOUNT", "k")
		}},
		{"RefcountIdletimeFreq", func(t *testing.T, e keysEnv) {
			c := e.c
			expect(t, c, "OK", "SET", "shared", "9999")
			expect(t, c, "OK", "SET", "big", "10000")
			written := time.Now()
			expect(t, c, "OK", "SET", "str", "hello")
			expect(t, c, int64(2147483647), "OBJECT", "REFCOUNT", "shared")
			expect(t, c, int64(1), "OBJECT", "REFCOUNT", "big")
			expect(t, c, int64(1), "object", "refcount", "str")
			// Just written: idle for at most the seconds since (object_test.go tests the rest).
			n, err := c.Do(testCtx, "OBJECT", "IDLETIME", "str").Int64()
			if most := int64(time.Since(written)/time.Second) + 1; err != nil || n < 0 || n > most {
				t.Fatalf("OBJECT IDLETIME of a key just written: %d %v (at most %d)", n, err, most)
			}
			expectErr(t, c, "ERR An LFU maxmemory policy is not selected, access frequency not tracked. Please note that when switching between policies at runtime LRU and LFU data will take some time to adjust.",
				"OBJECT", "FREQ", "str")
			expectNil(t, c, "OBJECT", "REFCOUNT", "nope")
			expectNil(t, c, "OBJECT", "IDLETIME", "nope")
			expectNil(t, c, "OBJECT", "FREQ", "nope")
		}},
		{"HelpAndErrors", func(t *testing.T, e keysEnv) {
			c := e.c
			v, err := doCmd(t, c, "OBJECT", "HELP")
			if err != nil {
				t.Fatal(err)
			}
			lines := v.([]any)
			if len(lines) != 15 || lines[0] != "OBJECT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:" || lines[14] != "    Prints this help." {
				t.Fatalf("OBJECT HELP = %q", lines)
			}
			expectErr(t, c, "ERR unknown subcommand 'foo'. Try OBJECT HELP.", "OBJECT", "foo", "k")
			expectErr(t, c, "ERR wrong number of arguments for 'object|encoding' command", "OBJECT", "ENCODING")
			expectErr(t, c, "ERR wrong number of arguments for 'object|help' command", "OBJECT", "HELP", "x")
			expectErr(t, c, "ERR wrong number of arguments for 'object' command", "OBJECT")
		}},
	})
}
