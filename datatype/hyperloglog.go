package datatype

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
)

// A HyperLogLog is a string holding Redis 7.0's representation, byte for byte, so GET, SET,
// DUMP and every string command see what redis-server would (docs/ENCODING.md):
//
//	"HYLL" | encoding (0 dense, 1 sparse) | 3 unused bytes | cached cardinality (8 bytes, LE)
//
// followed by the registers. The cached cardinality's top bit set means "stale". Dense:
// 16384 6-bit registers packed from the least significant bit of each byte (12288 bytes).
// Sparse: run-length opcodes, ZERO 00xxxxxx (1-64 zero registers), XZERO 01xxxxxx yyyyyyyy
// (1-16384 zero registers) and VAL 1vvvvvxx (1-4 registers of value 1-32).
//
// The functions below are pure functions on byte slices, after Redis's hyperloglog.c: a
// sparse HLL is changed in place the way Redis changes it, so the bytes match. A function that
// grows a value may return a new slice; one that changes bytes changes the slice it is given,
// so callers pass a copy of a value they read from a transaction (HLLClone).

const (
	HLLHeaderSize = 16
	HLLRegisters  = 1 << hllP
	HLLDenseSize  = HLLHeaderSize + (HLLRegisters*hllBits+7)/8
	HLLDense      = 0
	HLLSparse     = 1

	hllP           = 14
	hllQ           = 64 - hllP
	hllBits        = 6
	hllRegMax      = 1<<hllBits - 1
	hllPMask       = HLLRegisters - 1
	hllValMaxValue = 32
	hllValMaxLen   = 4
	hllZeroMaxLen  = 64
	hllXZeroMaxLen = 16384
	hllAlphaInf    = 0.721347520444481703680 // 0.5/ln(2)
	hllSeed        = 0xadc83b19
)

// ErrHLLCorrupt is a HyperLogLog whose registers do not decode (Redis's INVALIDOBJ).
var ErrHLLCorrupt = errors.New("datatype: corrupted HLL object")

// IsHLL reports whether b is a string Redis takes for a HyperLogLog: the magic, a known
// encoding, and the exact size for a dense one. Anything else answers WRONGTYPE.
func IsHLL(b []byte) bool {
	if len(b) < HLLHeaderSize || string(b[:4]) != "HYLL" || b[4] > HLLSparse {
		return false
	}
	return b[4] != HLLDense || len(b) == HLLDenseSize
}

// HLLEncoding returns the encoding byte of a valid HLL.
func HLLEncoding(b []byte) byte { return b[4] }

// NewHLL returns an empty sparse HLL (XZERO:16384), with room to grow.
func NewHLL() []byte {
	b := make([]byte, HLLHeaderSize+2, 64)
	copy(b, "HYLL")
	b[4] = HLLSparse
	hllSetXZero(b[HLLHeaderSize:], HLLRegisters)
	return b
}

// HLLClone copies b with some room to grow, so the copy can be changed in place.
func HLLClone(b []byte) []byte {
	c := make([]byte, len(b), len(b)+len(b)/4+8)
	copy(c, b)
	return c
}

// HLLCached returns the cached cardinality and whether it is valid.
func HLLCached(b []byte) (uint64, bool) {
	if b[15]&0x80 != 0 {
		return 0, false
	}
	var n uint64
	for i := 7; i >= 0; i-- {
		n = n<<8 | uint64(b[8+i])
	}
	return n, true
}

// HLLSetCached stores card as the cached cardinality.
func HLLSetCached(b []byte, card uint64) {
	for i := 0; i < 8; i++ {
		b[8+i] = byte(card >> (8 * i))
	}
}

// HLLInvalidate marks the cached cardinality stale.
func HLLInvalidate(b []byte) { b[15] |= 0x80 }

