package replication

import (
	"bufio"
	"bytes"
	"slices"
	"strings"
	"testing"

	"shardis/binlog"
)

func entry(seq uint64, db int, args ...string) binlog.Entry {
	e := binlog.Entry{Seq: seq}
	e.DB = db
	for _, a := range args {
		e.Args = append(e.Args, []byte(a))
	}
	return e
}

func TestRedisStream_Steps_SelectOnceAndUnitsInMultiExec(t *testing.T) {
	s := &redisStream{db: -1, seqs: []uint64{10, 20}}
	s.appendStep(binlog.Step{Parts: []binlog.Part{{Shard: 0, Entries: []binlog.Entry{
		entry(11, 0, "SET", "a", "1"), entry(12, 0, "DEL", "b")}}}})
	s.appendStep(binlog.Step{Unit: 7, Parts: []binlog.Part{
		{Shard: 0, Entries: []binlog.Entry{entry(13, 3, "SET", "x", "1")}},
		{Shard: 1, Entries: []binlog.Entry{entry(21, 3, "SET", "y", "2")}}}})
	want := "*2\r\n$6\r\nSELECT\r\n$1\r\n0\r\n" +
		"*3\r\n$3\r\nSET\r\n$1\r\na\r\n$1\r\n1\r\n" +
		"*2\r\n$3\r\nDEL\r\n$1\r\nb\r\n" +
		"*2\r\n$6\r\nSELECT\r\n$1\r\n3\r\n" +
		"*1\r\n$5\r\nMULTI\r\n" +
		"*3\r\n$3\r\nSET\r\n$1\r\nx\r\n$1\r\n1\r\n" +
		"*3\r\n$3\r\nSET\r\n$1\r\ny\r\n$1\r\n2\r\n" +
		"*1\r\n$4\r\nEXEC\r\n"
	if got := string(s.w.Buf); got != want {
		t.Fatalf("stream:\n%q\nwant:\n%q", got, want)
	}
	if !slices.Equal(s.seqs, []uint64{13, 21}) {
		t.Fatalf("positions after the steps = %v, want [13 21]", s.seqs)
	}
}

func TestByteOffsets_Acked_PositionsOfTheLastMarkAtOrBefore(t *testing.T) {
	var b byteOffsets
	b.mark(100, []uint64{1, 1})
	b.mark(150, []uint64{2, 1})
	b.mark(164, []uint64{2, 1}) // a PING: bytes only
	b.mark(200, []uint64{2, 3})
	for _, c := range []struct {
		off  uint64
		want []uint64
	}{{99, nil}, {100, []uint64{1, 1}}, {170, []uint64{2, 1}}, {200, []uint64{2, 3}}, {500, []uint64{2, 3}}} {
		got, ok := b.acked(c.off)
		if ok != (c.want != nil) || !slices.Equal(got, c.want) {
			t.Fatalf("acked(%d) = %v %v, want %v", c.off, got, ok, c.want)
		}
	}
}

func TestByteOffsets_NoAcks_MarksStayBounded(t *testing.T) {
	var b byteOffsets
	for i := range uint64(3 * maxOffsetMarks) {
		b.mark(i*10, []uint64{i})
	}
	if len(b.marks) > maxOffsetMarks {
		t.Fatalf("%d marks kept, at most %d expected", len(b.marks), maxOffsetMarks)
	}
	if got, ok := b.acked(3*maxOffsetMarks*10 - 10); !ok || got[0] != 3*maxOffsetMarks-1 {
		t.Fatalf("the newest ACK reads %v %v", got, ok)
	}
}

