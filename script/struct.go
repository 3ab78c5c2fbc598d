package script

import (
	"encoding/binary"
	"math"
	"strings"

	lua "github.com/yuin/gopher-lua"
)

// The struct library Redis bundles (Roberto Ierusalimschy's struct.c): pack, unpack and size
// of binary records, on a 64-bit little-endian machine (long and size_t are 8 bytes, int 4).

const (
	structMaxIntSize = 32
	structMaxAlign   = 8
)

type structHeader struct {
	big   bool
	align int
}

func openStruct(L *lua.LState) *lua.LTable {
	t := L.NewTable()
	t.RawSetString("pack", L.NewFunction(structPack))
	t.RawSetString("unpack", L.NewFunction(structUnpack))
	t.RawSetString("size", L.NewFunction(structSize))
	return t
}

// structGetNum reads a decimal count at fmt[*i], or returns def when there is none.
func structGetNum(L *lua.LState, fmt string, i *int, def int) int {
	if *i >= len(fmt) || fmt[*i] < '0' || fmt[*i] > '9' {
		return def
	}
	a := 0
	for *i < len(fmt) && fmt[*i] >= '0' && fmt[*i] <= '9' {
		d := int(fmt[*i] - '0')
		if a > math.MaxInt32/10 || a*10 > math.MaxInt32-d {
			L.RaiseError("integral size overflow")
		}
		a = a*10 + d
		*i++
	}
	return a
}

func structOptSize(L *lua.LState, opt byte, fmt string, i *int) int {
	switch opt {
	case 'B', 'b':
		return 1
	case 'H', 'h':
		return 2
	case 'L', 'l', 'T', 'd':
		return 8
	case 'f':
		return 4
	case 'x':
		return 1
	case 'c':
		return structGetNum(L, fmt, i, 1)
	case 'i', 'I':
		sz := structGetNum(L, fmt, i, 4)
		if sz > structMaxIntSize {
			L.RaiseError("integral size %d is larger than limit of %d", sz, structMaxIntSize)
		}
		return sz
	}
	return 0
}

func structToAlign(n int, h *structHeader, opt byte, size int) int {
	if size == 0 || opt == 'c' {
		return 0
	}
	if size > h.align {
		size = h.align
	}
	return (size - (n & (size - 1))) & (size - 1)
}

func structControl(L *lua.LState, opt byte, fmt string, i *int, h *structHeader) {
	switch opt {
	case ' ':
	case '>':
		h.big = true
	case '<':
		h.big = false
	case '!':
		a := structGetNum(L, fmt, i, structMaxAlign)
		if a <= 0 || a&(a-1) != 0 {
			L.RaiseError("alignment %d is not a power of 2", a)
		}
		h.align = a
	default:
		L.ArgError(1, "invalid format option '"+string(opt)+"'")
	}
}

func structPack(L *lua.LState) int {
	fmt := L.CheckString(1)
	h := structHeader{align: 1}
	arg := 2
	var b strings.Builder
	total := 0
	for i := 0; i < len(fmt); {
		opt := fmt[i]
		i++
		size := structOptSize(L, opt, fmt, &i)
		pad := structToAlign(total, &h, opt, size)
		total += pad
		for ; pad > 0; pad-- {
			b.WriteByte(0)
		}
		switch opt {
		case 'b', 'B', 'h', 'H', 'l', 'L', 'T', 'i', 'I':
			n := checkNumber(L, arg)
			arg++
			var v uint64
			if n < math.MaxInt64 {
				v = uint64(luaNumberToInt(n))
			} else {
				v = uint64(n)
			}
			buf := make([]byte, size)
			for k := 0; k < size && k < 8; k++ {
				if h.big {
					buf[size-1-k] = byte(v >> (8 * k))
				} else {
					buf[k] = byte(v >> (8 * k))
				}
			}
			b.Write(buf)
		case 'x':
			b.WriteByte(0)
		case 'f':
			var buf [4]byte
			bits := math.Float32bits(float32(checkNumber(L, arg)))
			arg++
			if h.big {
				binary.BigEndian.PutUint32(buf[:], bits)
			} else {
				binary.LittleEndian.PutUint32(buf[:], bits)
			}
			b.Write(buf[:])
		case 'd':
			var buf [8]byte
			bits := math.Float64bits(checkNumber(L, arg))
			arg++
			if h.big {
				binary.BigEndian.PutUint64(buf[:], bits)
			} else {
				binary.LittleEndian.PutUint64(buf[:], bits)
			}
			b.Write(buf[:])
		case 'c', 's':
			s := checkString(L, arg)
			arg++
			if size == 0 {
				size = len(s)
			}
			if len(s) < size {
				L.ArgError(arg, "string too short")
			}
			b.WriteString(s[:size])
			if opt == 's' {
				b.WriteByte(0)
				size++
			}
		default:
			structControl(L, opt, fmt, &i, &h)
		}
		total += size
	}
	L.Push(lua.LString(b.String()))
	return 1
}

