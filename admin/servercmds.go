package admin

import (
	"errors"
	"log"
	"math"
	"net"
	"path/filepath"
	"shardis/cmds"
	"shardis/codec"
	"strconv"
	"strings"
	"time"

	"shardis/config"
	"shardis/script"
	"shardis/server"
)

// Server administration: CONFIG, TIME, LASTSAVE, SAVE, BGSAVE, SHUTDOWN, SLOWLOG and MONITOR
// (DEBUG is debug.go's). Those that read server state run as ExecServer, in order after the commands the client
// pipelined before them; MONITOR and SHUTDOWN act on the connection at once (ExecConn).

func init() {
	cmds.Register(
		&cmds.Command{Name: "config", Arity: -2, ACL: []string{"slow"}, Group: "server", Since: "2.0.0",
			Summary: "A container for server configuration commands", Complexity: "Depends on subcommand.",
			Exec: cmds.ExecServer,
			Subs: map[string]*cmds.Command{
				"get": {Arity: -3, Flags: []string{"admin", "noscript", "loading", "stale"},
					ACL: []string{"admin", "slow", "dangerous"}, Since: "2.0.0",
					Summary:    "Get the values of configuration parameters",
					Complexity: "O(N) when N is the number of configuration parameters provided",
					Syntax:     "parameter [parameter ...]", Exec: cmds.ExecServer, RunServer: configGet},
				"help": {Arity: 2, Flags: []string{"loading", "stale"}, ACL: []string{"slow"}, Since: "5.0.0",
					Summary: "Show helpful text about the different subcommands", Complexity: "O(1)",
					Exec: cmds.ExecServer, Run: configHelp},
				"resetstat": {Arity: 2, Flags: []string{"admin", "noscript", "loading", "stale"},
					ACL: []string{"admin", "slow", "dangerous"}, Since: "2.0.0",
					Summary: "Reset the stats returned by INFO", Complexity: "O(1)", Exec: cmds.ExecServer,
					RunServer: configResetStat},
				"rewrite": {Arity: 2, Flags: []string{"admin", "noscript", "loading", "stale"},
					ACL: []string{"admin", "slow", "dangerous"}, Since: "2.8.0",
					Summary: "Rewrite the configuration file with the in memory configuration", Complexity: "O(1)",
					Exec: cmds.ExecServer, RunServer: configRewrite},
				"set": {Arity: -4, Flags: []string{"admin", "noscript", "loading", "stale"},
					ACL: []string{"admin", "slow", "dangerous"}, Since: "2.0.0",
					Summary:    "Set configuration parameters to the given values",
					Complexity: "O(N) when N is the number of configuration parameters provided",
					Syntax:     "parameter value [parameter value ...]",
					Tips:       []string{"request_policy:all_nodes", "response_policy:all_succeeded"}, Exec: cmds.ExecServer,
					Secret: cmds.ConfigSetSecret, RunServer: configSet},
			}},
		&cmds.Command{Name: "time", Arity: 1, Flags: []string{"loading", "stale", "fast"}, ACL: []string{"fast"},
			Group: "server", Since: "2.6.0", Summary: "Return the current server time", Complexity: "O(1)",
			Tips: []string{"nondeterministic_output"}, Exec: cmds.ExecServer, Run: timeCommand},
		&cmds.Command{Name: "lastsave", Arity: 1, Flags: []string{"loading", "stale", "fast"},
			ACL: []string{"admin", "fast", "dangerous"}, Group: "server", Since: "1.0.0",
			Summary: "Get the UNIX time stamp of the last successful save to disk", Complexity: "O(1)",
			Tips: []string{"nondeterministic_output"}, Exec: cmds.ExecServer, Run: lastsaveCommand},
		&cmds.Command{Name: "save", Arity: 1, Flags: []string{"admin", "noscript", "no_async_loading", "no_multi"},
			ACL: []string{"admin", "slow", "dangerous"}, Group: "server", Since: "1.0.0",
			Summary:    "Synchronously save the dataset to disk",
			Complexity: "O(N) where N is the total number of keys in all databases", Exec: cmds.ExecServer,
			RunServer: saveCommand},
		&cmds.Command{Name: "bgsave", Arity: -1, Flags: []string{"admin", "noscript", "no_async_loading"},
			ACL: []string{"admin", "slow", "dangerous"}, Group: "server", Since: "1.0.0",
			Summary: "Asynchronously save the dataset to disk", Complexity: "O(1)", Syntax: "[SCHEDULE]",
			Exec: cmds.ExecServer, RunServer: bgsaveCommand},
		&cmds.Command{Name: "bgrewriteaof", Arity: 1, Flags: []string{"admin", "noscript", "no_async_loading"},
			ACL: []string{"admin", "slow", "dangerous"}, Group: "server", Since: "1.0.0",
			Summary: "Asynchronously rewrite the append-only file", Complexity: "O(1)",
			Exec: cmds.ExecServer, RunServer: bgrewriteaofCommand},
		&cmds.Command{Name: "shutdown", Arity: -1,
			Flags: []string{"admin", "noscript", "loading", "stale", "no_multi", "allow_busy"},
			ACL:   []string{"admin", "slow", "dangerous"}, Group: "server", Since: "1.0.0",
			Summary:    "Synchronously save the dataset to disk and then shut down the server",
			Complexity: "O(N) when saving, where N is the total number of keys in all databases when saving data, otherwise O(1)",
			Syntax:     "[NOSAVE | SAVE] [NOW] [FORCE] [ABORT]", Exec: cmds.ExecConn, RunServer: shutdownCommand},
		&cmds.Command{Name: "monitor", Arity: 1, Flags: []string{"admin", "noscript", "loading", "stale"},
			ACL: []string{"admin", "slow", "dangerous"}, Group: "server", Since: "1.0.0",
			Summary: "Listen for all requests received by the server in real time", Exec: cmds.ExecConn,
			RunServer: monitorCommand},
		&cmds.Command{Name: "slowlog", Arity: -2, ACL: []string{"slow"}, Group: "server", Since: "2.2.12",
			Summary: "A container for slow log commands", Complexity: "Depends on subcommand.",
			Exec: cmds.ExecServer,
			Subs: map[string]*cmds.Command{
				"get": {Arity: -2, Flags: []string{"admin", "loading", "stale"}, ACL: []string{"admin", "slow", "dangerous"},
					Since: "2.2.12", Summary: "Get the slow log's entries",
					Complexity: "O(N) where N is the number of entries returned", Syntax: "[count]",
					Tips: []string{"request_policy:all_nodes", "nondeterministic_output"}, Exec: cmds.ExecServer,
					RunServer: slowlogGet},
				"help": {Arity: 2, Flags: []string{"loading", "stale"}, ACL: []string{"slow"}, Since: "6.2.0",
					Summary: "Show helpful text about the different subcommands", Complexity: "O(1)",
					Exec: cmds.ExecServer, Run: slowlogHelp},
				"len": {Arity: 2, Flags: []string{"admin", "loading", "stale"}, ACL: []string{"admin", "slow", "dangerous"},
					Since: "2.2.12", Summary: "Get the slow log's length", Complexity: "O(1)",
					Tips: []string{"request_policy:all_nodes", "response_policy:agg_sum", "nondeterministic_output"},
					Exec: cmds.ExecServer, RunServer: slowlogLen},
				"reset": {Arity: 2, Flags: []string{"admin", "loading", "stale"}, ACL: []string{"admin", "slow", "dangerous"},
					Since: "2.2.12", Summary: "Clear all entries from the slow log",
					Complexity: "O(N) where N is the number of entries in the slowlog",
					Tips:       []string{"request_policy:all_nodes", "response_policy:all_succeeded"}, Exec: cmds.ExecServer,
					RunServer: slowlogReset},
			}},
	)
}

