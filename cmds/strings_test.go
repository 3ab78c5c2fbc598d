package cmds_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"shardis/codec"
	"shardis/internal/testserver"
	"shardis/shard"
)

// A strStep is one command of a string-family script and the reply it must get, written as
// strFormat prints replies. Arguments may use "@" for the case's own key prefix, so every
// case of a table has its own keys on one shared server. Steps whose first argument starts
// with "!" inspect the stored meta instead of sending a command:
//
//	!list KEY          plant a list under KEY (for WRONGTYPE paths)
//	!ttl KEY MS        KEY expires in MS ms from now (within 3 s below)
//	!at KEY MS         KEY's absolute expire time is exactly MS
//	!noexpire KEY      KEY has no expire time
//	!raw KEY BOOL      KEY's string is (not) marked raw
//	!missing KEY       KEY does not exist
//	!type KEY NAME     KEY's type is NAME
type strStep struct {
	args []string
	want string
}

type strCase struct {
	name  string
	steps []strStep
}

func strS(want string, args ...string) strStep { return strStep{args: args, want: want} }

// strFormat prints a go-redis reply like redis-cli: "(nil)", "(integer) 3", "(error) ERR x",
// a quoted string, or [a, b] for arrays (whose integers are bare).
func strFormat(v any, err error) string {
	if errors.Is(err, redis.Nil) {
		return "(nil)"
	}
	if err != nil {
		return "(error) " + err.Error()
	}
	switch x := v.(type) {
	case nil:
		return "(nil)"
	case int64:
		return "(integer) " + strconv.FormatInt(x, 10)
	case string:
		return strconv.Quote(x)
	case []any:
		parts := make([]string, len(x))
		for i, e := range x {
			if n, ok := e.(int64); ok {
				parts[i] = strconv.FormatInt(n, 10) // bare inside arrays, to keep tables short
			} else {
				parts[i] = strFormat(e, nil)
			}
		}
		return "[" + strings.Join(parts, ", ") + "]"
	}
	return fmt.Sprintf("%T %v", v, v)
}

// strMeta reads key's meta straight from the store.
func strMeta(t *testing.T, st *shard.Store, key string) (codec.Meta, bool) {
	t.Helper()
	var m codec.Meta
	var ok bool
	if err := st.Do(st.ShardOf([]byte(key)), func(tx *shard.Tx) {
		m, ok = tx.Meta(0, []byte(key))
		m.Value = bytes.Clone(m.Value)
	}); err != nil {
		t.Fatal(err)
	}
	return m, ok
}

// strPlantList stores an (empty-bodied) list meta under key: enough for type checks, and it
// needs no list command.
func strPlantList(t *testing.T, st *shard.Store, key string) {
	t.Helper()
	if err := st.Do(st.ShardOf([]byte(key)), func(tx *shard.Tx) {
		tx.SetMeta(0, []byte(key), &codec.Meta{Type: codec.TypeList, Version: tx.NewVersion([]byte(key)), Count: 1, Head: 1 << 62, Tail: 1<<62 + 1})
	}); err != nil {
		t.Fatal(err)
	}
}

func strRunCases(t *testing.T, cases []strCase) {
	s := testserver.Start(t)
	c := s.Client(t)
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			prefix := fmt.Sprintf("c%d:", i)
			for n, st := range tc.steps {
				args := make([]string, len(st.args))
				for j, a := range st.args {
					args[j] = strings.ReplaceAll(a, "@", prefix)
				}
				if strings.HasPrefix(args[0], "!") {
					strCheck(t, s.Store, n, args)
					continue
				}
				iargs := make([]any, len(args))
				for j, a := range args {
					iargs[j] = a
				}
				got := strFormat(c.Do(context.Background(), iargs...).Result())
				if got != st.want {
					t.Fatalf("step %d %q: got %s, want %s", n, st.args, got, st.want)
				}
			}
		})
	}
}

func strCheck(t *testing.T, st *shard.Store, n int, args []string) {
	t.Helper()
	m, ok := strMeta(t, st, args[1])
	fail := func(format string, a ...any) {
		t.Helper()
		t.Fatalf("step %d %q: "+format, append([]any{n, args}, a...)...)
	}
	if args[0] != "!missing" && args[0] != "!list" && !ok {
		fail("key missing")
	}
	switch args[0] {
	case "!list":
		strPlantList(t, st, args[1])
	case "!missing":
		if ok {
			fail("key exists: %+v", m)
		}
	case "!ttl":
		ms, _ := strconv.ParseInt(args[2], 10, 64)
		left := m.Expire - time.Now().UnixMilli()
		if m.Expire == 0 || left > ms || left < ms-3000 {
			fail("expire in %d ms (at %d), want about %d", left, m.Expire, ms)
		}
	case "!at":
		ms, _ := strconv.ParseInt(args[2], 10, 64)
		if m.Expire != ms {
			fail("expire at %d, want %d", m.Expire, ms)
		}
	case "!noexpire":
		if m.Expire != 0 {
			fail("expire at %d, want none", m.Expire)
		}
	case "!raw":
		if want := args[2] == "true"; m.Raw != want {
			fail("raw %v, want %v", m.Raw, want)
		}
	case "!type":
		if m.Type.String() != args[2] {
			fail("type %s, want %s", m.Type, args[2])
		}
	default:
		fail("unknown check")
	}
}

