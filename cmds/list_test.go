package cmds_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"shardis/codec"
	"shardis/datatype"
	"shardis/executor"
	"shardis/internal/testserver"
	"shardis/server"
	"shardis/shard"
)

// A listStep is one command of a list-family script and the reply it must get, printed by
// listFormat. "@" in an argument is replaced by the case's own key prefix, so the cases of a
// table share one server without sharing keys.
type listStep struct {
	args []string
	want string
}

type listCase struct {
	name  string
	steps []listStep
}

func listS(want string, args ...string) listStep { return listStep{args: args, want: want} }

const listWrongType = "(error) WRONGTYPE Operation against a key holding the wrong kind of value"

// listFormat prints a go-redis reply like redis-cli on one line: "(nil)", "(integer) 3",
// "(error) ERR x", a quoted string, or [a, b] for arrays (integers bare inside them).
func listFormat(v any, err error) string {
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
				parts[i] = strconv.FormatInt(n, 10)
			} else {
				parts[i] = listFormat(e, nil)
			}
		}
		return "[" + strings.Join(parts, ", ") + "]"
	}
	return fmt.Sprintf("%T %v", v, v)
}

func listDo(c *redis.Client, args ...string) string {
	iargs := make([]any, len(args))
	for i, a := range args {
		iargs[i] = a
	}
	return listFormat(c.Do(context.Background(), iargs...).Result())
}

func listRunCases(t *testing.T, cases []listCase) {
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
				want := strings.ReplaceAll(st.want, "@", prefix)
				if got := listDo(c, args...); got != want {
					t.Fatalf("step %d %q: got %s, want %s", n, args, got, want)
				}
			}
		})
	}
}

// listNumbers returns "0".."n-1".
func listNumbers(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = strconv.Itoa(i)
	}
	return out
}

func TestLPush(t *testing.T) {
	listRunCases(t, []listCase{
		{"CreatesAndPrepends", []listStep{listS("(integer) 3", "LPUSH", "@k", "a", "b", "c"), listS(`["c", "b", "a"]`, "LRANGE", "@k", "0", "-1")}},
		{"Grows", []listStep{listS("(integer) 1", "LPUSH", "@k", "a"), listS("(integer) 2", "LPUSH", "@k", "b"), listS(`["b", "a"]`, "LRANGE", "@k", "0", "-1"), listS(`"list"`, "TYPE", "@k")}},
		{"WrongType", []listStep{listS(`"OK"`, "SET", "@k", "v"), listS(listWrongType, "LPUSH", "@k", "a"), listS(`"v"`, "GET", "@k")}},
		{"Arity", []listStep{listS("(error) ERR wrong number of arguments for 'lpush' command", "LPUSH", "@k")}},
		{"BinaryElements", []listStep{listS("(integer) 2", "LPUSH", "@k", "a\x00b", "\r\n"), listS(`["\r\n", "a\x00b"]`, "LRANGE", "@k", "0", "-1")}},
	})
}

func TestRPush(t *testing.T) {
	listRunCases(t, []listCase{
		{"CreatesAndAppends", []listStep{listS("(integer) 3", "RPUSH", "@k", "a", "b", "c"), listS(`["a", "b", "c"]`, "LRANGE", "@k", "0", "-1")}},
		{"BothEnds", []listStep{listS("(integer) 2", "RPUSH", "@k", "a", "b"), listS("(integer) 4", "LPUSH", "@k", "x", "y"), listS(`["y", "x", "a", "b"]`, "LRANGE", "@k", "0", "-1")}},
		{"WrongType", []listStep{listS(`"OK"`, "SET", "@k", "v"), listS(listWrongType, "RPUSH", "@k", "a")}},
	})
}

func TestLPushX_RPushX(t *testing.T) {
	listRunCases(t, []listCase{
		{"MissingKeyNoop", []listStep{listS("(integer) 0", "LPUSHX", "@k", "a"), listS("(integer) 0", "RPUSHX", "@k", "a", "b"), listS("(integer) 0", "EXISTS", "@k")}},
		{"ExistingKey", []listStep{listS("(integer) 1", "RPUSH", "@k", "m"), listS("(integer) 3", "LPUSHX", "@k", "b", "a"), listS("(integer) 4", "RPUSHX", "@k", "z"), listS(`["a", "b", "m", "z"]`, "LRANGE", "@k", "0", "-1")}},
		{"WrongType", []listStep{listS(`"OK"`, "SET", "@k", "v"), listS(listWrongType, "LPUSHX", "@k", "a"), listS(listWrongType, "RPUSHX", "@k", "a")}},
	})
}

