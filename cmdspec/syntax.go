package cmdspec

import (
	"errors"
	"fmt"
	"strings"
)

// COMMAND DOCS describes each command's arguments as a tree (name, type, token, flags, nested
// arguments). Rather than declaring that tree by hand for every command, a command declares
// the one-line synopsis Redis's documentation prints ("key value [NX | XX] [GET] [EX seconds |
// …]") and the tree is parsed from it here. The synopsis grammar:
//
//	synopsis := item*
//	item     := WORD | "[" alts "]" | "<" alts ">"     optional / required group
//	alts     := item* ("|" item*)*
//	repeat   := X "[" X "...]"                          X one or more times
//
// An all-uppercase WORD ("NX", "KEEPTTL", "=", `""`) is a literal token; any other word names
// a value whose type (key, integer, double, pattern, unix-time, string) follows from its name
// as in Redis's command table. A token directly before a value becomes that value's token
// ("EX seconds"), a token before two or more values opens a block ("LIMIT offset count").

// Arg is one node of a command's COMMAND DOCS argument tree.
type Arg struct {
	Name          string
	Type          string // key, string, integer, double, pattern, unix-time, pure-token, oneof, block
	Token         string
	HasToken      bool // Token may be "" (MIGRATE's empty key)
	Optional      bool
	Multiple      bool
	MultipleToken bool
	KeySpec       int // key_spec_index; -1 when none
	Args          []*Arg
}

// synNode is one element of a synopsis before it is turned into Args.
type synNode struct {
	kind  byte        // 'w' word, '[' optional group, '<' required group, '.' "...", 'r' repetition
	word  string      // kind 'w'
	alts  [][]synNode // kinds '[' and '<'
	body  []synNode   // kind 'r': what repeats
	ropt  bool        // kind 'r': zero or more times (no leading occurrence matched)
	many  bool        // kinds '[' and '<': "<a | b [a | b ...]>", one or more of the alternatives
	token bool        // kind 'w': an uppercase literal
}

// ParseSyntax builds the COMMAND DOCS argument tree of command cmd (its full name, e.g.
// "config|set") from its synopsis.
func ParseSyntax(cmd, syntax string) ([]*Arg, error) {
	p := &synParser{toks: synLex(syntax)}
	seq, err := p.seq()
	if err != nil {
		return nil, fmt.Errorf("syntax %q: %v", syntax, err)
	}
	if p.pos < len(p.toks) {
		return nil, fmt.Errorf("syntax %q: unexpected %q", syntax, p.toks[p.pos])
	}
	c := &synConv{cmd: cmd, seen: map[string]int{}}
	args := c.seq(seq)
	if c.err != nil {
		return nil, fmt.Errorf("syntax %q: %v", syntax, c.err)
	}
	syntaxWrap(cmd, args)
	syntaxTokenToFirst(cmd, args)
	return args, nil
}

// syntaxTokenFirst are the blocks, by "command:block", whose token Redis declares on their
// first argument rather than on the block (GEOSEARCH's BYBOX width height unit).
var syntaxTokenFirst = map[string]bool{"geosearch:box": true, "geosearchstore:box": true}

// syntaxTokenToFirst moves the token of the blocks in syntaxTokenFirst to their first argument.
func syntaxTokenToFirst(cmd string, args []*Arg) {
	for _, a := range args {
		if a.Type == "block" && a.HasToken && len(a.Args) > 0 && syntaxTokenFirst[cmd+":"+a.Name] {
			a.Args[0].Token, a.Args[0].HasToken = a.Token, true
			a.Token, a.HasToken = "", false
		}
		syntaxTokenToFirst(cmd, a.Args)
	}
}

// syntaxWrap puts the arguments listed in syntaxWrapBlocks into the one-child block Redis
// declares around them (invisible in a synopsis).
func syntaxWrap(cmd string, args []*Arg) {
	for i, a := range args {
		spec, ok := syntaxWrapBlocks[cmd+":"+a.Name]
		if !ok || a.Type == "block" {
			syntaxWrap(cmd, a.Args)
			continue
		}
		name, inner, _ := strings.Cut(spec, " ")
		b := &Arg{Name: name, Type: "block", Token: a.Token, HasToken: a.HasToken, Optional: a.Optional,
			KeySpec: -1, Args: []*Arg{a}}
		a.Token, a.HasToken, a.Optional = "", false, false
		if inner == "" {
			b.Multiple, b.MultipleToken = a.Multiple, a.MultipleToken
			a.Multiple, a.MultipleToken = false, false
		}
		args[i] = b
	}
}

