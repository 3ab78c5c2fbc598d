package script

import (
	"strings"
	"testing"

	lua "github.com/yuin/gopher-lua"

	"shardis/codec"
)

// evalLua runs code in a fresh sandboxed VM (no redis.call: no script run) and returns its
// reply as a script's reply would be written (RESP2), or the error text.
func evalLua(t *testing.T, code string) string {
	t.Helper()
	vm := newVM()
	defer vm.state.Close()
	proto, err := compileChunk(code, scriptErrorSource)
	if err != nil {
		return "compile: " + err.Error()
	}
	fn := vm.state.NewFunctionFromProto(proto)
	fn.Env = vm.env
	vm.state.Push(fn)
	if err := vm.state.PCall(0, 1, vm.state.NewFunction(errorHandler)); err != nil {
		msg, line := scriptError(err)
		return msg + " @" + line
	}
	var w codec.Writer
	luaToResp(&w, vm.state.Get(-1), 0, false)
	return strings.ReplaceAll(string(w.Buf), "\r\n", " ")
}

// Each library against values redis-server 7.0.15 returned for the same code.
func TestScriptLibs_MatchRedis(t *testing.T) {
	cases := []struct{ code, want string }{
		// sandbox
		{"return x", "ERR user_script:1: Script attempted to access nonexistent global variable 'x' @1"},
		{"\nstring.x = 1", "ERR user_script:2: Attempt to modify a readonly table @2"},
		{"return type(os)", "ERR user_script:1: Script attempted to access nonexistent global variable 'os' @1"},
		{"return {type(loadstring), type(unpack), type(cjson), type(struct)}", "*4 $8 function $8 function $5 table $5 table "},
		{"return nil + 1", "ERR user_script:1: attempt to perform arithmetic on a nil value @1"},
		{"return 'a' .. {}", "ERR user_script:1: attempt to concatenate a table value @1"},
		// base and string
		{"return {tostring(2^53), tostring(0.1), tostring(1/0), tostring(tonumber('-0'))}", "*4 $18 9.007199254741e+15 $3 0.1 $3 inf $2 -0 "},
		{"return {tonumber('0x10'), tonumber(' 5 '), tostring(tonumber('1e400')), tostring(tonumber('0x'))}", "*4 :16 :5 $3 inf $3 nil "},
		{"return string.format('%d|%5.1f|%x|%g|%q|%c', 3.7, 3.14159, 255, 1e20, 'a\\nb', 65)", "$25 3|  3.1|ff|1e+20|\"a\\\nb\"|A "},
		{"return string.format('%d', 'x')", "ERR user_script:1: bad argument #2 to 'format' (number expected, got string) @1"},
		{"return string.upper('\\169a')", "$2 \xa9A "},
		// math.random as Redis seeds it
		{"math.randomseed(42) return {math.random(100), math.random(1, 10)}", "*2 :75 :4 "},
		// cjson
		{"return cjson.encode({1, 'a/b', {x=true}})", `$21 [1,"a\/b",{"x":true}] `},
		{"return cjson.encode({[1]=1, [20]=2})", "ERR user_script:1: Cannot serialise table: excessively sparse array @1"},
		{"return cjson.decode('{\"a\":[1,2,null]}').a[2]", ":2 "},
		{"return cjson.decode('[1,')", "ERR user_script:1: Expected value but found T_END at character 4 @1"},
		// bit
		{"return {bit.band(0xff, 0x0f), bit.lshift(1, 31), bit.tohex(-1), bit.bswap(0x12345678), bit.tobit(2^32 + 5)}", "*5 :15 :-2147483648 $8 ffffffff :2018915346 :5 "},
		// struct
		{"return struct.pack('>I2i4', 52410, -23423)", "$6 \xcc\xba\xff\xff\xa4\x81 "},
		{"return {struct.unpack('<i4', 'abcd')}", "*2 :1684234849 :5 "},
		{"return struct.size('>I2i4d')", ":14 "},
		// cmsgpack
		{"return cmsgpack.pack(1, -1, 128, 'abc', {1, 2}, true)", "$12 \x01\xff\xcc\x80\xa3abc\x92\x01\x02\xc3 "},
		{"return {cmsgpack.unpack('\\147\\1\\2\\3')}", "*1 *3 :1 :2 :3 "},
		{"return cmsgpack.unpack('\\193')", "ERR user_script:1: Bad data format in input. @1"},
		{"return {cmsgpack.unpack_one(cmsgpack.pack(1, 2, 3))}", "*2 :1 :1 "},
		{"return {cmsgpack.unpack_one(cmsgpack.pack(1, 2, 3), '1')}", "*2 :2 :2 "},
		{"return {cmsgpack.unpack_one(cmsgpack.pack(1, 2, 3), 3)}", "*1 :-1 "},
		{"return {cmsgpack.unpack_limit(cmsgpack.pack(1, 2, 3), 2)}", "*3 :2 :1 :2 "},
		{"return {cmsgpack.unpack_limit(cmsgpack.pack(1, 2, 3), 5, 1)}", "*3 :-1 :2 :3 "},
		{"return {cmsgpack.unpack_limit(cmsgpack.pack(1, 2, 3), 0)}", "*3 :1 :2 :3 "},
		{"return cmsgpack.unpack_one(cmsgpack.pack(1, 2, 3), 4)", "ERR user_script:1: Start offset 4 greater than input length 3. @1"},
		{"return cmsgpack.unpack_limit(cmsgpack.pack(1, 2, 3), -1)", "ERR user_script:1: Invalid request to unpack with offset of 0 and limit of 3. @1"},
		{"return cmsgpack.unpack_one(cmsgpack.pack(1, 2, 3), 'x')", "ERR user_script:1: bad argument #2 to 'unpack_one' (number expected, got string) @1"},
		{"return cmsgpack.unpack_limit(cmsgpack.pack(1, 2, 3))", "ERR user_script:1: bad argument #2 to 'unpack_limit' (number expected, got no value) @1"},
		{"return cmsgpack.unpack_one('\\146\\1')", "ERR user_script:1: Missing bytes in input. @1"},
		{"return {cmsgpack._NAME, cmsgpack._VERSION, cjson._NAME, cjson._VERSION}", "*4 $8 cmsgpack $18 lua-cmsgpack 0.4.0 $5 cjson $5 2.1.0 "},
		// cjson.encode_keep_buffer: a setting, on by default
		{"return {cjson.encode_keep_buffer(), cjson.encode_keep_buffer('off'), cjson.encode_keep_buffer(), cjson.encode_keep_buffer(true)}", "*4 :1 $-1 $-1 :1 "},
		{"return cjson.encode_keep_buffer({1})", "ERR user_script:1: bad argument #1 to 'encode_keep_buffer' (string expected, got table) @1"},
		{"return cjson.encode_keep_buffer('x')", "ERR user_script:1: bad argument #1 to 'encode_keep_buffer' (invalid option 'x') @1"},
		{"return cjson.encode_keep_buffer(1, 2)", "ERR user_script:1: bad argument #2 to 'encode_keep_buffer' (found too many arguments) @1"},
		// numeric strings where Lua 5.1 reads a number (luaL_checknumber, luaL_checkint)
		{"math.randomseed('42') return {math.random('100'), math.random('1', '10'), math.max('3', 10), string.rep('ab', '2'), string.sub('hello', '2', '3'), string.byte('abc', '2'), string.char('72', '105'), select('2', 'a', 'b'), unpack({1,2,3}, '2'), table.concat({1,2,3}, ',', '2', '3'), string.find('abcabc', 'b', '3'), tonumber('ff', '16')}",
			"*12 :75 :4 :10 $4 abab $2 el :98 $2 Hi $1 b :2 $3 2,3 :5 :255 "},
		{"local t = {} table.insert(t, '2') table.insert(t, '1', 'x') return t", "*2 $1 x $1 2 "},
		{"return math.floor('x')", "ERR user_script:1: bad argument #1 to 'floor' (number expected, got string) @1"},
		// collectgarbage: Lua 5.1's options and replies
		{"return {type(collectgarbage('count')), collectgarbage(), collectgarbage('step'), collectgarbage('setpause', 100), collectgarbage('setpause', 200)}", "*5 $6 number :0 $-1 :200 :100 "},
		{"return collectgarbage('bogus')", "ERR user_script:1: bad argument #1 to 'collectgarbage' (invalid option 'bogus') @1"},
	}
	for _, tc := range cases {
		if got := evalLua(t, tc.code); got != tc.want {
			t.Errorf("%s\n got  %q\n want %q", tc.code, got, tc.want)
		}
	}
}

