package cmds

import (
	"slices"
	"strings"

	"shardis/cmdspec"
	"shardis/codec"
	"shardis/script"
	"shardis/server"
)

// Scripts: EVAL, EVALSHA, EVAL_RO, EVALSHA_RO and SCRIPT LOAD/EXISTS/FLUSH/HELP, as Redis 7.0
// has them.
//
// A script is a unit like EXEC: it routes to shards (scriptRoute)
// and runs holding them, so its writes commit in one WriteBatch across those shards (logged to
// the binlog as one unit) and no client sees part of it. redis.call runs each command through
// the executor in that transaction (script_call.go); the Lua engine is package script. A
// script holds its declared keys' shards; one that strays beyond them runs again holding
// every shard (TraitNarrowRoute).

func init() {
	Register(
		&Command{Name: "eval", Arity: -3,
			Flags: []string{"noscript", "stale", "skip_monitor", "may_replicate", "no_mandatory_keys", "movablekeys"},
			ACL:   []string{"slow", "scripting"}, Group: "scripting", Since: "2.6.0",
			Summary:    "Execute a Lua script server side",
			Complexity: "Depends on the script that is executed.",
			Syntax:     "script numkeys [key [key ...]] [arg [arg ...]]",
			KeySpecs: []cmdspec.KeySpec{{Flags: cmdspec.RW | cmdspec.Access | cmdspec.Update,
				Notes: "We cannot tell how the keys will be used so we assume the worst, RW and UPDATE",
				Begin: cmdspec.Index(2), Find: cmdspec.KeyNum(0, 1, 1)}},
			Traits: TraitNarrowRoute, Keys: scriptKeys, Route: scriptRoute, CallFlagsOf: scriptCallFlags,
			RunServer: evalCommand},
		&Command{Name: "evalsha", Arity: -3,
			Flags: []string{"noscript", "stale", "skip_monitor", "may_replicate", "no_mandatory_keys", "movablekeys"},
			ACL:   []string{"slow", "scripting"}, Group: "scripting", Since: "2.6.0",
			Summary:    "Execute a Lua script server side",
			Complexity: "Depends on the script that is executed.",
			Syntax:     "sha1 numkeys [key [key ...]] [arg [arg ...]]",
			KeySpecs:   []cmdspec.KeySpec{{Flags: cmdspec.RW | cmdspec.Access | cmdspec.Update, Begin: cmdspec.Index(2), Find: cmdspec.KeyNum(0, 1, 1)}},
			Traits:     TraitNarrowRoute, Keys: scriptKeys, Route: scriptRoute, CallFlagsOf: scriptCallFlags,
			RunServer: evalCommand},
		&Command{Name: "eval_ro", Arity: -3,
			Flags: []string{"readonly", "noscript", "stale", "skip_monitor", "no_mandatory_keys", "movablekeys"},
			ACL:   []string{"slow", "scripting"}, Group: "scripting", Since: "7.0.0",
			Summary:    "Execute a read-only Lua script server side",
			Complexity: "Depends on the script that is executed.",
			Syntax:     "script numkeys [key [key ...]] [arg [arg ...]]",
			KeySpecs: []cmdspec.KeySpec{{Flags: cmdspec.RO | cmdspec.Access,
				Notes: "We cannot tell how the keys will be used so we assume the worst, RO and ACCESS",
				Begin: cmdspec.Index(2), Find: cmdspec.KeyNum(0, 1, 1)}},
			Traits: TraitNotTracked | TraitNarrowRoute, Keys: scriptKeys, Route: scriptRoute, CallFlagsOf: scriptCallFlags,
			RunServer: evalCommand},
		&Command{Name: "evalsha_ro", Arity: -3,
			Flags: []string{"readonly", "noscript", "stale", "skip_monitor", "no_mandatory_keys", "movablekeys"},
			ACL:   []string{"slow", "scripting"}, Group: "scripting", Since: "7.0.0",
			Summary:    "Execute a read-only Lua script server side",
			Complexity: "Depends on the script that is executed.",
			Syntax:     "sha1 numkeys [key [key ...]] [arg [arg ...]]",
			KeySpecs:   []cmdspec.KeySpec{{Flags: cmdspec.RO | cmdspec.Access, Begin: cmdspec.Index(2), Find: cmdspec.KeyNum(0, 1, 1)}},
			Traits:     TraitNotTracked | TraitNarrowRoute, Keys: scriptKeys, Route: scriptRoute,
			CallFlagsOf: scriptCallFlags, RunServer: evalCommand},
		&Command{Name: "script", Arity: -2, ACL: []string{"slow"}, Group: "scripting", Since: "2.6.0",
			Summary: "A container for Lua scripts management commands", Complexity: "Depends on subcommand.",
			Exec: ExecServer,
			Subs: map[string]*Command{
				"exists": {Arity: -3, Flags: []string{"noscript"}, ACL: []string{"slow", "scripting"}, Since: "2.6.0",
					Summary:    "Check existence of scripts in the script cache.",
					Complexity: "O(N) with N being the number of scripts to check (so checking a single script is an O(1) operation).",
					Syntax:     "sha1 [sha1 ...]",
					Tips:       []string{"request_policy:all_shards", "response_policy:agg_logical_and"},
					Exec:       ExecServer, Run: scriptExists},
				"flush": {Arity: -2, Flags: []string{"noscript"}, ACL: []string{"slow", "scripting"}, Since: "2.6.0",
					Summary:    "Remove all the scripts from the script cache.",
					Complexity: "O(N) with N being the number of scripts in cache", Syntax: "[ASYNC | SYNC]",
					Tips: []string{"request_policy:all_nodes", "response_policy:all_succeeded"}, Exec: ExecServer,
					Run: scriptFlush},
				"help": {Arity: 2, Flags: []string{"loading", "stale"}, ACL: []string{"slow", "scripting"}, Since: "5.0.0",
					Summary: "Show helpful text about the different subcommands", Complexity: "O(1)",
					Exec: ExecServer, Run: scriptHelp},
				"kill": {Arity: 2, Flags: []string{"noscript", "allow_busy"}, ACL: []string{"slow", "scripting"},
					Since: "2.6.0", Summary: "Kill the script currently in execution.", Complexity: "O(1)",
					Tips: []string{"request_policy:all_shards", "response_policy:one_succeeded"}, Exec: ExecServer,
					RunServer: scriptKill},
				"load": {Arity: 3, Flags: []string{"noscript", "stale"}, ACL: []string{"slow", "scripting"}, Since: "2.6.0",
					Summary:    "Load the specified Lua script into the script cache.",
					Complexity: "O(N) with N being the length in bytes of the script body.", Syntax: "script",
					Tips: []string{"request_policy:all_nodes", "response_policy:all_succeeded"}, Exec: ExecServer,
					Run: scriptLoad},
			}},
	)
}

