package script

import (
	"errors"
	"math"
	"strconv"
	"strings"
	"sync"

	lua "github.com/yuin/gopher-lua"
)

// The Lua sandbox scripts run in, as Redis 7.0 builds it: the base library (less what touches
// files or modules), table, string, math (with Redis's rand48 generator), the redis library,
// cjson, bit, struct and cmsgpack; every global and every library table read-only; reading a
// global that does not exist is an error.

// VM is one gopher-lua state with Redis's sandbox. A state is not safe for concurrent use, so
// a VM is owned by one goroutine at a time: GetVM hands one to the goroutine running a script
// (the shard goroutine or the coordinator), which gives it back with PutVM once the script
// returned; a function Runner owns its VM the same way. A VM keeps no script data between
// runs: KEYS and ARGV are replaced at each run and the globals are read-only, so only
// math.random's generator carries over (as in Redis).
type VM struct {
	state *lua.LState
	// globals is the real globals table; scripts see env, an empty proxy that reads globals
	// and refuses writes (sandbox.go).
	globals *lua.LTable
	env     *lua.LTable
	// ro is every read-only proxy of this VM with what it shows; refuseWrite is their
	// __newindex.
	ro          map[*lua.LTable]roView
	refuseWrite *lua.LFunction
	rand        rand48
	// redisLib is the redis library table (behind its read-only proxy in globals).
	redisLib *lua.LTable

	// The run in progress (Invocation.Run), for the redis library's functions: caller runs
	// redis.call's commands (nil between runs), resp3 is redis.setresp(3), scratch holds
	// the arguments of the last redis.call.
	caller  Caller
	resp3   bool
	scratch [][]byte

	// Function states only (newFunctionVM): fenv is the globals proxy libraries are loaded
	// with, and loading the library FUNCTION LOAD is running (nil otherwise), which
	// redis.register_function adds to.
	fenv    *lua.LTable
	loading *Library
}

var vmPool = sync.Pool{New: func() any { return newVM() }}

// GetVM returns an idle VM for one script run; the calling goroutine owns it until it hands
// it back with PutVM.
func GetVM() *VM { return vmPool.Get().(*VM) }

// PutVM gives back a VM from GetVM once its script returned; the caller must not use it
// after.
func PutVM(vm *VM) { vmPool.Put(vm) }

// allowedBase are the base library's globals Redis 7.0 leaves to scripts.
var allowedBase = []string{
	"assert", "collectgarbage", "error", "getmetatable", "ipairs", "load", "loadstring",
	"next", "pairs", "pcall", "rawequal", "rawget", "rawset", "select", "setmetatable",
	"tonumber", "tostring", "type", "unpack", "xpcall", "_VERSION",
}

func newVM() *VM {
	L := lua.NewState(lua.Options{SkipOpenLibs: true, CallStackSize: 1024, RegistrySize: 1024 * 20})
	vm := &VM{state: L, ro: map[*lua.LTable]roView{}}
	vm.refuseWrite = L.NewFunction(func(L *lua.LState) int {
		L.RaiseError(errReadonly)
		return 0
	})
	for _, lib := range []struct {
		name string
		open lua.LGFunction
	}{{lua.BaseLibName, lua.OpenBase}, {lua.TabLibName, lua.OpenTable},
		{lua.StringLibName, lua.OpenString}, {lua.MathLibName, lua.OpenMath},
		{lua.CoroutineLibName, lua.OpenCoroutine}} {
		L.Push(L.NewFunction(lib.open))
		L.Push(lua.LString(lib.name))
		L.Call(1, 0)
	}
	full := L.G.Global
	g := L.NewTable()
	for _, name := range allowedBase {
		g.RawSetString(name, full.RawGetString(name))
	}
	g.RawSetString("gcinfo", L.NewFunction(func(L *lua.LState) int {
		L.Push(lua.LNumber(0))
		return 1
	}))
	mathLib := full.RawGetString("math").(*lua.LTable)
	mathLib.RawSetString("random", L.NewFunction(vm.mathRandom))
	mathLib.RawSetString("randomseed", L.NewFunction(vm.mathRandomseed))
	mathLib.RawSetString("huge", lua.LNumber(math.Inf(1)))
	stringLib := full.RawGetString("string").(*lua.LTable)
	// gopher-lua makes the string library its own metatable (string.__index == string);
	// protectBase gives strings a metatable of their own.
	stringLib.RawSetString("__index", lua.LNil)
	stringLib.RawSetString("format", L.NewFunction(luaStringFormat))
	stringLib.RawSetString("upper", L.NewFunction(func(L *lua.LState) int {
		L.Push(lua.LString(mapASCII(L.CheckString(1), 'a', 'z', 'A'-'a')))
		return 1
	}))
	stringLib.RawSetString("lower", L.NewFunction(func(L *lua.LState) int {
		L.Push(lua.LString(mapASCII(L.CheckString(1), 'A', 'Z', 'a'-'A')))
		return 1
	}))
	baseToNumber := full.RawGetString("tonumber").(*lua.LFunction)
	g.RawSetString("tonumber", L.NewFunction(func(L *lua.LState) int {
		if s, ok := L.Get(1).(lua.LString); ok && L.GetTop() == 1 {
			if f, ok := strtod(string(s)); ok {
				L.Push(lua.LNumber(f))
			} else {
				L.Push(lua.LNil)
			}
			return 1
		}
		L.Insert(baseToNumber, 1)
		L.Call(L.GetTop()-1, 1)
		return 1
	}))
	g.RawSetString("pcall", L.NewFunction(redisPcall))
	baseToString := full.RawGetString("tostring").(*lua.LFunction)
	g.RawSetString("tostring", L.NewFunction(func(L *lua.LState) int {
		if n, ok := L.Get(1).(lua.LNumber); ok {
			L.Push(lua.LString(formatLuaG14(float64(n))))
			return 1
		}
		L.Insert(baseToString, 1)
		L.Call(L.GetTop()-1, 1)
		return 1
	}))
	patchLibs(L, g, full)
	vm.rand.seed(0)

	libs := map[string]*lua.LTable{
		"string":    full.RawGetString("string").(*lua.LTable),
		"table":     full.RawGetString("table").(*lua.LTable),
		"math":      mathLib,
		"coroutine": full.RawGetString("coroutine").(*lua.LTable),
		"redis":     vm.newRedisLib(),
		"cjson":     openCjson(L),
		"bit":       openBit(L),
		"struct":    openStruct(L),
		"cmsgpack":  openMsgpack(L),
	}
	for name, t := range libs {
		g.RawSetString(name, vm.readonlyLib(t))
	}
	vm.protectBase(g, libs["table"], g.RawGetString("string").(*lua.LTable))
	L.G.Global = g
	vm.globals = g
	vm.env = vm.readonlyGlobals(g)
	g.RawSetString("_G", vm.env)
	// Chunks loadstring and load make run in the sandbox, not in the table of every base
	// function gopher-lua opened (dofile, setfenv, …).
	L.Env = vm.env
	return vm
}

