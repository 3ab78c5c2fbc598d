package admin

import (
	"shardis/acl"
	"shardis/cmds"
	"shardis/codec"
	"shardis/server"
	"time"
)

// CLIENT and its subcommands. They all run in the connection's event loop (ExecConn): they
// touch the connection's own state or the server's client registry, never data.

func init() {
	cmds.Register(
		&cmds.Command{Name: "client", Arity: -2, ACL: []string{"slow"}, Group: "connection", Since: "2.4.0",
			Summary: "A container for client connection commands", Complexity: "Depends on subcommand.",
			Exec: cmds.ExecConn,
			Subs: map[string]*cmds.Command{
				"caching": {Arity: 3, Flags: []string{"noscript", "loading", "stale"}, ACL: []string{"slow", "connection"},
					Since: "6.0.0", Summary: "Instruct the server about tracking or not keys in the next request",
					Complexity: "O(1)", Syntax: "<YES | NO>", Exec: cmds.ExecConn, Traits: cmds.TraitKeepsCaching,
					Run: clientCaching},
				"getname": {Arity: 2, Flags: []string{"noscript", "loading", "stale"}, ACL: []string{"slow", "connection"},
					Since: "2.6.9", Summary: "Get the current connection name", Complexity: "O(1)", Exec: cmds.ExecConn,
					Traits: cmds.TraitKeepsCaching, Run: clientGetName},
				"getredir": {Arity: 2, Flags: []string{"noscript", "loading", "stale"}, ACL: []string{"slow", "connection"},
					Since: "6.0.0", Summary: "Get tracking notifications redirection client ID if any",
					Complexity: "O(1)", Exec: cmds.ExecConn, Traits: cmds.TraitKeepsCaching, Run: clientGetRedir},
				"help": {Arity: 2, Flags: []string{"loading", "stale"}, ACL: []string{"slow", "connection"}, Since: "5.0.0",
					Summary: "Show helpful text about the different subcommands", Complexity: "O(1)",
					Exec: cmds.ExecConn, Traits: cmds.TraitKeepsCaching, Run: clientHelp},
				"id": {Arity: 2, Flags: []string{"noscript", "loading", "stale"}, ACL: []string{"slow", "connection"},
					Since: "5.0.0", Summary: "Returns the client ID for the current connection",
					Complexity: "O(1)", Exec: cmds.ExecConn, Traits: cmds.TraitKeepsCaching, Run: clientID},
				"info": {Arity: 2, Flags: []string{"noscript", "loading", "stale"}, ACL: []string{"slow", "connection"},
					Since: "6.2.0", Summary: "Returns information about the current client connection.",
					Complexity: "O(1)", Tips: []string{"nondeterministic_output"}, Exec: cmds.ExecConn,
					Traits: cmds.TraitKeepsCaching, Run: clientInfo},
				"kill": {Arity: -3, Flags: []string{"admin", "noscript", "loading", "stale"},
					ACL: []string{"admin", "slow", "dangerous", "connection"}, Since: "2.4.0",
					Summary:    "Kill the connection of a client",
					Complexity: "O(N) where N is the number of client connections",
					Syntax:     "<ip:port | <[ID client-id] | [TYPE <NORMAL | MASTER | SLAVE | REPLICA | PUBSUB>] | [USER username] | [ADDR ip:port] | [LADDR ip:port] | [SKIPME yes/no] [[ID client-id] | [TYPE <NORMAL | MASTER | SLAVE | REPLICA | PUBSUB>] | [USER username] | [ADDR ip:port] | [LADDR ip:port] | [SKIPME yes/no] ...]>>",
					Exec:       cmds.ExecConn, Traits: cmds.TraitKeepsCaching, RunServer: clientKill},
				"list": {Arity: -2, Flags: []string{"admin", "noscript", "loading", "stale"},
					ACL: []string{"admin", "slow", "dangerous", "connection"}, Since: "2.4.0",
					Summary:    "Get the list of client connections",
					Complexity: "O(N) where N is the number of client connections",
					Syntax:     "[TYPE <NORMAL | MASTER | REPLICA | PUBSUB>] [ID client-id [client-id ...]]",
					Tips:       []string{"nondeterministic_output"}, Exec: cmds.ExecConn, Traits: cmds.TraitKeepsCaching,
					RunServer: clientList},
				"no-evict": {Arity: 3, Flags: []string{"admin", "noscript", "loading", "stale"},
					ACL: []string{"admin", "slow", "dangerous", "connection"}, Since: "7.0.0",
					Summary: "Set client eviction mode for the current connection", Complexity: "O(1)",
					Syntax: "<ON | OFF>", Exec: cmds.ExecConn, Traits: cmds.TraitKeepsCaching, Run: clientNoEvict},
				"no-touch": {Arity: 3, Flags: []string{"noscript", "loading", "stale"}, ACL: []string{"slow", "connection"},
					Since:      "7.2.0",
					Summary:    "Controls whether commands sent by the client affect the LRU/LFU of accessed keys.",
					Complexity: "O(1)", Syntax: "<ON | OFF>", Exec: cmds.ExecConn, Traits: cmds.TraitKeepsCaching,
					Run: clientNoTouch},
				"pause": {Arity: -3, Flags: []string{"admin", "noscript", "loading", "stale"},
					ACL: []string{"admin", "slow", "dangerous", "connection"}, Since: "2.9.50",
					Summary: "Stop processing commands from clients for some time", Complexity: "O(1)",
					Syntax: "timeout [WRITE | ALL]", Exec: cmds.ExecConn, Traits: cmds.TraitKeepsCaching, RunServer: clientPause},
				"reply": {Arity: 3, Flags: []string{"noscript", "loading", "stale"}, ACL: []string{"slow", "connection"},
					Since: "3.2.0", Summary: "Instruct the server whether to reply to commands",
					Complexity: "O(1)", Syntax: "<ON | OFF | SKIP>", Exec: cmds.ExecConn,
					Traits: cmds.TraitAlwaysReplies | cmds.TraitKeepsCaching, Run: clientReply},
				"setinfo": {Arity: 4, Flags: []string{"noscript", "loading", "stale", "sentinel"},
					ACL: []string{"slow", "connection"}, Since: "7.2.0",
					Summary: "Sets information specific to the client or connection.", Complexity: "O(1)",
					Syntax: "<LIB-NAME libname | LIB-VER libver>", Exec: cmds.ExecConn, Traits: cmds.TraitKeepsCaching,
					Run: clientSetInfo},
				"setname": {Arity: 3, Flags: []string{"noscript", "loading", "stale"}, ACL: []string{"slow", "connection"},
					Since: "2.6.9", Summary: "Set the current connection name", Complexity: "O(1)",
					Syntax: "connection-name", Exec: cmds.ExecConn, Traits: cmds.TraitKeepsCaching, Run: clientSetName},
				"tracking": {Arity: -3, Flags: []string{"noscript", "loading", "stale"}, ACL: []string{"slow", "connection"},
					Since: "6.0.0", Summary: "Enable or disable server assisted client side caching support",
					Complexity: "O(1). Some options may introduce additional complexity.",
					Syntax:     "<ON | OFF> [REDIRECT client-id] [PREFIX prefix [PREFIX prefix ...]] [BCAST] [OPTIN] [OPTOUT] [NOLOOP]",
					Exec:       cmds.ExecConn, Traits: cmds.TraitAfterPending | cmds.TraitKeepsCaching, RunServer: clientTracking},
				"trackinginfo": {Arity: 2, Flags: []string{"noscript", "loading", "stale"}, ACL: []string{"slow", "connection"},
					Since:      "6.2.0",
					Summary:    "Return information about server assisted client side caching for the current connection",
					Complexity: "O(1)", Exec: cmds.ExecConn, Traits: cmds.TraitKeepsCaching, Run: clientTrackingInfo},
				"unblock": {Arity: -3, Flags: []string{"admin", "noscript", "loading", "stale"},
					ACL: []string{"admin", "slow", "dangerous", "connection"}, Since: "5.0.0",
					Summary:    "Unblock a client blocked in a blocking command from a different connection",
					Complexity: "O(log N) where N is the number of client connections",
					Syntax:     "client-id [TIMEOUT | ERROR]", Exec: cmds.ExecConn, Traits: cmds.TraitKeepsCaching,
					RunServer: clientUnblock},
				"unpause": {Arity: 2, Flags: []string{"admin", "noscript", "loading", "stale"},
					ACL: []string{"admin", "slow", "dangerous", "connection"}, Since: "6.2.0",
					Summary:    "Resume processing of clients that were paused",
					Complexity: "O(N) Where N is the number of paused clients", Exec: cmds.ExecConn,
					Traits: cmds.TraitKeepsCaching, RunServer: clientUnpause},
			}},
	)
}

