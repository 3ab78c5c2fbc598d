package cmds

import (
	"crypto/rand"
	"encoding/hex"
	"log"
	"strings"
	"time"

	"shardis/acl"
	"shardis/cmdspec"
	"shardis/codec"
	"shardis/pubsub"
	"shardis/server"
)

// ACL: users and their permissions (package acl holds them; these are the commands and the
// glue between the command table and the permission check). The check itself runs in the
// reactor before a command is queued or run (Command.ACLCheck), in EXEC for each queued
// command, and in redis.call.

func init() {
	acl.SetCommands(buildACLTable)
	Register(
		&Command{Name: "acl", Arity: -2, ACL: []string{"slow"}, Group: "server", Since: "6.0.0",
			Summary: "A container for Access List Control commands", Complexity: "Depends on subcommand.",
			Exec: ExecConn,
			// Every subcommand runs in the loop (ExecConn), but in order with the pipeline
			// (TraitAfterPending): a change of users must not overtake a script or EXEC queued
			// before it, nor a read overtake a change (CONFIG SET requirepass) queued before it.
			Subs: map[string]*Command{
				"cat": {Arity: -2, Flags: []string{"noscript", "loading", "stale"}, ACL: []string{"slow"}, Since: "6.0.0",
					Summary:    "List the ACL categories or the commands inside a category",
					Complexity: "O(1) since the categories and commands are a fixed set.",
					Syntax:     "[categoryname]", Exec: ExecConn, Traits: TraitAfterPending, Run: aclCat},
				"deluser": {Arity: -3, Flags: []string{"admin", "noscript", "loading", "stale"},
					ACL: []string{"admin", "slow", "dangerous"}, Since: "6.0.0",
					Summary:    "Remove the specified ACL users and the associated rules",
					Complexity: "O(1) amortized time considering the typical user.",
					Syntax:     "username [username ...]", Exec: ExecConn, Traits: TraitAfterPending, RunServer: aclDelUser},
				"dryrun": {Arity: -4, Flags: []string{"admin", "noscript", "loading", "stale"},
					ACL: []string{"admin", "slow", "dangerous"}, Since: "7.0.0",
					Summary:    "Returns whether the user can execute the given command without executing the command.",
					Complexity: "O(1).", Syntax: "username command [arg [arg ...]]", Exec: ExecConn,
					Traits: TraitAfterPending, RunServer: aclDryRun},
				"genpass": {Arity: -2, Flags: []string{"noscript", "loading", "stale"}, ACL: []string{"slow"}, Since: "6.0.0",
					Summary: "Generate a pseudorandom secure password to use for ACL users", Complexity: "O(1)",
					Syntax: "[bits]", Exec: ExecConn, Traits: TraitAfterPending, Run: aclGenPass},
				"getuser": {Arity: 3, Flags: []string{"admin", "noscript", "loading", "stale"},
					ACL: []string{"admin", "slow", "dangerous"}, Since: "6.0.0",
					Summary:    "Get the rules for a specific ACL user",
					Complexity: "O(N). Where N is the number of password, command and pattern rules that the user has.",
					Syntax:     "username", Exec: ExecConn, Traits: TraitAfterPending, RunServer: aclGetUser},
				"help": {Arity: 2, Flags: []string{"loading", "stale"}, ACL: []string{"slow"}, Since: "6.0.0",
					Summary: "Show helpful text about the different subcommands", Complexity: "O(1)",
					Exec: ExecConn, Traits: TraitAfterPending, Run: aclHelp},
				"list": {Arity: 2, Flags: []string{"admin", "noscript", "loading", "stale"},
					ACL: []string{"admin", "slow", "dangerous"}, Since: "6.0.0",
					Summary:    "List the current ACL rules in ACL config file format",
					Complexity: "O(N). Where N is the number of configured users.", Exec: ExecConn,
					Traits: TraitAfterPending, RunServer: aclList},
				"load": {Arity: 2, Flags: []string{"admin", "noscript", "loading", "stale"},
					ACL: []string{"admin", "slow", "dangerous"}, Since: "6.0.0",
					Summary:    "Reload the ACLs from the configured ACL file",
					Complexity: "O(N). Where N is the number of configured users.", Exec: ExecConn,
					Traits: TraitAfterPending, RunServer: aclLoad},
				"log": {Arity: -2, Flags: []string{"admin", "noscript", "loading", "stale"},
					ACL: []string{"admin", "slow", "dangerous"}, Since: "6.0.0",
					Summary:    "List latest events denied because of ACLs in place",
					Complexity: "O(N) with N being the number of entries shown.", Syntax: "[count | RESET]",
					Exec: ExecConn, Traits: TraitAfterPending, RunServer: aclLog},
				"save": {Arity: 2, Flags: []string{"admin", "noscript", "loading", "stale"},
					ACL: []string{"admin", "slow", "dangerous"}, Since: "6.0.0",
					Summary:    "Save the current ACL rules in the configured ACL file",
					Complexity: "O(N). Where N is the number of configured users.", Exec: ExecConn,
					Traits: TraitAfterPending, RunServer: aclSave},
				"setuser": {Arity: -3, Flags: []string{"admin", "noscript", "loading", "stale"},
					ACL: []string{"admin", "slow", "dangerous"}, Since: "6.0.0",
					Summary:    "Modify or create the rules for a specific ACL user",
					Complexity: "O(N). Where N is the number of rules provided.",
					Syntax:     "username [rule [rule ...]]", Exec: ExecConn, Traits: TraitAfterPending,
					// The user name and rules (passwords) of ACL SETUSER are not kept by SLOWLOG.
					Secret: func(_ [][]byte, i int) bool { return i >= 2 }, RunServer: aclSetUser},
				"users": {Arity: 2, Flags: []string{"admin", "noscript", "loading", "stale"},
					ACL: []string{"admin", "slow", "dangerous"}, Since: "6.0.0",
					Summary:    "List the username of all the configured ACL rules",
					Complexity: "O(N). Where N is the number of configured users.", Exec: ExecConn,
					Traits: TraitAfterPending, RunServer: aclUsers},
				"whoami": {Arity: 2, Flags: []string{"noscript", "loading", "stale"}, ACL: []string{"slow"}, Since: "6.0.0",
					Summary:    "Return the name of the user associated to the current connection",
					Complexity: "O(1)", Exec: ExecConn, Traits: TraitAfterPending, RunServer: aclWhoAmI},
			}},
	)
}

