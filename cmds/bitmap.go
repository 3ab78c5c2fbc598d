package cmds

import (
	"math"
	"math/bits"

	"shardis/cmdspec"
	"shardis/codec"
	"shardis/datatype"
	"shardis/pubsub"
)

// The bitmap family: bit commands over strings (datatype.String), which read and write a
// fragmented string fragment by fragment, so a sparse bitmap of 512 MB costs its set bits.

func init() {
	oneKey := func(flags cmdspec.KeyFlag) []cmdspec.KeySpec {
		return []cmdspec.KeySpec{{Flags: flags, Begin: cmdspec.Index(1), Find: cmdspec.Range(0, 1, 0)}}
	}
	Register(
		&Command{Name: "setbit", Arity: 4, Flags: []string{"write", "denyoom"}, ACL: []string{"write", "bitmap", "slow"},
			Group: "bitmap", Since: "2.2.0",
			Summary:    "Sets or clears the bit at offset in the string value stored at key",
			Complexity: "O(1)", Syntax: "key offset value",
			KeySpecs: oneKey(cmdspec.RW | cmdspec.Access | cmdspec.Update), Run: setbit},
		&Command{Name: "getbit", Arity: 3, Flags: []string{"readonly", "fast"}, ACL: []string{"read", "bitmap", "fast"},
			Group: "bitmap", Since: "2.2.0",
			Summary:    "Returns the bit value at offset in the string value stored at key",
			Complexity: "O(1)", Syntax: "key offset",
			KeySpecs: oneKey(cmdspec.RO | cmdspec.Access), Run: getbit},
		&Command{Name: "bitcount", Arity: -2, Flags: []string{"readonly"}, ACL: []string{"read", "bitmap", "slow"},
			Group: "bitmap", Since: "2.6.0", Summary: "Count set bits in a string",
			Complexity: "O(N)", Syntax: "key [start end [BYTE | BIT]]",
			KeySpecs: oneKey(cmdspec.RO | cmdspec.Access), Run: bitcount},
		&Command{Name: "bitpos", Arity: -3, Flags: []string{"readonly"}, ACL: []string{"read", "bitmap", "slow"},
			Group: "bitmap", Since: "2.8.7", Summary: "Find first bit set or clear in a string",
			Complexity: "O(N)", Syntax: "key bit [start [end [BYTE | BIT]]]",
			KeySpecs: oneKey(cmdspec.RO | cmdspec.Access), Run: bitpos},
		&Command{Name: "bitop", Arity: -4, Flags: []string{"write", "denyoom"}, ACL: []string{"write", "bitmap", "slow"},
			Group: "bitmap", Since: "2.6.0", Summary: "Perform bitwise operations between strings",
			Complexity: "O(N)", Syntax: "operation destkey key [key ...]",
			KeySpecs: []cmdspec.KeySpec{
				{Flags: cmdspec.OW | cmdspec.Update, Begin: cmdspec.Index(2), Find: cmdspec.Range(0, 1, 0)},
				{Flags: cmdspec.RO | cmdspec.Access, Begin: cmdspec.Index(3), Find: cmdspec.Range(-1, 1, 0)},
			},
			Run: bitop},
		&Command{Name: "bitfield", Arity: -2, Flags: []string{"write", "denyoom"}, ACL: []string{"write", "bitmap", "slow"},
			Group: "bitmap", Since: "3.2.0",
			Summary:    "Perform arbitrary bitfield integer operations on strings",
			Complexity: "O(1) for each subcommand specified",
			Syntax:     "key [GET encoding offset | [OVERFLOW <WRAP | SAT | FAIL>] <SET encoding offset value | INCRBY encoding offset increment> [GET encoding offset | [OVERFLOW <WRAP | SAT | FAIL>] <SET encoding offset value | INCRBY encoding offset increment> ...]]",
			KeySpecs: []cmdspec.KeySpec{{Flags: cmdspec.RW | cmdspec.Access | cmdspec.Update | cmdspec.VariableFlags,
				Notes: "This command allows both access and modification of the key",
				Begin: cmdspec.Index(1), Find: cmdspec.Range(0, 1, 0), Variable: bitfieldKeyFlags}},
			Run: func(c *Ctx) { bitfieldGeneric(c, false) }},
		&Command{Name: "bitfield_ro", Arity: -2, Flags: []string{"readonly", "fast"}, ACL: []string{"read", "bitmap", "fast"},
			Group: "bitmap", Since: "6.0.0",
			Summary:    "Perform arbitrary bitfield integer operations on strings. Read-only variant of BITFIELD",
			Complexity: "O(1) for each subcommand specified",
			Syntax:     "key [GET encoding offset [GET encoding offset ...]]",
			KeySpecs:   oneKey(cmdspec.RO | cmdspec.Access),
			Run:        func(c *Ctx) { bitfieldGeneric(c, true) }},
	)
}

