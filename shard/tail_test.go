package shard

import (
	"bytes"
	"fmt"
	"slices"
	"testing"

	"shardis/binlog"
)

// readFamily reads shard id's binlog from the column family, as ReadBinlog did before tails.
func readFamily(t *testing.T, s *Store, id int, from uint64) []binlog.Entry {
	t.Helper()
	var out []binlog.Entry
	var rerr error
	if err := s.Do(id, func(tx *Tx) {
		it := tx.IterateBinlog(id, from)
		defer it.Close()
		out, rerr = binlog.Read(it, 1<<20, nil)
	}); err != nil || rerr != nil {
		t.Fatal(err, rerr)
	}
	return out
}

func sameEntries(a, b []binlog.Entry) bool {
	return slices.EqualFunc(a, b, func(x, y binlog.Entry) bool {
		return x.Seq == y.Seq && x.DB == y.DB && x.Time == y.Time && x.Unit == y.Unit &&
			slices.EqualFunc(x.Args, y.Args, bytes.Equal)
	})
}

// A feed that keeps up reads its shard's newest records from memory: no iterator is opened
// on the binlog family (whose vector memtable sorts a copy of itself for each one).
func TestReadBinlog_CaughtUpReader_ServedWithoutAnIterator(t *testing.T) {
	s := openTestStore(t, t.TempDir(), 2)
	k := keyOfShard(t, s, 0, "k")
	if _, err := s.ReadBinlog(0, 1, 512); err != nil { // a feed starts
		t.Fatal(err)
	}
	for i := range 5 {
		if err := s.Do(0, func(tx *Tx) { tx.Log(0, k, []byte("SET"), k, fmt.Appendf(nil, "%d", i)) }); err != nil {
			t.Fatal(err)
		}
	}
	before := binlogIterators.Load()
	got, err := s.ReadBinlog(0, 3, 512)
	if err != nil {
		t.Fatal(err)
	}
	if n := binlogIterators.Load() - before; n != 0 {
		t.Errorf("a caught-up read opened %d binlog iterators, want 0", n)
	}
	if !sameEntries(got, readFamily(t, s, 0, 3)) || len(got) != 3 {
		t.Fatalf("records from 3: %+v", got)
	}
}

// Whatever happened to the binlog (single-shard commits, units over shards, a rolled-back
// savepoint, retention, a big record, a full sync's reload), ReadBinlog answers what the
// family holds from every position.
func TestReadBinlog_AfterAnyChange_SameRecordsAsTheFamily(t *testing.T) {
	s := openTestStore(t, t.TempDir(), 3)
	a, b := keyOfShard(t, s, 0, "a"), keyOfShard(t, s, 2, "b")
	check := func(what string) {
		t.Helper()
		for id := range 3 {
			_, last := s.Shard(id).BinlogRange()
			for from := uint64(0); from <= last+2; from++ {
				got, err := s.ReadBinlog(id, from, 4)
				if err != nil {
					t.Fatal(err)
				}
				want := readFamily(t, s, id, from)
				want = want[:min(len(want), 4)]
				if !sameEntries(got, want) {
					t.Fatalf("%s: shard %d from %d: got %d records %+v, want %+v", what, id, from, len(got), got, want)
				}
			}
		}
	}
	check("empty")
	for i := range 6 {
		if err := s.Do(0, func(tx *Tx) { tx.Log(0, a, []byte("SET"), a, fmt.Appendf(nil, "%d", i)) }); err != nil {
			t.Fatal(err)
		}
	}
	check("single-shard commits")
	h := s.Acquire([]int{0, 1, 2})
	h.Tx().Log(0, a, []byte("SET"), a, []byte("u"))
	h.Tx().Log(0, b, []byte("SET"), b, []byte("u"))
	if err := h.Release(); err != nil {
		t.Fatal(err)
	}
	check("a unit")
	if err := s.Do(2, func(tx *Tx) {
		tx.Log(0, b, []byte("SET"), b, []byte("kept"))
		var sp Savepoint
		tx.Save(&sp)
		tx.Log(0, b, []byte("SET"), b, []byte("rolled back"))
		tx.RollbackTo(&sp)
	}); err != nil {
		t.Fatal(err)
	}
	check("a savepoint rolled back")
	if _, err := s.Shard(0).TrimBinlog(3, 0); err != nil {
		t.Fatal(err)
	}
	check("trimmed to 3")
	big := bytes.Repeat([]byte("x"), tailMaxBatch+1)
	if err := s.Do(0, func(tx *Tx) { tx.Log(0, a, []byte("SET"), a, big) }); err != nil {
		t.Fatal(err)
	}
	if err := s.Do(0, func(tx *Tx) { tx.Log(0, a, []byte("SET"), a, []byte("after big")) }); err != nil {
		t.Fatal(err)
	}
	check("a big record")
	l, err := s.StartLoad()
	if err != nil {
		t.Fatal(err)
	}
	for id := range 3 {
		if err := l.FinishShard(id, 100); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.Finish(); err != nil {
		t.Fatal(err)
	}
	check("a full sync's reload")
	if err := s.Do(0, func(tx *Tx) {
		if err := tx.Mirror(0, 101, binlog.AppendRecord(nil, 1, 0, [][]byte{[]byte("SET"), a, []byte("m")})); err != nil {
			t.Error(err)
		}
	}); err != nil {
		t.Fatal(err)
	}
	check("a mirrored record")
}
