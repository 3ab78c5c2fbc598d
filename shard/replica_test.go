package shard

import (
	"fmt"
	"testing"

	"shardis/binlog"
	"shardis/codec"
)

// copySnapshot full-syncs dst from src as replication does: a snapshot of src walked shard by
// shard into a Loader of dst.
func copySnapshot(t *testing.T, src, dst *Store) []uint64 {
	t.Helper()
	sn, err := src.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	defer sn.Close()
	l, err := dst.StartLoad()
	if err != nil {
		t.Fatal(err)
	}
	for id := range src.NumShards() {
		if err := sn.Walk(id, func(k, v []byte) error { return l.Put(id, k, v) }); err != nil {
			t.Fatal(err)
		}
		if err := l.FinishShard(id, sn.Seq(id)); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.Finish(); err != nil {
		t.Fatal(err)
	}
	return sn.Seqs()
}

func writeKeys(t *testing.T, s *Store, prefix string, n int) {
	t.Helper()
	for i := range n {
		k := []byte(fmt.Sprintf("%s%d", prefix, i))
		if err := s.Do(s.ShardOf(k), func(tx *Tx) {
			tx.SetMeta(0, k, str("v"))
			tx.Log(0, k, []byte("SET"), k, []byte("v"))
		}); err != nil {
			t.Fatal(err)
		}
	}
}

func TestLoader_FullSync_ReplicaHoldsTheSnapshotAndItsPositions(t *testing.T) {
	master := openTestStore(t, t.TempDir(), 2)
	replica := openTestStore(t, t.TempDir(), 2)
	writeKeys(t, master, "m", 50)
	writeKeys(t, replica, "old", 30) // replaced by the sync
	seqs := copySnapshot(t, master, replica)
	writeKeys(t, master, "after", 5) // not in the snapshot

	var total int64
	for id := range 2 {
		total += replica.Shard(id).Keys(0)
		if _, last := replica.Shard(id).BinlogRange(); last != seqs[id] {
			t.Errorf("shard %d: replica's last sequence %d, want the snapshot's %d", id, last, seqs[id])
		}
	}
	if total != 50 {
		t.Fatalf("replica holds %d keys, want the master's 50 at the snapshot", total)
	}
	for _, k := range []string{"m0", "m49"} {
		key := []byte(k)
		_ = replica.Do(replica.ShardOf(key), func(tx *Tx) {
			if m, ok := tx.Meta(0, key); !ok || string(m.Value) != "v" {
				t.Errorf("%s on the replica: %v %q", k, ok, m.Value)
			}
		})
	}
	key := []byte("old0")
	_ = replica.Do(replica.ShardOf(key), func(tx *Tx) {
		if tx.Exists(0, key) {
			t.Error("a key the replica held before the full sync survived it")
		}
	})
}

func TestTx_Mirror_StoresTheMastersRecordsAtTheirSequences(t *testing.T) {
	master := openTestStore(t, t.TempDir(), 1)
	replica := openTestStore(t, t.TempDir(), 1)
	writeKeys(t, master, "k", 3)
	copySnapshot(t, master, replica)
	writeKeys(t, master, "n", 2)
	_, last := master.Shard(0).BinlogRange()
	recs, err := master.ReadBinlog(0, last-1, 10)
	if err != nil || len(recs) != 2 {
		t.Fatalf("master's records: %v %v", recs, err)
	}
	err = replica.Do(0, func(tx *Tx) {
		tx.SetApplying(true)
		for _, r := range recs {
			k := r.Args[1]
			tx.SetMeta(0, k, str("v"))
			tx.Log(0, k, r.Args...) // suppressed while applying
			raw := binlog.AppendRecord(nil, r.Time, r.DB, r.Args)
			if err := tx.Mirror(0, r.Seq, raw); err != nil {
				t.Error(err)
			}
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, rl := replica.Shard(0).BinlogRange(); rl != last {
		t.Fatalf("replica's last sequence %d, want the master's %d", rl, last)
	}
	got, err := replica.ReadBinlog(0, 0, 10)
	if err != nil || len(got) != 2 || got[0].Seq != last-1 || string(got[1].Args[1]) != "n1" {
		t.Fatalf("replica's binlog %v %v, want the master's two records", got, err)
	}
	err = replica.Do(0, func(tx *Tx) {
		tx.SetApplying(true)
		if err := tx.Mirror(0, last, []byte("x")); err == nil {
			t.Error("a record at an applied sequence was accepted")
		}
	})
	if err == nil {
		t.Fatal("the commit of an out-of-order mirror succeeded")
	}
}

func TestStore_Replica_HidesExpiredKeysWithoutDeleting(t *testing.T) {
	s := openTestStore(t, t.TempDir(), 1)
	k := []byte("gone")
	_ = s.Do(0, func(tx *Tx) {
		tx.SetMeta(0, k, &codec.Meta{Type: codec.TypeString, Value: []byte("v"), Expire: tx.Now() - 1})
	})
	s.SetReplica(true)
	_, before := s.Shard(0).BinlogRange()
	_ = s.Do(0, func(tx *Tx) {
		if tx.Exists(0, k) {
			t.Error("an expired key is visible on a replica")
		}
	})
	if got := s.Shard(0).Keys(0); got != 1 {
		t.Fatalf("the replica deleted the expired key: %d keys", got)
	}
	if _, after := s.Shard(0).BinlogRange(); after != before {
		t.Fatal("the replica logged a DEL for an expired key")
	}
	_ = s.Do(0, func(tx *Tx) {
		tx.SetApplying(true)
		if !tx.Exists(0, k) {
			t.Error("a master's record being applied does not see the expired key")
		}
	})
}

func TestStore_SeqFloor_SurvivesARestartWithAnEmptyBinlog(t *testing.T) {
	dir := t.TempDir()
	master := openTestStore(t, t.TempDir(), 1)
	writeKeys(t, master, "k", 7)
	replica, err := Open(Options{Dir: dir, Shards: 1, Databases: 16, BlockCacheSize: 8 << 20, WriteBufferSize: 8 << 20})
	if err != nil {
		t.Fatal(err)
	}
	seqs := copySnapshot(t, master, replica)
	if err := replica.Close(); err != nil {
		t.Fatal(err)
	}
	again := openTestStore(t, dir, 1)
	if _, last := again.Shard(0).BinlogRange(); last != seqs[0] || seqs[0] != 7 {
		t.Fatalf("after a restart the replica is at sequence %d, want %d (7)", last, seqs[0])
	}
}

func TestLoader_Tx_KeysWrittenAsCommandsAndSequencesStartOver(t *testing.T) {
	replica := openTestStore(t, t.TempDir(), 2)
	writeKeys(t, replica, "old", 40) // the replica had a history: its sequences are past 0
	replica.SetReplica(true)
	l, err := replica.StartLoad()
	if err != nil {
		t.Fatal(err)
	}
	tx := l.Tx()
	for i := range 10 {
		tx.SetMeta(1, []byte(fmt.Sprintf("k%d", i)), str("v"))
		if i == 4 {
			if err := l.Commit(); err != nil {
				t.Fatal(err)
			}
		}
	}
	for id := range 2 {
		if err := l.FinishShard(id, 0); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.Finish(); err != nil {
		t.Fatal(err)
	}
	var keys, old int64
	for id := range 2 {
		keys += replica.Shard(id).Keys(1)
		old += replica.Shard(id).Keys(0)
		if _, last := replica.Shard(id).BinlogRange(); last != 0 {
			t.Errorf("shard %d: last sequence %d after the load, want 0 (the old history must not come back)", id, last)
		}
	}
	if keys != 10 || old != 0 {
		t.Fatalf("after the load: %d keys in db 1 (want 10), %d in db 0 (want 0)", keys, old)
	}
}

func TestLoader_TxAborted_NothingOfItStays(t *testing.T) {
	replica := openTestStore(t, t.TempDir(), 2)
	l, err := replica.StartLoad()
	if err != nil {
		t.Fatal(err)
	}
	tx := l.Tx()
	for i := range 10 {
		tx.SetMeta(0, []byte(fmt.Sprintf("k%d", i)), str("v"))
	}
	if err := l.Commit(); err != nil {
		t.Fatal(err)
	}
	l.Tx().SetMeta(0, []byte("late"), str("v"))
	l.Abort()
	var keys int64
	for id := range 2 {
		keys += replica.Shard(id).Keys(0)
	}
	key := []byte("late")
	_ = replica.Do(replica.ShardOf(key), func(tx *Tx) {
		if tx.Exists(0, key) {
			t.Error("a key written after the last commit survived Abort")
		}
	})
	if keys != 0 {
		t.Fatalf("%d keys after Abort, want 0", keys)
	}
}
