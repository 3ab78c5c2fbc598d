package cmds

import (
	"bytes"
	"strings"
	"time"

	"shardis/cmdspec"
	"shardis/codec"
	"shardis/internal/glob"
	"shardis/script"
	"shardis/server"
)

// FUNCTION LOAD/DELETE/FLUSH/LIST/DUMP/RESTORE/STATS/KILL/HELP and FCALL, FCALL_RO, as Redis
// 7.0 has them. The libraries, their Lua states and the payload of DUMP and RESTORE are the
// engine's (script.Functions); function_store.go finds a store's engine and keeps its
// libraries on disk.
//
// The commands that change libraries route to shard 0 (functionRoute), which keeps the
// libraries' code under its state keys: they write it in their transaction and log what a
// replica must apply (FUNCTION LOAD REPLACE <code>, FUNCTION DELETE <name>, FUNCTION FLUSH),
// so the change, on disk and in the binlog, commits in one WriteBatch. FCALL routes as EVAL
// does (its declared keys' shards, every shard once it strayed; see scriptRoute).

func init() {
	Register(
		&Command{Name: "fcall", Arity: -3,
			Flags: []string{"noscript", "stale", "skip_monitor", "may_replicate", "no_mandatory_keys", "movablekeys"},
			ACL:   []string{"slow", "scripting"}, Group: "scripting", Since: "7.0.0",
			Summary: "Invoke a function", Complexity: "Depends on the function that is executed.",
			Syntax: "function numkeys [key [key ...]] [arg [arg ...]]",
			KeySpecs: []cmdspec.KeySpec{{Flags: cmdspec.RW | cmdspec.Access | cmdspec.Update,
				Notes: "We cannot tell how the keys will be used so we assume the worst, RW and UPDATE",
				Begin: cmdspec.Index(2), Find: cmdspec.KeyNum(0, 1, 1)}},
			Traits: TraitNarrowRoute, Keys: fcallKeys, Route: fcallRoute, CallFlagsOf: fcallCallFlags,
			RunServer: fcallCommand},
		&Command{Name: "fcall_ro", Arity: -3,
			Flags: []string{"readonly", "noscript", "stale", "skip_monitor", "no_mandatory_keys", "movablekeys"},
			ACL:   []string{"slow", "scripting"}, Group: "scripting", Since: "7.0.0",
			Summary: "Invoke a read-only function", Complexity: "Depends on the function that is executed.",
			Syntax: "function numkeys [key [key ...]] [arg [arg ...]]",
			KeySpecs: []cmdspec.KeySpec{{Flags: cmdspec.RO | cmdspec.Access,
				Notes: "We cannot tell how the keys will be used so we assume the worst, RO and ACCESS",
				Begin: cmdspec.Index(2), Find: cmdspec.KeyNum(0, 1, 1)}},
			Traits: TraitNarrowRoute, Keys: fcallKeys, Route: fcallRoute, CallFlagsOf: fcallCallFlags,
			RunServer: fcallCommand},
		&Command{Name: "function", Arity: -2, ACL: []string{"slow"}, Group: "scripting", Since: "7.0.0",
			Summary: "A container for function commands", Complexity: "Depends on subcommand.",
			Exec: ExecServer,
			// Changes (ExecKeyed, TraitOwnStep) go to shard 0, which keeps the libraries;
			// reads (ExecServer) run outside the shards.
			Subs: map[string]*Command{
				"delete": {Arity: 3, Flags: []string{"write", "noscript"}, ACL: []string{"write", "slow", "scripting"},
					Since: "7.0.0", Summary: "Delete a function by name", Complexity: "O(1)",
					Syntax: "library-name",
					Tips:   []string{"request_policy:all_shards", "response_policy:all_succeeded"},
					Traits: TraitOwnStep, Route: functionRoute, Run: functionDelete},
				"dump": {Arity: 2, Flags: []string{"noscript"}, ACL: []string{"slow", "scripting"}, Since: "7.0.0",
					Summary:    "Dump all functions into a serialized binary payload",
					Complexity: "O(N) where N is the number of functions", Exec: ExecServer, Run: functionDump},
				"flush": {Arity: -2, Flags: []string{"write", "noscript"}, ACL: []string{"write", "slow", "scripting"},
					Since: "7.0.0", Summary: "Deleting all functions",
					Complexity: "O(N) where N is the number of functions deleted", Syntax: "[ASYNC | SYNC]",
					Tips:   []string{"request_policy:all_shards", "response_policy:all_succeeded"},
					Traits: TraitOwnStep, Route: functionRoute, Run: functionFlush},
				"help": {Arity: 2, Flags: []string{"loading", "stale"}, ACL: []string{"slow", "scripting"}, Since: "7.0.0",
					Summary: "Show helpful text about the different subcommands", Complexity: "O(1)",
					Exec: ExecServer, Run: functionHelp},
				"kill": {Arity: 2, Flags: []string{"noscript", "allow_busy"}, ACL: []string{"slow", "scripting"},
					Since: "7.0.0", Summary: "Kill the function currently in execution.", Complexity: "O(1)",
					Tips: []string{"request_policy:all_shards", "response_policy:one_succeeded"}, Exec: ExecServer,
					RunServer: functionKill},
				"list": {Arity: -2, Flags: []string{"noscript"}, ACL: []string{"slow", "scripting"}, Since: "7.0.0",
					Summary:    "List information about all the functions",
					Complexity: "O(N) where N is the number of functions",
					Syntax:     "[LIBRARYNAME library-name-pattern] [WITHCODE]",
					Tips:       []string{"nondeterministic_output_order"}, Exec: ExecServer, Run: functionList},
				"load": {Arity: -3, Flags: []string{"write", "denyoom", "noscript"},
					ACL: []string{"write", "slow", "scripting"}, Since: "7.0.0",
					Summary:    "Create a function with the given arguments (name, code, description)",
					Complexity: "O(1) (considering compilation time is redundant)",
					Syntax:     "[REPLACE] function-code",
					Tips:       []string{"request_policy:all_shards", "response_policy:all_succeeded"},
					Traits:     TraitOwnStep, Route: functionRoute, Run: functionLoad},
				"restore": {Arity: -3, Flags: []string{"write", "denyoom", "noscript"},
					ACL: []string{"write", "slow", "scripting"}, Since: "7.0.0",
					Summary:    "Restore all the functions on the given payload",
					Complexity: "O(N) where N is the number of functions on the payload",
					Syntax:     "serialized-value [FLUSH | APPEND | REPLACE]",
					Tips:       []string{"request_policy:all_shards", "response_policy:all_succeeded"},
					Traits:     TraitOwnStep, Route: functionRoute, Run: functionRestore},
				"stats": {Arity: 2, Flags: []string{"noscript", "allow_busy"}, ACL: []string{"slow", "scripting"},
					Since:      "7.0.0",
					Summary:    "Return information about the function currently running (name, description, duration)",
					Complexity: "O(1)",
					Tips:       []string{"nondeterministic_output", "request_policy:all_shards", "response_policy:special"},
					Exec:       ExecServer, RunServer: functionStats},
			}},
	)
}

