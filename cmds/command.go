// Package cmds is the command table and every command. A command is declared once, in a
// Command literal registered from the file of its family (strings.go, keys.go, …); COMMAND,
// COMMAND INFO/DOCS/COUNT/GETKEYS, the ACL key check, arity checks, key routing and the
// binlog are all derived from that declaration (package spec renders and evaluates it).
package cmds

import (
	"bytes"
	"strings"

	"shardis/acl"
	"shardis/cmdspec"
	"shardis/codec"
	"shardis/pubsub"
	"shardis/server"
	"shardis/shard"
)

// Exec says where and when a command runs.
type Exec uint8

const (
	// ExecKeyed commands run in the shard that owns their keys, or, when the keys live in
	// several shards, in a coordinator holding those shards (atomically).
	ExecKeyed Exec = iota
	// ExecConn commands touch only the connection or server bookkeeping and run in the event
	// loop as soon as they are parsed (PING, SELECT, HELLO, AUTH, CLIENT SETNAME, …).
	ExecConn
	// ExecServer commands run in order after the earlier commands of the pipeline finished,
	// holding no shard (INFO, CONFIG, SAVE, …).
	ExecServer
	// ExecAll commands hold every shard (FLUSHALL, DBSIZE, KEYS, SWAPDB, RANDOMKEY, …).
	ExecAll
)

// Command declares one command or subcommand.
type Command struct {
	Name  string // lower case; subcommands are "parent|sub"
	Arity int    // Redis arity: >0 exact argc, <0 at least -Arity
	Flags []string
	ACL   []string // ACL categories without '@'
	// FirstKey, LastKey (-1: the last argument; -2: all but the last, …) and Step are the
	// key range COMMAND INFO shows and keyless routing uses; Register derives them from
	// KeySpecs as Redis does (cmdspec.LegacyRange), so a literal does not declare them.
	FirstKey   int
	LastKey    int
	Step       int
	Group      string // generic, string, connection, server, …
	Since      string
	Summary    string
	Complexity string
	// Syntax is the argument synopsis as in Redis's docs, e.g. "key value [NX | XX]"; COMMAND
	// DOCS builds its argument tree from it.
	Syntax string
	// KeySpecs are the command's key specs as COMMAND INFO shows them (Redis 7.0's, for a
	// command Redis has): where its keys are and how each is accessed. COMMAND GETKEYS and
	// GETKEYSANDFLAGS and the ACL key check read them.
	KeySpecs []cmdspec.KeySpec
	// Tips are COMMAND INFO's command tips ("nondeterministic_output", "request_policy:…").
	Tips []string
	// DocFlags ("deprecated", "syscmd"), DeprecatedSince and ReplacedBy are COMMAND DOCS'
	// doc_flags, deprecated_since and replaced_by.
	DocFlags        []string
	DeprecatedSince string
	ReplacedBy      string
	Exec            Exec
	// Keys, when set, extracts the key arguments for commands whose keys are not a
	// FirstKey/LastKey/Step range (e.g. after a numkeys argument).
	Keys func(args [][]byte) [][]byte
	// Route, when set, picks the shards of a keyless ExecKeyed command (SCAN by its cursor).
	Route func(c *Ctx, nShards int) []int
	// Run runs a command of the data: it sees its transaction and c.Keyspace, not the server.
	Run func(c *Ctx)
	// RunServer, instead of Run, runs a command that reads or changes the server's state
	// (clients, users, configuration, pub/sub, statistics, scripts): it is handed the server.
	RunServer func(c *Ctx, srv *server.Server)
	// Peek, when set, answers the command from committed state in the event loop, without a
	// trip to the shard (c.Tx is nil; see shard.Store.PeekMeta). It returns false, having
	// written nothing, when only the shard can answer; the command then runs as usual. With
	// c.LatePeek it must answer (an expired key is absent; it is left to the TTL worker).
	Peek func(c *Ctx) bool
	Subs map[string]*Command // subcommands by lower-case name; Run of the parent is unused
	// Secret, when set, reports whether argument i of args carries a secret (a password, an
	// ACL rule): SLOWLOG and MONITOR show it as "(redacted)", as Redis does.
	Secret func(args [][]byte, i int) bool
	// Channels says which arguments are pub/sub channels, for ACL's channel permissions.
	Channels ChannelArgs
	// Traits are shardis's own flags (the Trait* bits), which COMMAND does not show.
	Traits Flag
	// ProtectedBy is the setting that lets clients run a protected command (TraitProtected):
	// enable-debug-command when empty, as for DEBUG.
	ProtectedBy string
	// CallFlagsOf, when set, returns the flags a call runs with when they depend on its
	// arguments (c.Args, c.Keyspace; c.Cmd is the command): a script's or function's declared
	// flags replace write and may_replicate (see CallFlags).
	CallFlagsOf func(c *Ctx) Flag

	parent *Command
	acl    *acl.Command // the command in ACL's table (see aclCommand)
	stats  *cmdStats
	flags  Flag // Flags parsed, with Traits (set by Register)
}