const (
	strWrongType = "(error) WRONGTYPE Operation against a key holding the wrong kind of value"
	strNotInt    = "(error) ERR value is not an integer or out of range"
	strSyntax    = "(error) ERR syntax error"
	strNotFloat  = "(error) ERR value is not a valid float"
)

func TestGet_Cases(t *testing.T) {
	strRunCases(t, []strCase{
		{"MissingKey", []strStep{strS("(nil)", "GET", "@k")}},
		{"ExistingKey", []strStep{strS(`"OK"`, "SET", "@k", "v"), strS(`"v"`, "GET", "@k")}},
		{"BinaryValue", []strStep{strS(`"OK"`, "SET", "@k", "a\x00b\r\n"), strS(`"a\x00b\r\n"`, "GET", "@k")}},
		{"WrongType", []strStep{strS("", "!list", "@k"), strS(strWrongType, "GET", "@k")}},
	})
}

func TestSet_Options(t *testing.T) {
	future := strconv.FormatInt(time.Now().Add(time.Hour).UnixMilli(), 10)
	futureS := strconv.FormatInt(time.Now().Add(time.Hour).Unix(), 10)
	strRunCases(t, []strCase{
		{"Plain", []strStep{strS(`"OK"`, "SET", "@k", "v"), strS(`"v"`, "GET", "@k"), strS("", "!noexpire", "@k"), strS("", "!raw", "@k", "false")}},
		{"NX_MissingKey", []strStep{strS(`"OK"`, "SET", "@k", "v", "NX"), strS(`"v"`, "GET", "@k")}},
		{"NX_ExistingKey", []strStep{strS(`"OK"`, "SET", "@k", "a"), strS("(nil)", "SET", "@k", "b", "nx"), strS(`"a"`, "GET", "@k")}},
		{"XX_MissingKey", []strStep{strS("(nil)", "SET", "@k", "v", "XX"), strS("", "!missing", "@k")}},
		{"XX_ExistingKey", []strStep{strS(`"OK"`, "SET", "@k", "a"), strS(`"OK"`, "SET", "@k", "b", "XX"), strS(`"b"`, "GET", "@k")}},
		{"GET_MissingKey", []strStep{strS("(nil)", "SET", "@k", "v", "GET"), strS(`"v"`, "GET", "@k")}},
		{"GET_ExistingKey", []strStep{strS(`"OK"`, "SET", "@k", "a"), strS(`"a"`, "SET", "@k", "b", "GET"), strS(`"b"`, "GET", "@k")}},
		{"GET_WrongTypeWritesNothing", []strStep{strS("", "!list", "@k"), strS(strWrongType, "SET", "@k", "v", "GET"), strS("", "!type", "@k", "list")}},
		{"NX_GET_ExistingKey", []strStep{strS(`"OK"`, "SET", "@k", "a"), strS(`"a"`, "SET", "@k", "b", "NX", "GET"), strS(`"a"`, "GET", "@k")}},
		{"XX_GET_MissingKey", []strStep{strS("(nil)", "SET", "@k", "b", "XX", "GET"), strS("", "!missing", "@k")}},
		{"EX", []strStep{strS(`"OK"`, "SET", "@k", "v", "EX", "100"), strS("", "!ttl", "@k", "100000")}},
		{"PX", []strStep{strS(`"OK"`, "SET", "@k", "v", "PX", "50000"), strS("", "!ttl", "@k", "50000")}},
		{"EXAT", []strStep{strS(`"OK"`, "SET", "@k", "v", "EXAT", futureS), strS("", "!at", "@k", futureS+"000")}},
		{"PXAT", []strStep{strS(`"OK"`, "SET", "@k", "v", "PXAT", future), strS("", "!at", "@k", future)}},
		{"PXAT_PastKeyIsGone", []strStep{strS(`"OK"`, "SET", "@k", "v", "PXAT", "1"), strS("(nil)", "GET", "@k")}},
		{"EXAT_PastKeyIsGone", []strStep{strS(`"OK"`, "SET", "@k", "v", "EXAT", "1000"), strS("(integer) 0", "STRLEN", "@k")}},
		{"RepeatedOptionLastWins", []strStep{strS(`"OK"`, "SET", "@k", "v", "EX", "10", "EX", "200", "NX", "NX"), strS("", "!ttl", "@k", "200000")}},
		{"KEEPTTL_KeepsExpire", []strStep{strS(`"OK"`, "SET", "@k", "a", "PXAT", future), strS(`"OK"`, "SET", "@k", "b", "KEEPTTL"), strS("", "!at", "@k", future), strS(`"b"`, "GET", "@k")}},
		{"KEEPTTL_MissingKey", []strStep{strS(`"OK"`, "SET", "@k", "b", "keepttl"), strS("", "!noexpire", "@k")}},
		{"PlainSetClearsExpire", []strStep{strS(`"OK"`, "SET", "@k", "a", "EX", "100"), strS(`"OK"`, "SET", "@k", "b"), strS("", "!noexpire", "@k")}},
		{"OverwritesOtherType", []strStep{strS("", "!list", "@k"), strS(`"OK"`, "SET", "@k", "v"), strS(`"v"`, "GET", "@k")}},
		{"OptionWithNULIsKeyword", []strStep{strS(`"OK"`, "SET", "@k", "a"), strS("(nil)", "SET", "@k", "b", "nx\x00junk"), strS(`"a"`, "GET", "@k")}},
		{"Syntax_NX_XX", []strStep{strS(strSyntax, "SET", "@k", "v", "NX", "XX"), strS("", "!missing", "@k")}},
		{"Syntax_EXWithoutValue", []strStep{strS(strSyntax, "SET", "@k", "v", "EX")}},
		{"Syntax_KEEPTTL_EX", []strStep{strS(strSyntax, "SET", "@k", "v", "KEEPTTL", "EX", "10")}},
		{"Syntax_EX_KEEPTTL", []strStep{strS(strSyntax, "SET", "@k", "v", "EX", "10", "KEEPTTL")}},
		{"Syntax_EX_PX", []strStep{strS(strSyntax, "SET", "@k", "v", "EX", "10", "PX", "10")}},
		{"Syntax_EXAT_PXAT", []strStep{strS(strSyntax, "SET", "@k", "v", "EXAT", "10", "PXAT", "10")}},
		{"Syntax_PERSIST", []strStep{strS(strSyntax, "SET", "@k", "v", "PERSIST")}},
		{"Syntax_Unknown", []strStep{strS(strSyntax, "SET", "@k", "v", "FOO")}},
		{"ExpireZero", []strStep{strS("(error) ERR invalid expire time in 'set' command", "SET", "@k", "v", "EX", "0"), strS("", "!missing", "@k")}},
		{"ExpireNegative", []strStep{strS("(error) ERR invalid expire time in 'set' command", "SET", "@k", "v", "PX", "-5")}},
		{"EXATZero", []strStep{strS("(error) ERR invalid expire time in 'set' command", "SET", "@k", "v", "EXAT", "0")}},
		{"EXMultiplyOverflow", []strStep{strS("(error) ERR invalid expire time in 'set' command", "SET", "@k", "v", "EX", "9223372036854776")}},
		{"PXAddOverflow", []strStep{strS("(error) ERR invalid expire time in 'set' command", "SET", "@k", "v", "PX", "9223372036854775807")}},
		{"PXATMax", []strStep{strS(`"OK"`, "SET", "@k", "v", "PXAT", "9223372036854775807"), strS("", "!at", "@k", "9223372036854775807")}},
		{"ExpireNotInteger", []strStep{strS(strNotInt, "SET", "@k", "v", "EX", "1.5"), strS(strNotInt, "SET", "@k", "v", "EX", "abc")}},
		{"ExpireCheckedBeforeType", []strStep{strS("", "!list", "@k"), strS("(error) ERR invalid expire time in 'set' command", "SET", "@k", "v", "GET", "EX", "0")}},
	})
}

