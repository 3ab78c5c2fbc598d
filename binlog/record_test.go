package binlog

import (
	"bytes"
	"testing"
)

// The record of docs/ENCODING.md's example.
func TestAppendRecord_DocExample(t *testing.T) {
	args := [][]byte{[]byte("SET"), []byte("{u}1"), []byte("1.5"), []byte("KEEPTTL")}
	v := AppendRecord(nil, 1700000000000, 0, args)
	want := append([]byte{0, 0, 1, 0x8b, 0xcf, 0xe5, 0x68, 0x00, 0, 4, 3}, "SET\x04{u}1\x031.5\x07KEEPTTL"...)
	if !bytes.Equal(v, want) {
		t.Fatalf("% x\n% x", v, want)
	}
	if k := AppendKey(nil, 42); !bytes.Equal(k, []byte{'b', 0, 0, 0, 0, 0, 0, 0, 42}) {
		t.Fatalf("key % x", k)
	}
	var r Record
	if err := DecodeRecord(v, &r); err != nil || r.Time != 1700000000000 || r.DB != 0 || len(r.Args) != 4 || string(r.Args[3]) != "KEEPTTL" {
		t.Fatalf("decode: %v %+v", err, r)
	}
}

func TestDecodeRecord_Corrupt(t *testing.T) {
	good := AppendRecord(nil, 1, 2, [][]byte{[]byte("DEL"), []byte("k")})
	for i := range len(good) {
		var r Record
		if err := DecodeRecord(good[:i], &r); err == nil {
			t.Errorf("truncated at %d accepted", i)
		}
	}
	var r Record
	if err := DecodeRecord(append(good, 0), &r); err == nil {
		t.Error("trailing byte accepted")
	}
}

// The unit record of docs/ENCODING.md's example: MSET {a}1 x {b}2 y, its keys in two shards,
// as unit 7; this is the record in {a}1's shard.
func TestAppendUnitRecord_DocExample(t *testing.T) {
	alone := AppendRecord(nil, 1700000000000, 0, [][]byte{[]byte("SET"), []byte("{a}1"), []byte("x")})
	v, err := AppendUnitRecord(nil, alone, Unit{ID: 7, Shards: 2, Count: 1})
	if err != nil {
		t.Fatal(err)
	}
	want := append([]byte{0x80, 0, 1, 0x8b, 0xcf, 0xe5, 0x68, 0x00, 0, 0, 0, 0, 0, 0, 0, 0, 7, 2, 1, 3}, "\x03SET\x04{a}1\x01x"...)
	if !bytes.Equal(v, want) {
		t.Fatalf("% x\n% x", v, want)
	}
	if len(v) != len(alone)+10 {
		t.Fatalf("a unit costs %d bytes, want 10", len(v)-len(alone))
	}
	var r Record
	if err := DecodeRecord(v, &r); err != nil || r.Time != 1700000000000 || r.DB != 0 ||
		r.Unit != (Unit{ID: 7, Shards: 2, Count: 1}) || len(r.Args) != 3 || string(r.Args[1]) != "{a}1" {
		t.Fatalf("decode: %v %+v", err, r)
	}
	if got := RecordTime(v); got != 1700000000000 {
		t.Fatalf("RecordTime = %d: the unit flag leaked into the time", got)
	}
	// A record that stands alone decodes with no unit, also into a Record that held one.
	if err := DecodeRecord(alone, &r); err != nil || r.Unit != (Unit{}) {
		t.Fatalf("decode alone: %v %+v", err, r.Unit)
	}
}

func TestAppendUnitRecord_RefusesBadUnits(t *testing.T) {
	alone := AppendRecord(nil, 1, 0, [][]byte{[]byte("DEL"), []byte("k")})
	for _, u := range []Unit{{ID: 0, Shards: 2, Count: 1}, {ID: 1, Shards: 0, Count: 1}, {ID: 1, Shards: 2, Count: 0}} {
		if _, err := AppendUnitRecord(nil, alone, u); err == nil {
			t.Errorf("unit %+v accepted", u)
		}
	}
	marked, _ := AppendUnitRecord(nil, alone, Unit{ID: 1, Shards: 2, Count: 1})
	if _, err := AppendUnitRecord(nil, marked, Unit{ID: 2, Shards: 2, Count: 1}); err == nil {
		t.Error("a unit record marked twice")
	}
}