// functionStateShard is the shard that keeps the libraries.
const functionStateShard = 0

// functionRoute sends FUNCTION LOAD, DELETE, FLUSH and RESTORE to the shard that keeps the
// libraries.
func functionRoute(*Ctx, int) []int { return []int{functionStateShard} }

// fcallNumKeys reads FCALL's numkeys; the error is Redis's text.
func fcallNumKeys(args [][]byte) (int, string) {
	n, ok := codec.ParseInt(args[2])
	switch {
	case !ok:
		return 0, "ERR Bad number of keys provided"
	case n > int64(len(args)-3):
		return 0, "ERR Number of keys can't be greater than number of args"
	case n < 0:
		return 0, "ERR Number of keys can't be negative"
	}
	return int(n), ""
}

func fcallKeys(args [][]byte) [][]byte {
	if len(args) < 3 {
		return nil
	}
	n, errText := fcallNumKeys(args)
	if errText != "" {
		return nil
	}
	return args[3 : 3+n]
}

// fcallRoute is scriptRoute for FCALL: the declared keys' shards, every shard for a function
// that strayed before (script.Function.Wide), or none when numkeys is invalid (the command then
// only replies an error).
func fcallRoute(c *Ctx, nShards int) []int {
	if len(c.Args) < 3 {
		return nil
	}
	n, errText := fcallNumKeys(c.Args)
	if errText != "" {
		return nil
	}
	wide := false
	if c.Tx != nil || c.Keyspace != nil && c.Keyspace.Store != nil {
		f := functionsOf(c).Current().Lookup(c.Args[1])
		wide = f != nil && f.Wide()
	}
	return narrowRoute(c, c.Args[3:3+n], nShards, wide)
}