func TestSetVariants_Cases(t *testing.T) {
	strRunCases(t, []strCase{
		{"SETNX_MissingKey", []strStep{strS("(integer) 1", "SETNX", "@k", "v"), strS(`"v"`, "GET", "@k")}},
		{"SETNX_ExistingKey", []strStep{strS("(integer) 1", "SETNX", "@k", "a"), strS("(integer) 0", "SETNX", "@k", "b"), strS(`"a"`, "GET", "@k")}},
		{"SETNX_OtherType", []strStep{strS("", "!list", "@k"), strS("(integer) 0", "SETNX", "@k", "b")}},
		{"SETEX_Sets", []strStep{strS(`"OK"`, "SETEX", "@k", "100", "v"), strS("", "!ttl", "@k", "100000"), strS(`"v"`, "GET", "@k")}},
		{"SETEX_Zero", []strStep{strS("(error) ERR invalid expire time in 'setex' command", "SETEX", "@k", "0", "v"), strS("", "!missing", "@k")}},
		{"SETEX_NotInteger", []strStep{strS(strNotInt, "SETEX", "@k", "abc", "v")}},
		{"SETEX_Overflow", []strStep{strS("(error) ERR invalid expire time in 'setex' command", "SETEX", "@k", "9223372036854775807", "v")}},
		{"PSETEX_Sets", []strStep{strS(`"OK"`, "PSETEX", "@k", "100000", "v"), strS("", "!ttl", "@k", "100000")}},
		{"PSETEX_Negative", []strStep{strS("(error) ERR invalid expire time in 'psetex' command", "PSETEX", "@k", "-1", "v")}},
		{"GETSET_MissingKey", []strStep{strS("(nil)", "GETSET", "@k", "v"), strS(`"v"`, "GET", "@k")}},
		{"GETSET_ClearsExpire", []strStep{strS(`"OK"`, "SET", "@k", "a", "EX", "100"), strS(`"a"`, "GETSET", "@k", "b"), strS("", "!noexpire", "@k"), strS(`"b"`, "GET", "@k")}},
		{"GETSET_WrongType", []strStep{strS("", "!list", "@k"), strS(strWrongType, "GETSET", "@k", "v"), strS("", "!type", "@k", "list")}},
		{"GETDEL_MissingKey", []strStep{strS("(nil)", "GETDEL", "@k")}},
		{"GETDEL_Deletes", []strStep{strS(`"OK"`, "SET", "@k", "v"), strS(`"v"`, "GETDEL", "@k"), strS("", "!missing", "@k")}},
		{"GETDEL_WrongType", []strStep{strS("", "!list", "@k"), strS(strWrongType, "GETDEL", "@k"), strS("", "!type", "@k", "list")}},
	})
}

