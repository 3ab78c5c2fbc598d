package binlog

import (
	"errors"
	"io"
	"strings"
	"testing"
)

// memSource is a Source over records in memory; "s" stands alone, "u<id>/<shards>/<count>"
// belongs to a unit.
type memSource struct{ shards [][]Entry }

func (m *memSource) NumShards() int { return len(m.shards) }

func (m *memSource) ReadBinlog(id int, from uint64, limit int) ([]Entry, error) {
	var out []Entry
	for _, e := range m.shards[id] {
		if e.Seq >= from && len(out) < limit {
			out = append(out, e)
		}
	}
	return out, nil
}

// add appends records to shard id; unit 0 records stand alone.
func (m *memSource) add(id int, u Unit, n int) {
	for range n {
		seq := uint64(len(m.shards[id]) + 1)
		m.shards[id] = append(m.shards[id], Entry{Seq: seq, Record: Record{Unit: u, Args: [][]byte{[]byte("SET")}}})
	}
}

// drain runs the assembler to the end, checking that every step continues each of its
// shards exactly where the previous one stopped and that units come whole.
func drain(t *testing.T, src *memSource, chunk int) ([]Step, error) {
	t.Helper()
	a := NewAssembler(src, chunk)
	pos := make([]uint64, src.NumShards())
	var steps []Step
	for {
		s, err := a.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return steps, err
		}
		for _, p := range s.Parts {
			for _, e := range p.Entries {
				if e.Seq != pos[p.Shard]+1 {
					t.Fatalf("step %+v: shard %d record %d after %d", s, p.Shard, e.Seq, pos[p.Shard])
				}
				pos[p.Shard] = e.Seq
				if e.Unit.ID != s.Unit {
					t.Fatalf("record of unit %d in a step of unit %d", e.Unit.ID, s.Unit)
				}
			}
			if s.Unit != 0 && len(p.Entries) != p.Entries[0].Unit.Count {
				t.Fatalf("unit %d: %d records of shard %d, want %d", s.Unit, len(p.Entries), p.Shard, p.Entries[0].Unit.Count)
			}
		}
		if s.Unit == 0 && len(s.Parts) != 1 || s.Unit != 0 && len(s.Parts) != s.Parts[0].Entries[0].Unit.Shards {
			t.Fatalf("step of unit %d has %d parts", s.Unit, len(s.Parts))
		}
		steps = append(steps, s)
	}
	for id, recs := range src.shards {
		if len(recs) > 0 && pos[id] != recs[len(recs)-1].Seq {
			t.Fatalf("shard %d: read to %d of %d", id, pos[id], len(recs))
		}
	}
	return steps, nil
}

func TestAssembler_KeepsUnitsWholeAndInOrder(t *testing.T) {
	for _, chunk := range []int{1, 2, 512} {
		src := &memSource{shards: make([][]Entry, 3)}
		u1 := Unit{ID: 1, Shards: 2, Count: 2}
		u2 := Unit{ID: 2, Shards: 3, Count: 1}
		u3 := Unit{ID: 5, Shards: 2, Count: 3}
		src.add(0, Unit{}, 3)
		src.add(0, u1, 2)
		src.add(1, u1, 2)
		src.add(1, Unit{}, 4)
		src.add(0, u2, 1)
		src.add(1, u2, 1)
		src.add(2, Unit{}, 1)
		src.add(2, u2, 1)
		src.add(0, Unit{}, 1)
		src.add(0, u3, 3)
		src.add(2, u3, 3)
		src.add(2, Unit{}, 2)
		steps, err := drain(t, src, chunk)
		if err != nil {
			t.Fatalf("chunk %d: %v", chunk, err)
		}
		var units []uint64
		records := 0
		for _, s := range steps {
			if s.Unit != 0 {
				units = append(units, s.Unit)
			}
			records += s.Records()
		}
		if len(units) != 3 || units[0] != 1 || units[1] != 2 || units[2] != 5 || records != 24 {
			t.Fatalf("chunk %d: units %v, %d records", chunk, units, records)
		}
	}
}

func TestAssembler_RefusesAnIncompleteUnit(t *testing.T) {
	for name, build := range map[string]func(*memSource){
		"a shard's part is missing": func(m *memSource) {
			m.add(0, Unit{ID: 4, Shards: 2, Count: 1}, 1)
			m.add(1, Unit{}, 2)
		},
		"a part was trimmed inside": func(m *memSource) {
			m.add(0, Unit{ID: 4, Shards: 2, Count: 2}, 1)
			m.add(0, Unit{}, 1)
			m.add(1, Unit{ID: 4, Shards: 2, Count: 1}, 1)
		},
	} {
		src := &memSource{shards: make([][]Entry, 2)}
		build(src)
		_, err := drain(t, src, 16)
		if err == nil || !strings.Contains(err.Error(), "unit 4") {
			t.Errorf("%s: err = %v, want unit 4 named", name, err)
		}
	}
}

func TestAssembler_EmptySource(t *testing.T) {
	if _, err := NewAssembler(&memSource{shards: make([][]Entry, 4)}, 8).Next(); !errors.Is(err, io.EOF) {
		t.Fatalf("Next on empty binlogs = %v, want io.EOF", err)
	}
}

// hookSource is a memSource that runs afterDry once, the first time a read of shard dryShard
// finds nothing: commits that land between the assembler's reads.
type hookSource struct {
	*memSource
	dryShard int
	afterDry func()
}

func (h *hookSource) ReadBinlog(id int, from uint64, limit int) ([]Entry, error) {
	out, err := h.memSource.ReadBinlog(id, from, limit)
	if id == h.dryShard && len(out) == 0 && h.afterDry != nil {
		h.afterDry()
		h.afterDry = nil
	}
	return out, err
}

// A shard read dry, then a record standing alone and a unit committed in it: the unit waits for
// that record instead of being called incomplete (a feed under load met "records in 2 of its 3
// shards" this way).
func TestAssembler_RecordCommittedBeforeAUnitInAShardReadDry_ComesFirst(t *testing.T) {
	mem := &memSource{shards: make([][]Entry, 3)}
	mem.add(0, Unit{}, 1)
	src := &hookSource{memSource: mem, dryShard: 2, afterDry: func() {
		mem.add(2, Unit{}, 1)
		u := Unit{ID: 7, Shards: 3, Count: 1}
		mem.add(0, u, 1)
		mem.add(1, u, 1)
		mem.add(2, u, 1)
	}}
	a := NewAssembler(src, 16)
	pos := make([]uint64, 3)
	var units []uint64
	for range 10 {
		s, err := a.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("Next: %v", err)
		}
		for _, p := range s.Parts {
			for _, e := range p.Entries {
				if e.Seq != pos[p.Shard]+1 {
					t.Fatalf("shard %d: record %d after %d", p.Shard, e.Seq, pos[p.Shard])
				}
				pos[p.Shard] = e.Seq
			}
		}
		if s.Unit != 0 {
			units = append(units, s.Unit)
		}
	}
	if len(units) != 1 || units[0] != 7 || pos[0] != 2 || pos[1] != 1 || pos[2] != 2 {
		t.Fatalf("units %v, positions %v; want unit 7 and every record", units, pos)
	}
}