// fcallCallFlags is the flags a call of FCALL or FCALL_RO runs with, as Redis 7.0's
// fcallGetCommandFlags: a known function's declared flags replace the command's.
func fcallCallFlags(c *Ctx) Flag {
	if len(c.Args) < 2 || c.Keyspace == nil || c.Keyspace.Store == nil || !c.Keyspace.Store.Opened() {
		return c.Cmd.flags // loading: the libraries are not read yet (nor cached empty)
	}
	f := functionsOf(c).Current().Lookup(c.Args[1])
	if f == nil {
		return c.Cmd.flags
	}
	return scriptFlagsToCmdFlags(c.Cmd.flags, f.Flags())
}

// fcallCommand is FCALL and FCALL_RO.
func fcallCommand(c *Ctx, srv *server.Server) {
	eng := functionsOf(c)
	set := eng.Current()
	f := set.Lookup(c.Args[1])
	if f == nil {
		c.Error("ERR Function not found")
		return
	}
	n, errText := fcallNumKeys(c.Args)
	if errText != "" {
		c.Error(errText)
		return
	}
	ro := c.Cmd.IsReadOnly()
	if ro && f.Flags()&script.FlagNoWrites == 0 {
		c.Error("ERR Can not execute a script with write flag using *_ro command.")
		return
	}
	r := eng.TakeRunner(set)
	defer eng.PutRunner(r)
	inv, ok := r.Function(f, c.Args[3:3+n], c.Args[3+n:])
	if !ok { // its library failed to load in this state (logged)
		c.Error("ERR Function not found")
		return
	}
	runLua(c, srv, inv, ro || f.Flags()&script.FlagNoWrites != 0)
}

// functionLoad is FUNCTION LOAD [REPLACE] code.
func functionLoad(c *Ctx) {
	replace := false
	i := 2
	for ; i < len(c.Args)-1; i++ {
		if !strings.EqualFold(string(c.Args[i]), "replace") {
			c.Error("ERR Unknown option given: " + string(c.Args[i]))
			return
		}
		replace = true
	}
	if i >= len(c.Args) {
		c.Error("ERR Function code is missing")
		return
	}
	code := string(c.Args[i])
	timeout := script.LoadTimeout
	if c.Client == nil { // binlog replay: what the master accepted is applied whatever it takes
		timeout = 0
	}
	lib, err := functionsOf(c).Load(code, replace, timeout, func(lib *script.Library) {
		if c.Tx != nil {
			c.Tx.PutState(functionStateShard, libraryStateName(lib.Name()), []byte(code))
			logFunctionLoad(c, code)
		}
	})
	if err != nil {
		c.Error(err.Error())
		return
	}
	c.W.BulkString(lib.Name())
}

func libraryStateName(name string) []byte {
	return append(bytes.Clone(functionStatePrefix), name...)
}

func logFunctionLoad(c *Ctx, code string) {
	c.Tx.LogShard(functionStateShard, 0, []byte("FUNCTION"), []byte("LOAD"), []byte("REPLACE"), []byte(code))
}

