package cmds

import (
	"bytes"
	"math"
	"slices"
	"strconv"

	"shardis/cmdspec"
	"shardis/codec"
	"shardis/datatype"
	"shardis/pubsub"
	"shardis/shard"
)

// Stream consumer groups: XGROUP, XREADGROUP, XACK, XPENDING, XCLAIM, XAUTOCLAIM (XINFO is in
// xinfo.go). The groups live in the stream's data keys (datatype/streamgroup.go); every change
// is written in the command's transaction. The binlog gets what rebuilds the group exactly, as
// Redis propagates it: a delivery or claim is logged as XCLAIM … TIME t RETRYCOUNT n FORCE
// JUSTID LASTID id, a delivery's new last id and read counter as XGROUP SETID … ENTRIESREAD.

func init() {
	ks := func(pos int, flags cmdspec.KeyFlag) []cmdspec.KeySpec {
		return []cmdspec.KeySpec{{Flags: flags, Begin: cmdspec.Index(pos), Find: cmdspec.Range(0, 1, 0)}}
	}
	Register(
		&Command{Name: "xgroup", Arity: -2, Group: "stream", Since: "5.0.0",
			Summary: "A container for consumer groups commands", Complexity: "Depends on subcommand.",
			Subs: map[string]*Command{
				"create": {Arity: -5, Flags: []string{"write", "denyoom"}, ACL: []string{"write", "stream", "slow"}, Since: "5.0.0",
					Summary: "Create a consumer group.", Complexity: "O(1)",
					Syntax:   "key groupname <id | $> [MKSTREAM] [ENTRIESREAD entries_read]",
					KeySpecs: ks(2, cmdspec.RW|cmdspec.Insert), Run: xgroupCreate},
				"setid": {Arity: -5, Flags: []string{"write"}, ACL: []string{"write", "stream", "slow"}, Since: "5.0.0",
					Summary: "Set a consumer group to an arbitrary last delivered ID value.", Complexity: "O(1)",
					Syntax:   "key groupname <id | $> [ENTRIESREAD entries_read]",
					KeySpecs: ks(2, cmdspec.RW|cmdspec.Update), Run: xgroupSetID},
				"destroy": {Arity: 4, Flags: []string{"write"}, ACL: []string{"write", "stream", "slow"}, Since: "5.0.0",
					Summary:    "Destroy a consumer group.",
					Complexity: "O(N) where N is the number of entries in the group's pending entries list (PEL).",
					Syntax:     "key groupname",
					KeySpecs:   ks(2, cmdspec.RW|cmdspec.Delete), Run: xgroupDestroy},
				"createconsumer": {Arity: 5, Flags: []string{"write", "denyoom"}, ACL: []string{"write", "stream", "slow"}, Since: "6.2.0",
					Summary: "Create a consumer in a consumer group.", Complexity: "O(1)",
					Syntax:   "key groupname consumername",
					KeySpecs: ks(2, cmdspec.RW|cmdspec.Insert), Run: xgroupCreateConsumer},
				"delconsumer": {Arity: 5, Flags: []string{"write"}, ACL: []string{"write", "stream", "slow"}, Since: "5.0.0",
					Summary: "Delete a consumer from a consumer group.", Complexity: "O(1)",
					Syntax:   "key groupname consumername",
					KeySpecs: ks(2, cmdspec.RW|cmdspec.Delete), Run: xgroupDelConsumer},
				"help": {Arity: 2, Flags: []string{"loading", "stale"}, ACL: []string{"stream", "slow"}, Since: "5.0.0",
					Summary: "Show helpful text about the different subcommands", Complexity: "O(1)",
					Exec: ExecConn, Run: xgroupHelp},
			}},
		&Command{Name: "xreadgroup", Arity: -7, Flags: []string{"write", "blocking"},
			ACL: []string{"write", "stream", "slow", "blocking"}, Group: "stream", Since: "5.0.0",
			Summary:    "Return new entries from a stream using a consumer group, or access the history of the pending entries for a given consumer. Can block.",
			Complexity: "For each stream mentioned: O(M) with M being the number of elements returned. If M is constant (e.g. always asking for the first 10 elements with COUNT), you can consider it O(1). On the other side when XREADGROUP blocks, XADD will pay the O(N) time in order to serve the N clients blocked on the stream getting new data.",
			Syntax:     "GROUP group consumer [COUNT count] [BLOCK milliseconds] [NOACK] STREAMS key [key ...] id [id ...]",
			KeySpecs: []cmdspec.KeySpec{{Flags: cmdspec.RO | cmdspec.Access, Begin: cmdspec.Keyword("STREAMS", 4),
				Find: cmdspec.Range(-1, 1, 2)}},
			Keys: xreadgroupKeys, Run: xreadgroupCmd},
		&Command{Name: "xack", Arity: -4, Flags: []string{"write", "fast"}, ACL: []string{"write", "stream", "fast"},
			Group: "stream", Since: "5.0.0",
			Summary:    "Marks a pending message as correctly processed, effectively removing it from the pending entries list of the consumer group. Return value of the command is the number of messages successfully acknowledged, that is, the IDs we were actually able to resolve in the PEL.",
			Complexity: "O(1) for each message ID processed.", Syntax: "key group id [id ...]",
			KeySpecs: ks(1, cmdspec.RW|cmdspec.Update), Run: xackCmd},
		&Command{Name: "xpending", Arity: -3, Flags: []string{"readonly"}, ACL: []string{"read", "stream", "slow"},
			Group: "stream", Since: "5.0.0",
			Summary:    "Return information and entries from a stream consumer group pending entries list, that are messages fetched but never acknowledged.",
			Complexity: "O(N) with N being the number of elements returned, so asking for a small fixed number of entries per call is O(1). O(M), where M is the total number of entries scanned when used with the IDLE filter. When the command returns just the summary and the list of consumers is small, it runs in O(1) time; otherwise, an additional O(N) time for iterating every consumer.",
			Syntax:     "key group [[IDLE min-idle-time] start end count [consumer]]",
			KeySpecs:   ks(1, cmdspec.RO|cmdspec.Access), Tips: []string{"nondeterministic_output"}, Run: xpendingCmd},
		&Command{Name: "xclaim", Arity: -6, Flags: []string{"write", "fast"}, ACL: []string{"write", "stream", "fast"},
			Group: "stream", Since: "5.0.0",
			Summary:    "Changes (or acquires) ownership of a message in a consumer group, as if the message was delivered to the specified consumer.",
			Complexity: "O(log N) with N being the number of messages in the PEL of the consumer group.",
			Syntax:     "key group consumer min-idle-time id [id ...] [IDLE ms] [TIME unix-time-milliseconds] [RETRYCOUNT count] [FORCE] [JUSTID] [LASTID id]",
			KeySpecs:   ks(1, cmdspec.RW|cmdspec.Update), Tips: []string{"nondeterministic_output"}, Run: xclaimCmd},
		&Command{Name: "xautoclaim", Arity: -6, Flags: []string{"write", "fast"}, ACL: []string{"write", "stream", "fast"},
			Group: "stream", Since: "6.2.0",
			Summary:    "Changes (or acquires) ownership of messages in a consumer group, as if the messages were delivered to the specified consumer.",
			Complexity: "O(1) if COUNT is small.",
			Syntax:     "key group consumer min-idle-time start [COUNT count] [JUSTID]",
			KeySpecs:   ks(1, cmdspec.RW|cmdspec.Delete), Tips: []string{"nondeterministic_output"}, Run: xautoclaimCmd},
	)
}