func TestLPop_RPop(t *testing.T) {
	const positive = "(error) ERR value is out of range, must be positive"
	listRunCases(t, []listCase{
		{"Single", []listStep{listS("(integer) 3", "RPUSH", "@k", "a", "b", "c"), listS(`"a"`, "LPOP", "@k"), listS(`"c"`, "RPOP", "@k"), listS(`["b"]`, "LRANGE", "@k", "0", "-1")}},
		{"Count", []listStep{listS("(integer) 5", "RPUSH", "@k", "a", "b", "c", "d", "e"), listS(`["a", "b"]`, "LPOP", "@k", "2"), listS(`["e", "d"]`, "RPOP", "@k", "2"), listS("(integer) 1", "LLEN", "@k")}},
		{"CountBeyondLength", []listStep{listS("(integer) 3", "RPUSH", "@k", "a", "b", "c"), listS(`["c", "b", "a"]`, "RPOP", "@k", "10"), listS("(integer) 0", "EXISTS", "@k")}},
		{"LastElementDeletesKey", []listStep{listS("(integer) 1", "RPUSH", "@k", "a"), listS(`"a"`, "LPOP", "@k"), listS("(integer) 0", "EXISTS", "@k"), listS("(nil)", "LPOP", "@k")}},
		{"CountZero", []listStep{listS("(integer) 1", "RPUSH", "@k", "a"), listS("[]", "LPOP", "@k", "0"), listS("(integer) 1", "LLEN", "@k")}},
		{"MissingKey", []listStep{listS("(nil)", "LPOP", "@k"), listS("(nil)", "RPOP", "@k", "1"), listS("(nil)", "LPOP", "@k", "0")}},
		{"NegativeCount", []listStep{listS(positive, "LPOP", "@k", "-1"), listS(positive, "RPOP", "@k", "x")}},
		{"Arity", []listStep{listS("(error) ERR wrong number of arguments for 'lpop' command", "LPOP", "@k", "1", "2"), listS("(error) ERR wrong number of arguments for 'rpop' command", "RPOP", "@k", "1", "2")}},
		{"WrongType", []listStep{listS(`"OK"`, "SET", "@k", "v"), listS(listWrongType, "LPOP", "@k"), listS(listWrongType, "RPOP", "@k", "0"), listS(positive, "LPOP", "@k", "-1")}},
		{"PopsThroughIterator", []listStep{listS("(integer) 10", append([]string{"RPUSH", "@k"}, listNumbers(10)...)...),
			listS(`["0", "1", "2", "3", "4", "5"]`, "LPOP", "@k", "6"), listS(`["9", "8", "7"]`, "RPOP", "@k", "3"), listS(`["6"]`, "LRANGE", "@k", "0", "-1")}},
	})
}

// TestLPop_NullShapes checks the RESP2 and RESP3 nulls: a bulk null without COUNT, an array
// null with it.
func TestLPop_NullShapes(t *testing.T) {
	s := testserver.Start(t)
	got := string(testserver.Raw(t, s.Addr, []byte("LPOP nk\r\nLPOP nk 1\r\nRPOP nk 0\r\nHELLO 3\r\nLPOP nk\r\nLPOP nk 2\r\nPING\r\n"), 300*time.Millisecond))
	if !strings.HasPrefix(got, "$-1\r\n*-1\r\n*-1\r\n%") || !strings.HasSuffix(got, "_\r\n_\r\n+PONG\r\n") {
		t.Fatalf("replies %q", got)
	}
}

func TestLLen(t *testing.T) {
	listRunCases(t, []listCase{
		{"Counts", []listStep{listS("(integer) 0", "LLEN", "@k"), listS("(integer) 3", "RPUSH", "@k", "a", "b", "c"), listS("(integer) 3", "LLEN", "@k")}},
		{"WrongType", []listStep{listS(`"OK"`, "SET", "@k", "v"), listS(listWrongType, "LLEN", "@k")}},
	})
}

func TestLRange(t *testing.T) {
	push := listS("(integer) 6", "RPUSH", "@k", "a", "b", "c", "d", "e", "f")
	listRunCases(t, []listCase{
		{"Whole", []listStep{push, listS(`["a", "b", "c", "d", "e", "f"]`, "LRANGE", "@k", "0", "-1")}},
		{"Middle", []listStep{push, listS(`["b", "c", "d"]`, "LRANGE", "@k", "1", "3")}},
		{"Negative", []listStep{push, listS(`["e", "f"]`, "LRANGE", "@k", "-2", "-1")}},
		{"Clamped", []listStep{push, listS(`["a", "b", "c", "d", "e", "f"]`, "LRANGE", "@k", "-100", "100")}},
		{"Extremes", []listStep{push, listS(`["a", "b", "c", "d", "e", "f"]`, "LRANGE", "@k", "-9223372036854775808", "9223372036854775807")}},
		{"Empty", []listStep{push, listS("[]", "LRANGE", "@k", "4", "2"), listS("[]", "LRANGE", "@k", "6", "10"), listS("[]", "LRANGE", "@k", "0", "-7")}},
		{"MissingKey", []listStep{listS("[]", "LRANGE", "@k", "0", "-1")}},
		{"NotInteger", []listStep{listS("(error) ERR value is not an integer or out of range", "LRANGE", "@k", "a", "1"), listS("(error) ERR value is not an integer or out of range", "LRANGE", "@k", "0", "1.5")}},
		{"WrongType", []listStep{listS(`"OK"`, "SET", "@k", "v"), listS(listWrongType, "LRANGE", "@k", "0", "-1")}},
		{"AfterPushesAtBothEnds", []listStep{listS("(integer) 2", "LPUSH", "@k", "b", "a"), listS("(integer) 4", "RPUSH", "@k", "c", "d"), listS(`["b", "c"]`, "LRANGE", "@k", "1", "2")}},
	})
}

