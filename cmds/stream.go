package cmds

import (
	"bytes"
	"strconv"

	"shardis/cmdspec"
	"shardis/codec"
	"shardis/datatype"
	"shardis/pubsub"
)

// The stream family without consumer groups: XADD XRANGE XREVRANGE XLEN XDEL XTRIM XSETID
// XREAD. A stream is a collection (datatype/stream*.go) whose entries are data keys in id
// order, so a range is one seek. Writes are logged as Redis propagates them: XADD with the id
// it made, a `~` or limited trim as the exact trim it came to (MAXLEN = <length left>), so a
// replay gives the same entries whatever the node layout.

func init() {
	oneKey := func(f cmdspec.KeyFlag) []cmdspec.KeySpec {
		return []cmdspec.KeySpec{{Flags: f, Begin: cmdspec.Index(1), Find: cmdspec.Range(0, 1, 0)}}
	}
	Register(
		&Command{Name: "xadd", Arity: -5, Flags: []string{"write", "denyoom", "fast"},
			ACL: []string{"write", "stream", "fast"}, Group: "stream", Since: "5.0.0",
			Summary:    "Appends a new entry to a stream",
			Complexity: "O(1) when adding a new entry, O(N) when trimming where N being the number of entries evicted.",
			Syntax:     "key [NOMKSTREAM] [<MAXLEN | MINID> [= | ~] threshold [LIMIT count]] <* | id> field value [field value ...]",
			KeySpecs: []cmdspec.KeySpec{{Flags: cmdspec.RW | cmdspec.Update, Begin: cmdspec.Index(1), Find: cmdspec.Range(0, 1, 0),
				Notes: "UPDATE instead of INSERT because of the optional trimming feature"}},
			Tips: []string{"nondeterministic_output"}, Run: xadd},
		&Command{Name: "xrange", Arity: -4, Flags: []string{"readonly"},
			ACL: []string{"read", "stream", "slow"}, Group: "stream", Since: "5.0.0",
			Summary:    "Return a range of elements in a stream, with IDs matching the specified IDs interval",
			Complexity: "O(N) with N being the number of elements being returned. If N is constant (e.g. always asking for the first 10 elements with COUNT), you can consider it O(1).",
			Syntax:     "key start end [COUNT count]",
			KeySpecs:   oneKey(cmdspec.RO | cmdspec.Access), Run: func(c *Ctx) { xrange(c, false) }},
		&Command{Name: "xrevrange", Arity: -4, Flags: []string{"readonly"},
			ACL: []string{"read", "stream", "slow"}, Group: "stream", Since: "5.0.0",
			Summary:    "Return a range of elements in a stream, with IDs matching the specified IDs interval, in reverse order (from greater to smaller IDs) compared to XRANGE",
			Complexity: "O(N) with N being the number of elements returned. If N is constant (e.g. always asking for the first 10 elements with COUNT), you can consider it O(1).",
			Syntax:     "key end start [COUNT count]",
			KeySpecs:   oneKey(cmdspec.RO | cmdspec.Access), Run: func(c *Ctx) { xrange(c, true) }},
		&Command{Name: "xlen", Arity: 2, Flags: []string{"readonly", "fast"},
			ACL: []string{"read", "stream", "fast"}, Group: "stream", Since: "5.0.0",
			Summary: "Return the number of entries in a stream", Complexity: "O(1)", Syntax: "key",
			KeySpecs: oneKey(cmdspec.RO), Run: xlen},
		&Command{Name: "xdel", Arity: -3, Flags: []string{"write", "fast"},
			ACL: []string{"write", "stream", "fast"}, Group: "stream", Since: "5.0.0",
			Summary:    "Removes the specified entries from the stream. Returns the number of items actually deleted, that may be different from the number of IDs passed in case certain IDs do not exist.",
			Complexity: "O(1) for each single item to delete in the stream, regardless of the stream size.",
			Syntax:     "key id [id ...]",
			KeySpecs:   oneKey(cmdspec.RW | cmdspec.Delete), Run: xdel},
		&Command{Name: "xtrim", Arity: -4, Flags: []string{"write"},
			ACL: []string{"write", "stream", "slow"}, Group: "stream", Since: "5.0.0",
			Summary:    "Trims the stream to (approximately if '~' is passed) a certain size",
			Complexity: "O(N), with N being the number of evicted entries. Constant times are very small however, since entries are organized in macro nodes containing multiple entries that can be released with a single deallocation.",
			Syntax:     "key <MAXLEN | MINID> [= | ~] threshold [LIMIT count]",
			KeySpecs:   oneKey(cmdspec.RW | cmdspec.Delete), Tips: []string{"nondeterministic_output"}, Run: xtrim},
		&Command{Name: "xsetid", Arity: -3, Flags: []string{"write", "denyoom", "fast"},
			ACL: []string{"write", "stream", "fast"}, Group: "stream", Since: "5.0.0",
			Summary: "An internal command for replicating stream values", Complexity: "O(1)",
			Syntax:   "key last-id [ENTRIESADDED entries-added] [MAXDELETEDID max-deleted-id]",
			KeySpecs: oneKey(cmdspec.RW | cmdspec.Update), Run: xsetid},
		&Command{Name: "xread", Arity: -4, Flags: []string{"readonly", "blocking", "movablekeys"},
			ACL: []string{"read", "stream", "slow", "blocking"}, Group: "stream", Since: "5.0.0",
			Summary:    "Return never seen elements in multiple streams, with IDs greater than the ones reported by the caller for each stream. Can block.",
			Complexity: "For each stream mentioned: O(N) with N being the number of elements being returned, it means that XREAD-ing with a fixed COUNT is O(1). Note that when the BLOCK option is used, XADD will pay O(M) time in order to serve the M clients blocked on the stream getting new data.",
			Syntax:     "[COUNT count] [BLOCK milliseconds] STREAMS key [key ...] id [id ...]",
			KeySpecs:   []cmdspec.KeySpec{{Flags: cmdspec.RO | cmdspec.Access, Begin: cmdspec.Keyword("STREAMS", 1), Find: cmdspec.Range(-1, 1, 2)}},
			Keys:       XReadKeys, Run: xread},
	)
}

