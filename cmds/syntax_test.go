package cmds

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// syntaxDocTree renders an argument tree compactly for comparisons:
// name:type[=TOKEN][?][+][++][#spec](children).
func syntaxDocTree(args []*docArg) string {
	parts := make([]string, len(args))
	for i, a := range args {
		s := a.name + ":" + a.typ
		if a.hasToken {
			s += "=" + a.token
		}
		if a.optional {
			s += "?"
		}
		if a.multiple {
			s += "+"
		}
		if a.multipleToken {
			s += "+"
		}
		if a.keySpec >= 0 {
			s += fmt.Sprintf("#%d", a.keySpec)
		}
		if a.args != nil {
			s += "(" + syntaxDocTree(a.args) + ")"
		}
		parts[i] = s
	}
	return strings.Join(parts, " ")
}

// The trees below are Redis 7.0's COMMAND DOCS argument trees for these synopses.
func TestSyntax_ParseMatchesRedisDocs(t *testing.T) {
	cases := []struct {
		cmd, syntax string
		nspecs      int
		want        string
	}{
		{"get", "key", 1, "key:key#0"},
		{"set", "key value [NX | XX] [GET] [EX seconds | PX milliseconds | EXAT unix-time-seconds | PXAT unix-time-milliseconds | KEEPTTL]", 1,
			"key:key#0 value:string condition:oneof?(nx:pure-token=NX xx:pure-token=XX) get:pure-token=GET? " +
				"expiration:oneof?(seconds:integer=EX milliseconds:integer=PX unix-time-seconds:unix-time=EXAT " +
				"unix-time-milliseconds:unix-time=PXAT keepttl:pure-token=KEEPTTL)"},
		{"scan", "cursor [MATCH pattern] [COUNT count] [TYPE type]", 0,
			"cursor:integer pattern:pattern=MATCH? count:integer=COUNT? type:string=TYPE?"},
		{"expire", "key seconds [NX | XX | GT | LT]", 1,
			"key:key#0 seconds:integer condition:oneof?(nx:pure-token=NX xx:pure-token=XX gt:pure-token=GT lt:pure-token=LT)"},
		{"config|set", "parameter value [parameter value ...]", 0,
			"parameter_value:block+(parameter:string value:string)"},
		{"config|get", "parameter [parameter ...]", 0, "parameter:block+(parameter:string)"},
		{"mset", "key value [key value ...]", 1, "key_value:block+(key:key#0 value:string)"},
		{"del", "key [key ...]", 1, "key:key+#0"},
		{"rename", "key newkey", 2, "key:key#0 newkey:key#1"},
		{"copy", "source destination [DB destination-db] [REPLACE]", 2,
			"source:key#0 destination:key#1 destination-db:integer=DB? replace:pure-token=REPLACE?"},
		{"flushall", "[ASYNC | SYNC]", 0, "async:oneof?(async:pure-token=ASYNC sync:pure-token=SYNC)"},
		{"command|info", "[command-name [command-name ...]]", 0, "command-name:string?+"},
		{"command|list", "[FILTERBY <MODULE module-name | ACLCAT category | PATTERN pattern>]", 0,
			"filterby:oneof=FILTERBY?(module-name:string=MODULE category:string=ACLCAT pattern:pattern=PATTERN)"},
		{"client|list", "[TYPE <NORMAL | MASTER | REPLICA | PUBSUB>] [ID client-id [client-id ...]]", 0,
			"normal_master_replica_pubsub:oneof=TYPE?(normal:pure-token=NORMAL master:pure-token=MASTER " +
				"replica:pure-token=REPLICA pubsub:pure-token=PUBSUB) id:block=ID?(client-id:integer+)"},
		// A repeated oneof as Redis's docs print it, and as "<a | b> [<a | b> ...]".
		{"client|kill", "<ip:port | <[ID client-id] | [TYPE <NORMAL | MASTER | SLAVE | REPLICA | PUBSUB>] | [USER username] | " +
			"[ADDR ip:port] | [LADDR ip:port] | [SKIPME yes/no] [[ID client-id] | [TYPE <NORMAL | MASTER | SLAVE | REPLICA | PUBSUB>] | " +
			"[USER username] | [ADDR ip:port] | [LADDR ip:port] | [SKIPME yes/no] ...]>>", 0, syntaxClientKillTree},
		{"client|kill", "<ip:port | <<[ID client-id] | [TYPE <NORMAL | MASTER | SLAVE | REPLICA | PUBSUB>] | [USER username] | " +
			"[ADDR ip:port] | [LADDR ip:port] | [SKIPME yes/no]> [<[ID client-id] | [TYPE <NORMAL | MASTER | SLAVE | REPLICA | PUBSUB>] | " +
			"[USER username] | [ADDR ip:port] | [LADDR ip:port] | [SKIPME yes/no]> ...]>>", 0, syntaxClientKillTree},
		{"sort", "key [BY pattern] [LIMIT offset count] [GET pattern [GET pattern ...]] [ASC | DESC] [ALPHA] [STORE destination]", 0,
			"key:key pattern:pattern=BY? offset_count:block=LIMIT?(offset:integer count:integer) " +
				"pattern:pattern=GET?++ order:oneof?(asc:pure-token=ASC desc:pure-token=DESC) sorting:pure-token=ALPHA? " +
				"destination:key=STORE?"},
		{"migrate", `host port <key | ""> destination-db timeout [COPY] [REPLACE] [[AUTH password] | [AUTH2 username password]] [KEYS key [key ...]]`, 2,
			"host:string port:integer key_or_empty_string:oneof(key:key#0 empty_string:pure-token=) destination-db:integer " +
				"timeout:integer copy:pure-token=COPY? replace:pure-token=REPLACE? authentication:oneof?(password:string=AUTH? " +
				"username_password:block=AUTH2?(username:string password:string)) key:key=KEYS?+#1"},
		{"xread", "[COUNT count] [BLOCK milliseconds] STREAMS key [key ...] id [id ...]", 1,
			"count:integer=COUNT? milliseconds:integer=BLOCK? streams:block=STREAMS(key:key+#0 id:string+)"},
		{"xinfo|stream", "key [FULL [COUNT count]]", 1, "key:key#0 full:block=FULL?(count:integer=COUNT?)"},
		{"failover", "[TO host port [FORCE]] [ABORT] [TIMEOUT milliseconds]", 0,
			"target:block=TO?(host:string port:integer force:pure-token=FORCE?) abort:pure-token=ABORT? milliseconds:integer=TIMEOUT?"},
		{"replicaof", "<host port | NO ONE>", 0,
			"args:oneof(host-port:block(host:string port:integer) no-one:block(no:pure-token=NO one:pure-token=ONE))"},
		{"lmove", "source destination <LEFT | RIGHT> <LEFT | RIGHT>", 2,
			"source:key#0 destination:key#1 wherefrom:oneof(left:pure-token=LEFT right:pure-token=RIGHT) " +
				"whereto:oneof(left:pure-token=LEFT right:pure-token=RIGHT)"},
		{"incrbyfloat", "key increment", 1, "key:key#0 increment:double"},
		{"incrby", "key increment", 1, "key:key#0 increment:integer"},
		{"bitfield", "key [GET encoding offset | [OVERFLOW <WRAP | SAT | FAIL>] <SET encoding offset value | INCRBY encoding offset increment> " +
			"[GET encoding offset | [OVERFLOW <WRAP | SAT | FAIL>] <SET encoding offset value | INCRBY encoding offset increment> ...]]", 1,
			"key:key#0 operation:oneof?+(encoding_offset:block=GET(encoding:string offset:integer) " +
				"write:block(wrap_sat_fail:oneof=OVERFLOW?(wrap:pure-token=WRAP sat:pure-token=SAT fail:pure-token=FAIL) " +
				"write_operation:oneof(encoding_offset_value:block=SET(encoding:string offset:integer value:integer) " +
				"encoding_offset_increment:block=INCRBY(encoding:string offset:integer increment:integer))))"},
		// Compact spellings Redis's docs do not use still parse.
		{"getex", "key [EX seconds|PX milliseconds|PERSIST]", 1,
			"key:key#0 seconds_milliseconds_persist:oneof?(seconds:integer=EX milliseconds:integer=PX persist:pure-token=PERSIST)"},
		{"ping", "", 0, ""},
	}
	for _, tc := range cases {
		args, err := parseSyntax(tc.cmd, tc.syntax)
		if err != nil {
			t.Errorf("%s %q: %v", tc.cmd, tc.syntax, err)
			continue
		}
		syntaxNumberKeyArgs(args, tc.nspecs)
		if got := syntaxDocTree(args); got != tc.want {
			t.Errorf("%s %q:\n got  %s\n want %s", tc.cmd, tc.syntax, got, tc.want)
		}
	}
}