// synLex splits a synopsis into words, brackets, "|" and "...".
func synLex(s string) []string {
	var out []string
	for _, f := range strings.Fields(s) {
		for f != "" {
			switch {
			case f[0] == '[' || f[0] == '<' || f[0] == ']' || f[0] == '>' || f[0] == '|':
				out = append(out, f[:1])
				f = f[1:]
			case strings.HasPrefix(f, "..."):
				out = append(out, "...")
				f = f[3:]
			default:
				end := strings.IndexAny(f, "[]<>|")
				if end < 0 {
					end = len(f)
				}
				if dots := strings.Index(f[:end], "..."); dots > 0 {
					end = dots
				}
				out = append(out, f[:end])
				f = f[end:]
			}
		}
	}
	return out
}

type synParser struct {
	toks []string
	pos  int
}

// seq parses items up to "|", a closing bracket or the end, folding "X [X ...]" into a
// repetition node.
func (p *synParser) seq() ([]synNode, error) {
	var seq []synNode
	for p.pos < len(p.toks) {
		t := p.toks[p.pos]
		switch t {
		case "|", "]", ">":
			return seq, nil
		case "[", "<":
			p.pos++
			alts, err := p.alts()
			if err != nil {
				return nil, err
			}
			closer := map[string]string{"[": "]", "<": ">"}[t]
			if p.pos >= len(p.toks) || p.toks[p.pos] != closer {
				return nil, fmt.Errorf("missing %q", closer)
			}
			p.pos++
			n := synNode{kind: t[0], alts: alts}
			if t == "[" && synIsRepeatGroup(n) {
				seq = synFoldRepeat(seq, n)
				continue
			}
			synFoldGroupRepeat(&n)
			for _, alt := range n.alts {
				if len(alt) == 0 {
					return nil, errors.New("empty alternative in a group")
				}
				for _, x := range alt {
					if x.kind == '.' {
						return nil, errors.New(`"..." must end an optional group`)
					}
				}
			}
			seq = append(seq, n)
		case "...":
			p.pos++
			seq = append(seq, synNode{kind: '.'})
		default:
			p.pos++
			seq = append(seq, synNode{kind: 'w', word: t, token: isSynToken(t)})
		}
	}
	return seq, nil
}

// alts parses "a | b | c" inside a group.
func (p *synParser) alts() ([][]synNode, error) {
	var alts [][]synNode
	for {
		s, err := p.seq()
		if err != nil {
			return nil, err
		}
		alts = append(alts, s)
		if p.pos < len(p.toks) && p.toks[p.pos] == "|" {
			p.pos++
			continue
		}
		return alts, nil
	}
}

// synIsRepeatGroup reports whether an optional group is "[X ...]": "..." ends its last
// alternative and appears nowhere else.
func synIsRepeatGroup(n synNode) bool {
	for ai, alt := range n.alts {
		for i, x := range alt {
			if x.kind != '.' {
				continue
			}
			if ai != len(n.alts)-1 || i != len(alt)-1 || len(alt) < 2 {
				return false
			}
		}
	}
	last := n.alts[len(n.alts)-1]
	return len(last) >= 2 && last[len(last)-1].kind == '.'
}

