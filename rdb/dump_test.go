package rdb

import (
	"bytes"
	"errors"
	"io"
	"strconv"
	"testing"
)

func wtAllKinds() []Source {
	big := &wtScored{}
	for i := 0; i < 300; i++ {
		big.members = append(big.members, []byte("m"+strconv.Itoa(i)))
		big.scores = append(big.scores, float64(i)/7)
	}
	var pairs wtPairs
	for i := 0; i < 200; i++ {
		pairs = append(pairs, [2][]byte{[]byte("f" + strconv.Itoa(i)), bytes.Repeat([]byte("v"), i)})
	}
	return []Source{
		{Kind: KindString, String: bytes.Repeat([]byte("abc"), 100)},
		{Kind: KindList, List: wtMixedList(5000)},
		{Kind: KindSet, Set: wtStrings("1", "2", "3")},
		{Kind: KindSet, Set: wtStrings("a", "b")},
		{Kind: KindHash, Hash: pairs},
		{Kind: KindHash, Hash: pairs[:3]},
		{Kind: KindZSet, ZSet: big},
		{Kind: KindZSet, ZSet: &wtScored{members: [][]byte{[]byte("x")}, scores: []float64{2.5}}},
		{Kind: KindStream, Stream: &wtStream{entries: []wtStreamEntry{
			{StreamID{1, 0}, wtStrings("a", "1")}, {StreamID{2, 0}, wtStrings("b", "2")}},
			meta: StreamMeta{Length: 2, LastID: StreamID{2, 0}, FirstID: StreamID{1, 0}, EntriesAdded: 2},
			groups: []wtStreamGroup{{head: StreamGroup{Name: []byte("g"), LastID: StreamID{2, 0}, EntriesRead: 2},
				pending:   []StreamPending{{StreamID{1, 0}, 1700000000000, 1}},
				consumers: []wtStreamConsumer{{StreamConsumer{Name: []byte("c"), SeenTime: 1700000000000}, []StreamID{{1, 0}}}}}}}},
	}
}

func TestPayloadLen_EveryKind_EqualsDumpLength(t *testing.T) {
	for _, src := range wtAllKinds() {
		payload, err := DumpBytes(src)
		if err != nil {
			t.Fatal(err)
		}
		n, err := PayloadLen(src, DefaultOptions())
		if err != nil {
			t.Fatal(err)
		}
		if n != int64(len(payload)) {
			t.Fatalf("%v: PayloadLen %d, DUMP payload %d bytes", src.Kind, n, len(payload))
		}
		var crc uint64
		for i := 7; i >= 0; i-- {
			crc = crc<<8 | uint64(payload[len(payload)-8+i])
		}
		if crc != CRC64(0, payload[:len(payload)-8]) || payload[len(payload)-10] != Version || payload[len(payload)-9] != 0 {
			t.Fatalf("%v: footer %x is not version 10 and the CRC-64", src.Kind, payload[len(payload)-10:])
		}
	}
}

func TestDumpBytes_EveryKind_RestoresInRedis(t *testing.T) {
	rc := wtStartRedis(t)
	for i, src := range wtAllKinds() {
		payload, err := DumpBytes(src)
		if err != nil {
			t.Fatal(err)
		}
		key := "k" + strconv.Itoa(i)
		if err := rc.Restore(testCtx, key, 0, string(payload)).Err(); err != nil {
			t.Fatalf("%v: RESTORE: %v", src.Kind, err)
		}
		if typ := rc.Type(testCtx, key).Val(); typ != src.Kind.String() {
			t.Fatalf("TYPE %s = %s, want %v", key, typ, src.Kind)
		}
	}
}

// wtChangingList yields one more element on every walk.
type wtChangingList struct{ walks int }

func (c *wtChangingList) Len() int64 { return 0 }
func (c *wtChangingList) Each(fn func([]byte) error) error {
	c.walks++
	for i := 0; i < 10+c.walks; i++ {
		if err := fn([]byte("e")); err != nil {
			return err
		}
	}
	return nil
}

func TestDump_SourceChangesBetweenWalks_Error(t *testing.T) {
	for _, src := range []Source{
		{Kind: KindList, List: &wtChangingList{}},
		{Kind: KindSet, Set: &wtChangingList{}},
	} {
		if _, err := Dump(io.Discard, src, DefaultOptions()); !errors.Is(err, errSourceChanged) {
			t.Fatalf("%v: err = %v, want errSourceChanged", src.Kind, err)
		}
	}
}

func TestDump_BadSources_Error(t *testing.T) {
	odd := &wtStream{entries: []wtStreamEntry{{StreamID{1, 0}, wtStrings("field-without-value")}}}
	for _, src := range []Source{
		{Kind: KindList},
		{Kind: Kind(99)},
		{Kind: KindStream, Stream: odd},
	} {
		if _, err := Dump(io.Discard, src, DefaultOptions()); err == nil {
			t.Fatalf("%v: no error", src.Kind)
		}
	}
}

// wtFailingWriter fails every write.
type wtFailingWriter struct{}

func (wtFailingWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

func TestWriter_WriteError_Sticks(t *testing.T) {
	w := NewWriter(wtFailingWriter{}, DefaultOptions())
	big := Source{Kind: KindList, List: wtMixedList(20000)} // more than the buffer
	if err := w.WriteKey(Key{Name: []byte("k"), Idle: -1, Freq: -1}, big); err == nil || err.Error() != "disk full" {
		t.Fatalf("WriteKey err = %v, want disk full", err)
	}
	if err := w.Close(); err == nil {
		t.Fatal("Close after a failed write: no error")
	}
}

func BenchmarkDump_List(b *testing.B) {
	src := Source{Kind: KindList, List: wtMixedList(10000)}
	n, _ := PayloadLen(src, DefaultOptions())
	b.SetBytes(n)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if _, err := DumpBytes(src); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDump_SmallHash(b *testing.B) {
	src := Source{Kind: KindHash, Hash: wtPairs{{[]byte("name"), []byte("value")}, {[]byte("n"), []byte("12")}}}
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if _, err := DumpBytes(src); err != nil {
			b.Fatal(err)
		}
	}
}
