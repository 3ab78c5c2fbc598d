package rdb

import "encoding/binary"

// A zipmap (zipmap.c, hashes of Redis 2.4 and before): a count byte (254 or more: unknown),
// then per pair the field's length (1 byte below 254, else 254 and 4 bytes little endian),
// the field, the value's length, a byte of free space f, the value and f unused bytes; 0xFF.

const zipmapBigLen = 254

type zipmapIter struct {
	b   []byte
	pos int
}

// checkZipmap validates a zipmap as Redis does on load and returns its pair count; an empty
// zipmap is refused, as Redis refuses it.
func checkZipmap(b []byte) (int, error) {
	if len(b) < 2 || b[len(b)-1] != ziplistEnd {
		return 0, ErrBadFormat
	}
	it := zipmapIter{b: b, pos: 1}
	n := 0
	for {
		_, _, ok, err := it.next()
		if err != nil {
			return 0, err
		}
		if !ok {
			break
		}
		n++
	}
	if n == 0 || (b[0] < zipmapBigLen && int(b[0]) != n) {
		return 0, ErrBadFormat
	}
	return n, nil
}

func (it *zipmapIter) length() (int, error) {
	b, p, end := it.b, it.pos, len(it.b)-1
	if p >= end {
		return 0, ErrBadFormat
	}
	if b[p] < zipmapBigLen {
		it.pos++
		return int(b[p]), nil
	}
	if b[p] != zipmapBigLen || p+5 > end {
		return 0, ErrBadFormat
	}
	n := int(binary.LittleEndian.Uint32(b[p+1:]))
	if n < zipmapBigLen {
		return 0, ErrBadFormat
	}
	it.pos += 5
	return n, nil
}

// next returns the next field and value; ok is false at the end byte.
func (it *zipmapIter) next() (field, value []byte, ok bool, err error) {
	end := len(it.b) - 1
	if it.pos > end {
		return nil, nil, false, ErrBadFormat
	}
	if it.b[it.pos] == ziplistEnd {
		if it.pos != end {
			return nil, nil, false, ErrBadFormat
		}
		return nil, nil, false, nil
	}
	n, err := it.length()
	if err != nil || end-it.pos < n {
		return nil, nil, false, ErrBadFormat
	}
	field = it.b[it.pos : it.pos+n]
	it.pos += n
	if n, err = it.length(); err != nil || it.pos >= end {
		return nil, nil, false, ErrBadFormat
	}
	free := int(it.b[it.pos])
	it.pos++
	if end-it.pos < n+free {
		return nil, nil, false, ErrBadFormat
	}
	value = it.b[it.pos : it.pos+n]
	it.pos += n + free
	return field, value, true, nil
}
