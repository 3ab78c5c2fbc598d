package cmds

import (
	"fmt"
	"regexp"
	"strconv"
	"sync/atomic"

	lua "github.com/yuin/gopher-lua"

	"shardis/server"
	"shardis/shard"
)

// scriptRun is one run of a script or a function: what redis.call needs to run commands on
// the caller's behalf. It lives for the run only; the VM points to it while the script runs.
type scriptRun struct {
	c        *Ctx // the EVAL (or FCALL…) command; its Tx holds the script's shards
	readOnly bool // EVAL_RO, EVALSHA_RO, FCALL_RO, or the no-writes flag
	db       int  // SELECT inside the script moves it, not the caller's db
	client   *server.Client
	resp3    bool // redis.setresp(3): commands reply in RESP3 to the script
	running  *runningScript
	scratch  [][]byte
	keyBuf   [][]byte
	held     []int        // the shards the transaction holds, read at the first redis.call
	wide     *atomic.Bool // the script's mark that it strayed (cachedScript.wide, luaFunction.wide)
	// savepoint is set when the run holds fewer than every shard, so it may stray: its
	// writes are undone to it (shard.Savepoint). strayed says it did.
	savepoint *shard.Savepoint
	strayed   bool
}

// scriptErrorSource is the chunk name Redis gives scripts, as it shows in error positions;
// functionErrorSource is the one of function libraries.
const (
	scriptErrorSource   = "user_script"
	functionErrorSource = "user_function"
)

// runScript runs the EVAL script s with keys and argv and writes its reply (or error) to c.W.
func runScript(c *Ctx, s *cachedScript, keys, argv [][]byte, readOnly bool) {
	vm := vmPool.Get().(*scriptVM)
	defer vmPool.Put(vm)
	vm.globals.RawSetString("KEYS", argTable(vm.L, keys))
	vm.globals.RawSetString("ARGV", argTable(vm.L, argv))
	fn := vm.L.NewFunctionFromProto(s.proto)
	fn.Env = vm.env
	runLua(c, vm, luaCall{fn: fn, name: s.sha, source: scriptErrorSource, wide: &s.wide}, readOnly)
}

// luaCall is what runLua calls: fn, with args (a function's KEYS and ARGV tables; none for
// a script, which reads them as globals), named name at source in error replies.
type luaCall struct {
	fn       *lua.LFunction
	args     []lua.LValue
	name     string
	source   string
	function bool // FCALL: FUNCTION KILL stops it, SCRIPT KILL refuses
	wide     *atomic.Bool
}

// runLua runs call in vm (owned by the caller's goroutine for the run) and writes its reply
// or error to c.W.
func runLua(c *Ctx, vm *scriptVM, call luaCall, readOnly bool) {
	cl := c.Client
	if cl == nil {
		cl = &server.Client{}
	}
	savedDB := cl.DB
	mark := len(c.W.Buf)
	var shards []int
	if c.Tx != nil {
		shards = c.Tx.Shards()
	}
	running, ctx := startScript(c.Srv, call.name, c.Args, call.function, shards)
	run := &scriptRun{c: c, readOnly: readOnly, db: c.DB, client: cl, running: running,
		wide: call.wide, held: shards}
	if c.Tx != nil && len(shards) < c.Tx.Store().NumShards() {
		run.savepoint = &vm.savepoint
		c.Tx.Save(run.savepoint)
	}
	vm.run = run
	L := vm.L
	L.SetContext(ctx)
	defer func() {
		L.RemoveContext()
		running.finish()
		vm.run = nil
		cl.DB = savedDB
		L.SetTop(0)
		switch {
		case running.stopped.Load() && c.Tx != nil:
			c.Tx.Fail(errServerStopping) // as if the server had stopped before the script
			if run.savepoint != nil {
				c.Tx.Forget(run.savepoint)
			}
		case run.strayed:
			c.Tx.RollbackTo(run.savepoint)
			c.Strayed = true
			c.W.Buf = c.W.Buf[:mark]
		case run.savepoint != nil:
			c.Tx.Forget(run.savepoint)
		}
	}()
	L.Push(call.fn)
	for _, a := range call.args {
		L.Push(a)
	}
	err := L.PCall(len(call.args), 1, L.NewFunction(errorHandler))
	if err != nil {
		msg, line := scriptError(err)
		if running.killed.Load() {
			msg = "ERR Script killed by user with SCRIPT KILL..." // FUNCTION KILL's too, as Redis
		}
		c.Error(fmt.Sprintf("%s script: %s, on @%s:%s.", msg, call.name, call.source, line))
		return
	}
	luaToResp(&c.W, L.Get(-1), 0, run.resp3)
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