// redisPcall is Redis 7.0's pcall: an error raised as a table with an err field (redis.call's
// errors) is handed to the caller as that string.
func redisPcall(L *lua.LState) int {
	n := L.GetTop()
	if n < 1 {
		L.ArgError(1, "value expected")
	}
	err := L.PCall(n-1, lua.MultRet, nil)
	if err != nil {
		obj := lua.LValue(lua.LString(err.Error()))
		if ae, ok := err.(*lua.ApiError); ok {
			obj = ae.Object
		}
		if t, ok := obj.(*lua.LTable); ok {
			if s, ok := t.RawGetString("err").(lua.LString); ok {
				obj = s
			}
		}
		L.SetTop(0)
		L.Push(lua.LFalse)
		L.Push(obj)
		return 2
	}
	L.Insert(lua.LTrue, 1)
	return L.GetTop()
}

// rand48 is Redis's redisLrand48 (a 48-bit linear congruential generator), so that
// math.randomseed(n) followed by math.random gives Redis's numbers.
type rand48 struct{ x uint64 }

const rand48Max = 2147483647

func (r *rand48) seed(v int32) { r.x = uint64(uint32(v))<<16 | 0x330E }

func (r *rand48) next() int32 {
	r.x = (0x5DEECE66D*r.x + 0xB) & (1<<48 - 1)
	return int32(r.x >> 17)
}

func (vm *VM) mathRandom(L *lua.LState) int {
	r := float64(vm.rand.next()%rand48Max) / rand48Max
	switch L.GetTop() {
	case 0:
		L.Push(lua.LNumber(r))
	case 1:
		u := L.CheckInt(1)
		if u < 1 {
			L.ArgError(1, "interval is empty")
		}
		L.Push(lua.LNumber(math.Floor(r*float64(u)) + 1))
	case 2:
		l, u := L.CheckInt(1), L.CheckInt(2)
		if l > u {
			L.ArgError(2, "interval is empty")
		}
		L.Push(lua.LNumber(math.Floor(r*float64(u-l+1)) + float64(l)))
	default:
		L.RaiseError("wrong number of arguments")
	}
	return 1
}

func (vm *VM) mathRandomseed(L *lua.LState) int {
	vm.rand.seed(int32(L.CheckInt(1)))
	return 0
}

// formatLuaG14 formats a number as Lua 5.1's tostring does ("%.14g", and inf, -inf, nan as
// glibc prints them).
func formatLuaG14(f float64) string {
	if s, ok := nonFinite(f); ok {
		return s
	}
	return formatG14(f)
}

// mapASCII shifts the bytes of s in [lo, hi] by delta: C's toupper and tolower in the C
// locale, which leave every other byte alone (gopher-lua's would rewrite invalid UTF-8).
func mapASCII(s string, lo, hi byte, delta int) string {
	b := []byte(s)
	for i, ch := range b {
		if ch >= lo && ch <= hi {
			b[i] = byte(int(ch) + delta)
		}
	}
	return string(b)
}

// strtod is Lua 5.1's string to number conversion (luaO_str2d): C's strtod, or a hex
// integer, with surrounding white space allowed and nothing else after the number.
func strtod(s string) (float64, bool) {
	t := strings.Trim(s, " \t\n\r\f\v")
	if t == "" {
		return 0, false
	}
	body, neg := t, false
	if body[0] == '-' || body[0] == '+' {
		neg, body = body[0] == '-', body[1:]
	}
	if len(body) > 2 && body[0] == '0' && (body[1] == 'x' || body[1] == 'X') {
		n, err := strconv.ParseUint(body[2:], 16, 64)
		if err != nil {
			f, err := strconv.ParseFloat(body, 64) // a hex float: 0x1p4
			if err != nil || strings.ContainsRune(body, '_') {
				return 0, false
			}
			if neg {
				f = -f
			}
			return f, true
		}
		if neg {
			return -float64(n), true
		}
		return float64(n), true
	}
	if strings.ContainsRune(body, '_') || len(body) == 0 || body[0] == '+' || body[0] == '-' {
		return 0, false
	}
	f, err := strconv.ParseFloat(body, 64)
	if err != nil && !errors.Is(err, strconv.ErrRange) {
		return 0, false
	}
	if neg {
		f = -f
	}
	return f, true
}