// functionDelete is FUNCTION DELETE library-name.
func functionDelete(c *Ctx) {
	err := functionsOf(c).Delete(string(c.Args[2]), func(lib *script.Library) {
		if c.Tx != nil {
			c.Tx.DeleteState(functionStateShard, libraryStateName(lib.Name()))
			c.Tx.LogShard(functionStateShard, 0, []byte("FUNCTION"), []byte("DELETE"), []byte(lib.Name()))
		}
	})
	if err != nil {
		c.Error(err.Error())
		return
	}
	c.W.OK()
}

// functionFlush is FUNCTION FLUSH [ASYNC|SYNC]; both modes free the libraries at once (they
// are small, and the garbage collector frees what they held).
func functionFlush(c *Ctx) {
	switch {
	case len(c.Args) > 3:
		SubcommandSyntaxError(c)
		return
	case len(c.Args) == 3 && !strings.EqualFold(string(c.Args[2]), "sync") && !strings.EqualFold(string(c.Args[2]), "async"):
		c.Error("ERR FUNCTION FLUSH only supports SYNC|ASYNC option")
		return
	}
	functionsOf(c).Flush(func() {
		if c.Tx != nil {
			flushFunctionState(c)
		}
	})
	c.W.OK()
}

func flushFunctionState(c *Ctx) {
	c.Tx.DeleteStatePrefix(functionStateShard, functionStatePrefix)
	c.Tx.LogShard(functionStateShard, 0, []byte("FUNCTION"), []byte("FLUSH"))
}

// restorePolicies are FUNCTION RESTORE's policies by name (lower case).
var restorePolicies = map[string]script.RestorePolicy{
	"append": script.RestoreAppend, "replace": script.RestoreReplace, "flush": script.RestoreFlush,
}

// functionRestore is FUNCTION RESTORE payload [FLUSH|APPEND|REPLACE].
func functionRestore(c *Ctx) {
	if len(c.Args) > 4 {
		SubcommandSyntaxError(c)
		return
	}
	policy := script.RestoreAppend
	if len(c.Args) == 4 {
		p, ok := restorePolicies[strings.ToLower(string(c.Args[3]))]
		if !ok {
			c.Error("ERR Wrong restore policy given, value should be either FLUSH, APPEND or REPLACE.")
			return
		}
		policy = p
	}
	codes, err := script.ParseDump(c.Args[2])
	if err != nil {
		c.Error(err.Error())
		return
	}
	err = functionsOf(c).Restore(codes, policy, func(libs []*script.Library) {
		if c.Tx == nil {
			return
		}
		if policy == script.RestoreFlush {
			flushFunctionState(c)
		}
		for _, lib := range libs {
			c.Tx.PutState(functionStateShard, libraryStateName(lib.Name()), []byte(lib.Code()))
			logFunctionLoad(c, lib.Code())
		}
	})
	if err != nil {
		c.Error(err.Error())
		return
	}
	c.W.OK()
}

// functionList is FUNCTION LIST [LIBRARYNAME pattern] [WITHCODE].
func functionList(c *Ctx) {
	withCode := false
	var pattern []byte
	hasPattern := false
	for i := 2; i < len(c.Args); i++ {
		arg := string(c.Args[i])
		if !withCode && strings.EqualFold(arg, "withcode") {
			withCode = true
			continue
		}
		if !hasPattern && strings.EqualFold(arg, "libraryname") {
			if i >= len(c.Args)-1 {
				c.Error("ERR library name argument was not given")
				return
			}
			i++
			pattern, hasPattern = c.Args[i], true
			continue
		}
		c.Error("ERR Unknown argument " + arg)
		return
	}
	var libs []*script.Library
	for _, lib := range functionsOf(c).Current().Sorted() {
		if !hasPattern || glob.Match(pattern, []byte(lib.Name()), true) {
			libs = append(libs, lib)
		}
	}
	w := &c.W
	w.ArrayLen(len(libs))
	for _, lib := range libs {
		if withCode {
			w.MapLen(4)
		} else {
			w.MapLen(3)
		}
		w.BulkString("library_name")
		w.BulkString(lib.Name())
		w.BulkString("engine")
		w.BulkString("LUA")
		w.BulkString("functions")
		funcs := lib.Functions()
		w.ArrayLen(len(funcs))
		for _, f := range funcs {
			w.MapLen(3)
			w.BulkString("name")
			w.BulkString(f.Name())
			w.BulkString("description")
			if desc, ok := f.Description(); ok {
				w.BulkString(desc)
			} else {
				w.Null()
			}
			w.BulkString("flags")
			flags := f.Flags().Names()
			w.SetLen(len(flags))
			for _, name := range flags {
				w.Simple(name)
			}
		}
		if withCode {
			w.BulkString("library_code")
			w.BulkString(lib.Code())
		}
	}
}