func TestLIndex(t *testing.T) {
	push := listS("(integer) 3", "RPUSH", "@k", "a", "b", "c")
	listRunCases(t, []listCase{
		{"Positive", []listStep{push, listS(`"a"`, "LINDEX", "@k", "0"), listS(`"c"`, "LINDEX", "@k", "2")}},
		{"Negative", []listStep{push, listS(`"c"`, "LINDEX", "@k", "-1"), listS(`"a"`, "LINDEX", "@k", "-3")}},
		{"OutOfRange", []listStep{push, listS("(nil)", "LINDEX", "@k", "3"), listS("(nil)", "LINDEX", "@k", "-4"), listS("(nil)", "LINDEX", "@k", "-9223372036854775808")}},
		{"MissingKeyBeforeIndexCheck", []listStep{listS("(nil)", "LINDEX", "@k", "abc")}},
		{"NotInteger", []listStep{push, listS("(error) ERR value is not an integer or out of range", "LINDEX", "@k", "abc")}},
		{"WrongType", []listStep{listS(`"OK"`, "SET", "@k", "v"), listS(listWrongType, "LINDEX", "@k", "abc")}},
	})
}

func TestLSet(t *testing.T) {
	push := listS("(integer) 3", "RPUSH", "@k", "a", "b", "c")
	listRunCases(t, []listCase{
		{"Sets", []listStep{push, listS(`"OK"`, "LSET", "@k", "1", "B"), listS(`"OK"`, "LSET", "@k", "-1", "C"), listS(`["a", "B", "C"]`, "LRANGE", "@k", "0", "-1")}},
		{"OutOfRange", []listStep{push, listS("(error) ERR index out of range", "LSET", "@k", "3", "x"), listS("(error) ERR index out of range", "LSET", "@k", "-4", "x")}},
		{"MissingKey", []listStep{listS("(error) ERR no such key", "LSET", "@k", "0", "x"), listS("(error) ERR no such key", "LSET", "@k", "abc", "x")}},
		{"NotInteger", []listStep{push, listS("(error) ERR value is not an integer or out of range", "LSET", "@k", "abc", "x")}},
		{"WrongType", []listStep{listS(`"OK"`, "SET", "@k", "v"), listS(listWrongType, "LSET", "@k", "0", "x")}},
	})
}

func TestLInsert(t *testing.T) {
	push := listS("(integer) 6", "RPUSH", "@k", "a", "b", "c", "d", "e", "f")
	listRunCases(t, []listCase{
		{"BeforeNearHead", []listStep{push, listS("(integer) 7", "LINSERT", "@k", "BEFORE", "b", "x"), listS(`["a", "x", "b", "c", "d", "e", "f"]`, "LRANGE", "@k", "0", "-1")}},
		{"AfterNearTail", []listStep{push, listS("(integer) 7", "LINSERT", "@k", "after", "e", "x"), listS(`["a", "b", "c", "d", "e", "x", "f"]`, "LRANGE", "@k", "0", "-1")}},
		{"BeforeFirst", []listStep{push, listS("(integer) 7", "LINSERT", "@k", "BEFORE", "a", "x"), listS(`["x", "a", "b", "c", "d", "e", "f"]`, "LRANGE", "@k", "0", "-1")}},
		{"AfterLast", []listStep{push, listS("(integer) 7", "LINSERT", "@k", "AFTER", "f", "x"), listS(`["a", "b", "c", "d", "e", "f", "x"]`, "LRANGE", "@k", "0", "-1"), listS(`"x"`, "RPOP", "@k")}},
		{"FirstPivotWins", []listStep{listS("(integer) 3", "RPUSH", "@k", "p", "q", "p"), listS("(integer) 4", "LINSERT", "@k", "AFTER", "p", "x"), listS(`["p", "x", "q", "p"]`, "LRANGE", "@k", "0", "-1")}},
		{"NoPivot", []listStep{push, listS("(integer) -1", "LINSERT", "@k", "BEFORE", "zz", "x"), listS("(integer) 6", "LLEN", "@k")}},
		{"MissingKey", []listStep{listS("(integer) 0", "LINSERT", "@k", "BEFORE", "a", "x"), listS("(integer) 0", "EXISTS", "@k")}},
		{"SyntaxBeforeKey", []listStep{listS("(error) ERR syntax error", "LINSERT", "@k", "MIDDLE", "a", "x")}},
		{"WrongType", []listStep{listS(`"OK"`, "SET", "@k", "v"), listS(listWrongType, "LINSERT", "@k", "BEFORE", "a", "x")}},
		{"ManyInsertsStayDense", []listStep{listS("(integer) 2", "RPUSH", "@k", "a", "z"),
			listS("(integer) 3", "LINSERT", "@k", "AFTER", "a", "b"), listS("(integer) 4", "LINSERT", "@k", "BEFORE", "z", "y"),
			listS("(integer) 5", "LINSERT", "@k", "AFTER", "b", "c"), listS("(integer) 6", "LINSERT", "@k", "BEFORE", "y", "x"),
			listS(`["a", "b", "c", "x", "y", "z"]`, "LRANGE", "@k", "0", "-1"), listS(`"c"`, "LINDEX", "@k", "2"), listS(`"x"`, "LINDEX", "@k", "-3")}},
	})
}