var (
	bitSETBIT   = []byte("SETBIT")
	bitBITFIELD = []byte("BITFIELD")
)

const (
	errBitOffset  = "ERR bit offset is not an integer or out of range"
	errBitValue   = "ERR bit is not an integer or out of range"
	errBitPosArg  = "ERR The bit argument must be 1 or 0."
	errBitOpNot   = "ERR BITOP NOT must be called with a single source key."
	errBitType    = "ERR Invalid bitfield type. Use something like i16 u8. Note that u64 is not supported but i64 is."
	errBitOvf     = "ERR Invalid OVERFLOW type specified"
	errBitFieldRO = "ERR BITFIELD_RO only supports the GET subcommand"
)

// bitfieldKeyFlags is BITFIELD's key flags for argv, as Redis's bitfieldGetKeys: read-only
// when it holds only GETs (and OVERFLOWs), else read-write.
func bitfieldKeyFlags(argv [][]byte) cmdspec.KeyFlag {
	for i := 2; i < len(argv); i++ {
		rem, arg := len(argv)-i-1, strCString(argv[i])
		switch {
		case EqualFold(arg, "get") && rem >= 2:
			i += 2
		case EqualFold(arg, "overflow") && rem >= 1:
			i++
		default:
			return cmdspec.RW | cmdspec.Access | cmdspec.Update
		}
	}
	return cmdspec.RO | cmdspec.Access
}

// bitOffsetArg parses a bit offset as Redis's getBitOffsetFromArgument: a "#n" form (with
// hash and width > 0) counts in units of width bits; an offset whose byte lies at or past
// proto-max-bulk-len is refused (the binlog replay is exempt, as Redis's master is).
func bitOffsetArg(c *Ctx, arg []byte, hash bool, width int) (uint64, bool) {
	usehash := hash && width > 0 && len(arg) > 0 && arg[0] == '#'
	if usehash {
		arg = arg[1:]
	}
	n, ok := codec.ParseInt(arg)
	if ok && usehash {
		n *= int64(width) // wraps as C's does; a negative result is refused below
	}
	if !ok || n < 0 || (n>>3) >= strMaxLen(c) {
		c.Error(errBitOffset)
		return 0, false
	}
	return uint64(n), true
}

// bitLookupRead opens key for reading as Redis's lookupKeyRead: a missing key is an empty
// string; another type replies WRONGTYPE (ok false).
func bitLookupRead(c *Ctx, key []byte) (datatype.String, bool) {
	m, found := c.Tx.MetaRead(c.DB, key)
	s, err := datatype.StringFromMeta(c.Tx, c.DB, key, m, found)
	if err != nil {
		c.typeError(err)
		return s, false
	}
	return s, true
}

// bitByte reads the byte at off (0 past the end).
func bitByte(s *datatype.String, off int64) byte {
	var b [1]byte
	s.ReadAt(b[:], off)
	return b[0]
}