const syntaxClientKillTree = "filter:oneof(ip:port:string new-format:oneof+(client-id:integer=ID? " +
	"normal_master_slave_pubsub:oneof=TYPE?(normal:pure-token=NORMAL master:pure-token=MASTER slave:pure-token=SLAVE " +
	"replica:pure-token=REPLICA pubsub:pure-token=PUBSUB) username:string=USER? ip:port:string=ADDR? " +
	"ip:port:string=LADDR? yes/no:string=SKIPME?))"

func TestSyntax_RejectsMalformed(t *testing.T) {
	for _, s := range []string{
		"[key", "key]", "<a | b", "a | b", "[]", "key ...", "[a ... b]", "<a>>", "[a | ]", "[key [key ...]",
	} {
		if args, err := parseSyntax("x", s); err == nil {
			t.Errorf("%q parsed as %s, want an error", s, syntaxDocTree(args))
		}
	}
}

func TestSyntax_ArgCount(t *testing.T) {
	cases := []struct {
		syntax   string
		min, max int
	}{
		{"", 0, 0},
		{"key", 1, 1},
		{"[message]", 0, 1},
		{"key [key ...]", 1, -1},
		{"key value [NX | XX] [GET] [EX seconds | PX milliseconds | KEEPTTL]", 2, 6},
		{"key value [key value ...]", 2, -1},
		{"<ip:port | <[ID client-id] | [USER username] [[ID client-id] | [USER username] ...]>>", 0, -1},
		{"[FILTERBY <MODULE module-name | ACLCAT category | PATTERN pattern>]", 0, 3},
		{"source destination <LEFT | RIGHT> <LEFT | RIGHT>", 4, 4},
		{"[TO host port [FORCE]] [ABORT] [TIMEOUT milliseconds]", 0, 7},
	}
	for _, tc := range cases {
		args, err := parseSyntax("x", tc.syntax)
		if err != nil {
			t.Fatalf("%q: %v", tc.syntax, err)
		}
		if lo, hi := syntaxArgCount(args); lo != tc.min || hi != tc.max {
			t.Errorf("%q: got %d..%d, want %d..%d", tc.syntax, lo, hi, tc.min, tc.max)
		}
	}
}