// buildACLTable makes package acl's view of the command table, once every command is
// registered, and links each Command to its entry.
func buildACLTable() *acl.Table {
	conv := func(cmd *Command) *acl.Command {
		var cats uint64
		for _, c := range cmd.ACL {
			cats |= acl.CategoryBit(c)
		}
		a := &acl.Command{Name: cmd.Name, Categories: cats, NoAuth: cmd.Has(FlagNoAuth)}
		cmd.acl = a
		return a
	}
	top := make([]*acl.Command, 0, len(table))
	for _, cmd := range table {
		a := conv(cmd)
		for _, sub := range cmd.Subs {
			a.Subs = append(a.Subs, conv(sub))
		}
		top = append(top, a)
	}
	return acl.NewTable(top)
}

// aclCommand returns cmd's entry in ACL's table. acl.Commands builds the table (linking
// every command) once; calling it first orders this read after those writes.
func (cmd *Command) aclCommand() *acl.Command {
	acl.Commands()
	return cmd.acl
}

// ChannelArgs says which arguments of a pub/sub command are channels, for ACL's channel
// permissions.
type ChannelArgs uint8

// Channel arguments.
const (
	NoChannels        ChannelArgs = iota
	PublishChannel                // the first argument (PUBLISH, SPUBLISH)
	SubscribeChannels             // every argument (SUBSCRIBE, SSUBSCRIBE)
	SubscribePatterns             // every argument, as patterns (PSUBSCRIBE)
)

