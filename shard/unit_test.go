package shard

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"shardis/binlog"
)

// keyOfShard returns a key that shard id owns.
func keyOfShard(t *testing.T, s *Store, id int, prefix string) []byte {
	t.Helper()
	for i := range 10000 {
		if k := fmt.Appendf(nil, "%s%d", prefix, i); s.ShardOf(k) == id {
			return k
		}
	}
	t.Fatalf("no key of shard %d", id)
	return nil
}

func readAll(t *testing.T, s *Store, id int) []binlog.Entry {
	t.Helper()
	recs, err := s.ReadBinlog(id, 0, 1000)
	if err != nil {
		t.Fatal(err)
	}
	return recs
}

// One commit over several shards that logs in more than one of them marks every record as
// one unit; the records of a commit in one shard, or of a multi-shard commit that logged in
// one shard only, stand alone.
func TestTx_MultiShardCommitLogsOneUnit(t *testing.T) {
	s := openTestStore(t, t.TempDir(), 3)
	a, b := keyOfShard(t, s, 0, "a"), keyOfShard(t, s, 2, "b")
	h := s.Acquire([]int{0, 1, 2})
	tx := h.Tx()
	tx.Log(0, a, []byte("SET"), a, []byte("1"))
	tx.Log(0, b, []byte("SET"), b, []byte("2"))
	tx.Log(0, a, []byte("PEXPIREAT"), a, []byte("99999999999999"))
	if err := h.Release(); err != nil {
		t.Fatal(err)
	}
	r0, r1, r2 := readAll(t, s, 0), readAll(t, s, 1), readAll(t, s, 2)
	if len(r0) != 2 || len(r1) != 0 || len(r2) != 1 {
		t.Fatalf("records per shard %d %d %d, want 2 0 1", len(r0), len(r1), len(r2))
	}
	id := r0[0].Unit.ID
	if id == 0 || r0[0].Unit != (binlog.Unit{ID: id, Shards: 2, Count: 2}) || r0[1].Unit != r0[0].Unit ||
		r2[0].Unit != (binlog.Unit{ID: id, Shards: 2, Count: 1}) {
		t.Fatalf("units %+v %+v / %+v", r0[0].Unit, r0[1].Unit, r2[0].Unit)
	}
	if string(r0[1].Args[0]) != "PEXPIREAT" || string(r2[0].Args[1]) != string(b) {
		t.Fatalf("records %q / %q", r0[1].Args, r2[0].Args)
	}

	h = s.Acquire([]int{0, 2})
	h.Tx().Log(0, a, []byte("DEL"), a)
	if err := h.Release(); err != nil {
		t.Fatal(err)
	}
	if err := s.Do(2, func(tx *Tx) { tx.Log(0, b, []byte("DEL"), b) }); err != nil {
		t.Fatal(err)
	}
	if r := readAll(t, s, 0); len(r) != 3 || r[2].Unit.ID != 0 {
		t.Fatalf("a multi-shard commit logging in one shard: %+v", r[len(r)-1])
	}
	if r := readAll(t, s, 2); len(r) != 2 || r[1].Unit.ID != 0 {
		t.Fatalf("a single-shard commit: %+v", r[len(r)-1])
	}
}

// Unit ids increase, within a run and across a restart, in every shard.
func TestTx_UnitIDsIncreaseAcrossRestart(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(Options{Dir: dir, Shards: 4, Databases: 16})
	if err != nil {
		t.Fatal(err)
	}
	unit := func(s *Store, ids ...int) {
		t.Helper()
		h := s.Acquire(ids)
		for _, id := range ids {
			h.Tx().LogShard(id, 0, []byte("FLUSHDB"))
		}
		if err := h.Release(); err != nil {
			t.Fatal(err)
		}
	}
	unit(s, 0, 1)
	unit(s, 2, 3)
	unit(s, 2, 3) // shards 2 and 3 now hold the newest id; 0 and 1 an older one
	s.Close()
	s = openTestStore(t, dir, 4)
	unit(s, 0, 1)
	var ids []uint64
	for _, r := range readAll(t, s, 0) {
		ids = append(ids, r.Unit.ID)
	}
	for _, r := range readAll(t, s, 2) {
		ids = append(ids, r.Unit.ID)
	}
	// Shard 0 holds the first and the fourth unit, shard 2 the second and the third.
	if len(ids) != 4 {
		t.Fatalf("unit ids %v, want 4", ids)
	}
	order := []uint64{ids[0], ids[2], ids[3], ids[1]}
	for i := 1; i < len(order); i++ {
		if order[i] <= order[i-1] {
			t.Fatalf("unit ids in commit order %v: not increasing", order)
		}
	}
}