func setbit(c *Ctx) {
	key := c.Args[1]
	off, ok := bitOffsetArg(c, c.Args[2], false, 0)
	if !ok {
		return
	}
	on, ok := codec.ParseInt(c.Args[3])
	if !ok || on&^1 != 0 {
		c.Error(errBitValue)
		return
	}
	s, err := datatype.LookupString(c.Tx, c.DB, key)
	if err != nil {
		c.typeError(err)
		return
	}
	at := int64(off >> 3)
	mask := byte(1) << (7 - off&7)
	old := bitByte(&s, at)
	grows := !s.Exists() || at >= s.Len()
	if grows || (old&mask != 0) != (on == 1) {
		nb := old &^ mask
		if on == 1 {
			nb |= mask
		}
		s.WriteAt(at, []byte{nb})
		c.Tx.Log(c.DB, key, bitSETBIT, key, c.Args[2], c.Args[3])
		c.notify(pubsub.String, "setbit", key)
	} else if s.MarkRaw() { // Redis unshares the value even when no bit changes
		c.Tx.Log(c.DB, key, bitSETBIT, key, c.Args[2], c.Args[3])
	}
	if old&mask != 0 {
		c.W.Int(1)
	} else {
		c.W.Int(0)
	}
}

func getbit(c *Ctx) {
	off, ok := bitOffsetArg(c, c.Args[2], false, 0)
	if !ok {
		return
	}
	s, ok := bitLookupRead(c, c.Args[1])
	if !ok {
		return
	}
	if at := int64(off >> 3); at < s.Len() && bitByte(&s, at)&(1<<(7-off&7)) != 0 {
		c.W.Int(1)
		return
	}
	c.W.Int(0)
}

// bitRange converts BITCOUNT's and BITPOS's start and end (bytes, or bits with isBit) as
// Redis does to a range of bits [from, to] of a string of n bytes, empty when from > to.
func bitRange(start, end, n int64, isBit bool) (from, to int64) {
	total := n
	if isBit {
		total <<= 3
	}
	if start < 0 {
		start += total
	}
	if end < 0 {
		end += total
	}
	start, end = max(start, 0), max(end, 0)
	end = min(end, total-1)
	if start > end {
		return 1, 0
	}
	if isBit {
		return start, end
	}
	return start << 3, end<<3 | 7
}

// bitUnit parses BYTE or BIT (Redis compares it as a C string).
func bitUnit(c *Ctx, arg []byte) (isBit, ok bool) {
	switch a := strCString(arg); {
	case EqualFold(a, "bit"):
		return true, true
	case EqualFold(a, "byte"):
		return false, true
	}
	c.Error(ErrSyntax)
	return false, false
}

// bitMaskOf is the mask of the bits of byte i that lie in the bit range [from, to].
func bitMaskOf(i, from, to int64) byte {
	m := byte(0xff)
	if i == from>>3 {
		m &= 0xff >> (from & 7)
	}
	if i == to>>3 {
		m &= 0xff << (7 - to&7)
	}
	return m
}

func bitcount(c *Ctx) {
	s, ok := bitLookupRead(c, c.Args[1])
	if !ok {
		return
	}
	if !s.Exists() {
		c.W.Int(0)
		return
	}
	from, to := int64(0), s.Len()*8-1
	switch len(c.Args) {
	case 2:
	case 4, 5:
		start, ok := c.IntArg(2)
		if !ok {
			return
		}
		end, ok := c.IntArg(3)
		if !ok {
			return
		}
		if start < 0 && end < 0 && start > end {
			c.W.Int(0)
			return
		}
		isBit := false
		if len(c.Args) == 5 {
			if isBit, ok = bitUnit(c, c.Args[4]); !ok {
				return
			}
		}
		from, to = bitRange(start, end, s.Len(), isBit)
	default:
		c.Error(ErrSyntax)
		return
	}
	if from > to {
		c.W.Int(0)
		return
	}
	first, last := from>>3, to>>3
	var n int64
	s.Chunks(first, last+1, func(_ int64, b []byte) bool {
		n += popcount(b)
		return true
	})
	// The range's first and last bytes count only in part.
	n -= int64(bits.OnesCount8(bitByte(&s, first) &^ bitMaskOf(first, from, to)))
	if last != first {
		n -= int64(bits.OnesCount8(bitByte(&s, last) &^ bitMaskOf(last, from, to)))
	}
	c.W.Int(n)
}