func clientID(c *cmds.Ctx) { c.W.Int(c.Client.ID) }

func clientSetName(c *cmds.Ctx) {
	if !cmds.ValidClientName(c.Args[2]) {
		c.Error(cmds.ErrClientName)
		return
	}
	c.Client.SetName(string(c.Args[2]))
	c.W.OK()
}

func clientGetName(c *cmds.Ctx) {
	if name := c.Client.Name(); name != "" {
		c.W.BulkString(name)
		return
	}
	c.W.Null()
}

// Client types of CLIENT LIST/KILL TYPE. A replica's connection is one once its PSYNC or SYNC
// was accepted; a replica's link to its master is no client here, so none is of type master;
// a MONITOR client counts as normal, as in Redis.
const (
	clientTypeNormal = iota
	clientTypeReplica
	clientTypePubSub
	clientTypeMaster
)

func clientTypeByName(b []byte) int {
	switch {
	case cmds.EqualFold(b, "normal"):
		return clientTypeNormal
	case cmds.EqualFold(b, "slave"), cmds.EqualFold(b, "replica"):
		return clientTypeReplica
	case cmds.EqualFold(b, "pubsub"):
		return clientTypePubSub
	case cmds.EqualFold(b, "master"):
		return clientTypeMaster
	}
	return -1
}