// Redis 7.0 declarations whose arity and documented synopsis disagree: the arity is looser
// than the synopsis (GEOPOS key with no member is valid) or the docs list no arguments.
var syntaxArityQuirks = map[string]bool{
	"geopos": true, "geohash": true, "pfmerge": true, "client|kill": true,
	"command|getkeys": true, "command|getkeysandflags": true, "debug": true,
}

// The commands Redis 7.0 documents without a complexity.
var introNoComplexity = map[string]bool{"monitor": true, "sync": true, "psync": true, "lolwut": true}

// TestCommandTable_Declarations checks every registered command and subcommand, so that a
// declaration that COMMAND, COMMAND DOCS or key routing would describe wrongly fails here.
func TestCommandTable_Declarations(t *testing.T) {
	var all []*Command
	for _, cmd := range introSorted(table) {
		all = append(all, cmd)
		all = append(all, introSorted(cmd.Subs)...)
	}
	if len(all) < 10 {
		t.Fatalf("only %d commands registered", len(all))
	}
	for _, cmd := range all {
		introCheckDeclaration(cmd, t.Errorf)
	}
}

// Each declaration below is wrong in one way the check must catch.
func TestCommandTable_CatchesBadDeclarations(t *testing.T) {
	run := func(*Ctx) {}
	keys := func([][]byte) [][]byte { return nil }
	cases := []Command{
		{Name: "a", Arity: 2, Group: "g", Since: "1", Complexity: "O(1)", Syntax: "key", FirstKey: 1, LastKey: 1, Step: 1, Run: run},
		{Name: "b", Arity: 3, Summary: "s", Group: "g", Since: "1", Complexity: "O(1)", Syntax: "key", FirstKey: 1, LastKey: 1, Step: 1, Run: run},
		{Name: "c", Arity: -2, Summary: "s", Group: "g", Since: "1", Complexity: "O(1)", Syntax: "key value", FirstKey: 1, LastKey: 1, Step: 1, Run: run},
		{Name: "d", Arity: 3, Summary: "s", Group: "g", Since: "1", Complexity: "O(1)", Syntax: "field key", FirstKey: 1, LastKey: 1, Step: 1, Run: run},
		{Name: "e", Arity: 2, Summary: "s", Group: "g", Since: "1", Complexity: "O(1)", Syntax: "key", Run: run},
		{Name: "f", Arity: 2, Summary: "s", Group: "g", Since: "1", Complexity: "O(1)", Syntax: "message", FirstKey: 1, LastKey: 1, Step: 1, Run: run},
		{Name: "g", Arity: 2, Summary: "s", Group: "g", Since: "1", Complexity: "O(1)", Syntax: "[key", FirstKey: 1, LastKey: 1, Step: 1, Run: run},
		{Name: "h", Arity: 2, Summary: "s", Group: "g", Since: "1", Complexity: "O(1)", Syntax: "key", FirstKey: 1, LastKey: 3, Step: 1, Run: run},
		{Name: "i", Arity: -2, Summary: "s", Group: "g", Since: "1", Complexity: "O(1)", Syntax: "key [key ...]", FirstKey: 1, LastKey: 0, Step: 1, Run: run},
		{Name: "j", Arity: 2, Summary: "s", Group: "g", Since: "1", Complexity: "O(1)", Syntax: "key", FirstKey: 1, LastKey: 1, Step: 1},
		{Name: "k", Arity: -3, Summary: "s", Group: "g", Since: "1", Complexity: "", Syntax: "numkeys key [key ...]", Keys: keys, Run: run},
	}
	for _, cmd := range cases {
		var errs []string
		introCheckDeclaration(&cmd, func(format string, args ...any) { errs = append(errs, fmt.Sprintf(format, args...)) })
		if len(errs) == 0 {
			t.Errorf("%s: declaration %+v passed", cmd.Name, cmd)
		}
	}
}

