package shard

import (
	"fmt"
	"testing"
)

func readState(t *testing.T, s *Store, id int, prefix string) string {
	t.Helper()
	var out string
	if err := s.ReadStatePrefix(id, []byte(prefix), func(name, val []byte) {
		out += fmt.Sprintf("%s=%s;", name, val)
	}); err != nil {
		t.Fatal(err)
	}
	return out
}

// State keys commit with the group, survive a reopen, are untouched by FLUSHDB, and a
// prefix delete removes exactly the names under the prefix.
func TestState_PutDeletePrefix(t *testing.T) {
	dir := t.TempDir()
	s := openTestStore(t, dir, 2)
	if err := s.Do(0, func(tx *Tx) {
		tx.PutState(0, []byte("fa"), []byte("1"))
		tx.PutState(0, []byte("fb"), []byte("2"))
		tx.PutState(0, []byte("g"), []byte("3"))
		tx.SetMeta(0, []byte("k"), str("v"))
	}); err != nil {
		t.Fatal(err)
	}
	if got := readState(t, s, 0, "f"); got != "a=1;b=2;" {
		t.Fatalf("after put: %q", got)
	}
	if got := readState(t, s, 1, "f"); got != "" {
		t.Fatalf("shard 1 holds %q", got)
	}
	if err := s.Do(0, func(tx *Tx) { tx.FlushDB(0, 0) }); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = openTestStore(t, dir, 2)
	if got := readState(t, s, 0, "f"); got != "a=1;b=2;" {
		t.Fatalf("after FLUSHDB and reopen: %q", got)
	}
	if err := s.Do(0, func(tx *Tx) {
		tx.DeleteState(0, []byte("fa"))
		tx.DeleteStatePrefix(0, []byte("f"))
		tx.PutState(0, []byte("fc"), []byte("4")) // after the range delete: kept
	}); err != nil {
		t.Fatal(err)
	}
	if got := readState(t, s, 0, "f") + readState(t, s, 0, "g"); got != "c=4;=3;" {
		t.Fatalf("after deletes: %q", got)
	}
	// A shard the transaction does not hold fails it.
	if err := s.Do(0, func(tx *Tx) { tx.PutState(1, []byte("fx"), []byte("x")) }); err == nil {
		t.Fatal("PutState on a shard not held committed")
	}
}
