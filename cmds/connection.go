package cmds

import (
	"shardis/acl"
	"shardis/codec"
	"shardis/server"
)

// RedisVersion is the Redis version shardis reports (HELLO, INFO): clients that gate features
// on the server version then use what Redis 7.0 offers.
const RedisVersion = "7.0.15"

func init() {
	Register(
		&Command{Name: "ping", Arity: -1, Flags: []string{"fast"}, ACL: []string{"fast", "connection"},
			Group: "connection", Since: "1.0.0", Summary: "Ping the server", Complexity: "O(1)",
			Syntax: "[message]",
			Tips:   []string{"request_policy:all_shards", "response_policy:all_succeeded"}, Exec: ExecConn,
			Traits: TraitSubscribedMode | TraitDeniedOnDiskError, Run: ping},
		&Command{Name: "echo", Arity: 2, Flags: []string{"loading", "stale", "fast"},
			ACL: []string{"fast", "connection"}, Group: "connection", Since: "1.0.0",
			Summary: "Echo the given string", Complexity: "O(1)", Syntax: "message", Exec: ExecConn,
			Run: echo},
		&Command{Name: "quit", Arity: -1,
			Flags: []string{"noscript", "loading", "stale", "fast", "no_auth", "allow_busy"},
			ACL:   []string{"fast", "connection"}, Group: "connection", Since: "1.0.0",
			Summary: "Close the connection", Complexity: "O(1)", Exec: ExecConn,
			Traits: TraitTxControl | TraitSubscribedMode, Run: quitCommand},
		&Command{Name: "reset", Arity: 1,
			Flags: []string{"noscript", "loading", "stale", "fast", "no_auth", "allow_busy"},
			ACL:   []string{"fast", "connection"}, Group: "connection", Since: "6.2.0",
			Summary: "Reset the connection", Complexity: "O(1)", Exec: ExecConn,
			Traits:    TraitTxControl | TraitAlwaysReplies | TraitAfterPending | TraitSubscribedMode,
			RunServer: resetCommand},
		&Command{Name: "hello", Arity: -1,
			Flags: []string{"noscript", "loading", "stale", "fast", "no_auth", "allow_busy"},
			ACL:   []string{"fast", "connection"}, Group: "connection", Since: "6.0.0",
			Summary: "Handshake with Redis", Complexity: "O(1)",
			Syntax: "[protover [AUTH username password] [SETNAME clientname]]", Exec: ExecConn,
			Traits: TraitAfterPending, Secret: helloSecret, RunServer: helloCommand},
		&Command{Name: "auth", Arity: -2,
			Flags: []string{"noscript", "loading", "stale", "fast", "no_auth", "allow_busy"},
			ACL:   []string{"fast", "connection"}, Group: "connection", Since: "1.0.0",
			Summary:    "Authenticate to the server",
			Complexity: "O(N) where N is the number of passwords defined for the user",
			Syntax:     "[username] password", Exec: ExecConn, Traits: TraitAfterPending,
			Secret: func(_ [][]byte, i int) bool { return i >= 1 }, RunServer: authCommand},
	)
}

// helloSecret: the user and password after HELLO's AUTH.
func helloSecret(args [][]byte, i int) bool {
	for j := 2; j+2 < len(args); j++ {
		if EqualFold(args[j], "auth") {
			return i == j+1 || i == j+2
		}
	}
	return false
}

func ping(c *Ctx) {
	if len(c.Args) <= 2 && !c.W.RESP3 && c.Client != nil && c.Client.PubSub() {
		// RESP2 subscribed mode: PING answers in the shape of a message, as Redis does.
		c.W.ArrayLen(2)
		c.W.BulkString("pong")
		if len(c.Args) > 1 {
			c.W.Bulk(c.Args[1])
		} else {
			c.W.BulkString("")
		}
		return
	}
	switch len(c.Args) {
	case 1:
		c.W.Simple("PONG")
	case 2:
		c.W.Bulk(c.Args[1])
	default:
		c.Error(ArityError(c.Cmd))
	}
}

func echo(c *Ctx) { c.W.Bulk(c.Args[1]) }

// quitCommand replies +OK; the reactor closes the connection once it is written and runs
// nothing parsed after it.
func quitCommand(c *Ctx) {
	c.Client.Quitting = true
	c.Client.Publish()
	c.W.OK()
}

// connResetHooks run on RESET for per-connection state kept outside Client by other command
// families (a MULTI in progress, watched keys, subscriptions, tracking), which RESET must drop
// as Redis does. Register with onConnReset from the family's init.
var connResetHooks []func(c *Ctx, srv *server.Server)

// OnConnReset registers fn to run (in the event loop) when a client sends RESET.
func OnConnReset(fn func(c *Ctx, srv *server.Server)) { connResetHooks = append(connResetHooks, fn) }