// ---- CONFIG ----

func configGet(c *cmds.Ctx, srv *server.Server) {
	patterns := make([]string, len(c.Args)-2)
	for i, a := range c.Args[2:] {
		patterns[i] = string(a)
	}
	kvs := srv.Config.GetMulti(patterns)
	c.W.MapLen(len(kvs))
	for _, kv := range kvs {
		c.W.BulkString(kv[0])
		c.W.BulkString(kv[1])
	}
}

func configSet(c *cmds.Ctx, srv *server.Server) {
	if len(c.Args)%2 != 0 {
		c.Error(cmds.ErrSyntax)
		return
	}
	pairs := make([][2]string, 0, (len(c.Args)-2)/2)
	for i := 2; i+1 < len(c.Args); i += 2 {
		pairs = append(pairs, [2]string{string(c.Args[i]), string(c.Args[i+1])})
	}
	local := c.Client == nil || localClient(c.Client.Addr)
	if err := srv.Config.SetFrom(pairs, local); err != nil {
		c.Error(err.Error())
		return
	}
	c.W.OK()
}

// localClient reports whether a client's address is on the loopback interface or the unix
// socket (addr "path:0"), as Redis's islocalClient decides it.
func localClient(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if ip := net.ParseIP(host); ip != nil {
		return ip.IsLoopback()
	}
	return strings.HasPrefix(host, "/") // a unix socket path
}

func configResetStat(c *cmds.Ctx, srv *server.Server) {
	cmds.ResetStats()
	srv.ResetStats()
	c.W.OK()
}