// A state from the pool keeps no global a script set: globals are read-only.
func TestScriptVM_GlobalsStayReadOnly(t *testing.T) {
	vm := newVM()
	defer vm.state.Close()
	for _, code := range []string{"rawset(_G, 'x', 1)", "_G.x = 1", "setmetatable(_G, nil)"} {
		_ = evalLuaIn(vm, code)
	}
	if v := vm.globals.RawGetString("x"); v != lua.LNil {
		t.Fatalf("global x leaked: %v", v)
	}
}

func evalLuaIn(vm *VM, code string) error {
	proto, err := compileChunk(code, scriptErrorSource)
	if err != nil {
		return err
	}
	fn := vm.state.NewFunctionFromProto(proto)
	fn.Env = vm.env
	vm.state.Push(fn)
	return vm.state.PCall(0, 0, nil)
}

// What each library encodes, it decodes back.
func TestScriptLibs_RoundTrips(t *testing.T) {
	cases := []struct{ code, want string }{
		{`return cjson.encode(cjson.decode('[1,"a",{"b":[true,false]},-2.5]'))`, `$31 [1,"a",{"b":[true,false]},-2.5] `},
		{`return cjson.decode(cjson.encode({s='x\0y\n', n=1e300})).s`, "$4 x\x00y\n "},
		{`local t = cmsgpack.unpack(cmsgpack.pack({1, 'two', {k='v'}, 2^40, -3.25})) return {t[1], t[2], t[3].k, t[4] == 2^40, t[5] == -3.25}`, "*5 :1 $3 two $1 v :1 :1 "},
		{`return {struct.unpack('>i4I2c3', struct.pack('>i4I2c3', -5, 65535, 'abc'))}`, "*4 :-5 :65535 $3 abc :10 "},
		{`local a, b = struct.unpack('<ds', struct.pack('<ds', 1.5, 'str')) return {a == 1.5, b}`, "*2 :1 $3 str "},
		{`return {bit.bxor(bit.bnot(5), -1), bit.rol(bit.ror(0x12345678, 8), 8), bit.arshift(-256, 4)}`, "*3 :5 :305419896 :-16 "},
	}
	for _, tc := range cases {
		if got := evalLua(t, tc.code); got != tc.want {
			t.Errorf("%s\n got  %q\n want %q", tc.code, got, tc.want)
		}
	}
}