// Confine narrows Shards to one held shard until the commit.
func TestTx_Confine(t *testing.T) {
	s := openTestStore(t, t.TempDir(), 3)
	h := s.Acquire([]int{0, 2})
	defer h.Release()
	tx := h.Tx()
	tx.Confine(2)
	if got := tx.Shards(); !slices.Equal(got, []int{2}) {
		t.Fatalf("confined Shards = %v", got)
	}
	tx.Confine(1) // not held: back to every held shard
	if got := tx.Shards(); !slices.Equal(got, []int{0, 2}) {
		t.Fatalf("Shards after Confine of an unheld shard = %v", got)
	}
	tx.Confine(0)
	if err := h.Commit(); err != nil {
		t.Fatal(err)
	}
	if got := h.Tx().Shards(); !slices.Equal(got, []int{0, 2}) {
		t.Fatalf("Shards after the commit = %v, want every held shard", got)
	}
}

// The records a transaction over several shards holds span many chunks (and one record bigger
// than a chunk); a rollback to a savepoint forgets those held after it, across chunks, and
// the commit logs the rest in order.
func TestTx_HeldRecordsAcrossChunks_RollbackKeepsThoseBeforeSave(t *testing.T) {
	s := openTestStore(t, t.TempDir(), 2)
	a, b := keyOfShard(t, s, 0, "a"), keyOfShard(t, s, 1, "b")
	h := s.Acquire([]int{0, 1})
	tx := h.Tx()
	big := make([]byte, 2*unitChunk)
	tx.Log(0, a, []byte("SET"), a, big)
	const kept, dropped = 3000, 2000 // about 25 bytes each: several chunks
	for i := range kept {
		tx.Log(0, a, []byte("SADD"), a, fmt.Appendf(nil, "%d", i))
	}
	var sp Savepoint
	tx.Save(&sp)
	for i := range dropped {
		tx.Log(0, b, []byte("SADD"), b, fmt.Appendf(nil, "%d", i))
	}
	tx.RollbackTo(&sp)
	tx.Log(0, b, []byte("SADD"), b, []byte("after"))
	if err := h.Release(); err != nil {
		t.Fatal(err)
	}
	r0, err := s.ReadBinlog(0, 0, 10000)
	if err != nil {
		t.Fatal(err)
	}
	r1 := readAll(t, s, 1)
	if len(r0) != 1+kept || len(r1) != 1 {
		t.Fatalf("records %d and %d, want %d and 1", len(r0), len(r1), 1+kept)
	}
	if len(r0[0].Args[2]) != len(big) || string(r0[kept].Args[2]) != fmt.Sprint(kept-1) ||
		string(r1[0].Args[2]) != "after" || r1[0].Unit.Shards != 2 {
		t.Fatalf("records %q … %q / %q %+v", r0[0].Args[:2], r0[kept].Args, r1[0].Args, r1[0].Unit)
	}
}

// The records logged between BeginUnit and EndUnit in one shard (an EXEC's, a script's) are
// one unit when there are two or more; what the group's other jobs log stands alone.
func TestTx_BeginUnitInOneShard_TwoRecordsAreOneUnit(t *testing.T) {
	s := openTestStore(t, t.TempDir(), 2)
	a := keyOfShard(t, s, 0, "a")
	err := s.Do(0, func(tx *Tx) {
		tx.Log(0, a, []byte("SET"), a, []byte("0")) // another job's, before
		tx.BeginUnit()
		tx.Log(0, a, []byte("SET"), a, []byte("1"))
		tx.BeginUnit() // nested: a script inside the EXEC
		tx.Log(0, a, []byte("INCR"), a)
		tx.EndUnit()
		tx.EndUnit()
		tx.Log(0, a, []byte("DEL"), a) // another job's, after
		tx.BeginUnit()
		tx.Log(0, a, []byte("SET"), a, []byte("2")) // one record: stands alone
		tx.EndUnit()
	})
	if err != nil {
		t.Fatal(err)
	}
	r := readAll(t, s, 0)
	if len(r) != 5 {
		t.Fatalf("%d records, want 5", len(r))
	}
	for i, want := range []string{"SET", "SET", "INCR", "DEL", "SET"} {
		if string(r[i].Args[0]) != want || r[i].Seq != uint64(i+1) {
			t.Fatalf("record %d: %d %q, want %s at %d", i, r[i].Seq, r[i].Args, want, i+1)
		}
	}
	u := r[1].Unit
	if u.ID == 0 || u != (binlog.Unit{ID: u.ID, Shards: 1, Count: 2}) || r[2].Unit != u {
		t.Fatalf("the unit's records: %+v %+v", r[1].Unit, r[2].Unit)
	}
	if r[0].Unit.ID != 0 || r[3].Unit.ID != 0 || r[4].Unit.ID != 0 {
		t.Fatalf("records outside the unit: %+v %+v %+v", r[0].Unit, r[3].Unit, r[4].Unit)
	}
}

