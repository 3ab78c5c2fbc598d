package binlog

import (
	"sync"
	"testing"
)

func TestUnitIDs_IncreaseAfterSeen(t *testing.T) {
	var u UnitIDs
	if id := u.Next(); id != 1 {
		t.Fatalf("first id %d, want 1", id)
	}
	u.Seen(40)
	u.Seen(12) // an older shard's mark never lowers it
	if id := u.Next(); id != 41 {
		t.Fatalf("id after Seen(40) = %d, want 41", id)
	}
}

func TestUnitIDs_UniqueUnderConcurrency(t *testing.T) {
	var u UnitIDs
	var mu sync.Mutex
	seen := map[uint64]bool{}
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 1000 {
				id := u.Next()
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
