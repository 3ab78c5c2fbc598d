package script

import (
	"fmt"
	"regexp"
	"strconv"
	"sync/atomic"

	lua "github.com/yuin/gopher-lua"

	"shardis/codec"
)

// Running a script or a function: an Invocation is what to call in which VM; Run calls it,
// watching its Running's context (SCRIPT KILL, FUNCTION KILL, a stopping server), and writes
// the reply or Redis's error reply.

// The chunk names Redis gives scripts and function libraries, as they show in error
// positions (user_script:1: …, on @user_script:1.).
const (
	scriptErrorSource   = "user_script"
	functionErrorSource = "user_function"
)

// Invocation is a script or function made ready to run in a VM: the function to call, its
// arguments, and the names its error replies show. It is valid while the caller owns the VM
// (GetVM until PutVM, or TakeRunner until PutRunner), for one Run.
type Invocation struct {
	vm       *VM
	fn       *lua.LFunction
	args     []lua.LValue // a function's KEYS and ARGV tables; none for a script (globals)
	name     string       // the script's SHA1 or the function's name
	source   string
	function bool
	wide     *atomic.Bool // Script.wide or Function.wide
}

// Script readies s to run in vm with keys and argv (its KEYS and ARGV globals).
func (vm *VM) Script(s *Script, keys, argv [][]byte) Invocation {
	vm.globals.RawSetString("KEYS", argTable(vm.state, keys))
	vm.globals.RawSetString("ARGV", argTable(vm.state, argv))
	fn := vm.state.NewFunctionFromProto(s.proto)
	fn.Env = vm.env
	return Invocation{vm: vm, fn: fn, name: s.sha, source: scriptErrorSource, wide: &s.wide}
}

// Name is the script's SHA1 or the function's name, as error replies and FUNCTION STATS show
// it.
func (inv Invocation) Name() string { return inv.name }

// IsFunction reports whether it calls a function (FCALL): FUNCTION KILL stops it, SCRIPT KILL
// refuses.
func (inv Invocation) IsFunction() bool { return inv.function }

// MarkWide marks its script or function as one that strayed beyond its declared keys' shards,
// so that later runs hold every shard from the start (Script.Wide, Function.Wide).
func (inv Invocation) MarkWide() { inv.wide.Store(true) }

// Run calls inv in its VM (owned by the calling goroutine) and writes the reply to w, or
// Redis's error reply (ERR user_script:1: … script: <sha>, on @user_script:1.). caller (not
// nil) runs the commands of redis.call and redis.pcall, during Run only. The script stops at its next instruction once
// running's context is cancelled (Running.Kill, Running.Interrupt, StopAll); a killed one
// replies that SCRIPT KILL stopped it.
func (inv Invocation) Run(running *Running, caller Caller, w *codec.Writer) {
	vm := inv.vm
	vm.caller, vm.resp3, vm.scratch = caller, false, nil
	L := vm.state
	L.SetContext(running.ctx)
	defer func() {
		L.RemoveContext()
		vm.caller, vm.scratch = nil, nil
		L.SetTop(0)
	}()
	L.Push(inv.fn)
	for _, a := range inv.args {
		L.Push(a)
	}
	err := L.PCall(len(inv.args), 1, L.NewFunction(errorHandler))
	if err != nil {
		msg, line := scriptError(err)
		if running.Killed() {
			msg = "ERR Script killed by user with SCRIPT KILL..." // FUNCTION KILL's too, as Redis
		}
		w.Error(fmt.Sprintf("%s script: %s, on @%s:%s.", msg, inv.name, inv.source, line))
		return
	}
	luaToResp(w, L.Get(-1), 0, vm.resp3)
}

func argTable(L *lua.LState, args [][]byte) *lua.LTable {
	t := L.CreateTable(len(args), 0)
	for _, a := range args {
		t.Append(lua.LString(a))
	}
	return t
}

// errorHandler is Redis's __redis__err__handler: it turns the error into a table with the
// error text (a string error gets the ERR code) and the line the script was at.
func errorHandler(L *lua.LState) int {
	errv := L.Get(1)
	t, ok := errv.(*lua.LTable)
	if !ok {
		t = L.NewTable()
		text := errv.String()
		if errv.Type() == lua.LTString || errv.Type() == lua.LTNumber {
			text = luaErrorText(lua.LVAsString(errv))
		}
		t.RawSetString("err", lua.LString("ERR "+text))
	}
	for level := 0; ; level++ {
		dbg, ok := L.GetStack(level)
		if !ok {
			break
		}
		if _, err := L.GetInfo("Sl", dbg, lua.LNil); err != nil {
			continue
		}
		if dbg.What != "G" && dbg.CurrentLine > 0 {
			t.RawSetString("line", lua.LNumber(dbg.CurrentLine))
			break
		}
	}
	L.Push(t)
	return 1
}

// scriptError returns the text and line of a script's uncaught error.
func scriptError(err error) (msg, line string) {
	line = "?"
	ae, ok := err.(*lua.ApiError)
	if !ok {
		return "ERR " + err.Error(), line
	}
	t, ok := ae.Object.(*lua.LTable)
	if !ok {
		return "ERR " + lua.LVAsString(ae.Object), line
	}
	if n, ok := t.RawGetString("line").(lua.LNumber); ok {
		line = strconv.Itoa(int(n))
	}
	if s, ok := t.RawGetString("err").(lua.LString); ok {
		return sanitizeLine(string(s)), line
	}
	return "ERR unknown error", line
}

// sanitizeLine replaces CR and LF with spaces, as Redis does in error and status replies.
func sanitizeLine(s string) string {
	b := []byte(s)
	for i, ch := range b {
		if ch == '\r' || ch == '\n' {
			b[i] = ' '
		}
	}
	return string(b)
}

// gopherOperandError matches gopher-lua's text for an operator applied to wrong operands.
var gopherOperandError = regexp.MustCompile(`cannot perform (\w+) operation between (\w+) and (\w+)`)

// gopherArgError matches gopher-lua's argument errors, which do not quote the function name.
var gopherArgError = regexp.MustCompile(`bad argument #(\d+) to ([\w.]+) \(`)

// luaErrorText rewrites gopher-lua's runtime error texts that Lua 5.1 words differently
// ("attempt to perform arithmetic on a nil value"), so scripts see Redis's texts.
func luaErrorText(s string) string {
	s = gopherArgError.ReplaceAllString(s, "bad argument #$1 to '$2' (")
	return gopherOperandError.ReplaceAllStringFunc(s, func(m string) string {
		sub := gopherOperandError.FindStringSubmatch(m)
		op, a, b := sub[1], sub[2], sub[3]
		bad := b
		if a != "number" && a != "string" {
			bad = a
		}
		if op == "concat" {
			return "attempt to concatenate a " + bad + " value"
		}
		if a != "number" {
			bad = a
		}
		return "attempt to perform arithmetic on a " + bad + " value"
	})
}
