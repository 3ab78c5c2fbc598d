package cmds

import (
	"shardis/cmdspec"
	"shardis/codec"
	"shardis/datatype"
)

// XINFO STREAM [FULL [COUNT n]], XINFO GROUPS, XINFO CONSUMERS, XINFO HELP, with Redis 7.0's
// fields.

func init() {
	ks := []cmdspec.KeySpec{{Flags: cmdspec.RO | cmdspec.Access, Begin: cmdspec.Index(2), Find: cmdspec.Range(0, 1, 0)}}
	Register(&Command{Name: "xinfo", Arity: -2, Group: "stream", Since: "5.0.0",
		Summary: "A container for stream introspection commands", Complexity: "Depends on subcommand.",
		Subs: map[string]*Command{
			"consumers": {Arity: 4, Flags: []string{"readonly"}, ACL: []string{"read", "stream", "slow"}, Since: "5.0.0",
				Summary: "List the consumers in a consumer group", Complexity: "O(1)", Syntax: "key groupname",
				KeySpecs: ks, Tips: []string{"nondeterministic_output"}, Run: xinfoConsumers},
			"groups": {Arity: 3, Flags: []string{"readonly"}, ACL: []string{"read", "stream", "slow"}, Since: "5.0.0",
				Summary: "List the consumer groups of a stream", Complexity: "O(1)", Syntax: "key",
				KeySpecs: ks, Run: xinfoGroups},
			"stream": {Arity: -3, Flags: []string{"readonly"}, ACL: []string{"read", "stream", "slow"}, Since: "5.0.0",
				Summary: "Get information about a stream", Complexity: "O(1)", Syntax: "key [FULL [COUNT count]]",
				KeySpecs: ks, Run: xinfoStream},
			"help": {Arity: 2, Flags: []string{"loading", "stale"}, ACL: []string{"stream", "slow"}, Since: "5.0.0",
				Summary: "Show helpful text about the different subcommands", Complexity: "O(1)",
				Exec: ExecConn, Run: xinfoHelp},
		}})
}

func xinfoHelp(c *Ctx) {
	HelpReply(c,
		"CONSUMERS <key> <groupname>",
		"    Show consumers of <groupname>.",
		"GROUPS <key>",
		"    Show the stream consumer groups.",
		"STREAM <key> [FULL [COUNT <count>]",
		"    Show information about the stream.")
}

// xinfoOpen opens the stream at argument 2, replying "no such key" or WRONGTYPE.
func xinfoOpen(c *Ctx) (datatype.Stream, bool) {
	st, ok := xgOpen(c, c.Args[2])
	if ok && !st.Exists() {
		c.Error(errNoKey)
		return st, false
	}
	return st, ok
}

func xinfoConsumers(c *Ctx) {
	st, ok := xinfoOpen(c)
	if !ok {
		return
	}
	g, ok := st.Group(c.Args[3])
	if !ok {
		c.Error("NOGROUP No such consumer group '" + cstr(c.Args[3]) + "' for key name '" + cstr(c.Args[2]) + "'")
		return
	}
	names := g.ConsumerNames()
	now := c.Tx.Now()
	c.W.ArrayLen(len(names))
	for _, name := range names {
		cons := g.Consumer(name, false, 0)
		c.W.MapLen(3)
		c.W.BulkString("name")
		c.W.Bulk(name)
		c.W.BulkString("pending")
		var pending uint64
		var seen int64
		if cons != nil {
			pending, seen = cons.Pending(), cons.SeenTime
		}
		c.W.Int(int64(pending))
		c.W.BulkString("idle")
		c.W.Int(max(now-seen, 0))
	}
}

// xinfoGroupHead writes a group's name, last id, entries read and lag fields.
func xinfoEntriesRead(c *Ctx, g *datatype.Group) {
	c.W.BulkString("entries-read")
	if g.EntriesRead != datatype.InvalidEntriesRead {
		c.W.Int(g.EntriesRead)
	} else {
		c.W.Null()
	}
}

func xinfoLag(c *Ctx, st *datatype.Stream, g *datatype.Group) {
	c.W.BulkString("lag")
	if lag, ok := xgLag(st, g); ok {
		c.W.Int(lag)
	} else {
		c.W.Null()
	}
}

func xinfoGroups(c *Ctx) {
	st, ok := xinfoOpen(c)
	if !ok {
		return
	}
	names := st.GroupNames()
	c.W.ArrayLen(len(names))
	for _, name := range names {
		g, _ := st.Group(name)
		c.W.MapLen(6)
		c.W.BulkString("name")
		c.W.Bulk(name)
		c.W.BulkString("consumers")
		c.W.Int(int64(g.Consumers()))
		c.W.BulkString("pending")
		c.W.Int(int64(g.Pending()))
		c.W.BulkString("last-delivered-id")
		xgWriteID(c, g.LastID)
		xinfoEntriesRead(c, g)
		xinfoLag(c, &st, g)
	}
}