// Binlog command names of the stream family.
var (
	streamXADD  = []byte("XADD")
	streamXDEL  = []byte("XDEL")
	streamXTRIM = []byte("XTRIM")
)

// Redis's stream errors.
const (
	errStreamID         = "ERR Invalid stream ID specified as stream command argument"
	errStreamIDTooSmall = "ERR The ID specified in XADD is equal or smaller than the target stream top item"
	errStreamIDZero     = "ERR The ID specified in XADD must be greater than 0-0"
	errStreamExhausted  = "ERR The stream has exhausted the last possible ID, unable to add more items"
	errStreamTooLarge   = "ERR Elements are too large to be stored"
)

// streamOpen opens the stream at key; ok is false after the WRONGTYPE reply.
func streamOpen(c *Ctx, key []byte) (s datatype.Stream, ok bool) {
	s, err := datatype.LookupStream(c.Tx, c.DB, key)
	if err != nil {
		c.typeError(err)
		return s, false
	}
	return s, true
}

// parseStreamID parses an id argument as streamGenericParseIDOrReply: strict refuses "-"
// and "+"; withSeqStar accepts "<ms>-*" (seqGiven false). It replies the error.
func parseStreamID(c *Ctx, arg []byte, missingSeq uint64, strict, withSeqStar bool) (id codec.StreamID, seqGiven, ok bool) {
	if len(arg) == 1 && (arg[0] == '-' || arg[0] == '+') {
		if strict {
			c.Error(errStreamID)
			return id, false, false
		}
		if arg[0] == '-' {
			return codec.MinStreamID, true, true
		}
		return codec.MaxStreamID, true, true
	}
	id, seqGiven, ok = codec.ParseStreamID(arg, missingSeq, withSeqStar)
	if !ok {
		c.Error(errStreamID)
	}
	return id, seqGiven, ok
}

// streamTrimArgs are XADD's and XTRIM's options (streamParseAddOrTrimArgsOrReply).
type streamTrimArgs struct {
	datatype.TrimArgs
	id       codec.StreamID
	idGiven  bool
	seqGiven bool
	noMk     bool
	idPos    int
}

