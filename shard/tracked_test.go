package shard

import (
	"errors"
	"slices"
	"testing"
)

type recTracker struct {
	keys    []string
	writers []int64
	flushes int
}

func (r *recTracker) Apply(accesses []Access) {
	for _, a := range accesses {
		switch {
		case a.Flush:
			r.flushes++
		case a.Reader != nil:
			r.keys = append(r.keys, "read:"+string(a.Key))
			r.writers = append(r.writers, a.Client)
		default:
			r.keys = append(r.keys, string(a.Key))
			r.writers = append(r.writers, a.Client)
		}
	}
}

// While tracking is on, a commit reports every user key it wrote once per run of writes, with
// the writer, in order with the reads recorded; a failed commit and a commit while tracking
// is off report nothing; FLUSHDB reports a flush (once for every database).
func TestTracked_ReportsCommittedWrites(t *testing.T) {
	s := openTestStore(t, t.TempDir(), 1)
	rec := &recTracker{}
	s.SetTracker(rec)
	write := func(fn func(tx *Tx)) {
		t.Helper()
		if err := s.Do(0, fn); err != nil {
			t.Fatal(err)
		}
	}
	write(func(tx *Tx) { tx.SetMeta(0, []byte("off"), str("1")) })
	s.TrackWrites(true)
	write(func(tx *Tx) {
		tx.SetWriter(7, nil)
		tx.SetMeta(0, []byte("a"), str("1"))
		tx.SetMeta(0, []byte("a"), str("2"))
		tx.TrackRead([][]byte{[]byte("a")}, 9, testReader{})
		tx.SetWriter(8, nil)
		tx.SetMeta(3, []byte("b"), str("1"))
		tx.Delete(0, []byte("off"))
	})
	if !slices.Equal(rec.keys, []string{"a", "read:a", "b", "off"}) || !slices.Equal(rec.writers, []int64{7, 9, 8, 8}) {
		t.Fatalf("reported %v by %v", rec.keys, rec.writers)
	}
	rec.keys, rec.writers = nil, nil
	_ = s.Do(0, func(tx *Tx) {
		tx.SetMeta(0, []byte("failed"), str("1"))
		tx.Fail(errors.New("boom"))
	})
	if len(rec.keys) != 0 {
		t.Fatalf("a failed commit reported %v", rec.keys)
	}
	write(func(tx *Tx) { tx.FlushDB(0, 0); tx.FlushDB(0, 1) })
	if rec.flushes != 1 {
		t.Fatalf("flushes %d", rec.flushes)
	}
	s.TrackWrites(false)
	write(func(tx *Tx) { tx.SetMeta(0, []byte("c"), str("1")) })
	if len(rec.keys) != 0 {
		t.Fatalf("reported %v with tracking off", rec.keys)
	}
}

// A transaction that began before tracking was switched on reports every key it wrote, even
// those written while nothing was recorded.
func TestTracked_TransactionStraddlingTheSwitch(t *testing.T) {
	s := openTestStore(t, t.TempDir(), 2)
	rec := &recTracker{}
	s.SetTracker(rec)
	h := s.Acquire([]int{0, 1})
	h.Tx().SetMeta(0, []byte("early"), str("1"))
	s.TrackWrites(true)
	h.Tx().SetMeta(0, []byte("late"), str("1"))
	if err := h.Release(); err != nil {
		t.Fatal(err)
	}
	slices.Sort(rec.keys)
	if !slices.Equal(rec.keys, []string{"early", "late"}) {
		t.Fatalf("reported %v", rec.keys)
	}
}

// testReader stands for a tracking connection's state (tracking.Conn).
type testReader struct{}

func (testReader) Remembers(bool) bool { return true }
