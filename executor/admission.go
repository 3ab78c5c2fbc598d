package executor

import (
	"strings"
	"time"

	"shardis/acl"
	"shardis/cmds"
	"shardis/server"
)

// Admit decides whether req may run: it returns Redis's error for the first check the command
// fails, in Redis's order, or "" when it may run. For FromClient it also records the refusal
// (rejected calls, error replies, errorstats, the ACL log), as Redis's rejectCommand does; the
// other paths answer the error as the command's own reply, which records it.
//
// FromClient's order: unknown command, arity, unknown subcommand, protected (DEBUG), NOAUTH,
// inside MULTI no_multi, ACL (NOPERM), the disk (MISCONF), RESP2 subscribed mode, loading
// (LOADING), and last a script past busy-reply-threshold (BUSY).
func (e *Executor) Admit(req *cmds.AdmitRequest) string {
	switch req.From {
	case cmds.FromExec:
		return e.admitQueued(req)
	case cmds.FromScript:
		return e.admitScripted(req)
	case cmds.FromReplication:
		return admitReplicated(req)
	}
	msg := e.admitClient(req)
	if msg == "" {
		return ""
	}
	cmd, cl := req.Cmd, req.Client
	if cl.Multi != nil { // a refusal inside MULTI dooms the transaction
		cl.Multi.Aborted = true
		if cmd != nil && cmd.Has(cmds.TraitRunsQueue) { // EXEC itself: discarded now
			cl.Multi = nil
			cl.Unwatch()
			cl.Publish()
			msg = execAbort(msg)
		}
	}
	if cmd != nil && !cmd.Runs() {
		cmd = nil // an unknown subcommand counts no call of its container
	}
	e.refused(cmd, msg)
	return msg
}

func (e *Executor) admitClient(req *cmds.AdmitRequest) string {
	cmd, args, cl, srv := req.Cmd, req.Args, req.Client, e.srv
	switch {
	case cmd == nil:
		return cmds.UnknownCommandError(args)
	case !cmd.CheckArity(len(args)):
		return cmds.ArityError(cmd)
	case !cmd.Runs(): // a container command with an unknown subcommand
		return cmds.UnknownSubcommandError(args)
	case cmd.Has(cmds.TraitProtected) && !cmds.ProtectedAllowed(srv.Config.Value(cmd.ProtectedSetting()), cl.Unix, cl.Addr):
		return cmds.ProtectedError(cmd)
	case !cl.Authed && !cmd.Has(cmds.FlagNoAuth) && srv.ACL.AuthRequired():
		return "NOAUTH Authentication required."
	case cl.Multi != nil && !cmd.Has(cmds.TraitTxControl) && cmd.Has(cmds.FlagNoMulti):
		cl.Touch(&cmd.Name, time.Now().UnixMilli())
		return "ERR Command not allowed inside a transaction"
	}
	// ACL: one load and a bool for a user with every permission (the default user).
	if u := cl.User(); u != nil && !u.Unrestricted() {
		ctx := acl.ContextToplevel
		if cl.Multi != nil {
			ctx = acl.ContextMulti
		}
		if why, pos := cmd.ACLCheck(u, args); why != acl.Allowed {
			cl.Touch(&cmd.Name, time.Now().UnixMilli()) // the log's client line names the command, as Redis's
			cmds.LogDenial(srv, cl, cmd, args, why, pos, ctx, true)
			return cmds.NoPermError(why, cmd)
		}
	}
	admission := srv.Admission() // loading, disk error: one atomic load
	switch {
	case admission&server.AdmitDiskError != 0 && deniedOnDiskError(cmd, cl):
		return server.DiskError
	case admission&server.AdmitNoReplicas != 0 && e.writesOnReplica(cmd, args, cl):
		return server.NoReplicasError
	case admission&server.AdmitReadOnly != 0 && e.writesOnReplica(cmd, args, cl):
		return server.ReadOnlyError
	case !cl.RESP3 && !cmd.Has(cmds.TraitSubscribedMode) && cl.PubSub():
		return "ERR Can't execute '" + cmd.Name + "': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / QUIT / RESET are allowed in this context"
	case admission&server.AdmitMasterDown != 0 && !cmd.Has(cmds.FlagStale):
		return server.MasterDownError
	case admission&server.AdmitLoading != 0 && !cmd.Has(cmds.FlagLoading):
		return server.LoadingError
	}
	// A script past busy-reply-threshold makes the server busy: as in Redis, every command
	// but those flagged allow_busy is refused, whatever shards it needs or none (one atomic
	// load when no script runs).
	if !cmd.Has(cmds.FlagAllowBusy) {
		if msg := srv.Busy.Error(); msg != "" {
			return msg
		}
	}
	return ""
}

