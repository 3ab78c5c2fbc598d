package cmds

import (
	"net"
	"strings"
)

// Flag is one bit of what a command declares about itself. The reactor and the executor decide
// by these bits, never by a command's name: Redis's flags (the ones COMMAND INFO shows, parsed
// from Command.Flags at Register) and shardis's own traits (Command.Traits, never shown).
type Flag uint64

// Redis 7.0's command flags.
const (
	FlagWrite Flag = 1 << iota
	FlagReadonly
	FlagDenyOOM
	FlagAdmin
	FlagPubSub
	FlagNoScript
	FlagBlocking
	FlagLoading
	FlagStale
	FlagSkipMonitor
	FlagSkipSlowlog
	FlagFast
	FlagNoAuth
	FlagMayReplicate
	FlagNoMandatoryKeys
	FlagNoMulti
	FlagMovableKeys
	FlagAllowBusy
	FlagNoAsyncLoading
	FlagSentinel
	FlagOnlySentinel
	FlagAsking // allowed on an importing slot of a cluster (RESTORE-ASKING)

	// shardis's traits (Command.Traits), which COMMAND does not show.

	// TraitTxControl: runs at once inside MULTI instead of being queued (MULTI, EXEC,
	// DISCARD, WATCH, QUIT, RESET).
	TraitTxControl
	// TraitAlwaysReplies: answers even under CLIENT REPLY OFF or SKIP (CLIENT REPLY, RESET).
	TraitAlwaysReplies
	// TraitReadsUndeclaredKeys: may read keys it does not declare (SORT_RO's BY and GET), so
	// it is never answered from a one-shard view in the event loop.
	TraitReadsUndeclaredKeys
	// TraitTakesQueue: ends the connection's MULTI (EXEC, DISCARD). The reactor hands it the
	// queued transaction in Ctx.Multi when it is dispatched, and it runs in order with the
	// rest of the pipeline.
	TraitTakesQueue
	// TraitRunsQueue: runs the transaction it took (EXEC). CLIENT PAUSE WRITE holds it back
	// when a queued command may write; a refusal inside MULTI discards the transaction
	// (EXECABORT); the executor feeds MONITOR with each queued command as it runs, then
	// with it.
	TraitRunsQueue
	// TraitAfterPending: dispatched only once every earlier command of the pipeline ran, as
	// it resets state they may still use (RESET drops the WATCHes of a WATCH still running
	// in its shard; AUTH, HELLO and ACL's subcommands change or read the users, which a
	// script, EXEC or CONFIG SET requirepass still pending uses or changes).
	TraitAfterPending
	// TraitSubscribedMode: allowed while a RESP2 connection is in subscribed mode ((P|S)
	// SUBSCRIBE, (P|S)UNSUBSCRIBE, PING, QUIT, RESET); the reactor refuses the others.
	TraitSubscribedMode
	// TraitLoopWhenIdle: an ExecServer command that the event loop may run at once when
	// nothing before it in the pipeline waits for a shard (PUBLISH): it then runs exactly
	// where it would run in order, without a coordinator goroutine.
	TraitLoopWhenIdle
	// TraitNotTracked: a read-only command whose own keys CLIENT TRACKING does not remember
	// (EVAL_RO, EVALSHA_RO; the reads their script runs remember the script's keys).
	TraitNotTracked
	// TraitKeepsCaching: CLIENT CACHING's flag survives it (every CLIENT subcommand, as in
	// Redis); any other command outside MULTI uses the flag up.
	TraitKeepsCaching
	// TraitNarrowRoute: its Route is a guess (a script's declared keys' shards), and while it
	// runs it may find it needs more: it then rolls back its writes (shard.Savepoint), having
	// done nothing outside its transaction, sets Ctx.Strayed, and runs again holding every
	// shard, with the commands after it in its step (EVAL, FCALL and their _RO forms). The
	// planner keeps the steps it is in such that none of those has run yet: in a shard's step
	// only commands of the same shard follow it; a coordinated one shares its step only with
	// commands of its kind.
	TraitNarrowRoute
	// TraitUnconfined: an ExecServer command whose effect is not confined to the shards its
	// caller holds: it reads every shard's state (DBSIZE, INFO) or acts at once, outside the
	// transaction (PUBLISH). A script holding only its keys' shards strays before running it.
	TraitUnconfined
	// TraitOwnStep: a one-shard command that changes what commands of other shards read
	// beside their keys (FUNCTION LOAD, DELETE, FLUSH and RESTORE change the libraries every
	// FCALL calls): it runs in a step of its own, after what precedes it in the pipeline and
	// before what follows, where a one-shard command would run beside other shards' ones.
	TraitOwnStep
	// TraitDeniedOnDiskError: refused with MISCONF while the disk is full although it does
	// not write (PING, as Redis 7.0 refuses it with the write commands).
	TraitDeniedOnDiskError
	// TraitNoTouch: its key lookups record no access (Redis's LOOKUP_NOTOUCH: EXISTS, TYPE,
	// TTL, OBJECT, MEMORY USAGE, …), so OBJECT IDLETIME and FREQ are left as they were.
	TraitNoTouch
	// TraitAlwaysTouches: records its accesses even for a CLIENT NO-TOUCH client (TOUCH).
	TraitAlwaysTouches
	// TraitProtected: refused unless the setting the command names (Command.ProtectedBy:
	// enable-debug-command, enable-module-command) allows the client (Redis's CMD_PROTECTED:
	// DEBUG, MODULE LOAD/LOADEX/UNLOAD).
	TraitProtected
	// TraitRepliesWithPushes: its reply is push messages ((P|S)SUBSCRIBE's and
	// (P|S)UNSUBSCRIBE's confirmations), which Redis sends whatever CLIENT REPLY says; its
	// refusals stay silent under OFF or SKIP, and it uses up a SKIP.
	TraitRepliesWithPushes
	// TraitTriesView: a keyed write that often changes nothing (SADD of a member already
	// there, ZADD of a member at its score, SREM or HDEL of a missing one): the event loop
	// tries it on a read-only view of its shard's committed state, as a read, and it goes to
	// its shard the moment it would write (its first write fails the view). Only for commands
	// whose no-op Redis neither propagates nor announces (no event, no WATCH touch, no dirty):
	// a view writes nothing, logs nothing and marks no watcher.
	TraitTriesView
)

