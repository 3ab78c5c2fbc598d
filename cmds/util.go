package cmds

import (
	"shardis/codec"
	"strconv"
	"strings"
)

// Redis's error replies, word for word.
const (
	ErrSyntax    = "ERR syntax error"
	errWrongType = "WRONGTYPE Operation against a key holding the wrong kind of value"
	ErrNotInt    = "ERR value is not an integer or out of range"
	errNotFloat  = "ERR value is not a valid float"
	errNoKey     = "ERR no such key"
	errDBIndex   = "ERR DB index is out of range"
	errOverflow  = "ERR increment or decrement would overflow"
)

// IntArg parses argument i as an integer, replying Redis's error when it is not one.
func (c *Ctx) IntArg(i int) (int64, bool) {
	v, ok := codec.ParseInt(c.Args[i])
	if !ok {
		c.Error(ErrNotInt)
	}
	return v, ok
}

// EqualFold reports whether b equals the lower-case ASCII word s, ignoring case.
func EqualFold(b []byte, s string) bool {
	if len(b) != len(s) {
		return false
	}
	for i := range b {
		c := b[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != s[i] {
			return false
		}
	}
	return true
}

// itoa formats n as a byte slice (for binlog records).
func itoa(n int64) []byte { return strconv.AppendInt(nil, n, 10) }

// SubcommandSyntaxError is Redis's reply to a known subcommand given the wrong arguments.
func SubcommandSyntaxError(c *Ctx) {
	c.Error("ERR unknown subcommand or wrong number of arguments for '" + truncate(c.Args[1], 128) +
		"'. Try " + strings.ToUpper(string(c.Args[0])) + " HELP.")
}

// HelpReply writes a HELP reply as Redis does: a status line per line of text, the header
// naming the command, and HELP's own entry last.
func HelpReply(c *Ctx, lines ...string) {
	name := strings.ToUpper(string(c.Args[0]))
	c.W.ArrayLen(len(lines) + 3)
	c.W.Simple(name + " <subcommand> [<arg> [value] [opt] ...]. Subcommands are:")
	for _, l := range lines {
		c.W.Simple(l)
	}
	c.W.Simple("HELP")
	c.W.Simple("    Prints this help.")
}
