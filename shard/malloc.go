package shard

/*
#include <malloc.h>

// shardis_tune_malloc fixes glibc's thresholds (see tuneMalloc); 0 where malloc.h lacks them.
static int shardis_tune_malloc(int mmap_threshold, int trim_threshold) {
#if defined(M_MMAP_THRESHOLD) && defined(M_TRIM_THRESHOLD)
	return mallopt(M_MMAP_THRESHOLD, mmap_threshold) && mallopt(M_TRIM_THRESHOLD, trim_threshold);
#else
	return 0;
#endif
}

// shardis_mmapped_after_malloc allocates and frees n bytes and says how many chunks malloc
// held as mmapped regions meanwhile.
static int shardis_mmapped_after_malloc(size_t n) {
	char *volatile p = malloc(n); // volatile: the compiler may not drop the pair
	int blocks = mallinfo2().hblks;
	free(p);
	return blocks;
}
*/
import "C"

import (
	"os"
	"strings"
	"sync"
)

// RocksDB takes its memtables from malloc in blocks of write-buffer-size per shard / 8 (4 MiB
// by default) and frees them all when a memtable is flushed. glibc serves blocks that size
// with a fresh mmap, so every page of every memtable was faulted in anew: with 1 KiB SETs, a
// tenth of the server's CPU went to page faults. Keeping such blocks in malloc's heap, and not
// handing freed memory back to the kernel until 128 MiB of it sits unused, lets the next
// memtable reuse the pages (shardis-bench SET 1 KiB, same build with and without: 1.10-1.27x).
// The cost is that up to that much freed memory stays in the process, as jemalloc (Redis's
// allocator) also keeps it.
const (
	mallocMmapThreshold = 32 << 20  // glibc's largest; bigger blocks still get their own mmap
	mallocTrimThreshold = 128 << 20 // unused memory kept at the top of a heap
)

var tuneMallocOnce sync.Once

// tuneMalloc sets glibc's malloc thresholds for RocksDB's allocation pattern, once per process,
// unless the user tunes malloc through GLIBC_TUNABLES (then theirs win).
func tuneMalloc() {
	tuneMallocOnce.Do(func() {
		if strings.Contains(os.Getenv("GLIBC_TUNABLES"), "glibc.malloc.") {
			return
		}
		C.shardis_tune_malloc(mallocMmapThreshold, mallocTrimThreshold)
	})
}

// mmappedWithBlock reports how many mmapped chunks glibc holds while a block of n bytes is
// allocated with malloc: the test's view of where a memtable block comes from.
func mmappedWithBlock(n int) int { return int(C.shardis_mmapped_after_malloc(C.size_t(n))) }
