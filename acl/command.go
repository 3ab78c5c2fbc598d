// Package acl holds Redis 7.0's access control lists: users and their selectors (command,
// key and channel permissions), the rules ACL SETUSER accepts and the text ACL LIST and
// ACL GETUSER show, the permission check run before a command, the ACL log, and the ACL
// file. It knows commands only through the small Command table package cmds hands it
// (SetCommands), so it does not depend on the command families.
package acl

import (
	"slices"
	"strings"
	"sync"
)

// Categories are Redis 7.0's command categories, in its order (ACL CAT lists them so, and
// the describer tries them in this order). Bit i of Command.Categories is Categories[i].
var Categories = []string{
	"keyspace", "read", "write", "set", "sortedset", "list", "hash", "string", "bitmap",
	"hyperloglog", "geo", "stream", "pubsub", "admin", "fast", "slow", "blocking", "dangerous",
	"connection", "transaction", "scripting",
}

// CategoryBit returns the bit of category name (any case), or 0 when there is none.
func CategoryBit(name string) uint64 {
	for i, c := range Categories {
		if strings.EqualFold(c, name) {
			return 1 << i
		}
	}
	return 0
}

// Command is what ACL knows of one command or subcommand. Commands are made by package cmds
// from its table once, and never change afterwards.
type Command struct {
	ID         int    // index in the table: the bit of the command in a selector
	Name       string // full lower-case name: "get", "config|get"
	Categories uint64 // bit i: Categories[i]
	NoAuth     bool   // the no_auth flag: every user may run it (AUTH, HELLO)
	Parent     *Command
	Subs       []*Command // sorted by name
}

// Table is the set of commands ACL rules name.
type Table struct {
	top    []*Command          // top-level commands, sorted by name
	all    []*Command          // every command and subcommand, by ID
	byName map[string]*Command // by full lower-case name
}

// Lookup returns the command or subcommand of full name ("config|get"), any case.
func (t *Table) Lookup(name string) *Command { return t.byName[strings.ToLower(name)] }

// Len is the number of commands and subcommands (the size of a selector's bitmap).
func (t *Table) Len() int { return len(t.all) }

// InCategory returns the full names of the commands in the category bit, in table order.
func (t *Table) InCategory(bit uint64) []string {
	var out []string
	t.walk(func(c *Command) {
		if c.Categories&bit != 0 {
			out = append(out, c.Name)
		}
	})
	return out
}

// walk calls fn for every command, each parent before its subcommands.
func (t *Table) walk(fn func(c *Command)) {
	for _, c := range t.top {
		fn(c)
		for _, s := range c.Subs {
			fn(s)
		}
	}
}

// NewTable numbers top (top-level commands with their subcommands) and indexes them.
func NewTable(top []*Command) *Table {
	t := &Table{byName: make(map[string]*Command)}
	t.top = slices.Clone(top)
	slices.SortFunc(t.top, func(a, b *Command) int { return strings.Compare(a.Name, b.Name) })
	for _, c := range t.top {
		slices.SortFunc(c.Subs, func(a, b *Command) int { return strings.Compare(a.Name, b.Name) })
		t.add(c)
		for _, s := range c.Subs {
			s.Parent = c
			t.add(s)
		}
	}
	return t
}

func (t *Table) add(c *Command) {
	c.ID = len(t.all)
	t.all = append(t.all, c)
	t.byName[c.Name] = c
}

var (
	tableOnce   sync.Once
	tableSource func() *Table
	table       *Table
)

// SetCommands registers the function that builds the command table; package cmds calls it
// from an init. The table is built once, at its first use, when every command is registered.
func SetCommands(build func() *Table) { tableSource = build }

// Commands returns the command table (see SetCommands); an empty one when none was set.
func Commands() *Table {
	tableOnce.Do(func() {
		if tableSource != nil {
			table = tableSource()
		} else {
			table = NewTable(nil)
		}
	})
	return table
}