const (
	errXGroupNoKey  = "ERR The XGROUP subcommand requires the key to exist. Note that for CREATE you may want to use the MKSTREAM option to create an empty stream automatically."
	errXBusyGroup   = "BUSYGROUP Consumer Group name already exists"
	errXEntriesRead = "ERR value for ENTRIESREAD must be positive or -1"
	errXUnbalanced  = "ERR Unbalanced XREAD list of streams: for each stream key an ID or '$' must be specified."
	errXDollarGroup = "ERR The $ ID is meaningless in the context of XREADGROUP: you want to read the history of this consumer by specifying a proper ID, or use the > ID to get new messages. The $ ID would just return an empty result set."
	// xreadBlockedCount is the COUNT a blocked read serves with when none was given (Redis's
	// XREAD_BLOCKED_DEFAULT_COUNT).
	xreadBlockedCount = 1000
)

var (
	xgXCLAIM     = []byte("XCLAIM")
	xgXGROUP     = []byte("XGROUP")
	xgSETID      = []byte("SETID")
	xgZero       = []byte("0")
	xgTIME       = []byte("TIME")
	xgRETRYCOUNT = []byte("RETRYCOUNT")
	xgFORCE      = []byte("FORCE")
	xgJUSTID     = []byte("JUSTID")
	xgLASTID     = []byte("LASTID")
	xgENTRIESRD  = []byte("ENTRIESREAD")
)

// xgOpen opens the stream at key, replying WRONGTYPE for a key of another type.
func xgOpen(c *Ctx, key []byte) (datatype.Stream, bool) {
	st, err := datatype.LookupStream(c.Tx, c.DB, key)
	if err != nil {
		c.typeError(err)
		return st, false
	}
	return st, true
}

// xgOpenRead is xgOpen for Redis's lookupKeyRead in a command that writes: a missing key is a
// "keymiss" event.
func xgOpenRead(c *Ctx, key []byte) (datatype.Stream, bool) {
	m, exists := c.Tx.MetaRead(c.DB, key)
	st, err := datatype.StreamFromMeta(c.Tx, c.DB, key, m, exists)
	if err != nil {
		c.typeError(err)
		return st, false
	}
	return st, true
}

func xgIDText(id codec.StreamID) []byte { return id.AppendText(nil) }

// xgWriteID writes id as a bulk string.
func xgWriteID(c *Ctx, id codec.StreamID) {
	var buf [48]byte
	c.W.Bulk(id.AppendText(buf[:0]))
}

// xgWriteEntry writes [id, [field, value, …]] for an entry of value v.
func xgWriteEntry(c *Ctx, id codec.StreamID, v []byte) {
	c.W.ArrayLen(2)
	xgWriteID(c, id)
	f, err := codec.NewStreamFields(v)
	if err != nil {
		c.W.ArrayLen(0)
		return
	}
	c.W.ArrayLen(2 * f.Len())
	for f.Next() {
		c.W.Bulk(f.Field)
		c.W.Bulk(f.Value)
	}
}

// xgNoGroup replies Redis's NOGROUP error of XPENDING, XCLAIM and XAUTOCLAIM.
func xgNoGroup(c *Ctx, key, group []byte) {
	c.Error("NOGROUP No such key '" + cstr(key) + "' or consumer group '" + cstr(group) + "'")
}

// cstr is b as Redis's "%s" prints it: up to its first NUL byte.
func cstr(b []byte) string {
	if i := bytes.IndexByte(b, 0); i >= 0 {
		b = b[:i]
	}
	return string(b)
}

// xgCreateConsumer creates consumer name in g, with its keyspace event.
func xgCreateConsumer(c *Ctx, key []byte, g *datatype.Group, name []byte) (*datatype.Consumer, bool) {
	cons, created := g.CreateConsumer(name, c.Tx.Now())
	if created {
		c.notify(pubsub.Stream, "xgroup-createconsumer", key)
	}
	return cons, created
}

// xgLogClaim logs the XCLAIM that rebuilds pending entry id of group as n (Redis's
// streamPropagateXCLAIM); a NACK with no consumer (deleted entry) is logged as its owner's.
func xgLogClaim(c *Ctx, key []byte, g *datatype.Group, id codec.StreamID, n *datatype.NACK) {
	c.Tx.Log(c.DB, key, xgXCLAIM, key, g.Name(), n.Consumer, xgZero, xgIDText(id), xgTIME,
		itoa(n.DeliveryTime), xgRETRYCOUNT, strconv.AppendUint(nil, n.DeliveryCount, 10), xgFORCE,
		xgJUSTID, xgLASTID, xgIDText(g.LastID))
}