func TestLRem(t *testing.T) {
	push := listS("(integer) 9", "RPUSH", "@k", "a", "x", "b", "x", "c", "x", "d", "e", "f")
	listRunCases(t, []listCase{
		{"All", []listStep{push, listS("(integer) 3", "LREM", "@k", "0", "x"), listS(`["a", "b", "c", "d", "e", "f"]`, "LRANGE", "@k", "0", "-1")}},
		{"FromHead", []listStep{push, listS("(integer) 2", "LREM", "@k", "2", "x"), listS(`["a", "b", "c", "x", "d", "e", "f"]`, "LRANGE", "@k", "0", "-1")}},
		{"FromTail", []listStep{push, listS("(integer) 1", "LREM", "@k", "-1", "x"), listS(`["a", "x", "b", "x", "c", "d", "e", "f"]`, "LRANGE", "@k", "0", "-1")}},
		{"FromTailTwo", []listStep{push, listS("(integer) 2", "LREM", "@k", "-2", "x"), listS(`["a", "x", "b", "c", "d", "e", "f"]`, "LRANGE", "@k", "0", "-1")}},
		{"NearTail", []listStep{push, listS("(integer) 1", "LREM", "@k", "1", "e"), listS(`["a", "x", "b", "x", "c", "x", "d", "f"]`, "LRANGE", "@k", "0", "-1"), listS(`"f"`, "LINDEX", "@k", "-1")}},
		{"NearHeadFromTail", []listStep{push, listS("(integer) 1", "LREM", "@k", "-1", "a"), listS(`["x", "b", "x", "c", "x", "d", "e", "f"]`, "LRANGE", "@k", "0", "-1"), listS(`"x"`, "LINDEX", "@k", "0")}},
		{"MinInt64", []listStep{push, listS("(integer) 3", "LREM", "@k", "-9223372036854775808", "x"), listS("(integer) 6", "LLEN", "@k")}},
		{"EverythingDeletesKey", []listStep{listS("(integer) 3", "RPUSH", "@k", "x", "x", "x"), listS("(integer) 3", "LREM", "@k", "0", "x"), listS("(integer) 0", "EXISTS", "@k")}},
		{"NoMatch", []listStep{push, listS("(integer) 0", "LREM", "@k", "0", "zz"), listS("(integer) 9", "LLEN", "@k")}},
		{"MissingKey", []listStep{listS("(integer) 0", "LREM", "@k", "0", "x")}},
		{"NotInteger", []listStep{listS("(error) ERR value is not an integer or out of range", "LREM", "@k", "x", "x")}},
		{"WrongType", []listStep{listS(`"OK"`, "SET", "@k", "v"), listS(listWrongType, "LREM", "@k", "0", "x")}},
		{"PushAfterRemoveStaysDense", []listStep{push, listS("(integer) 3", "LREM", "@k", "0", "x"),
			listS("(integer) 7", "RPUSH", "@k", "g"), listS("(integer) 8", "LPUSH", "@k", "z"),
			listS(`["z", "a", "b", "c", "d", "e", "f", "g"]`, "LRANGE", "@k", "0", "-1")}},
	})
}

func TestLTrim(t *testing.T) {
	push := listS("(integer) 10", append([]string{"RPUSH", "@k"}, listNumbers(10)...)...)
	listRunCases(t, []listCase{
		{"SmallCut", []listStep{push, listS(`"OK"`, "LTRIM", "@k", "1", "-2"), listS(`["1", "2", "3", "4", "5", "6", "7", "8"]`, "LRANGE", "@k", "0", "-1")}},
		{"KeepFew", []listStep{push, listS(`"OK"`, "LTRIM", "@k", "4", "5"), listS(`["4", "5"]`, "LRANGE", "@k", "0", "-1"), listS(`"5"`, "LINDEX", "@k", "-1"),
			listS("(integer) 3", "RPUSH", "@k", "x"), listS(`["4", "5", "x"]`, "LRANGE", "@k", "0", "-1")}},
		{"Nothing", []listStep{push, listS(`"OK"`, "LTRIM", "@k", "0", "100"), listS("(integer) 10", "LLEN", "@k")}},
		{"EverythingDeletesKey", []listStep{push, listS(`"OK"`, "LTRIM", "@k", "5", "1"), listS("(integer) 0", "EXISTS", "@k")}},
		// Positions freed by a trim must not come back with a later push into them.
		{"FreedPositionsStayGone", []listStep{push, listS(`"OK"`, "LTRIM", "@k", "3", "-1"), listS("(integer) 8", "LPUSH", "@k", "a"),
			listS(`["a", "3", "4"]`, "LRANGE", "@k", "0", "2"), listS(`"OK"`, "LTRIM", "@k", "0", "1"), listS("(integer) 3", "RPUSH", "@k", "z"),
			listS(`["a", "3", "z"]`, "LRANGE", "@k", "0", "-1")}},
		{"MissingKey", []listStep{listS(`"OK"`, "LTRIM", "@k", "0", "1")}},
		{"NotInteger", []listStep{listS("(error) ERR value is not an integer or out of range", "LTRIM", "@k", "a", "1")}},
		{"WrongType", []listStep{listS(`"OK"`, "SET", "@k", "v"), listS(listWrongType, "LTRIM", "@k", "0", "1")}},
	})
}

