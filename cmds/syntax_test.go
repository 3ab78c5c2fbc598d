package cmds

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"shardis/cmdspec"
)

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
	if !cmd.Runs() {
		errorf("%s: no Run", name)
	}
	if cmd.Run != nil && cmd.RunServer != nil {
		errorf("%s: both Run and RunServer", name)
	}
	args, err := cmdspec.ParseSyntax(name, cmd.Syntax)
	if err != nil {
		errorf("%s: Syntax does not parse: %v", name, err)
		return
	}
	base := 1 // argv words before the arguments: the name, and the subcommand's
	if cmd.parent != nil {
		base = 2
	}
	lo, hi := cmdspec.ArgCount(args)
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
func introCheckKeyDeclaration(cmd *Command, args []*cmdspec.Arg, base int, errorf func(format string, args ...any)) {
	name := cmd.Name
	pubsub := cmd.Has(FlagPubSub)
	hasKeyArg := false
	cmdspec.Walk(args, func(a *cmdspec.Arg) { hasKeyArg = hasKeyArg || a.Type == "key" })
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
func introFirstKeyPosition(args []*cmdspec.Arg, pos int) (int, bool) {
	for _, a := range args {
		if a.Optional {
			return 0, false
		}
		switch {
		case a.Type == "key" && !a.HasToken:
			return pos, true
		case a.Type == "block" && !a.HasToken && len(a.Args) > 0:
			return introFirstKeyPosition(a.Args, pos)
		case a.Type == "oneof" && !a.HasToken && slices.ContainsFunc(a.Args, func(k *cmdspec.Arg) bool { return k.Type == "key" }):
			return pos, true
		}
		lo, hi := cmdspec.ArgCount([]*cmdspec.Arg{a})
		if lo != hi || a.Multiple {
			return 0, false
		}
		pos += lo
	}
	return 0, false
}

func TestCommandTable_DocsAndInfoBuild(t *testing.T) {
	for _, cmd := range table {
		for _, c := range append([]*Command{cmd}, introSorted(cmd.Subs)...) {
			if e := introFor(c); e.argErr != nil {
				t.Errorf("%s: %v", c.Name, e.argErr)
			}
			if c.FirstKey > 0 && c.Keys == nil && len(c.KeySpecs) == 0 {
				t.Errorf("%s: keyed but no key spec", c.Name)
			}
			for _, s := range c.KeySpecs {
				access := s.Flags & (cmdspec.RO | cmdspec.RW | cmdspec.OW | cmdspec.RM)
				if access&(access-1) != 0 || access == 0 && s.Flags&cmdspec.NotKey == 0 ||
					s.Begin.Type == cmdspec.BeginIndex && s.Begin.Index <= 0 ||
					s.Begin.Type == cmdspec.BeginKeyword && s.Begin.Keyword == "" ||
					s.Find.Type != cmdspec.FindUnknown && s.Find.KeyStep <= 0 ||
					(s.Flags&cmdspec.VariableFlags != 0) != (s.Variable != nil) {
					t.Errorf("%s: bad key spec %+v", c.Name, s)
				}
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

func introKeysString(keys []cmdspec.Key) string {
	var parts []string
	for _, k := range keys {
		parts = append(parts, string(k.Key)+"="+strings.Join(k.Flags.Names(), ","))
	}
	return strings.Join(parts, " ")
}

func TestKeysOf_SpecWalk(t *testing.T) {
	cases := []struct {
		argv string
		want string
	}{
		{"rename a b", "a=RW,access,delete b=OW,update"},
		{"mset a 1 b 2", "a=OW,update b=OW,update"},
		{"mset a 1 b", "a=OW,update b=OW,update"},
		{"zunionstore d 2 d x", "d=OW,update d=RO,access x=RO,access"},
		{"set a b", "a=OW,update"},
		{"set a b EX 1 get", "a=RW,access,update"},
		{"sort k STORE d", "k=RO,access d=OW,update"},
		{"lmpop 2 a b LEFT", "a=RW,access,delete b=RW,access,delete"},
	}
	for _, tc := range cases {
		argv := introArgv(tc.argv)
		if got := introKeysString(Lookup(argv).keysWithFlags(argv)); got != tc.want {
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
		for _, k := range cmd.keysWithFlags(a) {
			got = append(got, string(k.Key))
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