// scriptNumKeys reads EVAL's numkeys; ok is false when it is not a valid count for args.
func scriptNumKeys(args [][]byte) (int, string) {
	n, ok := codec.ParseInt(args[2])
	switch {
	case !ok:
		return 0, "ERR value is not an integer or out of range"
	case n < 0:
		return 0, "ERR Number of keys can't be negative"
	case n > int64(len(args)-3):
		return 0, "ERR Number of keys can't be greater than number of args"
	}
	return int(n), ""
}

// scriptKeys returns EVAL's declared keys (none when numkeys is invalid).
func scriptKeys(args [][]byte) [][]byte {
	if len(args) < 3 {
		return nil
	}
	n, errText := scriptNumKeys(args)
	if errText != "" {
		return nil
	}
	return args[3 : 3+n]
}

// scriptRoute returns the shards a script holds: those of the keys it declares (shard 0 when
// it declares none), or every shard for a script that strayed before (wasWide) and inside
// MULTI (EXEC cannot run its queue again). A script may touch keys it did not declare (Redis
// standalone allows it, and client libraries do it), and which ones is only known as it runs:
// such a run strays (Ctx.Strayed) and runs again holding every shard (docs/ARCHITECTURE.md,
// Scripts). nil (no shard: the command only replies an error) when numkeys is invalid.
func scriptRoute(c *Ctx, nShards int) []int {
	if len(c.Args) < 3 {
		return nil
	}
	n, errText := scriptNumKeys(c.Args)
	if errText != "" {
		return nil
	}
	return narrowRoute(c, c.Args[3:3+n], nShards, wasWide(c))
}

// scripts is the server's script cache (EVAL, EVALSHA, SCRIPT LOAD/EXISTS/FLUSH).
var scripts = script.NewCache(script.DefaultCacheBytes)

// wasWide reports whether EVAL's script strayed in an earlier run (script.Script.Wide).
func wasWide(c *Ctx) bool {
	var s *script.Script
	if c.Cmd != nil && strings.HasPrefix(c.Cmd.Name, "evalsha") {
		s = scripts.Get(c.Args[1])
	} else {
		s = scripts.Peek(c.Args[1])
	}
	return s != nil && s.Wide()
}

// narrowRoute returns the shards of keys, or every shard when wide or inside MULTI.
func narrowRoute(c *Ctx, keys [][]byte, nShards int, wide bool) []int {
	if wide || c.InTransaction || c.Keyspace == nil || c.Keyspace.Store == nil || nShards == 1 {
		ids := make([]int, nShards)
		for i := range ids {
			ids[i] = i
		}
		return ids
	}
	if len(keys) == 0 {
		return []int{0}
	}
	ids := make([]int, 0, len(keys))
	for _, k := range keys {
		ids = append(ids, c.Keyspace.Store.ShardOf(k))
	}
	slices.Sort(ids)
	return slices.Compact(ids)
}

