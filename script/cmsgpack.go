package script

import (
	"encoding/binary"
	"math"

	lua "github.com/yuin/gopher-lua"
)

// cmsgpack as Redis bundles it (lua-cmsgpack 0.4): pack encodes its arguments one after the
// other; unpack decodes every object of a string. Tables whose keys are exactly 1..n are
// arrays, others maps (in gopher-lua's table order); nesting past 16 tables packs nil.

const msgpackMaxNesting = 16

func openMsgpack(L *lua.LState) *lua.LTable {
	t := L.NewTable()
	t.RawSetString("pack", L.NewFunction(msgpackPack))
	t.RawSetString("unpack", L.NewFunction(msgpackUnpack))
	t.RawSetString("unpack_one", L.NewFunction(func(L *lua.LState) int {
		offset := 0.0
		if L.Get(2) != lua.LNil {
			offset = checkNumber(L, 2)
		}
		return msgpackUnpackFull(L, 1, int64(offset))
	}))
	t.RawSetString("unpack_limit", L.NewFunction(func(L *lua.LState) int {
		limit := checkNumber(L, 2)
		offset := 0.0
		if L.Get(3) != lua.LNil {
			offset = checkNumber(L, 3)
		}
		return msgpackUnpackFull(L, int64(limit), int64(offset))
	}))
	t.RawSetString("_NAME", lua.LString("cmsgpack"))
	t.RawSetString("_VERSION", lua.LString("lua-cmsgpack 0.4.0"))
	t.RawSetString("_COPYRIGHT", lua.LString("Copyright (C) 2012, Salvatore Sanfilippo"))
	t.RawSetString("_DESCRIPTION", lua.LString("MessagePack C implementation for Lua"))
	return t
}

func msgpackPack(L *lua.LState) int {
	n := L.GetTop()
	if n == 0 {
		L.ArgError(0, "MessagePack pack needs input.")
	}
	var b []byte
	for i := 1; i <= n; i++ {
		b = msgpackEncode(b, L.Get(i), 0)
	}
	L.Push(lua.LString(b))
	return 1
}

func msgpackEncode(b []byte, v lua.LValue, level int) []byte {
	switch v := v.(type) {
	case lua.LBool:
		if v {
			return append(b, 0xc3)
		}
		return append(b, 0xc2)
	case lua.LNumber:
		f := float64(v)
		if !math.IsInf(f, 0) && !math.IsNaN(f) && f >= -9223372036854775808 && f < 9223372036854775808 && float64(int64(f)) == f {
			return msgpackInt(b, int64(f))
		}
		if float64(float32(f)) == f || math.IsNaN(f) {
			b = append(b, 0xca)
			return binary.BigEndian.AppendUint32(b, math.Float32bits(float32(f)))
		}
		b = append(b, 0xcb)
		return binary.BigEndian.AppendUint64(b, math.Float64bits(f))
	case lua.LString:
		n := len(v)
		switch {
		case n < 32:
			b = append(b, 0xa0|byte(n))
		case n <= 0xff:
			b = append(b, 0xd9, byte(n))
		case n <= 0xffff:
			b = append(b, 0xda)
			b = binary.BigEndian.AppendUint16(b, uint16(n))
		default:
			b = append(b, 0xdb)
			b = binary.BigEndian.AppendUint32(b, uint32(n))
		}
		return append(b, v...)
	case *lua.LTable:
		if level == msgpackMaxNesting {
			return append(b, 0xc0)
		}
		if msgpackIsArray(v) {
			n := v.Len()
			switch {
			case n <= 15:
				b = append(b, 0x90|byte(n))
			case n <= 0xffff:
				b = append(b, 0xdc)
				b = binary.BigEndian.AppendUint16(b, uint16(n))
			default:
				b = append(b, 0xdd)
				b = binary.BigEndian.AppendUint32(b, uint32(n))
			}
			for i := 1; i <= n; i++ {
				b = msgpackEncode(b, v.RawGetInt(i), level+1)
			}
			return b
		}
		n := 0
		v.ForEach(func(lua.LValue, lua.LValue) { n++ })
		switch {
		case n <= 15:
			b = append(b, 0x80|byte(n))
		case n <= 0xffff:
			b = append(b, 0xde)
			b = binary.BigEndian.AppendUint16(b, uint16(n))
		default:
			b = append(b, 0xdf)
			b = binary.BigEndian.AppendUint32(b, uint32(n))
		}
		// In Lua 5.1's order where the model knows it (luaorder.go), else in insertion order
		// (gopher-lua's next): never ForEach's Go map order, so a table packs the same bytes
		// every time.
		if keys, ok := luaOrder(v); ok {
			for _, k := range keys {
				b = msgpackEncode(b, k, level+1)
				b = msgpackEncode(b, v.RawGet(k), level+1)
			}
			return b
		}
		for k := range tableKeys(v) {
			b = msgpackEncode(b, k, level+1)
			b = msgpackEncode(b, v.RawGet(k), level+1)
		}
		return b
	}
	return append(b, 0xc0)
}