// synFoldRepeat turns "X [X ...]" at the end of seq into one repetition of X; an unmatched
// "[X ...]" stands for zero or more X.
func synFoldRepeat(seq []synNode, g synNode) []synNode {
	var body []synNode
	if len(g.alts) == 1 {
		body = g.alts[0][:len(g.alts[0])-1]
	} else {
		alts := append([][]synNode(nil), g.alts...)
		last := alts[len(alts)-1]
		alts[len(alts)-1] = last[:len(last)-1]
		body = []synNode{{kind: '<', alts: alts}}
	}
	want := synCanon(body)
	if n := len(body); n <= len(seq) && synCanon(seq[len(seq)-n:]) == want {
		rep := synNode{kind: 'r', body: append([]synNode(nil), seq[len(seq)-n:]...)}
		return append(seq[:len(seq)-n], rep)
	}
	// "<a | b> [<a | b> ...]" may also be written "[a | b] [a | b ...]"-style: compare the
	// preceding group's alternatives with the repeated alternatives.
	if len(body) == 1 && body[0].kind == '<' && len(seq) > 0 {
		prev := seq[len(seq)-1]
		if (prev.kind == '<' || prev.kind == '[') && synCanonAlts(prev.alts) == synCanonAlts(body[0].alts) {
			rep := synNode{kind: 'r', body: []synNode{prev}}
			return append(seq[:len(seq)-1], rep)
		}
	}
	return append(seq, synNode{kind: 'r', body: body, ropt: true})
}

// synFoldGroupRepeat recognises "<a | b [a | b ...]>" (how Redis's docs print a oneof that
// repeats): the repetition ends the last alternative and repeats all of them.
func synFoldGroupRepeat(n *synNode) {
	last := n.alts[len(n.alts)-1]
	if len(n.alts) < 2 || len(last) < 2 {
		return
	}
	r := last[len(last)-1]
	if r.kind != 'r' || !r.ropt || len(r.body) != 1 || r.body[0].kind != '<' {
		return
	}
	alts := append(append([][]synNode(nil), n.alts[:len(n.alts)-1]...), last[:len(last)-1])
	if synCanonAlts(alts) == synCanonAlts(r.body[0].alts) {
		n.alts, n.many = alts, true
	}
}

func synCanon(seq []synNode) string {
	var b strings.Builder
	for i, n := range seq {
		if i > 0 {
			b.WriteByte(' ')
		}
		switch n.kind {
		case 'w':
			b.WriteString(n.word)
		case '.':
			b.WriteString("...")
		case 'r':
			b.WriteString("{" + synCanon(n.body) + "}+")
		default:
			b.WriteByte(n.kind)
			b.WriteString(synCanonAlts(n.alts))
		}
	}
	return b.String()
}

func synCanonAlts(alts [][]synNode) string {
	parts := make([]string, len(alts))
	for i, a := range alts {
		parts[i] = synCanon(a)
	}
	return strings.Join(parts, " | ") + ";"
}

// isSynToken reports whether a synopsis word is a literal token: no lower-case letters
// ("NX", "=", "*", `""`).
func isSynToken(w string) bool {
	var lower, upper, alnum bool
	for _, r := range w {
		switch {
		case r >= 'a' && r <= 'z':
			lower, alnum = true, true
		case r >= 'A' && r <= 'Z':
			upper, alnum = true, true
		case r >= '0' && r <= '9':
			alnum = true
		}
	}
	return w == `""` || upper && !lower || !alnum
}

// synConv turns parsed synopsis nodes into Args for one command.
type synConv struct {
	cmd   string
	seen  map[string]int // occurrences of each group signature, for syntaxGroupNames
	depth int            // >0 inside a group
	err   error
}

// synIsPlain reports whether n is a named value (or a repetition of one): what a token can
// prefix.
func synIsPlain(n synNode) bool {
	switch n.kind {
	case 'w':
		return !n.token
	case 'r':
		return len(n.body) == 1 && synIsPlain(n.body[0])
	}
	return false
}