func structUnpack(L *lua.LState) int {
	fmt := L.CheckString(1)
	data := L.CheckString(2)
	pos := L.OptInt(3, 1) - 1
	if pos < 0 || pos > len(data) {
		L.ArgError(3, "offset must be 1 or greater")
	}
	h := structHeader{align: 1}
	L.SetTop(2)
	ld := len(data)
	for i := 0; i < len(fmt); {
		opt := fmt[i]
		i++
		size := structOptSize(L, opt, fmt, &i)
		pos += structToAlign(pos, &h, opt, size)
		if size > ld || pos > ld-size {
			L.ArgError(2, "data string too short")
		}
		switch opt {
		case 'b', 'B', 'h', 'H', 'l', 'L', 'T', 'i', 'I':
			var v uint64
			for k := 0; k < size; k++ {
				var byt byte
				if h.big {
					byt = data[pos+k]
				} else {
					byt = data[pos+size-1-k]
				}
				v = v<<8 | uint64(byt)
			}
			if opt >= 'a' && opt <= 'z' && size > 0 && size <= 8 {
				mask := ^uint64(0) << (uint(size)*8 - 1)
				if v&mask != 0 {
					v |= mask
				}
				L.Push(lua.LNumber(float64(int64(v))))
			} else {
				L.Push(lua.LNumber(float64(v)))
			}
		case 'x':
		case 'f':
			raw := []byte(data[pos : pos+4])
			var bits uint32
			if h.big {
				bits = binary.BigEndian.Uint32(raw)
			} else {
				bits = binary.LittleEndian.Uint32(raw)
			}
			L.Push(lua.LNumber(math.Float32frombits(bits)))
		case 'd':
			raw := []byte(data[pos : pos+8])
			var bits uint64
			if h.big {
				bits = binary.BigEndian.Uint64(raw)
			} else {
				bits = binary.LittleEndian.Uint64(raw)
			}
			L.Push(lua.LNumber(math.Float64frombits(bits)))
		case 'c':
			if size == 0 {
				n, ok := L.Get(-1).(lua.LNumber)
				if !ok || L.GetTop() <= 2 {
					L.RaiseError("format `c0' needs a previous size")
				}
				size = int(n)
				L.Pop(1)
				if size < 0 || size > ld || pos > ld-size {
					L.ArgError(2, "data string too short")
				}
			}
			L.Push(lua.LString(data[pos : pos+size]))
		case 's':
			e := strings.IndexByte(data[pos:], 0)
			if e < 0 {
				L.RaiseError("unfinished string in data")
			}
			size = e + 1
			L.Push(lua.LString(data[pos : pos+e]))
		default:
			structControl(L, opt, fmt, &i, &h)
		}
		pos += size
	}
	L.Push(lua.LNumber(pos + 1))
	return L.GetTop() - 2
}

func structSize(L *lua.LState) int {
	fmt := L.CheckString(1)
	h := structHeader{align: 1}
	pos := 0
	for i := 0; i < len(fmt); {
		opt := fmt[i]
		i++
		size := structOptSize(L, opt, fmt, &i)
		pos += structToAlign(pos, &h, opt, size)
		switch {
		case opt == 's':
			L.ArgError(1, "option 's' has no fixed size")
		case opt == 'c' && size == 0:
			L.ArgError(1, "option 'c0' has no fixed size")
		}
		if !isAlnum(opt) {
			structControl(L, opt, fmt, &i, &h)
		}
		pos += size
	}
	L.Push(lua.LNumber(pos))
	return 1
}

func isAlnum(ch byte) bool {
	return ch >= 'a' && ch <= 'z' || ch >= 'A' && ch <= 'Z' || ch >= '0' && ch <= '9'
}