// popcount counts the set bits of b.
func popcount(b []byte) int64 {
	var n int
	for len(b) >= 8 {
		n += bits.OnesCount64(uint64(b[0]) | uint64(b[1])<<8 | uint64(b[2])<<16 | uint64(b[3])<<24 |
			uint64(b[4])<<32 | uint64(b[5])<<40 | uint64(b[6])<<48 | uint64(b[7])<<56)
		b = b[8:]
	}
	for _, x := range b {
		n += bits.OnesCount8(x)
	}
	return int64(n)
}

func bitpos(c *Ctx) {
	bit, ok := c.IntArg(2)
	if !ok {
		return
	}
	if bit != 0 && bit != 1 {
		c.Error(errBitPosArg)
		return
	}
	s, ok := bitLookupRead(c, c.Args[1])
	if !ok {
		return
	}
	if !s.Exists() {
		c.W.Int(-bit) // a missing key is all zeros: 0 for a clear bit, -1 for a set one
		return
	}
	n := s.Len()
	from, to := int64(0), n*8-1
	endGiven := false
	switch len(c.Args) {
	case 3:
	case 4, 5, 6:
		start, ok := c.IntArg(3)
		if !ok {
			return
		}
		isBit := false
		if len(c.Args) == 6 {
			if isBit, ok = bitUnit(c, c.Args[5]); !ok {
				return
			}
		}
		end := n - 1
		if isBit {
			end = n<<3 + 7
		}
		if len(c.Args) >= 5 {
			if end, ok = c.IntArg(4); !ok {
				return
			}
			endGiven = true
		}
		from, to = bitRange(start, end, n, isBit)
	default:
		c.Error(ErrSyntax)
		return
	}
	if from > to {
		c.W.Int(-1)
		return
	}
	c.W.Int(bitFind(&s, byte(bit), from, to, endGiven))
}

// bitFind returns the first bit equal to bit in the bit range [from, to] of s: past the range
// (to+1) when looking for a clear bit up to an end the client did not give, as Redis treats
// the string as padded with zeros; -1 when there is none.
func bitFind(s *datatype.String, bit byte, from, to int64, endGiven bool) int64 {
	first, last := from>>3, to>>3
	flip := byte(0)
	if bit == 0 {
		flip = 0xff
	}
	found := int64(-1)
	next := first // the first byte no chunk covered yet: bytes before a chunk are zeros
	s.Chunks(first, last+1, func(at int64, b []byte) bool {
		if bit == 0 && at > next { // a gap of zero bytes
			found = max(next<<3, from)
			return false
		}
		for j := 0; j < len(b); j++ {
			i := at + int64(j)
			if i != first && i != last && j+8 <= len(b) { // whole words that cannot match
				w := uint64(b[j]) | uint64(b[j+1])<<8 | uint64(b[j+2])<<16 | uint64(b[j+3])<<24 |
					uint64(b[j+4])<<32 | uint64(b[j+5])<<40 | uint64(b[j+6])<<48 | uint64(b[j+7])<<56
				if bit == 1 && w == 0 || bit == 0 && w == math.MaxUint64 {
					j += 7
					continue
				}
			}
			if v := (b[j] ^ flip) & bitMaskOf(i, from, to); v != 0 {
				found = i<<3 + int64(bits.LeadingZeros8(v))
				return false
			}
		}
		next = at + int64(len(b))
		return true
	})
	if found >= 0 {
		return found
	}
	if bit == 0 && next <= last { // zero bytes after the last chunk
		return max(next<<3, from)
	}
	if bit == 0 && !endGiven {
		return to + 1
	}
	return -1
}

// The BITOP operations.
const (
	bitOpAnd = iota
	bitOpOr
	bitOpXor
	bitOpNot
)