func clientTypeOf(cl *server.Client) int {
	if cl.ReplicaLink() {
		return clientTypeReplica
	}
	if cl.PubSub() {
		return clientTypePubSub
	}
	return clientTypeNormal
}

func clientList(c *cmds.Ctx, srv *server.Server) {
	typ := -1
	var ids []int64
	switch {
	case len(c.Args) == 4 && cmds.EqualFold(c.Args[2], "type"):
		if typ = clientTypeByName(c.Args[3]); typ < 0 {
			c.Error("ERR Unknown client type '" + string(c.Args[3]) + "'")
			return
		}
	case len(c.Args) > 3 && cmds.EqualFold(c.Args[2], "id"):
		for _, a := range c.Args[3:] {
			id, ok := codec.ParseInt(a)
			if !ok {
				c.Error("ERR Invalid client ID")
				return
			}
			ids = append(ids, id)
		}
	case len(c.Args) != 2:
		c.Error(cmds.ErrSyntax)
		return
	}
	now := time.Now()
	var out []byte
	if ids != nil {
		// Redis lists the requested ids in the order given, each once per mention.
		for _, id := range ids {
			if cl := srv.Clients.Get(id); cl != nil {
				out = cl.AppendInfo(out, cl == c.Client, now)
			}
		}
	} else {
		for _, cl := range srv.Clients.All() {
			if typ >= 0 && clientTypeOf(cl) != typ {
				continue
			}
			out = cl.AppendInfo(out, cl == c.Client, now)
		}
	}
	c.W.Verbatim("txt", string(out))
}

func clientInfo(c *cmds.Ctx) {
	c.W.Verbatim("txt", string(c.Client.AppendInfo(nil, true, time.Now())))
}