// parseTrimArgs parses the options of XADD (xadd) or XTRIM from argument 2 on; ok is false
// after the error reply.
func parseTrimArgs(c *Ctx, xadd bool) (a streamTrimArgs, ok bool) {
	limitGiven := false
	i := 2
	for ; i < len(c.Args); i++ {
		more := len(c.Args) - 1 - i
		opt := c.Args[i]
		switch {
		case xadd && len(opt) == 1 && opt[0] == '*':
			a.idPos = i
			goto parsed
		case EqualFold(opt, "maxlen") && more > 0, EqualFold(opt, "minid") && more > 0:
			if a.Strategy != datatype.TrimNone {
				c.Error("ERR syntax error, MAXLEN and MINID options at the same time are not compatible")
				return a, false
			}
			a.Approx = false
			next := c.Args[i+1]
			if more >= 2 && len(next) == 1 && next[0] == '~' {
				a.Approx = true
				i++
			} else if more >= 2 && len(next) == 1 && next[0] == '=' {
				i++
			}
			if EqualFold(opt, "maxlen") {
				n, ok := c.IntArg(i + 1)
				if !ok {
					return a, false
				}
				if n < 0 {
					c.Error("ERR The MAXLEN argument must be >= 0.")
					return a, false
				}
				a.MaxLen, a.Strategy = uint64(n), datatype.TrimMaxLen
			} else {
				id, _, ok := parseStreamID(c, c.Args[i+1], 0, true, false)
				if !ok {
					return a, false
				}
				a.MinID, a.Strategy = id, datatype.TrimMinID
			}
			i++
		case EqualFold(opt, "limit") && more > 0:
			n, ok := c.IntArg(i + 1)
			if !ok {
				return a, false
			}
			if n < 0 {
				c.Error("ERR The LIMIT argument must be >= 0.")
				return a, false
			}
			a.Limit, limitGiven = n, true
			i++
		case xadd && EqualFold(opt, "nomkstream"):
			a.noMk = true
		case xadd:
			id, seqGiven, ok := parseStreamID(c, opt, 0, true, true)
			if !ok {
				return a, false
			}
			a.id, a.seqGiven, a.idGiven, a.idPos = id, seqGiven, true, i
			goto parsed
		default:
			c.Error(ErrSyntax)
			return a, false
		}
	}
	a.idPos = i
parsed:
	if a.Limit != 0 && a.Strategy == datatype.TrimNone {
		c.Error("ERR syntax error, LIMIT cannot be used without specifying a trimming strategy")
		return a, false
	}
	if !xadd && a.Strategy == datatype.TrimNone {
		c.Error("ERR syntax error, XTRIM must be called with a trimming strategy")
		return a, false
	}
	if limitGiven {
		if !a.Approx {
			c.Error("ERR syntax error, LIMIT cannot be used without the special ~ option")
			return a, false
		}
	} else if a.Approx {
		a.Limit = datatype.StreamTrimDefaultLimit
	} else {
		a.Limit = 0
	}
	return a, true
}