func bitop(c *Ctx) {
	var op int
	switch name := strCString(c.Args[1]); {
	case EqualFold(name, "and"):
		op = bitOpAnd
	case EqualFold(name, "or"):
		op = bitOpOr
	case EqualFold(name, "xor"):
		op = bitOpXor
	case EqualFold(name, "not"):
		op = bitOpNot
	default:
		c.Error(ErrSyntax)
		return
	}
	if op == bitOpNot && len(c.Args) != 4 {
		c.Error(errBitOpNot)
		return
	}
	dst := c.Args[2]
	srcs := make([]datatype.String, len(c.Args)-3)
	var maxLen int64
	for i, key := range c.Args[3:] {
		s, ok := bitLookupRead(c, key)
		if !ok {
			return
		}
		srcs[i] = s
		maxLen = max(maxLen, s.Len())
	}
	if maxLen == 0 {
		if c.Tx.Delete(c.DB, dst) {
			c.Tx.Log(c.DB, dst, keysDEL, dst)
			c.notify(pubsub.Generic, "del", dst)
		}
		c.W.Int(0)
		return
	}
	// Piece by piece, one fragment's worth at a time: the sources are read before the
	// destination (which may be one of them) is replaced, at Close.
	w := datatype.NewStringWriter(c.Tx, c.DB, dst, maxLen)
	piece := int64(codec.FragSize)
	out := make([]byte, min(piece, maxLen))
	in := make([]byte, len(out))
	held := bitopPiecesHeld(srcs, piece, maxLen)
	for lo := int64(0); lo < maxLen; lo += piece {
		// A piece no source stores (AND: that some source lacks) is zeros in the result, left
		// unwritten: BITOP over sparse bitmaps costs their stored fragments.
		if h := held[lo/piece]; op != bitOpNot && (h == 0 || op == bitOpAnd && int(h) < len(srcs)) {
			continue
		}
		o := out[:min(piece, maxLen-lo)]
		x := in[:len(o)]
		for i := range srcs {
			srcs[i].ReadAt(x, lo) // zeros past a source's end
			if i == 0 {
				copy(o, x)
				continue
			}
			switch op {
			case bitOpAnd:
				for j := range o {
					o[j] &= x[j]
				}
			case bitOpOr:
				for j := range o {
					o[j] |= x[j]
				}
			case bitOpXor:
				for j := range o {
					o[j] ^= x[j]
				}
			}
		}
		if op == bitOpNot {
			for j := range o {
				o[j] = ^o[j]
			}
		}
		w.WriteAt(lo, o)
	}
	res := w.Close()
	m := res.Meta()
	c.Tx.Log(c.DB, dst, keysDEL, dst)
	c.logStringBytes(c.DB, dst, &m)
	c.notify(pubsub.String, "set", dst)
	c.W.Int(maxLen)
}

// bitopPiecesHeld counts, for each piece of size piece of [0, n), how many of srcs store
// bytes in it (a whole string stores every piece of its length).
func bitopPiecesHeld(srcs []datatype.String, piece, n int64) []int32 {
	held := make([]int32, (n+piece-1)/piece)
	for i := range srcs {
		last := int64(-1)
		srcs[i].Chunks(0, n, func(at int64, b []byte) bool {
			for p := max(at/piece, last+1); p <= (at+int64(len(b))-1)/piece; p++ {
				held[p]++
				last = p
			}
			return true
		})
	}
	return held
}

// The BITFIELD operations and overflow behaviours.
const (
	bfGet = iota
	bfSet
	bfIncrBy
)

const (
	bfWrap = iota
	bfSat
	bfFail
)

type bitfieldOp struct {
	offset   uint64
	value    int64
	op, ovf  int
	width    int
	isSigned bool
}

// bitfieldType parses an encoding: i1..i64 or u1..u63 (the width after the sign letter is
// read as a C string).
func bitfieldType(c *Ctx, arg []byte) (signed bool, width int, ok bool) {
	if len(arg) == 0 || arg[0] != 'i' && arg[0] != 'u' {
		c.Error(errBitType)
		return false, 0, false
	}
	signed = arg[0] == 'i'
	n, ok := codec.ParseInt(strCString(arg[1:]))
	if !ok || n < 1 || signed && n > 64 || !signed && n > 63 {
		c.Error(errBitType)
		return false, 0, false
	}
	return signed, int(n), true
}

