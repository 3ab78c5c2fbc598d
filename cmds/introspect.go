package cmds

import (
	"slices"
	"strings"
	"sync"

	"shardis/cmdspec"
	"shardis/codec"
	"shardis/internal/glob"
)

// COMMAND and its subcommands describe the command table to clients: redis-cli reads COMMAND
// DOCS at startup for its hints, cluster-aware clients read key positions and tips from
// COMMAND INFO, go-redis reads COMMAND to route read-only commands. Everything is generated
// from the registered Commands (package spec renders them), so whatever is registered is
// described, as it declares itself.

func init() {
	Register(
		&Command{Name: "command", Arity: -1, Flags: []string{"loading", "stale"}, ACL: []string{"slow", "connection"},
			Group: "server", Since: "2.8.13", Summary: "Get array of Redis command details",
			Complexity: "O(N) where N is the total number of Redis commands",
			Tips:       []string{"nondeterministic_output_order"}, Exec: ExecConn, Run: commandCommand,
			Subs: map[string]*Command{
				"count": {Arity: 2, Flags: []string{"loading", "stale"}, ACL: []string{"slow", "connection"}, Since: "2.8.13",
					Summary: "Get total number of Redis commands", Complexity: "O(1)", Exec: ExecConn,
					Run: commandCount},
				"docs": {Arity: -2, Flags: []string{"loading", "stale"}, ACL: []string{"slow", "connection"}, Since: "7.0.0",
					Summary:    "Get array of specific Redis command documentation",
					Complexity: "O(N) where N is the number of commands to look up",
					Syntax:     "[command-name [command-name ...]]", Tips: []string{"nondeterministic_output_order"},
					Exec: ExecConn, Run: commandDocs},
				// Redis 7.0's docs list no arguments for GETKEYS and GETKEYSANDFLAGS.
				"getkeys": {Arity: -4, Flags: []string{"loading", "stale"}, ACL: []string{"slow", "connection"}, Since: "2.8.13",
					Summary:    "Extract keys given a full Redis command",
					Complexity: "O(N) where N is the number of arguments to the command", Exec: ExecConn,
					Run: commandGetKeys},
				"getkeysandflags": {Arity: -4, Flags: []string{"loading", "stale"}, ACL: []string{"slow", "connection"}, Since: "7.0.0",
					Summary:    "Extract keys and access flags given a full Redis command",
					Complexity: "O(N) where N is the number of arguments to the command", Exec: ExecConn,
					Run: commandGetKeysAndFlags},
				"help": {Arity: 2, Flags: []string{"loading", "stale"}, ACL: []string{"slow", "connection"}, Since: "5.0.0",
					Summary: "Show helpful text about the different subcommands", Complexity: "O(1)",
					Exec: ExecConn, Run: commandHelp},
				"info": {Arity: -2, Flags: []string{"loading", "stale"}, ACL: []string{"slow", "connection"}, Since: "2.8.13",
					Summary:    "Get array of specific Redis command details, or all when no argument is given.",
					Complexity: "O(N) where N is the number of commands to look up",
					Syntax:     "[command-name [command-name ...]]", Tips: []string{"nondeterministic_output_order"},
					Exec: ExecConn, Run: commandInfo},
				"list": {Arity: -2, Flags: []string{"loading", "stale"}, ACL: []string{"slow", "connection"}, Since: "7.0.0",
					Summary:    "Get an array of Redis command names",
					Complexity: "O(N) where N is the total number of Redis commands",
					Syntax:     "[FILTERBY <MODULE module-name | ACLCAT category | PATTERN pattern>]",
					Tips:       []string{"nondeterministic_output_order"}, Exec: ExecConn, Run: commandList},
			}},
	)
}

// commandCommand is COMMAND without a subcommand: every command's info. The reactor also
// hands it COMMAND with an unknown subcommand.
func commandCommand(c *Ctx) {
	if len(c.Args) > 1 {
		c.Error(UnknownSubcommandError(c.Args))
		return
	}
	writeAllCommandInfo(&c.W)
}