// MurmurHash64A is Redis's endian-neutral MurmurHash2, 64-bit version.
func MurmurHash64A(key []byte, seed uint32) uint64 {
	const m = 0xc6a4a7935bd1e995
	const r = 47
	h := uint64(seed) ^ uint64(len(key))*m
	n := len(key) &^ 7
	for i := 0; i < n; i += 8 {
		k := uint64(key[i]) | uint64(key[i+1])<<8 | uint64(key[i+2])<<16 | uint64(key[i+3])<<24 |
			uint64(key[i+4])<<32 | uint64(key[i+5])<<40 | uint64(key[i+6])<<48 | uint64(key[i+7])<<56
		k *= m
		k ^= k >> r
		k *= m
		h ^= k
		h *= m
	}
	tail := key[n:]
	switch len(tail) {
	case 7:
		h ^= uint64(tail[6]) << 48
		fallthrough
	case 6:
		h ^= uint64(tail[5]) << 40
		fallthrough
	case 5:
		h ^= uint64(tail[4]) << 32
		fallthrough
	case 4:
		h ^= uint64(tail[3]) << 24
		fallthrough
	case 3:
		h ^= uint64(tail[2]) << 16
		fallthrough
	case 2:
		h ^= uint64(tail[1]) << 8
		fallthrough
	case 1:
		h ^= uint64(tail[0])
		h *= m
	}
	h ^= h >> r
	h *= m
	h ^= h >> r
	return h
}

// hllPatLen returns the register an element goes to and the length of the 000..1 pattern of
// its hash (1 to Q+1).
func hllPatLen(elem []byte) (index int, count uint8) {
	hash := MurmurHash64A(elem, hllSeed)
	index = int(hash & hllPMask)
	hash >>= hllP
	hash |= 1 << hllQ
	count = 1
	for bit := uint64(1); hash&bit == 0; bit <<= 1 {
		count++
	}
	return index, count
}

// ---- dense ----

// hllDenseGet reads register i of the dense registers regs (the bytes after the header); the
// byte after the last one reads as zero (Redis reads the string's terminator).
func hllDenseGet(regs []byte, i int) uint8 {
	byt := i * hllBits / 8
	fb := uint(i * hllBits & 7)
	b0 := uint(regs[byt])
	var b1 uint
	if byt+1 < len(regs) {
		b1 = uint(regs[byt+1])
	}
	return uint8((b0>>fb | b1<<(8-fb)) & hllRegMax)
}

func hllDenseSetReg(regs []byte, i int, val uint8) {
	byt := i * hllBits / 8
	fb := uint(i * hllBits & 7)
	v := uint(val)
	regs[byt] &^= byte(hllRegMax << fb)
	regs[byt] |= byte(v << fb)
	if byt+1 < len(regs) {
		regs[byt+1] &^= byte(hllRegMax >> (8 - fb))
		regs[byt+1] |= byte(v >> (8 - fb))
	}
}

// hllDenseSet raises register i to count and reports whether it changed.
func hllDenseSet(regs []byte, i int, count uint8) bool {
	if count > hllDenseGet(regs, i) {
		hllDenseSetReg(regs, i, count)
		return true
	}
	return false
}

func hllDenseHisto(regs []byte, histo *[64]int) {
	for j := 0; j+12 <= len(regs); j += 12 {
		r := regs[j : j+12 : j+12]
		histo[r[0]&63]++
		histo[(r[0]>>6|r[1]<<2)&63]++
		histo[(r[1]>>4|r[2]<<4)&63]++
		histo[(r[2]>>2)&63]++
		histo[r[3]&63]++
		histo[(r[3]>>6|r[4]<<2)&63]++
		histo[(r[4]>>4|r[5]<<4)&63]++
		histo[(r[5]>>2)&63]++
		histo[r[6]&63]++
		histo[(r[6]>>6|r[7]<<2)&63]++
		histo[(r[7]>>4|r[8]<<4)&63]++
		histo[(r[8]>>2)&63]++
		histo[r[9]&63]++
		histo[(r[9]>>6|r[10]<<2)&63]++
		histo[(r[10]>>4|r[11]<<4)&63]++
		histo[(r[11]>>2)&63]++
	}
}

// ---- sparse ----

func hllIsZero(b byte) bool  { return b&0xc0 == 0 }
func hllIsXZero(b byte) bool { return b&0xc0 == 0x40 }
func hllIsVal(b byte) bool   { return b&0x80 != 0 }
func hllZeroLen(b byte) int  { return int(b&0x3f) + 1 }
func hllXZeroLen(b0, b1 byte) int {
	return (int(b0&0x3f)<<8 | int(b1)) + 1
}
func hllValValue(b byte) int { return int(b>>2&0x1f) + 1 }
func hllValLen(b byte) int   { return int(b&3) + 1 }
func hllVal(val, n int) byte { return byte((val-1)<<2|(n-1)) | 0x80 }
func hllSetXZero(p []byte, n int) {
	n--
	p[0] = byte(n>>8) | 0x40
	p[1] = byte(n)
}