// functionDump is FUNCTION DUMP.
func functionDump(c *Ctx) {
	c.W.Bulk(functionsOf(c).Current().Dump())
}

// functionStats is FUNCTION STATS. A script shows only once it ran past the busy threshold:
// before that Redis, busy with it, would not have served the command at all.
func functionStats(c *Ctx, srv *server.Server) {
	rs := script.Busy(srv)
	if rs != nil && !rs.Function {
		c.Error(server.ErrBusyScript)
		return
	}
	set := functionsOf(c).Current()
	w := &c.W
	w.MapLen(2)
	w.BulkString("running_script")
	if rs == nil {
		w.Null()
	} else {
		w.MapLen(3)
		w.BulkString("name")
		w.BulkString(rs.Name)
		w.BulkString("command")
		w.ArrayLen(len(rs.Command))
		for _, a := range rs.Command {
			w.Bulk(a)
		}
		w.BulkString("duration_ms")
		w.Int(time.Since(rs.Started).Milliseconds())
	}
	w.BulkString("engines")
	w.MapLen(1)
	w.BulkString("LUA")
	w.MapLen(2)
	w.BulkString("libraries_count")
	w.Int(int64(set.Len()))
	w.BulkString("functions_count")
	w.Int(int64(set.NumFunctions()))
}

func functionHelp(c *Ctx) {
	HelpReply(c,
		"LOAD [REPLACE] <FUNCTION CODE>",
		"    Create a new library with the given library name and code.",
		"DELETE <LIBRARY NAME>",
		"    Delete the given library.",
		"LIST [LIBRARYNAME PATTERN] [WITHCODE]",
		"    Return general information on all the libraries:",
		"    * Library name",
		"    * The engine used to run the Library",
		"    * Library description",
		"    * Functions list",
		"    * Library code (if WITHCODE is given)",
		"    It also possible to get only function that matches a pattern using LIBRARYNAME argument.",
		"STATS",
		"    Return information about the current function running:",
		"    * Function name",
		"    * Command used to run the function",
		"    * Duration in MS that the function is running",
		"    If no function is running, return nil",
		"    In addition, returns a list of available engines.",
		"KILL",
		"    Kill the current running function.",
		"FLUSH [ASYNC|SYNC]",
		"    Delete all the libraries.",
		"    When called without the optional mode argument, the behavior is determined by the",
		"    lazyfree-lazy-user-flush configuration directive. Valid modes are:",
		"    * ASYNC: Asynchronously flush the libraries.",
		"    * SYNC: Synchronously flush the libraries.",
		"DUMP",
		"    Return a serialized payload representing the current libraries, can be restored using FUNCTION RESTORE command",
		"RESTORE <PAYLOAD> [FLUSH|APPEND|REPLACE]",
		"    Restore the libraries represented by the given payload, it is possible to give a restore policy to",
		"    control how to handle existing libraries (default APPEND):",
		"    * FLUSH: delete all existing libraries.",
		"    * APPEND: appends the restored libraries to the existing libraries. On collision, abort.",
		"    * REPLACE: appends the restored libraries to the existing libraries, On collision, replace the old",
		"      libraries with the new libraries (notice that even on this option there is a chance of failure",
		"      in case of functions name collision with another library).",
	)
}