func TestGetex_Cases(t *testing.T) {
	future := strconv.FormatInt(time.Now().Add(time.Hour).UnixMilli(), 10)
	set := strS(`"OK"`, "SET", "@k", "v", "EX", "50")
	strRunCases(t, []strCase{
		{"NoOptionKeepsExpire", []strStep{set, strS(`"v"`, "GETEX", "@k"), strS("", "!ttl", "@k", "50000")}},
		{"MissingKey", []strStep{strS("(nil)", "GETEX", "@k", "EX", "10")}},
		{"MissingKeyBadExpireIsNil", []strStep{strS("(nil)", "GETEX", "@k", "EX", "0")}},
		{"EX", []strStep{set, strS(`"v"`, "GETEX", "@k", "EX", "200"), strS("", "!ttl", "@k", "200000")}},
		{"PX", []strStep{set, strS(`"v"`, "GETEX", "@k", "px", "200000"), strS("", "!ttl", "@k", "200000")}},
		{"PXAT", []strStep{set, strS(`"v"`, "GETEX", "@k", "PXAT", future), strS("", "!at", "@k", future)}},
		{"EXAT_PastDeletes", []strStep{set, strS(`"v"`, "GETEX", "@k", "EXAT", "1"), strS("", "!missing", "@k")}},
		{"PXAT_PastDeletes", []strStep{set, strS(`"v"`, "GETEX", "@k", "PXAT", "1000"), strS("(nil)", "GET", "@k")}},
		{"PERSIST", []strStep{set, strS(`"v"`, "GETEX", "@k", "PERSIST"), strS("", "!noexpire", "@k")}},
		{"PERSISTTwice", []strStep{set, strS(`"v"`, "GETEX", "@k", "PERSIST", "persist"), strS("", "!noexpire", "@k")}},
		{"RawFlagKept", []strStep{strS("(integer) 1", "APPEND", "@k", "a"), strS("(integer) 2", "APPEND", "@k", "b"), strS(`"ab"`, "GETEX", "@k", "EX", "10"), strS("", "!raw", "@k", "true")}},
		{"Zero", []strStep{set, strS("(error) ERR invalid expire time in 'getex' command", "GETEX", "@k", "EX", "0"), strS("", "!ttl", "@k", "50000")}},
		{"NotInteger", []strStep{set, strS(strNotInt, "GETEX", "@k", "EX", "x")}},
		{"Syntax_EX_PERSIST", []strStep{set, strS(strSyntax, "GETEX", "@k", "EX", "10", "PERSIST")}},
		{"Syntax_KEEPTTL", []strStep{set, strS(strSyntax, "GETEX", "@k", "KEEPTTL")}},
		{"Syntax_NX", []strStep{set, strS(strSyntax, "GETEX", "@k", "NX")}},
		{"Syntax_EXWithoutValue", []strStep{strS(strSyntax, "GETEX", "@k", "EX")}},
		{"WrongType", []strStep{strS("", "!list", "@k"), strS(strWrongType, "GETEX", "@k", "EX", "0")}},
	})
}

func TestMultiKey_Cases(t *testing.T) {
	strRunCases(t, []strCase{
		{"MGET_Mixed", []strStep{strS(`"OK"`, "SET", "@a", "1"), strS("", "!list", "@l"),
			strS(`["1", (nil), (nil), "1"]`, "MGET", "@a", "@l", "@missing", "@a")}},
		{"MSET_AcrossShards", []strStep{
			strS(`"OK"`, "MSET", "@k1", "1", "@k2", "2", "@k3", "3", "@k4", "4", "@k5", "5", "@k6", "6"),
			strS(`["1", "2", "3", "4", "5", "6"]`, "MGET", "@k1", "@k2", "@k3", "@k4", "@k5", "@k6")}},
		{"MSET_DuplicateKeyLastWins", []strStep{strS(`"OK"`, "MSET", "@k", "1", "@k", "2"), strS(`"2"`, "GET", "@k")}},
		{"MSET_ClearsExpireAndOverwritesType", []strStep{strS(`"OK"`, "SET", "@k", "a", "EX", "100"), strS("", "!list", "@l"),
			strS(`"OK"`, "MSET", "@k", "b", "@l", "c"), strS("", "!noexpire", "@k"), strS(`"c"`, "GET", "@l")}},
		{"MSET_OddArguments", []strStep{strS("(error) ERR wrong number of arguments for 'mset' command", "MSET", "@a", "1", "@b"), strS("", "!missing", "@a")}},
		{"MSETNX_AllNew", []strStep{strS("(integer) 1", "MSETNX", "@a", "1", "@b", "2", "@c", "3"), strS(`["1", "2", "3"]`, "MGET", "@a", "@b", "@c")}},
		{"MSETNX_OneExists", []strStep{strS("", "!list", "@b"), strS("(integer) 0", "MSETNX", "@a", "1", "@b", "2"), strS("", "!missing", "@a")}},
		{"MSETNX_OddArguments", []strStep{strS("(error) ERR wrong number of arguments for 'msetnx' command", "MSETNX", "@a", "1", "@b")}},
	})
}