// xadd is XADD key [NOMKSTREAM] [MAXLEN|MINID [=|~] threshold [LIMIT count]] *|id field value ...
func xadd(c *Ctx) {
	a, ok := parseTrimArgs(c, true)
	if !ok {
		return
	}
	fieldPos := a.idPos + 1
	if n := len(c.Args) - fieldPos; n < 2 || n%2 == 1 {
		c.Error(ArityError(c.Cmd))
		return
	}
	if a.idGiven && a.seqGiven && a.id.IsZero() {
		c.Error(errStreamIDZero)
		return
	}
	key := c.Args[1]
	s, ok := streamOpen(c, key)
	if !ok {
		return
	}
	if !s.Exists() && a.noMk {
		c.W.Null()
		return
	}
	info := s.Info()
	if info.LastID == codec.MaxStreamID {
		c.Error(errStreamExhausted)
		return
	}
	var id codec.StreamID
	switch {
	case a.idGiven && a.seqGiven:
		id = a.id
	case a.idGiven: // <ms>-*
		if info.LastID.Ms == a.id.Ms {
			if info.LastID.Seq == ^uint64(0) {
				c.Error(errStreamIDTooSmall)
				return
			}
			id = codec.StreamID{Ms: a.id.Ms, Seq: info.LastID.Seq + 1}
		} else {
			id = a.id
		}
	default:
		ms := uint64(c.Tx.Now())
		if ms > info.LastID.Ms {
			id = codec.StreamID{Ms: ms}
		} else {
			id, _ = info.LastID.Next()
		}
	}
	switch err := s.Add(id, c.Args[fieldPos:]); err {
	case nil:
	case datatype.ErrStreamIDTooSmall:
		c.Error(errStreamIDTooSmall)
		return
	case datatype.ErrStreamTooLarge:
		c.Error(errStreamTooLarge)
		return
	default:
		c.typeError(err)
		return
	}
	trimmed := s.Trim(a.TrimArgs)
	s.Save()
	idText := id.AppendText(nil)
	c.W.Bulk(idText)
	rec := make([][]byte, 0, 6+len(c.Args)-fieldPos)
	rec = append(rec, streamXADD, key)
	if trimmed > 0 {
		rec = append(rec, []byte("MAXLEN"), []byte("="), itoa(int64(s.Len())))
	}
	rec = append(rec, idText)
	rec = append(rec, c.Args[fieldPos:]...)
	c.Tx.Log(c.DB, key, rec...)
	c.notify(pubsub.Stream, "xadd", key)
	if trimmed > 0 {
		c.notify(pubsub.Stream, "xtrim", key)
	}
}

// writeStreamEntry writes one entry: [id, [field, value, ...]].
func writeStreamEntry(w *codec.Writer, id codec.StreamID, val []byte) {
	w.ArrayLen(2)
	var buf [48]byte
	w.Bulk(id.AppendText(buf[:0]))
	f, err := codec.NewStreamFields(val)
	if err != nil {
		w.ArrayLen(0)
		return
	}
	w.ArrayLen(2 * f.Len())
	for f.Next() {
		w.Bulk(f.Field)
		w.Bulk(f.Value)
	}
}

// emitStreamEntry is the shard.EmitFunc of streamed ranges: elem is 'e' · id.
func emitStreamEntry(w *codec.Writer, elem, val []byte) {
	writeStreamEntry(w, codec.DecodeStreamID(elem[1:]), val)
}

// xrange is XRANGE key start end [COUNT n] and XREVRANGE key end start [COUNT n].
func xrange(c *Ctx, rev bool) {
	startArg, endArg := c.Args[2], c.Args[3]
	if rev {
		startArg, endArg = endArg, startArg
	}
	start, ok := parseIntervalBound(c, startArg, false)
	if !ok {
		return
	}
	end, ok := parseIntervalBound(c, endArg, true)
	if !ok {
		return
	}
	count := int64(-1)
	for j := 4; j < len(c.Args); j++ {
		if EqualFold(c.Args[j], "count") && j+1 < len(c.Args) {
			n, ok := c.IntArg(j + 1)
			if !ok {
				return
			}
			count = max(n, 0)
			j++
			continue
		}
		c.Error(ErrSyntax)
		return
	}
	s, sok := streamOpen(c, c.Args[1])
	if !sok {
		return
	}
	if !s.Exists() {
		c.W.ArrayLen(0)
		return
	}
	if count == 0 {
		c.W.NullArray()
		return
	}
	limit := ^uint64(0)
	if count > 0 {
		limit = uint64(count)
	}
	if c.streamable(int(min(s.Len(), limit, 1<<40))) {
		if n := s.CountRange(start, end, limit); n > streamAbove {
			c.W.ArrayLen(int(n))
			c.sendStream(s.StreamRange(start, end, rev, int(n), emitStreamEntry))
			return
		}
	}
	streamReplyRange(c, &s, start, end, rev, limit)
}

// streamReplyRange writes the entries in [start, end] as an array, at most limit of them.
func streamReplyRange(c *Ctx, s *datatype.Stream, start, end codec.StreamID, rev bool, limit uint64) {
	at := len(c.W.Buf)
	c.W.ArrayLen(0) // placeholder, rewritten once the count is known
	hdr := len(c.W.Buf)
	var n uint64
	it := s.Range(start, end, rev)
	for ; it.Valid() && n < limit; it.Next() {
		writeStreamEntry(&c.W, it.ID(), it.Value())
		n++
	}
	it.Close()
	body := append([]byte(nil), c.W.Buf[hdr:]...)
	c.W.Buf = c.W.Buf[:at]
	c.W.ArrayLen(int(n))
	c.W.Buf = append(c.W.Buf, body...)
}