func commandCount(c *Ctx) { c.W.Int(int64(len(table))) }

func commandInfo(c *Ctx) {
	if len(c.Args) == 2 {
		writeAllCommandInfo(&c.W)
		return
	}
	c.W.ArrayLen(len(c.Args) - 2)
	for _, name := range c.Args[2:] {
		if cmd := introLookup(name); cmd != nil {
			cmdspec.WriteInfo(&c.W, introFor(cmd).desc)
		} else {
			c.W.Null()
		}
	}
}

func commandDocs(c *Ctx) {
	if len(c.Args) == 2 {
		top := introSorted(table)
		c.W.MapLen(len(top))
		for _, cmd := range top {
			c.W.BulkString(cmd.Name)
			cmdspec.WriteDocs(&c.W, introFor(cmd).desc)
		}
		return
	}
	var found []*Command
	for _, name := range c.Args[2:] {
		if cmd := introLookup(name); cmd != nil {
			found = append(found, cmd)
		}
	}
	c.W.MapLen(len(found))
	for _, cmd := range found {
		c.W.BulkString(cmd.Name)
		cmdspec.WriteDocs(&c.W, introFor(cmd).desc)
	}
}

func commandList(c *Ctx) {
	var match func(*Command) bool
	switch {
	case len(c.Args) == 2:
		match = func(*Command) bool { return true }
	case len(c.Args) == 5 && EqualFold(c.Args[2], "filterby"):
		arg := string(c.Args[4])
		switch {
		case EqualFold(c.Args[3], "module"):
			match = func(*Command) bool { return false } // no modules
		case EqualFold(c.Args[3], "aclcat"):
			match = func(cmd *Command) bool {
				return slices.ContainsFunc(cmd.ACL, func(cat string) bool { return strings.EqualFold(cat, arg) })
			}
		case EqualFold(c.Args[3], "pattern"):
			match = func(cmd *Command) bool { return glob.MatchString(arg, cmd.Name, true) }
		default:
			c.Error(ErrSyntax)
			return
		}
	default:
		c.Error(ErrSyntax)
		return
	}
	var names []string
	for _, cmd := range introSorted(table) {
		if match(cmd) {
			names = append(names, cmd.Name)
		}
		for _, sub := range introSorted(cmd.Subs) {
			if match(sub) {
				names = append(names, sub.Name)
			}
		}
	}
	c.W.ArrayLen(len(names))
	for _, n := range names {
		c.W.BulkString(n)
	}
}

var commandHelpLines = []string{
	"COMMAND <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
	"(no subcommand)",
	"    Return details about all Redis commands.",
	"COUNT",
	"    Return the total number of commands in this Redis server.",
	"LIST",
	"    Return a list of all commands in this Redis server.",
	"INFO [<command-name> ...]",
	"    Return details about multiple Redis commands.",
	"    If no command names are given, documentation details for all",
	"    commands are returned.",
	"DOCS [<command-name> ...]",
	"    Return documentation details about multiple Redis commands.",
	"    If no command names are given, documentation details for all",
	"    commands are returned.",
	"GETKEYS <full-command>",
	"    Return the keys from a full Redis command.",
	"GETKEYSANDFLAGS <full-command>",
	"    Return the keys and the access flags from a full Redis command.",
	"HELP",
	"    Prints this help.",
}

func commandHelp(c *Ctx) {
	c.W.ArrayLen(len(commandHelpLines))
	for _, l := range commandHelpLines {
		c.W.Simple(l)
	}
}

func commandGetKeys(c *Ctx)         { commandGetKeysGeneric(c, false) }
func commandGetKeysAndFlags(c *Ctx) { commandGetKeysGeneric(c, true) }