var redacted = []byte("(redacted)")

// LoggedArgs returns args as SLOWLOG and MONITOR show them: the secret arguments (see Secret) replaced
// by "(redacted)". args itself when the command has none.
func (cmd *Command) LoggedArgs(args [][]byte) [][]byte {
	if cmd.Secret == nil {
		return args
	}
	out := make([][]byte, len(args))
	for i, a := range args {
		if cmd.Secret(args, i) {
			a = redacted
		}
		out[i] = a
	}
	return out
}

// FullName is the name Redis puts in errors and statistics: "get", "config|get".
func (cmd *Command) FullName() string { return cmd.Name }

// IsWrite reports whether the command may modify data.
func (cmd *Command) IsWrite() bool { return cmd.Has(FlagWrite) }

// IsReadOnly reports whether the command only reads data (Redis's "readonly" flag).
func (cmd *Command) IsReadOnly() bool { return cmd.Has(FlagReadonly) }

// KeyArgs returns the key arguments of args (args[0] is the command name).
func (cmd *Command) KeyArgs(args [][]byte) [][]byte { return cmd.AppendKeyArgs(nil, args) }

// AppendKeyArgs appends the key arguments of args to dst and returns it: KeyArgs for a caller
// that reuses dst.
func (cmd *Command) AppendKeyArgs(dst, args [][]byte) [][]byte {
	if cmd.Keys != nil {
		return append(dst, cmd.Keys(args)...)
	}
	return keyRange(args, cmd.FirstKey, cmd.LastKey, cmd.Step, dst)
}

// hasKeys reports whether cmd takes key arguments (Redis's doesCommandHaveKeys): a Keys func
// or a key spec that finds real keys (not shard channels).
func (cmd *Command) hasKeys() bool { return cmd.Keys != nil || cmdspec.HasKeys(cmd.KeySpecs) }

// keysWithFlags returns the keys of argv (argv[0] is the command name) with the flags of
// cmd's key specs (COMMAND GETKEYSANDFLAGS, the ACL key check). The keys are those routing
// uses (Command.KeyArgs); each takes the flags of the key spec that finds the same argument.
func (cmd *Command) keysWithFlags(argv [][]byte) []cmdspec.Key {
	return cmdspec.Keys(cmd.KeySpecs, argv, cmd.Keys, cmd.unlocatedKeyFlags())
}

// unlocatedKeyFlags are the flags of a key that cmd's Keys func finds and none of its key
// specs locates, when no key spec of unknown position declares them.
func (cmd *Command) unlocatedKeyFlags() cmdspec.KeyFlag {
	switch {
	case cmd.Has(FlagPubSub):
		return cmdspec.NotKey
	case cmd.IsWrite():
		return cmdspec.RW | cmdspec.Access | cmdspec.Update
	case cmd.Has(FlagReadonly):
		return cmdspec.RO | cmdspec.Access
	}
	return cmdspec.RO
}

func keyRange(args [][]byte, first, last, step int, out [][]byte) [][]byte {
	if first <= 0 || first >= len(args) {
		return out
	}
	if last < 0 {
		last = len(args) + last
	}
	if step <= 0 {
		step = 1
	}
	for i := first; i <= last && i < len(args); i += step {
		out = append(out, args[i])
	}
	return out
}