// The sandbox refuses to change globals and library tables, and hides what touches files and
// modules.
func TestSandbox_Refusals(t *testing.T) {
	for code, want := range map[string]string{
		"x = 1":                          "Attempt to modify a readonly table",
		"redis.x = 1":                    "Attempt to modify a readonly table",
		"cjson.encode = nil":             "Attempt to modify a readonly table",
		"string.rep = nil":               "Attempt to modify a readonly table",
		"_G.KEYS = {}":                   "Attempt to modify a readonly table",
		"return getmetatable(_G)":        "*0 ", // its error metatable, as Redis 7.0.15
		"return require('os')":           "nonexistent global variable 'require'",
		"return io.open('/etc/passwd')":  "nonexistent global variable 'io'",
		"return dofile('/etc/passwd')":   "nonexistent global variable 'dofile'",
		"return loadfile('/etc/passwd')": "nonexistent global variable 'loadfile'",
		"return debug.getinfo(1)":        "nonexistent global variable 'debug'",
		"return package.loaded":          "nonexistent global variable 'package'",
	} {
		if got := evalLua(t, code); !strings.Contains(got, want) {
			t.Errorf("%s: %q, want %q in it", code, got, want)
		}
	}
}

// A table's map packs the same bytes on every run (gopher-lua's Go maps iterate in random
// order).
func TestCmsgpackPack_MapKeys_SameBytesEveryRun(t *testing.T) {
	code := "local t = {} for i = 1, 20 do t['k' .. i] = i end t[2.5] = 'x' t[true] = 1 return cmsgpack.pack(t)"
	first := evalLua(t, code)
	for i := 0; i < 20; i++ {
		if got := evalLua(t, code); got != first {
			t.Fatalf("run %d packed %q, first run %q", i, got, first)
		}
	}
}

// Map keys come out of cmsgpack.pack and cjson.encode in Lua 5.1's order (its hash and table
// growth), as redis-server 7.0.15 wrote them for the same tables.
func TestLuaOrder_MapKeys_AsRedis(t *testing.T) {
	hex := "local s = cmsgpack.pack(t) local r = {} for i = 1, #s do r[#r+1] = string.format('%02x', s:byte(i)) end return table.concat(r)"
	cases := []struct{ code, want string }{
		{"local t = {a=1, b=2, c=3} " + hex, "$20 83a16101a16303a16202 "},
		{"local t = {} for i = 1, 10 do t['k' .. i] = i end " + hex, "$84 8aa26b3909a26b3808a26b3101a26b3303a26b3202a36b31300aa26b3606a26b3707a26b3404a26b3505 "},
		{"local t = {} t[true] = 1 t[false] = 0 t[2.5] = 'f' t[-1] = 1 t.s = 's' " + hex, "$36 85c200c301ca40200000a166ff01a173a173 "},
		{"local t = {} for i = 1, 10 do t['k' .. i] = i end return cjson.encode(t)",
			`$73 {"k9":9,"k8":8,"k1":1,"k3":3,"k2":2,"k10":10,"k6":6,"k7":7,"k4":4,"k5":5} `},
		{"local t = {} t[1] = 1 t[3] = 3 t[10] = 10 t.y = 2 return cjson.encode(t)", `$27 {"1":1,"3":3,"10":10,"y":2} `},
		{"return cjson.encode({x=1, y=2, z=3, w=4})", `$25 {"y":2,"x":1,"w":4,"z":3} `},
		{"return cjson.encode({[true]=1})", "ERR user_script:1: Cannot serialise boolean: table key must be a number or string @1"},
	}
	for _, tc := range cases {
		if got := evalLua(t, tc.code); got != tc.want {
			t.Errorf("%s\n got  %q\n want %q", tc.code, got, tc.want)
		}
	}
}
