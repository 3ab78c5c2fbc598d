package script

import (
	"bytes"
	"math"
	"strconv"

	lua "github.com/yuin/gopher-lua"

	"shardis/codec"
)

// Conversions between RESP replies and Lua values, as Redis 7.0 makes them.

// respToLua converts the RESP reply at the start of b to a Lua value and returns it with the
// bytes it used. RESP2: status -> {ok=s}, error -> {err=s}, integer -> number, bulk ->
// string, nil bulk or array -> false, array -> table. RESP3 (redis.setresp(3)) adds null ->
// nil, map -> {map=t}, set -> {set=t}, double -> {double=n}, boolean, big number ->
// {big_number=s}, verbatim -> {verbatim_string={format=f, string=s}}.
func respToLua(L *lua.LState, b []byte) (lua.LValue, int) {
	if len(b) < 3 {
		return lua.LFalse, len(b)
	}
	end := bytes.Index(b, []byte("\r\n"))
	if end < 0 {
		return lua.LFalse, len(b)
	}
	line := b[1:end]
	next := end + 2
	field := func(name string, v lua.LValue) lua.LValue {
		t := L.NewTable()
		t.RawSetString(name, v)
		return t
	}
	switch b[0] {
	case '+':
		return field("ok", lua.LString(line)), next
	case '-':
		return field("err", lua.LString(line)), next
	case ':':
		n, _ := strconv.ParseInt(string(line), 10, 64)
		return lua.LNumber(n), next
	case '$', '=':
		n, _ := strconv.Atoi(string(line))
		if n < 0 {
			return lua.LFalse, next
		}
		s := b[next : next+n]
		if b[0] == '=' {
			t := L.NewTable()
			if len(s) >= 4 {
				t.RawSetString("format", lua.LString(s[:3]))
				t.RawSetString("string", lua.LString(s[4:]))
			}
			return field("verbatim_string", t), next + n + 2
		}
		return lua.LString(s), next + n + 2
	case '*', '~', '%', '>':
		n, _ := strconv.Atoi(string(line))
		if n < 0 {
			return lua.LFalse, next
		}
		t := L.CreateTable(n, 0)
		pos := next
		switch b[0] {
		case '%':
			for range n {
				k, used := respToLua(L, b[pos:])
				pos += used
				v, used := respToLua(L, b[pos:])
				pos += used
				t.RawSet(k, v)
			}
			return field("map", t), pos
		case '~':
			for range n {
				k, used := respToLua(L, b[pos:])
				pos += used
				t.RawSet(k, lua.LTrue)
			}
			return field("set", t), pos
		}
		for range n {
			v, used := respToLua(L, b[pos:])
			pos += used
			t.Append(v)
		}
		return t, pos
	case '_':
		return lua.LNil, next
	case '#':
		return lua.LBool(len(line) > 0 && line[0] == 't'), next
	case ',':
		f, _ := strconv.ParseFloat(string(line), 64)
		switch string(line) {
		case "inf":
			f = math.Inf(1)
		case "-inf":
			f = math.Inf(-1)
		case "nan":
			f = math.NaN()
		}
		return field("double", lua.LNumber(f)), next
	case '(':
		return field("big_number", lua.LString(line)), next
	}
	return lua.LFalse, len(b)
}

// maxReplyDepth bounds the nesting of a script's reply (a table holding itself would never
// end); Redis stops at the Lua stack's limit.
const maxReplyDepth = 1000

// luaToResp writes v as a script's reply, as Redis 7.0 converts it: a string is a bulk
// string, a number an integer (truncated), true is 1 and false nil, unless the script chose
// RESP3 (redis.setresp(3): scriptRESP3), where they are booleans (1 and 0 to a RESP2 client), as
// Redis decides by the script's protocol, not the caller's; a table with an err string is an error reply, with an ok string a status, with a
// double, map or set field (RESP3) that type, else an array of t[1], t[2]… up to the first nil.
func luaToResp(w *codec.Writer, v lua.LValue, depth int, scriptRESP3 bool) {
	if depth > maxReplyDepth {
		w.Error("ERR reached lua stack limit")
		return
	}
	switch v := v.(type) {
	case lua.LString:
		w.BulkString(string(v))
	case lua.LNumber:
		w.Int(luaNumberToInt(float64(v)))
	case lua.LBool:
		switch {
		case scriptRESP3 && w.RESP3:
			w.Bool(bool(v))
		case scriptRESP3 || bool(v):
			w.Int(int64(btoi(bool(v))))
		default:
			w.Null()
		}
	case *lua.LTable:
		if s, ok := v.RawGetString("err").(lua.LString); ok {
			w.Buf = append(w.Buf, '-')
			w.Buf = append(w.Buf, sanitizeLine(string(s))...)
			w.Buf = append(w.Buf, '\r', '\n')
			return
		}
		if s, ok := v.RawGetString("ok").(lua.LString); ok {
			w.Buf = append(w.Buf, '+')
			w.Buf = append(w.Buf, sanitizeLine(string(s))...)
			w.Buf = append(w.Buf, '\r', '\n')
			return
		}
		if d, ok := v.RawGetString("double").(lua.LNumber); ok {
			w.Double(float64(d))
			return
		}
		if s, ok := v.RawGetString("big_number").(lua.LString); ok {
			w.BigNumber(string(s))
			return
		}
		if m, ok := v.RawGetString("map").(*lua.LTable); ok {
			n := 0
			m.ForEach(func(lua.LValue, lua.LValue) { n++ })
			w.MapLen(n)
			m.ForEach(func(k, val lua.LValue) {
				luaToResp(w, k, depth+1, scriptRESP3)
				luaToResp(w, val, depth+1, scriptRESP3)
			})
			return
		}
		if s, ok := v.RawGetString("set").(*lua.LTable); ok {
			n := 0
			s.ForEach(func(lua.LValue, lua.LValue) { n++ })
			w.SetLen(n)
			s.ForEach(func(k, _ lua.LValue) { luaToResp(w, k, depth+1, scriptRESP3) })
			return
		}
		n := 0
		for v.RawGetInt(n+1) != lua.LNil {
			n++
		}
		w.ArrayLen(n)
		for i := 1; i <= n; i++ {
			luaToResp(w, v.RawGetInt(i), depth+1, scriptRESP3)
		}
	default:
		w.Null()
	}
}

// luaNumberToInt is C's cast of a double to long long as Redis does it on x86-64: truncation,
// and the smallest integer for NaN and what does not fit.
func luaNumberToInt(f float64) int64 {
	if math.IsNaN(f) || f >= 9223372036854775807 || f < -9223372036854775808 {
		return math.MinInt64
	}
	return int64(f)
}

// formatG17 formats f as C's "%.17g" does, which is how Redis's Lua turns numbers to strings.
func formatG17(f float64) string {
	if s, ok := nonFinite(f); ok {
		return s
	}
	return strconv.FormatFloat(f, 'g', 17, 64)
}

// nonFinite returns inf, -inf or nan as glibc's printf spells them, and false for a finite f.
func nonFinite(f float64) (string, bool) {
	switch {
	case math.IsInf(f, 1):
		return "inf", true
	case math.IsInf(f, -1):
		return "-inf", true
	case math.IsNaN(f):
		return "nan", true
	}
	return "", false
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}