func bitfieldGeneric(c *Ctx, readOnlyCmd bool) {
	key := c.Args[1]
	var ops []bitfieldOp
	ovf := bfWrap
	readonly := true
	var highest uint64
	for j := 2; j < len(c.Args); j++ {
		rem, sub := len(c.Args)-j-1, strCString(c.Args[j])
		var op int
		switch {
		case EqualFold(sub, "get") && rem >= 2:
			op = bfGet
		case EqualFold(sub, "set") && rem >= 3:
			op = bfSet
		case EqualFold(sub, "incrby") && rem >= 3:
			op = bfIncrBy
		case EqualFold(sub, "overflow") && rem >= 1:
			j++
			switch t := strCString(c.Args[j]); {
			case EqualFold(t, "wrap"):
				ovf = bfWrap
			case EqualFold(t, "sat"):
				ovf = bfSat
			case EqualFold(t, "fail"):
				ovf = bfFail
			default:
				c.Error(errBitOvf)
				return
			}
			continue
		default:
			c.Error(ErrSyntax)
			return
		}
		signed, width, ok := bitfieldType(c, c.Args[j+1])
		if !ok {
			return
		}
		off, ok := bitOffsetArg(c, c.Args[j+2], true, width)
		if !ok {
			return
		}
		var v int64
		if op != bfGet {
			readonly = false
			highest = max(highest, off+uint64(width)-1)
			if v, ok = c.IntArg(j + 3); !ok {
				return
			}
		}
		ops = append(ops, bitfieldOp{offset: off, value: v, op: op, ovf: ovf, width: width, isSigned: signed})
		j += 3
		if op == bfGet {
			j--
		}
	}
	var s datatype.String
	grown, rawed := false, false
	if readonly {
		var ok bool
		if s, ok = bitLookupRead(c, key); !ok {
			return
		}
	} else {
		if readOnlyCmd {
			c.Error(errBitFieldRO)
			return
		}
		var err error
		if s, err = datatype.LookupString(c.Tx, c.DB, key); err != nil {
			c.typeError(err)
			return
		}
		if need := int64(highest>>3) + 1; !s.Exists() || s.Len() < need {
			s.Grow(need)
			grown = true
		} else {
			rawed = s.MarkRaw() // Redis unshares the value even when nothing changes
		}
	}
	c.W.ArrayLen(len(ops))
	changes := 0
	var buf [9]byte
	for _, o := range ops {
		at := int64(o.offset >> 3)
		rel := o.offset & 7
		s.ReadAt(buf[:], at)
		old := bitsGet(buf[:], rel, o.width)
		if o.op == bfGet {
			if o.isSigned {
				c.W.Int(bitsSigned(old, o.width))
			} else {
				c.W.Int(int64(old))
			}
			continue
		}
		newVal, reply, overflow := bitfieldApply(&o, old)
		if overflow && o.ovf == bfFail {
			c.W.Null()
			continue
		}
		c.W.Int(reply)
		bitsSet(buf[:], rel, o.width, newVal)
		n := (rel + uint64(o.width) + 7) / 8
		s.WriteAt(at, buf[:n])
		if grown || newVal&bitsMask(o.width) != old {
			changes++
		}
	}
	if !readonly && (grown || rawed || changes > 0) {
		c.Tx.Log(c.DB, key, append([][]byte{bitBITFIELD}, c.Args[1:]...)...)
	}
	if changes > 0 {
		c.notify(pubsub.String, "setbit", key)
	}
}