// Records logged with LogItems inside a unit join while their name, database and key stay the
// same, up to maxJoined bytes; another record, another key or a savepoint closes the joined
// one, and a rollback forgets what was joined after the savepoint. Sequences stay contiguous.
func TestTx_LogItemsInAUnit_JoinsRecordsOfOneNameAndKey(t *testing.T) {
	s := openTestStore(t, t.TempDir(), 2)
	a, b := keyOfShard(t, s, 0, "a"), keyOfShard(t, s, 0, "b")
	err := s.Do(0, func(tx *Tx) {
		tx.BeginUnit()
		for i := range 3 {
			tx.LogItems(0, a, []byte("SADD"), a, fmt.Appendf(nil, "m%d", i))
		}
		tx.LogItems(0, a, []byte("SADD"), a, []byte("x"), []byte("y"))
		tx.LogItems(0, b, []byte("SADD"), b, []byte("1")) // another key
		tx.LogItems(0, b, []byte("SREM"), b, []byte("1")) // another name
		tx.LogItems(1, b, []byte("SREM"), b, []byte("2")) // another database
		tx.Log(0, a, []byte("DEL"), a)                    // a record of its own
		tx.LogItems(0, a, []byte("RPUSH"), a, []byte("e1"))
		var sp Savepoint
		tx.Save(&sp) // closes the RPUSH record
		tx.LogItems(0, a, []byte("RPUSH"), a, []byte("dropped"))
		tx.RollbackTo(&sp)
		tx.LogItems(0, a, []byte("RPUSH"), a, []byte("e2"))
		big := make([]byte, 1000)
		for range 2 * maxJoined / len(big) { // past maxJoined: a second record
			tx.LogItems(0, b, []byte("HSET"), b, []byte("f"), big)
		}
		tx.EndUnit()
	})
	if err != nil {
		t.Fatal(err)
	}
	r := readAll(t, s, 0)
	want := []string{
		"SADD a m0 m1 m2 x y", "SADD b 1", "SREM b 1", "SREM b 2", "DEL a", "RPUSH a e1", "RPUSH a e2",
	}
	if len(r) < len(want)+2 {
		t.Fatalf("%d records, want %d and the HSETs", len(r), len(want))
	}
	for i, w := range want {
		args := make([]string, len(r[i].Args))
		for j, x := range r[i].Args {
			args[j] = string(x)
		}
		got := fmt.Sprint(args)
		got = got[1 : len(got)-1]
		w = strings.NewReplacer(" a", " "+string(a), " b", " "+string(b)).Replace(w)
		if got != w || r[i].Seq != uint64(i+1) || r[i].Unit.Count != len(r) {
			t.Fatalf("record %d: %q seq %d unit %+v, want %q seq %d in a unit of all %d", i, got, r[i].Seq, r[i].Unit, w, i+1, len(r))
		}
	}
	if r[3].DB != 1 {
		t.Fatalf("record 3 in db %d, want 1", r[3].DB)
	}
	hsets := 0
	for _, e := range r[len(want):] {
		hsets += (len(e.Args) - 2) / 2
		size := 0
		for _, x := range e.Args[2:] {
			size += len(x)
		}
		if size > maxJoined {
			t.Fatalf("a joined HSET of %d bytes, past %d", size, maxJoined)
		}
	}
	if hsets != 2*maxJoined/1000 || r[len(r)-1].Seq != uint64(len(r)) {
		t.Fatalf("%d HSET pairs in %d records, want %d", hsets, len(r)-len(want), 2*maxJoined/1000)
	}
}