// xgLogSetID logs the group's last id and read counter (Redis's streamPropagateGroupID).
func xgLogSetID(c *Ctx, key []byte, g *datatype.Group) {
	c.Tx.Log(c.DB, key, xgXGROUP, xgSETID, key, g.Name(), xgIDText(g.LastID), xgENTRIESRD,
		itoa(g.EntriesRead))
}

// ---- XGROUP ----

var xgroupHelpLines = []string{
	"CREATE <key> <groupname> <id|$> [option]",
	"    Create a new consumer group. Options are:",
	"    * MKSTREAM",
	"      Create the empty stream if it does not exist.",
	"    * ENTRIESREAD entries_read",
	"      Set the group's entries_read counter (internal use).",
	"CREATECONSUMER <key> <groupname> <consumer>",
	"    Create a new consumer in the specified group.",
	"DELCONSUMER <key> <groupname> <consumer>",
	"    Remove the specified consumer.",
	"DESTROY <key> <groupname>",
	"    Remove the specified group.",
	"SETID <key> <groupname> <id|$> [ENTRIESREAD entries_read]",
	"    Set the current group ID and entries_read counter.",
}

func xgroupHelp(c *Ctx) { HelpReply(c, xgroupHelpLines...) }

// xgroupStart does what every XGROUP subcommand with a key does first, in Redis's order: the
// options of CREATE and SETID (from argument 5), the key's type, the key's existence (unless
// MKSTREAM) and, for the subcommands that need it, the group's. g is nil when the group is
// missing (CREATE, DESTROY).
func xgroupStart(c *Ctx, create, setid, needGroup bool) (st datatype.Stream, g *datatype.Group, mkstream bool, entriesRead int64, ok bool) {
	entriesRead = datatype.InvalidEntriesRead
	for i := 5; i < len(c.Args); {
		switch {
		case create && EqualFold(c.Args[i], "mkstream"):
			mkstream = true
			i++
		case (create || setid) && EqualFold(c.Args[i], "entriesread") && i+1 < len(c.Args):
			v, ok := c.IntArg(i + 1)
			if !ok {
				return st, nil, false, 0, false
			}
			if v < 0 && v != datatype.InvalidEntriesRead {
				c.Error(errXEntriesRead)
				return st, nil, false, 0, false
			}
			entriesRead = v
			i += 2
		default:
			SubcommandSyntaxError(c)
			return st, nil, false, 0, false
		}
	}
	st, ok = xgOpen(c, c.Args[2])
	if !ok {
		return st, nil, false, 0, false
	}
	if !mkstream {
		if !st.Exists() {
			c.Error(errXGroupNoKey)
			return st, nil, false, 0, false
		}
		g, _ = st.Group(c.Args[3])
		if g == nil && needGroup {
			c.Error("NOGROUP No such consumer group '" + cstr(c.Args[3]) + "' for key name '" + cstr(c.Args[2]) + "'")
			return st, nil, false, 0, false
		}
	}
	return st, g, mkstream, entriesRead, true
}

func xgroupCreate(c *Ctx) {
	st, _, _, entriesRead, ok := xgroupStart(c, true, false, false)
	if !ok {
		return
	}
	if len(c.Args) > 8 {
		SubcommandSyntaxError(c)
		return
	}
	key := c.Args[2]
	var id codec.StreamID
	if string(c.Args[4]) == "$" {
		if st.Exists() {
			id = st.Info().LastID
		}
	} else if id, _, ok = parseStreamID(c, c.Args[4], 0, true, false); !ok {
		return
	}
	created := false
	if !st.Exists() {
		st.Create()
		created = true
	}
	g, ok := st.CreateGroup(c.Args[3], id, entriesRead)
	if !ok {
		c.Error(errXBusyGroup)
		return
	}
	st.Save()
	if created {
		c.Tx.Log(c.DB, key, xgXGROUP, []byte("CREATE"), key, g.Name(), xgIDText(id), xgENTRIESRD, itoa(entriesRead), []byte("MKSTREAM"))
	} else {
		c.Tx.Log(c.DB, key, xgXGROUP, []byte("CREATE"), key, g.Name(), xgIDText(id), xgENTRIESRD, itoa(entriesRead))
	}
	c.W.OK() // Redis replies before it notifies
	c.notify(pubsub.Stream, "xgroup-create", key)
}

func xgroupSetID(c *Ctx) {
	st, g, _, entriesRead, ok := xgroupStart(c, false, true, true)
	if !ok {
		return
	}
	if len(c.Args) != 5 && len(c.Args) != 7 {
		SubcommandSyntaxError(c)
		return
	}
	var id codec.StreamID
	if string(c.Args[4]) == "$" {
		id = st.Info().LastID
	} else if id, _, ok = parseStreamID(c, c.Args[4], 0, false, false); !ok {
		return
	}
	g.LastID, g.EntriesRead = id, entriesRead
	g.MarkDirty()
	g.Save()
	xgLogSetID(c, c.Args[2], g)
	c.W.OK()
	c.notify(pubsub.Stream, "xgroup-setid", c.Args[2])
}

func xgroupDestroy(c *Ctx) {
	st, g, _, _, ok := xgroupStart(c, false, false, false)
	if !ok {
		return
	}
	if g == nil {
		c.W.Int(0)
		return
	}
	key := c.Args[2]
	st.DestroyGroup(c.Args[3])
	st.Save()
	c.Tx.Log(c.DB, key, xgXGROUP, []byte("DESTROY"), key, c.Args[3])
	c.W.Int(1)
	c.notify(pubsub.Stream, "xgroup-destroy", key)
}

func xgroupCreateConsumer(c *Ctx) {
	_, g, _, _, ok := xgroupStart(c, false, false, true)
	if !ok {
		return
	}
	key := c.Args[2]
	_, created := xgCreateConsumer(c, key, g, c.Args[4])
	if !created {
		c.W.Int(0)
		return
	}
	g.Save()
	c.Tx.Log(c.DB, key, xgXGROUP, []byte("CREATECONSUMER"), key, c.Args[3], c.Args[4])
	c.W.Int(1)
}

