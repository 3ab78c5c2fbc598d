package script

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	lua "github.com/yuin/gopher-lua"
)

// cjson as Redis bundles it (lua-cjson 2.1): encode and decode with its defaults (sparse
// arrays of more than 10 elements and under half full refused, nesting up to 1000, numbers
// written with 14 significant digits, '/' escaped), and cjson.null. Object keys come out in
// gopher-lua's table order, which is not Lua 5.1's (see docs/COMPATIBILITY.md).

const cjsonMaxDepth = 1000

func openCjson(L *lua.LState) *lua.LTable {
	t := L.NewTable()
	null := L.NewUserData()
	t.RawSetString("null", null)
	t.RawSetString("encode", L.NewFunction(func(L *lua.LState) int {
		if L.GetTop() != 1 {
			L.RaiseError("bad argument #1 to 'encode' (expected 1 argument)")
		}
		var b strings.Builder
		if err := cjsonEncode(&b, L.Get(1), null, 0); err != "" {
			L.RaiseError("%s", err)
		}
		L.Push(lua.LString(b.String()))
		return 1
	}))
	t.RawSetString("decode", L.NewFunction(func(L *lua.LState) int {
		if L.GetTop() != 1 {
			L.RaiseError("bad argument #1 to 'decode' (expected 1 argument)")
		}
		s := L.CheckString(1)
		d := &jsonDecoder{L: L, s: s, null: null}
		v := d.value(0)
		d.ws()
		if d.pos < len(d.s) {
			d.fail("the end")
		}
		L.Push(v)
		return 1
	}))
	keepBuffer := true
	t.RawSetString("encode_keep_buffer", L.NewFunction(func(L *lua.LState) int {
		cjsonBoolOption(L, "encode_keep_buffer", &keepBuffer)
		return 1
	}))
	t.RawSetString("_NAME", lua.LString("cjson"))
	t.RawSetString("_VERSION", lua.LString("2.1.0"))
	return t
}

// cjsonBoolOption is lua-cjson 2.1.0's json_enum_option for an on/off setting: an optional
// boolean or "off"/"on" sets it (its setting has no effect on shardis's encoder, which keeps
// no buffer between calls); the setting is returned as a boolean.
func cjsonBoolOption(L *lua.LState, name string, setting *bool) {
	if L.GetTop() > 1 {
		L.RaiseError("bad argument #2 to '%s' (found too many arguments)", name)
	}
	switch v := L.Get(1).(type) {
	case *lua.LNilType:
	case lua.LBool:
		*setting = bool(v)
	default:
		switch opt := checkString(L, 1); opt {
		case "off":
			*setting = false
		case "on":
			*setting = true
		default:
			L.RaiseError("bad argument #1 to '%s' (invalid option '%s')", name, opt)
		}
	}
	L.Push(lua.LBool(*setting))
}

func cjsonEncode(b *strings.Builder, v lua.LValue, null *lua.LUserData, depth int) string {
	switch v := v.(type) {
	case lua.LString:
		cjsonString(b, string(v))
	case lua.LNumber:
		f := float64(v)
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return "Cannot serialise number: must not be NaN or Inf"
		}
		b.WriteString(formatG14(f))
	case lua.LBool:
		if v {
			b.WriteString("true")
		} else {
			b.WriteString("false")
		}
	case *lua.LNilType:
		b.WriteString("null")
	case *lua.LUserData:
		if v == null {
			b.WriteString("null")
			return ""
		}
		return "Cannot serialise userdata: type not supported"
	case *lua.LTable:
		depth++
		if depth > cjsonMaxDepth {
			return fmt.Sprintf("Cannot serialise, excessive nesting (%d)", depth)
		}
		n, isArray, errText := cjsonArrayLen(v)
		if errText != "" {
			return errText
		}
		if isArray {
			b.WriteByte('[')
			for i := 1; i <= n; i++ {
				if i > 1 {
					b.WriteByte(',')
				}
				if e := cjsonEncode(b, v.RawGetInt(i), null, depth); e != "" {
					return e
				}
			}
			b.WriteByte(']')
			return ""
		}
		b.WriteByte('{')
		first := true
		var errText2 string
		// Keys in Lua 5.1's order where known (luaorder.go), else in insertion order.
		keys, ok := luaOrder(v)
		if !ok {
			keys = keys[:0]
			for k := range tableKeys(v) {
				keys = append(keys, k)
			}
		}
		for _, k := range keys {
			val := v.RawGet(k)
			if errText2 != "" {
				break
			}
			if !first {
				b.WriteByte(',')
			}
			first = false
			switch k := k.(type) {
			case lua.LString:
				cjsonString(b, string(k))
			case lua.LNumber:
				cjsonString(b, formatG14(float64(k)))
			default:
				errText2 = "Cannot serialise " + k.Type().String() + ": table key must be a number or string"
				continue
			}
			b.WriteByte(':')
			errText2 = cjsonEncode(b, val, null, depth)
		}
		if errText2 != "" {
			return errText2
		}
		b.WriteByte('}')
	default:
		return "Cannot serialise " + v.Type().String() + ": type not supported"
	}
	return ""
}

