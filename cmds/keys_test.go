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

// keysDo runs a command and fails the test on a transport error; the reply (or Redis error)
// is returned as go-redis decodes it.
func keysDo(t *testing.T, c *redis.Client, args ...any) (any, error) {
	t.Helper()
	v, err := c.Do(keysCtx, args...).Result()
	if err != nil && err != redis.Nil {
		if _, ok := err.(redis.Error); !ok {
			t.Fatalf("%v: %v", args, err)
		}
	}
	return v, err
}

// keysWant checks that a command replies want (a Go value as go-redis decodes it).
func keysWant(t *testing.T, c *redis.Client, want any, args ...any) {
	t.Helper()
	v, err := keysDo(t, c, args...)
	if err != nil {
		t.Fatalf("%v: error %v, want %#v", args, err, want)
	}
	if fmt.Sprintf("%#v", v) != fmt.Sprintf("%#v", want) {
		t.Fatalf("%v = %#v, want %#v", args, v, want)
	}
}

// keysWantErr checks that a command replies exactly the error msg.
func keysWantErr(t *testing.T, c *redis.Client, msg string, args ...any) {
	t.Helper()
	v, err := keysDo(t, c, args...)
	if err == nil || err.Error() != msg {
		t.Fatalf("%v = %#v, %v; want error %q", args, v, err, msg)
	}
}

// keysWantNil checks that a command replies a null bulk.
func keysWantNil(t *testing.T, c *redis.Client, args ...any) {
	t.Helper()
	v, err := keysDo(t, c, args...)
	if err != redis.Nil {
		t.Fatalf("%v = %#v, %v; want nil", args, v, err)
	}
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
				keysWant(t, c, "OK", "SET", fmt.Sprintf("k%d", i), "v")
				args = append(args, fmt.Sprintf("k%d", i))
			}
			// 20 keys spread over 4 shards, a missing key, a repeated key.
			args = append(args, "missing", "k0")
			keysWant(t, c, int64(20), args...)
			keysWant(t, c, int64(0), "DBSIZE")
			keysWant(t, c, int64(0), "EXISTS", "k0", "k19")
		}},
		{"ExpiredKeyIsNotCounted", func(t *testing.T, e keysEnv) {
			keysWant(t, e.c, "OK", "SET", "k", "v")
			keysWant(t, e.c, int64(1), "PEXPIRE", "k", "20")
			time.Sleep(60 * time.Millisecond)
			keysWant(t, e.c, int64(0), "DEL", "k")
		}},
		{"WrongArity", func(t *testing.T, e keysEnv) {
			keysWantErr(t, e.c, "ERR wrong number of arguments for 'del' command", "DEL")
		}},
		{"Unlink", func(t *testing.T, e keysEnv) {
			c := e.c
			keysWant(t, c, "OK", "SET", "a", "1")
			keysWant(t, c, "OK", "SET", "b", "2")
			keysWant(t, c, int64(2), "UNLINK", "a", "b", "c")
			keysWantNil(t, c, "GET", "a")
			keysWant(t, c, int64(0), "DBSIZE")
			keysWantErr(t, c, "ERR wrong number of arguments for 'unlink' command", "UNLINK")
		}},
	})
}

func TestExists(t *testing.T) {
	keysSuite(t, []keysCase{
		{"CountsRepeatedKeys", func(t *testing.T, e keysEnv) {
			c := e.c
			keysWant(t, c, "OK", "SET", "a", "1")
			keysWant(t, c, "OK", "SET", "b", "1")
			keysWant(t, c, int64(4), "EXISTS", "a", "a", "b", "nope", "a")
			keysWant(t, c, int64(0), "EXISTS", "nope")
			keysWantErr(t, c, "ERR wrong number of arguments for 'exists' command", "EXISTS")
		}},
		{"TouchCountsExistingKeys", func(t *testing.T, e keysEnv) {
			keysWant(t, e.c, "OK", "SET", "a", "1")
			keysWant(t, e.c, int64(2), "TOUCH", "a", "nope", "a")
			keysWantErr(t, e.c, "ERR wrong number of arguments for 'touch' command", "TOUCH")
		}},
		{"TypeRepliesSimpleStrings", func(t *testing.T, e keysEnv) {
			keysWant(t, e.c, "OK", "SET", "a", "1")
			got := string(testserver.Raw(t, e.s.Addr,
				[]byte(fmt.Sprintf("SELECT %d\r\nTYPE a\r\nTYPE nope\r\n", e.db)), 300*time.Millisecond))
			if got != "+OK\r\n+string\r\n+none\r\n" {
				t.Fatalf("TYPE replies %q", got)
			}
			keysWantErr(t, e.c, "ERR wrong number of arguments for 'type' command", "TYPE", "a", "b")
		}},
	})
}