func TestAppendStrlen_Cases(t *testing.T) {
	strRunCases(t, []strCase{
		{"APPEND_NewKeyNotRaw", []strStep{strS("(integer) 5", "APPEND", "@k", "hello"), strS(`"hello"`, "GET", "@k"), strS("", "!raw", "@k", "false")}},
		{"APPEND_ExistingRawKeepsExpire", []strStep{strS(`"OK"`, "SET", "@k", "ab", "EX", "100"), strS("(integer) 4", "APPEND", "@k", "cd"),
			strS(`"abcd"`, "GET", "@k"), strS("", "!raw", "@k", "true"), strS("", "!ttl", "@k", "100000")}},
		{"APPEND_EmptyMakesRaw", []strStep{strS(`"OK"`, "SET", "@k", "ab"), strS("(integer) 2", "APPEND", "@k", ""), strS("", "!raw", "@k", "true")}},
		{"APPEND_WrongType", []strStep{strS("", "!list", "@k"), strS(strWrongType, "APPEND", "@k", "x")}},
		{"STRLEN", []strStep{strS(`"OK"`, "SET", "@k", "hello"), strS("(integer) 5", "STRLEN", "@k"), strS("(integer) 0", "STRLEN", "@none")}},
		{"STRLEN_WrongType", []strStep{strS("", "!list", "@k"), strS(strWrongType, "STRLEN", "@k")}},
	})
}

func TestIncr_Cases(t *testing.T) {
	strRunCases(t, []strCase{
		{"INCR_MissingKey", []strStep{strS("(integer) 1", "INCR", "@k"), strS(`"1"`, "GET", "@k")}},
		{"DECR_MissingKey", []strStep{strS("(integer) -1", "DECR", "@k")}},
		{"INCRBY_DECRBY", []strStep{strS(`"OK"`, "SET", "@k", "10"), strS("(integer) 15", "INCRBY", "@k", "5"),
			strS("(integer) 5", "DECRBY", "@k", "10"), strS("(integer) -5", "INCRBY", "@k", "-10"), strS(`"-5"`, "GET", "@k")}},
		{"KeepsExpire", []strStep{strS(`"OK"`, "SET", "@k", "1", "EX", "100"), strS("(integer) 2", "INCR", "@k"), strS("", "!ttl", "@k", "100000")}},
		{"NotIntegerValue", []strStep{strS(`"OK"`, "SET", "@a", "abc"), strS(strNotInt, "INCR", "@a"),
			strS(`"OK"`, "SET", "@b", " 1"), strS(strNotInt, "INCR", "@b"),
			strS(`"OK"`, "SET", "@c", "01"), strS(strNotInt, "INCRBY", "@c", "1"),
			strS(`"OK"`, "SET", "@d", "1.5"), strS(strNotInt, "DECR", "@d"),
			strS(`"OK"`, "SET", "@e", "99999999999999999999"), strS(strNotInt, "INCR", "@e"), strS(`"99999999999999999999"`, "GET", "@e")}},
		{"NotIntegerArgumentBeforeType", []strStep{strS("", "!list", "@k"), strS(strNotInt, "INCRBY", "@k", "x"), strS(strNotInt, "DECRBY", "@k", "1.0")}},
		{"WrongType", []strStep{strS("", "!list", "@k"), strS(strWrongType, "INCR", "@k"), strS(strWrongType, "DECRBY", "@k", "1")}},
		{"Overflow", []strStep{strS(`"OK"`, "SET", "@k", "9223372036854775807"),
			strS("(error) ERR increment or decrement would overflow", "INCR", "@k"),
			strS(`"OK"`, "SET", "@k", "-9223372036854775807"),
			strS("(integer) -9223372036854775808", "DECR", "@k"),
			strS("(error) ERR increment or decrement would overflow", "INCRBY", "@k", "-1"),
			strS("(error) ERR increment or decrement would overflow", "DECR", "@k"),
			strS("(error) ERR increment or decrement would overflow", "DECRBY", "@k", "1"),
			strS(`"-9223372036854775808"`, "GET", "@k")}},
		{"DECRBY_MinInt", []strStep{strS("(error) ERR decrement would overflow", "DECRBY", "@k", "-9223372036854775808"), strS("", "!missing", "@k")}},
	})
}

