package cmds

import (
	"slices"
	"strconv"
	"strings"
	"sync"

	"shardis/codec"
	"shardis/internal/glob"
)

// COMMAND and its subcommands describe the command table to clients: redis-cli reads COMMAND
// DOCS at startup for its hints, cluster-aware clients read key positions and tips from
// COMMAND INFO, go-redis reads COMMAND to route read-only commands. Everything is generated
// from the registered Commands, so whatever is registered is described; what a Command does
// not declare (key spec flags, tips, deprecation) comes from Redis 7.0's tables at the end of
// this file, by command name.

func init() {
	sub := func(arity int, since, summary, complexity, syntax string, run func(*Ctx)) *Command {
		return &Command{Arity: arity, Flags: []string{"loading", "stale"}, ACL: []string{"slow", "connection"},
			Since: since, Summary: summary, Complexity: complexity, Syntax: syntax, Exec: ExecConn, Run: run}
	}
	const perArg = "O(N) where N is the number of arguments to the command"
	const perLookup = "O(N) where N is the number of commands to look up"
	const perCommand = "O(N) where N is the total number of Redis commands"
	register(&Command{Name: "command", Arity: -1, Flags: []string{"loading", "stale"}, ACL: []string{"slow", "connection"},
		Group: "server", Since: "2.8.13", Summary: "Get array of Redis command details", Complexity: perCommand,
		Exec: ExecConn, Run: commandCommand,
		Subs: map[string]*Command{
			"count": sub(2, "2.8.13", "Get total number of Redis commands", "O(1)", "", commandCount),
			"docs": sub(-2, "7.0.0", "Get array of specific Redis command documentation", perLookup,
				"[command-name [command-name ...]]", commandDocs),
			// Redis 7.0's docs list no arguments for GETKEYS and GETKEYSANDFLAGS.
			"getkeys": sub(-4, "2.8.13", "Extract keys given a full Redis command", perArg, "", commandGetKeys),
			"getkeysandflags": sub(-4, "7.0.0", "Extract keys and access flags given a full Redis command", perArg, "",
				commandGetKeysAndFlags),
			"help": sub(2, "5.0.0", "Show helpful text about the different subcommands", "O(1)", "", commandHelp),
			"info": sub(-2, "2.8.13", "Get array of specific Redis command details, or all when no argument is given.",
				perLookup, "[command-name [command-name ...]]", commandInfo),
			"list": sub(-2, "7.0.0", "Get an array of Redis command names", perCommand,
				"[FILTERBY <MODULE module-name | ACLCAT category | PATTERN pattern>]", commandList),
		}})
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
			writeCommandInfo(&c.W, cmd)
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
			writeCommandDocs(&c.W, cmd)
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
		writeCommandDocs(&c.W, cmd)
	}
}

