package shard

import (
	"bytes"
	"runtime"
	"testing"
	"time"

	"github.com/linxGnu/grocksdb"

	"shardis/codec"
)

// A string of at least refValueMin bytes waits in the overlay as its header and the caller's
// bytes, and goes into the WriteBatch in parts: what every reader sees, in the transaction and
// after the commit, and what the binlog holds, is the value.
func TestTx_BigValueReferencedNotCopied_ReadsAndCommitsWhole(t *testing.T) {
	s := openTestStore(t, t.TempDir(), 1)
	val := bytes.Repeat([]byte("0123456789abcdef"), 2*refValueMin/16)
	key := []byte("big")
	err := s.Do(0, func(tx *Tx) {
		tx.SetMeta(0, key, &codec.Meta{Type: codec.TypeString, Value: val, Expire: 1 << 50})
		tx.Log(0, key, []byte("SET"), key, val)
		if m, ok := tx.Meta(0, key); !ok || !bytes.Equal(m.Value, val) || m.Expire != 1<<50 {
			t.Errorf("in the transaction: %v, %d bytes, expire %d", ok, len(m.Value), m.Expire)
		}
		lower, upper := codec.MetaDBRange(0)
		it := tx.Iterate(key, lower, upper, false)
		n := 0
		for ; it.Valid(); it.Next() {
			var m codec.Meta
			if err := codec.DecodeMeta(it.Value(), &m); err != nil || !bytes.Equal(m.Value, val) {
				t.Errorf("the iterator's value: %v, %d bytes", err, len(m.Value))
			}
			n++
		}
		it.Close()
		if n != 1 {
			t.Errorf("the iterator saw %d keys", n)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	// A second big value, not read before the commit.
	val2 := bytes.Repeat([]byte("z"), refValueMin)
	if err := s.Do(0, func(tx *Tx) { tx.SetMeta(0, key, &codec.Meta{Type: codec.TypeString, Value: val2}) }); err != nil {
		t.Fatal(err)
	}
	_ = s.Do(0, func(tx *Tx) {
		if m, ok := tx.Meta(0, key); !ok || !bytes.Equal(m.Value, val2) || m.Expire != 0 {
			t.Errorf("after the commit: %v, %d bytes, expire %d", ok, len(m.Value), m.Expire)
		}
	})
	recs, err := s.ReadBinlog(0, 0, 10)
	if err != nil || len(recs) != 1 {
		t.Fatalf("binlog: %d records, %v", len(recs), err)
	}
	if a := recs[0].Args; len(a) != 3 || string(a[0]) != "SET" || string(a[1]) != "big" || !bytes.Equal(a[2], val) {
		t.Fatalf("binlog record: %d args", len(a))
	}
}

// A commit of a big value leaves the memtables (where it is twice: the key's value and its
// binlog record) for table files soon, not at the shard's next write.
func TestCommit_BigWriteFlushesItsMemtablesSoon(t *testing.T) {
	s := openTestStore(t, t.TempDir(), 1)
	val := bytes.Repeat([]byte("v"), flushAfterBytes)
	key := []byte("big")
	if err := s.Do(0, func(tx *Tx) {
		tx.SetMeta(0, key, &codec.Meta{Type: codec.TypeString, Value: val})
		tx.Log(0, key, []byte("SET"), key, val)
	}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		n := s.IntProperty("rocksdb.cur-size-all-mem-tables")
		if n < flushAfterBytes/4 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the memtables still hold %d MiB 30 s after a %d MiB commit", n>>20, len(val)>>20)
		}
		time.Sleep(10 * time.Millisecond)
	}
	_ = s.Do(0, func(tx *Tx) {
		if m, ok := tx.Meta(0, key); !ok || !bytes.Equal(m.Value, val) {
			t.Errorf("after the flush: %v, %d bytes", ok, len(m.Value))
		}
	})
}

// putV's pointer list lives in C memory that malloc hands out again: stores into it must not
// go through Go's write barrier, which reads the slot's old contents (a pointer a previous
// call left, to memory since freed) and stopped the process with "found bad pointer in Go
// heap" when a collection was marking.
func TestPutV_ManyCallsWhileCollecting_NoStalePointerSeen(t *testing.T) {
	wb := grocksdb.NewWriteBatch()
	defer wb.Destroy()
	s := openTestStore(t, t.TempDir(), 1)
	cf := s.shards[0].cf
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() { // keep a collection marking most of the time
		defer close(done)
		for {
			select {
			case <-stop:
				return
			default:
				runtime.GC()
			}
		}
	}()
	for i := range 20000 {
		part := make([]byte, 64<<10) // a span of its own, freed soon after
		putV(wb, cf, []byte("k"), part, part[:1], part[:2])
		if i%64 == 0 {
			wb.Clear()
		}
	}
	close(stop)
	<-done
}