func msgpackInt(b []byte, n int64) []byte {
	if n >= 0 {
		switch {
		case n <= 127:
			return append(b, byte(n))
		case n <= 0xff:
			return append(b, 0xcc, byte(n))
		case n <= 0xffff:
			return binary.BigEndian.AppendUint16(append(b, 0xcd), uint16(n))
		case n <= 0xffffffff:
			return binary.BigEndian.AppendUint32(append(b, 0xce), uint32(n))
		}
		return binary.BigEndian.AppendUint64(append(b, 0xcf), uint64(n))
	}
	switch {
	case n >= -32:
		return append(b, byte(int8(n)))
	case n >= -128:
		return append(b, 0xd0, byte(int8(n)))
	case n >= -32768:
		return binary.BigEndian.AppendUint16(append(b, 0xd1), uint16(int16(n)))
	case n >= -2147483648:
		return binary.BigEndian.AppendUint32(append(b, 0xd2), uint32(int32(n)))
	}
	return binary.BigEndian.AppendUint64(append(b, 0xd3), uint64(n))
}

// msgpackIsArray is lua-cmsgpack's table_is_an_array: every key a positive integer and the
// largest equal to the count (the empty table is an array).
func msgpackIsArray(t *lua.LTable) bool {
	count, maxKey, ok := 0, 0, true
	t.ForEach(func(k, _ lua.LValue) {
		n, isNum := k.(lua.LNumber)
		if !isNum || float64(n) < 1 || float64(n) != math.Floor(float64(n)) {
			ok = false
			return
		}
		count++
		if int(n) > maxKey {
			maxKey = int(n)
		}
	})
	return ok && maxKey == count
}

type msgpackDecoder struct {
	L   *lua.LState
	s   string
	pos int
	err string
}

func msgpackUnpack(L *lua.LState) int { return msgpackUnpackFull(L, 0, 0) }

// msgpackUnpackFull is lua-cmsgpack's mp_unpack_full: it decodes up to limit objects from
// offset (every object when both are 0) and, unless decoding every object, returns first the
// offset of the next one (-1 at the end of the input). Its error for a negative offset or
// limit shows the input's length as the limit, as Redis's does.
func msgpackUnpackFull(L *lua.LState, limit, offset int64) int {
	s := checkString(L, 1)
	decodeAll := limit == 0 && offset == 0
	if offset < 0 || limit < 0 {
		L.RaiseError("Invalid request to unpack with offset of %d and limit of %d.", int32(offset), int32(len(s)))
	} else if offset > int64(len(s)) {
		L.RaiseError("Start offset %d greater than input length %d.", int32(offset), int32(len(s)))
	}
	if decodeAll {
		limit = math.MaxInt32
	}
	d := &msgpackDecoder{L: L, s: s, pos: int(offset)}
	var out []lua.LValue
	for d.pos < len(d.s) && int64(len(out)) < limit {
		v := d.decode()
		if d.err != "" {
			L.RaiseError("%s", d.err)
		}
		out = append(out, v)
	}
	n := len(out)
	if !decodeAll {
		next := d.pos
		if next == len(d.s) {
			next = -1
		}
		L.Push(lua.LNumber(next))
		n++
	}
	for _, v := range out {
		L.Push(v)
	}
	return n
}