// ACLCheck returns whether user u may run cmd with args (args[0] is the command name), and
// the position in args of the key or channel denied. The caller checks u.Unrestricted
// first: that is the common case and costs one load.
func (cmd *Command) ACLCheck(u *acl.User, args [][]byte) (acl.Reason, int) {
	r := cmd.aclRequest(u, args, true)
	return u.Check(&r)
}

// ACLFullKeyAccess reports whether user u may run cmd with args with read access to every
// key (Redis's ACLUserCheckCmdWithUnrestrictedKeyAccess): what SORT needs to follow BY and
// GET patterns, which name keys no key spec declares. A nil user (binlog replay, internal
// callers) has it.
func (cmd *Command) ACLFullKeyAccess(u *acl.User, args [][]byte) bool {
	if u == nil || u.Unrestricted() {
		return true
	}
	r := cmd.aclRequest(u, args, true)
	return u.FullKeyAccess(&r, acl.PermRead)
}

// aclRequest is what ACL checks of cmd with args: its key (unless !withKeys) and channel
// arguments, when some selector of u does not allow them all.
func (cmd *Command) aclRequest(u *acl.User, args [][]byte, withKeys bool) acl.Request {
	r := acl.Request{Cmd: cmd.aclCommand(), Args: args}
	if u.NeedsKeys() {
		if r.HasKeys = withKeys && cmd.hasKeys(); r.HasKeys {
			r.Keys = aclKeyRefs(cmd, args)
		}
		switch cmd.Channels {
		case PublishChannel:
			if len(args) > 1 { // redis.acl_check_cmd checks no arity
				r.Channels = []acl.ChannelRef{{Pos: 1}}
			}
		case SubscribeChannels, SubscribePatterns:
			for i := 1; i < len(args); i++ {
				r.Channels = append(r.Channels, acl.ChannelRef{Pos: i, Pattern: cmd.Channels == SubscribePatterns})
			}
		}
	}
	return r
}

// aclKeyRefs returns the key arguments of args with the access their key specs declare
// (COMMAND GETKEYSANDFLAGS's flags): access reads, insert, delete and update write.
func aclKeyRefs(cmd *Command, args [][]byte) []acl.KeyRef {
	keys := cmd.keysWithFlags(args)
	refs := make([]acl.KeyRef, 0, len(keys))
	next := 1 // keys come in argument order: each search starts after the last key found
	for _, k := range keys {
		pos := argPosition(args, k.Key, next)
		if pos < 0 {
			continue
		}
		next = pos + 1
		var perm acl.Perm
		if k.Flags&cmdspec.Access != 0 {
			perm |= acl.PermRead
		}
		if k.Flags&(cmdspec.Insert|cmdspec.Delete|cmdspec.Update) != 0 {
			perm |= acl.PermWrite
		}
		refs = append(refs, acl.KeyRef{Pos: pos, Perm: perm})
	}
	return refs
}

// argPosition returns the index in args of key (the same bytes in memory, else the same
// text), searching from 'from' to the end and then from 1, or -1.
func argPosition(args [][]byte, key []byte, from int) int {
	n := len(args) - 1
	for step := 0; step < n; step++ {
		i := 1 + (from-1+step)%n
		if cmdspec.SameArg(args[i], key) {
			return i
		}
	}
	return -1
}

// NoPermError is the error a client gets for a command its user may not run.
func NoPermError(why acl.Reason, cmd *Command) string {
	switch why {
	case acl.DeniedCommand:
		return "NOPERM this user has no permissions to run the '" + cmd.Name + "' command"
	case acl.DeniedKey:
		return "NOPERM this user has no permissions to access one of the keys used as arguments"
	case acl.DeniedChannel:
		return "NOPERM this user has no permissions to access one of the channels used as arguments"
	}
	return "NOPERM no permission"
}

// LogDenial records a refused command in the ACL log. self says the caller runs in cl's
// event loop (so CLIENT LIST's line may read its loop-owned state).
func LogDenial(srv *server.Server, cl *server.Client, cmd *Command, args [][]byte, why acl.Reason, pos int, context string, self bool) {
	object := cmd.Name
	if why == acl.DeniedKey || why == acl.DeniedChannel {
		object = string(args[pos])
	}
	logACL(srv, cl, why, context, object, cl.UserName(), self)
}