// parseIntervalBound parses a range bound of XRANGE, XREVRANGE, XPENDING or XAUTOCLAIM, as
// streamParseIntervalIDOrReply: a missing sequence is 0 for a start and the largest for an
// end, and "(" id (strict) excludes the id, so the bound moves to the next id (a start) or the
// previous one (an end), with Redis's error when there is none. It replies the error.
func parseIntervalBound(c *Ctx, arg []byte, end bool) (codec.StreamID, bool) {
	missingSeq := uint64(0)
	if end {
		missingSeq = ^uint64(0)
	}
	if len(arg) <= 1 || arg[0] != '(' {
		id, _, ok := parseStreamID(c, arg, missingSeq, false, false)
		return id, ok
	}
	id, _, ok := parseStreamID(c, arg[1:], missingSeq, true, false)
	if !ok {
		return id, false
	}
	if end {
		if id, ok = id.Prev(); !ok {
			c.Error("ERR invalid end ID for the interval")
		}
		return id, ok
	}
	if id, ok = id.Next(); !ok {
		c.Error("ERR invalid start ID for the interval")
	}
	return id, ok
}

func xlen(c *Ctx) {
	s, ok := streamOpen(c, c.Args[1])
	if !ok {
		return
	}
	c.W.Int(int64(s.Len()))
}

// xdel is XDEL key id [id ...].
func xdel(c *Ctx) {
	key := c.Args[1]
	s, ok := streamOpen(c, key)
	if !ok {
		return
	}
	if !s.Exists() {
		c.W.Int(0)
		return
	}
	ids := make([]codec.StreamID, 0, len(c.Args)-2)
	for _, arg := range c.Args[2:] {
		id, _, ok := parseStreamID(c, arg, 0, true, false)
		if !ok {
			return
		}
		ids = append(ids, id)
	}
	var deleted int64
	firstGone := false
	for _, id := range ids {
		if s.Delete(id) {
			if id == s.Info().FirstID {
				firstGone = true
			}
			deleted++
		}
	}
	if deleted > 0 {
		if s.Len() == 0 || firstGone {
			s.FixFirstID()
		}
		s.Save()
		rec := append([][]byte{streamXDEL}, c.Args[1:]...)
		c.Tx.Log(c.DB, key, rec...)
		c.notify(pubsub.Stream, "xdel", key)
	}
	c.W.Int(deleted)
}

// xtrim is XTRIM key MAXLEN|MINID [=|~] threshold [LIMIT count].
func xtrim(c *Ctx) {
	a, ok := parseTrimArgs(c, false)
	if !ok {
		return
	}
	key := c.Args[1]
	s, ok := streamOpen(c, key)
	if !ok {
		return
	}
	if !s.Exists() {
		c.W.Int(0)
		return
	}
	deleted := s.Trim(a.TrimArgs)
	switch {
	case deleted > 0:
		s.Save()
		c.Tx.Log(c.DB, key, streamXTRIM, key, []byte("MAXLEN"), []byte("="), itoa(int64(s.Len())))
		c.notify(pubsub.Stream, "xtrim", key)
	case s.RemovedNodes() > 0:
		// Only nodes whose entries were all deleted went: no entry, no event, as in Redis,
		// but the stream changed (its node layout decides later ~ trims), and a replay
		// removes the same nodes with the same trim.
		s.Save()
		c.Tx.Log(c.DB, key, c.Args...)
	}
	c.W.Int(deleted)
}