func TestRename(t *testing.T) {
	keysSuite(t, []keysCase{
		{"MovesValueAndTTLAcrossShards", func(t *testing.T, e keysEnv) {
			c, src := e.c, "src"
			dst := keysOtherShard(e.s, src, "dst")
			keysWant(t, c, "OK", "SET", src, "hello")
			keysWant(t, c, int64(1), "EXPIRE", src, "1000")
			keysWant(t, c, "OK", "SET", dst, "old")
			keysWant(t, c, "OK", "RENAME", src, dst)
			keysWant(t, c, "hello", "GET", dst)
			keysWant(t, c, int64(1000), "TTL", dst)
			keysWant(t, c, int64(0), "EXISTS", src)
			keysWant(t, c, int64(1), "DBSIZE")
		}},
		{"ReplacesDestinationTTL", func(t *testing.T, e keysEnv) {
			c := e.c
			keysWant(t, c, "OK", "SET", "a", "1")
			keysWant(t, c, "OK", "SET", "b", "2")
			keysWant(t, c, int64(1), "EXPIRE", "b", "1000")
			keysWant(t, c, "OK", "RENAME", "a", "b")
			keysWant(t, c, int64(-1), "TTL", "b")
			keysWant(t, c, "1", "GET", "b")
		}},
		{"KeepsEncoding", func(t *testing.T, e keysEnv) {
			c := e.c
			keysWant(t, c, "OK", "SET", "a", "123")
			keysWant(t, c, "OK", "RENAME", "a", "b")
			keysWant(t, c, "int", "OBJECT", "ENCODING", "b")
		}},
		{"MissingSourceIsError", func(t *testing.T, e keysEnv) {
			c := e.c
			keysWantErr(t, c, "ERR no such key", "RENAME", "nope", "b")
			keysWantErr(t, c, "ERR no such key", "RENAME", "nope", "nope")
			keysWantErr(t, c, "ERR no such key", "RENAMENX", "nope", "b")
			keysWantErr(t, c, "ERR wrong number of arguments for 'rename' command", "RENAME", "a")
			keysWantErr(t, c, "ERR wrong number of arguments for 'renamenx' command", "RENAMENX", "a", "b", "c")
		}},
		{"SameKeyKeepsIt", func(t *testing.T, e keysEnv) {
			c := e.c
			keysWant(t, c, "OK", "SET", "a", "1")
			keysWant(t, c, "OK", "RENAME", "a", "a")
			keysWant(t, c, int64(0), "RENAMENX", "a", "a")
			keysWant(t, c, "1", "GET", "a")
		}},
		{"NX_ExistingDestination", func(t *testing.T, e keysEnv) {
			c := e.c
			keysWant(t, c, "OK", "SET", "a", "1")
			keysWant(t, c, "OK", "SET", "b", "2")
			keysWant(t, c, int64(0), "RENAMENX", "a", "b")
			keysWant(t, c, "2", "GET", "b")
			keysWant(t, c, int64(1), "RENAMENX", "a", "c")
			keysWant(t, c, "1", "GET", "c")
			keysWant(t, c, int64(0), "EXISTS", "a")
		}},
	})
}

