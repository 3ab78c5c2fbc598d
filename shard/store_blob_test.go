package shard

import (
	"bytes"
	"path/filepath"
	"testing"
)

// With BlobMinSize, a big value goes to a blob file and reads back whole after a restart; a
// small one stays in the tree.
func TestStore_BlobMinSize_BigValuesInBlobFiles(t *testing.T) {
	dir := t.TempDir()
	open := func() *Store {
		s, err := Open(Options{Dir: dir, Shards: 1, Databases: 16, BlockCacheSize: 8 << 20,
			WriteBufferSize: 8 << 20, BlobMinSize: 4096})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	big := bytes.Repeat([]byte("0123456789abcdef"), 4096) // 64 KiB
	s := open()
	if err := s.Do(0, func(tx *Tx) {
		tx.SetMeta(0, []byte("big"), str(string(big)))
		tx.SetMeta(0, []byte("small"), str("v"))
	}); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil { // flushes the memtables: the big value leaves for a blob
		t.Fatal(err)
	}
	blobs, _ := filepath.Glob(filepath.Join(dir, "rocksdb", "*.blob"))
	if len(blobs) == 0 {
		t.Fatal("no blob file after flushing a 64 KiB value")
	}
	s = open()
	defer s.Close()
	_ = s.Do(0, func(tx *Tx) {
		if m, ok := tx.Meta(0, []byte("big")); !ok || !bytes.Equal(m.Value, big) {
			t.Errorf("big value after restart: %v, %d bytes", ok, len(m.Value))
		}
		if m, ok := tx.Meta(0, []byte("small")); !ok || string(m.Value) != "v" {
			t.Errorf("small value after restart: %v %q", ok, m.Value)
		}
	})
}