func introCheckDeclaration(cmd *Command, errorf func(format string, args ...any)) {
	name := cmd.Name
	for field, v := range map[string]string{"Summary": cmd.Summary, "Group": cmd.Group, "Since": cmd.Since, "Complexity": cmd.Complexity} {
		if v == "" && !(field == "Complexity" && introNoComplexity[name]) {
			errorf("%s: empty %s", name, field)
		}
	}
	if cmd.Arity == 0 {
		errorf("%s: arity 0", name)
	}
	if cmd.Subs != nil {
		if cmd.Syntax != "" {
			errorf("%s: a container command declares its subcommands' syntax", name)
		}
		return
	}
	if cmd.Run == nil {
		errorf("%s: no Run", name)
	}
	args, err := parseSyntax(name, cmd.Syntax)
	if err != nil {
		errorf("%s: Syntax does not parse: %v", name, err)
		return
	}
	base := 1 // argv words before the arguments: the name, and the subcommand's
	if cmd.parent != nil {
		base = 2
	}
	lo, hi := syntaxArgCount(args)
	lo += base
	if hi >= 0 {
		hi += base
	}
	switch n := cmd.Arity; {
	case syntaxArityQuirks[name]:
	case n > 0 && (lo != n || hi != n):
		errorf("%s: arity %d but Syntax %q takes %d..%d words (with the command name)", name, n, cmd.Syntax, lo, hi)
	case n < 0 && (lo != -n || hi >= 0 && hi < -n):
		errorf("%s: arity %d but Syntax %q takes %d..%d words (with the command name)", name, n, cmd.Syntax, lo, hi)
	}
	introCheckKeyDeclaration(cmd, args, base, errorf)
}