func xgroupDelConsumer(c *Ctx) {
	_, g, _, _, ok := xgroupStart(c, false, false, true)
	if !ok {
		return
	}
	key := c.Args[2]
	pending, found := g.DeleteConsumer(c.Args[4])
	if found {
		g.Save()
		c.Tx.Log(c.DB, key, xgXGROUP, []byte("DELCONSUMER"), key, c.Args[3], c.Args[4])
		c.notify(pubsub.Stream, "xgroup-delconsumer", key)
	}
	c.W.Int(int64(pending))
}

// ---- lag and read counters (Redis 7.0) ----

// xgRangeHasTombstones reports whether ids from start up may include a deleted entry
// (streamRangeHasTombstones with no end).
func xgRangeHasTombstones(st *datatype.Stream, start codec.StreamID) bool {
	sm := st.Info()
	if st.Len() == 0 || sm.MaxDeletedID.IsZero() {
		return false
	}
	if sm.FirstID.Compare(sm.MaxDeletedID) > 0 {
		return false
	}
	return start.Compare(sm.MaxDeletedID) <= 0
}

// xgEstimateDistance is streamEstimateDistanceFromFirstEverEntry: id's read counter when it
// can be known, InvalidEntriesRead otherwise.
func xgEstimateDistance(st *datatype.Stream, id codec.StreamID) int64 {
	sm := st.Info()
	if sm.EntriesAdded == 0 {
		return 0
	}
	added := int64(sm.EntriesAdded)
	if st.Len() == 0 && id.Compare(sm.LastID) < 1 {
		return added
	}
	cmpLast := id.Compare(sm.LastID)
	if cmpLast == 0 {
		return added
	} else if cmpLast > 0 {
		return datatype.InvalidEntriesRead
	}
	cmpFirst := id.Compare(sm.FirstID)
	if sm.MaxDeletedID.IsZero() || sm.MaxDeletedID.Compare(sm.FirstID) < 0 {
		if cmpFirst < 0 {
			return added - int64(st.Len())
		} else if cmpFirst == 0 {
			return added - int64(st.Len()) + 1
		}
	}
	return datatype.InvalidEntriesRead
}

// xgLag returns the group's lag, ok false when it cannot be known (streamReplyWithCGLag).
func xgLag(st *datatype.Stream, g *datatype.Group) (int64, bool) {
	sm := st.Info()
	if sm.EntriesAdded == 0 {
		return 0, true
	}
	if g.EntriesRead != datatype.InvalidEntriesRead && !xgRangeHasTombstones(st, g.LastID) {
		return int64(sm.EntriesAdded) - g.EntriesRead, true
	}
	if er := xgEstimateDistance(st, g.LastID); er != datatype.InvalidEntriesRead {
		return int64(sm.EntriesAdded) - er, true
	}
	return 0, false
}

// ---- XREADGROUP ----

// xreadgroupKeys finds XREADGROUP's keys: the first half of what follows STREAMS (searched
// from argument 4, as its key spec says).
func xreadgroupKeys(args [][]byte) [][]byte {
	for i := 4; i < len(args); i++ {
		if EqualFold(args[i], "streams") {
			rest := args[i+1:]
			return rest[:len(rest)/2]
		}
	}
	return nil
}

// xreadgroupArgs is a parsed XREADGROUP.
type xreadgroupArgs struct {
	group, consumer []byte
	count           int64
	timeout         int64 // ms; -1: no BLOCK
	noack           bool
	keys, ids       [][]byte
}

// xreadgroupParse parses the options as xreadCommand does, replying the error.
func xreadgroupParse(c *Ctx) (a xreadgroupArgs, ok bool) {
	a.timeout = -1
	streamsAt := 0
	for i := 1; i < len(c.Args); i++ {
		more := len(c.Args) - i - 1
		o := c.Args[i]
		switch {
		case EqualFold(o, "block") && more > 0:
			if c.Caller != nil {
				c.Error("ERR " + string(c.Args[0]) + " command is not allowed with BLOCK option from scripts")
				return a, false
			}
			i++
			v, ok := codec.ParseInt(c.Args[i])
			if !ok {
				c.Error("ERR timeout is not an integer or out of range")
				return a, false
			}
			if v < 0 {
				c.Error("ERR timeout is negative")
				return a, false
			}
			a.timeout = v
		case EqualFold(o, "count") && more > 0:
			i++
			v, ok := c.IntArg(i)
			if !ok {
				return a, false
			}
			a.count = max(v, 0)
		case EqualFold(o, "streams") && more > 0:
			streamsAt = i + 1
			n := len(c.Args) - streamsAt
			if n%2 != 0 {
				c.Error(errXUnbalanced)
				return a, false
			}
			a.keys, a.ids = c.Args[streamsAt:streamsAt+n/2], c.Args[streamsAt+n/2:]
			i = len(c.Args)
		case EqualFold(o, "group") && more >= 2:
			a.group, a.consumer = c.Args[i+1], c.Args[i+2]
			i += 2
		case EqualFold(o, "noack"):
			a.noack = true
		default:
			c.Error(ErrSyntax)
			return a, false
		}
	}
	if streamsAt == 0 {
		c.Error(ErrSyntax)
		return a, false
	}
	if a.group == nil {
		c.Error("ERR Missing GROUP option for XREADGROUP")
		return a, false
	}
	return a, true
}

// xreadgroupTarget is one key of an XREADGROUP: its stream, group and what to read.
type xreadgroupTarget struct {
	key     []byte
	st      datatype.Stream
	g       *datatype.Group
	history bool
	after   codec.StreamID // history: the consumer's pending entries above it
}