func TestIncrbyfloat_Cases(t *testing.T) {
	// Expected texts come from Redis 7.0.15 (x87 long double, "%.17Lf" with zeros trimmed).
	strRunCases(t, []strCase{
		{"Simple", []strStep{strS(`"10.5"`, "INCRBYFLOAT", "@k", "10.5"), strS(`"-4989.5"`, "INCRBYFLOAT", "@k", "-5.0e3"), strS(`"-4989.5"`, "GET", "@k")}},
		{"LongDoublePrecision", []strStep{strS(`"0.1"`, "INCRBYFLOAT", "@k", "0.1"), strS(`"0.3"`, "INCRBYFLOAT", "@k", "0.2"),
			strS(`"100000000000000000.296875"`, "INCRBYFLOAT", "@k", "1e17"), strS(`"100000000000000000.59375"`, "INCRBYFLOAT", "@k", "0.3")}},
		{"SeventeenDecimals", []strStep{strS(`"3.14159265358979324"`, "INCRBYFLOAT", "@k", "3.14159265358979323846264338327950288"),
			strS(`"5.85987448204883848"`, "INCRBYFLOAT", "@k", "2.718281828459045235360287")}},
		{"HalfEvenRounding", []strStep{strS(`"1.1"`, "INCRBYFLOAT", "@k", "1.1"), strS(`"3.3"`, "INCRBYFLOAT", "@k", "2.2"),
			strS(`"3.30000000000000001"`, "INCRBYFLOAT", "@k", "1e-17"), strS(`"0"`, "INCRBYFLOAT", "@z", "0.000000000000000005")}},
		{"BigIntegerPart", []strStep{strS(`"123456789012345678899921813504"`, "INCRBYFLOAT", "@k", "123456789012345678901234567890")}},
		{"NegativeZeroIsZero", []strStep{strS(`"0"`, "INCRBYFLOAT", "@k", "-1e-30"), strS(`"0"`, "INCRBYFLOAT", "@j", "-0.0")}},
		{"HexAndShortForms", []strStep{strS(`"8"`, "INCRBYFLOAT", "@k", "0x1p3"), strS(`"8.5"`, "INCRBYFLOAT", "@k", "+.5"),
			strS(`"13.5"`, "INCRBYFLOAT", "@k", "5."), strS(`"12.5"`, "INCRBYFLOAT", "@k", "-0x.8p1")}},
		{"ExistingIntegerValue", []strStep{strS(`"OK"`, "SET", "@k", "5.0e3"), strS(`"5000"`, "INCRBYFLOAT", "@k", "0")}},
		{"KeepsExpire", []strStep{strS(`"OK"`, "SET", "@k", "1", "EX", "100"), strS(`"2.5"`, "INCRBYFLOAT", "@k", "1.5"), strS("", "!ttl", "@k", "100000")}},
		{"Subnormal", []strStep{strS(`"0"`, "INCRBYFLOAT", "@k", "1e-4940")}},
		{"NotFloat", []strStep{strS(`"OK"`, "SET", "@k", "1"),
			strS(strNotFloat, "INCRBYFLOAT", "@k", "abc"), strS(strNotFloat, "INCRBYFLOAT", "@k", "nan"),
			strS(strNotFloat, "INCRBYFLOAT", "@k", " 1"), strS(strNotFloat, "INCRBYFLOAT", "@k", "1 "),
			strS(strNotFloat, "INCRBYFLOAT", "@k", "1e"), strS(strNotFloat, "INCRBYFLOAT", "@k", "1_0"),
			strS(strNotFloat, "INCRBYFLOAT", "@k", "0x"), strS(strNotFloat, "INCRBYFLOAT", "@k", ""),
			strS(strNotFloat, "INCRBYFLOAT", "@k", "1e-5000"), strS(strNotFloat, "INCRBYFLOAT", "@k", "1e5000"),
			strS(strNotFloat, "INCRBYFLOAT", "@k", "1\x00"), strS(`"1"`, "GET", "@k")}},
		{"NotFloatValue", []strStep{strS(`"OK"`, "SET", "@k", "1.5x"), strS(strNotFloat, "INCRBYFLOAT", "@k", "1")}},
		{"Infinity", []strStep{strS("(error) ERR increment would produce NaN or Infinity", "INCRBYFLOAT", "@k", "inf"),
			strS("(error) ERR increment would produce NaN or Infinity", "INCRBYFLOAT", "@k", "-Infinity"), strS("", "!missing", "@k")}},
		{"OverflowToInfinity", []strStep{strS(`"OK"`, "SET", "@k", "1.18973149535723176502e+4932"),
			strS("(error) ERR increment would produce NaN or Infinity", "INCRBYFLOAT", "@k", "1.18973149535723176502e+4932")}},
		{"WrongType", []strStep{strS("", "!list", "@k"), strS(strWrongType, "INCRBYFLOAT", "@k", "1")}},
	})
}