func TestLPos(t *testing.T) {
	push := listS("(integer) 5", "RPUSH", "@k", "a", "b", "a", "c", "a")
	listRunCases(t, []listCase{
		{"First", []listStep{push, listS("(integer) 0", "LPOS", "@k", "a"), listS("(integer) 3", "LPOS", "@k", "c")}},
		{"Rank", []listStep{push, listS("(integer) 2", "LPOS", "@k", "a", "RANK", "2"), listS("(integer) 4", "LPOS", "@k", "a", "RANK", "-1"), listS("(nil)", "LPOS", "@k", "a", "RANK", "4")}},
		{"Count", []listStep{push, listS("[0, 2, 4]", "LPOS", "@k", "a", "COUNT", "0"), listS("[0, 2]", "LPOS", "@k", "a", "COUNT", "2"), listS("[4, 2]", "LPOS", "@k", "a", "RANK", "-1", "COUNT", "2")}},
		{"MaxLen", []listStep{push, listS("[0, 2]", "LPOS", "@k", "a", "COUNT", "0", "MAXLEN", "3"), listS("(nil)", "LPOS", "@k", "b", "RANK", "-1", "MAXLEN", "2")}},
		{"MinRank", []listStep{push, listS("(integer) 4", "LPOS", "@k", "a", "RANK", "-9223372036854775808"), listS("[4, 2, 0]", "LPOS", "@k", "a", "RANK", "-9223372036854775808", "COUNT", "1")}},
		{"NoMatch", []listStep{push, listS("(nil)", "LPOS", "@k", "z"), listS("[]", "LPOS", "@k", "z", "COUNT", "1")}},
		{"MissingKey", []listStep{listS("(nil)", "LPOS", "@k", "a"), listS("[]", "LPOS", "@k", "a", "COUNT", "0")}},
		{"Errors", []listStep{
			listS("(error) ERR RANK can't be zero: use 1 to start from the first match, 2 from the second ... or use negative to start from the end of the list", "LPOS", "@k", "a", "RANK", "0"),
			listS("(error) ERR value is not an integer or out of range", "LPOS", "@k", "a", "RANK", "x"),
			listS("(error) ERR COUNT can't be negative", "LPOS", "@k", "a", "COUNT", "-1"),
			listS("(error) ERR COUNT can't be negative", "LPOS", "@k", "a", "COUNT", "x"),
			listS("(error) ERR MAXLEN can't be negative", "LPOS", "@k", "a", "MAXLEN", "-1"),
			listS("(error) ERR syntax error", "LPOS", "@k", "a", "RANK"),
			listS("(error) ERR syntax error", "LPOS", "@k", "a", "FOO", "1")}},
		{"WrongType", []listStep{listS(`"OK"`, "SET", "@k", "v"), listS(listWrongType, "LPOS", "@k", "a")}},
	})
}

func TestLMove(t *testing.T) {
	listRunCases(t, []listCase{
		{"AcrossKeys", []listStep{listS("(integer) 3", "RPUSH", "@s", "a", "b", "c"), listS(`"a"`, "LMOVE", "@s", "@d", "LEFT", "RIGHT"),
			listS(`"c"`, "LMOVE", "@s", "@d", "right", "left"), listS(`["b"]`, "LRANGE", "@s", "0", "-1"), listS(`["c", "a"]`, "LRANGE", "@d", "0", "-1")}},
		{"RotateSameKey", []listStep{listS("(integer) 3", "RPUSH", "@s", "a", "b", "c"), listS(`"a"`, "LMOVE", "@s", "@s", "LEFT", "RIGHT"),
			listS(`["b", "c", "a"]`, "LRANGE", "@s", "0", "-1"), listS(`"a"`, "LMOVE", "@s", "@s", "RIGHT", "LEFT"), listS(`["a", "b", "c"]`, "LRANGE", "@s", "0", "-1"),
			listS(`"a"`, "LMOVE", "@s", "@s", "LEFT", "LEFT"), listS(`["a", "b", "c"]`, "LRANGE", "@s", "0", "-1")}},
		{"SingleOntoItself", []listStep{listS("(integer) 1", "RPUSH", "@s", "a"), listS(`"a"`, "LMOVE", "@s", "@s", "LEFT", "RIGHT"), listS(`["a"]`, "LRANGE", "@s", "0", "-1")}},
		{"LastElementDeletesSource", []listStep{listS("(integer) 1", "RPUSH", "@s", "a"), listS(`"a"`, "LMOVE", "@s", "@d", "LEFT", "LEFT"), listS("(integer) 0", "EXISTS", "@s"), listS(`["a"]`, "LRANGE", "@d", "0", "-1")}},
		{"MissingSource", []listStep{listS("(nil)", "LMOVE", "@s", "@d", "LEFT", "LEFT"), listS("(integer) 0", "EXISTS", "@d")}},
		{"WrongTypeDestinationLeavesSource", []listStep{listS("(integer) 1", "RPUSH", "@s", "a"), listS(`"OK"`, "SET", "@d", "v"),
			listS(listWrongType, "LMOVE", "@s", "@d", "LEFT", "LEFT"), listS(`["a"]`, "LRANGE", "@s", "0", "-1")}},
		{"WrongTypeSource", []listStep{listS(`"OK"`, "SET", "@s", "v"), listS(listWrongType, "LMOVE", "@s", "@d", "LEFT", "LEFT")}},
		{"Syntax", []listStep{listS("(error) ERR syntax error", "LMOVE", "@s", "@d", "UP", "LEFT"), listS("(error) ERR syntax error", "LMOVE", "@s", "@d", "LEFT", "DOWN")}},
	})
}

func TestRPopLPush(t *testing.T) {
	listRunCases(t, []listCase{
		{"Moves", []listStep{listS("(integer) 3", "RPUSH", "@s", "a", "b", "c"), listS(`"c"`, "RPOPLPUSH", "@s", "@d"), listS(`"b"`, "RPOPLPUSH", "@s", "@d"),
			listS(`["b", "c"]`, "LRANGE", "@d", "0", "-1"), listS(`["a"]`, "LRANGE", "@s", "0", "-1")}},
		{"Rotates", []listStep{listS("(integer) 3", "RPUSH", "@s", "a", "b", "c"), listS(`"c"`, "RPOPLPUSH", "@s", "@s"), listS(`["c", "a", "b"]`, "LRANGE", "@s", "0", "-1")}},
		{"MissingSource", []listStep{listS("(nil)", "RPOPLPUSH", "@s", "@d")}},
		{"WrongType", []listStep{listS("(integer) 1", "RPUSH", "@s", "a"), listS(`"OK"`, "SET", "@d", "v"), listS(listWrongType, "RPOPLPUSH", "@s", "@d")}},
	})
}