func TestDecodeRecord_CorruptUnit(t *testing.T) {
	alone := AppendRecord(nil, 1, 2, [][]byte{[]byte("DEL"), []byte("k")})
	good, _ := AppendUnitRecord(nil, alone, Unit{ID: 9, Shards: 3, Count: 2})
	for i := range len(good) {
		var r Record
		if err := DecodeRecord(good[:i], &r); err == nil {
			t.Errorf("truncated at %d accepted", i)
		}
	}
	for name, mutate := range map[string]func(b []byte){
		"unit id 0":      func(b []byte) { clear(b[9:17]) },
		"zero shards":    func(b []byte) { b[17] = 0 },
		"zero records":   func(b []byte) { b[18] = 0 },
		"flag on a bare": func(b []byte) {},
	} {
		b := bytes.Clone(good)
		if name == "flag on a bare" {
			b = bytes.Clone(alone)
			b[0] |= 0x80 // the flag without the unit's fields
		}
		mutate(b)
		var r Record
		if err := DecodeRecord(b, &r); err == nil {
			t.Errorf("%s accepted: %+v", name, r)
		}
	}
}

func TestAppendRecordParts_JoinedIsTheRecord(t *testing.T) {
	big := bytes.Repeat([]byte("v"), 300)
	for _, args := range [][][]byte{
		{[]byte("SET"), []byte("k"), big},
		{[]byte("SET"), big, big, []byte("PXAT"), []byte("123")},
		{[]byte("DEL"), []byte("k")},
		{},
	} {
		want := AppendRecord([]byte("prefix"), 1234, 3, args)
		b, parts := AppendRecordParts([]byte("prefix"), 1234, 3, args, 100, nil)
		if got := bytes.Join(parts, nil); !bytes.Equal(got, want[len("prefix"):]) {
			t.Fatalf("%q: parts join to %q, want %q", args, got, want[len("prefix"):])
		}
		if string(b[:len("prefix")]) != "prefix" || len(b) > len(want) {
			t.Fatalf("%q: b = %q", args, b)
		}
		for _, p := range parts {
			if len(p) >= 100 && &p[0] != &big[0] {
				t.Fatalf("%q: a big argument was copied", args)
			}
		}
	}
}

func TestAppendUnitRecord_OneShardUnit_DecodesAsOne(t *testing.T) {
	alone := AppendRecord(nil, 1, 0, [][]byte{[]byte("INCR"), []byte("k")})
	v, err := AppendUnitRecord(nil, alone, Unit{ID: 3, Shards: 1, Count: 2})
	if err != nil {
		t.Fatal(err)
	}
	var r Record
	if err := DecodeRecord(v, &r); err != nil || r.Unit != (Unit{ID: 3, Shards: 1, Count: 2}) {
		t.Fatalf("decoded %+v %v", r.Unit, err)
	}
}

// AppendEntry of a unit's record writes what AppendUnitRecord makes of the record alone, and
// decodes back to it.
func TestAppendEntry_UnitRecord_SameAsMarkingTheRecordAlone(t *testing.T) {
	r := Record{Time: 1700000000123, DB: 5, Unit: Unit{ID: 77, Shards: 3, Count: 2},
		Args: [][]byte{[]byte("SADD"), []byte("k"), make([]byte, 300)}}
	got, err := AppendEntry([]byte("prefix"), &r)
	if err != nil {
		t.Fatal(err)
	}
	want, err := AppendUnitRecord([]byte("prefix"), AppendRecord(nil, r.Time, r.DB, r.Args), r.Unit)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(want) {
		t.Fatalf("AppendEntry = %x\nwant          %x", got, want)
	}
	var back Record
	if err := DecodeRecord(got[len("prefix"):], &back); err != nil || back.Unit != r.Unit ||
		back.Time != r.Time || back.DB != 5 || len(back.Args) != 3 || len(back.Args[2]) != 300 {
		t.Fatalf("decoded %+v, %v", back, err)
	}
	if _, err := AppendEntry(nil, &Record{Time: -1, Unit: r.Unit}); err == nil {
		t.Fatal("a negative time was marked as a unit's")
	}
}
