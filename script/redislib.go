package script

import (
	"crypto/sha1"
	"encoding/hex"
	"strconv"

	lua "github.com/yuin/gopher-lua"
)

// The redis library scripts see. redis.call and redis.pcall hand the command to the run's
// Caller (cmds runs it through the executor, in the script's transaction) and give its RESP
// reply back converted to Lua values.

// Caller runs the commands of one script run for redis.call and redis.pcall, and knows the
// command table for redis.acl_check_cmd. The engine calls it from the goroutine running the
// script, one call at a time, and only during Invocation.Run.
type Caller interface {
	// Call runs the command args on the script's behalf and returns its RESP reply, in RESP3
	// when resp3 (the script called redis.setresp(3)). A command refused before it runs
	// replies an error too ("-ERR <why>\r\n"): the script sees either as a Lua error (or
	// pcall's error table). The args slice (not its elements) is reused by the next Call;
	// the reply is read before the next Call.
	Call(args [][]byte, resp3 bool) []byte
	// ACLCheck is redis.acl_check_cmd: whether args names a command (with its subcommand),
	// and whether the script's caller may run it with these arguments (its command, key and
	// channel permissions).
	ACLCheck(args [][]byte) (exists, allowed bool)
}

// Redis's error texts for what redis.call refuses before handing the command to the Caller.
const (
	errScriptNoArgs    = "Please specify at least one argument for this redis lib call"
	errScriptArgType   = "Lua redis lib command arguments must be strings or integers"
	errScriptWrongArgs = "ERR wrong number or type of arguments"
)

func (vm *VM) newRedisLib() *lua.LTable {
	L := vm.state
	t := L.NewTable()
	vm.redisLib = t
	fns := map[string]lua.LGFunction{
		"call":               func(L *lua.LState) int { return vm.call(L, true) },
		"pcall":              func(L *lua.LState) int { return vm.call(L, false) },
		"error_reply":        func(L *lua.LState) int { return replyTable(L, "err") },
		"status_reply":       func(L *lua.LState) int { return replyTable(L, "ok") },
		"sha1hex":            sha1hexLua,
		"log":                func(L *lua.LState) int { return 0 },
		"setresp":            vm.setresp,
		"set_repl":           setRepl,
		"replicate_commands": func(L *lua.LState) int { L.Push(lua.LTrue); return 1 },
		"breakpoint":         func(L *lua.LState) int { L.Push(lua.LFalse); return 1 },
		"debug":              func(L *lua.LState) int { return 0 },
		"acl_check_cmd":      vm.aclCheckCmd,
	}
	for name, fn := range fns {
		t.RawSetString(name, L.NewFunction(fn))
	}
	t.RawSetString("REDIS_VERSION", lua.LString("7.0.15"))
	t.RawSetString("REDIS_VERSION_NUM", lua.LNumber(0x07000f))
	for i, name := range []string{"LOG_DEBUG", "LOG_VERBOSE", "LOG_NOTICE", "LOG_WARNING"} {
		t.RawSetString(name, lua.LNumber(i))
	}
	for name, v := range map[string]int{"REPL_NONE": 0, "REPL_AOF": 1, "REPL_SLAVE": 2, "REPL_REPLICA": 2, "REPL_ALL": 3} {
		t.RawSetString(name, lua.LNumber(v))
	}
	return t
}

// raiseRedisError raises msg (an error reply's text, with or without its '-') as Redis does:
// a table whose err field is the text with an error code.
func raiseRedisError(L *lua.LState, msg string) {
	L.Error(errorTable(L, msg), 1)
}

// errorTable is Redis's luaPushError: "-CODE msg" keeps its code, a bare text gets ERR.
func errorTable(L *lua.LState, msg string) *lua.LTable {
	var full string
	if len(msg) > 0 && msg[0] == '-' {
		body := msg[1:]
		if i := indexByte(body, ' '); i >= 0 {
			full = body[:i] + " " + trimCRLF(body[i+1:])
		} else {
			full = "ERR " + trimCRLF(body)
		}
	} else {
		full = "ERR " + trimCRLF(msg)
	}
	t := L.NewTable()
	t.RawSetString("err", lua.LString(full))
	return t
}

func indexByte(s string, ch byte) int {
	for i := 0; i < len(s); i++ {
		if s[i] == ch {
			return i
		}
	}
	return -1
}

func trimCRLF(s string) string {
	for len(s) > 0 && (s[len(s)-1] == '\r' || s[len(s)-1] == '\n') {
		s = s[:len(s)-1]
	}
	for len(s) > 0 && (s[0] == '\r' || s[0] == '\n') {
		s = s[1:]
	}
	return s
}

