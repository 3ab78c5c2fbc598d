package rdb

import "testing"

func TestCRC64_CheckValue_AsRedis(t *testing.T) {
	// Redis's crc64.c test: crc64(0, "123456789") == 0xe9c6d914c4b8d9ca.
	if got := CRC64(0, []byte("123456789")); got != 0xe9c6d914c4b8d9ca {
		t.Fatalf("CRC64 = %#x, want 0xe9c6d914c4b8d9ca", got)
	}
}

func TestCRC64_InPieces_SameAsWhole(t *testing.T) {
	data := []byte("The quick brown fox jumps over the lazy dog")
	whole := CRC64(0, data)
	if got := CRC64(CRC64(0, data[:10]), data[10:]); got != whole {
		t.Fatalf("pieces %#x, whole %#x", got, whole)
	}
}

func TestCRC64_RedisDumpPayload_FooterMatches(t *testing.T) {
	rc := startRedis(t)
	if err := rc.Set(testCtx, "k", "hello", 0).Err(); err != nil {
		t.Fatal(err)
	}
	payload, err := rc.Dump(testCtx, "k").Bytes()
	if err != nil {
		t.Fatal(err)
	}
	body := payload[:len(payload)-8]
	var want uint64
	for i := 7; i >= 0; i-- {
		want = want<<8 | uint64(payload[len(payload)-8+i])
	}
	if got := CRC64(0, body); got != want {
		t.Fatalf("CRC64 of the payload = %#x, its footer says %#x", got, want)
	}
}