// at returns b[i], or zero past its end (where Redis reads the string's terminator).
func at(b []byte, i int) byte {
	if i < len(b) {
		return b[i]
	}
	return 0
}

// hllSparseWalk calls fn(first, n, val) for each run of the sparse registers of b, in order,
// and reports whether they decode to exactly 16384 registers. It stops at the first run that
// would pass the last register.
func hllSparseWalk(b []byte, fn func(first, n, val int)) bool {
	idx := 0
	for p := HLLHeaderSize; p < len(b); {
		c := b[p]
		var n, val int
		switch {
		case hllIsZero(c):
			n = hllZeroLen(c)
			p++
		case hllIsXZero(c):
			n = hllXZeroLen(c, at(b, p+1))
			p += 2
		default:
			n, val = hllValLen(c), hllValValue(c)
			p++
		}
		if idx+n > HLLRegisters {
			return false
		}
		fn(idx, n, val)
		idx += n
	}
	return idx == HLLRegisters
}

// HLLToDense returns the dense form of a sparse HLL (the header copied, encoding dense); a
// dense one is returned as is. It fails with ErrHLLCorrupt when the opcodes do not decode.
func HLLToDense(b []byte) ([]byte, error) {
	if b[4] == HLLDense {
		return b, nil
	}
	d := make([]byte, HLLDenseSize)
	copy(d, b[:HLLHeaderSize])
	d[4] = HLLDense
	regs := d[HLLHeaderSize:]
	ok := hllSparseWalk(b, func(first, n, val int) {
		if val != 0 {
			for i := first; i < first+n; i++ {
				hllDenseSetReg(regs, i, uint8(val))
			}
		}
	})
	if !ok {
		return nil, ErrHLLCorrupt
	}
	return d, nil
}

// hllRoom makes room for n more bytes and a terminator after len(b), as sdsMakeRoomFor.
func hllRoom(b []byte, n int) []byte {
	if cap(b)-len(b) >= n+1 {
		return b
	}
	c := make([]byte, len(b), 2*len(b)+n+1)
	copy(c, b)
	return c
}

