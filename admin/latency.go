package admin

import (
	"slices"
	"strings"
	"time"

	"shardis/cmds"
	"shardis/latency"
	"shardis/server"
)

// LATENCY: the latency monitor's samples (LATEST, HISTORY, RESET, DOCTOR, GRAPH), fed by the
// executor for commands that took at least latency-monitor-threshold ms, and the per-command
// latency histograms (HISTOGRAM) kept while latency-tracking is on. See latency/.

func init() {
	cmds.Register(
		&cmds.Command{Name: "latency", Arity: -2, ACL: []string{"slow"}, Group: "server", Since: "2.8.13",
			Summary: "A container for latency diagnostics commands", Complexity: "Depends on subcommand.",
			Exec: cmds.ExecServer,
			Subs: map[string]*cmds.Command{
				"doctor": {Arity: 2, Flags: []string{"admin", "noscript", "loading", "stale"},
					ACL: []string{"admin", "slow", "dangerous"}, Since: "2.8.13",
					Summary: "Return a human readable latency analysis report.", Complexity: "O(1)",
					Tips: []string{"nondeterministic_output", "request_policy:all_nodes", "response_policy:special"},
					Exec: cmds.ExecServer, RunServer: latencyDoctor},
				"graph": {Arity: 3, Flags: []string{"admin", "noscript", "loading", "stale"},
					ACL: []string{"admin", "slow", "dangerous"}, Since: "2.8.13",
					Summary: "Return a latency graph for the event.", Complexity: "O(1)", Syntax: "event",
					Tips: []string{"nondeterministic_output", "request_policy:all_nodes", "response_policy:special"},
					Exec: cmds.ExecServer, RunServer: latencyGraph},
				"help": {Arity: 2, Flags: []string{"loading", "stale"}, ACL: []string{"slow"}, Since: "2.8.13",
					Summary: "Show helpful text about the different subcommands.", Complexity: "O(1)",
					Exec: cmds.ExecServer, Run: latencyHelp},
				"histogram": {Arity: -2, Flags: []string{"admin", "noscript", "loading", "stale"},
					ACL: []string{"admin", "slow", "dangerous"}, Since: "7.0.0",
					Summary:    "Return the cumulative distribution of latencies of a subset of commands or all.",
					Complexity: "O(N) where N is the number of commands with latency information being retrieved.",
					Syntax:     "[command [command ...]]",
					Tips:       []string{"nondeterministic_output", "request_policy:all_nodes", "response_policy:special"},
					Exec:       cmds.ExecServer, Run: latencyHistogram},
				"history": {Arity: 3, Flags: []string{"admin", "noscript", "loading", "stale"},
					ACL: []string{"admin", "slow", "dangerous"}, Since: "2.8.13",
					Summary: "Return timestamp-latency samples for the event.", Complexity: "O(1)",
					Syntax: "event",
					Tips:   []string{"nondeterministic_output", "request_policy:all_nodes", "response_policy:special"},
					Exec:   cmds.ExecServer, RunServer: latencyHistory},
				"latest": {Arity: 2, Flags: []string{"admin", "noscript", "loading", "stale"},
					ACL: []string{"admin", "slow", "dangerous"}, Since: "2.8.13",
					Summary: "Return the latest latency samples for all events.", Complexity: "O(1)",
					Tips: []string{"nondeterministic_output", "request_policy:all_nodes", "response_policy:special"},
					Exec: cmds.ExecServer, RunServer: latencyLatest},
				"reset": {Arity: -2, Flags: []string{"admin", "noscript", "loading", "stale"},
					ACL: []string{"admin", "slow", "dangerous"}, Since: "2.8.13",
					Summary: "Reset latency data for one or more events.", Complexity: "O(1)",
					Syntax: "[event [event ...]]",
					Tips:   []string{"request_policy:all_nodes", "response_policy:all_succeeded"}, Exec: cmds.ExecServer,
					RunServer: latencyReset},
			}},
	)
}

func latencyLatest(c *cmds.Ctx, srv *server.Server) {
	events := srv.Latency.Latest()
	c.W.ArrayLen(len(events))
	for _, e := range events {
		c.W.ArrayLen(4)
		c.W.BulkString(e.Event)
		c.W.Int(e.Time)
		c.W.Int(e.Latency)
		c.W.Int(e.Max)
	}
}