func xreadgroupCmd(c *Ctx) {
	a, ok := xreadgroupParse(c)
	if !ok {
		return
	}
	if c.ReadyKey != nil {
		xreadgroupServe(c, &a)
		return
	}
	targets := make([]xreadgroupTarget, len(a.keys))
	for i, key := range a.keys {
		t := &targets[i]
		t.key = key
		if j := slices.IndexFunc(a.keys[:i], func(k []byte) bool { return bytes.Equal(k, key) }); j >= 0 {
			// A key named twice is read twice through one group, as Redis's pointers do.
			t.st, t.g = targets[j].st, targets[j].g
		} else {
			if t.st, ok = xgOpenRead(c, key); !ok {
				return
			}
			if t.st.Exists() {
				t.g, _ = t.st.Group(a.group)
			}
		}
		if t.g == nil {
			c.Error("NOGROUP No such key '" + cstr(key) + "' or consumer group '" + cstr(a.group) +
				"' in XREADGROUP with GROUP option")
			return
		}
		idArg := a.ids[i]
		switch string(idArg) {
		case "$":
			c.Error(errXDollarGroup)
			return
		case ">":
			continue
		}
		id, _, ok := parseStreamID(c, idArg, 0, true, false)
		if !ok {
			return
		}
		// Redis marks ">" with the largest id, so that id given explicitly reads as ">" too.
		if id != codec.MaxStreamID {
			t.history, t.after = true, id
		}
	}
	served := 0
	mark := len(c.W.Buf)
	for i := range targets {
		t := &targets[i]
		var entries []xgEntry
		if !t.history {
			// Served when an entry lies beyond the group's last id: the walk that finds it
			// reads what is served.
			if t.st.Len() == 0 {
				continue
			}
			if entries = xgNewEntries(t, a.count); len(entries) == 0 {
				continue
			}
		}
		if served == 0 {
			mark = len(c.W.Buf)
			if c.W.RESP3 {
				c.W.MapLen(len(targets)) // patched below if fewer are served
			} else {
				c.W.ArrayLen(len(targets))
			}
		}
		served++
		xreadgroupReply(c, t, &a, a.count, entries)
	}
	if served > 0 {
		if served != len(targets) {
			xgPatchLen(c, mark, len(targets), served, c.W.RESP3)
		}
		return
	}
	if a.timeout >= 0 && c.MayBlock() {
		c.Block = &BlockRequest{Keys: a.keys, Type: codec.TypeStream, Timeout: a.timeout, ReadyTx: xreadgroupReady}
		return
	}
	c.W.NullArray()
}

// xgPatchLen rewrites the array (isMap: map) header at mark, written for want elements, to
// got.
func xgPatchLen(c *Ctx, mark, want, got int, isMap bool) {
	w := codec.Writer{RESP3: c.W.RESP3}
	if isMap {
		w.MapLen(want)
	} else {
		w.ArrayLen(want)
	}
	old := len(w.Buf)
	w.Buf = w.Buf[:0]
	if isMap {
		w.MapLen(got)
	} else {
		w.ArrayLen(got)
	}
	if len(w.Buf) == old {
		copy(c.W.Buf[mark:], w.Buf)
		return
	}
	rest := append([]byte(nil), c.W.Buf[mark+old:]...)
	c.W.Buf = append(append(c.W.Buf[:mark], w.Buf...), rest...)
}

// xreadgroupReply writes one served key, [key, entries] (a map entry in RESP3), and does the
// group's bookkeeping.
func xreadgroupReply(c *Ctx, t *xreadgroupTarget, a *xreadgroupArgs, count int64, entries []xgEntry) {
	if !c.W.RESP3 {
		c.W.ArrayLen(2)
	}
	c.W.Bulk(t.key)
	g := t.g
	cons := g.Consumer(a.consumer, true, c.Tx.Now())
	if cons == nil {
		cons, _ = xgCreateConsumer(c, t.key, g, a.consumer)
		if a.noack {
			c.Tx.Log(c.DB, t.key, xgXGROUP, []byte("CREATECONSUMER"), t.key, g.Name(), a.consumer)
		}
	}
	now := c.Tx.Now()
	if t.history {
		xreadgroupHistory(c, t, cons, count, now)
		g.Save()
		return
	}
	moved := false
	c.W.ArrayLen(len(entries))
	for _, e := range entries {
		if e.id.Compare(g.LastID) > 0 {
			if g.EntriesRead != datatype.InvalidEntriesRead && !xgRangeHasTombstones(&t.st, e.id) {
				g.EntriesRead++
			} else if t.st.Info().EntriesAdded != 0 {
				g.EntriesRead = xgEstimateDistance(&t.st, e.id)
			}
			g.LastID = e.id
			g.MarkDirty()
			moved = true
		}
		xgWriteEntry(c, e.id, e.v)
		if !a.noack {
			nack := datatype.NACK{DeliveryTime: now, DeliveryCount: 1, Consumer: cons.Name}
			g.SetNACK(e.id, nack)
			xgLogClaim(c, t.key, g, e.id, &nack)
		}
	}
	g.Save()
	if moved {
		xgLogSetID(c, t.key, g)
	}
}

// xgEntry is an entry read for a reply.
type xgEntry struct {
	id codec.StreamID
	v  []byte
}

// xgNewEntries reads up to count (0: all) entries beyond t's group's last id.
func xgNewEntries(t *xreadgroupTarget, count int64) []xgEntry {
	start, ok := t.g.LastID.Next()
	if !ok {
		return nil
	}
	var entries []xgEntry
	r := t.st.Range(start, codec.MaxStreamID, false)
	for ; r.Valid() && (count == 0 || int64(len(entries)) < count); r.Next() {
		entries = append(entries, xgEntry{r.ID(), append([]byte(nil), r.Value()...)})
	}
	r.Close()
	return entries
}

// xreadgroupHistory writes the consumer's pending entries above t.after: each one still in the
// stream counts a delivery; a deleted one is [id, nil].
func xreadgroupHistory(c *Ctx, t *xreadgroupTarget, cons *datatype.Consumer, count int64, now int64) {
	g := t.g
	start, ok := t.after.Next()
	if !ok {
		start = codec.MinStreamID // Redis's streamIncrID wraps the largest id to 0-0
	}
	ids := g.OwnedIDs(cons.Name, start, codec.MaxStreamID, int(count))
	c.W.ArrayLen(len(ids))
	for _, id := range ids {
		v, ok := t.st.EntryValue(id)
		if !ok {
			c.W.ArrayLen(2)
			xgWriteID(c, id)
			c.W.NullArray()
			continue
		}
		xgWriteEntry(c, id, v)
		nack, _ := g.NACK(id)
		nack.DeliveryTime = now
		nack.DeliveryCount++
		g.SetNACK(id, nack)
		xgLogClaim(c, t.key, g, id, &nack)
	}
}

