package cmds

import (
	"crypto/sha1"
	"encoding/hex"
	"slices"
	"strconv"

	lua "github.com/yuin/gopher-lua"

	"shardis/acl"
	"shardis/codec"
	"shardis/server"
)

// The redis library scripts see. redis.call and redis.pcall run a command the way EXEC runs
// its queued commands: through the executor (Ctx.Exec), in the script's transaction, with
// InTransaction set, and hand its RESP reply back converted to Lua values.

// Redis's error texts for what redis.call refuses before running a command.
const (
	errScriptNoArgs    = "Please specify at least one argument for this redis lib call"
	errScriptArgType   = "Lua redis lib command arguments must be strings or integers"
	errScriptUnknown   = "Unknown Redis command called from script"
	errScriptArity     = "Wrong number of args calling Redis command from script"
	errScriptNoScript  = "This Redis command is not allowed from script"
	errScriptReadOnly  = "Write commands are not allowed from read-only scripts."
	errScriptWrongArgs = "ERR wrong number or type of arguments"
)

func (vm *scriptVM) newRedisLib() *lua.LTable {
	L := vm.L
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

func (vm *scriptVM) setresp(L *lua.LState) int {
	if L.GetTop() != 1 {
		raiseRedisError(L, "redis.setresp() requires one argument.")
	}
	n, ok := L.Get(1).(lua.LNumber)
	if !ok || (n != 2 && n != 3) {
		raiseRedisError(L, "RESP version must be 2 or 3.")
	}
	if vm.run != nil {
		vm.run.resp3 = n == 3
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

func (vm *scriptVM) aclCheckCmd(L *lua.LState) int {
	if L.GetTop() < 1 {
		raiseRedisError(L, errScriptNoArgs)
	}
	args := vm.luaArgs(L)
	cmd := Lookup(args)
	if cmd == nil {
		raiseRedisError(L, "Invalid command passed to redis.acl_check_cmd()")
	}
	L.Push(lua.LTrue) // every client may run every command: shardis has no ACL users
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
func (vm *scriptVM) luaArgs(L *lua.LState) [][]byte {
	n := L.GetTop()
	var args [][]byte
	if vm.run != nil {
		args = vm.run.scratch[:0]
	}
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
	if vm.run != nil {
		vm.run.scratch = args
	}
	return args
}

// call is redis.call (raise: errors are raised) and redis.pcall (errors are returned as
// tables with an err field).
func (vm *scriptVM) call(L *lua.LState, raise bool) int {
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
	run := vm.run
	if run == nil {
		return fail(errScriptNoArgs)
	}
	for i := 1; i <= L.GetTop(); i++ {
		if t := L.Get(i).Type(); t != lua.LTString && t != lua.LTNumber {
			return fail(errScriptArgType)
		}
	}
	args := vm.luaArgs(L)
	cmd := Lookup(args)
	switch {
	case cmd == nil || cmd.Run == nil:
		return fail(errScriptUnknown)
	case !cmd.CheckArity(len(args)):
		return fail(errScriptArity)
	case cmd.Has(FlagNoScript):
		return fail(errScriptNoScript)
	}
	if msg := scriptACLRefusal(run.c, run.client, cmd, args); msg != "" {
		return fail(msg)
	}
	switch {
	case run.readOnly && cmd.IsWrite():
		return fail(errScriptReadOnly)
	}
	if !run.holds(cmd, args) {
		if run.stray() {
			return fail(errScriptStrayed)
		}
		return fail(errScriptUndeclared)
	}
	if cmd.IsWrite() {
		run.running.wrote.Store(true) // SCRIPT KILL can no longer stop it
	}
	c := run.c
	w := codec.Writer{RESP3: run.resp3}
	sub := Ctx{Args: args, DB: run.db, W: w, Tx: c.Tx, Client: run.client, Cmd: cmd,
		InTransaction: true, Caching: c.Caching, Caller: c}
	if cmd.Exec == ExecConn {
		run.client.DB = run.db
	}
	if c.Tx != nil {
		c.Tx.StartCommand()
	}
	c.Exec.Run(&sub)
	if cmd.Exec == ExecConn {
		run.db = run.client.DB
	}
	if sub.Stream != nil { // never asked for (Streamable is false), closed if ever opened
		sub.Stream.Close()
	}
	reply := sub.W.Buf
	if len(reply) > 0 && reply[0] == '-' {
		return fail(string(reply[:len(reply)-2]))
	}
	v, _ := respToLua(L, reply)
	L.Push(v)
	return 1
}

// scriptACLRefusal checks a command a script runs against the ACL user of the client that
// runs the script, as Redis does in redis.call, and returns Redis's error (logged in the ACL
// log with context lua) or "" when the user may run it.
func scriptACLRefusal(c *Ctx, cl *server.Client, cmd *Command, args [][]byte) string {
	if cl == nil {
		return ""
	}
	u := cl.User()
	if u == nil || u.Unrestricted() {
		return ""
	}
	why, pos := cmd.ACLCheck(u, args)
	if why == acl.Allowed {
		return ""
	}
	LogDenial(c.Srv, cl, cmd, args, why, pos, acl.ContextLua, false)
	switch why {
	case acl.DeniedCommand:
		return "The user executing the script can't run this command or subcommand"
	case acl.DeniedKey:
		return "The user executing the script can't access at least one of the keys mentioned in the command arguments"
	case acl.DeniedChannel:
		return "The user executing the script can't publish to the channel mentioned in the command"
	}
	return "The user executing the script is lacking the permissions for the command"
}

// errScriptUndeclared is the error of a command on a key whose shard the script does not hold
// when it cannot stray (it holds every shard, or runs without a coordinator). It guards the
// transaction, which would fail whole on a key outside its shards.
const errScriptUndeclared = "Script accessed a key in a shard it does not hold"

// errScriptStrayed ends a script that strayed (the reply is never sent: the script runs again).
const errScriptStrayed = "Script strayed beyond its declared keys' shards"

// stray marks the run strayed and the script wide, and stops it, when it runs narrowed (with
// a savepoint, holding fewer than every shard): runLua then rolls its writes back and it runs
// again holding every shard. It reports false when the script holds every shard.
func (run *scriptRun) stray() bool {
	if run.savepoint == nil {
		return false
	}
	run.strayed = true
	if run.wide != nil {
		run.wide.Store(true)
	}
	// Stop the script between instructions, whatever pcall it is in: nothing it does now
	// counts.
	run.running.cancel()
	return true
}

// holds reports whether the script's transaction holds every shard cmd needs with args.
func (run *scriptRun) holds(cmd *Command, args [][]byte) bool {
	tx := run.c.Tx
	if tx == nil {
		return cmd.Exec == ExecConn || cmd.Exec == ExecServer
	}
	held := run.held
	store := tx.Store()
	has := func(id int) bool { return slices.Contains(held, id) }
	all := len(held) == store.NumShards()
	if run.strayed {
		return false // strayed already: run nothing more (only a pcall could get here)
	}
	switch cmd.Exec {
	case ExecConn:
		return true
	case ExecServer:
		return all || !cmd.Has(TraitUnconfined)
	case ExecAll:
		return all
	}
	if cmd.Route != nil {
		sub := Ctx{Args: args, DB: run.db, Client: run.client, Srv: run.c.Srv, Cmd: cmd}
		for _, id := range cmd.Route(&sub, store.NumShards()) {
			if !has(id) {
				return false
			}
		}
		return true
	}
	run.keyBuf = cmd.AppendKeyArgs(run.keyBuf[:0], args)
	for _, k := range run.keyBuf {
		if !has(store.ShardOf(k)) {
			return false
		}
	}
	return true
}
