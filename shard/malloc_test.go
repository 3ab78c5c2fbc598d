package shard

import "testing"

// A block as big as a memtable's comes from malloc's heap, not from an mmap of its own, once the store
// has tuned malloc: without it, glibc maps every block of 128 KiB or more afresh.
func TestTuneMalloc_MemtableBlocksComeFromTheHeap(t *testing.T) {
	// Bigger than a memtable block, so that glibc's own threshold, which rises to the size of
	// the largest mmapped chunk freed so far, is not what keeps it in the heap.
	const block = 24 << 20
	before := mmappedWithBlock(0)
	tuneMalloc()
	if got := mmappedWithBlock(block); got != before {
		t.Fatalf("a %d-byte block is mmapped (%d mmapped chunks, %d without it)", block, got, before)
	}
}
