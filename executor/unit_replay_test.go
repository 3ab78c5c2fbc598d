package executor_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"shardis/binlog"
	"shardis/executor"
	"shardis/internal/testserver"
	"shardis/shard"
)

// applyAll runs Apply for args in a transaction over every shard, as a coordinated command
// runs, and fails the test on any error.
func applyAll(t *testing.T, st *shard.Store, ex *executor.Executor, db int, args ...string) {
	t.Helper()
	h := st.AcquireAll()
	aerr := ex.Apply(h.Tx(), db, applyArgs(args...))
	if err := h.Release(); err != nil {
		t.Fatalf("commit %v: %v", args, err)
	}
	if aerr != nil {
		t.Fatalf("apply %v: %v", args, aerr)
	}
}

// keysInShards returns one key of each of n different shards.
func keysInShards(t *testing.T, st *shard.Store, n int) []string {
	t.Helper()
	byShard := map[int]string{}
	var keys []string
	for i := 0; len(keys) < n && i < 10000; i++ {
		k := fmt.Sprintf("key%d", i)
		if _, ok := byShard[st.ShardOf([]byte(k))]; !ok {
			byShard[st.ShardOf([]byte(k))] = k
			keys = append(keys, k)
		}
	}
	if len(keys) < n {
		t.Fatalf("no keys in %d shards", n)
	}
	return keys
}

func value(t *testing.T, st *shard.Store, db int, key string) (string, bool) {
	t.Helper()
	m, ok := testserver.MetaOf(t, st, db, key)
	return string(m.Value), ok
}

// A cross-shard MSET is logged as one unit and replayed as one: the fresh store gets all of
// it, and logs it as a unit of its own.
func TestReplay_CrossShardMSETIsOneUnit(t *testing.T) {
	src, srcEx := testserver.ReplayTarget(t, 4)
	k := keysInShards(t, src, 3)
	applyIn(t, src, srcEx, 0, k[0], "SET", k[0], "before")
	applyAll(t, src, srcEx, 0, "MSET", k[0], "a", k[1], "b", k[2], "c")
	applyIn(t, src, srcEx, 0, k[1], "SET", k[1], "after")

	dst, dstEx := testserver.ReplayTarget(t, 4)
	n, err := dstEx.Replay(context.Background(), src)
	if err != nil || n != 5 {
		t.Fatalf("Replay = %d, %v; want 5 records", n, err)
	}
	for key, want := range map[string]string{k[0]: "a", k[1]: "after", k[2]: "c"} {
		if got, ok := value(t, dst, 0, key); !ok || got != want {
			t.Errorf("%s = %q, %v after replay; want %q", key, got, ok, want)
		}
	}
	units := map[uint64]int{}
	for id := range dst.NumShards() {
		recs, err := dst.ReadBinlog(id, 0, 100)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range recs {
			if r.Unit.ID != 0 {
				units[r.Unit.ID]++
			}
		}
	}
	if len(units) != 1 {
		t.Fatalf("units in the replayed store's binlog: %v, want the MSET's one", units)
	}
}

// A unit with a record that fails applies none of its records.
func TestReplay_FailingUnitAppliesNothing(t *testing.T) {
	src, _ := testserver.ReplayTarget(t, 4)
	k := keysInShards(t, src, 2)
	h := src.AcquireAll()
	h.Tx().Log(0, []byte(k[0]), applyArgs("SET", k[0], "1")...)
	h.Tx().Log(0, []byte(k[1]), applyArgs("NOSUCHCMD", k[1])...)
	if err := h.Release(); err != nil {
		t.Fatal(err)
	}
	dst, dstEx := testserver.ReplayTarget(t, 4)
	n, err := dstEx.Replay(context.Background(), src)
	if err == nil || !strings.Contains(err.Error(), "unit") || n != 0 {
		t.Fatalf("Replay = %d, %v; want the unit's failure", n, err)
	}
	if _, ok := value(t, dst, 0, k[0]); ok {
		t.Fatalf("%s was applied: half of a unit", k[0])
	}
}

// stopSource cancels the replay as soon as it has read a record of a unit: the replay is
// stopped half-way through assembling or applying it.
type stopSource struct {
	*shard.Store
	cancel context.CancelFunc
}

func (s stopSource) ReadBinlog(id int, from uint64, limit int) ([]binlog.Entry, error) {
	recs, err := s.Store.ReadBinlog(id, from, limit)
	for _, r := range recs {
		if r.Unit.ID != 0 {
			s.cancel()
		}
	}
	return recs, err
}

func TestReplay_StoppedHalfWayLeavesNoHalfUnit(t *testing.T) {
	src, srcEx := testserver.ReplayTarget(t, 4)
	k := keysInShards(t, src, 2)
	applyIn(t, src, srcEx, 0, "solo", "SET", "solo", "1")
	applyAll(t, src, srcEx, 0, "MSET", k[0], "a", k[1], "b")
	dst, dstEx := testserver.ReplayTarget(t, 4)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	n, err := dstEx.Replay(ctx, stopSource{src, cancel})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Replay = %d, %v; want it stopped", n, err)
	}
	_, a := value(t, dst, 0, k[0])
	_, b := value(t, dst, 0, k[1])
	if a || b {
		t.Fatalf("after a stopped replay %s applied %v, %s applied %v: want neither", k[0], a, k[1], b)
	}
	// A replay that goes on from scratch finishes the job.
	if n, err := dstEx.Replay(context.Background(), src); err != nil || n != 3 {
		t.Fatalf("second Replay = %d, %v", n, err)
	}
	if got, _ := value(t, dst, 0, k[1]); got != "b" {
		t.Fatalf("%s = %q after the second replay", k[1], got)
	}
}

// A whole-shard record in a unit (SWAPDB, logged once per shard) applies to its own shard
// only, as it did when it was logged: applied to every shard of the unit, the swaps would
// undo each other.
func TestReplay_WholeShardRecordsOfAUnitStayInTheirShard(t *testing.T) {
	src, srcEx := testserver.ReplayTarget(t, 4)
	k := keysInShards(t, src, 4)
	for _, key := range k {
		applyIn(t, src, srcEx, 0, key, "SET", key, "v")
	}
	applyAll(t, src, srcEx, 0, "SWAPDB", "0", "1")
	applyAll(t, src, srcEx, 0, "FLUSHDB")
	dst, dstEx := testserver.ReplayTarget(t, 4)
	if _, err := dstEx.Replay(context.Background(), src); err != nil {
		t.Fatal(err)
	}
	for _, key := range k {
		if got, ok := value(t, dst, 1, key); !ok || got != "v" {
			t.Errorf("db 1 %s = %q, %v after replay; want v (swapped from db 0)", key, got, ok)
		}
	}
}