// hllSparseSet raises register index of the sparse HLL b to count, as Redis's hllSparseSet:
// it returns the HLL (maybe another slice, maybe promoted to dense when count does not fit a
// VAL opcode or the HLL would grow past maxBytes) and 1 if a register changed, 0 if not, -1
// if b is corrupt.
func hllSparseSet(b []byte, index int, count uint8, maxBytes int64) ([]byte, int) {
	if count > hllValMaxValue {
		return hllPromote(b, index, count)
	}
	b = hllRoom(b, 3)
	m := b[:cap(b)] // the bytes past the length stand for the sds's spare room
	end := len(b)
	p, first, span, prev := HLLHeaderSize, 0, 0, -1
	for p < end {
		oplen := 1
		c := m[p]
		switch {
		case hllIsZero(c):
			span = hllZeroLen(c)
		case hllIsVal(c):
			span = hllValLen(c)
		default:
			span = hllXZeroLen(c, m[p+1])
			oplen = 2
		}
		if index <= first+span-1 {
			break
		}
		prev = p
		p += oplen
		first += span
	}
	if span == 0 || p >= end {
		return b, -1
	}
	c := m[p]
	isZero, isXZero, isVal := hllIsZero(c), hllIsXZero(c), hllIsVal(c)
	next := p + 1
	if isXZero {
		next = p + 2
	}
	if next >= end {
		next = -1
	}
	var runlen int
	switch {
	case isZero:
		runlen = hllZeroLen(c)
	case isXZero:
		runlen = hllXZeroLen(c, m[p+1])
	default:
		runlen = hllValLen(c)
	}
	updated := false
	if isVal {
		if hllValValue(c) >= int(count) {
			return b, 0
		}
		if runlen == 1 {
			m[p] = hllVal(int(count), 1)
			updated = true
		}
	}
	if !updated && isZero && runlen == 1 {
		m[p] = hllVal(int(count), 1)
		updated = true
	}
	if !updated {
		// Split the opcode into up to three: what precedes the register, the register,
		// what follows it.
		var seq [5]byte
		n := 0
		last := first + span - 1
		zeros := func(l int) {
			if l > hllZeroMaxLen {
				hllSetXZero(seq[n:], l)
				n += 2
			} else {
				seq[n] = byte(l - 1)
				n++
			}
		}
		if isZero || isXZero {
			if index != first {
				zeros(index - first)
			}
			seq[n] = hllVal(int(count), 1)
			n++
			if index != last {
				zeros(last - index)
			}
		} else {
			cur := hllValValue(c)
			if index != first {
				seq[n] = hllVal(cur, index-first)
				n++
			}
			seq[n] = hllVal(int(count), 1)
			n++
			if index != last {
				seq[n] = hllVal(cur, last-index)
				n++
			}
		}
		oldlen := 1
		if isXZero {
			oldlen = 2
		}
		delta := n - oldlen
		if delta > 0 && int64(len(b)+delta) > maxBytes {
			return hllPromote(b, index, count)
		}
		if delta != 0 && next >= 0 {
			copy(m[next+delta:], m[next:end])
		}
		b = b[:len(b)+delta]
		m[len(b)] = 0
		copy(m[p:], seq[:n])
		end += delta
	}
	// Merge adjacent VAL opcodes of the same value, scanning up to 5 opcodes from prev.
	p = prev
	if p < 0 {
		p = HLLHeaderSize
	}
	for scan := 5; p < end; {
		if scan == 0 {
			break
		}
		scan--
		c := m[p]
		if hllIsXZero(c) {
			p += 2
			continue
		}
		if hllIsZero(c) {
			p++
			continue
		}
		if p+1 < end && hllIsVal(m[p+1]) {
			v1, v2 := hllValValue(c), hllValValue(m[p+1])
			if v1 == v2 {
				if l := hllValLen(c) + hllValLen(m[p+1]); l <= hllValMaxLen {
					m[p+1] = hllVal(v1, l)
					copy(m[p:], m[p+1:end+1])
					b = b[:len(b)-1]
					m[len(b)] = 0
					end--
					continue
				}
			}
		}
		p++
	}
	HLLInvalidate(b)
	return b, 1
}

// hllPromote turns the sparse b dense and sets register index to count there.
func hllPromote(b []byte, index int, count uint8) ([]byte, int) {
	d, err := HLLToDense(b)
	if err != nil {
		return b, -1
	}
	hllDenseSet(d[HLLHeaderSize:], index, count)
	return d, 1
}

// HLLAdd adds elem to the HLL b (valid: see IsHLL) and returns it, maybe as another slice or
// promoted to dense (a sparse one past maxBytes, hll-sparse-max-bytes), with 1 when a
// register changed, 0 when none did, -1 when b is corrupt.
func HLLAdd(b, elem []byte, maxBytes int64) ([]byte, int) {
	index, count := hllPatLen(elem)
	return HLLSetRegister(b, index, count, maxBytes)
}

// HLLSetRegister raises register index of b to count: HLLAdd after the hash.
func HLLSetRegister(b []byte, index int, count uint8, maxBytes int64) ([]byte, int) {
	switch b[4] {
	case HLLDense:
		if hllDenseSet(b[HLLHeaderSize:], index, count) {
			return b, 1
		}
		return b, 0
	case HLLSparse:
		return hllSparseSet(b, index, count, maxBytes)
	}
	return b, -1
}

