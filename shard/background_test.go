package shard

import (
	"fmt"
	"testing"
	"time"

	"shardis/binlog"
)

// Retention by age drops what is older than the window and keeps the rest, reading the
// marks instead of the binlog; after a restart the records written before it are known to be
// no newer than the newest of them. The window is seconds wide so that a busy machine's stalls
// (a slow close and reopen, a descheduled writer) cannot move a record across it.
func TestTrimBinlog_ByAge(t *testing.T) {
	const window = 3 * time.Second
	dir := t.TempDir()
	s := openTestStore(t, dir, 1)
	logN := func(s *Store, n int) {
		for i := range n {
			_ = s.Do(0, func(tx *Tx) { tx.Log(0, []byte("k"), []byte("SET"), []byte("k"), fmt.Appendf(nil, "%d", i)) })
		}
	}
	logN(s, 10)
	time.Sleep(window + time.Second) // the first records are now older than the window
	logN(s, 10)
	if n, err := s.Shard(0).TrimBinlog(0, window); err != nil || n != 10 {
		t.Fatalf("trim = %d, %v; want the 10 records older than the window", n, err)
	}
	if first, last := s.Shard(0).BinlogRange(); first != 11 || last != 20 {
		t.Fatalf("range after trim %d..%d", first, last)
	}
	if n, _ := s.Shard(0).TrimBinlog(0, time.Hour); n != 0 {
		t.Fatalf("a one-hour window trimmed %d", n)
	}

	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = openTestStore(t, dir, 1)
	if n, _ := s.Shard(0).TrimBinlog(0, window); n != 0 {
		t.Fatalf("right after the restart trimmed %d: the newest record is younger than the window", n)
	}
	time.Sleep(window + 100*time.Millisecond)
	if n, _ := s.Shard(0).TrimBinlog(0, window); n != 9 {
		t.Fatalf("trim after the window = %d, want 9 (the newest record always stays)", n)
	}
	// The binlog still reads back in order through its vector memtable.
	var seqs []uint64
	_ = s.Do(0, func(tx *Tx) {
		it := tx.IterateBinlog(0, 0)
		defer it.Close()
		for ; it.Valid(); it.Next() {
			seq, _ := binlog.KeySeq(it.Key())
			seqs = append(seqs, seq)
		}
	})
	if fmt.Sprint(seqs) != "[20]" {
		t.Fatalf("records left %v, want [20]", seqs)
	}
}