// commandGetKeysGeneric runs GETKEYS and GETKEYSANDFLAGS: the keys of the command in
// c.Args[2:], with the flags of the key spec that finds each.
func commandGetKeysGeneric(c *Ctx, withFlags bool) {
	argv := c.Args[2:]
	cmd := lookupName(table, argv[0])
	if cmd != nil && cmd.Subs != nil && len(argv) > 1 {
		cmd = lookupName(cmd.Subs, argv[1])
	}
	switch {
	case cmd == nil:
		c.Error("ERR Invalid command specified")
		return
	case !cmd.hasKeys():
		c.Error("ERR The command has no key arguments")
		return
	case !cmd.CheckArity(len(argv)):
		c.Error("ERR Invalid number of arguments specified for command")
		return
	}
	keys := cmd.keysWithFlags(argv)
	if len(keys) == 0 && !cmd.Has(FlagNoMandatoryKeys) {
		c.Error("ERR Invalid arguments specified for command")
		return
	}
	c.W.ArrayLen(len(keys))
	for _, k := range keys {
		if !withFlags {
			c.W.Bulk(k.Key)
			continue
		}
		c.W.ArrayLen(2)
		c.W.Bulk(k.Key)
		flags := k.Flags.Names()
		c.W.SetLen(len(flags))
		for _, f := range flags {
			c.W.Simple(f)
		}
	}
}

// introLookup finds a command by its full name, any case: "get", "config|get".
func introLookup(name []byte) *Command {
	parent, sub, hasSub := strings.Cut(strings.ToLower(string(name)), "|")
	cmd := table[parent]
	if cmd == nil || !hasSub {
		return cmd
	}
	return cmd.Subs[sub]
}

// introSorted returns the commands of m by name: Redis's order is its hash table's, ours is
// stable.
func introSorted(m map[string]*Command) []*Command {
	out := make([]*Command, 0, len(m))
	for _, cmd := range m {
		out = append(out, cmd)
	}
	slices.SortFunc(out, func(a, b *Command) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// introEntry is what COMMAND derives from one declaration; computed once per command.
type introEntry struct {
	desc   *cmdspec.Desc
	argErr error // the synopsis does not parse (the unit test rejects such a declaration)
}

var introCache sync.Map // *Command -> *introEntry

// introFor returns cmd's description for COMMAND INFO and DOCS.
func introFor(cmd *Command) *introEntry {
	if e, ok := introCache.Load(cmd); ok {
		return e.(*introEntry)
	}
	d := &cmdspec.Desc{Name: cmd.Name, Arity: cmd.Arity, Flags: cmdspec.InfoFlags(cmd.Flags, cmd.Keys != nil),
		FirstKey: cmd.FirstKey, LastKey: cmd.LastKey, Step: cmd.Step, ACL: cmd.ACL, Tips: cmd.Tips,
		KeySpecs: cmd.KeySpecs, Summary: cmd.Summary, Since: cmd.Since, Group: cmd.Group,
		Complexity: cmd.Complexity, DocFlags: cmd.DocFlags, DeprecatedSince: cmd.DeprecatedSince,
		ReplacedBy: cmd.ReplacedBy}
	e := &introEntry{desc: d}
	if cmd.Syntax != "" {
		d.Args, e.argErr = cmdspec.ParseSyntax(cmd.Name, cmd.Syntax)
		if e.argErr == nil {
			cmdspec.NumberKeyArgs(d.Args, len(cmd.KeySpecs))
		}
	}
	for _, sub := range introSorted(cmd.Subs) {
		d.Subs = append(d.Subs, introFor(sub).desc)
	}
	actual, _ := introCache.LoadOrStore(cmd, e)
	return actual.(*introEntry)
}

// setKeyFlags are the flags of SET's key (its key spec has cmdspec.VariableFlags): SET writes
// without reading unless GET is given.
func setKeyFlags(argv [][]byte) cmdspec.KeyFlag {
	for _, a := range argv[min(3, len(argv)):] {
		if EqualFold(a, "get") {
			return cmdspec.RW | cmdspec.Access | cmdspec.Update
		}
	}
	return cmdspec.OW | cmdspec.Update
}

func writeAllCommandInfo(w *codec.Writer) {
	top := introSorted(table)
	w.ArrayLen(len(top))
	for _, cmd := range top {
		cmdspec.WriteInfo(w, introFor(cmd).desc)
	}
}