// need reports whether n more bytes are there, noting the error when not.
func (d *msgpackDecoder) need(n int) bool {
	if d.err != "" {
		return false
	}
	if n < 0 || len(d.s)-d.pos < n {
		d.err = "Missing bytes in input."
		return false
	}
	return true
}

func (d *msgpackDecoder) take(n int) string {
	if !d.need(n) {
		return ""
	}
	s := d.s[d.pos : d.pos+n]
	d.pos += n
	return s
}

func (d *msgpackDecoder) uint(n int) uint64 {
	s := d.take(n)
	var v uint64
	for i := 0; i < len(s); i++ {
		v = v<<8 | uint64(s[i])
	}
	return v
}

func (d *msgpackDecoder) decode() lua.LValue {
	if !d.need(1) {
		return lua.LNil
	}
	c := d.s[d.pos]
	d.pos++
	switch {
	case c <= 0x7f:
		return lua.LNumber(c)
	case c >= 0xe0:
		return lua.LNumber(int8(c))
	case c >= 0xa0 && c <= 0xbf:
		return lua.LString(d.take(int(c & 0x1f)))
	case c >= 0x90 && c <= 0x9f:
		return d.array(int(c & 0x0f))
	case c >= 0x80 && c <= 0x8f:
		return d.mapOf(int(c & 0x0f))
	}
	switch c {
	case 0xc0:
		return lua.LNil
	case 0xc2:
		return lua.LFalse
	case 0xc3:
		return lua.LTrue
	case 0xcc:
		return lua.LNumber(d.uint(1))
	case 0xcd:
		return lua.LNumber(d.uint(2))
	case 0xce:
		return lua.LNumber(d.uint(4))
	case 0xcf:
		return lua.LNumber(float64(d.uint(8)))
	case 0xd0:
		return lua.LNumber(int8(d.uint(1)))
	case 0xd1:
		return lua.LNumber(int16(d.uint(2)))
	case 0xd2:
		return lua.LNumber(int32(d.uint(4)))
	case 0xd3:
		return lua.LNumber(float64(int64(d.uint(8))))
	case 0xca:
		return lua.LNumber(math.Float32frombits(uint32(d.uint(4))))
	case 0xcb:
		return lua.LNumber(math.Float64frombits(d.uint(8)))
	case 0xd9, 0xc4:
		return lua.LString(d.take(int(d.uint(1))))
	case 0xda, 0xc5:
		return lua.LString(d.take(int(d.uint(2))))
	case 0xdb, 0xc6:
		return lua.LString(d.take(int(d.uint(4))))
	case 0xdc:
		return d.array(int(d.uint(2)))
	case 0xdd:
		return d.array(int(d.uint(4)))
	case 0xde:
		return d.mapOf(int(d.uint(2)))
	case 0xdf:
		return d.mapOf(int(d.uint(4)))
	}
	d.err = "Bad data format in input."
	return lua.LNil
}

func (d *msgpackDecoder) array(n int) lua.LValue {
	if d.err != "" {
		return lua.LNil
	}
	t := d.L.NewTable()
	for i := 1; i <= n && d.err == ""; i++ {
		t.RawSetInt(i, d.decode())
	}
	return t
}

func (d *msgpackDecoder) mapOf(n int) lua.LValue {
	if d.err != "" {
		return lua.LNil
	}
	t := d.L.NewTable()
	for i := 0; i < n && d.err == ""; i++ {
		k := d.decode()
		v := d.decode()
		if k != lua.LNil {
			t.RawSet(k, v)
		}
	}
	return t
}