// xsetid is XSETID key last-id [ENTRIESADDED n] [MAXDELETEDID id].
func xsetid(c *Ctx) {
	id, _, ok := parseStreamID(c, c.Args[2], 0, true, false)
	if !ok {
		return
	}
	entriesAdded := int64(-1)
	var maxDel codec.StreamID
	for i := 3; i < len(c.Args); i += 2 {
		more := len(c.Args) - 1 - i
		switch {
		case EqualFold(c.Args[i], "entriesadded") && more > 0:
			n, ok := c.IntArg(i + 1)
			if !ok {
				return
			}
			if n < 0 {
				c.Error("ERR entries_added must be positive")
				return
			}
			entriesAdded = n
		case EqualFold(c.Args[i], "maxdeletedid") && more > 0:
			md, _, ok := parseStreamID(c, c.Args[i+1], 0, true, false)
			if !ok {
				return
			}
			if id.Compare(md) < 0 {
				c.Error("ERR The ID specified in XSETID is smaller than the provided max_deleted_entry_id")
				return
			}
			maxDel = md
		default:
			c.Error(ErrSyntax)
			return
		}
	}
	key := c.Args[1]
	s, ok := streamOpen(c, key)
	if !ok {
		return
	}
	if !s.Exists() {
		c.Error(errNoKey)
		return
	}
	info := s.Info()
	if s.Len() > 0 {
		top, _ := s.LastEntryID()
		if id.Compare(top) < 0 {
			c.Error("ERR The ID specified in XSETID is smaller than the target stream top item")
			return
		}
		if entriesAdded != -1 && s.Len() > uint64(entriesAdded) {
			c.Error("ERR The entries_added specified in XSETID is smaller than the target stream length")
			return
		}
	}
	info.LastID = id
	if entriesAdded != -1 {
		info.EntriesAdded = uint64(entriesAdded)
	}
	if !maxDel.IsZero() {
		info.MaxDeletedID = maxDel
	}
	s.Save()
	c.Tx.Log(c.DB, key, c.Args...)
	c.W.OK()
	c.notify(pubsub.Stream, "xsetid", key)
}

// XReadKeys finds the keys of XREAD and XREADGROUP as Redis's xreadGetKeys: the first half of
// the arguments after the STREAMS option.
func XReadKeys(args [][]byte) [][]byte {
	pos := -1
loop:
	for i := 1; i < len(args); i++ {
		switch a := args[i]; {
		case EqualFold(a, "block"), EqualFold(a, "count"):
			i++
		case EqualFold(a, "group"):
			i += 2
		case EqualFold(a, "noack"):
		case EqualFold(a, "streams"):
			pos = i
			break loop
		default:
			break loop
		}
	}
	if pos < 0 {
		return nil
	}
	num := len(args) - pos - 1
	if num == 0 || num%2 != 0 {
		return nil
	}
	return args[pos+1 : pos+1+num/2]
}

// xreadDefaultBlockedCount is the COUNT of a blocked XREAD that gave none.
const xreadDefaultBlockedCount = 1000