// HLLMerge raises each of max's registers to b's (a valid HLL), as Redis's hllMerge.
func HLLMerge(max *[HLLRegisters]uint8, b []byte) error {
	if b[4] == HLLDense {
		regs := b[HLLHeaderSize:HLLDenseSize]
		for j, i := 0, 0; j+12 <= len(regs); j, i = j+12, i+16 {
			r := regs[j : j+12 : j+12]
			m := max[i : i+16 : i+16]
			vals := [16]uint8{
				r[0] & 63, (r[0]>>6 | r[1]<<2) & 63, (r[1]>>4 | r[2]<<4) & 63, r[2] >> 2,
				r[3] & 63, (r[3]>>6 | r[4]<<2) & 63, (r[4]>>4 | r[5]<<4) & 63, r[5] >> 2,
				r[6] & 63, (r[6]>>6 | r[7]<<2) & 63, (r[7]>>4 | r[8]<<4) & 63, r[8] >> 2,
				r[9] & 63, (r[9]>>6 | r[10]<<2) & 63, (r[10]>>4 | r[11]<<4) & 63, r[11] >> 2,
			}
			for k, v := range vals {
				if v > m[k] {
					m[k] = v
				}
			}
		}
		return nil
	}
	ok := hllSparseWalk(b, func(first, n, val int) {
		if val == 0 {
			return
		}
		for i := first; i < first+n; i++ {
			if uint8(val) > max[i] {
				max[i] = uint8(val)
			}
		}
	})
	if !ok {
		return ErrHLLCorrupt
	}
	return nil
}

// HLLCount computes the cardinality of b (valid) from its registers, ignoring the cache.
func HLLCount(b []byte) (uint64, error) {
	var histo [64]int
	if b[4] == HLLDense {
		hllDenseHisto(b[HLLHeaderSize:], &histo)
	} else {
		ok := hllSparseWalk(b, func(_, n, val int) { histo[val] += n })
		if !ok {
			return 0, ErrHLLCorrupt
		}
	}
	return hllEstimate(&histo), nil
}

// HLLCountRegisters is the cardinality of plain 8-bit registers (PFCOUNT's union). Eight
// registers at a time: most are zero in all but the biggest HLLs.
func HLLCountRegisters(regs *[HLLRegisters]uint8) uint64 {
	var h [256]int
	for i := 0; i+8 <= len(regs); i += 8 {
		r := regs[i : i+8 : i+8]
		if binary.LittleEndian.Uint64(r) == 0 {
			h[0] += 8
			continue
		}
		h[r[0]]++
		h[r[1]]++
		h[r[2]]++
		h[r[3]]++
		h[r[4]]++
		h[r[5]]++
		h[r[6]]++
		h[r[7]]++
	}
	var histo [64]int
	for v, n := range h {
		histo[v&63] += n
	}
	return hllEstimate(&histo)
}

// hllEstimate is Ertl's improved estimator ("New cardinality estimation algorithms for
// HyperLogLog sketches", arXiv:1702.01284), in the order of Redis's double operations so the
// result is the same (explicit conversions keep the compiler from fusing them).
func hllEstimate(histo *[64]int) uint64 {
	m := float64(HLLRegisters)
	z := float64(m * hllTau(float64(m-float64(histo[hllQ+1]))/m))
	for j := hllQ; j >= 1; j-- {
		z += float64(histo[j])
		z *= 0.5
	}
	z += float64(m * hllSigma(float64(histo[0])/m))
	return uint64(math.Round(float64(float64(hllAlphaInf*m)*m) / z))
}

func hllSigma(x float64) float64 {
	if x == 1 {
		return math.Inf(1)
	}
	y, z := 1.0, x
	for {
		x = float64(x * x)
		prev := z
		z += float64(x * y)
		y += y
		if prev == z {
			return z
		}
	}
}

func hllTau(x float64) float64 {
	if x == 0 || x == 1 {
		return 0
	}
	y, z := 1.0, 1-x
	for {
		x = math.Sqrt(x)
		prev := z
		y *= 0.5
		d := float64(1 - x)
		z -= float64(float64(d*d) * y)
		if prev == z {
			return z / 3
		}
	}
}

// HLLRegisterValues returns the 16384 registers of a dense HLL (PFDEBUG GETREG).
func HLLRegisterValues(b []byte) []uint8 {
	out := make([]uint8, HLLRegisters)
	regs := b[HLLHeaderSize:]
	for i := range out {
		out[i] = hllDenseGet(regs, i)
	}
	return out
}

