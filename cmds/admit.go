package cmds

import "shardis/server"

// Every path that runs a command asks the executor's Admit first (Runner.Admit for the paths
// in this package: EXEC's queued commands, a script's redis.call). The request's types live
// here, where both sides see them.

// Caller says which path asks to run a command. Every path goes through the executor's Admit;
// the checks that apply and the texts of their errors depend on the path, as they do in
// Redis, where processCommand, execCommand and scriptCall each check a part.
type Caller uint8

const (
	// FromClient: a connection's own command, run at once or queued inside MULTI
	// (processCommand's checks).
	FromClient Caller = iota
	// FromExec: a command EXEC runs from its queue. It passed FromClient's checks when it
	// was queued; only the ACL is checked again, in case it changed since (execCommand).
	FromExec
	// FromScript: a command a script runs with redis.call or redis.pcall (scriptCall).
	FromScript
	// FromReplication: a binlog record replayed at start-up or applied by a replica. The
	// link is trusted (Redis's master client runs as a superuser): only the command itself
	// is checked.
	FromReplication
)

// AdmitRequest is a command asking to run. The arguments alias the caller's buffers: the
// executor's Admit keeps none of them.
type AdmitRequest struct {
	From   Caller
	Cmd    *Command // nil: args[0] names no command
	Args   [][]byte
	Client *server.Client // nil for FromReplication and internal callers
	// ReadOnly says the script running the command declared itself read-only (EVAL_RO,
	// FCALL_RO, a no-writes shebang or function flag): FromScript refuses its writes.
	ReadOnly bool
}

// Redis's errors for what redis.call refuses before running a command (the script sees the
// text after the code).
const (
	ErrScriptUnknown  = "ERR Unknown Redis command called from script"
	ErrScriptArity    = "ERR Wrong number of args calling Redis command from script"
	ErrScriptNoScript = "ERR This Redis command is not allowed from script"
	ErrScriptReadOnly = "ERR Write commands are not allowed from read-only scripts."
)
