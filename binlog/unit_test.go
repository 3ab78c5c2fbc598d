package binlog

import (
	"errors"
	"sync"
	"testing"
)

func TestUnitIDs_ReserveBeforeHandingOut(t *testing.T) {
	var persisted []uint64
	reserve := func(upTo uint64) error { persisted = append(persisted, upTo); return nil }
	u := NewUnitIDs(0, reserve)
	if id, err := u.Next(); err != nil || id != 1 || len(persisted) != 1 || persisted[0] != UnitBlock {
		t.Fatalf("first id %d, %v; reserved %v", id, err, persisted)
	}
	for range UnitBlock - 1 {
		_, _ = u.Next()
	}
	if len(persisted) != 1 {
		t.Fatalf("a block reserved %d times", len(persisted))
	}
	if id, _ := u.Next(); id != UnitBlock+1 || len(persisted) != 2 || persisted[1] != 2*UnitBlock {
		t.Fatalf("first id of the second block %d; reserved %v", id, persisted)
	}
	// Reopened: ids go on above what was reserved, whatever was handed out.
	u = NewUnitIDs(persisted[1], reserve)
	if id, _ := u.Next(); id != 2*UnitBlock+1 {
		t.Fatalf("first id after a restart %d, want %d", id, 2*UnitBlock+1)
	}
}

func TestUnitIDs_ReserveErrorIsReturned(t *testing.T) {
	u := NewUnitIDs(0, func(uint64) error { return errors.New("disk full") })
	if _, err := u.Next(); err == nil {
		t.Fatal("Next handed out an id it could not reserve")
	}
}

func TestUnitIDs_UniqueUnderConcurrency(t *testing.T) {
	u := NewUnitIDs(0, func(uint64) error { return nil })
	var mu sync.Mutex
	seen := map[uint64]bool{}
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 1000 {
				id, _ := u.Next()
				mu.Lock()
				if seen[id] {
					t.Errorf("id %d handed out twice", id)
				}
				seen[id] = true
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
}
