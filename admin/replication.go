package admin

import (
	"strconv"
	"strings"
	"time"

	"shardis/cmds"
	"shardis/server"
)

// Replication's commands: REPLICAOF (SLAVEOF), ROLE, WAIT, and the ones a replica sends its
// master (REPLCONF, PSYNC, SYNC). What they do is package replication's, reached through
// server.Replication.

func init() {
	replicaof := func(name, since string) *cmds.Command {
		c := &cmds.Command{Name: name, Arity: 3, Flags: []string{"admin", "noscript", "stale", "no_async_loading"},
			ACL: []string{"admin", "slow", "dangerous"}, Group: "server", Since: since,
			Summary:    "Make the server a replica of another instance, or promote it as master.",
			Complexity: "O(1)", Syntax: "<host port | NO ONE>", Exec: cmds.ExecServer, RunServer: replicaofCommand}
		if name == "slaveof" {
			c.DocFlags, c.DeprecatedSince, c.ReplacedBy = []string{"deprecated"}, "5.0.0", "`REPLICAOF`"
		}
		return c
	}
	cmds.Register(
		replicaof("replicaof", "5.0.0"),
		replicaof("slaveof", "1.0.0"),
		&cmds.Command{Name: "role", Arity: 1, Flags: []string{"noscript", "loading", "stale", "fast"},
			ACL: []string{"admin", "fast", "dangerous"}, Group: "server", Since: "2.8.12",
			Summary:    "Return the role of the instance in the context of replication",
			Complexity: "O(1)", Exec: cmds.ExecServer, RunServer: roleCommand},
		&cmds.Command{Name: "replconf", Arity: -1, Flags: []string{"admin", "noscript", "loading", "stale", "allow_busy"},
			ACL: []string{"admin", "slow", "dangerous"}, Group: "server", Since: "3.0.0",
			Summary:    "An internal command for configuring the replication stream",
			Complexity: "O(1)", DocFlags: []string{"syscmd"}, Exec: cmds.ExecServer, RunServer: replconfCommand},
		&cmds.Command{Name: "psync", Arity: -3, Flags: []string{"admin", "noscript", "no_async_loading", "no_multi"},
			ACL: []string{"admin", "slow", "dangerous"}, Group: "server", Since: "2.8.0",
			Summary: "Internal command used for replication", Syntax: "replicationid offset",
			Exec: cmds.ExecServer, RunServer: psyncCommand},
		&cmds.Command{Name: "sync", Arity: 1, Flags: []string{"admin", "noscript", "no_async_loading", "no_multi"},
			ACL: []string{"admin", "slow", "dangerous"}, Group: "server", Since: "1.0.0",
			Summary: "Internal command used for replication", Exec: cmds.ExecServer, RunServer: psyncCommand},
		&cmds.Command{Name: "failover", Arity: -1, Flags: []string{"admin", "noscript", "stale"},
			ACL: []string{"admin", "slow", "dangerous"}, Group: "server", Since: "6.2.0",
			Summary:    "Start a coordinated failover between this server and one of its replicas.",
			Complexity: "O(1)", Syntax: "[TO host port [FORCE]] [ABORT] [TIMEOUT milliseconds]",
			Exec: cmds.ExecServer, RunServer: failoverCommand},
		&cmds.Command{Name: "wait", Arity: 3, Flags: []string{"noscript"},
			ACL: []string{"slow", "connection"}, Group: "generic", Since: "3.0.0",
			Summary:    "Wait for the synchronous replication of all the write commands sent in the context of the current connection",
			Complexity: "O(1)", Syntax: "numreplicas timeout",
			Tips: []string{"request_policy:all_shards", "response_policy:agg_min"},
			Exec: cmds.ExecServer, RunServer: waitCommand},
	)
}

// errNoReplication answers the replication commands on a server made without replication
// (an internal one in tests).
const errNoReplication = "ERR replication is not available on this server"

func replicaofCommand(c *cmds.Ctx, srv *server.Server) {
	if srv.Replication == nil {
		c.Error(errNoReplication)
		return
	}
	host, portArg := string(c.Args[1]), string(c.Args[2])
	if strings.EqualFold(host, "no") && strings.EqualFold(portArg, "one") {
		if err := srv.Replication.ReplicaOf("", 0); err != nil {
			c.Error("ERR " + err.Error())
			return
		}
		c.W.OK()
		return
	}
	port, err := strconv.ParseInt(portArg, 10, 64)
	if err != nil {
		c.Error(cmds.ErrNotInt)
		return
	}
	if port < 0 || port > 65535 {
		c.Error("ERR Invalid master port")
		return
	}
	in := srv.Replication.Info()
	if in.Replica && strings.EqualFold(in.MasterHost, host) && in.MasterPort == int(port) {
		c.W.Simple("OK Already connected to specified master")
		return
	}
	if err := srv.Replication.ReplicaOf(host, int(port)); err != nil {
		c.Error("ERR " + err.Error())
		return
	}
	c.W.OK()
}

