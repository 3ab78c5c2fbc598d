package cmds

import (
	"strconv"

	"shardis/datatype"
)

// Redis's error replies, word for word.
const (
	errSyntax    = "ERR syntax error"
	errWrongType = "WRONGTYPE Operation against a key holding the wrong kind of value"
	errNotInt    = "ERR value is not an integer or out of range"
	errNotFloat  = "ERR value is not a valid float"
	errNoKey     = "ERR no such key"
	errDBIndex   = "ERR DB index is out of range"
	errOverflow  = "ERR increment or decrement would overflow"
)

// parseInt parses a signed 64-bit integer exactly as Redis's string2ll (datatype.ParseInt).
func parseInt(b []byte) (int64, bool) { return datatype.ParseInt(b) }

// intArg parses argument i as an integer, replying Redis's error when it is not one.
func (c *Ctx) intArg(i int) (int64, bool) {
	v, ok := parseInt(c.Args[i])
	if !ok {
		c.Error(errNotInt)
	}
	return v, ok
}

// equalFold reports whether b equals the lower-case ASCII word s, ignoring case.
func equalFold(b []byte, s string) bool {
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
