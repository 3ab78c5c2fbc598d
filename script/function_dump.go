package script

import (
	"encoding/binary"
	"errors"
	"strconv"
)

// FUNCTION DUMP's payload, in Redis 7.0's format so that a dump taken from redis-server
// restores here and the other way round: for each library the RDB opcode FUNCTION2 (245)
// and the library's code as an RDB string, then the RDB version (2 bytes, little-endian) and
// the CRC-64 (Jones, as Redis's crc64.c) of everything before it (8 bytes, little-endian).
// shardis writes strings plain; it reads every RDB string encoding Redis may write (plain,
// integer, LZF-compressed).

const (
	rdbOpcodeFunctionPreGA = 246
	rdbOpcodeFunction2     = 245
	rdbVersion             = 10 // Redis 7.0's
)

// dumpFunctions returns the payload of libs.
func dumpFunctions(libs []*Library) []byte {
	var p []byte
	for _, lib := range libs {
		p = append(p, rdbOpcodeFunction2)
		p = appendRDBLen(p, uint64(len(lib.code)))
		p = append(p, lib.code...)
	}
	p = binary.LittleEndian.AppendUint16(p, rdbVersion)
	return binary.LittleEndian.AppendUint64(p, crc64Jones(0, p))
}

// ErrBadPayload is FUNCTION RESTORE's error for a payload whose version or checksum is
// wrong.
var ErrBadPayload = errors.New("ERR DUMP payload version or checksum are wrong")

// ParseDump returns the libraries' codes in FUNCTION DUMP's payload, for Functions.Restore.
// The error is Redis's reply text.
func ParseDump(payload []byte) ([]string, error) {
	if len(payload) < 10 {
		return nil, ErrBadPayload
	}
	tail := payload[len(payload)-10:]
	if binary.LittleEndian.Uint16(tail) > rdbVersion ||
		binary.LittleEndian.Uint64(tail[2:]) != crc64Jones(0, payload[:len(payload)-8]) {
		return nil, ErrBadPayload
	}
	body := payload[:len(payload)-10]
	var codes []string
	for len(body) > 0 {
		op := body[0]
		body = body[1:]
		switch op {
		case rdbOpcodeFunctionPreGA:
			return nil, errors.New("ERR Pre-GA function format not supported")
		case rdbOpcodeFunction2:
		default:
			return nil, errors.New("ERR given type is not a function")
		}
		code, rest, err := readRDBString(body)
		if err != nil {
			return nil, errors.New("ERR failed loading the given functions payload")
		}
		codes = append(codes, string(code))
		body = rest
	}
	return codes, nil
}

func appendRDBLen(p []byte, n uint64) []byte {
	switch {
	case n < 1<<6:
		return append(p, byte(n))
	case n < 1<<14:
		return append(p, byte(n>>8)|0x40, byte(n))
	case n <= 0xffffffff:
		return binary.BigEndian.AppendUint32(append(p, 0x80), uint32(n))
	default:
		return binary.BigEndian.AppendUint64(append(p, 0x81), n)
	}
}

var errShortPayload = errors.New("payload ends early")

// readRDBLen reads an RDB length; encoded says it is a special string encoding (0-3) instead.
func readRDBLen(p []byte) (n uint64, encoded bool, rest []byte, err error) {
	if len(p) < 1 {
		return 0, false, nil, errShortPayload
	}
	switch p[0] >> 6 {
	case 0:
		return uint64(p[0] & 0x3f), false, p[1:], nil
	case 1:
		if len(p) < 2 {
			return 0, false, nil, errShortPayload
		}
		return uint64(p[0]&0x3f)<<8 | uint64(p[1]), false, p[2:], nil
	case 3:
		return uint64(p[0] & 0x3f), true, p[1:], nil
	}
	switch p[0] {
	case 0x80:
		if len(p) < 5 {
			return 0, false, nil, errShortPayload
		}
		return uint64(binary.BigEndian.Uint32(p[1:])), false, p[5:], nil
	case 0x81:
		if len(p) < 9 {
			return 0, false, nil, errShortPayload
		}
		return binary.BigEndian.Uint64(p[1:]), false, p[9:], nil
	}
	return 0, false, nil, errors.New("unknown length encoding")
}

