package shard

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/linxGnu/grocksdb"
)

// The batch reader yields exactly what stepping the grocksdb iterator yields, forward and
// backward, after seeks, across refills and with values larger than its buffer.
func TestBatchReader_MatchesIterator(t *testing.T) {
	s := openTestStore(t, t.TempDir(), 1)
	cf := s.shards[0].cf
	wb := grocksdb.NewWriteBatch()
	defer wb.Destroy()
	for i := range 3000 {
		v := []byte(fmt.Sprint(i))
		if i%700 == 5 {
			v = bytes.Repeat([]byte{'x'}, 200<<10) // larger than one batch buffer
		}
		wb.PutCF(cf, fmt.Appendf(nil, "k%05d", i), v)
	}
	if err := s.db.Write(s.wo, wb); err != nil {
		t.Fatal(err)
	}
	walk := func(reverse bool, seek []byte, viaBatch bool) (keys []string, vals int) {
		ro := grocksdb.NewDefaultReadOptions()
		defer ro.Destroy()
		it := s.db.NewIteratorCF(ro, cf)
		defer it.Close()
		switch {
		case seek != nil && reverse:
			it.SeekForPrev(seek)
		case seek != nil:
			it.Seek(seek)
		case reverse:
			it.SeekToLast()
		default:
			it.SeekToFirst()
		}
		if viaBatch {
			r := batchReader{it: it, reverse: reverse}
			for r.reset(); r.valid(); r.next() {
				keys = append(keys, string(r.key()))
				vals += len(r.val())
			}
			return keys, vals
		}
		for ; it.Valid(); step(it, reverse) {
			keys = append(keys, string(it.Key().Data()))
			vals += len(it.Value().Data())
		}
		return keys, vals
	}
	for _, tc := range []struct {
		reverse bool
		seek    []byte
	}{{false, nil}, {true, nil}, {false, []byte("k01500")}, {true, []byte("k01500")}} {
		wantKeys, wantVals := walk(tc.reverse, tc.seek, false)
		gotKeys, gotVals := walk(tc.reverse, tc.seek, true)
		if fmt.Sprint(gotKeys) != fmt.Sprint(wantKeys) || gotVals != wantVals {
			t.Fatalf("reverse %v seek %q: %d keys, %d value bytes; want %d, %d",
				tc.reverse, tc.seek, len(gotKeys), gotVals, len(wantKeys), wantVals)
		}
	}
}

func step(it *grocksdb.Iterator, reverse bool) {
	if reverse {
		it.Prev()
	} else {
		it.Next()
	}
}
