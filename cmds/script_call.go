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
// its RESP reply. What Redis refuses before running the command, the executor's Admit
// refuses (FromScript).

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
	// Reused by every redis.call of the run, which a script may make millions of times: the
	// admission request, the command's context and its reply's buffer (the engine converts
	// the reply before the next call).
	admit AdmitRequest
	sub   Ctx
	reply []byte
}

// ACLCheck is redis.acl_check_cmd: the command args names, checked against the caller's user
// as Redis checks it (without its arity: a command given too few arguments for its own key
// finder is checked without keys).
func (run *scriptRun) ACLCheck(args [][]byte) (exists, allowed bool) {
	cmd := Lookup(args)
	if cmd == nil || !cmd.Runs() && len(args) > 1 { // an unknown subcommand names none
		return false, false
	}
	var u *acl.User
	if run.client != nil {
		u = run.client.User()
	}
	if u == nil || u.Unrestricted() {
		return true, true
	}
	r := cmd.aclRequest(u, args, cmd.CheckArity(len(args)) || cmd.Keys == nil)
	why, _ := u.Check(&r)
	return true, why == acl.Allowed
}

// Call runs the command args for redis.call and redis.pcall and returns its reply, or the
// error reply of a refusal.
func (run *scriptRun) Call(args [][]byte, resp3 bool) []byte {
	cmd := Lookup(args)
	run.admit = AdmitRequest{From: FromScript, Cmd: cmd, Args: args, Client: run.client, ReadOnly: run.readOnly}
	if refusal := run.c.Exec.Admit(&run.admit); refusal != "" {
		return codec.AppendError(nil, refusal)
	}
	if !run.holds(cmd, args) {
		if run.stray() {
			return codec.AppendError(nil, "ERR "+errScriptStrayed)
		}
		return codec.AppendError(nil, "ERR "+errScriptUndeclared)
	}
	if cmd.IsWrite() {
		run.running.MarkWrote() // SCRIPT KILL can no longer stop it
	}
	c := run.c
	run.sub = Ctx{Args: args, DB: run.db, W: codec.Writer{Buf: run.reply[:0], RESP3: resp3}, Tx: c.Tx,
		Client: run.client, Cmd: cmd, InTransaction: true, Caching: c.Caching, Caller: c}
	sub := &run.sub
	if cmd.Exec == ExecConn {
		run.client.DB = run.db
	}
	if c.Tx != nil {
		c.Tx.StartCommand()
	}
	c.Exec.Run(sub)
	if cmd.Exec == ExecConn {
		run.db = run.client.DB
	}
	if sub.Stream != nil { // never asked for (Streamable is false), closed if ever opened
		sub.Stream.Close()
	}
	reply := sub.W.Buf
	if cap(reply) <= 64<<10 {
		run.reply = reply // a big reply is not kept for the rest of the run
	}
	run.sub = Ctx{}
	return reply
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
		sub := Ctx{Args: args, DB: run.db, Client: run.client, Keyspace: run.c.Keyspace, Cmd: cmd}
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
