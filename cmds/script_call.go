package cmds

import (
	"slices"

	"shardis/acl"
	"shardis/codec"
	"shardis/script"
	"shardis/server"
	"shardis/shard"
)

// redis.call and redis.pcall: the engine (package script) hands each command a script runs to
// its run's Caller, a scriptRun, which runs it the way EXEC runs its queued commands: through
// the executor (Ctx.Exec), in the script's transaction, with InTransaction set, and returns
// its RESP reply. What Redis refuses before running the command is admitScriptCall's.

// Redis's error texts for what redis.call refuses before running a command.
const (
	errScriptUnknown  = "Unknown Redis command called from script"
	errScriptArity    = "Wrong number of args calling Redis command from script"
	errScriptNoScript = "This Redis command is not allowed from script"
	errScriptReadOnly = "Write commands are not allowed from read-only scripts."
)

// scriptRun is one run of a script or a function: what redis.call needs to run commands on
// the caller's behalf (it is the run's script.Caller). It lives for the run only.
type scriptRun struct {
	c        *Ctx // the EVAL (or FCALL…) command; its Tx holds the script's shards
	inv      script.Invocation
	readOnly bool // EVAL_RO, EVALSHA_RO, FCALL_RO, or the no-writes flag
	db       int  // SELECT inside the script moves it, not the caller's db
	client   *server.Client
	running  *script.Running
	keyBuf   [][]byte
	held     []int // the shards the transaction holds
	// savepoint is set when the run holds fewer than every shard, so it may stray: its
	// writes are undone to it (shard.Savepoint). strayed says it did.
	savepoint *shard.Savepoint
	strayed   bool
}

// CommandExists is redis.acl_check_cmd's lookup.
func (run *scriptRun) CommandExists(args [][]byte) bool { return Lookup(args) != nil }

// Call runs the command args for redis.call and redis.pcall and returns its reply, or the
// error reply of a refusal.
func (run *scriptRun) Call(args [][]byte, resp3 bool) []byte {
	cmd, refusal := admitScriptCall(run, args)
	if refusal != "" {
		return refusalReply(refusal)
	}
	if !run.holds(cmd, args) {
		if run.stray() {
			return refusalReply(errScriptStrayed)
		}
		return refusalReply(errScriptUndeclared)
	}
	if cmd.IsWrite() {
		run.running.MarkWrote() // SCRIPT KILL can no longer stop it
	}
	c := run.c
	w := codec.Writer{RESP3: resp3}
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
	return sub.W.Buf
}

// refusalReply is the error reply of a command redis.call refused: the script sees why with
// the ERR code.
func refusalReply(why string) []byte {
	return codec.AppendError(nil, "ERR "+why)
}

// admitScriptCall is what Redis checks before redis.call runs a command: that it exists, its
// arity, that scripts may run it, the ACL user of the client running the script, and no
// writes from a read-only script. It returns the command, or the text of its refusal.
func admitScriptCall(run *scriptRun, args [][]byte) (*Command, string) {
	cmd := Lookup(args)
	switch {
	case cmd == nil || cmd.Run == nil:
		return nil, errScriptUnknown
	case !cmd.CheckArity(len(args)):
		return nil, errScriptArity
	case cmd.Has(FlagNoScript):
		return nil, errScriptNoScript
	}
	if msg := scriptACLRefusal(run.c, run.client, cmd, args); msg != "" {
		return nil, msg
	}
	if run.readOnly && cmd.IsWrite() {
		return nil, errScriptReadOnly
	}
	return cmd, ""
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
	run.inv.MarkWide()
	// Stop the script between instructions, whatever pcall it is in: nothing it does now
	// counts.
	run.running.Interrupt()
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
