package binlog

// Ages lets retention find where a time window starts without reading the binlog (whose
// memtable, a vector, sorts a copy of itself for every reader). It is a list of marks, at
// most one per second of records written: mark (seq, maxMs) says every record before seq was
// written at maxMs or earlier. It is not safe for concurrent use: the goroutine that holds
// the shard owns its shard's Ages.
type Ages struct {
	marks []ageMark
	maxMs int64 // newest record time seen
}

// maxAgeMarks bounds the list: past it, every other mark goes (each mark's claim holds on its
// own, so fewer marks only make the cut coarser, never wrong). With the default one-hour
// window the list never gets near it; an unlimited binlog would otherwise grow it by one mark
// a second for ever.
const maxAgeMarks = 1 << 16

type ageMark struct {
	seq   uint64 // first sequence after the records it covers
	maxMs int64  // the newest time among the records before seq
}

// Note records that every record before next (the sequence the next record will take) was
// written at ms or earlier. Marks within one second replace each other: the list keeps one
// per second.
func (a *Ages) Note(next uint64, ms int64) {
	a.maxMs = max(a.maxMs, ms)
	m := ageMark{seq: next, maxMs: a.maxMs}
	if n := len(a.marks); n > 0 && a.marks[n-1].maxMs/1000 == m.maxMs/1000 {
		a.marks[n-1] = m
		return
	}
	if len(a.marks) >= maxAgeMarks {
		kept := a.marks[:0]
		for i := 1; i < len(a.marks); i += 2 {
			kept = append(kept, a.marks[i])
		}
		a.marks = kept
	}
	a.marks = append(a.marks, m)
}

// CutBefore returns the first sequence to keep so that only records written before oldest
// go: the newest mark whose records are all older than oldest (0: no such mark). It keeps up
// to a second of records more than the window asks, never fewer.
func (a *Ages) CutBefore(oldest int64) uint64 {
	var cut uint64
	for _, m := range a.marks {
		if m.maxMs >= oldest {
			break
		}
		cut = m.seq
	}
	return cut
}

// Forget drops the marks that cover only records before first (trimmed away).
func (a *Ages) Forget(first uint64) {
	i := 0
	for i < len(a.marks) && a.marks[i].seq <= first {
		i++
	}
	if i > 0 {
		a.marks = append(a.marks[:0], a.marks[i:]...)
	}
}