func TestCopy(t *testing.T) {
	keysSuite(t, []keysCase{
		{"CopiesValueAndTTL", func(t *testing.T, e keysEnv) {
			c := e.c
			dst := keysOtherShard(e.s, "a", "b")
			keysWant(t, c, "OK", "SET", "a", "v")
			keysWant(t, c, int64(1), "PEXPIRE", "a", "5000000")
			keysWant(t, c, int64(1), "COPY", "a", dst)
			keysWant(t, c, "v", "GET", dst)
			keysWant(t, c, "v", "GET", "a")
			pa, _ := keysDo(t, c, "PEXPIRETIME", "a")
			keysWant(t, c, pa, "PEXPIRETIME", dst)
		}},
		{"ExistingDestinationNeedsReplace", func(t *testing.T, e keysEnv) {
			c := e.c
			keysWant(t, c, "OK", "SET", "a", "new")
			keysWant(t, c, "OK", "SET", "b", "old")
			keysWant(t, c, int64(0), "COPY", "a", "b")
			keysWant(t, c, "old", "GET", "b")
			keysWant(t, c, int64(1), "COPY", "a", "b", "replace")
			keysWant(t, c, "new", "GET", "b")
			keysWant(t, c, int64(0), "COPY", "nope", "b", "REPLACE")
			keysWant(t, c, "new", "GET", "b")
		}},
		{"Errors", func(t *testing.T, e keysEnv) {
			c, db := e.c, strconv.Itoa(e.db)
			keysWant(t, c, "OK", "SET", "a", "v")
			keysWantErr(t, c, "ERR source and destination objects are the same", "COPY", "a", "a")
			keysWantErr(t, c, "ERR source and destination objects are the same", "COPY", "a", "a", "DB", db)
			keysWantErr(t, c, "ERR syntax error", "COPY", "a", "b", "DB")
			keysWantErr(t, c, "ERR syntax error", "COPY", "a", "b", "foo")
			keysWantErr(t, c, "ERR DB index is out of range", "COPY", "a", "b", "DB", "16")
			keysWantErr(t, c, "ERR DB index is out of range", "COPY", "a", "b", "DB", "-1")
			keysWantErr(t, c, "ERR value is not an integer or out of range", "COPY", "a", "b", "DB", "x")
			keysWantErr(t, c, "ERR value is out of range, value must between -2147483648 and 2147483647", "COPY", "a", "b", "DB", "-2147483649")
			keysWantErr(t, c, "ERR wrong number of arguments for 'copy' command", "COPY", "a")
			keysWant(t, c, int64(0), "EXISTS", "b")
		}},
	})
}

func TestCopy_ToAnotherDB(t *testing.T) {
	s, c := keysStart(t)
	keysWant(t, c, "OK", "SET", "a", "v")
	keysWant(t, c, int64(1), "COPY", "a", "a", "DB", "3")
	c3 := s.Client(t, func(o *redis.Options) { o.DB = 3 })
	keysWant(t, c3, "v", "GET", "a")
	keysWant(t, c3, int64(1), "DBSIZE")
	keysWant(t, c, int64(0), "COPY", "a", "a", "DB", "3")
	keysWant(t, c, "OK", "SET", "a", "v2")
	keysWant(t, c, int64(1), "COPY", "a", "a", "db", "3", "replace")
	keysWant(t, c3, "v2", "GET", "a")
}

func TestMove_MovesKeyWithTTL(t *testing.T) {
	s, c := keysStart(t)
	keysWant(t, c, "OK", "SET", "a", "v")
	keysWant(t, c, int64(1), "EXPIRE", "a", "1000")
	keysWant(t, c, int64(1), "MOVE", "a", "2")
	keysWant(t, c, int64(0), "EXISTS", "a")
	c2 := s.Client(t, func(o *redis.Options) { o.DB = 2 })
	keysWant(t, c2, "v", "GET", "a")
	keysWant(t, c2, int64(1000), "TTL", "a")
	keysWant(t, c, int64(0), "DBSIZE")
	keysWant(t, c2, int64(1), "DBSIZE")
}

