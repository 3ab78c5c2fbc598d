package shard

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"shardis/codec"
)

// emitField writes "field=value " for each element, to see exactly what a stream yields.
func emitField(w *codec.Writer, elem, val []byte) {
	w.Buf = fmt.Appendf(w.Buf, "%s=%s ", elem, val)
}

// drain fills the whole stream in pieces of about maxBytes and returns what it wrote.
func drain(t *testing.T, st *Stream, maxBytes int) string {
	t.Helper()
	var out []byte
	for {
		w := codec.Writer{}
		more, err := st.Fill(&w, maxBytes)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, w.Buf...)
		if !more {
			return string(out)
		}
	}
}

// A stream sees the collection as it was when it was opened, including the writes its own
// transaction made before (they are committed first), and none made after.
func TestStream_SeesSnapshotWithEarlierWritesOfTheGroup(t *testing.T) {
	s := openTestStore(t, t.TempDir(), 1)
	key := []byte("h")
	var version uint64
	var st *Stream
	err := s.Do(0, func(tx *Tx) {
		version = tx.NewVersion(key)
		for _, f := range []string{"b", "a", "c"} {
			tx.PutData(key, append(tx.DataPrefix(0, key, version), f...), []byte("v"+f))
		}
		tx.SetMeta(0, key, &codec.Meta{Type: codec.TypeHash, Version: version, Count: 3})
		var err error
		if st, err = tx.StreamData(0, key, version, nil, nil, false, -1, emitField); err != nil {
			t.Fatal(err)
		}
		tx.PutData(key, append(tx.DataPrefix(0, key, version), "a0"...), []byte("later"))
		tx.DeleteData(key, append(tx.DataPrefix(0, key, version), "c"...))
	})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if got, want := drain(t, st, 1), "a=va b=vb c=vc "; got != want {
		t.Fatalf("stream = %q, want %q", got, want)
	}
	_ = s.Do(0, func(tx *Tx) { // the writes after the stream committed with the group
		if v, ok := tx.GetData(key, append(tx.DataPrefix(0, key, version), "a0"...)); !ok || string(v) != "later" {
			t.Errorf("a0 = %q, %v", v, ok)
		}
		if _, ok := tx.GetData(key, append(tx.DataPrefix(0, key, version), "c"...)); ok {
			t.Error("c still there")
		}
	})
}

// Bounds, limit and direction select the same elements an Iter would.
func TestStream_RangeLimitReverse(t *testing.T) {
	s := openTestStore(t, t.TempDir(), 1)
	key := []byte("big")
	buildHash(t, s, key, 5000)
	var version uint64
	_ = s.Do(0, func(tx *Tx) { m, _ := tx.Meta(0, key); version = m.Version })
	for _, tc := range []struct {
		lower, upper string
		reverse      bool
		limit        int
		first, last  string
		count        int
	}{
		{"", "", false, -1, "field:00000000", "field:00004999", 5000},
		{"field:00001000", "field:00002000", false, -1, "field:00001000", "field:00001999", 1000},
		{"field:00001000", "field:00002000", true, 10, "field:00001999", "field:00001990", 10},
		{"", "", true, 3, "field:00004999", "field:00004997", 3},
		{"zzz", "", false, -1, "", "", 0},
	} {
		var lower, upper []byte
		if tc.lower != "" {
			lower = []byte(tc.lower)
		}
		if tc.upper != "" {
			upper = []byte(tc.upper)
		}
		var st *Stream
		_ = s.Do(0, func(tx *Tx) {
			st, _ = tx.StreamData(0, key, version, lower, upper, tc.reverse, tc.limit, emitField)
		})
		got := strings.Fields(drain(t, st, 4096))
		st.Close()
		if len(got) != tc.count || tc.count > 0 && (got[0] != tc.first+"=value-value-value" || got[len(got)-1] != tc.last+"=value-value-value") {
			t.Errorf("%+v: got %d elements %.40q…", tc, len(got), got)
		}
	}
	if n := s.OpenStreams(); n != 0 {
		t.Fatalf("%d streams open after Close", n)
	}
}

// Closing the store closes the streams still open (RocksDB aborts on a leaked iterator); a
// later Fill reports ErrStreamClosed.
func TestStream_StoreCloseClosesOpenStreams(t *testing.T) {
	s := openTestStore(t, t.TempDir(), 1)
	key := []byte("big")
	buildHash(t, s, key, 100)
	var st *Stream
	_ = s.Do(0, func(tx *Tx) {
		m, _ := tx.Meta(0, key)
		st, _ = tx.StreamData(0, key, m.Version, nil, nil, false, -1, emitField)
	})
	w := codec.Writer{}
	if more, err := st.Fill(&w, 100); !more || err != nil {
		t.Fatalf("Fill = %v, %v", more, err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Fill(&w, 100); !errors.Is(err, ErrStreamClosed) {
		t.Fatalf("Fill after Close = %v, want ErrStreamClosed", err)
	}
	st.Close() // idempotent
}