// replyTable is redis.error_reply and redis.status_reply.
func replyTable(L *lua.LState, field string) int {
	s, ok := L.Get(1).(lua.LString)
	if L.GetTop() != 1 || !ok {
		L.Push(errorTable(L, "-"+errScriptWrongArgs))
		return 1
	}
	if field == "err" {
		msg := string(s)
		if len(msg) == 0 || msg[0] != '-' {
			msg = "-" + msg
		}
		L.Push(errorTable(L, msg))
		return 1
	}
	t := L.NewTable()
	t.RawSetString(field, s)
	L.Push(t)
	return 1
}

func sha1hexLua(L *lua.LState) int {
	if L.GetTop() != 1 {
		raiseRedisError(L, "wrong number of arguments")
	}
	v := L.Get(1)
	var s string
	switch v := v.(type) {
	case lua.LString:
		s = string(v)
	case lua.LNumber:
		s = formatLuaNumber(float64(v))
	}
	sum := sha1.Sum([]byte(s))
	L.Push(lua.LString(hex.EncodeToString(sum[:])))
	return 1
}

func (vm *VM) setresp(L *lua.LState) int {
	if L.GetTop() != 1 {
		raiseRedisError(L, "redis.setresp() requires one argument.")
	}
	n, ok := L.Get(1).(lua.LNumber)
	if !ok || (n != 2 && n != 3) {
		raiseRedisError(L, "RESP version must be 2 or 3.")
	}
	if vm.caller != nil {
		vm.resp3 = n == 3
	}
	return 0
}

func setRepl(L *lua.LState) int {
	if L.GetTop() != 1 {
		raiseRedisError(L, "redis.set_repl() requires one argument.")
	}
	n, ok := L.Get(1).(lua.LNumber)
	if !ok || n < 0 || n > 3 {
		raiseRedisError(L, "Invalid replication flags. Use REPL_AOF, REPL_REPLICA, REPL_ALL or REPL_NONE.")
	}
	return 0
}

func (vm *VM) aclCheckCmd(L *lua.LState) int {
	if L.GetTop() < 1 {
		raiseRedisError(L, errScriptNoArgs)
	}
	args := vm.luaArgs(L)
	exists, allowed := false, false
	if vm.caller != nil {
		exists, allowed = vm.caller.ACLCheck(args)
	}
	if !exists {
		raiseRedisError(L, "Invalid command passed to redis.acl_check_cmd()")
	}
	L.Push(lua.LBool(allowed))
	return 1
}

// formatLuaNumber formats a number as Lua 5.1 does as Redis builds it ("%.17g").
func formatLuaNumber(f float64) string {
	if f == float64(int64(f)) && f > -1e17 && f < 1e17 {
		return strconv.FormatInt(int64(f), 10)
	}
	return formatG17(f)
}

// luaArgs converts redis.call's arguments to command arguments, raising Redis's error for an
// argument that is neither a string nor a number.
func (vm *VM) luaArgs(L *lua.LState) [][]byte {
	n := L.GetTop()
	args := vm.scratch[:0]
	for i := 1; i <= n; i++ {
		switch v := L.Get(i).(type) {
		case lua.LString:
			args = append(args, []byte(v))
		case lua.LNumber:
			args = append(args, []byte(formatLuaNumber(float64(v))))
		default:
			raiseRedisError(L, errScriptArgType)
		}
	}
	vm.scratch = args
	return args
}

// call is redis.call (raise: errors are raised) and redis.pcall (errors are returned as
// tables with an err field).
func (vm *VM) call(L *lua.LState, raise bool) int {
	fail := func(msg string) int {
		if raise {
			raiseRedisError(L, msg)
		}
		L.Push(errorTable(L, msg))
		return 1
	}
	if L.GetTop() == 0 {
		return fail(errScriptNoArgs)
	}
	caller := vm.caller
	if caller == nil {
		return fail(errScriptNoArgs)
	}
	for i := 1; i <= L.GetTop(); i++ {
		if t := L.Get(i).Type(); t != lua.LTString && t != lua.LTNumber {
			return fail(errScriptArgType)
		}
	}
	reply := caller.Call(vm.luaArgs(L), vm.resp3)
	if len(reply) > 0 && reply[0] == '-' {
		return fail(string(reply[:len(reply)-2]))
	}
	v, _ := respToLua(L, reply)
	L.Push(v)
	return 1
}