func logACL(srv *server.Server, cl *server.Client, why acl.Reason, context, object, user string, self bool) {
	max := 128
	if srv.Config != nil {
		max = srv.Config.ACLLogMaxLen()
	}
	line := strings.TrimSuffix(string(cl.AppendInfo(nil, self, time.Now())), "\n")
	srv.ACL.Log.Add(acl.LogEntry{Reason: why, Context: context, Object: object, Username: user,
		TimeMs: time.Now().UnixMilli(), Client: line}, max)
}

// aclUser returns the connection's user: the default user for a connection made before the
// ACL existed or an internal client.
func aclUser(c *Ctx, srv *server.Server) *acl.User {
	if u := c.Client.User(); u != nil {
		return u
	}
	return srv.ACL.Default()
}

func aclCat(c *Ctx) {
	switch len(c.Args) {
	case 2:
		c.W.ArrayLen(len(acl.Categories))
		for _, n := range acl.Categories {
			c.W.BulkString(n)
		}
	case 3:
		bit := acl.CategoryBit(string(c.Args[2]))
		if bit == 0 {
			c.Error("ERR Unknown category '" + truncate(c.Args[2], 128) + "'")
			return
		}
		names := acl.Commands().InCategory(bit)
		c.W.ArrayLen(len(names))
		for _, n := range names {
			c.W.BulkString(n)
		}
	default:
		SubcommandSyntaxError(c)
	}
}

func aclSetUser(c *Ctx, srv *server.Server) {
	name := string(c.Args[2])
	if !acl.ValidName(name) {
		c.Error("ERR Usernames can't contain spaces or null characters")
		return
	}
	ops := make([]string, len(c.Args)-3)
	for i, a := range c.Args[3:] {
		ops[i] = string(a)
	}
	merged, bad := acl.MergeSelectors(ops)
	if bad >= 0 {
		c.Error("ERR Unmatched parenthesis in acl selector starting at '" + ops[bad] + "'.")
		return
	}
	u, recheck, err := srv.ACL.SetUser(name, merged)
	if err != nil {
		re := err.(*acl.RuleError)
		c.Error("ERR Error in ACL SETUSER modifier '" + re.Rule + "': " + re.Msg)
		return
	}
	if recheck {
		closeRefusedSubscribers(c, srv, u)
	}
	c.W.OK()
}

// closeRefusedSubscribers closes the pub/sub connections of u subscribed to a channel or
// pattern u may no longer use, as Redis does when ACL SETUSER takes channels away.
func closeRefusedSubscribers(c *Ctx, srv *server.Server, u *acl.User) {
	for _, cl := range srv.Clients.All() {
		if cl.User() != u || !cl.PubSub() || cl.Sub == nil {
			continue
		}
		refused := false
		for _, k := range []pubsub.Kind{pubsub.Channel, pubsub.ShardChannel, pubsub.Pattern} {
			for _, ch := range srv.PubSub.Names(cl.Sub, k) {
				if !u.ChannelAllowed([]byte(ch), k == pubsub.Pattern) {
					refused = true
				}
			}
		}
		if refused {
			closeClient(c, cl)
		}
	}
}

// closeClient closes cl: at once, or after this command's reply when it is the caller.
func closeClient(c *Ctx, cl *server.Client) {
	if cl == c.Client {
		c.Client.Quitting = true
		c.Client.Publish()
	} else if cl.Kill != nil {
		cl.Kill()
	}
}

// closeUsersClients closes every connection authenticated as one of users.
func closeUsersClients(c *Ctx, srv *server.Server, users []*acl.User) {
	if len(users) == 0 {
		return
	}
	for _, cl := range srv.Clients.All() {
		for _, u := range users {
			if cl.User() == u {
				closeClient(c, cl)
			}
		}
	}
}

