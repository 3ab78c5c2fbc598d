package shard

/*
#cgo LDFLAGS: -lrocksdb
#include <stdint.h>
#include <string.h>
#include <rocksdb/c.h>

// shardis_iter_fill copies up to max entries from it into buf as
// [key length u32][value length u32][key][value]..., stepping forward (or backward with
// reverse) past each one it copies. It stops before an entry that does not fit in cap; if
// that is the first one, *need says how large buf must be. It returns the count, sets *used
// to the bytes written and *more to whether the iterator still has an entry.
static int shardis_iter_fill(rocksdb_iterator_t* it, int reverse, char* buf, size_t cap,
                             int max, size_t* used, size_t* need, int* more) {
	int n = 0;
	size_t off = 0;
	*need = 0;
	while (n < max && rocksdb_iter_valid(it)) {
		size_t kl, vl;
		const char* k = rocksdb_iter_key(it, &kl);
		const char* v = rocksdb_iter_value(it, &vl);
		size_t sz = 8 + kl + vl;
		if (off + sz > cap) {
			if (n == 0) *need = sz;
			break;
		}
		uint32_t a = (uint32_t)kl, b = (uint32_t)vl;
		memcpy(buf + off, &a, 4);
		memcpy(buf + off + 4, &b, 4);
		memcpy(buf + off + 8, k, kl);
		memcpy(buf + off + 8 + kl, v, vl);
		off += sz;
		n++;
		if (reverse) rocksdb_iter_prev(it); else rocksdb_iter_next(it);
	}
	*used = off;
	*more = rocksdb_iter_valid(it);
	return n;
}
*/
import "C"

import (
	"encoding/binary"
	"sync"
	"unsafe"

	"github.com/linxGnu/grocksdb"
)

// batchReader reads a RocksDB iterator's entries in batches: one cgo call copies many
// entries into a Go buffer, where stepping through them costs nothing. Stepping a grocksdb
// iterator costs four cgo calls and two allocations per entry (Next, Valid, Key, Value),
// which made a 100-element LRANGE spend most of its time crossing into C.
//
// The batch starts small, so a walk that reads one entry (LINDEX-like seeks) copies little,
// and doubles with every refill up to maxBatch entries.
type batchReader struct {
	ro      *grocksdb.ReadOptions
	it      *grocksdb.Iterator
	reverse bool
	buf     []byte
	ents    []batchEntry
	i       int  // current entry in ents
	ended   bool // the iterator had no entry after the last fill
	batch   int  // entries to ask for on the next fill
	first   int  // entries in the first batch after a seek
	bufs    *batchBufs
}

type batchEntry struct{ key, val []byte }

const (
	firstBatch = 8
	maxBatch   = 512
	batchBytes = 64 << 10
)

// openBatchReader opens an iterator over [lower, upper) (nil upper: unbounded) of column
// family cf, positioned at its first entry (last, with reverse). It does not fill the block
// cache: a scan must not evict the working set. close must be called.
func openBatchReader(db *grocksdb.DB, cf *grocksdb.ColumnFamilyHandle, lower, upper []byte, reverse bool) batchReader {
	return openBatchReaderN(db, cf, lower, upper, reverse, firstBatch)
}

// openBatchReaderN is openBatchReader whose first batch is up to first entries (then doubling),
// for a reader that knows how many it wants.
func openBatchReaderN(db *grocksdb.DB, cf *grocksdb.ColumnFamilyHandle, lower, upper []byte, reverse bool, first int) batchReader {
	r := batchReader{first: first, ro: grocksdb.NewDefaultReadOptions(), reverse: reverse}
	r.ro.SetIterateLowerBound(lower) // the C API keeps copies of the bounds
	if upper != nil {
		r.ro.SetIterateUpperBound(upper)
	}
	r.ro.SetFillCache(false)
	r.it = db.NewIteratorCF(r.ro, cf)
	if reverse {
		r.it.SeekToLast()
	} else {
		r.it.SeekToFirst()
	}
	r.reset()
	return r
}

// seek moves to the first entry >= target (<= target, reversed).
func (r *batchReader) seek(target []byte) {
	if r.reverse {
		r.it.SeekForPrev(target)
	} else {
		r.it.Seek(target)
	}
	r.reset()
}

// err returns the iterator's storage error, if any.
func (r *batchReader) err() error { return r.it.Err() }

// close releases the iterator, its options and the buffers.
func (r *batchReader) close() {
	r.release()
	r.it.Close()
	r.ro.Destroy()
}

// cIterator returns the C iterator behind a grocksdb Iterator. grocksdb (v1.7.15, pinned in
// go.mod) keeps it as the struct's only field and does not export it;
// TestBatchReader_MatchesIterator fails if that ever changes.
func cIterator(it *grocksdb.Iterator) *C.rocksdb_iterator_t {
	return *(**C.rocksdb_iterator_t)(unsafe.Pointer(it))
}

// reset forgets the buffered entries and fills from the iterator's current position (after
// a seek).
func (r *batchReader) reset() {
	r.batch = r.first
	if r.batch == 0 {
		r.batch = firstBatch
	}
	r.fill()
}

// batchBufs are the reader's buffers, pooled: allocating 64 KiB per iterator cost more than
// the cgo calls the batches save.
type batchBufs struct {
	buf  []byte
	ents []batchEntry
}

var batchBufPool = sync.Pool{New: func() any { return &batchBufs{buf: make([]byte, batchBytes)} }}

// release returns the buffers to the pool; the reader is unusable afterwards.
func (r *batchReader) release() {
	if r.bufs == nil {
		return
	}
	if cap(r.buf) == batchBytes { // not a one-off buffer grown for a huge value
		r.bufs.buf = r.buf
	}
	clear(r.ents)
	r.bufs.ents = r.ents[:0]
	batchBufPool.Put(r.bufs)
	r.bufs, r.buf, r.ents = nil, nil, nil
}

func (r *batchReader) fill() {
	if r.bufs == nil {
		r.bufs = batchBufPool.Get().(*batchBufs)
		r.buf, r.ents = r.bufs.buf, r.bufs.ents
	}
	r.ents, r.i = r.ents[:0], 0
	r.buf = r.buf[:cap(r.buf)]
	for {
		var used, need C.size_t
		var more C.int
		rev := C.int(0)
		if r.reverse {
			rev = 1
		}
		n := int(C.shardis_iter_fill(cIterator(r.it), rev, (*C.char)(unsafe.Pointer(&r.buf[0])),
			C.size_t(len(r.buf)), C.int(r.batch), &used, &need, &more))
		if n == 0 && need > 0 { // one entry larger than the buffer
			r.buf = make([]byte, int(need))
			continue
		}
		b := r.buf[:used]
		for range n {
			kl, vl := int(binary.NativeEndian.Uint32(b)), int(binary.NativeEndian.Uint32(b[4:]))
			b = b[8:]
			r.ents = append(r.ents, batchEntry{key: b[:kl:kl], val: b[kl : kl+vl : kl+vl]})
			b = b[kl+vl:]
		}
		r.ended = more == 0
		r.batch = min(r.batch*2, maxBatch)
		return
	}
}

// valid reports whether the reader is at an entry.
func (r *batchReader) valid() bool { return r.i < len(r.ents) }

func (r *batchReader) key() []byte { return r.ents[r.i].key }
func (r *batchReader) val() []byte { return r.ents[r.i].val }

// next moves to the following entry. Entries handed out before stay valid until the next
// fill, which reuses the buffer.
func (r *batchReader) next() {
	r.i++
	if r.i == len(r.ents) && !r.ended {
		r.fill()
	}
}
