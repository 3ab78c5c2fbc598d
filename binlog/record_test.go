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