func TestMove_DestinationExistsOrSourceMissing(t *testing.T) {
	s, c := keysStart(t)
	c1 := s.Client(t, func(o *redis.Options) { o.DB = 1 })
	keysWant(t, c, "OK", "SET", "a", "src")
	keysWant(t, c1, "OK", "SET", "a", "dst")
	keysWant(t, c, int64(0), "MOVE", "a", "1")
	keysWant(t, c, "src", "GET", "a")
	keysWant(t, c1, "dst", "GET", "a")
	keysWant(t, c, int64(0), "MOVE", "nope", "1")
	keysWant(t, c, int64(1), "DBSIZE")
	keysWant(t, c1, int64(1), "DBSIZE")
}

func TestMove_Errors(t *testing.T) {
	_, c := keysStart(t)
	keysWant(t, c, "OK", "SET", "a", "v")
	keysWantErr(t, c, "ERR source and destination objects are the same", "MOVE", "a", "0")
	keysWantErr(t, c, "ERR source and destination objects are the same", "MOVE", "nope", "0")
	keysWantErr(t, c, "ERR DB index is out of range", "MOVE", "a", "16")
	keysWantErr(t, c, "ERR value is not an integer or out of range", "MOVE", "a", "x")
	keysWantErr(t, c, "ERR value is out of range, value must between -2147483648 and 2147483647", "MOVE", "a", "99999999999")
	keysWantErr(t, c, "ERR wrong number of arguments for 'move' command", "MOVE", "a")
	keysWant(t, c, "v", "GET", "a")
}