// xreadgroupServe serves a blocked XREADGROUP from c.ReadyKey, as Redis's
// serveClientsBlockedOnStreamKey does: the key gone or of another type, or the group gone,
// answer an error; new entries beyond the group's last id are read with the command's COUNT
// (1000 if none).
func xreadgroupServe(c *Ctx, a *xreadgroupArgs) {
	key := c.ReadyKey
	st, err := datatype.LookupStream(c.Tx, c.DB, key)
	if err != nil || !st.Exists() {
		c.Error("UNBLOCKED the stream key no longer exists")
		return
	}
	g, ok := st.Group(a.group)
	if !ok {
		c.Error("NOGROUP the consumer group this client was blocked on no longer exists")
		return
	}
	count := a.count
	if count == 0 {
		count = xreadBlockedCount
	}
	if c.W.RESP3 {
		c.W.MapLen(1)
	} else {
		c.W.ArrayLen(1)
	}
	t := xreadgroupTarget{key: key, st: st, g: g}
	xreadgroupReply(c, &t, a, count, xgNewEntries(&t, count))
}

// xreadgroupReady is a blocked XREADGROUP's ready check (BlockRequest.Ready): its stream has
// an id beyond its group's last id, or the stream or the group is gone (it is then answered
// with Redis's error).
func xreadgroupReady(tx *shard.Tx, db int, args [][]byte, key []byte) bool {
	a, ok := xreadgroupParseQuiet(args)
	if !ok {
		return true
	}
	st, err := datatype.LookupStream(tx, db, key)
	if err != nil || !st.Exists() {
		return true
	}
	g, ok := st.Group(a.group)
	if !ok {
		return true
	}
	return st.Info().LastID.Compare(g.LastID) > 0
}

// xreadgroupParseQuiet finds the group of a parsed XREADGROUP (its arguments were checked when
// it blocked).
func xreadgroupParseQuiet(args [][]byte) (a xreadgroupArgs, ok bool) {
	for i := 1; i+2 < len(args); i++ {
		if EqualFold(args[i], "streams") {
			break
		}
		if EqualFold(args[i], "group") {
			a.group = args[i+1]
			ok = true
			i += 2
		} else if EqualFold(args[i], "block") || EqualFold(args[i], "count") {
			i++
		}
	}
	return a, ok
}

// ---- XACK ----

func xackCmd(c *Ctx) {
	key := c.Args[1]
	st, ok := xgOpenRead(c, key)
	if !ok {
		return
	}
	var g *datatype.Group
	if st.Exists() {
		g, _ = st.Group(c.Args[2])
	}
	if g == nil {
		c.W.Int(0)
		return
	}
	ids := make([]codec.StreamID, 0, len(c.Args)-3)
	for _, arg := range c.Args[3:] {
		id, _, ok := parseStreamID(c, arg, 0, true, false)
		if !ok {
			return
		}
		ids = append(ids, id)
	}
	var acked int64
	for _, id := range ids {
		if g.Ack(id) {
			acked++
		}
	}
	if acked > 0 {
		g.Save()
		c.Tx.Log(c.DB, key, c.Args...)
	}
	c.W.Int(acked)
}

// ---- XPENDING ----

func xpendingCmd(c *Ctx) {
	n := len(c.Args)
	key, group := c.Args[1], c.Args[2]
	if n != 3 && (n < 6 || n > 9) {
		c.Error(ErrSyntax)
		return
	}
	var start, end codec.StreamID
	var count, minIdle int64
	var consumer []byte
	if n >= 6 {
		at := 3
		if EqualFold(c.Args[3], "idle") {
			v, ok := c.IntArg(4)
			if !ok {
				return
			}
			minIdle = v
			if n < 8 {
				c.Error(ErrSyntax)
				return
			}
			at += 2
		}
		v, ok := c.IntArg(at + 2)
		if !ok {
			return
		}
		count = max(v, 0)
		if start, ok = parseIntervalBound(c, c.Args[at], false); !ok {
			return
		}
		if end, ok = parseIntervalBound(c, c.Args[at+1], true); !ok {
			return
		}
		if at+3 < n {
			consumer = c.Args[at+3]
		}
	}
	st, ok := xgOpen(c, key)
	if !ok {
		return
	}
	var g *datatype.Group
	if st.Exists() {
		g, _ = st.Group(group)
	}
	if g == nil {
		xgNoGroup(c, key, group)
		return
	}
	if n == 3 {
		c.W.ArrayLen(4)
		c.W.Int(int64(g.Pending()))
		if g.Pending() == 0 {
			c.W.Null()
			c.W.Null()
			c.W.NullArray()
			return
		}
		first, last := g.FirstLastPending()
		xgWriteID(c, first)
		xgWriteID(c, last)
		type owner struct {
			name []byte
			n    uint64
		}
		var owners []owner
		for _, name := range g.ConsumerNames() {
			if cons := g.Consumer(name, false, 0); cons != nil && cons.Pending() > 0 {
				owners = append(owners, owner{name, cons.Pending()})
			}
		}
		c.W.ArrayLen(len(owners))
		for _, o := range owners {
			c.W.ArrayLen(2)
			c.W.Bulk(o.name)
			c.W.Bulk(strconv.AppendUint(nil, o.n, 10))
		}
		return
	}
	var it *datatype.PELIter
	if consumer != nil {
		if g.Consumer(consumer, false, 0) == nil {
			c.W.ArrayLen(0)
			return
		}
		it = g.OwnedPEL(consumer, start, end)
	} else {
		it = g.PEL(start, end)
	}
	defer it.Close()
	now := c.Tx.Now()
	type row struct {
		id   codec.StreamID
		nack datatype.NACK
	}
	var rows []row
	for ; count > 0 && it.Valid(); it.Next() {
		nack := it.NACK()
		if minIdle != 0 && now-nack.DeliveryTime < minIdle {
			continue
		}
		rows = append(rows, row{it.ID(), nack})
		count--
	}
	c.W.ArrayLen(len(rows))
	for _, r := range rows {
		c.W.ArrayLen(4)
		xgWriteID(c, r.id)
		c.W.Bulk(r.nack.Consumer)
		c.W.Int(max(now-r.nack.DeliveryTime, 0))
		c.W.Int(int64(r.nack.DeliveryCount))
	}
}

