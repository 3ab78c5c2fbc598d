package shard

/*
#include <stdlib.h>
#include <rocksdb/c.h>
*/
import "C"

import (
	"runtime"
	"unsafe"

	"github.com/linxGnu/grocksdb"
)

// refValueMin is the size from which a value is referenced rather than copied on its way to
// the WriteBatch: a string set with SetMeta waits in the overlay as its header and the
// caller's bytes (entry.tail), and a binlog record's big argument goes into the batch from the
// command's own bytes. RocksDB copies it into the WriteBatch, once; a 512 MB SET no longer
// holds two more Go copies (the encoded meta, the encoded record) while it commits.
const refValueMin = 1 << 20

// putV puts key -> the concatenation of parts into cf through wb, without joining them in Go
// memory first (rocksdb_writebatch_putv_cf; grocksdb wraps no SliceParts put).
func putV(wb *grocksdb.WriteBatch, cf *grocksdb.ColumnFamilyHandle, key []byte, parts ...[]byte) {
	var pin runtime.Pinner // the lists below hold Go pointers in C memory for the call
	defer pin.Unpin()
	n := len(parts) + 1
	// The pointer list is typed uintptr, not *C.char: a typed pointer store into it goes
	// through Go's write barrier, which reads the slot's old contents, and malloc's memory
	// may still hold a pointer an earlier call left there, to memory since freed ("found bad
	// pointer in Go heap" while a collection marks). The pins keep the parts alive.
	ptrs := (*[1 << 20]uintptr)(C.malloc(C.size_t(n) * C.size_t(unsafe.Sizeof(uintptr(0)))))[:n:n]
	lens := (*[1 << 20]C.size_t)(C.malloc(C.size_t(n) * C.size_t(unsafe.Sizeof(C.size_t(0)))))[:n:n]
	defer C.free(unsafe.Pointer(&ptrs[0]))
	defer C.free(unsafe.Pointer(&lens[0]))
	for i, b := range append([][]byte{key}, parts...) {
		ptrs[i], lens[i] = 0, C.size_t(len(b))
		if len(b) > 0 {
			p := unsafe.SliceData(b)
			pin.Pin(p)
			ptrs[i] = uintptr(unsafe.Pointer(p))
		}
	}
	list := (**C.char)(unsafe.Pointer(&ptrs[0]))
	C.rocksdb_writebatch_putv_cf(cWriteBatch(wb), cCF(cf), 1, list, &lens[0],
		C.int(len(parts)), (**C.char)(unsafe.Pointer(&ptrs[1])), &lens[1])
}

// cWriteBatch and cCF read the C handle grocksdb keeps as the only field of its types.
func cWriteBatch(wb *grocksdb.WriteBatch) *C.rocksdb_writebatch_t {
	return *(**C.rocksdb_writebatch_t)(unsafe.Pointer(wb))
}

func cCF(cf *grocksdb.ColumnFamilyHandle) *C.rocksdb_column_family_handle_t {
	return *(**C.rocksdb_column_family_handle_t)(unsafe.Pointer(cf))
}

// grocksdb's handles must stay one C pointer for cWriteBatch and cCF (a compile error if not).
var (
	_ = [1]struct{}{}[unsafe.Sizeof(grocksdb.WriteBatch{})-unsafe.Sizeof(uintptr(0))]
	_ = [1]struct{}{}[unsafe.Sizeof(grocksdb.ColumnFamilyHandle{})-unsafe.Sizeof(uintptr(0))]
)