// admitQueued checks a queued command again against the connection's ACL user at EXEC, as
// Redis does in case the user's permissions changed since it was queued (logged with context
// multi).
func (e *Executor) admitQueued(req *cmds.AdmitRequest) string {
	why, pos := aclCheck(req)
	if why == acl.Allowed {
		return ""
	}
	cmds.LogDenial(e.srv, req.Client, req.Cmd, req.Args, why, pos, acl.ContextMulti, false)
	reason := "no permission"
	switch why {
	case acl.DeniedCommand:
		reason = "no permission to execute the command or subcommand"
	case acl.DeniedKey:
		reason = "no permission to touch the specified keys"
	case acl.DeniedChannel:
		reason = "no permission to access one of the channels used as arguments"
	}
	return "NOPERM ACLs rules changed between the moment the transaction was accumulated and the EXEC call. This command is no longer allowed for the following reason: " + reason
}

// admitScripted is scriptCall's checks: the command, the ACL of the client running the
// script (logged with context lua), then, for a write, a read-only script and, for one that
// may add data (denyoom), the disk. Its
// errors carry their code (ERR, MISCONF), as luaPushError makes them.
func (e *Executor) admitScripted(req *cmds.AdmitRequest) string {
	cmd := req.Cmd
	switch {
	case cmd == nil || !cmd.Runs():
		return cmds.ErrScriptUnknown
	case !cmd.CheckArity(len(req.Args)):
		return cmds.ErrScriptArity
	case cmd.Has(cmds.FlagNoScript):
		return cmds.ErrScriptNoScript
	}
	if why, pos := aclCheck(req); why != acl.Allowed {
		cmds.LogDenial(e.srv, req.Client, cmd, req.Args, why, pos, acl.ContextLua, false)
		switch why {
		case acl.DeniedCommand:
			return "ERR The user executing the script can't run this command or subcommand"
		case acl.DeniedKey:
			return "ERR The user executing the script can't access at least one of the keys mentioned in the command arguments"
		case acl.DeniedChannel:
			return "ERR The user executing the script can't publish to the channel mentioned in the command"
		}
		return "ERR The user executing the script is lacking the permissions for the command"
	}
	// A read-only script may not run a command that may replicate either (PFCOUNT, PUBLISH):
	// Redis counts those as writes there.
	if req.ReadOnly && cmd.HasAny(cmds.FlagWrite|cmds.FlagMayReplicate) {
		return cmds.ErrScriptReadOnly
	}
	if cmd.IsWrite() {
		if a := e.srv.Admission(); a&server.AdmitReadOnly != 0 {
			return server.ReadOnlyError
		} else if a&server.AdmitNoReplicas != 0 {
			return server.NoReplicasError
		}
		if cmd.Has(cmds.FlagDenyOOM) && e.srv.Admission()&server.AdmitDiskError != 0 {
			return server.DiskError
		}
	}
	return ""
}

// admitReplicated checks only the command: a record names a command this build has, with the
// right number of arguments.
func admitReplicated(req *cmds.AdmitRequest) string {
	switch cmd := req.Cmd; {
	case cmd == nil:
		return cmds.UnknownCommandError(req.Args)
	case !cmd.Runs():
		return cmds.UnknownSubcommandError(req.Args)
	case !cmd.CheckArity(len(req.Args)):
		return cmds.ArityError(cmd)
	}
	return ""
}

// aclCheck checks req against its client's ACL user; a missing client or user, or one with
// every permission, is allowed.
func aclCheck(req *cmds.AdmitRequest) (acl.Reason, int) {
	if req.Client == nil {
		return acl.Allowed, 0
	}
	u := req.Client.User()
	if u == nil || u.Unrestricted() {
		return acl.Allowed, 0
	}
	return req.Cmd.ACLCheck(u, req.Args)
}