// Ctx is what a command runs with. The executor reuses it: a command must not retain it or
// any argument after returning.
type Ctx struct {
	Args   [][]byte
	DB     int
	W      codec.Writer
	Tx     *shard.Tx      // nil for ExecConn and ExecServer commands
	Client *server.Client // nil when the binlog is replayed
	// Keyspace is what a command of the data may use beyond its transaction: the store (for
	// routing, the database count, the loops' reads), SCAN cursors, keyspace statistics.
	// A command that reads or changes the rest of the server is a RunServer and is handed it.
	Keyspace *server.Keyspace
	Cmd      *Command
	// Exec runs commands on this command's behalf in its transaction (EXEC's queued
	// commands); set by the executor.
	Exec Runner

	// Streamable says the caller can send the reply in pieces (the reactor can; the binlog
	// replay and internal callers cannot). Stream, set by a command that had Streamable, is
	// the rest of its reply after W.Buf; the caller sends it and closes it.
	Streamable bool
	Stream     *shard.Stream
	// ReplyLimit, when positive, is the size past which the reply would get the client
	// dropped for client-output-buffer-limit. A command whose reply size a client's count sets
	// rather than the data (SRANDMEMBER, HRANDFIELD, ZRANDMEMBER with a negative count) stops
	// making it there (ReplyOverLimit), as Redis stops adding to a client it is to close: the
	// cut reply is never sent.
	ReplyLimit int

	// PeekBuf is scratch space a Peek may use, kept by the caller between commands; NowMs is
	// the command's clock (unix ms) for a Peek. LatePeek says the Peek runs after the rest of
	// its batch and must answer: it cannot fall back to the shard (see Command.Peek).
	PeekBuf  []byte
	NowMs    int64
	LatePeek bool

	// Multi is, for a command with TraitTxControl, the connection's MULTI state when it was
	// dispatched (nil outside MULTI); for one with TraitTakesQueue (EXEC, DISCARD), the
	// transaction it took over.
	Multi *server.Multi

	// Blocking commands (cmds/blocking.go, executor/blocking.go).
	//
	// InTransaction says the command runs inside MULTI/EXEC or a script: a blocking command
	// then acts as its non-blocking form (nil when its keys are empty), and the executor
	// serves no blocked client until the whole transaction ran. EXEC and scripts set it on
	// the contexts of the commands they run.
	InTransaction bool
	// Host, set by a connection for a command of its own, is where the reply of a command
	// that blocks goes; without it (binlog replay, internal callers) nothing blocks.
	Host BlockHost
	// Block is set by a blocking command that found its keys empty and may block (Host set,
	// not InTransaction): what to wait for. It wrote no reply; the executor registers the
	// waiter before the command's shards are released.
	Block *BlockRequest
	// ReadyKey is set when the executor serves a blocked command: the key that became ready,
	// the only one the command pops from.
	ReadyKey []byte
	// BlockState is, with ReadyKey, the BlockRequest.State the command blocked with.
	BlockState any

	// Origin, set by a connection for a command of its own, receives the pub/sub messages the
	// command's keyspace events make for the connection's own subscriptions (RESP3), so that
	// they go out before the command's reply, as in Redis.
	Origin pubsub.Origin

	// Caching is CLIENT CACHING's flag as it stood when the command was dispatched (see
	// server.Client.TrackCaching); EXEC and scripts pass it to the commands they run.
	Caching bool
	// Caller is the script command (EVAL, …) whose redis.call runs this command, nil
	// otherwise: CLIENT TRACKING remembers the caller's declared keys for a read run by a
	// script, as Redis 7.0 does.
	Caller *Ctx
	// Strayed is set by a command with a narrow route (TraitNarrowRoute: a script) that
	// needed a shard its transaction does not hold: its writes were rolled back, its reply
	// is to be dropped, and it must run again holding every shard. The executor records
	// nothing for it.
	Strayed bool
}

// ReplyOverLimit reports whether the reply made so far passed ReplyLimit (see there).
func (c *Ctx) ReplyOverLimit() bool { return c.ReplyLimit > 0 && len(c.W.Buf) > c.ReplyLimit }

// BlockHost receives the outcome of a command that blocked. The reactor's slot implements it.
type BlockHost interface {
	// Blocking is called by the goroutine running the command, before the waiter is
	// registered (so before anyone can unblock it).
	Blocking()
	// Unblocked receives the command's final reply (served, timed out, CLIENT UNBLOCK, or nil
	// when the client is gone), once, from any goroutine. The host owns reply afterwards.
	Unblocked(reply []byte)
}

// BlockRequest is what a blocked command waits for.
type BlockRequest struct {
	Keys    [][]byte   // keys whose data serves it (they alias Args)
	Type    codec.Type // the type a key must hold to serve it
	Dst     []byte     // BLMOVE's destination (its shard must be held to serve), or nil
	Timeout int64      // ms; 0 waits for ever
	// State, when set, is handed back in Ctx.BlockState when the command runs again to be
	// served (XREAD's ids, "$" resolved to the id it stood for when it blocked).
	State any
	// Ready, when set, says whether key, holding Type with meta m, serves the command (see
	// shard.Waiter.Serves); it must only look at its arguments.
	Ready func(key []byte, m codec.Meta) bool
	// ReadyTx, when set, decides instead of Type and Ready whether a write to key (in logical db)
	// serves the command, given its arguments: a blocked XREADGROUP waits for entries beyond
	// its group's last id, and is woken with an error when the stream or the group goes.
	ReadyTx ReadyFunc
}

// ReadyFunc reports whether the blocked command args is to be served now that key of logical
// db was written (or deleted); it reads tx, which holds the key's shard.
type ReadyFunc func(tx *shard.Tx, db int, args [][]byte, key []byte) bool

// MayBlock reports whether the command may block instead of answering nil.
func (c *Ctx) MayBlock() bool { return c.Host != nil && !c.InTransaction && c.ReadyKey == nil }

