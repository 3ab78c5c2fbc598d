package bench

import (
	"fmt"
	"strconv"
	"strings"
)

// Placeholders of a --command template, as memtier_benchmark spells them.
const (
	keyPlaceholder  = "__key__"
	dataPlaceholder = "__data__"
)

type segKind uint8

const (
	segLiteral segKind = iota
	segKey
	segData
)

type segment struct {
	kind segKind
	lit  []byte
}

// tmplArg is one argument of a template. An argument without placeholders is rendered once,
// as its complete bulk string, when the template is parsed.
type tmplArg struct {
	segs  []segment
	fixed []byte
}

// Template is a parsed --command: its arguments with __key__ and __data__ placeholders. Every
// __key__ draws a new key id and every __data__ a new value (so "MSET __key__ __data__ __key__
// __data__" writes two different keys).
type Template struct {
	Text string
	// Name is the first word upper-cased: the statistics of commands with the same name are
	// aggregated (memtier's --command-stats-breakdown=command).
	Name string
	args []tmplArg
}

// ParseTemplate parses a command template. Arguments are separated by blanks; an argument may
// be quoted with "…" or '…' to contain blanks or be empty.
func ParseTemplate(text string) (*Template, error) {
	words, err := splitArgs(text)
	if err != nil {
		return nil, err
	}
	if len(words) == 0 {
		return nil, fmt.Errorf("empty command")
	}
	t := &Template{Text: text, Name: strings.ToUpper(words[0])}
	for _, w := range words {
		var a tmplArg
		rest := w
		for len(rest) > 0 {
			ki := strings.Index(rest, keyPlaceholder)
			di := strings.Index(rest, dataPlaceholder)
			i, kind, plen := -1, segLiteral, 0
			if ki >= 0 && (di < 0 || ki < di) {
				i, kind, plen = ki, segKey, len(keyPlaceholder)
			} else if di >= 0 {
				i, kind, plen = di, segData, len(dataPlaceholder)
			}
			if i < 0 {
				a.segs = append(a.segs, segment{kind: segLiteral, lit: []byte(rest)})
				break
			}
			if i > 0 {
				a.segs = append(a.segs, segment{kind: segLiteral, lit: []byte(rest[:i])})
			}
			a.segs = append(a.segs, segment{kind: kind})
			rest = rest[i+plen:]
		}
		if len(a.segs) <= 1 && (len(a.segs) == 0 || a.segs[0].kind == segLiteral) {
			a.fixed = appendBulk(nil, []byte(w))
		}
		t.args = append(t.args, a)
	}
	return t, nil
}

// splitArgs splits a command line into words, honouring quotes.
func splitArgs(s string) ([]string, error) {
	var out []string
	var cur []byte
	in := false // inside a word
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			if in {
				out = append(out, string(cur))
				cur, in = cur[:0], false
			}
		case c == '"' || c == '\'':
			j := strings.IndexByte(s[i+1:], c)
			if j < 0 {
				return nil, fmt.Errorf("unbalanced quotes in %q", s)
			}
			cur = append(cur, s[i+1:i+1+j]...)
			in = true
			i += j + 1
		default:
			cur = append(cur, c)
			in = true
		}
	}
	if in {
		out = append(out, string(cur))
	}
	return out, nil
}

// KeyCount is the number of __key__ placeholders.
func (t *Template) KeyCount() int {
	n := 0
	for _, a := range t.args {
		for _, s := range a.segs {
			if s.kind == segKey {
				n++
			}
		}
	}
	return n
}

// appendRequest renders one request onto b. scratch is a reusable buffer for arguments with
// placeholders; it is returned (possibly grown) for the next call.
func (t *Template) appendRequest(b, scratch []byte, prefix []byte, keys *keyGen, data *dataGen) ([]byte, []byte) {
	b = appendArrayHeader(b, len(t.args))
	for i := range t.args {
		a := &t.args[i]
		if a.fixed != nil {
			b = append(b, a.fixed...)
			continue
		}
		scratch = scratch[:0]
		for _, s := range a.segs {
			switch s.kind {
			case segLiteral:
				scratch = append(scratch, s.lit...)
			case segKey:
				scratch = append(scratch, prefix...)
				scratch = strconv.AppendUint(scratch, keys.Next(), 10)
			case segData:
				scratch = append(scratch, data.Next()...)
			}
		}
		b = appendBulk(b, scratch)
	}
	return b, scratch
}

// Expand renders one request as its argument list (for tests and --show-config style output).
func (t *Template) Expand(prefix string, keys *keyGen, data *dataGen) []string {
	var out []string
	for _, a := range t.args {
		var sb strings.Builder
		for _, s := range a.segs {
			switch s.kind {
			case segLiteral:
				sb.Write(s.lit)
			case segKey:
				sb.WriteString(prefix)
				sb.WriteString(strconv.FormatUint(keys.Next(), 10))
			case segData:
				sb.Write(data.Next())
			}
		}
		out = append(out, sb.String())
	}
	return out
}