// flagNames maps Redis's flag names to bits.
var flagNames = map[string]Flag{
	"write":             FlagWrite,
	"readonly":          FlagReadonly,
	"denyoom":           FlagDenyOOM,
	"admin":             FlagAdmin,
	"pubsub":            FlagPubSub,
	"noscript":          FlagNoScript,
	"blocking":          FlagBlocking,
	"loading":           FlagLoading,
	"stale":             FlagStale,
	"skip_monitor":      FlagSkipMonitor,
	"skip_slowlog":      FlagSkipSlowlog,
	"fast":              FlagFast,
	"no_auth":           FlagNoAuth,
	"may_replicate":     FlagMayReplicate,
	"no_mandatory_keys": FlagNoMandatoryKeys,
	"no_multi":          FlagNoMulti,
	"movablekeys":       FlagMovableKeys,
	"allow_busy":        FlagAllowBusy,
	"no_async_loading":  FlagNoAsyncLoading,
	"sentinel":          FlagSentinel,
	"only_sentinel":     FlagOnlySentinel,
	"asking":            FlagAsking,
}

// parseFlags returns the bits of Redis flag names; a name it does not know is a bug in the
// table, caught when the package loads.
func parseFlags(cmdName string, names []string) Flag {
	var f Flag
	for _, n := range names {
		bit, ok := flagNames[n]
		if !ok {
			panic("cmds: command " + cmdName + " declares unknown flag " + n)
		}
		f |= bit
	}
	return f
}

// Has reports whether the command declares every bit of f.
func (cmd *Command) Has(f Flag) bool { return cmd.flags&f == f }

// Touches reports whether the command's key lookups record an access, for a client that
// set CLIENT NO-TOUCH (clientNoTouch) or not.
func (cmd *Command) Touches(clientNoTouch bool) bool {
	return !cmd.Has(TraitNoTouch) && (!clientNoTouch || cmd.Has(TraitAlwaysTouches))
}

// ProtectedSetting returns the setting that allows the protected command (TraitProtected).
func (cmd *Command) ProtectedSetting() string {
	if cmd.ProtectedBy != "" {
		return cmd.ProtectedBy
	}
	return "enable-debug-command"
}

// ProtectedAllowed reports whether a protected command (TraitProtected) may run for a client
// under its setting (Command.ProtectedSetting): "yes" for every client, "local" for one on the unix
// socket or on 127.0.0.1 / ::1 (Redis's islocalClient), "no" for none.
func ProtectedAllowed(setting string, unix bool, addr string) bool {
	switch setting {
	case "yes":
		return true
	case "local":
		host, _, err := net.SplitHostPort(addr)
		return unix || err == nil && (host == "127.0.0.1" || host == "::1")
	}
	return false
}

// ProtectedError is Redis's refusal of a protected command.
func ProtectedError(cmd *Command) string {
	name := cmd.Name
	if cmd.parent != nil {
		name = cmd.parent.Name // "MODULE command not allowed", for MODULE LOAD
	}
	return "ERR " + strings.ToUpper(name) + " command not allowed. If the " + cmd.ProtectedSetting() + " option is set to \"local\", " +
		"you can run it from a local connection, otherwise you need to set this option in the configuration file, " +
		"and then restart the server."
}

// HasAny reports whether the command declares any bit of f.
func (cmd *Command) HasAny(f Flag) bool { return cmd.flags&f != 0 }

// CallFlags returns the flags one call of the command runs with, c holding its arguments
// (Args, Keyspace): the declared ones, or those its CallFlagsOf makes of them (a script's
// shebang, a function's flags: Redis's getCommandFlags).
func (cmd *Command) CallFlags(c *Ctx) Flag {
	if cmd.CallFlagsOf != nil {
		return cmd.CallFlagsOf(c)
	}
	return cmd.flags
}

// MayWrite reports whether the call in c may change data or be replicated (Redis's write or
// may_replicate flag): CLIENT PAUSE WRITE holds such calls back.
func (cmd *Command) MayWrite(c *Ctx) bool {
	return cmd.CallFlags(c)&(FlagWrite|FlagMayReplicate) != 0
}