func TestRange_Cases(t *testing.T) {
	hello := strS(`"OK"`, "SET", "@k", "Hello World")
	strRunCases(t, []strCase{
		{"GETRANGE", []strStep{hello, strS(`"Hello"`, "GETRANGE", "@k", "0", "4"), strS(`"World"`, "GETRANGE", "@k", "-5", "-1"),
			strS(`""`, "GETRANGE", "@k", "-1", "-5"), strS(`""`, "GETRANGE", "@k", "5", "2"),
			strS(`"Hello World"`, "GETRANGE", "@k", "0", "100"), strS(`"Hell"`, "GETRANGE", "@k", "-100", "3"),
			strS(`"H"`, "GETRANGE", "@k", "-100", "-90"), strS(`"d"`, "GETRANGE", "@k", "-1", "9223372036854775807")}},
		{"SUBSTR", []strStep{hello, strS(`"World"`, "SUBSTR", "@k", "6", "-1")}},
		{"MissingKeyEmpty", []strStep{strS(`""`, "GETRANGE", "@k", "0", "-1")}},
		{"EmptyString", []strStep{strS(`"OK"`, "SET", "@k", ""), strS(`""`, "GETRANGE", "@k", "0", "-1")}},
		{"NotInteger", []strStep{strS(strNotInt, "GETRANGE", "@k", "a", "1"), strS(strNotInt, "SUBSTR", "@k", "0", "1.5")}},
		{"GETRANGE_WrongType", []strStep{strS("", "!list", "@k"), strS(strWrongType, "GETRANGE", "@k", "0", "1")}},
		{"SETRANGE_Overwrite", []strStep{hello, strS("(integer) 11", "SETRANGE", "@k", "6", "Redis"), strS(`"Hello Redis"`, "GET", "@k"), strS("", "!raw", "@k", "true")}},
		{"SETRANGE_PadsWithZeros", []strStep{strS("(integer) 5", "SETRANGE", "@k", "3", "ab"), strS(`"\x00\x00\x00ab"`, "GET", "@k"), strS("", "!raw", "@k", "true")}},
		{"SETRANGE_KeepsExpire", []strStep{strS(`"OK"`, "SET", "@k", "abc", "EX", "100"), strS("(integer) 3", "SETRANGE", "@k", "0", "x"), strS("", "!ttl", "@k", "100000")}},
		{"SETRANGE_EmptyValue", []strStep{strS("(integer) 0", "SETRANGE", "@k", "5", ""), strS("", "!missing", "@k"),
			hello, strS("(integer) 11", "SETRANGE", "@k", "100", ""), strS("", "!raw", "@k", "false")}},
		{"SETRANGE_Errors", []strStep{strS("(error) ERR offset is out of range", "SETRANGE", "@k", "-1", "x"),
			strS(strNotInt, "SETRANGE", "@k", "a", "x"),
			strS("(error) ERR string exceeds maximum allowed size (proto-max-bulk-len)", "SETRANGE", "@k", "536870911", "xy"),
			strS("(error) ERR string exceeds maximum allowed size (proto-max-bulk-len)", "SETRANGE", "@k", "9223372036854775807", "x"),
			strS("", "!missing", "@k")}},
		{"SETRANGE_WrongType", []strStep{strS("", "!list", "@k"), strS(strWrongType, "SETRANGE", "@k", "0", ""), strS(strWrongType, "SETRANGE", "@k", "0", "x")}},
	})
}

func TestLcs_Cases(t *testing.T) {
	set := []strStep{strS(`"OK"`, "SET", "@a", "ohmytext"), strS(`"OK"`, "SET", "@b", "mynewtext")}
	with := func(steps ...strStep) []strStep { return append(append([]strStep{}, set...), steps...) }
	strRunCases(t, []strCase{
		{"String", with(strS(`"mytext"`, "LCS", "@a", "@b"))},
		{"LEN", with(strS("(integer) 6", "LCS", "@a", "@b", "LEN"))},
		{"IDX", with(strS(`["matches", [[[4, 7], [5, 8]], [[2, 3], [0, 1]]], "len", 6]`, "LCS", "@a", "@b", "IDX"))},
		{"IDX_MINMATCHLEN_WITHMATCHLEN", with(strS(`["matches", [[[4, 7], [5, 8], 4]], "len", 6]`, "LCS", "@a", "@b", "idx", "minmatchlen", "4", "withmatchlen"))},
		{"MissingKeys", []strStep{strS(`""`, "LCS", "@x", "@y"), strS(`["matches", [], "len", 0]`, "LCS", "@x", "@y", "IDX")}},
		{"LEN_IDX", with(strS("(error) ERR If you want both the length and indexes, please just use IDX.", "LCS", "@a", "@b", "LEN", "IDX"))},
		{"Syntax", with(strS(strSyntax, "LCS", "@a", "@b", "FOO"), strS(strSyntax, "LCS", "@a", "@b", "MINMATCHLEN"))},
		{"MINMATCHLEN_NotInteger", with(strS(strNotInt, "LCS", "@a", "@b", "MINMATCHLEN", "x"))},
		{"WrongTypeBeforeOptions", []strStep{strS("", "!list", "@l"), strS("(error) ERR The specified keys must contain string values", "LCS", "@x", "@l", "FOO")}},
	})
}

// TestStrings_RawReplies pins the RESP types that go-redis cannot tell apart.
func TestStrings_RawReplies(t *testing.T) {
	s := testserver.Start(t)
	got := testserver.Raw(t, s.Addr, []byte("SET k v\r\nGET nokey\r\nGETRANGE nokey 0 1\r\nSET k w GET\r\nSET k v NX\r\nINCRBYFLOAT f 1.5\r\n"), 300*time.Millisecond)
	want := "+OK\r\n$-1\r\n$0\r\n\r\n$1\r\nv\r\n$-1\r\n$3\r\n1.5\r\n"
	if string(got) != want {
		t.Fatalf("got %q, want %q", got, want)
	}
}