// roleCommand answers ROLE as Redis: master, offset, replicas; or slave, host, port, link
// state, offset.
func roleCommand(c *cmds.Ctx, srv *server.Server) {
	in := replicationInfo(srv)
	if in.Replica {
		c.W.ArrayLen(5)
		c.W.BulkString("slave")
		c.W.BulkString(in.MasterHost)
		c.W.Int(int64(in.MasterPort))
		state := "connected"
		switch {
		case in.SyncInProgress:
			state = "sync"
		case !in.LinkUp:
			state = "connect"
		}
		c.W.BulkString(state)
		c.W.Int(int64(in.Offset))
		return
	}
	c.W.ArrayLen(3)
	c.W.BulkString("master")
	c.W.Int(int64(in.Offset))
	c.W.ArrayLen(len(in.Replicas))
	for _, r := range in.Replicas {
		c.W.ArrayLen(3)
		c.W.BulkString(r.IP)
		c.W.BulkString(strconv.Itoa(r.Port))
		c.W.BulkString(strconv.FormatUint(r.Offset, 10))
	}
}

func replconfCommand(c *cmds.Ctx, srv *server.Server) {
	if c.Client == nil || srv.Replication == nil {
		c.Error(errNoReplication)
		return
	}
	args := make([]string, len(c.Args)-1)
	for i, a := range c.Args[1:] {
		args[i] = string(a)
	}
	switch reply := srv.Replication.Replconf(c.Client, args); {
	case reply == "":
		// REPLCONF ACK: no reply, as in Redis.
	case reply == "OK":
		c.W.OK()
	default:
		c.Error(reply)
	}
}

// psyncCommand serves PSYNC and SYNC: the reply line and the stream after it are written by the
// replica's feed, so the command itself answers nothing unless it refuses.
func psyncCommand(c *cmds.Ctx, srv *server.Server) {
	if c.Client == nil || srv.Replication == nil {
		c.Error(errNoReplication)
		return
	}
	replid, offset := "?", int64(-1)
	failover := false
	if len(c.Args) > 3 {
		if len(c.Args) != 4 || !cmds.EqualFold(c.Args[3], "failover") {
			c.Error(cmds.ErrSyntax)
			return
		}
		failover = true
	}
	if len(c.Args) >= 3 {
		replid = string(c.Args[1])
		var err error
		if offset, err = strconv.ParseInt(string(c.Args[2]), 10, 64); err != nil {
			c.Error(cmds.ErrNotInt)
			return
		}
	}
	req := server.PsyncRequest{ReplID: replid, Offset: offset, Failover: failover, Sync: len(c.Args) == 1}
	if msg := srv.Replication.Psync(c.Client, req); msg != "" {
		c.Error(msg)
		return
	}
	c.Client.SetReplicaLink()
}

func waitCommand(c *cmds.Ctx, srv *server.Server) {
	n, err := strconv.ParseInt(string(c.Args[1]), 10, 64)
	if err != nil {
		c.Error(cmds.ErrNotInt)
		return
	}
	ms, err := strconv.ParseInt(string(c.Args[2]), 10, 64)
	if err != nil {
		c.Error("ERR timeout is not an integer or out of range")
		return
	}
	if ms < 0 {
		c.Error("ERR timeout is negative")
		return
	}
	if srv.Replication == nil {
		c.W.Int(0)
		return
	}
	if srv.Replication.Info().Replica {
		c.Error("ERR WAIT cannot be used with replica instances. Please also note that since Redis 4.0 if a replica is configured to be writable (which is not the default) writes to replicas are just local and are not propagated.")
		return
	}
	gone := make(chan struct{})
	if c.Client != nil && !c.Client.OnGone(func() { close(gone) }) {
		return
	}
	got := srv.Replication.Wait(int(n), time.Duration(ms)*time.Millisecond, gone)
	c.W.Int(int64(got))
}

// failoverCommand parses FAILOVER as Redis's failoverCommand does, in its order of checks.
func failoverCommand(c *cmds.Ctx, srv *server.Server) {
	if srv.Replication == nil {
		c.Error(errNoReplication)
		return
	}
	if len(c.Args) == 2 && cmds.EqualFold(c.Args[1], "abort") {
		if msg := srv.Replication.AbortFailover(); msg != "" {
			c.Error(msg)
			return
		}
		c.W.OK()
		return
	}
	var timeout int64
	var host string
	var port int64
	force := false
	for j := 1; j < len(c.Args); j++ {
		switch {
		case cmds.EqualFold(c.Args[j], "timeout") && j+1 < len(c.Args) && timeout == 0:
			v, err := strconv.ParseInt(string(c.Args[j+1]), 10, 64)
			if err != nil {
				c.Error(cmds.ErrNotInt)
				return
			}
			if v <= 0 {
				c.Error("ERR FAILOVER timeout must be greater than 0")
				return
			}
			timeout = v
			j++
		case cmds.EqualFold(c.Args[j], "to") && j+2 < len(c.Args) && host == "":
			v, err := strconv.ParseInt(string(c.Args[j+2]), 10, 64)
			if err != nil {
				c.Error(cmds.ErrNotInt)
				return
			}
			host, port = string(c.Args[j+1]), v
			j += 2
		case cmds.EqualFold(c.Args[j], "force") && !force:
			force = true
		default:
			c.Error(cmds.ErrSyntax)
			return
		}
	}
	if msg := srv.Replication.Failover(host, int(port), force, time.Duration(timeout)*time.Millisecond); msg != "" {
		c.Error(msg)
		return
	}
	c.W.OK()
}