// ---- XCLAIM ----

func xclaimCmd(c *Ctx) {
	key, group := c.Args[1], c.Args[2]
	st, ok := xgOpenRead(c, key)
	if !ok {
		return
	}
	var g *datatype.Group
	if st.Exists() {
		g, _ = st.Group(group)
	}
	if g == nil {
		xgNoGroup(c, key, group)
		return
	}
	minIdle, ok := codec.ParseInt(c.Args[4])
	if !ok {
		c.Error("ERR Invalid min-idle-time argument for XCLAIM")
		return
	}
	minIdle = max(minIdle, 0)
	var ids []codec.StreamID
	j := 5
	for ; j < len(c.Args); j++ {
		b := c.Args[j]
		if len(b) == 1 && (b[0] == '-' || b[0] == '+') {
			break
		}
		id, _, ok := codec.ParseStreamID(b, 0, false)
		if !ok {
			break
		}
		ids = append(ids, id)
	}
	now := c.Tx.Now()
	retry, delivery := int64(-1), int64(-1)
	force, justid := false, false
	var lastID codec.StreamID
	for ; j < len(c.Args); j++ {
		more := len(c.Args) - 1 - j
		o := c.Args[j]
		switch {
		case EqualFold(o, "force"):
			force = true
		case EqualFold(o, "justid"):
			justid = true
		case EqualFold(o, "idle") && more > 0:
			j++
			v, ok := codec.ParseInt(c.Args[j])
			if !ok {
				c.Error("ERR Invalid IDLE option argument for XCLAIM")
				return
			}
			delivery = now - v
		case EqualFold(o, "time") && more > 0:
			j++
			v, ok := codec.ParseInt(c.Args[j])
			if !ok {
				c.Error("ERR Invalid TIME option argument for XCLAIM")
				return
			}
			delivery = v
		case EqualFold(o, "retrycount") && more > 0:
			j++
			v, ok := codec.ParseInt(c.Args[j])
			if !ok {
				c.Error("ERR Invalid RETRYCOUNT option argument for XCLAIM")
				return
			}
			retry = v
		case EqualFold(o, "lastid") && more > 0:
			j++
			if lastID, _, ok = parseStreamID(c, c.Args[j], 0, true, false); !ok {
				return
			}
		default:
			c.Error("ERR Unrecognized XCLAIM option '" + string(o) + "'")
			return
		}
	}
	logLast := false
	if lastID.Compare(g.LastID) > 0 {
		g.LastID = lastID
		g.MarkDirty()
		logLast = true
	}
	if delivery < 0 || delivery > now {
		delivery = now
	}
	var cons *datatype.Consumer
	created := false
	name := c.Args[3]
	type claimed struct {
		id codec.StreamID
		v  []byte
	}
	var out []claimed
	for _, id := range ids {
		nack, pending := g.NACK(id)
		v, exists := st.EntryValue(id)
		if !exists {
			if pending {
				xgLogClaim(c, key, g, id, &nack)
				logLast = false
				g.Ack(id)
			}
			continue
		}
		fresh := false
		if force && !pending {
			pending, fresh = true, true
		}
		if !pending {
			continue
		}
		if !fresh && minIdle > 0 && now-nack.DeliveryTime < minIdle {
			continue
		}
		if cons == nil {
			cons, created = xgConsumerQuiet(c, g, name)
		}
		if fresh {
			nack = datatype.NACK{DeliveryTime: now, DeliveryCount: 1}
		}
		nack.DeliveryTime = delivery
		if retry >= 0 {
			nack.DeliveryCount = uint64(retry)
		} else if !justid {
			nack.DeliveryCount++
		}
		nack.Consumer = cons.Name
		g.SetNACK(id, nack)
		out = append(out, claimed{id, v})
		xgLogClaim(c, key, g, id, &nack)
		logLast = false
	}
	if logLast {
		xgLogSetID(c, key, g)
	}
	g.Save()
	c.W.ArrayLen(len(out))
	if created { // Redis creates the consumer after the reply's header, before the first entry
		c.notify(pubsub.Stream, "xgroup-createconsumer", key)
	}
	for _, e := range out {
		if justid {
			xgWriteID(c, e.id)
		} else {
			xgWriteEntry(c, e.id, e.v)
		}
	}
}

// xgConsumerQuiet is xgConsumer without the keyspace event, which the caller sends where
// Redis's reply has it when created is true.
func xgConsumerQuiet(c *Ctx, g *datatype.Group, name []byte) (cons *datatype.Consumer, created bool) {
	if cons = g.Consumer(name, true, c.Tx.Now()); cons != nil {
		return cons, false
	}
	return g.CreateConsumer(name, c.Tx.Now())
}

// ---- XAUTOCLAIM ----