func latencyHistory(c *cmds.Ctx, srv *server.Server) {
	samples, _, _ := srv.Latency.History(string(c.Args[2]))
	c.W.ArrayLen(len(samples))
	for _, s := range samples {
		c.W.ArrayLen(2)
		c.W.Int(s.Time)
		c.W.Int(s.Latency)
	}
}

func latencyReset(c *cmds.Ctx, srv *server.Server) {
	events := make([]string, len(c.Args)-2)
	for i, a := range c.Args[2:] {
		events[i] = string(a)
	}
	c.W.Int(int64(srv.Latency.Reset(events...)))
}

func latencyDoctor(c *cmds.Ctx, srv *server.Server) {
	cfg := srv.Config
	report := srv.Latency.Doctor(latency.DoctorSettings{
		Threshold:         cfg.LatencyThreshold(),
		SlowlogSlowerThan: cfg.SlowlogSlowerThan(),
		Hz:                cfg.Hz(),
	}, time.Now().Unix())
	c.W.Verbatim("txt", report)
}

func latencyGraph(c *cmds.Ctx, srv *server.Server) {
	graph, ok := srv.Latency.Graph(string(c.Args[2]), time.Now().Unix())
	if !ok {
		c.Error("ERR No samples available for event '" + string(c.Args[2]) + "'")
		return
	}
	c.W.Verbatim("txt", graph)
}

// latencyHistogram replies with the histograms of the named commands (a container names its
// subcommands too; unknown names are skipped), or of every command with one, as Redis: a map
// of command name to {calls, histogram_usec}.
func latencyHistogram(c *cmds.Ctx) {
	var list []*cmds.Command
	if len(c.Args) == 2 {
		for _, cmd := range cmds.All() {
			list = appendWithSubs(list, cmd)
		}
		slices.SortFunc(list, func(a, b *cmds.Command) int { return strings.Compare(a.Name, b.Name) })
	} else {
		for _, a := range c.Args[2:] {
			if cmd := lookupFullName(string(a)); cmd != nil {
				list = appendWithSubs(list, cmd)
			}
		}
	}
	type entry struct {
		name    string
		buckets []latency.Bucket
		calls   uint64
	}
	var out []entry
	for _, cmd := range list {
		if h := cmd.Latency(); h != nil {
			b, total := h.CDF()
			out = append(out, entry{cmd.Name, b, total})
		}
	}
	c.W.MapLen(len(out))
	for _, e := range out {
		c.W.BulkString(e.name)
		c.W.MapLen(2)
		c.W.BulkString("calls")
		c.W.Int(int64(e.calls))
		c.W.BulkString("histogram_usec")
		c.W.MapLen(len(e.buckets))
		for _, b := range e.buckets {
			c.W.Int(b.Micros)
			c.W.Int(int64(b.Count))
		}
	}
}

// appendWithSubs appends cmd and, for a container, its subcommands in name order.
func appendWithSubs(dst []*cmds.Command, cmd *cmds.Command) []*cmds.Command {
	dst = append(dst, cmd)
	subs := make([]*cmds.Command, 0, len(cmd.Subs))
	for _, s := range cmd.Subs {
		subs = append(subs, s)
	}
	slices.SortFunc(subs, func(a, b *cmds.Command) int { return strings.Compare(a.Name, b.Name) })
	return append(dst, subs...)
}

// lookupFullName finds a command by the name Redis prints ("get", "config|get"), any case.
func lookupFullName(name string) *cmds.Command {
	parent, sub, isSub := strings.Cut(strings.ToLower(name), "|")
	cmd := cmds.All()[parent]
	if cmd == nil || !isSub {
		return cmd
	}
	return cmd.Subs[sub]
}

func latencyHelp(c *cmds.Ctx) {
	cmds.HelpReply(c,
		"DOCTOR",
		"    Return a human readable latency analysis report.",
		"GRAPH <event>",
		"    Return an ASCII latency graph for the <event> class.",
		"HISTORY <event>",
		"    Return time-latency samples for the <event> class.",
		"LATEST",
		"    Return the latest latency samples for all events.",
		"RESET [<event> ...]",
		"    Reset latency data of one or more <event> classes.",
		"    (default: reset all data for all event classes)",
		"HISTOGRAM [COMMAND ...]",
		"    Return a cumulative distribution of latencies in the format of a histogram for the specified command names.",
		"    If no commands are specified then all histograms are replied.",
	)
}