// xread is XREAD [COUNT n] [BLOCK ms] STREAMS key [key ...] id [id ...].
func xread(c *Ctx) {
	timeout := int64(-1)
	var count int64
	streamsAt := 0
	for i := 1; i < len(c.Args); i++ {
		more := len(c.Args) - i - 1
		o := c.Args[i]
		switch {
		case EqualFold(o, "block") && more > 0:
			if c.Caller != nil {
				c.Error("ERR " + string(c.Args[0]) + " command is not allowed with BLOCK option from scripts")
				return
			}
			i++
			n, ok := codec.ParseInt(c.Args[i])
			if !ok {
				c.Error("ERR timeout is not an integer or out of range")
				return
			}
			if n < 0 {
				c.Error("ERR timeout is negative")
				return
			}
			timeout = n
		case EqualFold(o, "count") && more > 0:
			i++
			n, ok := c.IntArg(i)
			if !ok {
				return
			}
			count = max(n, 0)
		case EqualFold(o, "streams") && more > 0:
			streamsAt = i + 1
			if (len(c.Args)-streamsAt)%2 != 0 {
				c.Error(errXUnbalanced)
				return
			}
			i = len(c.Args)
		case EqualFold(o, "group") && more >= 2:
			c.Error("ERR The GROUP option is only supported by XREADGROUP. You called XREAD instead.")
			return
		case EqualFold(o, "noack"):
			c.Error("ERR The NOACK option is only supported by XREADGROUP. You called XREAD instead.")
			return
		default:
			c.Error(ErrSyntax)
			return
		}
	}
	if streamsAt == 0 {
		c.Error(ErrSyntax)
		return
	}
	n := (len(c.Args) - streamsAt) / 2
	keys, idArgs := c.Args[streamsAt:streamsAt+n], c.Args[streamsAt+n:]
	if c.ReadyKey != nil {
		xreadServe(c)
		return
	}
	ids := make([]codec.StreamID, n)
	streams := make([]datatype.Stream, n)
	for i, key := range keys {
		s, ok := streamOpen(c, key)
		if !ok {
			return
		}
		streams[i] = s
		switch arg := idArgs[i]; {
		case len(arg) == 1 && arg[0] == '$':
			if s.Exists() {
				ids[i] = s.Info().LastID
			}
		case len(arg) == 1 && arg[0] == '>':
			c.Error("ERR The > ID can be specified only when calling XREADGROUP using the GROUP <group> <consumer> option.")
			return
		default:
			id, _, ok := parseStreamID(c, arg, 0, true, false)
			if !ok {
				return
			}
			ids[i] = id
		}
	}
	limit := ^uint64(0)
	if count > 0 {
		limit = uint64(count)
	}
	served := 0
	var body codec.Writer
	body.RESP3 = c.W.RESP3
	for i, key := range keys {
		s := &streams[i]
		// Redis's xreadCommand looks every key up a second time here: its hits and misses
		// (INFO keyspace_*, keymiss events) count twice.
		c.Tx.Meta(c.DB, key)
		if !s.Exists() || s.Len() == 0 {
			continue
		}
		top, ok := s.LastEntryID()
		if !ok || top.Compare(ids[i]) <= 0 {
			continue
		}
		start, _ := ids[i].Next()
		served++
		if !body.RESP3 {
			body.ArrayLen(2)
		}
		body.Bulk(key)
		w := c.W
		c.W = body
		streamReplyRange(c, s, start, codec.MaxStreamID, false, limit)
		body = c.W
		c.W = w
	}
	if served > 0 {
		if c.W.RESP3 {
			c.W.MapLen(served)
		} else {
			c.W.ArrayLen(served)
		}
		c.W.Buf = append(c.W.Buf, body.Buf...)
		return
	}
	if timeout >= 0 && c.Host == nil && !c.InTransaction && c.ReadyKey == nil && c.Tx.NeedShard() {
		return // answered from a view in the event loop: only its shard may block it
	}
	if timeout < 0 || !c.MayBlock() {
		c.W.NullArray()
		return
	}
	// Block, remembering the ids ("$" resolved now) and the COUNT: 1,000 when none was given,
	// as Redis.
	if count == 0 {
		count = xreadDefaultBlockedCount
	}
	st := &xreadBlocked{keys: keys, ids: ids, count: count}
	c.Block = &BlockRequest{Keys: keys, Type: codec.TypeStream, Timeout: timeout, State: st,
		Ready: st.ready}
}

// xreadBlocked is what a blocked XREAD waits for: entries after ids[i] in keys[i].
type xreadBlocked struct {
	keys  [][]byte
	ids   []codec.StreamID
	count int64
}

// after returns the id the reader waits after on key.
func (x *xreadBlocked) after(key []byte) (codec.StreamID, bool) {
	for i, k := range x.keys {
		if string(k) == string(key) {
			return x.ids[i], true
		}
	}
	return codec.StreamID{}, false
}

// ready reports whether the stream key, whose meta is m, serves the reader: its last id is
// above the one it waits after (Redis compares the last id, not the last entry's) and so is
// the last entry added. Redis serves a stream reader when an XADD (or a new key) signals the
// stream, not after XSETID, which signals nothing: here every write of the key is a signal,
// and XSETID moves the last id but adds no entry.
func (x *xreadBlocked) ready(key []byte, m codec.Meta) bool {
	var sm codec.StreamMeta
	if codec.DecodeStreamMeta(m.Value, &sm) != nil {
		return false
	}
	id, ok := x.after(key)
	return ok && sm.LastID.Compare(id) > 0 && sm.Nodes > 0 && sm.TailLast.Compare(id) > 0
}