func xautoclaimCmd(c *Ctx) {
	key, group := c.Args[1], c.Args[2]
	// Redis looks the key up before parsing (a miss is a "keymiss" even when the arguments are
	// refused) and checks its type after.
	m, exists := c.Tx.MetaRead(c.DB, key)
	minIdle, ok := codec.ParseInt(c.Args[4])
	if !ok {
		c.Error("ERR Invalid min-idle-time argument for XAUTOCLAIM")
		return
	}
	minIdle = max(minIdle, 0)
	start, ok := parseIntervalBound(c, c.Args[5], false)
	if !ok {
		return
	}
	count, justid := int64(100), false
	const attemptsFactor = 10
	for j := 6; j < len(c.Args); j++ {
		more := len(c.Args) - 1 - j
		switch o := c.Args[j]; {
		case EqualFold(o, "count") && more > 0:
			v, ok := codec.ParseInt(c.Args[j+1])
			if !ok || v < 1 || v > math.MaxInt64/16 {
				c.Error("ERR COUNT must be > 0")
				return
			}
			count = v
			j++
		case EqualFold(o, "justid"):
			justid = true
		default:
			c.Error(ErrSyntax)
			return
		}
	}
	st, err := datatype.StreamFromMeta(c.Tx, c.DB, key, m, exists)
	if err != nil {
		c.typeError(err)
		return
	}
	var g *datatype.Group
	if st.Exists() {
		g, _ = st.Group(group)
	}
	if g == nil {
		xgNoGroup(c, key, group)
		return
	}
	attempts := count * attemptsFactor
	now := c.Tx.Now()
	name := c.Args[3]
	var cons *datatype.Consumer
	created := false
	var deleted []codec.StreamID
	type claimed struct {
		id codec.StreamID
		v  []byte
	}
	var out []claimed
	next := codec.StreamID{}
	// Walk a snapshot of the PEL from start: claiming changes the entries behind the walk.
	it := g.PEL(start, codec.MaxStreamID)
	type pe struct {
		id   codec.StreamID
		nack datatype.NACK
	}
	var walk []pe
	limit := attempts + 1
	if limit > 1<<20 {
		limit = 1 << 20
	}
	for ; it.Valid() && int64(len(walk)) < limit; it.Next() {
		walk = append(walk, pe{it.ID(), it.NACK()})
	}
	it.Close()
	i := 0
	for ; attempts > 0 && count > 0 && i < len(walk); i++ {
		attempts--
		id, nack := walk[i].id, walk[i].nack
		v, exists := st.EntryValue(id)
		if !exists {
			xgLogClaim(c, key, g, id, &nack)
			g.Ack(id)
			deleted = append(deleted, id)
			count--
			continue
		}
		if minIdle > 0 && now-nack.DeliveryTime < minIdle {
			continue
		}
		if cons == nil {
			cons, created = xgConsumerQuiet(c, g, name)
		}
		nack.DeliveryTime = now
		if !justid {
			nack.DeliveryCount++
		}
		nack.Consumer = cons.Name
		g.SetNACK(id, nack)
		out = append(out, claimed{id, v})
		count--
		xgLogClaim(c, key, g, id, &nack)
	}
	if i < len(walk) {
		next = walk[i].id
	}
	c.W.ArrayLen(3)
	xgWriteID(c, next)
	c.W.ArrayLen(len(out))
	if created { // where Redis's reply has it: after the placeholders of its two first elements
		c.notify(pubsub.Stream, "xgroup-createconsumer", key)
	}
	for _, e := range out {
		if justid {
			xgWriteID(c, e.id)
		} else {
			xgWriteEntry(c, e.id, e.v)
		}
	}
	c.W.ArrayLen(len(deleted))
	for _, id := range deleted {
		xgWriteID(c, id)
	}
	g.Save()
}

// logStreamGroups logs what rebuilds the consumer groups of stream dst (logical db) after its
// entries (logStream, for RENAME, COPY and MOVE): each group as XGROUP CREATE with its last id
// and read counter, its consumers as XGROUP CREATECONSUMER, and its pending entries as XCLAIM
// … FORCE with their owners, delivery times and counts. As in Redis's AOF rewrite, a pending
// entry whose stream entry was deleted is not rebuilt (XCLAIM cannot create it).
func logStreamGroups(c *Ctx, db int, dst []byte, s *datatype.Stream) {
	for _, name := range s.GroupNames() {
		g, ok := s.Group(name)
		if !ok {
			continue
		}
		c.Tx.Log(db, dst, xgXGROUP, []byte("CREATE"), dst, name, xgIDText(g.LastID), xgENTRIESRD, itoa(g.EntriesRead))
		for _, cn := range g.ConsumerNames() {
			c.Tx.Log(db, dst, xgXGROUP, []byte("CREATECONSUMER"), dst, name, cn)
		}
		it := g.PEL(codec.MinStreamID, codec.MaxStreamID)
		for ; it.Valid(); it.Next() {
			n := it.NACK()
			c.Tx.Log(db, dst, xgXCLAIM, dst, name, n.Consumer, xgZero, xgIDText(it.ID()), xgTIME,
				itoa(n.DeliveryTime), xgRETRYCOUNT, strconv.AppendUint(nil, n.DeliveryCount, 10), xgFORCE,
				xgJUSTID)
		}
		it.Close()
	}
}

// StreamGroupsUsage estimates the bytes the consumer groups of stream key (meta m) take on
// disk, for MEMORY USAGE: as Redis's objectComputeSize, up to samples groups are measured
// (each its record, its consumers and its PEL, both the group's entries and the consumers'
// index, from up to samples of them) and the average counts for every group.
func StreamGroupsUsage(tx *shard.Tx, db int, key []byte, m codec.Meta, samples int64) int64 {
	st, err := datatype.StreamFromMeta(tx, db, key, m, true)
	if err != nil || st.Info().Groups == 0 {
		return 0
	}
	var total, measured int64
	for _, name := range st.GroupNames() {
		if measured >= samples {
			break
		}
		g, ok := st.Group(name)
		if !ok {
			continue
		}
		measured++
		prefix := int64(len(key) + 16) // a data key's prefix: db, key, version
		size := prefix + 1 + int64(len(name)) + 40
		cnames := g.ConsumerNames()
		for _, cn := range cnames {
			size += prefix + 5 + int64(len(name)+len(cn)) + 16
		}
		if g.Pending() > 0 {
			var n, bytes int64
			it := g.PEL(codec.MinStreamID, codec.MaxStreamID)
			for ; it.Valid() && n < samples; it.Next() {
				nack := it.NACK()
				// the 'p' entry and the 'q' index entry
				bytes += 2*(prefix+5+int64(len(name))+codec.StreamIDLen) + 16 + 2*int64(len(nack.Consumer)) + 4
				n++
			}
			it.Close()
			if n > 0 {
				size += bytes / n * int64(g.Pending())
			}
		}
		total += size
	}
	if measured == 0 {
		return 0
	}
	return total / measured * int64(st.Info().Groups)
}