// TestStrings_RestartKeepsValues writes every kind of string state, stops the server cleanly
// and starts a new one on the same directory.
func TestStrings_RestartKeepsValues(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	future := time.Now().Add(time.Hour).UnixMilli()
	s := testserver.StartIn(t, dir)
	c := s.Client(t)
	for _, cmd := range [][]any{
		{"SET", "plain", "v"}, {"SET", "ttl", "v", "PXAT", future}, {"APPEND", "raw", "a"}, {"APPEND", "raw", "b"},
		{"INCRBYFLOAT", "float", "0.1"}, {"INCRBYFLOAT", "float", "0.2"}, {"MSET", "m1", "1", "m2", "2", "m3", "3"},
		{"SETRANGE", "range", "2", "x"}, {"SET", "gone", "v"}, {"GETDEL", "gone"}, {"INCR", "n"},
	} {
		if err := c.Do(ctx, cmd...).Err(); err != nil {
			t.Fatalf("%v: %v", cmd, err)
		}
	}
	s.Stop()
	s2 := testserver.StartIn(t, dir)
	c2 := s2.Client(t)
	got := strFormat(c2.Do(ctx, "MGET", "plain", "ttl", "raw", "float", "m1", "m2", "m3", "range", "gone", "n").Result())
	if want := `["v", "v", "ab", "0.3", "1", "2", "3", "\x00\x00x", (nil), "1"]`; got != want {
		t.Fatalf("after restart MGET = %s, want %s", got, want)
	}
	if m, _ := strMeta(t, s2.Store, "ttl"); m.Expire != future {
		t.Fatalf("expire after restart %d, want %d", m.Expire, future)
	}
	if m, _ := strMeta(t, s2.Store, "raw"); !m.Raw {
		t.Fatal("raw flag lost on restart")
	}
}

// TestStrings_BinlogReplayReproducesState runs every write of the family, then replays each
// shard's binlog into a fresh store and expects the same keys, values, expire times and raw
// flags: the logged forms must be deterministic and complete.
func TestStrings_BinlogReplayReproducesState(t *testing.T) {
	s := testserver.Start(t)
	c := s.Client(t)
	ctx := context.Background()
	future := time.Now().Add(time.Hour).UnixMilli()
	for _, cmd := range [][]any{
		{"SET", "a", "1"}, {"SET", "b", "2", "EX", 100}, {"SET", "b", "3", "KEEPTTL"}, {"SET", "c", "x", "PX", 100000, "GET"},
		{"SET", "d", "v", "NX"}, {"SET", "d", "w", "XX", "GET"}, {"SETNX", "e", "1"}, {"SETEX", "f", 100, "v"},
		{"PSETEX", "g", 100000, "v"}, {"GETSET", "b", "4"}, {"SET", "h", "v"}, {"GETDEL", "h"},
		{"SET", "i", "v", "PXAT", future}, {"GETEX", "i", "PERSIST"}, {"SET", "j", "v"}, {"GETEX", "j", "EX", 500},
		{"SET", "k", "v"}, {"GETEX", "k", "PXAT", 1}, {"MSET", "m1", "1", "m2", "2", "m3", "3", "m4", "4"},
		{"MSETNX", "n1", "1", "n2", "2"}, {"APPEND", "o", "x"}, {"APPEND", "o", "y"}, {"SET", "p", "5", "EX", 100},
		{"INCR", "p"}, {"DECR", "p"}, {"INCRBY", "p", 10}, {"DECRBY", "p", 3}, {"INCRBYFLOAT", "q", "0.1"},
		{"INCRBYFLOAT", "q", "0.2"}, {"SETRANGE", "r", 3, "ab"}, {"SET", "s", "abcdef"}, {"SETRANGE", "s", 1, "ZZ"},
	} {
		if err := c.Do(ctx, cmd...).Err(); err != nil && !errors.Is(err, redis.Nil) {
			t.Fatalf("%v: %v", cmd, err)
		}
	}
	dst, dstSrv := testserver.ReplayTarget(t, 4)
	for id := range s.Store.NumShards() {
		if _, err := dstSrv.ReplayShard(s.Store, id); err != nil {
			t.Fatalf("shard %d: %v", id, err)
		}
	}
	dump := func(st *shard.Store) map[string]string {
		out := map[string]string{}
		for id := range st.NumShards() {
			if err := st.Do(id, func(tx *shard.Tx) {
				tx.ScanKeys(id, 0, nil, func(key []byte, m *codec.Meta) bool {
					out[string(key)] = fmt.Sprintf("%s %q exp=%d raw=%v", m.Type, m.Value, m.Expire, m.Raw)
					return true
				})
			}); err != nil {
				t.Fatal(err)
			}
		}
		return out
	}
	want, got := dump(s.Store), dump(dst)
	if len(want) != 20 {
		t.Fatalf("source holds %d keys, want 20: %v", len(want), want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: replayed %s, want %s", k, got[k], v)
		}
	}
	if len(got) != len(want) {
		t.Errorf("replayed %d keys, want %d", len(got), len(want))
	}
}