func (c *synConv) seq(nodes []synNode) []*Arg {
	var out []*Arg
	for i := 0; i < len(nodes); i++ {
		n := nodes[i]
		if n.kind == '.' {
			c.err = errors.New(`"..." must end an optional group`)
			return nil
		}
		if n.kind != 'w' || !n.token {
			out = append(out, c.node(n))
			continue
		}
		tok := n.word
		if tok == `""` {
			tok = ""
		}
		j := i + 1
		for j < len(nodes) && synIsPlain(nodes[j]) {
			j++
		}
		switch {
		case j-i-1 >= 2:
			// A token before several values opens a block; at the start of a group the block
			// takes the rest of the group ("TO host port [FORCE]").
			if i == 0 && c.depth > 0 {
				j = len(nodes)
			}
			blk := c.block(c.seq(nodes[i+1 : j]))
			blk.Token, blk.HasToken = tok, true
			out = append(out, blk)
			i = j - 1
		case i+1 < len(nodes) && (synIsPlain(nodes[i+1]) || nodes[i+1].kind == '<'):
			a := c.node(nodes[i+1])
			a.Token, a.HasToken = tok, true
			out = append(out, a)
			i++
		case i == 0 && c.depth > 0 && len(nodes) > 1 && nodes[1].kind != 'w':
			// "[FULL [COUNT count]]": a token opening a group heads a block of the rest.
			blk := c.block(c.seq(nodes[1:]))
			blk.Token, blk.HasToken = tok, true
			out = append(out, blk)
			i = len(nodes) - 1
		default:
			out = append(out, &Arg{Name: docTokenName(tok), Type: "pure-token", Token: tok, HasToken: true, KeySpec: -1})
		}
	}
	return out
}

func (c *synConv) node(n synNode) *Arg {
	switch n.kind {
	case 'w':
		if n.token {
			tok := n.word
			if tok == `""` {
				tok = ""
			}
			return &Arg{Name: docTokenName(tok), Type: "pure-token", Token: tok, HasToken: true, KeySpec: -1}
		}
		return &Arg{Name: n.word, Type: argType(c.cmd, n.word), KeySpec: -1}
	case 'r':
		a := c.group(n.body)
		a.Multiple = true
		a.MultipleToken = n.body[0].kind == 'w' && n.body[0].token && a.HasToken
		if n.ropt {
			a.Optional = true
		}
		return a
	}
	var a *Arg
	if len(n.alts) == 1 {
		a = c.group(n.alts[0])
	} else {
		c.depth++
		var kids []*Arg
		for _, alt := range n.alts {
			kids = append(kids, c.group(alt))
		}
		c.depth--
		a = &Arg{Type: "oneof", Args: kids, KeySpec: -1}
		a.Name = c.groupName(kids)
	}
	if n.kind == '[' {
		a.Optional = true
	}
	if n.many {
		a.Multiple = true
	}
	return a
}

// group converts the items of one alternative into a single argument (a block when they are
// several).
func (c *synConv) group(nodes []synNode) *Arg {
	c.depth++
	args := c.seq(nodes)
	c.depth--
	if len(args) == 1 {
		return args[0]
	}
	if len(args) == 0 {
		c.err = errors.New("empty group")
		return &Arg{Type: "block", KeySpec: -1}
	}
	return c.block(args)
}

func (c *synConv) block(args []*Arg) *Arg {
	b := &Arg{Type: "block", Args: args, KeySpec: -1}
	b.Name = c.groupName(args)
	return b
}

// groupName names a oneof or block: Redis's name where its command table has one for these
// children, else the children's names joined by "_" (Redis's own habit: "key_value").
func (c *synConv) groupName(kids []*Arg) string {
	names := make([]string, len(kids))
	for i, k := range kids {
		names[i] = k.Name
	}
	sig := strings.Join(names, " ")
	c.seen[sig]++
	if n, ok := syntaxGroupNames[fmt.Sprintf("%s:%s#%d", c.cmd, sig, c.seen[sig])]; ok {
		return n
	}
	if n, ok := syntaxGroupNames[c.cmd+":"+sig]; ok {
		return n
	}
	if n, ok := syntaxGroupNames[sig]; ok {
		return n
	}
	return strings.Join(names, "_")
}

// docTokenName names a pure token: its lower-case text, except where Redis names it.
func docTokenName(tok string) string {
	if n, ok := syntaxTokenNames[tok]; ok {
		return n
	}
	return strings.ToLower(tok)
}

// argType is the COMMAND DOCS type of the value called name in command cmd.
func argType(cmd, name string) string {
	if t, ok := syntaxArgTypeExceptions[cmd+" "+name]; ok {
		return t
	}
	if t, ok := syntaxArgTypes[name]; ok {
		return t
	}
	if strings.HasPrefix(name, "unix-time") {
		return "unix-time"
	}
	return "string"
}

