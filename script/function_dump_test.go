package script

import (
	"strings"
	"testing"
)

// Redis's crc64.c test vector.
func TestCRC64Jones_RedisVector(t *testing.T) {
	if got := crc64Jones(0, []byte("123456789")); got != 0xe9c6d914c4b8d9ca {
		t.Fatalf("crc64(123456789) = %#x", got)
	}
}

func TestFunctionDump_RoundTrip(t *testing.T) {
	long := "#!lua name=b\n" + strings.Repeat("-- padding\n", 2000) // past the 14-bit length
	libs := []*Library{{name: "a", code: "#!lua name=a\n"}, {name: "b", code: long}}
	codes, err := ParseDump(dumpFunctions(libs))
	if err != nil || len(codes) != 2 || codes[0] != libs[0].code || codes[1] != long {
		t.Fatalf("round trip: %v %d codes", err, len(codes))
	}
	p := dumpFunctions(libs)
	p[3] ^= 1
	if _, err := ParseDump(p); err != ErrBadPayload {
		t.Fatalf("corrupt payload: %v", err)
	}
	if _, err := ParseDump([]byte("short")); err != ErrBadPayload {
		t.Fatalf("short payload: %v", err)
	}
}

// RDB string encodings other than plain: integers and LZF (a literal run, then a back
// reference overlapping what it copies).
func TestReadRDBString_Encodings(t *testing.T) {
	for _, tc := range []struct {
		in   []byte
		want string
	}{
		{[]byte{0xc0, 0xfe}, "-2"},
		{[]byte{0xc1, 0x39, 0x30}, "12345"},
		{[]byte{0xc2, 0x15, 0xcd, 0x5b, 0x07}, "123456789"},
		// LZF: clen 5, ulen 8: literal "ab" (ctrl 1), then copy 6 (ctrl (4<<5)|0, offset 1).
		{[]byte{0xc3, 5, 8, 0x01, 'a', 'b', 0x80, 0x01}, "abababab"},
	} {
		got, rest, err := readRDBString(tc.in)
		if err != nil || string(got) != tc.want || len(rest) != 0 {
			t.Errorf("% x: %q %v (rest %d), want %q", tc.in, got, err, len(rest), tc.want)
		}
	}
	if _, _, err := readRDBString([]byte{0xc3, 3, 8, 0x80, 0x05, 0x00}); err == nil {
		t.Error("a back reference before the start was accepted")
	}
}