func TestRespReader_Command_ArgsAndBytes(t *testing.T) {
	in := "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$5\r\nv\r\nxx\r\n*1\r\n$4\r\nPING\r\n"
	rd := respReader{r: bufio.NewReader(strings.NewReader(in))}
	args, n, err := rd.command()
	if err != nil || n != 31 || len(args) != 3 || string(args[2]) != "v\r\nxx" {
		t.Fatalf("first command: %q %d %v", args, n, err)
	}
	args, n, err = rd.command()
	if err != nil || n != 14 || string(args[0]) != "PING" {
		t.Fatalf("second command: %q %d %v", args, n, err)
	}
	for _, bad := range []string{"+OK\r\n", "*0\r\n", "*1\r\n:1\r\n", "*1\r\n$-1\r\n", "*1\r\n$99999999999\r\n"} {
		rd := respReader{r: bufio.NewReader(strings.NewReader(bad))}
		if _, _, err := rd.command(); err == nil {
			t.Fatalf("%q was read as a command", bad)
		}
	}
}

func TestFeedWriter_Write_ReturnsEachCallsLengthAndSendsEverythingInChunks(t *testing.T) {
	var sent [][]byte
	w := &feedWriter{send: func(b []byte) error { sent = append(sent, b); return nil }}
	var all []byte
	for i, size := range []int{10, rdbChunk - 10, 5, 3 * rdbChunk, 1} {
		p := make([]byte, size)
		for j := range p {
			p[j] = byte(i + j)
		}
		all = append(all, p...)
		if n, err := w.Write(p); n != size || err != nil {
			t.Fatalf("write %d of %d bytes: %d %v", i, size, n, err)
		}
	}
	if err := w.flush(); err != nil {
		t.Fatal(err)
	}
	var got []byte
	for _, c := range sent {
		if len(c) > rdbChunk {
			t.Fatalf("a chunk of %d bytes, more than %d", len(c), rdbChunk)
		}
		got = append(got, c...)
	}
	if string(got) != string(all) {
		t.Fatalf("sent %d bytes, not the %d written", len(got), len(all))
	}
}

func TestUnitCommands_WholeKeyspaceRecordsOfAUnit_AppliedOnceInPlace(t *testing.T) {
	// MULTI; SET a 1 (shard 1); SWAPDB 0 2; SET a 2 (shard 1); SET b 3 (shard 0); EXEC: each
	// shard logs the SWAPDB among its own records.
	step := binlog.Step{Unit: 9, Parts: []binlog.Part{
		{Shard: 0, Entries: []binlog.Entry{entry(5, 0, "SWAPDB", "0", "2"), entry(6, 0, "SET", "b", "3")}},
		{Shard: 1, Entries: []binlog.Entry{entry(8, 0, "SET", "a", "1"), entry(9, 0, "SWAPDB", "0", "2"), entry(10, 0, "SET", "a", "2")}},
	}}
	var got []string
	for _, p := range unitCommands(step) {
		got = append(got, string(bytes.Join(p.Args, []byte(" "))))
	}
	want := []string{"SET a 1", "SWAPDB 0 2", "SET b 3", "SET a 2"}
	if !slices.Equal(got, want) {
		t.Fatalf("commands %q, want %q", got, want)
	}
}

func TestRedisStream_UnitWithSwapdb_SentOnce(t *testing.T) {
	s := &redisStream{db: 0, seqs: []uint64{4, 7}}
	s.appendStep(binlog.Step{Unit: 3, Parts: []binlog.Part{
		{Shard: 0, Entries: []binlog.Entry{entry(5, 0, "SWAPDB", "0", "1")}},
		{Shard: 1, Entries: []binlog.Entry{entry(8, 0, "SWAPDB", "0", "1")}}}})
	want := "*1\r\n$5\r\nMULTI\r\n" +
		"*3\r\n$6\r\nSWAPDB\r\n$1\r\n0\r\n$1\r\n1\r\n" +
		"*1\r\n$4\r\nEXEC\r\n"
	if got := string(s.w.Buf); got != want {
		t.Fatalf("stream:\n%q\nwant:\n%q", got, want)
	}
	if !slices.Equal(s.seqs, []uint64{5, 8}) {
		t.Fatalf("positions after the step = %v, want [5 8]", s.seqs)
	}
}