// readRDBString reads one RDB string: plain, an integer (8, 16, 32 bits) or LZF-compressed.
func readRDBString(p []byte) (s, rest []byte, err error) {
	n, encoded, p, err := readRDBLen(p)
	if err != nil {
		return nil, nil, err
	}
	if !encoded {
		if uint64(len(p)) < n {
			return nil, nil, errShortPayload
		}
		return p[:n], p[n:], nil
	}
	switch n {
	case 0, 1, 2:
		size := 1 << n
		if len(p) < size {
			return nil, nil, errShortPayload
		}
		var v int64
		switch n {
		case 0:
			v = int64(int8(p[0]))
		case 1:
			v = int64(int16(binary.LittleEndian.Uint16(p)))
		case 2:
			v = int64(int32(binary.LittleEndian.Uint32(p)))
		}
		return strconv.AppendInt(nil, v, 10), p[size:], nil
	case 3:
		clen, enc1, p, err := readRDBLen(p)
		if err != nil || enc1 {
			return nil, nil, errors.New("bad LZF length")
		}
		ulen, enc2, p, err := readRDBLen(p)
		if err != nil || enc2 || ulen > 512<<20 {
			return nil, nil, errors.New("bad LZF length")
		}
		if uint64(len(p)) < clen {
			return nil, nil, errShortPayload
		}
		out, err := lzfDecompress(p[:clen], int(ulen))
		if err != nil {
			return nil, nil, err
		}
		return out, p[clen:], nil
	}
	return nil, nil, errors.New("unknown string encoding")
}

// lzfDecompress is LZF's decompressor (liblzf, which Redis uses for RDB strings): literal
// runs (control < 32: control+1 bytes) and back references (length control>>5 (+ a byte when
// 7) + 2, offset from the control's low bits and the next byte).
func lzfDecompress(in []byte, ulen int) ([]byte, error) {
	out := make([]byte, 0, ulen)
	for i := 0; i < len(in); {
		ctrl := int(in[i])
		i++
		if ctrl < 32 {
			n := ctrl + 1
			if i+n > len(in) || len(out)+n > ulen {
				return nil, errors.New("lzf: literal past the end")
			}
			out = append(out, in[i:i+n]...)
			i += n
			continue
		}
		n := ctrl >> 5
		if n == 7 {
			if i >= len(in) {
				return nil, errShortPayload
			}
			n += int(in[i])
			i++
		}
		if i >= len(in) {
			return nil, errShortPayload
		}
		ref := len(out) - (ctrl&0x1f)<<8 - int(in[i]) - 1
		i++
		n += 2
		if ref < 0 || len(out)+n > ulen {
			return nil, errors.New("lzf: back reference out of range")
		}
		for j := 0; j < n; j++ { // byte by byte: the reference may overlap what it writes
			out = append(out, out[ref+j])
		}
	}
	if len(out) != ulen {
		return nil, errors.New("lzf: length mismatch")
	}
	return out, nil
}

// crc64Table is the table of Redis's CRC-64: the Jones polynomial, reflected, no initial or
// final inversion.
var crc64Table = func() (t [256]uint64) {
	const poly = 0x95ac9329ac4bc9b5 // 0xad93d23594c935a9 reflected
	for i := range t {
		crc := uint64(i)
		for j := 0; j < 8; j++ {
			if crc&1 == 1 {
				crc = crc>>1 ^ poly
			} else {
				crc >>= 1
			}
		}
		t[i] = crc
	}
	return t
}()

func crc64Jones(crc uint64, p []byte) uint64 {
	for _, b := range p {
		crc = crc64Table[byte(crc)^b] ^ crc>>8
	}
	return crc
}