// clientKill implements both forms: CLIENT KILL addr (replies +OK or an error, may kill the
// caller) and CLIENT KILL <filter value>... (replies the count, skips the caller unless
// SKIPME no).
func clientKill(c *cmds.Ctx, srv *server.Server) {
	var addr, laddr string
	var hasAddr, hasLAddr bool
	var id int64
	var user *acl.User
	typ := -1
	skipme := true
	if len(c.Args) == 3 {
		addr, hasAddr = string(c.Args[2]), true
		skipme = false
	} else {
		for i := 2; i < len(c.Args); i += 2 {
			opt := c.Args[i]
			if i+1 >= len(c.Args) {
				c.Error(cmds.ErrSyntax)
				return
			}
			val := c.Args[i+1]
			switch {
			case cmds.EqualFold(opt, "id"):
				n, ok := codec.ParseInt(val)
				if !ok || n < 1 {
					c.Error("ERR client-id should be greater than 0")
					return
				}
				id = n
			case cmds.EqualFold(opt, "type"):
				if typ = clientTypeByName(val); typ < 0 {
					c.Error("ERR Unknown client type '" + string(val) + "'")
					return
				}
			case cmds.EqualFold(opt, "addr"):
				addr, hasAddr = string(val), true
			case cmds.EqualFold(opt, "laddr"):
				laddr, hasLAddr = string(val), true
			case cmds.EqualFold(opt, "user"):
				if user = srv.ACL.Get(string(val)); user == nil {
					c.Error("ERR No such user '" + string(val) + "'")
					return
				}
			case cmds.EqualFold(opt, "skipme"):
				switch {
				case cmds.EqualFold(val, "yes"):
					skipme = true
				case cmds.EqualFold(val, "no"):
					skipme = false
				default:
					c.Error(cmds.ErrSyntax)
					return
				}
			default:
				c.Error(cmds.ErrSyntax)
				return
			}
		}
	}
	killed := 0
	for _, cl := range srv.Clients.All() {
		switch {
		case hasAddr && cl.Addr != addr,
			hasLAddr && cl.LAddr != laddr,
			typ >= 0 && clientTypeOf(cl) != typ,
			id != 0 && cl.ID != id,
			user != nil && cl.User() != user && !(cl.User() == nil && user == srv.ACL.Default()),
			cl == c.Client && skipme:
			continue
		}
		if cl == c.Client {
			// Killing oneself: the reply is still sent, then the connection closes.
			c.Client.Quitting = true
			c.Client.Publish()
		} else if cl.Kill != nil {
			cl.Kill()
		}
		killed++
	}
	if len(c.Args) == 3 {
		if killed == 0 {
			c.Error("ERR No such client")
		} else {
			c.W.OK()
		}
		return
	}
	c.W.Int(int64(killed))
}

// clientSetInfo records the client library's name and version (Redis 7.2's CLIENT SETINFO,
// which client libraries such as go-redis send on connect).
func clientSetInfo(c *cmds.Ctx) {
	attr, val := c.Args[2], c.Args[3]
	isName := cmds.EqualFold(attr, "lib-name")
	if !isName && !cmds.EqualFold(attr, "lib-ver") {
		c.Error("ERR Unrecognized option '" + string(attr) + "'")
		return
	}
	if !cmds.ValidClientName(val) {
		c.Error("ERR " + string(attr) + " cannot contain spaces, newlines or special characters.")
		return
	}
	v := string(val)
	if isName {
		c.Client.SetLib(&v, nil)
	} else {
		c.Client.SetLib(nil, &v)
	}
	c.W.OK()
}

// clientOnOff parses ON/OFF, replying a syntax error otherwise.
func clientOnOff(c *cmds.Ctx) (on, ok bool) {
	switch {
	case cmds.EqualFold(c.Args[2], "on"):
		return true, true
	case cmds.EqualFold(c.Args[2], "off"):
		return false, true
	}
	c.Error(cmds.ErrSyntax)
	return false, false
}

func clientNoEvict(c *cmds.Ctx) {
	if on, ok := clientOnOff(c); ok {
		c.Client.NoEvict = on
		c.Client.Publish()
		c.W.OK()
	}
}

func clientNoTouch(c *cmds.Ctx) {
	if on, ok := clientOnOff(c); ok {
		c.Client.NoTouch = on
		c.Client.Publish()
		c.W.OK()
	}
}

// clientReply sets the reply mode. OFF and SKIP send no reply of their own; the reactor
// drops the replies of the commands that follow according to Client.ReplyMode.
func clientReply(c *cmds.Ctx) {
	cl := c.Client
	switch {
	case cmds.EqualFold(c.Args[2], "on"):
		cl.ReplyMode = server.ReplyOn
		c.W.OK()
	case cmds.EqualFold(c.Args[2], "off"):
		cl.ReplyMode = server.ReplyOff
		c.W.Buf = c.W.Buf[:0]
	case cmds.EqualFold(c.Args[2], "skip"):
		if cl.ReplyMode != server.ReplyOff { // SKIP while OFF changes nothing, as in Redis
			cl.ReplyMode = server.ReplySkip
		}
		c.W.Buf = c.W.Buf[:0]
	default:
		c.Error(cmds.ErrSyntax)
	}
}