func TestLMPop(t *testing.T) {
	listRunCases(t, []listCase{
		{"FirstNonEmpty", []listStep{listS("(integer) 3", "RPUSH", "@b", "a", "b", "c"), listS(`["@b", ["a"]]`, "LMPOP", "2", "@a", "@b", "LEFT"),
			listS(`["@b", ["c", "b"]]`, "LMPOP", "2", "@a", "@b", "RIGHT", "COUNT", "5"), listS("(integer) 0", "EXISTS", "@b")}},
		{"Count", []listStep{listS("(integer) 4", "RPUSH", "@a", "1", "2", "3", "4"), listS(`["@a", ["1", "2"]]`, "LMPOP", "1", "@a", "left", "count", "2")}},
		{"Nothing", []listStep{listS("(nil)", "LMPOP", "2", "@a", "@b", "LEFT")}},
		{"WrongType", []listStep{listS(`"OK"`, "SET", "@b", "v"), listS(listWrongType, "LMPOP", "2", "@a", "@b", "LEFT")}},
		{"Errors", []listStep{
			listS("(error) ERR numkeys should be greater than 0", "LMPOP", "0", "@a", "LEFT"),
			listS("(error) ERR numkeys should be greater than 0", "LMPOP", "x", "@a", "LEFT"),
			listS("(error) ERR syntax error", "LMPOP", "2", "@a", "LEFT"),
			listS("(error) ERR syntax error", "LMPOP", "9223372036854775807", "@a", "LEFT"),
			listS("(error) ERR syntax error", "LMPOP", "1", "@a", "MIDDLE"),
			listS("(error) ERR count should be greater than 0", "LMPOP", "1", "@a", "LEFT", "COUNT", "0"),
			listS("(error) ERR syntax error", "LMPOP", "1", "@a", "LEFT", "COUNT", "1", "COUNT", "2"),
			listS("(error) ERR syntax error", "LMPOP", "1", "@a", "LEFT", "COUNT")}},
		{"GetKeys", []listStep{
			listS(`["x", "y"]`, "COMMAND", "GETKEYS", "LMPOP", "2", "x", "y", "LEFT"),
			listS("(error) ERR Invalid arguments specified for command", "COMMAND", "GETKEYS", "LMPOP", "0", "x", "LEFT"),
			listS(`["s", "d"]`, "COMMAND", "GETKEYS", "LMOVE", "s", "d", "LEFT", "RIGHT")}},
	})
}

// listShardedPair returns two keys that live in different shards of s.
func listShardedPair(t *testing.T, s *testserver.Server) (string, string) {
	t.Helper()
	for i := 1; i < 100; i++ {
		a, b := "src", fmt.Sprintf("dst%d", i)
		if s.Store.ShardOf([]byte(a)) != s.Store.ShardOf([]byte(b)) {
			return a, b
		}
	}
	t.Fatal("no two keys in different shards")
	return "", ""
}

func TestLMove_AcrossShards(t *testing.T) {
	s := testserver.Start(t)
	c := s.Client(t)
	src, dst := listShardedPair(t, s)
	steps := []listStep{
		listS("(integer) 3", "RPUSH", src, "a", "b", "c"),
		listS(`"c"`, "RPOPLPUSH", src, dst),
		listS(`"a"`, "LMOVE", src, dst, "LEFT", "RIGHT"),
		listS(`["c", "a"]`, "LRANGE", dst, "0", "-1"),
		listS(`[]`, "LMPOP", "2", dst, src, "LEFT", "COUNT", "1"),
	}
	steps[4].want = fmt.Sprintf(`[%q, ["c"]]`, dst)
	for n, st := range steps {
		if got := listDo(c, st.args...); got != st.want {
			t.Fatalf("step %d %q: got %s, want %s", n, st.args, got, st.want)
		}
	}
}