// numericArgs lists, per library function, the arguments Lua 5.1 reads with luaL_checknumber,
// luaL_checkint or luaL_optint, which take a numeric string as its number
// (math.randomseed("10")); gopher-lua's CheckInt and OptInt refuse one. first..last are
// 1-based positions, last 0 meaning every argument from first on; minTop is how many
// arguments the call must have for them to be numbers (table.insert(t, "2") inserts the
// string).
var numericArgs = []struct {
	lib, name           string
	first, last, minTop int
}{
	{"math", "random", 1, 0, 0}, {"math", "randomseed", 1, 1, 0},
	{"math", "max", 1, 0, 0}, {"math", "min", 1, 0, 0}, {"math", "ldexp", 1, 2, 0},
	{"math", "atan2", 1, 2, 0}, {"math", "fmod", 1, 2, 0}, {"math", "pow", 1, 2, 0},
	{"string", "byte", 2, 3, 0}, {"string", "sub", 2, 3, 0}, {"string", "rep", 2, 2, 0},
	{"string", "char", 1, 0, 0}, {"string", "find", 3, 3, 0}, {"string", "match", 3, 3, 0},
	{"string", "gsub", 4, 4, 0},
	{"table", "insert", 2, 2, 3}, {"table", "remove", 2, 2, 0}, {"table", "concat", 3, 4, 0},
	{"", "unpack", 2, 3, 0}, {"", "select", 1, 1, 0}, {"", "tonumber", 2, 2, 0},
}

// acceptNumericStrings wraps the functions of numericArgs (in the globals g and the library
// tables of full, before they are proxied) so that a numeric string argument reaches them as
// its number, as Lua 5.1 converts it (luaO_str2d: strtod).
func acceptNumericStrings(L *lua.LState, g, full *lua.LTable) {
	for _, a := range numericArgs {
		t := g
		if a.lib != "" {
			t, _ = full.RawGetString(a.lib).(*lua.LTable)
		}
		if t == nil {
			continue
		}
		orig, ok := t.RawGetString(a.name).(*lua.LFunction)
		if !ok || !orig.IsG {
			continue
		}
		inner, first, last, minTop := orig.GFunction, a.first, a.last, a.minTop
		t.RawSetString(a.name, L.NewFunction(func(L *lua.LState) int {
			top := L.GetTop()
			if top >= minTop {
				end := last
				if end == 0 || end > top {
					end = top
				}
				for i := first; i <= end; i++ {
					if s, ok := L.Get(i).(lua.LString); ok {
						if f, ok := strtod(string(s)); ok {
							L.Replace(i, lua.LNumber(f))
						}
					}
				}
			}
			return inner(L)
		}))
	}
}

// luaHeapEstimateKB is what collectgarbage("count") answers: gopher-lua's objects live in Go's
// heap, not in a per-state allocator, so there is no per-state figure; this is about what a
// fresh Redis 7.0 Lua state reports (37 KB).
const luaHeapEstimateKB = 37.0

// newCollectGarbage is Lua 5.1's collectgarbage over gopher-lua: the options and their
// replies as Redis's Lua gives them (0 for collect, stop and restart; the previous value for
// setpause and setstepmul, 200 at first), without running Go's collector (gopher-lua's
// collectgarbage runs a full runtime.GC on every call, which a script's loop would make a
// denial of service).
func newCollectGarbage(L *lua.LState) *lua.LFunction {
	pause, stepmul := 200, 200
	return L.NewFunction(func(L *lua.LState) int {
		opt := "collect"
		if L.GetTop() >= 1 && L.Get(1) != lua.LNil {
			opt = checkString(L, 1)
		}
		ex := 0
		if L.GetTop() >= 2 && L.Get(2) != lua.LNil {
			ex = int(checkNumber(L, 2))
		}
		switch opt {
		case "count":
			L.Push(lua.LNumber(luaHeapEstimateKB))
		case "step":
			L.Push(lua.LFalse)
		case "setpause":
			L.Push(lua.LNumber(pause))
			pause = ex
		case "setstepmul":
			L.Push(lua.LNumber(stepmul))
			stepmul = ex
		case "stop", "restart", "collect":
			L.Push(lua.LNumber(0))
		default:
			L.ArgError(1, "invalid option '"+opt+"'")
		}
		return 1
	})
}

// patchLibs applies what Lua 5.1 does that gopher-lua does not to the base functions (g) and
// the library tables (full) before they are proxied.
func patchLibs(L *lua.LState, g, full *lua.LTable) {
	g.RawSetString("collectgarbage", newCollectGarbage(L))
	acceptNumericStrings(L, g, full)
}