// bitfieldApply computes what SET or INCRBY o stores over the field's value old (its
// width-bit pattern), what it replies (SET: the old value; INCRBY: the new one) and whether
// it overflowed (with FAIL nothing is stored).
func bitfieldApply(o *bitfieldOp, old uint64) (newVal uint64, reply int64, overflow bool) {
	if o.isSigned {
		oldS := bitsSigned(old, o.width)
		var lim int64
		if o.op == bfIncrBy {
			n := oldS + o.value
			if overflow, lim = bitfieldSignedOverflow(oldS, o.value, o.width, o.ovf); overflow {
				n = lim
			}
			return uint64(n), n, overflow
		}
		n := o.value
		if overflow, lim = bitfieldSignedOverflow(n, 0, o.width, o.ovf); overflow {
			n = lim
		}
		return uint64(n), oldS, overflow
	}
	var lim uint64
	if o.op == bfIncrBy {
		n := old + uint64(o.value)
		if overflow, lim = bitfieldUnsignedOverflow(old, o.value, o.width, o.ovf); overflow {
			n = lim
		}
		return n, int64(n), overflow
	}
	n := uint64(o.value)
	if overflow, lim = bitfieldUnsignedOverflow(n, 0, o.width, o.ovf); overflow {
		n = lim
	}
	return n, int64(old), overflow
}

// bitsMask is the mask of the low width bits.
func bitsMask(width int) uint64 {
	if width == 64 {
		return math.MaxUint64
	}
	return 1<<width - 1
}

// bitsGet reads the width-bit big-endian unsigned integer at bit rel of b.
func bitsGet(b []byte, rel uint64, width int) uint64 {
	var v uint64
	for i := uint64(0); i < uint64(width); i++ {
		p := rel + i
		v = v<<1 | uint64(b[p>>3]>>(7-p&7)&1)
	}
	return v
}

// bitsSet writes the low width bits of v, big-endian, at bit rel of b.
func bitsSet(b []byte, rel uint64, width int, v uint64) {
	for i := uint64(0); i < uint64(width); i++ {
		p := rel + i
		m := byte(1) << (7 - p&7)
		if v>>(uint64(width)-1-i)&1 != 0 {
			b[p>>3] |= m
		} else {
			b[p>>3] &^= m
		}
	}
}

// bitsSigned sign-extends a width-bit value.
func bitsSigned(v uint64, width int) int64 {
	if width < 64 && v>>(width-1)&1 != 0 {
		v |= ^uint64(0) << width
	}
	return int64(v)
}

// bitfieldUnsignedOverflow reports whether value+incr leaves the range of a width-bit
// unsigned integer, and the value to store instead (wrapped or saturated; unused with FAIL),
// as Redis's checkUnsignedBitfieldOverflow.
func bitfieldUnsignedOverflow(value uint64, incr int64, width, ovf int) (bool, uint64) {
	maxV := bitsMask(width)
	maxIncr := int64(maxV - value)
	minIncr := -int64(value)
	switch {
	case value > maxV || incr > 0 && incr > maxIncr:
		if ovf == bfSat {
			return true, maxV
		}
	case incr < 0 && incr < minIncr:
		if ovf == bfSat {
			return true, 0
		}
	default:
		return false, 0
	}
	return true, (value + uint64(incr)) & maxV
}

// bitfieldSignedOverflow is the same for a width-bit signed integer
// (Redis's checkSignedBitfieldOverflow).
func bitfieldSignedOverflow(value, incr int64, width, ovf int) (bool, int64) {
	maxV := int64(math.MaxInt64)
	if width < 64 {
		maxV = 1<<(width-1) - 1
	}
	minV := -maxV - 1
	maxIncr := int64(uint64(maxV) - uint64(value))
	minIncr := minV - value
	switch {
	case value > maxV || width != 64 && incr > maxIncr || value >= 0 && incr > 0 && incr > maxIncr:
		if ovf == bfSat {
			return true, maxV
		}
	case value < minV || width != 64 && incr < minIncr || value < 0 && incr < 0 && incr < minIncr:
		if ovf == bfSat {
			return true, minV
		}
	default:
		return false, 0
	}
	c := uint64(value) + uint64(incr)
	if width < 64 {
		if c>>(width-1)&1 != 0 {
			c |= ^uint64(0) << width
		} else {
			c &^= ^uint64(0) << width
		}
	}
	return true, int64(c)
}