// ArgCount returns the fewest and the most words args can take; max is -1 when
// unbounded.
func ArgCount(args []*Arg) (minN, maxN int) {
	for _, a := range args {
		lo, hi := a.wordCount()
		minN += lo
		if maxN >= 0 {
			if hi < 0 {
				maxN = -1
			} else {
				maxN += hi
			}
		}
	}
	return minN, maxN
}

func (a *Arg) wordCount() (lo, hi int) {
	switch a.Type {
	case "pure-token":
		lo, hi = 1, 1
	case "block":
		lo, hi = ArgCount(a.Args)
	case "oneof":
		lo, hi = -1, 0
		for _, k := range a.Args {
			l, h := k.wordCount()
			if lo < 0 || l < lo {
				lo = l
			}
			if hi >= 0 && (h < 0 || h > hi) {
				hi = h
			}
		}
		if lo < 0 {
			lo = 0
		}
	default:
		lo, hi = 1, 1
	}
	if a.HasToken && a.Type != "pure-token" {
		lo++
		if hi >= 0 {
			hi++
		}
	}
	if a.Multiple {
		hi = -1
	}
	if a.Optional {
		lo = 0
	}
	return lo, hi
}

// Walk calls f on every argument of the tree, depth first in synopsis order.
func Walk(args []*Arg, f func(*Arg)) {
	for _, a := range args {
		f(a)
		Walk(a.Args, f)
	}
}

// NumberKeyArgs sets key_spec_index on the key arguments: the i-th key argument of the
// synopsis is found by the i-th key spec, the last spec finding all later ones (Redis's
// order: "key newkey", "destination key [key ...]").
func NumberKeyArgs(args []*Arg, nspecs int) {
	i := 0
	Walk(args, func(a *Arg) {
		if a.Type != "key" {
			return
		}
		if nspecs > 0 {
			a.KeySpec = min(i, nspecs-1)
		}
		i++
	})
}

// syntaxArgTypes are the types Redis gives values by their name ("count" is an integer).
var syntaxArgTypes = map[string]string{
	"bit":              "integer",
	"bits":             "integer",
	"client-id":        "integer",
	"cluster_bus_port": "integer",
	"config-epoch":     "integer",
	"count":            "integer",
	"cursor":           "integer",
	"db":               "integer",
	"decrement":        "integer",
	"destination":      "key",
	"destination-db":   "integer",
	"destkey":          "key",
	"dst":              "key",
	"end":              "integer",
	"end-slot":         "integer",
	"entries_added":    "integer",
	"entries_read":     "integer",
	"frequency":        "integer",
	"height":           "double",
	"increment":        "integer",
	"index":            "integer",
	"index1":           "integer",
	"index2":           "integer",
	"key":              "key",
	"key1":             "key",
	"key2":             "key",
	"latitude":         "double",
	"len":              "integer",
	"limit":            "integer",
	"longitude":        "double",
	"milliseconds":     "integer",
	"ms":               "integer",
	"newkey":           "key",
	"num-matches":      "integer",
	"numkeys":          "integer",
	"numreplicas":      "integer",
	"offset":           "integer",
	"pattern":          "pattern",
	"port":             "integer",
	"protover":         "integer",
	"radius":           "double",
	"rank":             "integer",
	"score":            "double",
	"seconds":          "integer",
	"slot":             "integer",
	"source":           "key",
	"sourcekey":        "key",
	"src":              "key",
	"start":            "integer",
	"start-slot":       "integer",
	"stop":             "integer",
	"timeout":          "double",
	"ttl":              "integer",
	"version":          "integer",
	"weight":           "integer",
	"width":            "double",
}

// syntaxArgTypeExceptions are the values typed unlike their name elsewhere, by "command name"
// (INCRBYFLOAT's increment is a double, ZRANGE's start a string).
var syntaxArgTypeExceptions = map[string]string{
	"bitfield value":         "integer",
	"client|pause timeout":   "integer",
	"cluster|keyslot key":    "string",
	"hincrbyfloat increment": "double",
	"incrbyfloat increment":  "double",
	"migrate timeout":        "integer",
	"setbit value":           "integer",
	"wait timeout":           "integer",
	"xautoclaim start":       "string",
	"xpending end":           "string",
	"xpending min-idle-time": "integer",
	"xpending start":         "string",
	"xrange end":             "string",
	"xrange start":           "string",
	"xrevrange end":          "string",
	"xrevrange start":        "string",
	"zcount max":             "double",
	"zcount min":             "double",
	"zrange start":           "string",
	"zrange stop":            "string",
	"zrangebyscore max":      "double",
	"zrangebyscore min":      "double",
	"zremrangebyscore max":   "double",
	"zremrangebyscore min":   "double",
	"zrevrangebyscore max":   "double",
	"zrevrangebyscore min":   "double",
}

