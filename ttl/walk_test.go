package ttl

import (
	"bytes"
	"sort"
	"testing"
)

// fakeShard holds an index and the expire times of metas, as a shard's transaction would.
type fakeShard struct {
	index   [][]byte
	expires map[string]int64 // pdb|key -> expire ms
	removed []string
	dropped int
}

func (f *fakeShard) Entries(upper []byte) Cursor {
	sort.Slice(f.index, func(i, j int) bool { return bytes.Compare(f.index[i], f.index[j]) < 0 })
	var in [][]byte
	for _, k := range f.index {
		if bytes.Compare(k, upper) < 0 {
			in = append(in, k)
		}
	}
	return &sliceCursor{keys: in}
}

func (f *fakeShard) ExpireOf(pdb int, key []byte) (int64, bool) {
	at, ok := f.expires[string(rune('0'+pdb))+string(key)]
	return at, ok
}

func (f *fakeShard) RemoveExpired(pdb int, key []byte) { f.removed = append(f.removed, string(key)) }
func (f *fakeShard) DropEntry([]byte)                  { f.dropped++ }

type sliceCursor struct {
	keys   [][]byte
	closed bool
}

func (c *sliceCursor) Valid() bool { return len(c.keys) > 0 }
func (c *sliceCursor) Key() []byte { return c.keys[0] }
func (c *sliceCursor) Next()       { c.keys = c.keys[1:] }
func (c *sliceCursor) Err() error  { return nil }
func (c *sliceCursor) Close()      { c.closed = true }

func TestWalk_DeletesDueKeysAndDropsStaleEntries(t *testing.T) {
	f := &fakeShard{expires: map[string]int64{"0a": 100, "0b": 500, "1c": 90}}
	f.index = [][]byte{
		AppendKey(nil, 100, 0, []byte("a")), // due, current: deleted
		AppendKey(nil, 80, 0, []byte("b")),  // due, but b's expire moved to 500: stale
		AppendKey(nil, 90, 1, []byte("c")),  // due, current
		AppendKey(nil, 70, 0, []byte("gone")),
		AppendKey(nil, 500, 0, []byte("b")), // not due
	}
	n, err := Walk(f, 200, 10)
	if err != nil || n != 4 {
		t.Fatalf("Walk = %d, %v; want 4 entries handled", n, err)
	}
	if len(f.removed) != 2 || f.removed[0] != "c" || f.removed[1] != "a" || f.dropped != 2 {
		t.Fatalf("removed %v (oldest first), dropped %d", f.removed, f.dropped)
	}
}

func TestWalk_StopsAtLimit(t *testing.T) {
	f := &fakeShard{expires: map[string]int64{}}
	for i := range 10 {
		k := []byte{'k', byte('0' + i)}
		f.index = append(f.index, AppendKey(nil, int64(i), 0, k))
		f.expires["0"+string(k)] = int64(i)
	}
	if n, err := Walk(f, 100, 4); err != nil || n != 4 || len(f.removed) != 4 {
		t.Fatalf("Walk = %d, %v, removed %v; want 4", n, err, f.removed)
	}
}