// xreadServe answers a blocked XREAD served by the executor for the stream ReadyKey, as
// Redis's serveClientsBlockedOnStreamKey: the entries after the id it waited after.
func xreadServe(c *Ctx) {
	key := c.ReadyKey
	st, _ := c.BlockState.(*xreadBlocked)
	var id codec.StreamID
	ok := st != nil
	if ok {
		id, ok = st.after(key)
	}
	if !ok {
		c.W.NullArray()
		return
	}
	count := st.count
	s, sok := streamOpen(c, key)
	if !sok {
		return
	}
	start, _ := id.Next()
	if c.W.RESP3 {
		c.W.MapLen(1)
	} else {
		c.W.ArrayLen(1)
		c.W.ArrayLen(2)
	}
	c.W.Bulk(key)
	limit := ^uint64(0)
	if count > 0 {
		limit = uint64(count)
	}
	streamReplyRange(c, &s, start, codec.MaxStreamID, false, limit)
}

// streamDigest mixes a stream into d as Redis 7.0's xorObjectDigest: each entry's
// "<ms>.<seq>", then its fields and values, in id order. Redis 7.0.15 mixes in nothing of
// the consumer groups; streamGroupsDigest is where a later version's would go.
func streamDigest(c *Ctx, db int, key []byte, m *codec.Meta, d *digest) {
	s, err := datatype.StreamFromMeta(c.Tx, db, key, *m, true)
	if err != nil {
		return
	}
	it := s.Range(codec.MinStreamID, codec.MaxStreamID, false)
	var buf []byte
	for ; it.Valid(); it.Next() {
		id := it.ID()
		buf = strconv.AppendUint(buf[:0], id.Ms, 10)
		buf = append(buf, '.')
		buf = strconv.AppendUint(buf, id.Seq, 10)
		d.mix(buf)
		f, err := codec.NewStreamFields(it.Value())
		if err != nil {
			continue
		}
		for f.Next() {
			d.mix(f.Field)
			d.mix(f.Value)
		}
	}
	it.Close()
	streamGroupsDigest(c, &s, d)
}

// streamGroupsDigest mixes a stream's consumer groups into d: nothing, as in Redis 7.0.15.
func streamGroupsDigest(_ *Ctx, _ *datatype.Stream, _ *digest) {}

// logStream is logCollection for a stream: each entry as XADD with its id, then XSETID with
// the last id, entries added and max deleted id (an empty stream is made by an XADD that
// MAXLEN 0 trims away, as Redis's AOF rewrite does), then the groups (logStreamGroups) and
// the expire. The node layout the replay makes may differ from the source's where entries
// were deleted; the entries and the meta are the same.
func logStream(c *Ctx, db int, dst []byte, m *codec.Meta) {
	s, err := datatype.StreamFromMeta(c.Tx, db, dst, *m, true)
	if err != nil {
		return
	}
	info := *s.Info()
	if s.Len() == 0 {
		first := info.LastID
		if first.IsZero() {
			first = codec.StreamID{Seq: 1}
		}
		c.Tx.Log(db, dst, streamXADD, dst, []byte("MAXLEN"), []byte("0"), first.AppendText(nil), []byte("x"), []byte("y"))
	}
	it := s.Range(codec.MinStreamID, codec.MaxStreamID, false)
	for ; it.Valid(); it.Next() {
		f, err := codec.NewStreamFields(it.Value())
		if err != nil {
			continue
		}
		rec := make([][]byte, 0, 3+2*f.Len())
		rec = append(rec, streamXADD, dst, it.ID().AppendText(nil))
		for f.Next() {
			rec = append(rec, bytes.Clone(f.Field), bytes.Clone(f.Value))
		}
		c.Tx.Log(db, dst, rec...)
	}
	it.Close()
	c.Tx.Log(db, dst, []byte("XSETID"), dst, info.LastID.AppendText(nil),
		[]byte("ENTRIESADDED"), itoa(int64(info.EntriesAdded)),
		[]byte("MAXDELETEDID"), info.MaxDeletedID.AppendText(nil))
	logStreamGroups(c, db, dst, &s)
	if m.Expire != 0 {
		c.Tx.Log(db, dst, []byte("PEXPIREAT"), dst, itoa(m.Expire))
	}
}

// logStreamGroups (streamgroup.go) logs the consumer groups of stream dst for logStream.
