package cmds_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"

	"shardis/internal/testserver"
)

// Replies that walk more than 1,024 elements are streamed (see reactor/stream.go). These
// checks pipeline several of them back to back, between small replies, in RESP2 and RESP3,
// and compare each with what Redis answers.
func TestStreamedReplies_PipelinedInOrder(t *testing.T) {
	t.Parallel()
	s := testserver.Start(t)
	const n = 3000
	fields, values, members, elems := make([]any, 0, 2*n), make([]any, 0, n), make([]any, 0, n), make([]any, 0, n)
	hset, sadd, rpush := []any{"HSET", "h"}, []any{"SADD", "s"}, []any{"RPUSH", "l"}
	for i := range n {
		f, v := fmt.Sprintf("f%05d", i), fmt.Sprintf("v%d", i)
		hset = append(hset, f, v)
		fields = append(fields, f)
		values = append(values, v)
		members = append(members, fmt.Sprintf("m%05d", i))
		elems = append(elems, fmt.Sprintf("e%d", i))
	}
	sadd = append(sadd, members...)
	rpush = append(rpush, elems...)
	c := s.Client(t)
	expect(t, c, int64(n), hset...)
	expect(t, c, int64(n), sadd...)
	expect(t, c, int64(n), rpush...)

	opened := s.Store.StreamsOpened.Load()
	pairs := make([]any, 0, 2*n)
	for i := range n {
		pairs = append(pairs, fields[i], values[i])
	}
	for _, proto := range []int{2, 3} {
		c := s.Client(t, func(o *redis.Options) { o.Protocol = proto })
		p := c.Pipeline()
		getall := p.Do(testCtx, "HGETALL", "h")
		p.Do(testCtx, "PING")
		keys := p.Do(testCtx, "HKEYS", "h")
		vals := p.Do(testCtx, "HVALS", "h")
		smembers := p.Do(testCtx, "SMEMBERS", "s")
		all := p.Do(testCtx, "LRANGE", "l", "0", "-1")
		mid := p.Do(testCtx, "LRANGE", "l", "10", "2500")
		tail := p.Do(testCtx, "LRANGE", "l", "-2000", "-1")
		small := p.Do(testCtx, "LRANGE", "l", "0", "2")
		if _, err := p.Exec(testCtx); err != nil {
			t.Fatalf("RESP%d pipeline: %v", proto, err)
		}
		if proto == 2 {
			check(t, "HGETALL", getall, pairs)
		} else {
			m, err := getall.Result()
			if mm, ok := m.(map[any]any); err != nil || !ok || len(mm) != n || mm["f02999"] != "v2999" {
				t.Fatalf("RESP3 HGETALL: %d entries, %v", len(mm), err)
			}
		}
		check(t, "HKEYS", keys, fields)
		check(t, "HVALS", vals, values)
		got, err := smembers.Slice() // a RESP3 set too
		slices.SortFunc(got, func(a, b any) int { return strings.Compare(a.(string), b.(string)) })
		if err != nil || !slices.Equal(got, members) {
			t.Fatalf("RESP%d SMEMBERS: %d members, %v", proto, len(got), err)
		}
		check(t, "LRANGE 0 -1", all, elems)
		check(t, "LRANGE 10 2500", mid, elems[10:2501])
		check(t, "LRANGE -2000 -1", tail, elems[n-2000:])
		check(t, "LRANGE 0 2", small, elems[:3])
	}
	if got := s.Store.StreamsOpened.Load() - opened; got != 2*7 {
		t.Errorf("%d replies were streamed, want 14 (7 big replies in RESP2 and RESP3)", got)
	}
	waitNoStreams(t, s)
}

func check(t *testing.T, what string, cmd *redis.Cmd, want []any) {
	t.Helper()
	got, err := cmd.Slice()
	if err != nil || !slices.Equal(got, want) {
		t.Fatalf("%s: %d elements, %v; want %d", what, len(got), err, len(want))
	}
}

// The stream family's replies and errors, recorded from redis-server 7.0.15
// (testdata/stream: explicit ids only, so nothing depends on the clock). trim.cmds pins what
// `~` trimming removes, which depends on Redis's node layout (100 entries or 4 KiB a node).
func TestStream_Recorded_MatchesRedis(t *testing.T) {
	t.Parallel()
	replayRecorded(t, "testdata/stream")
}