// introCheckKeyDeclaration checks key positions against the arity and the synopsis.
func introCheckKeyDeclaration(cmd *Command, args []*docArg, base int, errorf func(format string, args ...any)) {
	name := cmd.Name
	pubsub := cmd.Has(FlagPubSub)
	hasKeyArg := false
	syntaxWalk(args, func(a *docArg) { hasKeyArg = hasKeyArg || a.typ == "key" })
	if cmd.FirstKey == 0 {
		if cmd.LastKey != 0 || cmd.Step != 0 {
			errorf("%s: no first key but LastKey %d, Step %d", name, cmd.LastKey, cmd.Step)
		}
		if hasKeyArg && cmd.Keys == nil {
			errorf("%s: Syntax %q names a key but the command declares no key positions", name, cmd.Syntax)
		}
		return
	}
	n := cmd.Arity
	if n < 0 {
		n = -n
	}
	switch {
	case cmd.FirstKey < 0 || cmd.Step <= 0:
		errorf("%s: FirstKey %d Step %d", name, cmd.FirstKey, cmd.Step)
	case cmd.LastKey == 0 || cmd.LastKey > 0 && cmd.LastKey < cmd.FirstKey:
		errorf("%s: LastKey %d with FirstKey %d", name, cmd.LastKey, cmd.FirstKey)
	case pubsub:
	case cmd.FirstKey >= n:
		errorf("%s: FirstKey %d beyond the %d arguments arity %d guarantees", name, cmd.FirstKey, n, cmd.Arity)
	case cmd.LastKey > 0 && cmd.LastKey >= n:
		errorf("%s: LastKey %d beyond the %d arguments arity %d guarantees", name, cmd.LastKey, n, cmd.Arity)
	case cmd.LastKey < 0 && n+cmd.LastKey < cmd.FirstKey:
		errorf("%s: LastKey %d leaves no key with %d arguments", name, cmd.LastKey, n)
	}
	if pubsub || cmd.Keys != nil {
		return
	}
	if !hasKeyArg {
		errorf("%s: declares keys from %d but Syntax %q names no key", name, cmd.FirstKey, cmd.Syntax)
		return
	}
	if pos, ok := introFirstKeyPosition(args, base); ok && pos != cmd.FirstKey {
		errorf("%s: FirstKey %d but Syntax %q puts the first key at %d", name, cmd.FirstKey, cmd.Syntax, pos)
	}
}

// introFirstKeyPosition finds the argv index of the first key argument when every argument
// before it has a fixed width.
func introFirstKeyPosition(args []*docArg, pos int) (int, bool) {
	for _, a := range args {
		if a.optional {
			return 0, false
		}
		switch {
		case a.typ == "key" && !a.hasToken:
			return pos, true
		case a.typ == "block" && !a.hasToken && len(a.args) > 0:
			return introFirstKeyPosition(a.args, pos)
		case a.typ == "oneof" && !a.hasToken && slices.ContainsFunc(a.args, func(k *docArg) bool { return k.typ == "key" }):
			return pos, true
		}
		lo, hi := a.wordCount()
		if lo != hi || a.multiple {
			return 0, false
		}
		pos += lo
	}
	return 0, false
}

func TestCommandTable_DocsAndInfoBuild(t *testing.T) {
	for _, cmd := range table {
		for _, c := range append([]*Command{cmd}, introSorted(cmd.Subs)...) {
			e := introFor(c)
			if e.argErr != nil {
				t.Errorf("%s: %v", c.Name, e.argErr)
			}
			if c.FirstKey > 0 && c.Keys == nil && len(e.specs) == 0 {
				t.Errorf("%s: keyed but no key spec", c.Name)
			}
		}
	}
}

func introSpecString(specs []introKeySpec) string {
	var parts []string
	for _, s := range specs {
		p := strings.Join(s.flags, ",") + " " + s.bsType
		switch s.bsType {
		case "index":
			p += fmt.Sprintf(":%d", s.index)
		case "keyword":
			p += fmt.Sprintf(":%s,%d", s.keyword, s.startFrom)
		}
		p += " " + s.fkType
		switch s.fkType {
		case "range":
			p += fmt.Sprintf(":%d,%d,%d", s.lastKey, s.keyStep, s.limit)
		case "keynum":
			p += fmt.Sprintf(":%d,%d,%d", s.keyNumIdx, s.firstKeyAfterNum, s.keyStep)
		}
		parts = append(parts, p)
	}
	return strings.Join(parts, "; ")
}