// scriptCallFlags is the flags a call of EVAL, EVALSHA or their _RO forms runs with, as
// Redis 7.0's evalGetCommandFlags: a script with a shebang (the cached one, or EVAL's body)
// runs with the flags it declares; one without (or unknown to EVALSHA, or with a bad
// shebang) with the command's.
func scriptCallFlags(c *Ctx) Flag {
	cmd := c.Cmd
	if len(c.Args) < 2 {
		return cmd.flags
	}
	var sf script.Flags
	if strings.HasPrefix(cmd.Name, "evalsha") {
		s := scripts.Get(c.Args[1])
		if s == nil {
			return cmd.flags
		}
		sf = s.Flags()
	} else {
		var ok bool
		if sf, ok = script.ShebangFlags(c.Args[1]); !ok {
			return cmd.flags
		}
	}
	if sf&script.FlagShebang == 0 {
		return cmd.flags
	}
	return scriptFlagsToCmdFlags(cmd.flags, sf)
}

// scriptFlagsToCmdFlags is Redis's: a script's declared flags replace the command's write,
// denyoom, stale and may_replicate.
func scriptFlagsToCmdFlags(f Flag, sf script.Flags) Flag {
	f &^= FlagStale | FlagDenyOOM | FlagWrite | FlagMayReplicate
	if sf&(script.FlagAllowOOM|script.FlagNoWrites) == 0 {
		f |= FlagDenyOOM
	}
	if sf&script.FlagNoWrites == 0 {
		f |= FlagWrite
	}
	if sf&script.FlagAllowStale != 0 {
		f |= FlagStale
	}
	return f
}

// evalCommand is EVAL, EVALSHA, EVAL_RO and EVALSHA_RO.
func evalCommand(c *Ctx, srv *server.Server) {
	n, errText := scriptNumKeys(c.Args)
	if errText != "" {
		c.Error(errText)
		return
	}
	var s *script.Script
	bySHA := strings.HasPrefix(c.Cmd.Name, "evalsha")
	if bySHA {
		if s = scripts.Get(c.Args[1]); s == nil {
			c.Error("NOSCRIPT No matching script. Please use EVAL.")
			return
		}
	} else {
		var err error
		if s, err = scripts.Load(c.Args[1]); err != nil {
			c.Error(err.Error())
			return
		}
	}
	roCommand := c.Cmd.IsReadOnly()
	if s.Flags()&script.FlagShebang != 0 && s.Flags()&script.FlagNoWrites == 0 && roCommand {
		c.Error("ERR Can not execute a script with write flag using *_ro command.")
		return
	}
	readOnly := roCommand || s.Flags()&script.FlagNoWrites != 0
	runScript(c, srv, s, c.Args[3:3+n], c.Args[3+n:], readOnly)
}

func scriptLoad(c *Ctx) {
	s, err := scripts.Load(c.Args[2])
	if err != nil {
		c.Error(err.Error())
		return
	}
	c.W.BulkString(s.SHA())
}

func scriptExists(c *Ctx) {
	c.W.ArrayLen(len(c.Args) - 2)
	for _, sha := range c.Args[2:] {
		if scripts.Get(sha) != nil {
			c.W.Int(1)
		} else {
			c.W.Int(0)
		}
	}
}

func scriptFlush(c *Ctx) {
	switch {
	case len(c.Args) == 2:
	case len(c.Args) == 3 && (strings.EqualFold(string(c.Args[2]), "sync") || strings.EqualFold(string(c.Args[2]), "async")):
	default:
		c.Error("ERR SCRIPT FLUSH only support SYNC|ASYNC option")
		return
	}
	scripts.Flush()
	c.W.OK()
}

func scriptHelp(c *Ctx) {
	HelpReply(c,
		"DEBUG (YES|SYNC|NO)",
		"    Set the debug mode for subsequent scripts executed.",
		"EXISTS <sha1> [<sha1> ...]",
		"    Return information about the existence of the scripts in the script cache.",
		"FLUSH [ASYNC|SYNC]",
		"    Flush the Lua scripts cache. Very dangerous on replicas.",
		"    When called without the optional mode argument, the behavior is determined by the",
		"    lazyfree-lazy-user-flush configuration directive. Valid modes are:",
		"    * ASYNC: Asynchronously flush the scripts cache.",
		"    * SYNC: Synchronously flush the scripts cache.",
		"KILL",
		"    Kill the currently executing Lua script.",
		"LOAD <script>",
		"    Load a script into the scripts cache without executing it.",
	)
}

// ScriptCache returns the scripts EVAL and SCRIPT LOAD keep (INFO and MEMORY STATS read its
// size).
func ScriptCache() *script.Cache { return scripts }
