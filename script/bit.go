package script

import (
	"fmt"
	"math"

	lua "github.com/yuin/gopher-lua"
)

// The bit library (LuaBitOp 1.0, as Redis bundles it): operations on 32-bit integers, results
// signed.

func openBit(L *lua.LState) *lua.LTable {
	t := L.NewTable()
	fold := func(op func(a, b int32) int32) lua.LGFunction {
		return func(L *lua.LState) int {
			r := bitArg(L, 1)
			for i := 2; i <= L.GetTop(); i++ {
				r = op(r, bitArg(L, i))
			}
			L.Push(lua.LNumber(r))
			return 1
		}
	}
	shift := func(op func(a int32, n uint) int32) lua.LGFunction {
		return func(L *lua.LState) int {
			a, n := bitArg(L, 1), bitArg(L, 2)
			L.Push(lua.LNumber(op(a, uint(n)&31)))
			return 1
		}
	}
	fns := map[string]lua.LGFunction{
		"tobit": func(L *lua.LState) int { L.Push(lua.LNumber(bitArg(L, 1))); return 1 },
		"bnot":  func(L *lua.LState) int { L.Push(lua.LNumber(^bitArg(L, 1))); return 1 },
		"band":  fold(func(a, b int32) int32 { return a & b }),
		"bor":   fold(func(a, b int32) int32 { return a | b }),
		"bxor":  fold(func(a, b int32) int32 { return a ^ b }),
		"lshift": shift(func(a int32, n uint) int32 {
			return int32(uint32(a) << n)
		}),
		"rshift": shift(func(a int32, n uint) int32 {
			return int32(uint32(a) >> n)
		}),
		"arshift": shift(func(a int32, n uint) int32 { return a >> n }),
		"rol": shift(func(a int32, n uint) int32 {
			u := uint32(a)
			return int32(u<<n | u>>((32-n)&31))
		}),
		"ror": shift(func(a int32, n uint) int32 {
			u := uint32(a)
			return int32(u>>n | u<<((32-n)&31))
		}),
		"bswap": func(L *lua.LState) int {
			u := uint32(bitArg(L, 1))
			L.Push(lua.LNumber(int32(u>>24 | u>>8&0xff00 | u<<8&0xff0000 | u<<24)))
			return 1
		},
		"tohex": func(L *lua.LState) int {
			b := uint32(bitArg(L, 1))
			n := int32(8)
			if L.GetTop() >= 2 && L.Get(2) != lua.LNil {
				n = bitArg(L, 2)
			}
			digits := "0123456789abcdef"
			if n < 0 {
				n = -n
				digits = "0123456789ABCDEF"
			}
			if n > 8 {
				n = 8
			}
			buf := make([]byte, n)
			for i := n - 1; i >= 0; i-- {
				buf[i] = digits[b&15]
				b >>= 4
			}
			L.Push(lua.LString(buf))
			return 1
		},
	}
	for name, fn := range fns {
		t.RawSetString(name, L.NewFunction(fn))
	}
	return t
}

// bitArg is LuaBitOp's barg: the number normalised to 32 bits the way its 2^52+2^51 trick
// does (rounding to nearest, then taking the low 32 bits).
func bitArg(L *lua.LState, i int) int32 {
	v := L.Get(i)
	var f float64
	switch v := v.(type) {
	case lua.LNumber:
		f = float64(v)
	case lua.LString:
		n, err := parseLuaNumber(string(v))
		if err != nil {
			L.ArgError(i, "number expected, got string")
		}
		f = n
	default:
		L.ArgError(i, fmt.Sprintf("number expected, got %s", luaTypeName(L, i)))
	}
	f += 6755399441055744.0 // 2^52 + 2^51: the low 32 bits of the mantissa are the result
	return int32(uint32(math.Float64bits(f)))
}

// luaTypeName is luaL_typename for argument i: "no value" past the last argument.
func luaTypeName(L *lua.LState, i int) string {
	if i > L.GetTop() {
		return "no value"
	}
	return L.Get(i).Type().String()
}

// parseLuaNumber parses a string as Lua's tonumber does for base 10 and hex.
func parseLuaNumber(s string) (float64, error) {
	v, err := lua.LVAsNumber(lua.LString(s)), error(nil)
	if v == 0 {
		var f float64
		_, err = fmt.Sscan(s, &f)
		return f, err
	}
	return float64(v), err
}