func clientPause(c *cmds.Ctx, srv *server.Server) {
	if len(c.Args) > 4 {
		cmds.SubcommandSyntaxError(c)
		return
	}
	all := true
	if len(c.Args) == 4 {
		switch {
		case cmds.EqualFold(c.Args[3], "write"):
			all = false
		case cmds.EqualFold(c.Args[3], "all"):
		default:
			c.Error("ERR CLIENT PAUSE mode must be WRITE or ALL")
			return
		}
	}
	ms, ok := codec.ParseInt(c.Args[2])
	if !ok {
		c.Error("ERR timeout is not an integer or out of range")
		return
	}
	if ms < 0 {
		c.Error("ERR timeout is negative")
		return
	}
	now := time.Now().UnixMilli()
	until := now + ms
	if ms > (1<<63-1)-now {
		until = 1<<63 - 1
	}
	if ms > 0 {
		srv.Pause(until, all)
	}
	c.W.OK()
}

func clientUnpause(c *cmds.Ctx, srv *server.Server) {
	srv.Unpause()
	c.W.OK()
}

func clientHelp(c *cmds.Ctx) {
	cmds.HelpReply(c,
		"CACHING (YES|NO)",
		"    Enable/disable tracking of the keys for next command in OPTIN/OPTOUT modes.",
		"GETREDIR",
		"    Return the client ID we are redirecting to when tracking is enabled.",
		"GETNAME",
		"    Return the name of the current connection.",
		"ID",
		"    Return the ID of the current connection.",
		"INFO",
		"    Return information about the current client connection.",
		"KILL <ip:port>",
		"    Kill connection made from <ip:port>.",
		"KILL <option> <value> [<option> <value> [...]]",
		"    Kill connections. Options are:",
		"    * ADDR (<ip:port>|<unixsocket>:0)",
		"      Kill connections made from the specified address",
		"    * LADDR (<ip:port>|<unixsocket>:0)",
		"      Kill connections made to specified local address",
		"    * TYPE (NORMAL|MASTER|REPLICA|PUBSUB)",
		"      Kill connections by type.",
		"    * USER <username>",
		"      Kill connections authenticated by <username>.",
		"    * SKIPME (YES|NO)",
		"      Skip killing current connection (default: yes).",
		"LIST [options ...]",
		"    Return information about client connections. Options:",
		"    * TYPE (NORMAL|MASTER|REPLICA|PUBSUB)",
		"      Return clients of specified type.",
		"UNPAUSE",
		"    Stop the current client pause, resuming traffic.",
		"PAUSE <timeout> [WRITE|ALL]",
		"    Suspend all, or just write, clients for <timeout> milliseconds.",
		"REPLY (ON|OFF|SKIP)",
		"    Control the replies sent to the current connection.",
		"SETNAME <name>",
		"    Assign the name <name> to the current connection.",
		"SETINFO <option> <value>",
		"    Set client meta attr. Options are:",
		"    * LIB-NAME: the client lib name.",
		"    * LIB-VER: the client lib version.",
		"UNBLOCK <clientid> [TIMEOUT|ERROR]",
		"    Unblock the specified blocked client.",
		"TRACKING (ON|OFF) [REDIRECT <id>] [BCAST] [PREFIX <prefix> [...]]",
		"         [OPTIN] [OPTOUT] [NOLOOP]",
		"    Control server assisted client side caching.",
		"TRACKINGINFO",
		"    Report tracking status for the current connection.",
		"NO-EVICT (ON|OFF)",
		"    Protect current client connection from eviction.",
		"NO-TOUCH (ON|OFF)",
		"    Will not touch LRU/LFU stats when this mode is on.",
	)
}

// clientUnblock is CLIENT UNBLOCK client-id [TIMEOUT | ERROR]: it wakes the client's blocked
// command as if it timed out, or with an UNBLOCKED error, and answers 1, or 0 when that client
// is not blocked.
func clientUnblock(c *cmds.Ctx, srv *server.Server) {
	if len(c.Args) > 4 {
		cmds.SubcommandSyntaxError(c)
		return
	}
	reason := server.UnblockTimeout
	if len(c.Args) == 4 {
		switch {
		case cmds.EqualFold(c.Args[3], "timeout"):
		case cmds.EqualFold(c.Args[3], "error"):
			reason = server.UnblockError
		default:
			c.Error("ERR CLIENT UNBLOCK reason should be TIMEOUT or ERROR")
			return
		}
	}
	id, ok := codec.ParseInt(c.Args[2])
	if !ok {
		c.Error(cmds.ErrNotInt)
		return
	}
	if target := srv.Clients.Get(id); target != nil {
		if u := target.Blocked(); u != nil && u.Unblock(reason) {
			c.W.Int(1)
			return
		}
	}
	c.W.Int(0)
}
