package rdb

import (
	"os"
	"testing"
)

// counter is a Handler that only counts: what reading costs without storing.
type counter struct{ keys, elements int }

func (c *counter) Aux(_, _ []byte) error                  { return nil }
func (c *counter) SelectDB(int) error                     { return nil }
func (c *counter) ResizeDB(_, _ uint64) error             { return nil }
func (c *counter) Function([]byte) error                  { return nil }
func (c *counter) BeginKey(Key) error                     { c.keys++; return nil }
func (c *counter) String([]byte) error                    { c.elements++; return nil }
func (c *counter) ListElement([]byte) error               { c.elements++; return nil }
func (c *counter) SetMember([]byte) error                 { c.elements++; return nil }
func (c *counter) HashField(_, _ []byte) error            { c.elements++; return nil }
func (c *counter) ZSetMember([]byte, float64) error       { c.elements++; return nil }
func (c *counter) StreamEntry(StreamID, [][]byte) error   { c.elements++; return nil }
func (c *counter) StreamMeta(StreamMeta) error            { return nil }
func (c *counter) StreamGroup(StreamGroup) error          { return nil }
func (c *counter) StreamGroupPending(StreamPending) error { return nil }
func (c *counter) StreamConsumer(StreamConsumer) error    { return nil }
func (c *counter) StreamConsumerPending(StreamID) error   { return nil }
func (c *counter) EndKey() error                          { return nil }

// BenchmarkRead_File reads the RDB file RDB_BENCH_FILE names (e.g. one redis-server SAVEd).
func BenchmarkRead_File(b *testing.B) {
	name := os.Getenv("RDB_BENCH_FILE")
	if name == "" {
		b.Skip("set RDB_BENCH_FILE to an RDB file")
	}
	st, err := os.Stat(name)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(st.Size())
	for i := 0; i < b.N; i++ {
		f, err := os.Open(name)
		if err != nil {
			b.Fatal(err)
		}
		var c counter
		if err := NewReader(f).Read(&c); err != nil {
			b.Fatal(err)
		}
		f.Close()
		b.ReportMetric(float64(c.keys), "keys")
	}
}

func BenchmarkReadPayload_Recorded(b *testing.B) {
	var payloads []recordedPayload
	loadJSON(b, "payloads.json", &payloads)
	size := 0
	for _, p := range payloads {
		size += len(p.Payload)
	}
	b.SetBytes(int64(size))
	for i := 0; i < b.N; i++ {
		for _, p := range payloads {
			if err := ReadPayload(p.Payload, &counter{}); err != nil {
				b.Fatal(err)
			}
		}
	}
}