// Runner runs a command with a context the caller prepared (the executor does: see
// executor.Executor.Run). A command that runs other commands (EXEC) goes through it, so they
// are guarded and accounted like any other.
type Runner interface {
	Run(c *Ctx)
	// Admit returns Redis's refusal of req, or "" when it may run: the one admission check
	// every path goes through (executor.Executor.Admit).
	Admit(req *AdmitRequest) string
}

// Error replies with an error (msg is the whole text: "ERR syntax error").
func (c *Ctx) Error(msg string) { c.W.Error(msg) }

// ArityError replies Redis's wrong-number-of-arguments error for cmd.
func ArityError(cmd *Command) string {
	return "ERR wrong number of arguments for '" + cmd.Name + "' command"
}

var table = map[string]*Command{}

// Register adds commands to the table; called from the init of each family's file.
func Register(list ...*Command) {
	for _, cmd := range list {
		if _, dup := table[cmd.Name]; dup {
			panic("cmds: duplicate command " + cmd.Name)
		}
		cmd.stats = &cmdStats{}
		cmd.flags = parseFlags(cmd.Name, cmd.Flags) | cmd.Traits
		cmd.deriveKeyRange()
		for name, sub := range cmd.Subs {
			sub.Name = cmd.Name + "|" + name
			sub.parent = cmd
			sub.stats = &cmdStats{}
			sub.flags = parseFlags(sub.Name, sub.Flags) | sub.Traits
			sub.deriveKeyRange()
			if sub.Group == "" {
				sub.Group = cmd.Group
			}
		}
		table[cmd.Name] = cmd
	}
}

// deriveKeyRange sets the command's key range from its key specs. A literal that declares a
// range of its own is a bug in the table, caught when the package loads.
func (cmd *Command) deriveKeyRange() {
	first, last, step := cmdspec.LegacyRange(cmd.KeySpecs)
	if cmd.FirstKey|cmd.LastKey|cmd.Step != 0 {
		panic("cmds: command " + cmd.Name + " declares a key range: it is derived from its KeySpecs")
	}
	cmd.FirstKey, cmd.LastKey, cmd.Step = first, last, step
}

// Lookup returns the command named by args[0] (any case), resolving a subcommand when the
// command has them. It allocates nothing for names up to 32 bytes.
func Lookup(args [][]byte) *Command {
	cmd := lookupName(table, args[0])
	if cmd == nil || cmd.Subs == nil || len(args) < 2 {
		return cmd
	}
	if sub := lookupName(cmd.Subs, args[1]); sub != nil {
		return sub
	}
	return cmd
}

func lookupName(m map[string]*Command, name []byte) *Command {
	var buf [32]byte
	if len(name) > len(buf) {
		return m[strings.ToLower(string(name))]
	}
	for i, ch := range name {
		if 'A' <= ch && ch <= 'Z' {
			ch += 'a' - 'A'
		}
		buf[i] = ch
	}
	return m[string(buf[:len(name)])]
}

// All returns every top-level command.
func All() map[string]*Command { return table }

// Runs reports whether the command runs (Run or RunServer): a container command whose
// subcommand is unknown does not.
func (cmd *Command) Runs() bool { return cmd.Run != nil || cmd.RunServer != nil }

// NeedsShard reports whether the command runs holding a shard (ExecKeyed, ExecAll).
func (cmd *Command) NeedsShard() bool { return cmd.Exec == ExecKeyed || cmd.Exec == ExecAll }

// CheckArity reports whether argc satisfies the command's arity.
func (cmd *Command) CheckArity(argc int) bool {
	if cmd.Arity > 0 {
		return argc == cmd.Arity
	}
	return argc >= -cmd.Arity
}

// UnknownCommandError is Redis's reply to a command that is not in the table: the name and
// the first arguments, quoted, up to 128 bytes of them.
func UnknownCommandError(args [][]byte) string {
	var quoted strings.Builder
	for _, a := range args[1:] {
		if quoted.Len() >= 128 {
			break
		}
		n := 128 - quoted.Len()
		quoted.WriteString("'")
		quoted.WriteString(truncate(a, n))
		quoted.WriteString("' ")
	}
	return "ERR unknown command '" + truncate(args[0], 128) + "', with args beginning with: " + quoted.String()
}

// UnknownSubcommandError is Redis's reply to an unknown subcommand of a container command.
func UnknownSubcommandError(args [][]byte) string {
	return "ERR unknown subcommand '" + truncate(args[1], 128) + "'. Try " + strings.ToUpper(string(args[0])) + " HELP."
}

// truncate returns b as Redis prints an argument in an error: up to its first NUL byte (Redis
// formats it as a C string) and at most n bytes.
func truncate(b []byte, n int) string {
	if i := bytes.IndexByte(b, 0); i >= 0 {
		b = b[:i]
	}
	if len(b) > n {
		b = b[:n]
	}
	return string(b)
}