// configRewrite writes the configuration back to the file the server was started with, as
// Redis does (config.Config.Rewrite), and logs the outcome as Redis logs it.
func configRewrite(c *cmds.Ctx, srv *server.Server) {
	if err := srv.Config.Rewrite(); err != nil {
		if !errors.Is(err, config.ErrNoConfigFile) {
			log.Printf("CONFIG REWRITE failed: %v", err)
		}
		c.Error(err.Error())
		return
	}
	log.Printf("CONFIG REWRITE executed with success.")
	c.W.OK()
}

func configHelp(c *cmds.Ctx) {
	cmds.HelpReply(c,
		"GET <pattern>",
		"    Return parameters matching the glob-like <pattern> and their values.",
		"SET <directive> <value>",
		"    Set the configuration <directive> to <value>.",
		"RESETSTAT",
		"    Reset statistics reported by the INFO command.",
		"REWRITE",
		"    Rewrite the configuration file.",
	)
}

// ---- TIME, LASTSAVE, SAVE, BGSAVE ----

func timeCommand(c *cmds.Ctx) {
	now := time.Now()
	c.W.ArrayLen(2)
	c.W.BulkString(strconv.FormatInt(now.Unix(), 10))
	c.W.BulkString(strconv.FormatInt(int64(now.Nanosecond()/1000), 10))
}

func lastsaveCommand(c *cmds.Ctx) { c.W.Int(c.Keyspace.Store.LastSave.Load()) }

// checkpointDir is where SAVE and BGSAVE put the RocksDB checkpoint.
func checkpointDir(srv *server.Server) string { return filepath.Join(srv.Config.Dir(), "checkpoint") }

const errBgsaveRunning = "ERR Background save already in progress"

func saveCommand(c *cmds.Ctx, srv *server.Server) {
	if !srv.Saves.Mu.TryLock() {
		c.Error(errBgsaveRunning)
		return
	}
	defer srv.Saves.Mu.Unlock()
	if err := persist(srv); err != nil {
		log.Printf("SAVE: %v", err)
		c.Error("ERR")
		return
	}
	srv.Saves.Count.Add(1)
	c.W.OK()
}

func bgsaveCommand(c *cmds.Ctx, srv *server.Server) {
	if len(c.Args) > 1 && !(len(c.Args) == 2 && cmds.EqualFold(c.Args[1], "schedule")) {
		c.Error(cmds.ErrSyntax)
		return
	}
	if !srv.Saves.Mu.TryLock() {
		if srv.Saves.Rewrite.Running.Load() {
			c.Error("ERR Another child process is active (AOF?): can't BGSAVE right now. " +
				"Use BGSAVE SCHEDULE in order to schedule a BGSAVE whenever possible.")
			return
		}
		c.Error(errBgsaveRunning)
		return
	}
	start := time.Now()
	srv.Saves.Started.Store(start.UnixMilli())
	srv.Saves.Running.Store(true)
	go func() {
		defer srv.Saves.Mu.Unlock()
		err := persist(srv)
		if err != nil {
			log.Printf("BGSAVE: %v", err)
		} else {
			srv.Saves.Count.Add(1)
		}
		srv.Saves.Failed.Store(err != nil)
		srv.Saves.LastSecs.Store(int64(time.Since(start) / time.Second))
		srv.Saves.Ever.Store(true)
		srv.Saves.Running.Store(false)
	}()
	c.W.Simple("Background saving started")
}

// bgrewriteaofCommand is BGREWRITEAOF. shardis's append-only log is RocksDB's write-ahead
// log, which RocksDB rewrites into table files by itself; what a rewrite does here is what
// BGSAVE does, a checkpoint, which flushes the memtables first (so the log files written
// until then are let go). Behind a running BGSAVE it is scheduled, as in Redis.
func bgrewriteaofCommand(c *cmds.Ctx, srv *server.Server) {
	rw := &srv.Saves.Rewrite
	if rw.Running.Load() || rw.Scheduled.Load() {
		c.Error("ERR Background append only file rewriting already in progress")
		return
	}
	begin := func() time.Time {
		start := time.Now()
		rw.Started.Store(start.UnixMilli())
		rw.Running.Store(true)
		rw.Scheduled.Store(false)
		return start
	}
	var start time.Time
	locked := srv.Saves.Mu.TryLock()
	if locked {
		start = begin()
	} else {
		rw.Scheduled.Store(true)
	}
	rw.Count.Add(1)
	dir := checkpointDir(srv)
	go func() {
		if !locked {
			srv.Saves.Mu.Lock()
			start = begin()
		}
		defer srv.Saves.Mu.Unlock()
		err := srv.Store.Checkpoint(dir)
		if err != nil {
			log.Printf("BGREWRITEAOF: checkpoint failed: %v", err)
		}
		rw.Failed.Store(err != nil)
		rw.LastSecs.Store(int64(time.Since(start) / time.Second))
		rw.Ever.Store(true)
		rw.Running.Store(false)
	}()
	if locked {
		c.W.Simple("Background append only file rewriting started")
	} else {
		c.W.Simple("Background append only file rewriting scheduled")
	}
}