// listRead returns the elements of list key in db 0 of st, read straight from the store.
func listRead(t *testing.T, st *shard.Store, key string) []string {
	t.Helper()
	var out []string
	if err := st.Do(st.ShardOf([]byte(key)), func(tx *shard.Tx) {
		m, ok := tx.Meta(0, []byte(key))
		if !ok {
			return
		}
		if m.Type != codec.TypeList {
			t.Errorf("%s has type %d", key, m.Type)
			return
		}
		l, _ := datatype.ListFromMeta(tx, 0, []byte(key), m, true)
		it := l.Iter(0, false)
		for ; it.Valid(); it.Next() {
			out = append(out, string(it.Value()))
		}
		if uint64(len(out)) != m.Count || m.Tail-m.Head != m.Count {
			t.Errorf("%s: %d elements, meta count %d, head %d tail %d", key, len(out), m.Count, m.Head, m.Tail)
		}
		// Every data key is a node spanning live positions or the big element of one: pops,
		// trims and moves leave none behind.
		d := tx.IterateData(0, []byte(key), m.Version, nil, nil, false)
		defer d.Close()
		for ; d.Valid(); d.Next() {
			node, seq, big, ok := codec.ParseListElem(d.Elem())
			switch {
			case !ok:
				t.Errorf("%s: data key element %x", key, d.Elem())
			case big && (seq < m.Head || seq >= m.Tail):
				t.Errorf("%s: big element at %d out of [%d, %d)", key, seq, m.Head, m.Tail)
			case !big && (node < m.Head>>codec.ListNodeShift || node > (m.Tail-1)>>codec.ListNodeShift):
				t.Errorf("%s: node %d out of the positions [%d, %d)", key, node, m.Head, m.Tail)
			}
		}
	}); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestList_BinlogReplay runs every write of the family, including moves across shards and
// rotations, then replays each shard's binlog into an empty store: the lists must come out
// equal, which checks both the records and that every write logs.
func TestList_BinlogReplay(t *testing.T) {
	s := testserver.Start(t)
	c := s.Client(t)
	src, dst := listShardedPair(t, s)
	keys := []string{src, dst, "k3"}
	script := [][]string{
		append([]string{"RPUSH", src}, listNumbers(20)...),
		{"LPUSH", dst, "x", "y"}, {"LPUSHX", "k3", "no"}, {"RPUSHX", dst, "z"},
		{"LPOP", src}, {"RPOP", src, "3"}, {"LPOP", src, "0"},
		{"LSET", src, "2", "two"}, {"LINSERT", src, "BEFORE", "10", "ten-"}, {"LINSERT", src, "AFTER", "5", "five+"},
		{"RPUSH", src, "5", "x", "5"}, {"LREM", src, "-1", "5"}, {"LREM", src, "1", "x"},
		{"LTRIM", src, "1", "-2"}, {"RPUSH", "k3", "a", "b", "c", "d", "e", "f", "g", "h", "i"}, {"LTRIM", "k3", "7", "8"},
		{"LMOVE", src, dst, "LEFT", "RIGHT"}, {"RPOPLPUSH", dst, src}, {"LMOVE", src, src, "RIGHT", "LEFT"},
		{"LMPOP", "2", "nokey", dst, "RIGHT", "COUNT", "2"}, {"RPUSH", "k3", "q"}, {"LMOVE", "k3", "k3", "LEFT", "RIGHT"},
		{"EXPIRE", dst, "1000"}, {"LPUSH", dst, "late"},
	}
	for _, args := range script {
		if got := listDo(c, args...); strings.HasPrefix(got, "(error)") {
			t.Fatalf("%q: %s", args, got)
		}
	}
	want := map[string][]string{}
	for _, k := range keys {
		want[k] = listRead(t, s.Store, k)
	}
	dstStore := testserver.OpenStore(t, t.TempDir(), s.Store.NumShards())
	srv := executor.New(&server.Server{Store: dstStore, Config: s.Config})
	for id := range s.Store.NumShards() {
		if _, err := srv.ReplayShard(s.Store, id); err != nil {
			t.Fatalf("replay shard %d: %v", id, err)
		}
	}
	for _, k := range keys {
		if got := listRead(t, dstStore, k); strings.Join(got, ",") != strings.Join(want[k], ",") {
			t.Fatalf("%s after replay = %q, want %q", k, got, want[k])
		}
	}
}

// TestList_BigKey builds a list of a million elements through the Tx API and checks that
// length, point reads, ranges and the end operations work on it, that deleting it is quick and
// leaves nothing visible, and that trimming a long list to a few elements keeps just those.
func TestList_BigKey(t *testing.T) {
	if testing.Short() {
		t.Skip("big key")
	}
	s := testserver.Start(t)
	c := s.Client(t)
	build := func(key string, n int) {
		k := []byte(key)
		id := s.Store.ShardOf(k)
		var val []byte
		for start := 0; start < n; start += 10_000 {
			if err := s.Store.Do(id, func(tx *shard.Tx) {
				l, err := datatype.LookupList(tx, 0, k)
				if err != nil {
					t.Fatal(err)
				}
				for i := start; i < start+10_000; i++ {
					val = strconv.AppendInt(append(val[:0], 'e'), int64(i), 10)
					l.Push(val, false)
				}
				l.Save()
			}); err != nil {
				t.Fatal(err)
			}
		}
	}
	build("big", 1_000_000)
	build("big2", 200_000) // the trim below takes the same path at any size
	expect := func(want string, args ...string) {
		t.Helper()
		if got := listDo(c, args...); got != want {
			t.Fatalf("%q: got %.200s, want %s", args, got, want)
		}
	}
	expect("(integer) 1000000", "LLEN", "big")
	expect(`"e500000"`, "LINDEX", "big", "500000")
	expect(`"e999998"`, "LINDEX", "big", "-2")
	expect(`["e0", "e1", "e2", "e3", "e4", "e5", "e6", "e7", "e8", "e9"]`, "LRANGE", "big", "0", "9")
	expect(`["e499999", "e500000", "e500001"]`, "LRANGE", "big", "499999", "500001")
	expect(`"OK"`, "LSET", "big", "500000", "mid")
	expect(`"mid"`, "LINDEX", "big", "500000")
	expect("(integer) 1000001", "LPUSH", "big", "head")
	expect(`["e999999", "e999998"]`, "RPOP", "big", "2")
	expect("(integer) 999999", "LLEN", "big")
	expect("(integer) 2", "LPOS", "big", "e1", "MAXLEN", "10")
	expect("(integer) 1", "DEL", "big")
	expect("(integer) 0", "LLEN", "big")
	expect("(integer) 1", "RPUSH", "big", "new")
	expect(`["new"]`, "LRANGE", "big", "0", "-1")
	expect(`"OK"`, "LTRIM", "big2", "100000", "100002")
	expect(`["e100000", "e100001", "e100002"]`, "LRANGE", "big2", "0", "-1")
	expect("(integer) 4", "LPUSH", "big2", "h")
	expect(`["h", "e100000", "e100001", "e100002"]`, "LRANGE", "big2", "0", "-1")
	if got := listRead(t, s.Store, "big2"); len(got) != 4 {
		t.Fatalf("big2 holds %d elements after the trim", len(got))
	}
}

// TestList_RESP3 checks the shapes that differ by protocol: nulls and LMPOP's nested array.
func TestList_RESP3(t *testing.T) {
	s := testserver.Start(t)
	got := testserver.Raw(t, s.Addr, []byte("HELLO 3\r\nRPUSH k a b\r\nLINDEX k 5\r\nLPOS k z\r\nLMPOP 1 k LEFT\r\nLMPOP 1 nk LEFT\r\nLPOS k b COUNT 0\r\n"), 300*time.Millisecond)
	i := bytes.Index(got, []byte(":2\r\n_"))
	if i < 0 {
		t.Fatalf("replies %q", got)
	}
	if want := ":2\r\n_\r\n_\r\n*2\r\n$1\r\nk\r\n*1\r\n$1\r\na\r\n_\r\n*1\r\n:0\r\n"; string(got[i:]) != want {
		t.Fatalf("replies %q, want %q", got[i:], want)
	}
}

// A list crossing several nodes, with elements over the inline limit among small ones, reads
// back through every command that walks or rewrites it (pops at both ends, LINDEX and LSET at
// node edges, LINSERT, LREM, LTRIM, DUMP and RESTORE, COPY, RENAME), each compared with a
// slice, and leaves no node or big element outside its positions.
func TestList_Nodes_BigAndSmallAcrossNodes_ReadBack(t *testing.T) {
	s := testserver.Start(t)
	c := s.Client(t)
	ctx := context.Background()
	var model []string
	for i := range 300 {
		e := fmt.Sprint("e", i)
		if i%5 == 2 {
			e = fmt.Sprintf("big%d-%s", i, strings.Repeat("x", 200+i))
		}
		model = append(model, e)
	}
	args := []any{"RPUSH", "l"}
	for _, e := range model {
		args = append(args, e)
	}
	c.Do(ctx, args...)
	check := func(step, key string) {
		t.Helper()
		got, err := c.LRange(ctx, key, 0, -1).Result()
		if err != nil || !slices.Equal(got, model) {
			t.Fatalf("%s: LRANGE %s = %d elements (%v), want %d", step, key, len(got), err, len(model))
		}
		if r := listRead(t, s.Store, key); !slices.Equal(r, model) {
			t.Fatalf("%s: stored %s differs", step, key)
		}
		for _, i := range []int{0, 1, 62, 63, 64, 65, 127, 128, len(model) - 1} {
			if i < len(model) {
				if v, _ := c.LIndex(ctx, key, int64(i)).Result(); v != model[i] {
					t.Fatalf("%s: LINDEX %s %d = %.20q, want %.20q", step, key, i, v, model[i])
				}
			}
		}
	}
	check("rpush", "l")
	got, _ := c.LPopCount(ctx, "l", 70).Result()
	if !slices.Equal(got, model[:70]) {
		t.Fatalf("LPOP 70 = %.40q", got)
	}
	model = model[70:]
	got, _ = c.RPopCount(ctx, "l", 3).Result()
	if want := []string{model[len(model)-1], model[len(model)-2], model[len(model)-3]}; !slices.Equal(got, want) {
		t.Fatalf("RPOP 3 = %.40q", got)
	}
	model = model[:len(model)-3]
	check("pops", "l")
	big := strings.Repeat("B", 500)
	c.LSet(ctx, "l", 0, big)
	c.LSet(ctx, "l", 63, "small")
	c.LSet(ctx, "l", 64, big)
	model[0], model[63], model[64] = big, "small", big
	check("lset", "l")
	c.LInsertBefore(ctx, "l", model[100], "ins")
	model = slices.Insert(model, 100, "ins")
	c.LInsertAfter(ctx, "l", model[5], big+"2")
	model = slices.Insert(model, 6, big+"2")
	check("linsert", "l")
	c.LRem(ctx, "l", 0, big)
	model = slices.DeleteFunc(model, func(e string) bool { return e == big })
	check("lrem", "l")
	c.LTrim(ctx, "l", 3, -5)
	model = model[3 : len(model)-4]
	check("ltrim", "l")
	dump, err := c.Dump(ctx, "l").Result()
	if err != nil {
		t.Fatal(err)
	}
	c.Restore(ctx, "r", 0, dump)
	check("restore", "r")
	c.Copy(ctx, "l", "cp", 0, false)
	check("copy", "cp")
	c.Rename(ctx, "cp", "rn")
	check("rename", "rn")
	for len(model) > 0 {
		c.RPop(ctx, "l")
		c.LPop(ctx, "l")
		model = model[1:]
		if len(model) > 0 {
			model = model[:len(model)-1]
		}
		if len(model) > 0 && len(model)%17 == 0 {
			check("drain", "l")
		}
	}
	if n, _ := c.Exists(ctx, "l").Result(); n != 0 {
		t.Fatal("the drained list is still there")
	}
}