// xinfoRadixKeys returns radix-tree-keys and radix-tree-nodes: the stream's nodes (as Redis
// would lay them out), and a rax node count that is Redis's for streams of fewer than two
// nodes (Redis's inner rax nodes depend on its key bytes; shardis does not model them).
func xinfoRadixKeys(st *datatype.Stream) (keys, nodes int64) {
	keys = int64(st.Info().Nodes)
	return keys, keys + 1
}

func xinfoStream(c *Ctx) {
	st, ok := xinfoOpen(c)
	if !ok {
		return
	}
	full, count := false, int64(10)
	if opts := c.Args[3:]; len(opts) > 0 {
		if len(opts) != 1 && len(opts) != 3 || !EqualFold(opts[0], "full") {
			SubcommandSyntaxError(c)
			return
		}
		if len(opts) == 3 {
			if !EqualFold(opts[1], "count") {
				SubcommandSyntaxError(c)
				return
			}
			v, ok := c.IntArg(5)
			if !ok {
				return
			}
			if v < 0 {
				v = 10
			}
			count = v
		}
		full = true
	}
	sm := st.Info()
	if full {
		c.W.MapLen(9)
	} else {
		c.W.MapLen(10)
	}
	c.W.BulkString("length")
	c.W.Int(int64(st.Len()))
	keys, nodes := xinfoRadixKeys(&st)
	c.W.BulkString("radix-tree-keys")
	c.W.Int(keys)
	c.W.BulkString("radix-tree-nodes")
	c.W.Int(nodes)
	c.W.BulkString("last-generated-id")
	xgWriteID(c, sm.LastID)
	c.W.BulkString("max-deleted-entry-id")
	xgWriteID(c, sm.MaxDeletedID)
	c.W.BulkString("entries-added")
	c.W.Int(int64(sm.EntriesAdded))
	c.W.BulkString("recorded-first-entry-id")
	xgWriteID(c, sm.FirstID)
	if !full {
		c.W.BulkString("groups")
		c.W.Int(int64(sm.Groups))
		for _, rev := range []bool{false, true} {
			if rev {
				c.W.BulkString("last-entry")
			} else {
				c.W.BulkString("first-entry")
			}
			r := st.Range(codec.MinStreamID, codec.MaxStreamID, rev)
			if r.Valid() {
				xgWriteEntry(c, r.ID(), r.Value())
			} else {
				c.W.Null()
			}
			r.Close()
		}
		return
	}
	c.W.BulkString("entries")
	type entry struct {
		id codec.StreamID
		v  []byte
	}
	var entries []entry
	r := st.Range(codec.MinStreamID, codec.MaxStreamID, false)
	for ; r.Valid() && (count == 0 || int64(len(entries)) < count); r.Next() {
		entries = append(entries, entry{r.ID(), append([]byte(nil), r.Value()...)})
	}
	r.Close()
	c.W.ArrayLen(len(entries))
	for _, e := range entries {
		xgWriteEntry(c, e.id, e.v)
	}
	c.W.BulkString("groups")
	names := st.GroupNames()
	c.W.ArrayLen(len(names))
	for _, name := range names {
		g, _ := st.Group(name)
		c.W.MapLen(7)
		c.W.BulkString("name")
		c.W.Bulk(name)
		c.W.BulkString("last-delivered-id")
		xgWriteID(c, g.LastID)
		xinfoEntriesRead(c, g)
		xinfoLag(c, &st, g)
		c.W.BulkString("pel-count")
		c.W.Int(int64(g.Pending()))
		c.W.BulkString("pending")
		type pe struct {
			id   codec.StreamID
			nack datatype.NACK
		}
		var pel []pe
		it := g.PEL(codec.MinStreamID, codec.MaxStreamID)
		for ; it.Valid() && (count == 0 || int64(len(pel)) < count); it.Next() {
			pel = append(pel, pe{it.ID(), it.NACK()})
		}
		it.Close()
		c.W.ArrayLen(len(pel))
		for _, p := range pel {
			c.W.ArrayLen(4)
			xgWriteID(c, p.id)
			c.W.Bulk(p.nack.Consumer)
			c.W.Int(p.nack.DeliveryTime)
			c.W.Int(int64(p.nack.DeliveryCount))
		}
		c.W.BulkString("consumers")
		cnames := g.ConsumerNames()
		c.W.ArrayLen(len(cnames))
		for _, cname := range cnames {
			cons := g.Consumer(cname, false, 0)
			c.W.MapLen(4)
			c.W.BulkString("name")
			c.W.Bulk(cname)
			c.W.BulkString("seen-time")
			c.W.Int(cons.SeenTime)
			c.W.BulkString("pel-count")
			c.W.Int(int64(cons.Pending()))
			c.W.BulkString("pending")
			var own []pe
			oit := g.OwnedPEL(cname, codec.MinStreamID, codec.MaxStreamID)
			for ; oit.Valid() && (count == 0 || int64(len(own)) < count); oit.Next() {
				own = append(own, pe{oit.ID(), oit.NACK()})
			}
			oit.Close()
			c.W.ArrayLen(len(own))
			for _, p := range own {
				c.W.ArrayLen(3)
				xgWriteID(c, p.id)
				c.W.Int(p.nack.DeliveryTime)
				c.W.Int(int64(p.nack.DeliveryCount))
			}
		}
	}
}
