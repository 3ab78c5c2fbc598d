package cmds

import (
	"shardis/server"
)

// MODULE: shardis loads no modules, so it answers as a Redis 7.0 with none loaded that cannot
// load one: LIST is empty, LOAD and LOADEX fail as a module that does not load fails (Redis
// logs why; shardis logs nothing), UNLOAD finds no module of that name. LOAD, LOADEX and UNLOAD
// are protected by enable-module-command (Redis's CMD_PROTECTED), which admission checks.

func init() {
	sub := func(arity int, since, summary, complexity, syntax string, run func(*Ctx, *server.Server)) *Command {
		return &Command{Arity: arity, Flags: []string{"admin", "noscript", "no_async_loading"},
			ACL: []string{"admin", "slow", "dangerous"}, Since: since, Summary: summary,
			Complexity: complexity, Syntax: syntax, Exec: ExecServer, RunServer: run,
			Traits: TraitProtected, ProtectedBy: "enable-module-command"}
	}
	list := sub(2, "4.0.0", "List all modules loaded by the server",
		"O(N) where N is the number of loaded modules.", "", moduleList)
	list.Flags = []string{"admin", "noscript"}
	list.Traits, list.ProtectedBy = 0, ""
	list.Tips = []string{"nondeterministic_output_order"}
	Register(
		&Command{Name: "module", Arity: -2, ACL: []string{"slow"}, Group: "server", Since: "4.0.0",
			Summary: "A container for module commands", Complexity: "Depends on subcommand.",
			Exec: ExecServer,
			Subs: map[string]*Command{
				"help": {Arity: 2, Flags: []string{"loading", "stale"}, ACL: []string{"slow"}, Since: "5.0.0",
					Summary: "Show helpful text about the different subcommands", Complexity: "O(1)",
					Exec: ExecServer, Run: moduleHelp},
				"list": list,
				"load": sub(-3, "4.0.0", "Load a module", "O(1)", "path [arg [arg ...]]", moduleLoad),
				"loadex": sub(-3, "7.0.0", "Load a module with extended parameters", "O(1)",
					"path [CONFIG name value [CONFIG name value ...]] [ARGS arg [arg ...]]", moduleLoad),
				"unload": sub(3, "4.0.0", "Unload a module", "O(1)", "name", moduleUnload),
			}},
	)
}

func moduleHelp(c *Ctx) {
	HelpReply(c,
		"LIST",
		"    Return a list of loaded modules.",
		"LOAD <path> [<arg> ...]",
		"    Load a module library from <path>, passing to it any optional arguments.",
		"LOADEX <path> [[CONFIG NAME VALUE] [CONFIG NAME VALUE]] [ARGS ...]",
		"    Load a module library from <path>, while passing it module configurations and optional arguments.",
		"UNLOAD <name>",
		"    Unload a module.")
}

func moduleList(c *Ctx, _ *server.Server) { c.W.ArrayLen(0) }

func moduleLoad(c *Ctx, _ *server.Server) {
	c.Error("ERR Error loading the extension. Please check the server logs.")
}

func moduleUnload(c *Ctx, _ *server.Server) {
	c.Error("ERR Error unloading module: no such module with that name")
}
