package binlog

import (
	"errors"
	"fmt"
	"io"
)

// Step is what a reader of every shard's binlog applies in one commit: a run of one shard's
// records that stand alone, or every record of one unit, from each of its shards.
type Step struct {
	Unit  uint64 // 0: Parts holds one shard's records, none of them in a unit
	Parts []Part // ascending shard
}

// Part is the records of one shard in a step, in sequence order.
type Part struct {
	Shard   int
	Entries []Entry
}

// Records returns how many records the step holds.
func (s Step) Records() int {
	n := 0
	for _, p := range s.Parts {
		n += len(p.Entries)
	}
	return n
}

// Assembler reads every shard's binlog from a Source and hands out Steps that keep units
// whole. Records that stand alone come as runs of one shard; a unit comes once the head of
// every shard it spans is at it. That always happens: the shards of a unit were held
// together at its commit, so in each of them every earlier unit has a smaller id and comes
// before it; the unit with the smallest id among the shards' heads is therefore at the head of
// all its shards, once their records that stand alone are out.
//
// An Assembler is used by one goroutine. Steps own their entries.
type Assembler struct {
	src   Source
	chunk int
	heads []head
	turn  int // the shard whose records that stand alone go next, round robin
	// contiguous: every shard's records must follow on from where the reader is
	// (NewAssemblerAfter); a gap is ErrTrimmed.
	contiguous bool
}

// head is what the assembler has read of one shard and not handed out yet.
type head struct {
	buf  []Entry
	next uint64 // sequence to read from
	dry  bool   // the last read returned nothing
}

// NewAssembler reads src in reads of up to chunk records, which is also the most records a
// step of one shard holds.
func NewAssembler(src Source, chunk int) *Assembler {
	return &Assembler{src: src, chunk: max(chunk, 1), heads: make([]head, src.NumShards())}
}

// NewAssemblerAfter is NewAssembler for a reader that has every shard's records up to
// after[shard] already (a replica's position): it starts after them.
func NewAssemblerAfter(src Source, chunk int, after []uint64) *Assembler {
	a := NewAssembler(src, chunk)
	a.contiguous = true
	for id := range a.heads {
		if id < len(after) {
			a.heads[id].next = after[id] + 1
		}
	}
	return a
}

// ErrTrimmed is returned by an Assembler made by NewAssemblerAfter when a shard's binlog no
// longer holds the record it reads next: retention trimmed it.
var ErrTrimmed = errors.New("binlog: the records to read next were trimmed")

// fill reads more of shard id when fewer than want of its records are buffered.
func (a *Assembler) fill(id, want int) error {
	h := &a.heads[id]
	for len(h.buf) < want {
		got, err := a.src.ReadBinlog(id, h.next, max(a.chunk, want-len(h.buf)))
		if err != nil {
			return err
		}
		h.dry = len(got) == 0
		if h.dry {
			return nil
		}
		if a.contiguous && got[0].Seq != h.next {
			return fmt.Errorf("%w: shard %d holds %d next, the reader needs %d", ErrTrimmed, id, got[0].Seq, h.next)
		}
		// Entries handed out are capped slices before buf: appending never writes over them.
		h.buf = append(h.buf, got...)
		h.next = got[len(got)-1].Seq + 1
	}
	return nil
}

// Next returns the next step, or io.EOF when every binlog has been read to its end. An error
// names the unit that cannot be assembled whole (its records are not all there: the binlog was
// trimmed inside it, or the source is damaged).
func (a *Assembler) Next() (Step, error) {
	for {
		step, err := a.next()
		// errLater: a shard read dry before now holds records that come before the unit;
		// each retry hands out records that were read, so this ends.
		if err != errLater {
			return step, err
		}
	}
}

// errLater says a unit cannot be taken yet: a shard that was dry when the unit was chosen
// has, since, records at its head that come before the unit (committed before it).
var errLater = errors.New("binlog: records to hand out before the unit")

func (a *Assembler) next() (Step, error) {
	n := len(a.heads)
	for range n {
		id := a.turn
		a.turn = (a.turn + 1) % n
		h := &a.heads[id]
		if len(h.buf) == 0 {
			if err := a.fill(id, 1); err != nil {
				return Step{}, err
			}
		}
		run := 0
		for run < len(h.buf) && run < a.chunk && h.buf[run].Unit.ID == 0 {
			run++
		}
		if run > 0 {
			part := Part{Shard: id, Entries: h.buf[:run:run]}
			h.buf = h.buf[run:]
			return Step{Parts: []Part{part}}, nil
		}
	}
	// Every shard is dry or at a unit.
	unit := uint64(0)
	for id := range a.heads {
		if h := &a.heads[id]; len(h.buf) > 0 && (unit == 0 || h.buf[0].Unit.ID < unit) {
			unit = h.buf[0].Unit.ID
		}
	}
	if unit == 0 {
		return Step{}, io.EOF
	}
	return a.takeUnit(unit)
}

// takeUnit hands out unit id, which is at the head of every shard that has read it.
func (a *Assembler) takeUnit(id uint64) (Step, error) {
	var step Step
	var shards int
	refilled := false // a shard read dry before holds other records now
	for attempt := 0; ; attempt++ {
		step.Parts = step.Parts[:0]
		for sid := range a.heads {
			h := &a.heads[sid]
			if len(h.buf) == 0 && attempt > 0 {
				// A shard that was dry may have been read before the unit committed; what
				// it committed in between comes first.
				if err := a.fill(sid, 1); err != nil {
					return Step{}, err
				}
				refilled = refilled || len(h.buf) > 0 && h.buf[0].Unit.ID != id
			}
			if len(h.buf) == 0 || h.buf[0].Unit.ID != id {
				continue
			}
			u := h.buf[0].Unit
			shards = u.Shards
			if err := a.fill(sid, u.Count); err != nil {
				return Step{}, err
			}
			for i := range u.Count {
				if i >= len(h.buf) || h.buf[i].Unit != u {
					return Step{}, fmt.Errorf("binlog: unit %d: shard %d holds %d of its %d records from record %d on",
						id, sid, i, u.Count, h.buf[0].Seq)
				}
			}
			step.Parts = append(step.Parts, Part{Shard: sid})
		}
		if len(step.Parts) == shards || attempt > 0 {
			break
		}
	}
	if len(step.Parts) != shards && refilled {
		return Step{}, errLater
	}
	if len(step.Parts) != shards {
		return Step{}, fmt.Errorf("binlog: unit %d: records in %d of its %d shards", id, len(step.Parts), shards)
	}
	for i := range step.Parts {
		h := &a.heads[step.Parts[i].Shard]
		count := h.buf[0].Unit.Count
		step.Parts[i].Entries = h.buf[:count:count]
		h.buf = h.buf[count:]
	}
	step.Unit = id
	return step, nil
}