func aclDelUser(c *Ctx, srv *server.Server) {
	names := make([]string, len(c.Args)-2)
	for i, a := range c.Args[2:] {
		names[i] = string(a)
	}
	gone, err := srv.ACL.Delete(names)
	if err != nil {
		c.Error("ERR " + err.Error())
		return
	}
	closeUsersClients(c, srv, gone)
	c.W.Int(int64(len(gone)))
}

func aclGetUser(c *Ctx, srv *server.Server) {
	u := srv.ACL.Get(string(c.Args[2]))
	if u == nil {
		c.W.Null()
		return
	}
	info := u.Info()
	c.W.MapLen(6)
	c.W.BulkString("flags")
	c.W.SetLen(len(info.Flags))
	for _, f := range info.Flags {
		c.W.BulkString(f)
	}
	c.W.BulkString("passwords")
	c.W.ArrayLen(len(info.Passwords))
	for _, p := range info.Passwords {
		c.W.BulkString(p)
	}
	writeSelectorInfo(c, info.Root)
	c.W.BulkString("selectors")
	c.W.ArrayLen(len(info.Selectors))
	for _, s := range info.Selectors {
		c.W.MapLen(3)
		writeSelectorInfo(c, s)
	}
}

func writeSelectorInfo(c *Ctx, s acl.SelectorInfo) {
	c.W.BulkString("commands")
	c.W.BulkString(s.Commands)
	c.W.BulkString("keys")
	c.W.BulkString(s.Keys)
	c.W.BulkString("channels")
	c.W.BulkString(s.Channels)
}

func aclList(c *Ctx, srv *server.Server) {
	users := srv.ACL.Users()
	c.W.ArrayLen(len(users))
	for _, u := range users {
		c.W.BulkString("user " + u.Name + " " + u.Describe())
	}
}

func aclUsers(c *Ctx, srv *server.Server) {
	users := srv.ACL.Users()
	c.W.ArrayLen(len(users))
	for _, u := range users {
		c.W.BulkString(u.Name)
	}
}

func aclWhoAmI(c *Ctx, srv *server.Server) { c.W.BulkString(aclUser(c, srv).Name) }

const errNoACLFile = "ERR This Redis instance is not configured to use an ACL file. You may want to specify users via the ACL SETUSER command and then issue a CONFIG REWRITE (assuming you have a Redis configuration file set) in order to store users in the Redis configuration."

func aclLoad(c *Ctx, srv *server.Server) {
	path := srv.Config.ACLFile()
	if path == "" {
		c.Error(errNoACLFile)
		return
	}
	gone, err := srv.ACL.LoadFile(path)
	if err != nil {
		c.Error("ERR " + err.Error())
		return
	}
	closeUsersClients(c, srv, gone)
	c.W.OK()
}

func aclSave(c *Ctx, srv *server.Server) {
	path := srv.Config.ACLFile()
	if path == "" {
		c.Error(errNoACLFile)
		return
	}
	if err := srv.ACL.SaveFile(path); err != nil {
		log.Printf("Saving the ACL file %s: %v", path, err)
		c.Error("ERR There was an error trying to save the ACLs. Please check the server logs for more information")
		return
	}
	c.W.OK()
}

func aclGenPass(c *Ctx) {
	if len(c.Args) > 3 {
		SubcommandSyntaxError(c)
		return
	}
	bits := int64(256)
	if len(c.Args) == 3 {
		n, ok := codec.ParseInt(c.Args[2])
		if !ok {
			c.Error(ErrNotInt)
			return
		}
		bits = n
	}
	if bits <= 0 || bits > 4096 {
		c.Error("ERR ACL GENPASS argument must be the number of bits for the output password, a positive number up to 4096")
		return
	}
	chars := int((bits + 3) / 4)
	raw := make([]byte, (chars+1)/2)
	_, _ = rand.Read(raw)
	c.W.BulkString(hex.EncodeToString(raw)[:chars])
}

