package script

import (
	"strings"
	"testing"

	"shardis/codec"
)

// runIn runs body as a script in vm (no redis.call) and returns its reply with CRLF as
// spaces, or its error reply.
func runIn(t *testing.T, vm *VM, body string) string {
	t.Helper()
	s, err := NewCache(1 << 20).Load([]byte(body))
	if err != nil {
		t.Fatalf("load %q: %v", body, err)
	}
	inv := vm.Script(s, nil, nil)
	rs := Start(nil, inv.Name(), nil, inv.IsFunction())
	defer rs.Finish()
	var w codec.Writer
	inv.Run(rs, &fakeCaller{}, &w)
	out := strings.ReplaceAll(string(w.Buf), "\r\n", " ")
	if i := strings.Index(out, " script: "); i >= 0 { // the SHA1 and position are Run's
		out = out[:i]
	}
	return out
}

// Every way a script could change the state the next script runs in is refused with Redis
// 7.0.15's text, and the next script in the same VM sees the sandbox as it was.
func TestSandbox_ScriptChanges_RefusedAndNotSeenByNextRun(t *testing.T) {
	vm := newVM()
	defer vm.state.Close()
	const ro = "-ERR Attempt to modify a readonly table"
	const roAt = "-ERR user_script:1: Attempt to modify a readonly table"
	attempts := []struct{ code, want string }{
		{"zz = 1", roAt},
		{"rawset(_G, 'zz', 1)", ro},
		{"setmetatable(_G, {__index = function() return 1 end})", ro},
		{"getmetatable('').__index.len = function() return 42 end", roAt},
		{"getmetatable('').__index = {}", roAt},
		{"rawset(getmetatable(''), 'x', 1)", ro},
		{"setmetatable(getmetatable(''), nil)", ro},
		{"rawset(string, 'len', nil)", ro},
		{"string.len = nil", roAt},
		{"rawset(redis, 'call', nil)", ro},
		{"redis.call = nil", roAt},
		{"rawset(cjson, 'encode', nil)", ro},
		{"setmetatable(redis, {})", ro},
		{"table.insert(_G, 1)", ro},
		{"table.insert(string, 'x')", ro},
		{"rawset(getmetatable(_G), 'x', 1)", ro},
		{"getmetatable(_G).__index = nil", roAt},
		{"loadstring('zz = 1')()", "-ERR <string>:1: Attempt to modify a readonly table"},
		{"loadstring('rawset(_G, \"zz\", 1)')()", ro},
		{"return loadstring('return dofile')()", "-ERR <string>:1: Script attempted to access nonexistent global variable 'dofile'"},
	}
	for _, a := range attempts {
		if got := runIn(t, vm, a.code); got != a.want {
			t.Errorf("%s: %q, want %q", a.code, got, a.want)
		}
	}
	after := []struct{ code, want string }{
		{"return zz", "-ERR user_script:1: Script attempted to access nonexistent global variable 'zz'"},
		{"return rawget(_G, 'zz')", "$-1 "},
		{"return {string.len('abc'), ('abc'):len()}", "*2 :3 :3 "},
		{"return rawequal(getmetatable('').__index, string)", ":1 "},
		{"return type(redis.call) .. type(cjson.encode) .. type(table.insert)", "$24 functionfunctionfunction "},
		{"return {type(getmetatable(_G)), type(getmetatable(redis)), type(getmetatable(string))}", "*3 $5 table $3 nil $3 nil "},
		{"return #_G + #string", ":0 "},
		{"local n = 0 for k in pairs(redis) do n = n + 1 end return n", ":23 "},
		{"return type(next(string)) .. type(rawget(string, 'len'))", "$14 stringfunction "},
		// Tables a script makes are its own: rawset, setmetatable and table.insert work.
		{"local t = setmetatable({}, {__index = function() return 7 end}) rawset(t, 1, 2) table.insert(t, 3) return {t[1], t[2], t[9]}", "*3 :2 :3 :7 "},
	}
	for _, a := range after {
		if got := runIn(t, vm, a.code); got != a.want {
			t.Errorf("%s: %q, want %q", a.code, got, a.want)
		}
	}
}

// A function's state is read-only too: what a function tries is refused and not seen by the
// next call in the same runner.
func TestSandbox_FunctionChanges_RefusedAndNotSeenByNextCall(t *testing.T) {
	e := NewFunctions(nil)
	code := "#!lua name=lib\n" +
		"redis.register_function('poke', function() rawset(_G, 'zz', 1) end)\n" +
		"redis.register_function('patch', function() getmetatable('').__index.len = function() return 42 end end)\n" +
		"redis.register_function('look', function() return {rawget(_G, 'zz') or 0, string.len('abc')} end)"
	if _, err := e.Load(code, false, 0, nil); err != nil {
		t.Fatal(err)
	}
	r := e.TakeRunner(e.Current())
	defer e.PutRunner(r)
	call := func(name string) string {
		inv, ok := r.Function(e.Current().Lookup([]byte(name)), nil, nil)
		if !ok {
			t.Fatalf("%s not loaded", name)
		}
		rs := Start(nil, inv.Name(), nil, inv.IsFunction())
		defer rs.Finish()
		var w codec.Writer
		inv.Run(rs, &fakeCaller{}, &w)
		return strings.ReplaceAll(string(w.Buf), "\r\n", " ")
	}
	for name, want := range map[string]string{
		"poke":  "-ERR Attempt to modify a readonly table script: poke, on @user_function:2. ",
		"patch": "-ERR user_function:3: Attempt to modify a readonly table script: patch, on @user_function:3. ",
	} {
		if got := call(name); got != want {
			t.Errorf("%s: %q, want %q", name, got, want)
		}
	}
	if got := call("look"); got != "*2 :0 :3 " {
		t.Errorf("look after the attempts: %q", got)
	}
}
