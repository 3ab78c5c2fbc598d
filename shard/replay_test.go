package shard

import (
	"io"
	"os"
	"path/filepath"
	"testing"
)

// TestReplayProgress_ReadsThePositionOfTheOpenLog: while a log file is open (as RocksDB has
// it open while it replays it), the progress is the files before it, whole, plus the offset
// reached in it; it never goes back, and it is unknown (0) before any is open.
func TestReplayProgress_ReadsThePositionOfTheOpenLog(t *testing.T) {
	dir := t.TempDir()
	logs := filepath.Join(dir, "rocksdb")
	if err := os.MkdirAll(logs, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, size := range map[string]int{"000010.log": 1000, "000012.log": 500} {
		if err := os.WriteFile(filepath.Join(logs, name), make([]byte, size), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	s, err := New(Options{Dir: dir, Shards: 1, Databases: 16})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if done, total := s.ReplayProgress(); done != 0 || total != 1500 {
		t.Fatalf("before any log is open: %d of %d, want 0 of 1500", done, total)
	}
	f, err := os.Open(filepath.Join(logs, "000012.log"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Seek(200, io.SeekStart); err != nil {
		t.Fatal(err)
	}
	if done, total := s.ReplayProgress(); done != 1200 || total != 1500 {
		t.Fatalf("the second log open at 200: %d of %d, want 1200 of 1500", done, total)
	}
	f.Close()
	if done, _ := s.ReplayProgress(); done != 1200 {
		t.Fatalf("no log open any more: %d, want the last figure, 1200", done)
	}
}