// resetCommand returns the connection to the state of a new one, as Redis's RESET: db 0,
// RESP2, replies on, no name, no-evict/no-touch off, out of MONITOR, and unauthenticated again
// when a password is required.
func resetCommand(c *Ctx, srv *server.Server) {
	cl := c.Client
	for _, fn := range connResetHooks {
		fn(c, srv)
	}
	if cl.Monitor {
		cl.Monitor = false
		srv.Clients.RemoveMonitor(cl)
	}
	cl.DB = 0
	cl.RESP3 = false
	cl.ReplyMode = server.ReplyOn
	cl.NoEvict = false
	cl.NoTouch = false
	cl.SetName("")
	cl.SetUser(srv.ACL.Default())
	cl.Authed = !srv.ACL.AuthRequired()
	cl.Publish()
	c.W.RESP3 = false
	c.W.Simple("RESET")
}

// Errors of AUTH and HELLO, as Redis words them.
const (
	errWrongPass   = "WRONGPASS invalid username-password pair or user is disabled."
	errAuthNoPass  = "ERR AUTH <password> called without any password configured for the default user. Are you sure your configuration is correct?"
	errHelloNoAuth = "NOAUTH HELLO must be called with the client already authenticated, otherwise the HELLO AUTH <user> <pass> option can be used to authenticate the client and select the RESP protocol version at the same time"
	ErrClientName  = "ERR Client names cannot contain spaces, newlines or special characters."
)

// connAuthenticate authenticates the connection as user with pass, as AUTH and HELLO AUTH
// do; a failure is logged in the ACL log (the object is the command's name as sent).
func connAuthenticate(c *Ctx, srv *server.Server, user, pass []byte) bool {
	u := srv.ACL.Authenticate(user, pass)
	if u == nil {
		ctx := acl.ContextToplevel
		if c.Client.Multi != nil {
			ctx = acl.ContextMulti
		}
		logACL(srv, c.Client, acl.DeniedAuth, ctx, string(c.Args[0]), string(user), true)
		return false
	}
	c.Client.SetUser(u)
	c.Client.Authed = true
	return true
}

func authCommand(c *Ctx, srv *server.Server) {
	var user, pass []byte
	switch len(c.Args) {
	case 2:
		if srv.ACL.Default().NoPass() {
			c.Error(errAuthNoPass)
			return
		}
		user, pass = []byte("default"), c.Args[1]
	case 3:
		user, pass = c.Args[1], c.Args[2]
	default:
		c.Error(ErrSyntax)
		return
	}
	if !connAuthenticate(c, srv, user, pass) {
		c.Error(errWrongPass)
		return
	}
	c.W.OK()
}

// ValidClientName reports whether name is a valid connection name: printable ASCII, no spaces.
func ValidClientName(name []byte) bool {
	for _, ch := range name {
		if ch < '!' || ch > '~' {
			return false
		}
	}
	return true
}

func helloCommand(c *Ctx, srv *server.Server) {
	cl := c.Client
	ver := int64(0)
	next := 1
	if len(c.Args) >= 2 {
		v, ok := codec.ParseInt(c.Args[1])
		if !ok {
			c.Error("ERR Protocol version is not an integer or out of range")
			return
		}
		if v < 2 || v > 3 {
			c.Error("NOPROTO unsupported protocol version")
			return
		}
		ver, next = v, 2
	}
	var user, pass, name []byte
	for j := next; j < len(c.Args); j++ {
		more := len(c.Args) - 1 - j
		switch {
		case EqualFold(c.Args[j], "auth") && more >= 2:
			user, pass = c.Args[j+1], c.Args[j+2]
			j += 2
		case EqualFold(c.Args[j], "setname") && more >= 1:
			name = c.Args[j+1]
			j++
		default:
			c.Error("ERR Syntax error in HELLO option '" + string(c.Args[j]) + "'")
			return
		}
	}
	if user != nil && !connAuthenticate(c, srv, user, pass) {
		c.Error(errWrongPass)
		return
	}
	if !cl.Authed && srv.ACL.AuthRequired() {
		c.Error(errHelloNoAuth)
		return
	}
	if name != nil {
		if !ValidClientName(name) {
			c.Error(ErrClientName)
			return
		}
		cl.SetName(string(name))
	}
	if ver != 0 {
		cl.RESP3 = ver == 3
		if cl.Sub != nil {
			cl.Sub.RESP3.Store(cl.RESP3)
		}
		cl.Publish()
	}
	// The reply already uses the protocol just chosen.
	c.W.RESP3 = cl.RESP3
	proto := int64(2)
	if cl.RESP3 {
		proto = 3
	}
	c.W.MapLen(7)
	c.W.BulkString("server")
	c.W.BulkString("redis")
	c.W.BulkString("version")
	c.W.BulkString(RedisVersion)
	c.W.BulkString("proto")
	c.W.Int(proto)
	c.W.BulkString("id")
	c.W.Int(cl.ID)
	c.W.BulkString("mode")
	c.W.BulkString("standalone")
	c.W.BulkString("role")
	c.W.BulkString("master")
	c.W.BulkString("modules")
	c.W.ArrayLen(0)
}