// syntaxGroupNames are Redis's names of oneof/block arguments whose name is not their children's
// names joined by "_", by the children's names ("nx xx"), or "command:children" where commands differ,
// or "command:children#n" for the n-th such group of a command.
var syntaxGroupNames = map[string]string{
	"asc desc":            "order",
	"async sync":          "async",
	"auto_id id":          "id_or_auto",
	"before after":        "where",
	"blmove:left right#1": "wherefrom",
	"blmove:left right#2": "whereto",
	"byscore bylex":       "sortby",
	"byte bit":            "index_unit",
	"circle box":          "by",
	"client-id normal_master_slave_pubsub username ip:port ip:port yes/no": "new-format",
	"client|list:client-id":  "id",
	"client|no-evict:on off": "enabled",
	"count any":              "count",
	"count reset":            "operation",
	"count withscores":       "options",
	"count withvalues":       "options",
	"encoding_offset write":  "operation",
	"encoding_offset_value encoding_offset_increment": "write_operation",
	"end index_unit":                         "end_index",
	"equal approximately":                    "operator",
	"flush append replace":                   "policy",
	"force takeover":                         "options",
	"gt lt":                                  "comparison",
	"host port":                              "host-port",
	"host port force":                        "target",
	"host-port no-one":                       "args",
	"id new_id":                              "id",
	"ip:port new-format":                     "filter",
	"key empty_string":                       "key_or_empty_string",
	"key id":                                 "streams",
	"left right":                             "where",
	"lmove:left right#1":                     "wherefrom",
	"lmove:left right#2":                     "whereto",
	"m km ft mi":                             "unit",
	"maxlen minid":                           "strategy",
	"member longitude_latitude":              "from",
	"min max":                                "where",
	"min-idle-time start end count consumer": "filters",
	"module-name category pattern":           "filterby",
	"module|loadex:arg":                      "args",
	"name value":                             "configs",
	"no one":                                 "no-one",
	"node-id node-id node-id stable":         "subcommand",
	"normal master slave replica pubsub":     "normal_master_slave_pubsub",
	"nx xx":                                  "condition",
	"nx xx gt lt":                            "condition",
	"on off":                                 "status",
	"password username_password":             "authentication",
	"protover username_password clientname":  "arguments",
	"radius unit":                            "circle",
	"seconds milliseconds unix-time-seconds unix-time-milliseconds keepttl": "expiration",
	"seconds milliseconds unix-time-seconds unix-time-milliseconds persist": "expiration",
	"start end index_unit":              "index",
	"start end_index":                   "index",
	"strategy operator threshold count": "trim",
	"sum min max":                       "aggregate",
	"width height unit":                 "box",
	"wrap_sat_fail write_operation":     "write",
	"write all":                         "mode",
	"xinfo|stream:count":                "full",
	"yes no":                            "mode",
	"yes sync no":                       "mode",
}

// syntaxWrapBlocks are the arguments Redis wraps in a block of their own, by
// "command:argument": the block's name, and "inner" when the argument keeps its multiple
// flag.
var syntaxWrapBlocks = map[string]string{
	"client|list:client-id": "id inner",
	"config|get:parameter":  "parameter",
	"module|loadex:arg":     "args",
	"psubscribe:pattern":    "pattern",
}

// syntaxTokenNames are the pure tokens Redis names other than by their lower-case text.
var syntaxTokenNames = map[string]string{
	"":      "empty_string",
	"$":     "new_id",
	"*":     "auto_id",
	"=":     "equal",
	"ALPHA": "sorting",
	"CH":    "change",
	"INCR":  "increment",
	"~":     "approximately",
}
