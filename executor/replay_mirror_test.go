package executor

import (
	"testing"
	"time"

	"shardis/binlog"
)

// mirroredStep is a step of one shard's records that stand alone, encoded as a master's.
func mirroredStep(id int, firstSeq uint64, lines ...string) (binlog.Step, [][][]byte) {
	part := binlog.Part{Shard: id}
	var raw [][]byte
	for i, l := range lines {
		args := argv(l)
		rec := binlog.AppendRecord(nil, 1, 0, args)
		part.Entries = append(part.Entries, binlog.Entry{Seq: firstSeq + uint64(i), Record: binlog.Record{DB: 0, Args: args}})
		raw = append(raw, rec)
	}
	return binlog.Step{Parts: []binlog.Part{part}}, [][][]byte{raw}
}

func TestPostMirrored_StepAfterAFailedOne_FailsAndPositionDoesNotSkip(t *testing.T) {
	store, e := openExecutor(t, 1)
	store.SetReplica(true)
	never := func() bool { return false }
	results := make(chan error, 3)
	done := func(err error) { results <- err }
	s1, r1 := mirroredStep(0, 1, "SET a 1")
	s2, r2 := mirroredStep(0, 2, "NOSUCHCOMMAND x")
	s3, r3 := mirroredStep(0, 3, "SET b 2")
	e.PostMirrored(s1, r1, never, done)
	e.PostMirrored(s2, r2, never, done)
	e.PostMirrored(s3, r3, never, done)
	var errs []error
	for range 3 {
		select {
		case err := <-results:
			errs = append(errs, err)
		case <-time.After(30 * time.Second):
			t.Fatal("a queued step never reported")
		}
	}
	failed := 0
	for _, err := range errs {
		if err != nil {
			failed++
		}
	}
	if failed < 2 {
		t.Fatalf("results %v: the failing step and the one after it must both fail", errs)
	}
	if got := store.LastSeqs()[0]; got > 1 {
		t.Fatalf("the replica's position is %d: it skipped the record that failed", got)
	}
}