func commandList(c *Ctx) {
	var match func(*Command) bool
	switch {
	case len(c.Args) == 2:
		match = func(*Command) bool { return true }
	case len(c.Args) == 5 && equalFold(c.Args[2], "filterby"):
		arg := string(c.Args[4])
		switch {
		case equalFold(c.Args[3], "module"):
			match = func(*Command) bool { return false } // no modules
		case equalFold(c.Args[3], "aclcat"):
			match = func(cmd *Command) bool {
				return slices.ContainsFunc(cmd.ACL, func(cat string) bool { return strings.EqualFold(cat, arg) })
			}
		case equalFold(c.Args[3], "pattern"):
			match = func(cmd *Command) bool { return glob.MatchString(arg, cmd.Name, true) }
		default:
			c.Error(errSyntax)
			return
		}
	default:
		c.Error(errSyntax)
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
	case !introHasKeys(cmd):
		c.Error("ERR The command has no key arguments")
		return
	case !cmd.CheckArity(len(argv)):
		c.Error("ERR Invalid number of arguments specified for command")
		return
	}
	keys := introKeysOf(cmd, argv)
	if len(keys) == 0 && !cmd.Has(FlagNoMandatoryKeys) {
		c.Error("ERR Invalid arguments specified for command")
		return
	}
	c.W.ArrayLen(len(keys))
	for _, k := range keys {
		if !withFlags {
			c.W.Bulk(k.key)
			continue
		}
		c.W.ArrayLen(2)
		c.W.Bulk(k.key)
		c.W.SetLen(len(k.flags))
		for _, f := range k.flags {
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
	specs  []introKeySpec
	args   []*docArg // COMMAND DOCS arguments; nil when there are none
	argErr error     // the synopsis does not parse (the unit test rejects such a declaration)
}

var introCache sync.Map // *Command -> *introEntry

func introFor(cmd *Command) *introEntry {
	if e, ok := introCache.Load(cmd); ok {
		return e.(*introEntry)
	}
	e := &introEntry{specs: commandKeySpecs(cmd)}
	if cmd.Syntax != "" {
		e.args, e.argErr = parseSyntax(cmd.Name, cmd.Syntax)
		if e.argErr == nil {
			syntaxNumberKeyArgs(e.args, len(e.specs))
		}
	}
	actual, _ := introCache.LoadOrStore(cmd, e)
	return actual.(*introEntry)
}

// introKeySpec is one key spec of COMMAND INFO: where the keys start (begin_search) and how
// many follow (find_keys).
type introKeySpec struct {
	flags []string
	notes string

	bsType    string // index, keyword, unknown
	index     int
	keyword   string
	startFrom int

	fkType                      string // range, keynum, unknown
	lastKey, keyStep, limit     int
	keyNumIdx, firstKeyAfterNum int
}

// commandKeySpecs builds cmd's key specs. A command with a FirstKey/LastKey/Step range gets
// index+range specs over that range; where Redis splits the range into several specs with
// different flags (RENAME: the source is read and deleted, the destination overwritten) the
// leading keys get one spec each, as Redis does. A command with a Keys func gets Redis's own
// specs when Redis has the command, else none.
func commandKeySpecs(cmd *Command) []introKeySpec {
	known := introTableSpecs(cmd.Name)
	if cmd.Keys != nil {
		return known
	}
	if cmd.FirstKey <= 0 {
		return nil
	}
	step := max(cmd.Step, 1)
	n := max(len(known), 1)
	if cmd.LastKey > 0 {
		n = min(n, max((cmd.LastKey-cmd.FirstKey)/step+1, 1))
	}
	specs := make([]introKeySpec, n)
	pos := cmd.FirstKey
	for i := range specs {
		s := &specs[i]
		if i < len(known) {
			s.flags, s.notes = known[i].flags, known[i].notes
		} else {
			s.flags = introDefaultKeyFlags(cmd)
		}
		s.bsType, s.index, s.fkType, s.keyStep = "index", pos, "range", 1
		if i == n-1 {
			s.lastKey, s.keyStep = cmd.LastKey, step
			if cmd.LastKey >= 0 {
				s.lastKey = cmd.LastKey - pos
			}
		}
		pos += step
	}
	return specs
}

// introDefaultKeyFlags are the key flags of a command Redis 7.0 does not have.
func introDefaultKeyFlags(cmd *Command) []string {
	switch {
	case cmd.Has(FlagPubSub):
		return []string{"not_key"}
	case cmd.IsWrite():
		return []string{"RW", "access", "update"}
	case cmd.Has(FlagReadonly):
		return []string{"RO", "access"}
	}
	return []string{"RO"}
}

// introTableSpecs decodes the introKeySpecs entry of a command.
func introTableSpecs(name string) []introKeySpec {
	desc, ok := introKeySpecs[name]
	if !ok {
		return nil
	}
	var out []introKeySpec
	for i, d := range strings.Split(desc, "; ") {
		parts := strings.Split(d, "|")
		s := introKeySpec{flags: strings.Fields(parts[0]), notes: introKeySpecNotes[name+"#"+strconv.Itoa(i)],
			bsType: "unknown", fkType: "unknown"}
		switch bs := parts[1]; bs[0] {
		case 'i':
			s.bsType = "index"
			s.index, _ = strconv.Atoi(bs[1:])
		case 'k':
			s.bsType = "keyword"
			kw, from, _ := strings.Cut(bs[1:], ",")
			s.keyword = kw
			s.startFrom, _ = strconv.Atoi(from)
		}
		fk := parts[2]
		nums := introInts(fk[1:])
		switch fk[0] {
		case 'r':
			s.fkType = "range"
			s.lastKey, s.keyStep, s.limit = nums[0], nums[1], nums[2]
		case 'n':
			s.fkType = "keynum"
			s.keyNumIdx, s.firstKeyAfterNum, s.keyStep = nums[0], nums[1], nums[2]
		}
		out = append(out, s)
	}
	return out
}

func introInts(s string) [3]int {
	var out [3]int
	for i, f := range strings.SplitN(s, ",", 3) {
		out[i], _ = strconv.Atoi(f)
	}
	return out
}

// find returns the indexes of the arguments spec s finds in argv (argv[0] is the command
// name), as Redis's key spec walk does; ok is false when argv does not fit the spec (a
// keyword spec whose keyword is absent finds nothing but fits).
func (s *introKeySpec) find(argv [][]byte) (pos []int, ok bool) {
	argc := len(argv)
	first := 0
	switch s.bsType {
	case "index":
		first = s.index
	case "keyword":
		if s.startFrom >= 0 {
			for i := s.startFrom; i < argc-1; i++ {
				if strings.EqualFold(string(argv[i]), s.keyword) {
					first = i + 1
					break
				}
			}
		} else {
			for i := argc + s.startFrom; i > 0 && i < argc; i-- {
				if strings.EqualFold(string(argv[i]), s.keyword) {
					first = i + 1
					break
				}
			}
		}
		if first == 0 {
			return nil, true
		}
	default:
		return nil, false
	}
	var last, step int
	switch s.fkType {
	case "range":
		step = s.keyStep
		switch {
		case s.lastKey >= 0:
			last = first + s.lastKey
		case s.limit == 0:
			last = argc + s.lastKey
		default:
			last = first + (argc-first)/s.limit + s.lastKey
		}
	case "keynum":
		step = s.keyStep
		if s.keyNumIdx >= argc-first {
			return nil, false
		}
		n, isInt := parseInt(argv[first+s.keyNumIdx])
		if !isInt || n < 0 || n > int64(argc) {
			return nil, false
		}
		first += s.firstKeyAfterNum
		last = first + int(n) - 1
	default:
		return nil, false
	}
	if last >= argc || last < first || first >= argc || step <= 0 {
		return nil, false
	}
	for i := first; i <= last; i += step {
		pos = append(pos, i)
	}
	return pos, true
}

// introHasKeys reports whether cmd takes key arguments (Redis's doesCommandHaveKeys): a Keys
// func or a key spec that finds real keys (not shard channels).
func introHasKeys(cmd *Command) bool {
	if cmd.Keys != nil {
		return true
	}
	for _, s := range introFor(cmd).specs {
		if !slices.Contains(s.flags, "not_key") {
			return true
		}
	}
	return false
}

type introKey struct {
	key   []byte
	flags []string
}

// introKeysOf returns the keys of argv (argv[0] is the command name) with their key flags.
// The keys are those routing uses (Command.KeyArgs); each takes the flags of the key spec
// that finds the same argument.
func introKeysOf(cmd *Command, argv [][]byte) []introKey {
	specs := introFor(cmd).specs
	type hit struct {
		pos   int
		flags []string
	}
	var hits []hit
	for i := range specs {
		pos, ok := specs[i].find(argv)
		if !ok && cmd.Keys == nil {
			return nil // Redis gives no keys when a spec does not fit
		}
		flags := specs[i].flags
		if slices.Contains(flags, "variable_flags") {
			flags = introVariableKeyFlags(cmd.Name, argv, flags)
		}
		for _, p := range pos {
			hits = append(hits, hit{p, flags})
		}
	}
	if cmd.Keys == nil {
		out := make([]introKey, len(hits))
		for i, h := range hits {
			out[i] = introKey{argv[h.pos], h.flags}
		}
		return out
	}
	keys := cmd.Keys(argv)
	out := make([]introKey, len(keys))
	used := make([]bool, len(hits))
	// A key no spec locates is one only the command's own key finder knows (SORT's STORE
	// destination): it takes the flags of the spec Redis declares for such keys, the
	// unknown-search spec that writes, as Redis's sortGetKeys does.
	unlocated := introDefaultKeyFlags(cmd)
	for i := range specs {
		if specs[i].bsType == "unknown" && introWrites(specs[i].flags) {
			unlocated = specs[i].flags
			break
		}
	}
	// Keys come in the order of the hits: each search starts after the last hit taken, so
	// a command with many keys costs linear time (ACL checks every command of a restricted
	// user with this).
	next := 0
	for i, k := range keys {
		out[i] = introKey{k, unlocated}
		for step := range len(hits) {
			j := (next + step) % len(hits)
			if !used[j] && introSameArg(argv[hits[j].pos], k) {
				out[i].flags, used[j] = hits[j].flags, true
				next = j + 1
				break
			}
		}
	}
	return out
}

// introWrites reports whether key flags say the key is written.
func introWrites(flags []string) bool {
	return slices.ContainsFunc(flags, func(f string) bool { return f == "OW" || f == "RW" || f == "RM" })
}

// introVariableKeyFlags gives the key flags of the commands whose spec says they depend on
// the arguments: SET writes without reading unless GET is given, BITFIELD only reads when it
// has nothing but GET and OVERFLOW operations.
func introVariableKeyFlags(name string, argv [][]byte, flags []string) []string {
	switch name {
	case "set":
		for _, a := range argv[min(3, len(argv)):] {
			if equalFold(a, "get") {
				return []string{"RW", "access", "update"}
			}
		}
		return []string{"OW", "update"}
	case "bitfield":
		for i := 2; i < len(argv); i++ {
			rest := len(argv) - i - 1
			switch {
			case equalFold(argv[i], "get") && rest >= 2:
				i += 2
			case equalFold(argv[i], "overflow") && rest >= 1:
				i++
			default: // a write, or a syntax error: assume a write as Redis does
				return []string{"RW", "access", "update"}
			}
		}
		return []string{"RO", "access"}
	}
	return flags
}

// introSameArg reports whether key k is argument a: the same bytes in memory, or else the
// same text.
func introSameArg(a, k []byte) bool {
	if len(a) > 0 && len(a) == len(k) && &a[0] == &k[0] {
		return true
	}
	return string(a) == string(k)
}

// introInfoFlags are the flags COMMAND INFO shows: the declared ones, plus movablekeys for a
// command whose keys a Keys func finds (Redis derives it the same way).
func introInfoFlags(cmd *Command) []string {
	if cmd.Keys == nil || cmd.Has(FlagMovableKeys) {
		return cmd.Flags
	}
	out := make([]string, 0, len(cmd.Flags)+1)
	for _, f := range cmd.Flags {
		if f == "allow_busy" { // the only flag Redis lists after movablekeys
			out = append(out, "movablekeys")
		}
		out = append(out, f)
	}
	if len(out) == len(cmd.Flags) {
		out = append(out, "movablekeys")
	}
	return out
}

func writeAllCommandInfo(w *codec.Writer) {
	top := introSorted(table)
	w.ArrayLen(len(top))
	for _, cmd := range top {
		writeCommandInfo(w, cmd)
	}
}

// writeCommandInfo writes Redis 7.0's ten-element COMMAND INFO entry for cmd.
func writeCommandInfo(w *codec.Writer, cmd *Command) {
	w.ArrayLen(10)
	w.BulkString(cmd.Name)
	w.Int(int64(cmd.Arity))
	flags := introInfoFlags(cmd)
	w.SetLen(len(flags))
	for _, f := range flags {
		w.Simple(f)
	}
	w.Int(int64(cmd.FirstKey))
	w.Int(int64(cmd.LastKey))
	w.Int(int64(cmd.Step))
	w.SetLen(len(cmd.ACL))
	for _, a := range cmd.ACL {
		w.Simple("@" + a)
	}
	tips := strings.Fields(introTips[cmd.Name])
	w.SetLen(len(tips))
	for _, t := range tips {
		w.BulkString(t)
	}
	specs := introFor(cmd).specs
	w.SetLen(len(specs))
	for i := range specs {
		writeKeySpec(w, &specs[i])
	}
	if len(cmd.Subs) == 0 {
		w.SetLen(0)
		return
	}
	subs := introSorted(cmd.Subs)
	w.ArrayLen(len(subs))
	for _, sub := range subs {
		writeCommandInfo(w, sub)
	}
}

func writeKeySpec(w *codec.Writer, s *introKeySpec) {
	if s.notes != "" {
		w.MapLen(4)
		w.BulkString("notes")
		w.BulkString(s.notes)
	} else {
		w.MapLen(3)
	}
	w.BulkString("flags")
	w.SetLen(len(s.flags))
	for _, f := range s.flags {
		w.Simple(f)
	}
	w.BulkString("begin_search")
	w.MapLen(2)
	w.BulkString("type")
	w.BulkString(s.bsType)
	w.BulkString("spec")
	switch s.bsType {
	case "index":
		w.MapLen(1)
		w.BulkString("index")
		w.Int(int64(s.index))
	case "keyword":
		w.MapLen(2)
		w.BulkString("keyword")
		w.BulkString(s.keyword)
		w.BulkString("startfrom")
		w.Int(int64(s.startFrom))
	default:
		w.MapLen(0)
	}
	w.BulkString("find_keys")
	w.MapLen(2)
	w.BulkString("type")
	w.BulkString(s.fkType)
	w.BulkString("spec")
	switch s.fkType {
	case "range":
		w.MapLen(3)
		w.BulkString("lastkey")
		w.Int(int64(s.lastKey))
		w.BulkString("keystep")
		w.Int(int64(s.keyStep))
		w.BulkString("limit")
		w.Int(int64(s.limit))
	case "keynum":
		w.MapLen(3)
		w.BulkString("keynumidx")
		w.Int(int64(s.keyNumIdx))
		w.BulkString("firstkey")
		w.Int(int64(s.firstKeyAfterNum))
		w.BulkString("keystep")
		w.Int(int64(s.keyStep))
	default:
		w.MapLen(0)
	}
}

// writeCommandDocs writes cmd's COMMAND DOCS map, fields in Redis 7.0's order.
func writeCommandDocs(w *codec.Writer, cmd *Command) {
	e := introFor(cmd)
	meta := introDocMeta[cmd.Name]
	docFlags := strings.Fields(meta[0])
	n := 1 // group
	for _, present := range []bool{cmd.Summary != "", cmd.Since != "", cmd.Complexity != "", len(docFlags) > 0,
		meta[1] != "", meta[2] != "", len(e.args) > 0, len(cmd.Subs) > 0} {
		if present {
			n++
		}
	}
	w.MapLen(n)
	if cmd.Summary != "" {
		w.BulkString("summary")
		w.BulkString(cmd.Summary)
	}
	if cmd.Since != "" {
		w.BulkString("since")
		w.BulkString(cmd.Since)
	}
	w.BulkString("group")
	w.BulkString(cmd.Group)
	if cmd.Complexity != "" {
		w.BulkString("complexity")
		w.BulkString(cmd.Complexity)
	}
	if len(docFlags) > 0 {
		w.BulkString("doc_flags")
		w.SetLen(len(docFlags))
		for _, f := range docFlags {
			w.Simple(f)
		}
	}
	if meta[1] != "" {
		w.BulkString("deprecated_since")
		w.BulkString(meta[1])
	}
	if meta[2] != "" {
		w.BulkString("replaced_by")
		w.BulkString(meta[2])
	}
	if len(e.args) > 0 {
		w.BulkString("arguments")
		writeDocArgs(w, e.args)
	}
	if len(cmd.Subs) > 0 {
		subs := introSorted(cmd.Subs)
		w.BulkString("subcommands")
		w.MapLen(len(subs))
		for _, sub := range subs {
			w.BulkString(sub.Name)
			writeCommandDocs(w, sub)
		}
	}
}

func writeDocArgs(w *codec.Writer, args []*docArg) {
	w.ArrayLen(len(args))
	for _, a := range args {
		var flags []string
		if a.optional {
			flags = append(flags, "optional")
		}
		if a.multiple {
			flags = append(flags, "multiple")
		}
		if a.multipleToken {
			flags = append(flags, "multiple_token")
		}
		n := 2
		for _, present := range []bool{a.keySpec >= 0, a.hasToken, len(flags) > 0, len(a.args) > 0} {
			if present {
				n++
			}
		}
		w.MapLen(n)
		w.BulkString("name")
		w.BulkString(a.name)
		w.BulkString("type")
		w.BulkString(a.typ)
		if a.keySpec >= 0 {
			w.BulkString("key_spec_index")
			w.Int(int64(a.keySpec))
		}
		if a.hasToken {
			w.BulkString("token")
			w.BulkString(a.token)
		}
		if len(flags) > 0 {
			w.BulkString("flags")
			w.SetLen(len(flags))
			for _, f := range flags {
				w.Simple(f)
			}
		}
		if len(a.args) > 0 {
			w.BulkString("arguments")
			writeDocArgs(w, a.args)
		}
	}
}

// introKeySpecs are Redis 7.0's key specs by command: "flags|begin_search|find_keys" per spec, separated
// by "; ". begin_search is i<index>, k<keyword>,<startfrom> or u (unknown); find_keys is
// r<lastkey>,<keystep>,<limit>, n<keynumidx>,<firstkey>,<keystep> or u.
var introKeySpecs = map[string]string{
	"append":                "RW insert|i1|r0,1,0",
	"bitcount":              "RO access|i1|r0,1,0",
	"bitfield":              "RW access update variable_flags|i1|r0,1,0",
	"bitfield_ro":           "RO access|i1|r0,1,0",
	"bitop":                 "OW update|i2|r0,1,0; RO access|i3|r-1,1,0",
	"bitpos":                "RO access|i1|r0,1,0",
	"blmove":                "RW access delete|i1|r0,1,0; RW insert|i2|r0,1,0",
	"blmpop":                "RW access delete|i2|n0,1,1",
	"blpop":                 "RW access delete|i1|r-2,1,0",
	"brpop":                 "RW access delete|i1|r-2,1,0",
	"brpoplpush":            "RW access delete|i1|r0,1,0; RW insert|i2|r0,1,0",
	"bzmpop":                "RW access delete|i2|n0,1,1",
	"bzpopmax":              "RW access delete|i1|r-2,1,0",
	"bzpopmin":              "RW access delete|i1|r-2,1,0",
	"copy":                  "RO access|i1|r0,1,0; OW update|i2|r0,1,0",
	"decr":                  "RW access update|i1|r0,1,0",
	"decrby":                "RW access update|i1|r0,1,0",
	"del":                   "RM delete|i1|r-1,1,0",
	"dump":                  "RO access|i1|r0,1,0",
	"eval":                  "RW access update|i2|n0,1,1",
	"eval_ro":               "RO access|i2|n0,1,1",
	"evalsha":               "RW access update|i2|n0,1,1",
	"evalsha_ro":            "RO access|i2|n0,1,1",
	"exists":                "RO|i1|r-1,1,0",
	"expire":                "RW update|i1|r0,1,0",
	"expireat":              "RW update|i1|r0,1,0",
	"expiretime":            "RO access|i1|r0,1,0",
	"fcall":                 "RW access update|i2|n0,1,1",
	"fcall_ro":              "RO access|i2|n0,1,1",
	"geoadd":                "RW update|i1|r0,1,0",
	"geodist":               "RO access|i1|r0,1,0",
	"geohash":               "RO access|i1|r0,1,0",
	"geopos":                "RO access|i1|r0,1,0",
	"georadius":             "RO access|i1|r0,1,0; OW update|kSTORE,6|r0,1,0; OW update|kSTOREDIST,6|r0,1,0",
	"georadius_ro":          "RO access|i1|r0,1,0",
	"georadiusbymember":     "RO access|i1|r0,1,0; OW update|kSTORE,5|r0,1,0; OW update|kSTOREDIST,5|r0,1,0",
	"georadiusbymember_ro":  "RO access|i1|r0,1,0",
	"geosearch":             "RO access|i1|r0,1,0",
	"geosearchstore":        "OW update|i1|r0,1,0; RO access|i2|r0,1,0",
	"get":                   "RO access|i1|r0,1,0",
	"getbit":                "RO access|i1|r0,1,0",
	"getdel":                "RW access delete|i1|r0,1,0",
	"getex":                 "RW access update|i1|r0,1,0",
	"getrange":              "RO access|i1|r0,1,0",
	"getset":                "RW access update|i1|r0,1,0",
	"hdel":                  "RW delete|i1|r0,1,0",
	"hexists":               "RO|i1|r0,1,0",
	"hget":                  "RO access|i1|r0,1,0",
	"hgetall":               "RO access|i1|r0,1,0",
	"hincrby":               "RW access update|i1|r0,1,0",
	"hincrbyfloat":          "RW access update|i1|r0,1,0",
	"hkeys":                 "RO access|i1|r0,1,0",
	"hlen":                  "RO|i1|r0,1,0",
	"hmget":                 "RO access|i1|r0,1,0",
	"hmset":                 "RW update|i1|r0,1,0",
	"hrandfield":            "RO access|i1|r0,1,0",
	"hscan":                 "RO access|i1|r0,1,0",
	"hset":                  "RW update|i1|r0,1,0",
	"hsetnx":                "RW insert|i1|r0,1,0",
	"hstrlen":               "RO|i1|r0,1,0",
	"hvals":                 "RO access|i1|r0,1,0",
	"incr":                  "RW access update|i1|r0,1,0",
	"incrby":                "RW access update|i1|r0,1,0",
	"incrbyfloat":           "RW access update|i1|r0,1,0",
	"lcs":                   "RO access|i1|r1,1,0",
	"lindex":                "RO access|i1|r0,1,0",
	"linsert":               "RW insert|i1|r0,1,0",
	"llen":                  "RO|i1|r0,1,0",
	"lmove":                 "RW access delete|i1|r0,1,0; RW insert|i2|r0,1,0",
	"lmpop":                 "RW access delete|i1|n0,1,1",
	"lpop":                  "RW access delete|i1|r0,1,0",
	"lpos":                  "RO access|i1|r0,1,0",
	"lpush":                 "RW insert|i1|r0,1,0",
	"lpushx":                "RW insert|i1|r0,1,0",
	"lrange":                "RO access|i1|r0,1,0",
	"lrem":                  "RW delete|i1|r0,1,0",
	"lset":                  "RW update|i1|r0,1,0",
	"ltrim":                 "RW delete|i1|r0,1,0",
	"memory|usage":          "RO|i2|r0,1,0",
	"mget":                  "RO access|i1|r-1,1,0",
	"migrate":               "RW access delete|i3|r0,1,0; RW access delete incomplete|kKEYS,-2|r-1,1,0",
	"move":                  "RW access update|i1|r0,1,0",
	"mset":                  "OW update|i1|r-1,2,0",
	"msetnx":                "OW insert|i1|r-1,2,0",
	"object|encoding":       "RO|i2|r0,1,0",
	"object|freq":           "RO|i2|r0,1,0",
	"object|idletime":       "RO|i2|r0,1,0",
	"object|refcount":       "RO|i2|r0,1,0",
	"persist":               "RW update|i1|r0,1,0",
	"pexpire":               "RW update|i1|r0,1,0",
	"pexpireat":             "RW update|i1|r0,1,0",
	"pexpiretime":           "RO access|i1|r0,1,0",
	"pfadd":                 "RW insert|i1|r0,1,0",
	"pfcount":               "RW access|i1|r-1,1,0",
	"pfdebug":               "RW access|i2|r0,1,0",
	"pfmerge":               "RW access insert|i1|r0,1,0; RO access|i2|r-1,1,0",
	"psetex":                "OW update|i1|r0,1,0",
	"pttl":                  "RO access|i1|r0,1,0",
	"rename":                "RW access delete|i1|r0,1,0; OW update|i2|r0,1,0",
	"renamenx":              "RW access delete|i1|r0,1,0; OW insert|i2|r0,1,0",
	"restore":               "OW update|i1|r0,1,0",
	"restore-asking":        "OW update|i1|r0,1,0",
	"rpop":                  "RW access delete|i1|r0,1,0",
	"rpoplpush":             "RW access delete|i1|r0,1,0; RW insert|i2|r0,1,0",
	"rpush":                 "RW insert|i1|r0,1,0",
	"rpushx":                "RW insert|i1|r0,1,0",
	"sadd":                  "RW insert|i1|r0,1,0",
	"scard":                 "RO|i1|r0,1,0",
	"sdiff":                 "RO access|i1|r-1,1,0",
	"sdiffstore":            "OW update|i1|r0,1,0; RO access|i2|r-1,1,0",
	"set":                   "RW access update variable_flags|i1|r0,1,0",
	"setbit":                "RW access update|i1|r0,1,0",
	"setex":                 "OW update|i1|r0,1,0",
	"setnx":                 "OW insert|i1|r0,1,0",
	"setrange":              "RW update|i1|r0,1,0",
	"sinter":                "RO access|i1|r-1,1,0",
	"sintercard":            "RO access|i1|n0,1,1",
	"sinterstore":           "RW update|i1|r0,1,0; RO access|i2|r-1,1,0",
	"sismember":             "RO|i1|r0,1,0",
	"smembers":              "RO access|i1|r0,1,0",
	"smismember":            "RO access|i1|r0,1,0",
	"smove":                 "RW access delete|i1|r0,1,0; RW insert|i2|r0,1,0",
	"sort":                  "RO access|i1|r0,1,0; RO access|u|u; OW update|u|u",
	"sort_ro":               "RO access|i1|r0,1,0; RO access|u|u",
	"spop":                  "RW access delete|i1|r0,1,0",
	"spublish":              "not_key|i1|r0,1,0",
	"srandmember":           "RO access|i1|r0,1,0",
	"srem":                  "RW delete|i1|r0,1,0",
	"sscan":                 "RO access|i1|r0,1,0",
	"ssubscribe":            "not_key|i1|r-1,1,0",
	"strlen":                "RO|i1|r0,1,0",
	"substr":                "RO access|i1|r0,1,0",
	"sunion":                "RO access|i1|r-1,1,0",
	"sunionstore":           "OW update|i1|r0,1,0; RO access|i2|r-1,1,0",
	"sunsubscribe":          "not_key|i1|r-1,1,0",
	"touch":                 "RO|i1|r-1,1,0",
	"ttl":                   "RO access|i1|r0,1,0",
	"type":                  "RO|i1|r0,1,0",
	"unlink":                "RM delete|i1|r-1,1,0",
	"watch":                 "RO|i1|r-1,1,0",
	"xack":                  "RW update|i1|r0,1,0",
	"xadd":                  "RW update|i1|r0,1,0",
	"xautoclaim":            "RW delete|i1|r0,1,0",
	"xclaim":                "RW update|i1|r0,1,0",
	"xdel":                  "RW delete|i1|r0,1,0",
	"xgroup|create":         "RW insert|i2|r0,1,0",
	"xgroup|createconsumer": "RW insert|i2|r0,1,0",
	"xgroup|delconsumer":    "RW delete|i2|r0,1,0",
	"xgroup|destroy":        "RW delete|i2|r0,1,0",
	"xgroup|setid":          "RW update|i2|r0,1,0",
	"xinfo|consumers":       "RO access|i2|r0,1,0",
	"xinfo|groups":          "RO access|i2|r0,1,0",
	"xinfo|stream":          "RO access|i2|r0,1,0",
	"xlen":                  "RO|i1|r0,1,0",
	"xpending":              "RO access|i1|r0,1,0",
	"xrange":                "RO access|i1|r0,1,0",
	"xread":                 "RO access|kSTREAMS,1|r-1,1,2",
	"xreadgroup":            "RO access|kSTREAMS,4|r-1,1,2",
	"xrevrange":             "RO access|i1|r0,1,0",
	"xsetid":                "RW update|i1|r0,1,0",
	"xtrim":                 "RW delete|i1|r0,1,0",
	"zadd":                  "RW update|i1|r0,1,0",
	"zcard":                 "RO|i1|r0,1,0",
	"zcount":                "RO access|i1|r0,1,0",
	"zdiff":                 "RO access|i1|n0,1,1",
	"zdiffstore":            "OW update|i1|r0,1,0; RO access|i2|n0,1,1",
	"zincrby":               "RW access update|i1|r0,1,0",
	"zinter":                "RO access|i1|n0,1,1",
	"zintercard":            "RO access|i1|n0,1,1",
	"zinterstore":           "OW update|i1|r0,1,0; RO access|i2|n0,1,1",
	"zlexcount":             "RO access|i1|r0,1,0",
	"zmpop":                 "RW access delete|i1|n0,1,1",
	"zmscore":               "RO access|i1|r0,1,0",
	"zpopmax":               "RW access delete|i1|r0,1,0",
	"zpopmin":               "RW access delete|i1|r0,1,0",
	"zrandmember":           "RO access|i1|r0,1,0",
	"zrange":                "RO access|i1|r0,1,0",
	"zrangebylex":           "RO access|i1|r0,1,0",
	"zrangebyscore":         "RO access|i1|r0,1,0",
	"zrangestore":           "OW update|i1|r0,1,0; RO access|i2|r0,1,0",
	"zrank":                 "RO access|i1|r0,1,0",
	"zrem":                  "RW delete|i1|r0,1,0",
	"zremrangebylex":        "RW delete|i1|r0,1,0",
	"zremrangebyrank":       "RW delete|i1|r0,1,0",
	"zremrangebyscore":      "RW delete|i1|r0,1,0",
	"zrevrange":             "RO access|i1|r0,1,0",
	"zrevrangebylex":        "RO access|i1|r0,1,0",
	"zrevrangebyscore":      "RO access|i1|r0,1,0",
	"zrevrank":              "RO access|i1|r0,1,0",
	"zscan":                 "RO access|i1|r0,1,0",
	"zscore":                "RO access|i1|r0,1,0",
	"zunion":                "RO access|i1|n0,1,1",
	"zunionstore":           "OW update|i1|r0,1,0; RO access|i2|n0,1,1",
}

// introKeySpecNotes are the notes of some key specs, by "command#spec index".
var introKeySpecNotes = map[string]string{
	"bitfield#0": "This command allows both access and modification of the key",
	"eval#0":     "We cannot tell how the keys will be used so we assume the worst, RW and UPDATE",
	"eval_ro#0":  "We cannot tell how the keys will be used so we assume the worst, RO and ACCESS",
	"fcall#0":    "We cannot tell how the keys will be used so we assume the worst, RW and UPDATE",
	"fcall_ro#0": "We cannot tell how the keys will be used so we assume the worst, RO and ACCESS",
	"getex#0":    "RW and UPDATE because it changes the TTL",
	"pfcount#0":  "RW because it may change the internal representation of the key, and propagate to replicas",
	"set#0":      "RW and ACCESS due to the optional `GET` argument",
	"sort#1":     "For the optional BY/GET keyword. It is marked 'unknown' because the key names derive from the content of the key we sort",
	"sort#2":     "For the optional STORE keyword. It is marked 'unknown' because the keyword can appear anywhere in the argument array",
	"sort_ro#1":  "For the optional BY/GET keyword. It is marked 'unknown' because the key names derive from the content of the key we sort",
	"xadd#0":     "UPDATE instead of INSERT because of the optional trimming feature",
}

// introTips are the command tips of COMMAND INFO (what a cluster client routes by).
var introTips = map[string]string{
	"client|info":                   "nondeterministic_output",
	"client|list":                   "nondeterministic_output",
	"cluster|bumpepoch":             "nondeterministic_output",
	"cluster|count-failure-reports": "nondeterministic_output",
	"cluster|getkeysinslot":         "nondeterministic_output",
	"cluster|info":                  "nondeterministic_output",
	"cluster|links":                 "nondeterministic_output",
	"cluster|nodes":                 "nondeterministic_output",
	"cluster|replicas":              "nondeterministic_output",
	"cluster|shards":                "nondeterministic_output",
	"cluster|slaves":                "nondeterministic_output",
	"cluster|slots":                 "nondeterministic_output",
	"command":                       "nondeterministic_output_order",
	"command|docs":                  "nondeterministic_output_order",
	"command|info":                  "nondeterministic_output_order",
	"command|list":                  "nondeterministic_output_order",
	"config|set":                    "request_policy:all_nodes response_policy:all_succeeded",
	"dbsize":                        "request_policy:all_shards response_policy:agg_sum",
	"del":                           "request_policy:multi_shard response_policy:agg_sum",
	"dump":                          "nondeterministic_output",
	"exists":                        "request_policy:multi_shard response_policy:agg_sum",
	"flushall":                      "request_policy:all_shards response_policy:all_succeeded",
	"flushdb":                       "request_policy:all_shards response_policy:all_succeeded",
	"function|delete":               "request_policy:all_shards response_policy:all_succeeded",
	"function|flush":                "request_policy:all_shards response_policy:all_succeeded",
	"function|kill":                 "request_policy:all_shards response_policy:one_succeeded",
	"function|list":                 "nondeterministic_output_order",
	"function|load":                 "request_policy:all_shards response_policy:all_succeeded",
	"function|restore":              "request_policy:all_shards response_policy:all_succeeded",
	"function|stats":                "nondeterministic_output request_policy:all_shards response_policy:special",
	"hgetall":                       "nondeterministic_output_order",
	"hkeys":                         "nondeterministic_output_order",
	"hrandfield":                    "nondeterministic_output",
	"hscan":                         "nondeterministic_output",
	"hvals":                         "nondeterministic_output_order",
	"info":                          "nondeterministic_output request_policy:all_shards response_policy:special",
	"keys":                          "request_policy:all_shards nondeterministic_output_order",
	"lastsave":                      "nondeterministic_output",
	"latency|doctor":                "nondeterministic_output request_policy:all_nodes response_policy:special",
	"latency|graph":                 "nondeterministic_output request_policy:all_nodes response_policy:special",
	"latency|histogram":             "nondeterministic_output request_policy:all_nodes response_policy:special",
	"latency|history":               "nondeterministic_output request_policy:all_nodes response_policy:special",
	"latency|latest":                "nondeterministic_output request_policy:all_nodes response_policy:special",
	"latency|reset":                 "request_policy:all_nodes response_policy:all_succeeded",
	"memory|doctor":                 "nondeterministic_output request_policy:all_shards response_policy:special",
	"memory|malloc-stats":           "nondeterministic_output request_policy:all_shards response_policy:special",
	"memory|purge":                  "request_policy:all_shards response_policy:all_succeeded",
	"memory|stats":                  "nondeterministic_output request_policy:all_shards response_policy:special",
	"mget":                          "request_policy:multi_shard",
	"migrate":                       "nondeterministic_output",
	"module|list":                   "nondeterministic_output_order",
	"mset":                          "request_policy:multi_shard response_policy:all_succeeded",
	"msetnx":                        "request_policy:multi_shard response_policy:agg_min",
	"object|encoding":               "nondeterministic_output",
	"object|freq":                   "nondeterministic_output",
	"object|idletime":               "nondeterministic_output",
	"object|refcount":               "nondeterministic_output",
	"ping":                          "request_policy:all_shards response_policy:all_succeeded",
	"pttl":                          "nondeterministic_output",
	"randomkey":                     "request_policy:all_shards nondeterministic_output",
	"scan":                          "nondeterministic_output request_policy:special",
	"script|exists":                 "request_policy:all_shards response_policy:agg_logical_and",
	"script|flush":                  "request_policy:all_nodes response_policy:all_succeeded",
	"script|kill":                   "request_policy:all_shards response_policy:one_succeeded",
	"script|load":                   "request_policy:all_nodes response_policy:all_succeeded",
	"sdiff":                         "nondeterministic_output_order",
	"sinter":                        "nondeterministic_output_order",
	"slowlog|get":                   "request_policy:all_nodes nondeterministic_output",
	"slowlog|len":                   "request_policy:all_nodes response_policy:agg_sum nondeterministic_output",
	"slowlog|reset":                 "request_policy:all_nodes response_policy:all_succeeded",
	"smembers":                      "nondeterministic_output_order",
	"spop":                          "nondeterministic_output",
	"srandmember":                   "nondeterministic_output",
	"sscan":                         "nondeterministic_output",
	"sunion":                        "nondeterministic_output_order",
	"time":                          "nondeterministic_output",
	"touch":                         "request_policy:multi_shard response_policy:agg_sum",
	"ttl":                           "nondeterministic_output",
	"unlink":                        "request_policy:multi_shard response_policy:agg_sum",
	"wait":                          "request_policy:all_shards response_policy:agg_min",
	"xadd":                          "nondeterministic_output",
	"xautoclaim":                    "nondeterministic_output",
	"xclaim":                        "nondeterministic_output",
	"xinfo|consumers":               "nondeterministic_output",
	"xpending":                      "nondeterministic_output",
	"xtrim":                         "nondeterministic_output",
	"zrandmember":                   "nondeterministic_output",
	"zscan":                         "nondeterministic_output",
}

// introDocMeta holds COMMAND DOCS' doc_flags, deprecated_since and replaced_by.
var introDocMeta = map[string][3]string{
	"brpoplpush":           {"deprecated", "6.2.0", "`BLMOVE` with the `RIGHT` and `LEFT` arguments"},
	"cluster|slaves":       {"deprecated", "5.0.0", "`CLUSTER REPLICAS`"},
	"cluster|slots":        {"deprecated", "7.0.0", "`CLUSTER SHARDS`"},
	"debug":                {"syscmd", "", ""},
	"georadius":            {"deprecated", "6.2.0", "`GEOSEARCH` and `GEOSEARCHSTORE` with the `BYRADIUS` argument"},
	"georadius_ro":         {"deprecated", "6.2.0", "`GEOSEARCH` with the `BYRADIUS` argument"},
	"georadiusbymember":    {"deprecated", "6.2.0", "`GEOSEARCH` and `GEOSEARCHSTORE` with the `BYRADIUS` and `FROMMEMBER` arguments"},
	"georadiusbymember_ro": {"deprecated", "6.2.0", "`GEOSEARCH` with the `BYRADIUS` and `FROMMEMBER` arguments"},
	"getset":               {"deprecated", "6.2.0", "`SET` with the `!GET` argument"},
	"hmset":                {"deprecated", "4.0.0", "`HSET` with multiple field-value pairs"},
	"pfdebug":              {"syscmd", "", ""},
	"pfselftest":           {"syscmd", "", ""},
	"replconf":             {"syscmd", "", ""},
	"restore-asking":       {"syscmd", "", ""},
	"rpoplpush":            {"deprecated", "6.2.0", "`LMOVE` with the `RIGHT` and `LEFT` arguments"},
	"slaveof":              {"deprecated", "5.0.0", "`REPLICAOF`"},
	"substr":               {"deprecated", "2.0.0", "`GETRANGE`"},
	"zrangebylex":          {"deprecated", "6.2.0", "`ZRANGE` with the `BYLEX` argument"},
	"zrangebyscore":        {"deprecated", "6.2.0", "`ZRANGE` with the `BYSCORE` argument"},
	"zrevrange":            {"deprecated", "6.2.0", "`ZRANGE` with the `REV` argument"},
	"zrevrangebylex":       {"deprecated", "6.2.0", "`ZRANGE` with the `REV` and `BYLEX` arguments"},
	"zrevrangebyscore":     {"deprecated", "6.2.0", "`ZRANGE` with the `REV` and `BYSCORE` arguments"},
}
