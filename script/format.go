package script

import (
	"fmt"
	"math"
	"strings"

	lua "github.com/yuin/gopher-lua"
)

// luaStringFormat is Lua 5.1's string.format (lstrlib.c str_format), which gopher-lua words
// differently: C's printf conversions on (long) and double arguments, %q quoting as Lua does,
// and Lua's argument errors.
func luaStringFormat(L *lua.LState) int {
	format := L.CheckString(1)
	arg := 1
	var b strings.Builder
	for i := 0; i < len(format); i++ {
		ch := format[i]
		if ch != '%' {
			b.WriteByte(ch)
			continue
		}
		i++
		if i < len(format) && format[i] == '%' {
			b.WriteByte('%')
			continue
		}
		start := i
		for i < len(format) && strings.IndexByte("-+ #0", format[i]) >= 0 {
			i++
		}
		if i-start > 5 {
			L.RaiseError("invalid format (repeated flags)")
		}
		for n := 0; i < len(format) && format[i] >= '0' && format[i] <= '9'; n++ {
			if n == 2 {
				L.RaiseError("invalid format (width or precision too long)")
			}
			i++
		}
		if i < len(format) && format[i] == '.' {
			i++
			for n := 0; i < len(format) && format[i] >= '0' && format[i] <= '9'; n++ {
				if n == 2 {
					L.RaiseError("invalid format (width or precision too long)")
				}
				i++
			}
		}
		if i >= len(format) {
			L.RaiseError("invalid option '%%' to 'format'")
		}
		spec := format[start:i]
		conv := format[i]
		arg++
		if arg > L.GetTop() && conv != '%' {
			L.ArgError(arg, "no value")
		}
		switch conv {
		case 'c':
			// Lua copies what sprintf wrote up to its first NUL: %c of 0 adds nothing.
			if ch := byte(int32(luaNumberToInt(checkNumber(L, arg)))); ch != 0 {
				b.WriteByte(ch)
			}
		case 'd', 'i':
			n := luaNumberToInt(checkNumber(L, arg))
			fmt.Fprintf(&b, "%"+spec+"d", n)
		case 'o', 'u', 'x', 'X':
			n := uint64(luaNumberToInt(checkNumber(L, arg)))
			verb := conv
			if conv == 'u' {
				verb = 'd'
			}
			fmt.Fprintf(&b, "%"+spec+string(verb), n)
		case 'e', 'E', 'f', 'g', 'G':
			f := checkNumber(L, arg)
			b.WriteString(cFormatFloat(spec, conv, f))
		case 'q':
			luaQuote(&b, checkString(L, arg))
		case 's':
			s := checkString(L, arg)
			if spec == "" {
				b.WriteString(s)
			} else {
				fmt.Fprintf(&b, "%"+spec+"s", s)
			}
		default:
			L.RaiseError("invalid option '%%%c' to 'format'", conv)
		}
	}
	L.Push(lua.LString(b.String()))
	return 1
}

// checkNumber is luaL_checknumber: a number, or a string that converts to one.
func checkNumber(L *lua.LState, n int) float64 {
	switch v := L.Get(n).(type) {
	case lua.LNumber:
		return float64(v)
	case lua.LString:
		if f, ok := strtod(string(v)); ok {
			return f
		}
	}
	L.ArgError(n, "number expected, got "+luaTypeName(L, n))
	return 0
}

// checkString is luaL_checklstring: a string, or a number formatted as tostring does.
func checkString(L *lua.LState, n int) string {
	switch v := L.Get(n).(type) {
	case lua.LString:
		return string(v)
	case lua.LNumber:
		return formatLuaG14(float64(v))
	}
	L.ArgError(n, "string expected, got "+luaTypeName(L, n))
	return ""
}

// cFormatFloat formats f as C's printf does with %<spec><conv>: Go's verbs agree but for the
// default precision of %g (6 in C) and how infinities and NaN print.
func cFormatFloat(spec string, conv byte, f float64) string {
	if math.IsInf(f, 0) || math.IsNaN(f) {
		s := "inf"
		if math.IsNaN(f) {
			s = "nan"
		}
		if math.Signbit(f) {
			s = "-" + s
		} else if strings.Contains(spec, "+") {
			s = "+" + s
		}
		if conv >= 'A' && conv <= 'Z' {
			s = strings.ToUpper(s)
		}
		width := strings.TrimLeft(strings.SplitN(spec, ".", 2)[0], "-+ #0")
		pad := "%" + width + "s"
		if strings.Contains(spec, "-") {
			pad = "%-" + width + "s"
		}
		return fmt.Sprintf(pad, s)
	}
	if (conv == 'g' || conv == 'G') && !strings.Contains(spec, ".") {
		spec += ".6"
	}
	if !strings.Contains(spec, ".") && (conv == 'e' || conv == 'E' || conv == 'f') {
		spec += ".6"
	}
	return fmt.Sprintf("%"+spec+string(conv), f)
}

// luaQuote is Lua 5.1's %q.
func luaQuote(b *strings.Builder, s string) {
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		switch ch := s[i]; ch {
		case '"', '\\', '\n':
			b.WriteByte('\\')
			b.WriteByte(ch)
		case '\r':
			b.WriteString(`\r`)
		case 0:
			b.WriteString(`\000`)
		default:
			b.WriteByte(ch)
		}
	}
	b.WriteByte('"')
}