func keysSorted(t *testing.T, c *redis.Client, args ...any) []string {
	t.Helper()
	v, err := keysDo(t, c, args...)
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
		v, err := keysDo(t, c, append([]any{"SCAN", cursor}, opts...)...)
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
				keysWant(t, e.c, "OK", "SET", fmt.Sprintf("a%d", i), "v")
				keysWant(t, e.c, "OK", "SET", fmt.Sprintf("b%d", i), "v")
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
			keysWant(t, e.c, "OK", "SET", "live", "v")
			keysWant(t, e.c, "OK", "SET", "dying", "v")
			keysWant(t, e.c, int64(1), "PEXPIRE", "dying", "50")
			time.Sleep(120 * time.Millisecond)
			if got := keysScanAll(t, e.c); len(got) != 1 || !got["live"] {
				t.Fatalf("SCAN returned %v", got)
			}
		}},
		{"EmptyCursorIsZero", func(t *testing.T, e keysEnv) {
			// strtoul reads "" as 0: a full iteration starts.
			keysWant(t, e.c, "OK", "SET", "a", "v")
			v, err := keysDo(t, e.c, "SCAN", "", "COUNT", "1000")
			if err != nil {
				t.Fatal(err)
			}
			if page := v.([]any); len(page) != 2 {
				t.Fatalf("SCAN \"\" = %#v", v)
			}
		}},
		{"CursorOutsideTheShardsEnds", func(t *testing.T, e keysEnv) {
			keysWant(t, e.c, "OK", "SET", "a", "v")
			keysWant(t, e.c, []any{"0", []any{}}, "SCAN", "-1")
		}},
		{"Errors", func(t *testing.T, e keysEnv) {
			c := e.c
			keysWantErr(t, c, "ERR invalid cursor", "SCAN", "abc")
			keysWantErr(t, c, "ERR invalid cursor", "SCAN", "1.5")
			keysWantErr(t, c, "ERR invalid cursor", "SCAN", " 0")
			keysWantErr(t, c, "ERR invalid cursor", "SCAN", "+")
			keysWantErr(t, c, "ERR invalid cursor", "SCAN", "18446744073709551616")
			keysWantErr(t, c, "ERR syntax error", "SCAN", "0", "COUNT", "0")
			keysWantErr(t, c, "ERR value is not an integer or out of range", "SCAN", "0", "COUNT", "x")
			keysWantErr(t, c, "ERR syntax error", "SCAN", "0", "MATCH")
			keysWantErr(t, c, "ERR syntax error", "SCAN", "0", "FOO", "bar")
			keysWantErr(t, c, "ERR wrong number of arguments for 'scan' command", "SCAN")
		}},
		{"KeysMatchesPatternAcrossShards", func(t *testing.T, e keysEnv) {
			c := e.c
			for _, k := range []string{"user:1", "user:2", "user:10", "order:1", ""} {
				keysWant(t, c, "OK", "SET", k, "v")
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
			keysWantErr(t, c, "ERR wrong number of arguments for 'keys' command", "KEYS")
		}},
		{"RandomKeyEmptyAndNonEmpty", func(t *testing.T, e keysEnv) {
			c := e.c
			keysWantNil(t, c, "RANDOMKEY")
			keysWant(t, c, "OK", "SET", "", "empty key")
			keysWant(t, c, "", "RANDOMKEY")
			for i := range 20 {
				keysWant(t, c, "OK", "SET", fmt.Sprintf("k%d", i), "v")
			}
			seen := map[string]bool{}
			for range 50 {
				v, err := keysDo(t, c, "RANDOMKEY")
				if err != nil {
					t.Fatal(err)
				}
				seen[v.(string)] = true
			}
			if len(seen) < 2 {
				t.Fatalf("RANDOMKEY returned only %v", seen)
			}
			for k := range seen {
				keysWant(t, c, int64(1), "EXISTS", k)
			}
			keysWantErr(t, c, "ERR wrong number of arguments for 'randomkey' command", "RANDOMKEY", "x")
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
				keysWant(t, e.c, "OK", "SET", "k", tc.val)
				keysWant(t, e.c, tc.enc, "OBJECT", "ENCODING", "k")
			}
			keysWantNil(t, e.c, "OBJECT", "ENCODING", "nope")
			// A string modified in place is "raw" in Redis, even when it reads as an integer.
			keysWant(t, e.c, "OK", "SET", "k", "1")
			keysWant(t, e.c, int64(2), "APPEND", "k", "2")
			keysWant(t, e.c, "raw", "OBJECT", "ENCODING", "k")
			keysWant(t, e.c, int64(1), "OBJECT", "REFCOUNT", "k")
		}},
		{"RefcountIdletimeFreq", func(t *testing.T, e keysEnv) {
			c := e.c
			keysWant(t, c, "OK", "SET", "shared", "9999")
			keysWant(t, c, "OK", "SET", "big", "10000")
			keysWant(t, c, "OK", "SET", "str", "hello")
			keysWant(t, c, int64(2147483647), "OBJECT", "REFCOUNT", "shared")
			keysWant(t, c, int64(1), "OBJECT", "REFCOUNT", "big")
			keysWant(t, c, int64(1), "object", "refcount", "str")
			keysWant(t, c, int64(0), "OBJECT", "IDLETIME", "str")
			keysWantErr(t, c, "ERR An LFU maxmemory policy is not selected, access frequency not tracked. Please note that when switching between policies at runtime LRU and LFU data will take some time to adjust.",
				"OBJECT", "FREQ", "str")
			keysWantNil(t, c, "OBJECT", "REFCOUNT", "nope")
			keysWantNil(t, c, "OBJECT", "IDLETIME", "nope")
			keysWantNil(t, c, "OBJECT", "FREQ", "nope")
		}},
		{"HelpAndErrors", func(t *testing.T, e keysEnv) {
			c := e.c
			v, err := keysDo(t, c, "OBJECT", "HELP")
			if err != nil {
				t.Fatal(err)
			}
			lines := v.([]any)
			if len(lines) != 15 || lines[0] != "OBJECT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:" || lines[14] != "    Prints this help." {
				t.Fatalf("OBJECT HELP = %q", lines)
			}
			keysWantErr(t, c, "ERR unknown subcommand 'foo'. Try OBJECT HELP.", "OBJECT", "foo", "k")
			keysWantErr(t, c, "ERR wrong number of arguments for 'object|encoding' command", "OBJECT", "ENCODING")
			keysWantErr(t, c, "ERR wrong number of arguments for 'object|help' command", "OBJECT", "HELP", "x")
			keysWantErr(t, c, "ERR wrong number of arguments for 'object' command", "OBJECT")
		}},
	})
}
