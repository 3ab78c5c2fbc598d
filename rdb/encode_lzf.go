package rdb

// LZF compression as Redis's lzf_compress does it (liblzf 3.6 built with HLOG 16, VERY_FAST,
// a hash table of offsets), so that a string we compress comes out byte for byte as Redis's
// and Redis's lzf_decompress reads it.
//
// The output is a run of literals (a control byte 0..31: that many bytes plus one follow) or
// back references (control byte: length-2 in its top 3 bits (7 = one more length byte
// follows), offset-1 in its low 5 bits and the next byte). Offsets reach 8 KiB back; a
// reference covers 3 to 264 bytes.

const (
	lzfHashLog    = 16
	lzfHashSize   = 1 << lzfHashLog
	lzfMaxLiteral = 1 << 5
	lzfMaxOffset  = 1 << 13
	lzfMaxRef     = (1 << 8) + (1 << 3)
)

// lzfCompressor holds the hash table between calls. Redis leaves its table uninitialised,
// which cannot change its output: a slot's index depends only on the 3 bytes hashed, a stale
// slot leads to a match only if those bytes occurred earlier in this input, and the first
// occurrence of any 3 bytes is hashed (literals are, and so are the last two positions of a
// match, where the only 3-byte strings not wholly inside it start), overwriting the slot. So
// we start every call from an empty table, without clearing 512 KiB each time: a slot holds
// base+position+1 and counts only if above the call's base.
type lzfCompressor struct {
	table [lzfHashSize]uint64
	base  uint64
}

func lzfIndex(h uint32) uint32 {
	return ((h >> (3*8 - lzfHashLog)) - h*5) & (lzfHashSize - 1)
}

// compress writes in's compressed form into out and returns its length, or 0 when it does not
// fit in len(out) bytes (Redis's lzf_compress with out_len = len(out); the caller decides what
// it must save).
func (c *lzfCompressor) compress(in, out []byte) int {
	inLen, outEnd := len(in), len(out)
	if inLen == 0 || outEnd == 0 {
		return 0
	}
	base := c.base
	c.base += uint64(inLen) + 1
	if c.base > 1<<62 {
		c.table = [lzfHashSize]uint64{}
		c.base, base = uint64(inLen)+1, 0
	}
	lookup := func(slot uint32) int { // the position stored in slot, or -1
		if v := c.table[slot]; v > base {
			return int(v - base - 1)
		}
		return -1
	}
	store := func(slot uint32, pos int) { c.table[slot] = base + uint64(pos) + 1 }

	ip, op, lit := 0, 1, 0 // op starts past the first run's control byte
	h := uint32(in[0])<<8 | uint32(in[1%inLen])
	for ip < inLen-2 {
		h = h<<8 | uint32(in[ip+2])
		slot := lzfIndex(h)
		ref := lookup(slot)
		store(slot, ip)
		if ref > 0 && ip-ref-1 < lzfMaxOffset && ref < ip &&
			in[ref+2] == in[ip+2] && in[ref] == in[ip] && in[ref+1] == in[ip+1] {
			off := ip - ref - 1
			length := 2
			maxLen := inLen - ip - length
			if maxLen > lzfMaxRef {
				maxLen = lzfMaxRef
			}
			if op+3+1 >= outEnd && op-b2i(lit == 0)+3+1 >= outEnd {
				return 0
			}
			out[op-lit-1] = byte(lit - 1) // close the literal run
			if lit == 0 {
				op-- // no literals: drop the run's control byte
			}
			length = lzfMatchLen(in, ref, ip, maxLen)
			length -= 2 // the format stores a match's length less 2
			ip++
			if length < 7 {
				out[op] = byte(off>>8 + length<<5)
				op++
			} else {
				out[op] = byte(off>>8 + 7<<5)
				out[op+1] = byte(length - 7)
				op += 2
			}
			out[op] = byte(off)
			op++
			lit = 0
			op++ // start a new run
			ip += length + 1
			if ip >= inLen-2 {
				break
			}
			// VERY_FAST: hash the last two positions of the match.
			ip -= 2
			h = uint32(in[ip])<<8 | uint32(in[ip+1])
			h = h<<8 | uint32(in[ip+2])
			store(lzfIndex(h), ip)
			ip++
			h = h<<8 | uint32(in[ip+2])
			store(lzfIndex(h), ip)
			ip++
			continue
		}
		if op >= outEnd {
			return 0
		}
		lit++
		out[op] = in[ip]
		op++
		ip++
		if lit == lzfMaxLiteral {
			out[op-lit-1] = byte(lit - 1)
			lit = 0
			op++
		}
	}
	if op+3 > outEnd {
		return 0
	}
	for ip < inLen {
		lit++
		out[op] = in[ip]
		op++
		ip++
		if lit == lzfMaxLiteral {
			out[op-lit-1] = byte(lit - 1)
			lit = 0
			op++
		}
	}
	out[op-lit-1] = byte(lit - 1)
	if lit == 0 {
		op--
	}
	return op
}

// lzfMatchLen is how far in[ref:] and in[ip:] agree, their first three bytes being equal,
// as liblzf measures it: past 16 bytes it compares before testing maxLen, so a match may run
// up to two bytes past maxLen (never past the input's end, maxLen keeping two in reserve).
func lzfMatchLen(in []byte, ref, ip, maxLen int) int {
	length := 2
	if maxLen > 16 {
		for i := 0; i < 16; i++ {
			length++
			if in[ref+length] != in[ip+length] {
				return length
			}
		}
	}
	for {
		length++
		if length >= maxLen || in[ref+length] != in[ip+length] {
			return length
		}
	}
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