// cjsonArrayLen is lua-cjson's lua_array_length: a table whose keys are all positive integers
// is an array of its largest key, unless it is excessively sparse.
func cjsonArrayLen(t *lua.LTable) (int, bool, string) {
	maxKey, items := 0, 0
	isArray := true
	t.ForEach(func(k, _ lua.LValue) {
		n, ok := k.(lua.LNumber)
		if !ok || float64(n) < 1 || float64(n) != math.Floor(float64(n)) {
			isArray = false
			return
		}
		if int(n) > maxKey {
			maxKey = int(n)
		}
		items++
	})
	if !isArray {
		return 0, false, ""
	}
	if maxKey > 10 && maxKey > items*2 {
		return 0, false, "Cannot serialise table: excessively sparse array"
	}
	if items == 0 {
		return 0, false, "" // an empty table is an object: {}
	}
	return maxKey, true, ""
}

func cjsonString(b *strings.Builder, s string) {
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		ch := s[i]
		switch ch {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '/':
			b.WriteString(`\/`)
		case '\b':
			b.WriteString(`\b`)
		case '\f':
			b.WriteString(`\f`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		default:
			if ch < 0x20 || ch == 0x7f {
				fmt.Fprintf(b, `\u%04x`, ch)
			} else {
				b.WriteByte(ch)
			}
		}
	}
	b.WriteByte('"')
}

// formatG14 formats a number as lua-cjson does ("%.14g").
func formatG14(f float64) string {
	if f == 0 && math.Signbit(f) {
		return "-0"
	}
	if f == math.Trunc(f) && math.Abs(f) < 1e14 {
		return strconv.FormatInt(int64(f), 10)
	}
	return strconv.FormatFloat(f, 'g', 14, 64)
}

// jsonDecoder is lua-cjson's decoder, with its error texts.
type jsonDecoder struct {
	L    *lua.LState
	s    string
	pos  int
	null *lua.LUserData
}

func (d *jsonDecoder) ws() {
	for d.pos < len(d.s) && strings.IndexByte(" \t\r\n", d.s[d.pos]) >= 0 {
		d.pos++
	}
}

func (d *jsonDecoder) fail(expected string) {
	d.ws()
	if d.pos >= len(d.s) {
		d.L.RaiseError("Expected %s but found T_END at character %d", expected, d.pos+1)
	}
	d.L.RaiseError("Expected %s but found invalid token at character %d", expected, d.pos+1)
}

func (d *jsonDecoder) value(depth int) lua.LValue {
	d.ws()
	if d.pos >= len(d.s) {
		d.fail("value")
	}
	switch ch := d.s[d.pos]; {
	case ch == '{':
		return d.object(depth + 1)
	case ch == '[':
		return d.array(depth + 1)
	case ch == '"':
		return lua.LString(d.str())
	case strings.HasPrefix(d.s[d.pos:], "true"):
		d.pos += 4
		return lua.LTrue
	case strings.HasPrefix(d.s[d.pos:], "false"):
		d.pos += 5
		return lua.LFalse
	case strings.HasPrefix(d.s[d.pos:], "null"):
		d.pos += 4
		return d.null
	case ch == '-' || (ch >= '0' && ch <= '9'):
		start := d.pos
		d.pos++
		for d.pos < len(d.s) && strings.IndexByte("0123456789.eE+-", d.s[d.pos]) >= 0 {
			d.pos++
		}
		f, err := strconv.ParseFloat(d.s[start:d.pos], 64)
		if err != nil && !strings.Contains(err.Error(), "range") {
			d.pos = start
			d.fail("value")
		}
		return lua.LNumber(f)
	}
	d.fail("value")
	return lua.LNil
}