// The specs Redis 7.0's COMMAND INFO gives, derived from the key range and Redis's flags.
func TestKeySpecs_FromKeyRange(t *testing.T) {
	cases := []struct {
		cmd  Command
		want string
	}{
		{Command{Name: "get", Flags: []string{"readonly"}, FirstKey: 1, LastKey: 1, Step: 1}, "RO,access index:1 range:0,1,0"},
		{Command{Name: "set", Flags: []string{"write"}, FirstKey: 1, LastKey: 1, Step: 1}, "RW,access,update,variable_flags index:1 range:0,1,0"},
		{Command{Name: "del", Flags: []string{"write"}, FirstKey: 1, LastKey: -1, Step: 1}, "RM,delete index:1 range:-1,1,0"},
		{Command{Name: "mset", Flags: []string{"write"}, FirstKey: 1, LastKey: -1, Step: 2}, "OW,update index:1 range:-1,2,0"},
		{Command{Name: "rename", Flags: []string{"write"}, FirstKey: 1, LastKey: 2, Step: 1},
			"RW,access,delete index:1 range:0,1,0; OW,update index:2 range:0,1,0"},
		{Command{Name: "sdiffstore", Flags: []string{"write"}, FirstKey: 1, LastKey: -1, Step: 1},
			"OW,update index:1 range:0,1,0; RO,access index:2 range:-1,1,0"},
		{Command{Name: "lcs", Flags: []string{"readonly"}, FirstKey: 1, LastKey: 2, Step: 1}, "RO,access index:1 range:1,1,0"},
		{Command{Name: "object|encoding", Flags: []string{"readonly"}, FirstKey: 2, LastKey: 2, Step: 1}, "RO index:2 range:0,1,0"},
		// Not a Redis command: flags from the command's flags.
		{Command{Name: "x-new", Flags: []string{"write"}, FirstKey: 1, LastKey: -2, Step: 1}, "RW,access,update index:1 range:-2,1,0"},
		{Command{Name: "x-ro", Flags: []string{"readonly"}, FirstKey: 1, LastKey: 1, Step: 1}, "RO,access index:1 range:0,1,0"},
		// A Keys func: Redis's own specs, or none.
		{Command{Name: "zunionstore", Flags: []string{"write"}, FirstKey: 1, LastKey: 1, Step: 1, Keys: func([][]byte) [][]byte { return nil }},
			"OW,update index:1 range:0,1,0; RO,access index:2 keynum:0,1,1"},
		{Command{Name: "x-movable", Flags: []string{"write"}, Keys: func([][]byte) [][]byte { return nil }}, ""},
		{Command{Name: "ping"}, ""},
	}
	for _, tc := range cases {
		tc.cmd.flags = parseFlags(tc.cmd.Name, tc.cmd.Flags)
		if got := introSpecString(commandKeySpecs(&tc.cmd)); got != tc.want {
			t.Errorf("%s: got %q, want %q", tc.cmd.Name, got, tc.want)
		}
	}
}

func TestKeySpecs_TableDecodes(t *testing.T) {
	for name := range introKeySpecs {
		specs := introTableSpecs(name)
		if len(specs) == 0 {
			t.Errorf("%s: no specs", name)
		}
		for _, s := range specs {
			if len(s.flags) == 0 || s.bsType == "index" && s.index <= 0 || s.fkType == "range" && s.keyStep <= 0 ||
				s.fkType == "keynum" && s.keyStep <= 0 || s.bsType == "keyword" && s.keyword == "" {
				t.Errorf("%s: bad spec %+v", name, s)
			}
		}
	}
}

func introArgv(s string) [][]byte {
	var out [][]byte
	for _, f := range strings.Fields(s) {
		out = append(out, []byte(f))
	}
	return out
}

func introKeysString(keys []introKey) string {
	var parts []string
	for _, k := range keys {
		parts = append(parts, string(k.key)+"="+strings.Join(k.flags, ","))
	}
	return strings.Join(parts, " ")
}

