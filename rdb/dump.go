package rdb

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"io"
)

// Dump writes v as a DUMP payload (as Redis's createDumpPayload): the value's type byte and
// value, the RDB version (2 bytes, little endian) and the CRC-64 of all that (8 bytes, little
// endian). The CRC is written whatever opts.Checksum says, as Redis always writes it. It
// returns the bytes written.
func Dump(w io.Writer, v Source, opts Options) (int64, error) {
	if buf, ok := w.(*bytes.Buffer); ok { // already in memory: no buffer in between
		return dumpTo(&sink{out: buf, sum: true}, v, opts)
	}
	bw := bufio.NewWriterSize(w, 32<<10)
	n, err := dumpTo(&sink{out: bw, sum: true}, v, opts)
	if err != nil {
		return n, err
	}
	return n, bw.Flush()
}

// DumpBytes is v's DUMP payload with Redis's default configuration.
func DumpBytes(v Source) ([]byte, error) {
	var buf bytes.Buffer
	if _, err := Dump(&buf, v, DefaultOptions()); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// PayloadLen is the length of v's DUMP payload, found by encoding it without keeping the
// bytes (for a caller that sends the length before the payload, as a RESP bulk string).
func PayloadLen(v Source, opts Options) (int64, error) {
	return dumpTo(&sink{}, v, opts)
}

func dumpTo(s *sink, v Source, opts Options) (int64, error) {
	e := newEncoder(s, opts)
	defer e.release()
	if err := e.writeValue(v); err != nil {
		return s.n, err
	}
	var footer [payloadFooterBytes]byte
	binary.LittleEndian.PutUint16(footer[0:2], Version)
	s.write(footer[:2])
	binary.LittleEndian.PutUint64(footer[2:], s.crc)
	s.write(footer[2:])
	return s.n, s.err
}
