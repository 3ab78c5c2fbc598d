package script

import (
	"math"
	"testing"

	lua "github.com/yuin/gopher-lua"

	"shardis/codec"
)

// RESP replies become the Lua values Redis 7.0 gives scripts, and back.
func TestScriptConv_RoundTrip(t *testing.T) {
	L := lua.NewState()
	defer L.Close()
	cases := []struct{ in, out string }{
		{"+OK\r\n", "+OK\r\n"},
		{"-ERR bad\r\n", "-ERR bad\r\n"},
		{":42\r\n", ":42\r\n"},
		{"$3\r\nabc\r\n", "$3\r\nabc\r\n"},
		{"$-1\r\n", "$-1\r\n"},                                     // nil bulk -> false -> nil
		{"*-1\r\n", "$-1\r\n"},                                     // nil array -> false -> nil
		{"*3\r\n:1\r\n$-1\r\n:3\r\n", "*3\r\n:1\r\n$-1\r\n:3\r\n"}, // false inside an array
		{"*2\r\n*1\r\n+a\r\n$0\r\n\r\n", "*2\r\n*1\r\n+a\r\n$0\r\n\r\n"},
		{",1.5\r\n", "$3\r\n1.5\r\n"}, // RESP3 double -> {double=} -> RESP2 bulk
	}
	for _, tc := range cases {
		v, used := respToLua(L, []byte(tc.in))
		if used != len(tc.in) {
			t.Errorf("%q: used %d of %d bytes", tc.in, used, len(tc.in))
		}
		var w codec.Writer
		luaToResp(&w, v, 0, false)
		if string(w.Buf) != tc.out {
			t.Errorf("%q: got %q, want %q", tc.in, w.Buf, tc.out)
		}
	}
}

// Lua numbers are truncated as C casts a double, tables cut at the first nil.
func TestScriptConv_NumbersAndTables(t *testing.T) {
	for f, want := range map[float64]int64{3.99: 3, -3.99: -3, 1 << 53: 1 << 53, math.NaN(): math.MinInt64, math.Inf(1): math.MinInt64} {
		if got := luaNumberToInt(f); got != want {
			t.Errorf("%v: %d, want %d", f, got, want)
		}
	}
	L := lua.NewState()
	defer L.Close()
	tbl := L.NewTable()
	tbl.RawSetInt(1, lua.LNumber(1))
	tbl.RawSetInt(3, lua.LNumber(3))
	var w codec.Writer
	luaToResp(&w, tbl, 0, false)
	if string(w.Buf) != "*1\r\n:1\r\n" {
		t.Fatalf("table with a hole: %q", w.Buf)
	}
	self := L.NewTable()
	self.RawSetInt(1, self)
	w.Buf = w.Buf[:0]
	luaToResp(&w, self, 0, false) // must end
	if len(w.Buf) == 0 {
		t.Fatal("self-referencing table wrote nothing")
	}
}

// Lua booleans follow the script's protocol (redis.setresp), not the caller's: nil and 1 in
// RESP2 mode whatever the client speaks, booleans (1 and 0 to a RESP2 client) after setresp(3).
func TestScriptConv_BooleansFollowTheScriptsProtocol(t *testing.T) {
	for _, tc := range []struct {
		v                     lua.LValue
		scriptRESP3, clientR3 bool
		want                  string
	}{
		{lua.LFalse, false, true, "_\r\n"},
		{lua.LTrue, false, true, ":1\r\n"},
		{lua.LFalse, false, false, "$-1\r\n"},
		{lua.LFalse, true, true, "#f\r\n"},
		{lua.LTrue, true, true, "#t\r\n"},
		{lua.LFalse, true, false, ":0\r\n"},
		{lua.LTrue, true, false, ":1\r\n"},
	} {
		w := codec.Writer{RESP3: tc.clientR3}
		luaToResp(&w, tc.v, 0, tc.scriptRESP3)
		if string(w.Buf) != tc.want {
			t.Errorf("%v (script RESP3 %v, client RESP3 %v) = %q, want %q", tc.v, tc.scriptRESP3, tc.clientR3, w.Buf, tc.want)
		}
	}
}