// writesOnReplica reports whether cl's call of cmd is a write a read-only replica, or a master
// short of good replicas, refuses: Redis's is_write_command, by the flags the call runs with (a script's shebang, a
// function's flags), or EXEC of a transaction holding a write.
func (e *Executor) writesOnReplica(cmd *cmds.Command, args [][]byte, cl *server.Client) bool {
	if cmd.CallFlagsOf == nil {
		if cmd.IsWrite() {
			return true
		}
	} else {
		ctx := cmds.Ctx{Args: args, DB: cl.DB, Client: cl, Keyspace: &e.keyspace, Cmd: cmd}
		if cmd.CallFlags(&ctx)&cmds.FlagWrite != 0 {
			return true
		}
	}
	return cmd.Has(cmds.TraitRunsQueue) && cl.Multi != nil && cl.Multi.MayWrite
}

// deniedOnDiskError reports whether cmd is refused while the disk guard turns writes away:
// as Redis's OOM check refuses only what may add data, the commands flagged denyoom, EXEC
// of a transaction holding one, and PING (TraitDeniedOnDiskError: Redis's MISCONF refuses
// it). What frees space (DEL, UNLINK, FLUSHDB, FLUSHALL, …) runs, so an operator can make
// room through the server; the store keeps RocksDB's own room from it (shard/disk.go).
func deniedOnDiskError(cmd *cmds.Command, cl *server.Client) bool {
	if cmd.HasAny(cmds.FlagDenyOOM | cmds.TraitDeniedOnDiskError) {
		return true
	}
	if !cmd.Has(cmds.TraitRunsQueue) || cl.Multi == nil || !cl.Multi.MayWrite {
		return false
	}
	for _, args := range cl.Multi.Commands {
		if q := cmds.Lookup(args); q != nil && q.Has(cmds.FlagDenyOOM) {
			return true
		}
	}
	return false
}

// Shards returns the shards cmd needs with args: none for ExecServer and ExecConn, every one
// for ExecAll, its route's, or its keys'.
func (e *Executor) Shards(cmd *cmds.Command, args [][]byte, db int, cl *server.Client, multi *server.Multi) []int {
	switch cmd.Exec {
	case cmds.ExecServer, cmds.ExecConn:
		return nil
	case cmds.ExecAll:
		return e.AllShards()
	}
	store := e.srv.Store
	if cmd.Route != nil {
		ctx := cmds.Ctx{Args: args, DB: db, Client: cl, Keyspace: &e.keyspace, Cmd: cmd, Multi: multi}
		return cmd.Route(&ctx, store.NumShards())
	}
	var ids []int
	for _, k := range cmd.KeyArgs(args) {
		ids = append(ids, store.ShardOf(k))
	}
	return ids
}

// OneShard returns the shard all keys of a keyed command live in (0 for a keyless one), or -1
// when they live in several or the command routes itself. scratch is reused for the keys.
func (e *Executor) OneShard(cmd *cmds.Command, args [][]byte, scratch *[][]byte) int {
	if cmd.Route != nil {
		return -1
	}
	keys := cmd.AppendKeyArgs((*scratch)[:0], args)
	id := e.shardOfAll(keys)
	// The scratch outlives the command: holding a key (a slice of the input) would keep the
	// whole input in memory, a 512 MB SET's value with it.
	clear(keys)
	*scratch = keys[:0]
	return id
}

// shardOfAll returns the shard all keys live in (0 for none), or -1 when they live in several.
func (e *Executor) shardOfAll(keys [][]byte) int {
	if len(keys) == 0 {
		return 0
	}
	store := e.srv.Store
	first := store.ShardOf(keys[0])
	for _, k := range keys[1:] {
		if store.ShardOf(k) != first {
			return -1
		}
	}
	return first
}

// AllShards returns every shard's id.
func (e *Executor) AllShards() []int {
	all := make([]int, e.srv.Store.NumShards())
	for i := range all {
		all[i] = i
	}
	return all
}

// execAbort is EXEC's reply when a refusal inside MULTI discarded its transaction.
func execAbort(msg string) string {
	return cmds.ExecAbortPrefix + ": " + strings.TrimPrefix(msg, "ERR ")
}