func aclLog(c *Ctx, srv *server.Server) {
	if len(c.Args) > 3 {
		SubcommandSyntaxError(c)
		return
	}
	count := int64(10)
	if len(c.Args) == 3 {
		if EqualFold(c.Args[2], "reset") {
			srv.ACL.Log.Reset()
			c.W.OK()
			return
		}
		n, ok := codec.ParseInt(c.Args[2])
		if !ok {
			c.Error(ErrNotInt)
			return
		}
		count = max(n, 0)
	}
	entries := srv.ACL.Log.Entries(int(min(count, 1<<20)))
	now := time.Now().UnixMilli()
	c.W.ArrayLen(len(entries))
	for _, e := range entries {
		c.W.MapLen(7)
		c.W.BulkString("count")
		c.W.Int(e.Count)
		c.W.BulkString("reason")
		c.W.BulkString(acl.ReasonName(e.Reason))
		c.W.BulkString("context")
		c.W.BulkString(e.Context)
		c.W.BulkString("object")
		c.W.BulkString(e.Object)
		c.W.BulkString("username")
		c.W.BulkString(e.Username)
		c.W.BulkString("age-seconds")
		c.W.Double(float64(now-e.TimeMs) / 1000)
		c.W.BulkString("client-info")
		c.W.BulkString(e.Client)
	}
}

func aclDryRun(c *Ctx, srv *server.Server) {
	u := srv.ACL.Get(string(c.Args[2]))
	if u == nil {
		c.Error("ERR User '" + string(c.Args[2]) + "' not found")
		return
	}
	argv := c.Args[3:]
	cmd := Lookup(argv)
	if cmd == nil || !cmd.Runs() && len(argv) > 1 { // a container alone fails its arity below
		c.Error("ERR Command '" + string(argv[0]) + "' not found")
		return
	}
	if !cmd.CheckArity(len(argv)) {
		c.Error(ArityError(cmd))
		return
	}
	why, pos := cmd.ACLCheck(u, argv)
	switch why {
	case acl.Allowed:
		c.W.OK()
	case acl.DeniedCommand:
		c.W.BulkString("This user has no permissions to run the '" + cmd.Name + "' command")
	case acl.DeniedKey:
		c.W.BulkString("This user has no permissions to access the '" + string(argv[pos]) + "' key")
	default:
		c.W.BulkString("This user has no permissions to access the '" + string(argv[pos]) + "' channel")
	}
}

func aclHelp(c *Ctx) {
	HelpReply(c,
		"CAT [<category>]",
		"    List all commands that belong to <category>, or all command categories",
		"    when no category is specified.",
		"DELUSER <username> [<username> ...]",
		"    Delete a list of users.",
		"DRYRUN <username> <command> [<arg> ...]",
		"    Returns whether the user can execute the given command without executing the command.",
		"GETUSER <username>",
		"    Get the user's details.",
		"GENPASS [<bits>]",
		"    Generate a secure 256-bit user password. The optional `bits` argument can",
		"    be used to specify a different size.",
		"LIST",
		"    Show users details in config file format.",
		"LOAD",
		"    Reload users from the ACL file.",
		"LOG [<count> | RESET]",
		"    Show the ACL log entries.",
		"SAVE",
		"    Save the current config to the ACL file.",
		"SETUSER <username> <attribute> [<attribute> ...]",
		"    Create or modify a user with the specified attributes.",
		"USERS",
		"    List all the registered usernames.",
		"WHOAMI",
		"    Return the current connection username.")
}

// sensitiveParams are the parameters whose value CONFIG SET's SLOWLOG entry hides, as
// redis-server 7.0.15 hides them.
var sensitiveParams = []string{"requirepass", "masterauth", "masteruser"}

// ConfigSetSecret: the value of a sensitive parameter in CONFIG SET name value [name value ...].
func ConfigSetSecret(args [][]byte, i int) bool {
	if i < 3 || i%2 == 0 {
		return false
	}
	for _, p := range sensitiveParams {
		if EqualFold(args[i-1], p) {
			return true
		}
	}
	return false
}