// ---- SHUTDOWN ----

// shutdownCommand stops the server. As in Redis, success sends no reply: the connection just
// closes. SAVE takes a checkpoint first (every write is already durable in RocksDB, so the
// default is not to).
func shutdownCommand(c *cmds.Ctx, srv *server.Server) {
	var nosave, save, now, force, abort bool
	for _, a := range c.Args[1:] {
		switch {
		case cmds.EqualFold(a, "nosave"):
			nosave = true
		case cmds.EqualFold(a, "save"):
			save = true
		case cmds.EqualFold(a, "now"):
			now = true // there are no replicas to wait for: every shutdown is immediate
		case cmds.EqualFold(a, "force"):
			force = true
		case cmds.EqualFold(a, "abort"):
			abort = true
		default:
			c.Error(cmds.ErrSyntax)
			return
		}
	}
	if (abort && (nosave || save || now || force)) || (nosave && save) {
		c.Error(cmds.ErrSyntax)
		return
	}
	if abort {
		// A shutdown starts at once and cannot be waited on, so none is ever in progress.
		c.Error("ERR No shutdown in progress.")
		return
	}
	// As Redis: a busy script stops only a SHUTDOWN NOSAVE (which then kills it, StopScripts).
	if rs := script.Busy(srv); rs != nil && !nosave {
		if rs.Function {
			c.Error(server.ErrBusyFunction)
		} else {
			c.Error(server.ErrBusyScript)
		}
		return
	}
	// Wait for a running BGSAVE: the store must not close under its checkpoint.
	srv.Saves.Mu.Lock()
	if save {
		if err := persist(srv); err != nil {
			log.Printf("SHUTDOWN SAVE: %v", err)
			if !force {
				srv.Saves.Mu.Unlock()
				c.Error("ERR Errors trying to SHUTDOWN. Check logs.")
				return
			}
		}
	}
	if srv.Shutdown == nil {
		srv.Saves.Mu.Unlock()
		c.Error("ERR Errors trying to SHUTDOWN. Check logs.")
		return
	}
	// The lock stays held: no BGSAVE may start while the server stops.
	log.Printf("SHUTDOWN requested by client id=%d addr=%s", c.Client.ID, c.Client.Addr)
	c.Client.Quitting = true // run nothing the client pipelined after it
	srv.Shutdown()
}

// ---- MONITOR ----

// monitorCommand makes the connection receive every command the server runs; a second
// MONITOR is ignored without a reply, as in Redis.
func monitorCommand(c *cmds.Ctx, srv *server.Server) {
	cl := c.Client
	if cl.Monitor {
		return
	}
	cl.Monitor = true
	cl.Publish()
	srv.Clients.AddMonitor(cl)
	c.W.OK()
}

// ---- SLOWLOG ----

func slowlogGet(c *cmds.Ctx, srv *server.Server) {
	if len(c.Args) > 3 {
		cmds.SubcommandSyntaxError(c)
		return
	}
	n := 10
	if len(c.Args) == 3 {
		v, ok := codec.ParseInt(c.Args[2])
		if !ok || v < -1 {
			c.Error("ERR count should be greater than or equal to -1")
			return
		}
		n = int(min(v, math.MaxInt32))
	}
	entries := srv.Slowlog.Get(n)
	c.W.ArrayLen(len(entries))
	for _, e := range entries {
		c.W.ArrayLen(6)
		c.W.Int(e.ID)
		c.W.Int(e.Time)
		c.W.Int(e.Duration)
		c.W.ArrayLen(len(e.Args))
		for _, a := range e.Args {
			c.W.BulkString(a)
		}
		c.W.BulkString(e.Addr)
		c.W.BulkString(e.Name)
	}
}

func slowlogLen(c *cmds.Ctx, srv *server.Server) { c.W.Int(int64(srv.Slowlog.Len())) }

func slowlogReset(c *cmds.Ctx, srv *server.Server) {
	srv.Slowlog.Reset()
	c.W.OK()
}

func slowlogHelp(c *cmds.Ctx) {
	cmds.HelpReply(c,
		"GET [<count>]",
		"    Return top <count> entries from the slowlog (default: 10, -1 mean all).",
		"    Entries are made of:",
		"    id, timestamp, time in microseconds, arguments array, client IP and port,",
		"    client name",
		"LEN",
		"    Return the length of the slowlog.",
		"RESET",
		"    Reset the slowlog.",
	)
}
