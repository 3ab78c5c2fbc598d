package datatype

import (
	"testing"

	"shardis/codec"
	"shardis/shard"
)

// openStore opens a one-shard store in a temp dir, as shard's own tests do; every key lives in
// shard 0.
func openStore(t testing.TB) *shard.Store {
	t.Helper()
	s, err := shard.Open(shard.Options{Dir: t.TempDir(), Shards: 1, Databases: 16, BlockCacheSize: 8 << 20, WriteBufferSize: 8 << 20})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// do runs fn in one transaction of shard 0 and fails the test if the commit fails.
func do(t testing.TB, s *shard.Store, fn func(tx *shard.Tx)) {
	t.Helper()
	if err := s.Do(0, fn); err != nil {
		t.Fatal(err)
	}
}

// putString stores a string value at key, for wrong-type checks.
func putString(t testing.TB, s *shard.Store, key string) {
	do(t, s, func(tx *shard.Tx) {
		tx.SetMeta(0, []byte(key), &codec.Meta{Type: codec.TypeString, Value: []byte("x")})
	})
}

// drain reads a whole reply stream.
func drain(t testing.TB, st *shard.Stream) string {
	t.Helper()
	defer st.Close()
	var out []byte
	for {
		w := codec.Writer{}
		more, err := st.Fill(&w, 1<<16)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, w.Buf...)
		if !more {
			return string(out)
		}
	}
}

func TestSamplePositions(t *testing.T) {
	for range 100 {
		pos := SamplePositions(10, 4)
		if len(pos) != 4 {
			t.Fatalf("got %v", pos)
		}
		for i, p := range pos {
			if p >= 10 || i > 0 && pos[i-1] >= p {
				t.Fatalf("positions %v not distinct, ascending and below 10", pos)
			}
		}
	}
}