func (d *jsonDecoder) depthCheck(depth int) {
	if depth > cjsonMaxDepth {
		d.L.RaiseError("Found too many nested data structures (%d) at character %d", depth, d.pos+1)
	}
}

func (d *jsonDecoder) object(depth int) lua.LValue {
	d.depthCheck(depth)
	d.pos++
	t := d.L.NewTable()
	d.ws()
	if d.pos < len(d.s) && d.s[d.pos] == '}' {
		d.pos++
		return t
	}
	for {
		d.ws()
		if d.pos >= len(d.s) || d.s[d.pos] != '"' {
			d.fail("object key string")
		}
		k := d.str()
		d.ws()
		if d.pos >= len(d.s) || d.s[d.pos] != ':' {
			d.fail("colon")
		}
		d.pos++
		t.RawSetString(k, d.value(depth))
		d.ws()
		if d.pos < len(d.s) && d.s[d.pos] == ',' {
			d.pos++
			continue
		}
		if d.pos < len(d.s) && d.s[d.pos] == '}' {
			d.pos++
			return t
		}
		d.fail("comma or object end")
	}
}

func (d *jsonDecoder) array(depth int) lua.LValue {
	d.depthCheck(depth)
	d.pos++
	t := d.L.NewTable()
	d.ws()
	if d.pos < len(d.s) && d.s[d.pos] == ']' {
		d.pos++
		return t
	}
	for i := 1; ; i++ {
		t.RawSetInt(i, d.value(depth))
		d.ws()
		if d.pos < len(d.s) && d.s[d.pos] == ',' {
			d.pos++
			continue
		}
		if d.pos < len(d.s) && d.s[d.pos] == ']' {
			d.pos++
			return t
		}
		d.fail("comma or array end")
	}
}

func (d *jsonDecoder) str() string {
	start := d.pos
	d.pos++
	var b strings.Builder
	for d.pos < len(d.s) {
		ch := d.s[d.pos]
		switch {
		case ch == '"':
			d.pos++
			return b.String()
		case ch == '\\':
			d.pos++
			if d.pos >= len(d.s) {
				break
			}
			e := d.s[d.pos]
			d.pos++
			switch e {
			case '"', '\\', '/':
				b.WriteByte(e)
			case 'b':
				b.WriteByte('\b')
			case 'f':
				b.WriteByte('\f')
			case 'n':
				b.WriteByte('\n')
			case 'r':
				b.WriteByte('\r')
			case 't':
				b.WriteByte('\t')
			case 'u':
				if d.pos+4 > len(d.s) {
					d.pos = start
					d.fail("value")
				}
				n, err := strconv.ParseUint(d.s[d.pos:d.pos+4], 16, 32)
				if err != nil {
					d.pos = start
					d.fail("value")
				}
				d.pos += 4
				r := rune(n)
				if r >= 0xD800 && r < 0xDC00 && d.pos+6 <= len(d.s) && d.s[d.pos] == '\\' && d.s[d.pos+1] == 'u' {
					if lo, err := strconv.ParseUint(d.s[d.pos+2:d.pos+6], 16, 32); err == nil && lo >= 0xDC00 && lo < 0xE000 {
						r = (r-0xD800)<<10 + rune(lo-0xDC00) + 0x10000
						d.pos += 6
					}
				}
				var buf [4]byte
				b.Write(buf[:utf8.EncodeRune(buf[:], r)])
			default:
				d.pos = start
				d.fail("value")
			}
		default:
			b.WriteByte(ch)
			d.pos++
		}
	}
	d.pos = start
	d.fail("value")
	return ""
}