// HLLDecode describes the opcodes of a sparse HLL as PFDEBUG DECODE does ("Z:16384",
// "z:3", "v:2,1", space separated). It does not check that they add up.
func HLLDecode(b []byte) string {
	var sb strings.Builder
	for p := HLLHeaderSize; p < len(b); {
		c := b[p]
		switch {
		case hllIsZero(c):
			sb.WriteString("z:" + strconv.Itoa(hllZeroLen(c)) + " ")
			p++
		case hllIsXZero(c):
			sb.WriteString("Z:" + strconv.Itoa(hllXZeroLen(c, at(b, p+1))) + " ")
			p += 2
		default:
			sb.WriteString("v:" + strconv.Itoa(hllValValue(c)) + "," + strconv.Itoa(hllValLen(c)) + " ")
			p++
		}
	}
	return strings.Trim(sb.String(), " ")
}

// HLLSelfTest is PFSELFTEST: dense registers keep what is written to them, and HLLs of up to
// 10 million elements, dense and sparse side by side (sparse while small, for maxBytes),
// agree and stay within six standard errors. It returns Redis's TESTFAILED message, or "".
func HLLSelfTest(maxBytes int64) string {
	regs := make([]byte, HLLDenseSize-HLLHeaderSize)
	var want [HLLRegisters]uint8
	for range 1000 {
		for i := range want {
			want[i] = uint8(rand.IntN(hllRegMax + 1))
			hllDenseSetReg(regs, i, want[i])
		}
		for i := range want {
			if v := hllDenseGet(regs, i); v != want[i] {
				return fmt.Sprintf("TESTFAILED Register %d should be %d but is %d", i, want[i], v)
			}
		}
	}
	dense := make([]byte, HLLDenseSize)
	copy(dense, "HYLL")
	sparse := NewHLL()
	relerr := 1.04 / math.Sqrt(HLLRegisters)
	checkpoint := uint64(1)
	seed := rand.Uint64()
	var ele [8]byte
	for j := uint64(1); j <= 10000000; j++ {
		binary.LittleEndian.PutUint64(ele[:], j^seed)
		index, count := hllPatLen(ele[:])
		hllDenseSet(dense[HLLHeaderSize:], index, count)
		sparse, _ = HLLSetRegister(sparse, index, count, maxBytes)
		if j != checkpoint {
			continue
		}
		if int64(j) < maxBytes/2 && sparse[4] != HLLSparse {
			return "TESTFAILED sparse encoding not used"
		}
		dc, _ := HLLCount(dense)
		sc, _ := HLLCount(sparse)
		if dc != sc {
			return "TESTFAILED dense/sparse disagree"
		}
		abserr := int64(checkpoint) - int64(dc)
		maxerr := uint64(math.Ceil(relerr * 6 * float64(checkpoint)))
		if j == 10 {
			maxerr = 1
		}
		if abserr < 0 {
			abserr = -abserr
		}
		if abserr > int64(maxerr) {
			return fmt.Sprintf("TESTFAILED Too big error. card:%d abserr:%d", checkpoint, abserr)
		}
		checkpoint *= 10
	}
	return ""
}

// HLLStoreMax raises the registers of dst (a valid HLL the caller may change) to max, as
// PFMERGE writes its destination: made dense first when dense (a source was), else set one by
// one (which may promote it), and its cached cardinality marked stale.
func HLLStoreMax(dst []byte, max *[HLLRegisters]uint8, dense bool, maxBytes int64) ([]byte, error) {
	if dense {
		d, err := HLLToDense(dst)
		if err != nil {
			return dst, err
		}
		dst = d
	}
	for i, v := range max {
		if v != 0 {
			dst, _ = HLLSetRegister(dst, i, v, maxBytes)
		}
	}
	HLLInvalidate(dst)
	return dst, nil
}

// PutHLL stores the HLL b as the string's value, keeping its expire time (a missing key is
// created without one). The value is raw, as Redis keeps a string the PF commands changed.
// b must not change until the transaction commits (see SetString).
func (s *String) PutHLL(b []byte) { s.put(b, true) }

// Raw reports whether the value is flagged raw (APPEND, SETRANGE and the PF commands
// changed it).
func (s *String) Raw() bool { return s.meta.Raw }

// HLLDenseAddsNothing reports whether adding elems to the dense HLL b would leave every
// register as it is, so PFADD can answer 0 without copying the 12 KB value.
func HLLDenseAddsNothing(b []byte, elems [][]byte) bool {
	regs := b[HLLHeaderSize:]
	for _, e := range elems {
		index, count := hllPatLen(e)
		if count > hllDenseGet(regs, index) {
			return false
		}
	}
	return true
}
