package executor_test

import (
	"fmt"
	"strings"
	"testing"

	"shardis/codec"
	"shardis/executor"
	"shardis/internal/testserver"
	"shardis/shard"
)

func applyArgs(s ...string) [][]byte {
	out := make([][]byte, len(s))
	for i, a := range s {
		out[i] = []byte(a)
	}
	return out
}

// applyIn runs Apply for args in key's shard and returns Apply's error.
func applyIn(t *testing.T, st *shard.Store, srv *executor.Executor, db int, key string, args ...string) error {
	t.Helper()
	var aerr error
	if err := st.Do(st.ShardOf([]byte(key)), func(tx *shard.Tx) { aerr = srv.Apply(tx, db, applyArgs(args...)) }); err != nil {
		t.Fatalf("commit: %v", err)
	}
	return aerr
}

func TestApply_SetWritesIntoDB(t *testing.T) {
	st, srv := testserver.ReplayTarget(t, 4)
	if err := applyIn(t, st, srv, 3, "k", "SET", "k", "v"); err != nil {
		t.Fatalf("apply: %v", err)
	}
	if m, ok := testserver.MetaOf(t, st, 3, "k"); !ok || string(m.Value) != "v" {
		t.Fatalf("db 3 k = %q, %v; want v", m.Value, ok)
	}
	if _, ok := testserver.MetaOf(t, st, 0, "k"); ok {
		t.Fatal("k also written to db 0")
	}
}

func TestApply_UnknownCommandFails(t *testing.T) {
	st, srv := testserver.ReplayTarget(t, 4)
	err := applyIn(t, st, srv, 0, "k", "NOSUCHCMD", "k")
	if err == nil || !strings.Contains(err.Error(), "unknown command") {
		t.Fatalf("err = %v, want unknown command", err)
	}
}

func TestApply_ArityErrorFails(t *testing.T) {
	st, srv := testserver.ReplayTarget(t, 4)
	if err := applyIn(t, st, srv, 0, "k", "SET", "k"); err == nil || !strings.Contains(err.Error(), "wrong number of arguments") {
		t.Fatalf("err = %v, want arity error", err)
	}
}

func TestApply_ErrorReplyFails(t *testing.T) {
	st, srv := testserver.ReplayTarget(t, 4)
	key := []byte("h")
	if err := st.Do(st.ShardOf(key), func(tx *shard.Tx) {
		tx.SetMeta(0, key, &codec.Meta{Type: codec.TypeHash, Version: 1, Count: 1})
	}); err != nil {
		t.Fatal(err)
	}
	err := applyIn(t, st, srv, 0, "h", "GET", "h")
	if err == nil || !strings.Contains(err.Error(), "WRONGTYPE") {
		t.Fatalf("err = %v, want the WRONGTYPE reply as an error", err)
	}
}

func TestApply_ConnectionCommandRefused(t *testing.T) {
	st, srv := testserver.ReplayTarget(t, 4)
	if err := applyIn(t, st, srv, 0, "x", "PING"); err == nil || !strings.Contains(err.Error(), "not a data command") {
		t.Fatalf("err = %v, want refusal of PING", err)
	}
}

func TestApply_KeyOutsideHeldShardFails(t *testing.T) {
	st, srv := testserver.ReplayTarget(t, 4)
	// Find a key of another shard than "a"'s.
	other := ""
	for i := 0; other == ""; i++ {
		if k := fmt.Sprintf("o%d", i); st.ShardOf([]byte(k)) != st.ShardOf([]byte("a")) {
			other = k
		}
	}
	if err := applyIn(t, st, srv, 0, "a", "SET", other, "v"); err == nil || !strings.Contains(err.Error(), "outside the shards held") {
		t.Fatalf("err = %v, want key-outside-shard error", err)
	}
	if _, ok := testserver.MetaOf(t, st, 0, other); ok {
		t.Fatalf("%s was written though its shard was not held", other)
	}
}

func TestApply_BadDBFails(t *testing.T) {
	st, srv := testserver.ReplayTarget(t, 4)
	if err := applyIn(t, st, srv, 16, "k", "SET", "k", "v"); err == nil || !strings.Contains(err.Error(), "DB index is out of range") {
		t.Fatalf("err = %v, want DB index error", err)
	}
}

// TestReplayShard_CopiesEveryShard writes through Apply (which logs like the real command), then
// replays each shard's binlog into a fresh store and expects the same keys.
func TestReplayShard_CopiesEveryShard(t *testing.T) {
	src, srcSrv := testserver.ReplayTarget(t, 4)
	want := map[string]string{}
	for i := range 2000 { // more than one replay chunk per shard
		k, v := fmt.Sprintf("key:%d", i%700), fmt.Sprintf("val:%d", i)
		if err := applyIn(t, src, srcSrv, i%3, k, "SET", k, v); err != nil {
			t.Fatal(err)
		}
		want[fmt.Sprintf("%d/%s", i%3, k)] = v
	}
	dst, dstSrv := testserver.ReplayTarget(t, 4)
	total := 0
	for id := range src.NumShards() {
		n, err := dstSrv.ReplayShard(src, id)
		if err != nil {
			t.Fatalf("shard %d: %v", id, err)
		}
		first, last := src.Shard(id).BinlogRange()
		if want := int(last - first + 1); n != want {
			t.Fatalf("shard %d: applied %d records, binlog holds %d", id, n, want)
		}
		total += n
	}
	if total != 2000 {
		t.Fatalf("applied %d records, want 2000", total)
	}
	got := map[string]string{}
	for id := range dst.NumShards() {
		if err := dst.Do(id, func(tx *shard.Tx) {
			for db := range 3 {
				tx.ScanKeys(id, db, nil, func(key []byte, m *codec.Meta) bool {
					got[fmt.Sprintf("%d/%s", db, key)] = string(m.Value)
					return true
				})
			}
		}); err != nil {
			t.Fatal(err)
		}
	}
	if len(got) != len(want) {
		t.Fatalf("replayed %d keys, want %d", len(got), len(want))
	}
	for k, v := range want {
		if got[k] != v {
			t.Fatalf("%s = %q after replay, want %q", k, got[k], v)
		}
	}
}

func TestReplayShard_StopsAtBadRecord(t *testing.T) {
	src, _ := testserver.ReplayTarget(t, 4)
	key := []byte("k")
	id := src.ShardOf(key)
	if err := src.Do(id, func(tx *shard.Tx) {
		tx.Log(0, key, applyArgs("SET", "k", "1")...)
		tx.Log(0, key, applyArgs("NOSUCHCMD", "k")...)
		tx.Log(0, key, applyArgs("SET", "k", "3")...)
	}); err != nil {
		t.Fatal(err)
	}
	_, dstSrv := testserver.ReplayTarget(t, 4)
	n, err := dstSrv.ReplayShard(src, id)
	if err == nil || !strings.Contains(err.Error(), "record 2") {
		t.Fatalf("err = %v, want a failure naming record 2", err)
	}
	if n != 1 {
		t.Fatalf("applied %d records before the bad one, want 1", n)
	}
}
