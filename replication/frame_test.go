package replication

import (
	"fmt"
	"testing"

	"shardis/binlog"
)

// testStep is a unit of two shards, one record carrying a value of valueSize bytes.
func testStep(valueSize int) binlog.Step {
	u := binlog.Unit{ID: 9, Shards: 2, Count: 2}
	rec := func(args ...string) binlog.Record {
		r := binlog.Record{DB: 3, Time: 1700000000000, Unit: u}
		for _, a := range args {
			r.Args = append(r.Args, []byte(a))
		}
		return r
	}
	big := string(make([]byte, valueSize))
	return binlog.Step{Unit: 9, Parts: []binlog.Part{
		{Shard: 0, Entries: []binlog.Entry{{Seq: 41, Record: rec("SET", "a", big)}, {Seq: 42, Record: rec("INCR", "b")}}},
		{Shard: 3, Entries: []binlog.Entry{{Seq: 7, Record: rec("SADD", "s", "x")}, {Seq: 8, Record: rec("DEL", "c")}}},
	}}
}

// A step frame decodes to the step it encoded, and an encoder reused for the next step (its
// buffers kept) writes that one whole too, into a frame of its own.
func TestStepEncoder_ReusedForManySteps_EachFrameDecodesToItsStep(t *testing.T) {
	var enc stepEncoder
	var frames [][]byte
	for _, size := range []int{5000, 10, 300} {
		f, err := enc.appendStep(nil, testStep(size))
		if err != nil {
			t.Fatal(err)
		}
		frames = append(frames, f)
	}
	for i, size := range []int{5000, 10, 300} {
		f := frames[i]
		if f[0] != frameStep {
			t.Fatalf("frame %d kind %q", i, f[0])
		}
		d := decoder{b: f[1:]}
		payload := d.bytes()
		if d.err != nil || len(d.b) != 0 {
			t.Fatalf("frame %d: bad length (%v, %d left)", i, d.err, len(d.b))
		}
		step, _, err := decodeStep(payload, 4)
		if err != nil {
			t.Fatalf("frame %d: %v", i, err)
		}
		want := testStep(size)
		if got, w := fmt.Sprint(step.Parts), fmt.Sprint(want.Parts); got != w || step.Unit != 9 {
			t.Fatalf("frame %d decodes to unit %d %s, want %s", i, step.Unit, got, w)
		}
	}
}

func BenchmarkStepEncoder_AppendStep(b *testing.B) {
	step := testStep(1024)
	var enc stepEncoder
	b.ReportAllocs()
	for b.Loop() {
		if _, err := enc.appendStep(nil, step); err != nil {
			b.Fatal(err)
		}
	}
}