func TestKeysOf_SpecWalk(t *testing.T) {
	numkeys := func(args [][]byte) [][]byte { // ZUNIONSTORE's keys
		n, _ := parseInt(args[2])
		out := [][]byte{args[1]}
		for i := 0; i < int(n) && 3+i < len(args); i++ {
			out = append(out, args[3+i])
		}
		return out
	}
	store := func(args [][]byte) [][]byte { // GEORADIUS key ... [STORE key]
		out := [][]byte{args[1]}
		for i := 6; i+1 < len(args); i++ {
			if strings.EqualFold(string(args[i]), "store") {
				out = append(out, args[i+1])
			}
		}
		return out
	}
	cases := []struct {
		cmd  Command
		argv string
		want string
	}{
		{Command{Name: "rename", Arity: 3, Flags: []string{"write"}, FirstKey: 1, LastKey: 2, Step: 1}, "rename a b",
			"a=RW,access,delete b=OW,update"},
		{Command{Name: "mset", Arity: -3, Flags: []string{"write"}, FirstKey: 1, LastKey: -1, Step: 2}, "mset a 1 b 2",
			"a=OW,update b=OW,update"},
		{Command{Name: "mset", Arity: -3, Flags: []string{"write"}, FirstKey: 1, LastKey: -1, Step: 2}, "mset a 1 b",
			"a=OW,update b=OW,update"},
		{Command{Name: "zunionstore", Arity: -4, Flags: []string{"write"}, FirstKey: 1, LastKey: 1, Step: 1, Keys: numkeys},
			"zunionstore d 2 d x", "d=OW,update d=RO,access x=RO,access"},
		{Command{Name: "set", Arity: -3, Flags: []string{"write"}, FirstKey: 1, LastKey: 1, Step: 1}, "set a b", "a=OW,update"},
		{Command{Name: "set", Arity: -3, Flags: []string{"write"}, FirstKey: 1, LastKey: 1, Step: 1}, "set a b EX 1 get", "a=RW,access,update"},
		{Command{Name: "bitfield", Arity: -2, Flags: []string{"write"}, FirstKey: 1, LastKey: 1, Step: 1}, "bitfield a GET u8 0 OVERFLOW SAT", "a=RO,access"},
		{Command{Name: "bitfield", Arity: -2, Flags: []string{"write"}, FirstKey: 1, LastKey: 1, Step: 1}, "bitfield a GET u8 0 SET u8 0 1", "a=RW,access,update"},
		{Command{Name: "georadius", Arity: -6, Flags: []string{"write"}, FirstKey: 1, LastKey: 1, Step: 1, Keys: store},
			"georadius k 1 2 3 m STORE d", "k=RO,access d=OW,update"},
	}
	for _, tc := range cases {
		if got := introKeysString(introKeysOf(&tc.cmd, introArgv(tc.argv))); got != tc.want {
			t.Errorf("%s: got %q, want %q", tc.argv, got, tc.want)
		}
	}
	// The keys are those routing uses.
	for _, cmd := range table {
		if cmd.Keys != nil || cmd.FirstKey == 0 {
			continue
		}
		n := max(cmd.Arity, -cmd.Arity) + 3
		if cmd.Arity > 0 {
			n = cmd.Arity
		}
		a := [][]byte{[]byte(cmd.Name)}
		for i := 1; i < n; i++ {
			a = append(a, []byte(fmt.Sprintf("a%d", i)))
		}
		var got []string
		for _, k := range introKeysOf(cmd, a) {
			got = append(got, string(k.key))
		}
		var want []string
		for _, k := range cmd.KeyArgs(a) {
			want = append(want, string(k))
		}
		if !slices.Equal(got, want) {
			t.Errorf("%s: COMMAND GETKEYS gives %v, routing %v", cmd.Name, got, want)
		}
	}
}

func TestInfoFlags_Movablekeys(t *testing.T) {
	keys := func([][]byte) [][]byte { return nil }
	cases := []struct {
		cmd  Command
		want string
	}{
		{Command{Flags: []string{"write", "denyoom"}}, "write denyoom"},
		{Command{Flags: []string{"write", "denyoom"}, Keys: keys}, "write denyoom movablekeys"},
		{Command{Flags: []string{"noscript", "loading", "stale", "fast", "allow_busy"}, Keys: keys}, "noscript loading stale fast movablekeys allow_busy"},
		{Command{Flags: []string{"readonly", "movablekeys"}, Keys: keys}, "readonly movablekeys"},
	}
	for _, tc := range cases {
		tc.cmd.flags = parseFlags(tc.cmd.Name, tc.cmd.Flags)
		if got := strings.Join(introInfoFlags(&tc.cmd), " "); got != tc.want {
			t.Errorf("got %q, want %q", got, tc.want)
		}
	}
}
