package cmds

import (
	"shardis/cmdspec"
	"shardis/codec"
	"shardis/datatype"
	"shardis/pubsub"
)

// HyperLogLogs are strings holding Redis's representation (datatype/hyperloglog.go), so GET,
// SET and DUMP of one see redis-server's bytes.

func init() {
	Register(
		&Command{Name: "pfadd", Arity: -2, Flags: []string{"write", "denyoom", "fast"},
			ACL: []string{"write", "hyperloglog", "fast"}, Group: "hyperloglog", Since: "2.8.9",
			Summary:    "Adds the specified elements to the specified HyperLogLog.",
			Complexity: "O(1) to add every element.", Syntax: "key [element [element ...]]",
			KeySpecs: []cmdspec.KeySpec{{Flags: cmdspec.RW | cmdspec.Insert, Begin: cmdspec.Index(1), Find: cmdspec.Range(0, 1, 0)}},
			Run:      pfadd},
		&Command{Name: "pfcount", Arity: -2, Flags: []string{"readonly", "may_replicate"},
			ACL: []string{"read", "hyperloglog", "slow"}, Group: "hyperloglog", Since: "2.8.9",
			Summary:    "Return the approximated cardinality of the set(s) observed by the HyperLogLog at key(s).",
			Complexity: "O(1) with a very small average constant time when called with a single key. O(N) with N being the number of keys, and much bigger constant times, when called with multiple keys.",
			Syntax:     "key [key ...]",
			KeySpecs: []cmdspec.KeySpec{{Flags: cmdspec.RW | cmdspec.Access,
				Notes: "RW because it may change the internal representation of the key, and propagate to replicas",
				Begin: cmdspec.Index(1), Find: cmdspec.Range(-1, 1, 0)}},
			Run: pfcount},
		&Command{Name: "pfmerge", Arity: -2, Flags: []string{"write", "denyoom"},
			ACL: []string{"write", "hyperloglog", "slow"}, Group: "hyperloglog", Since: "2.8.9",
			Summary:    "Merge N different HyperLogLogs into a single one.",
			Complexity: "O(N) to merge N HyperLogLogs, but with high constant times.",
			Syntax:     "destkey sourcekey [sourcekey ...]",
			KeySpecs: []cmdspec.KeySpec{
				{Flags: cmdspec.RW | cmdspec.Access | cmdspec.Insert, Begin: cmdspec.Index(1), Find: cmdspec.Range(0, 1, 0)},
				{Flags: cmdspec.RO | cmdspec.Access, Begin: cmdspec.Index(2), Find: cmdspec.Range(-1, 1, 0)},
			},
			Run: pfmerge},
		&Command{Name: "pfdebug", Arity: 3, Flags: []string{"write", "denyoom", "admin"},
			ACL: []string{"write", "hyperloglog", "admin", "slow", "dangerous"}, Group: "hyperloglog",
			Since: "2.8.9", Summary: "Internal commands for debugging HyperLogLog values",
			Complexity: "N/A", DocFlags: []string{"syscmd"}, Syntax: "subcommand key",
			KeySpecs: []cmdspec.KeySpec{{Flags: cmdspec.RW | cmdspec.Access, Begin: cmdspec.Index(2), Find: cmdspec.Range(0, 1, 0)}},
			Run:      pfdebug},
		&Command{Name: "pfselftest", Arity: 1, Flags: []string{"admin"},
			ACL: []string{"hyperloglog", "admin", "slow", "dangerous"}, Group: "hyperloglog",
			Since: "2.8.9", Summary: "An internal command for testing HyperLogLog values",
			Complexity: "N/A", DocFlags: []string{"syscmd"}, Exec: ExecServer, Run: pfselftest},
	)
}

const (
	errHLLWrongType = "WRONGTYPE Key is not a valid HyperLogLog string value."
	errHLLCorrupt   = "INVALIDOBJ Corrupted HLL object detected"
	hllSparseMaxDef = 3000 // hll-sparse-max-bytes's default
)

var (
	strPFADD = []byte("PFADD")
	hllZero  = []byte("0")
	hllEight = []byte("8")
)

// hllSparseMax is hll-sparse-max-bytes.
func hllSparseMax(c *Ctx) int64 {
	if c.Keyspace != nil && c.Keyspace.HLLSparseMaxBytes != nil {
		return c.Keyspace.HLLSparseMaxBytes()
	}
	return hllSparseMaxDef
}

// hllOpen opens the HLL at key from its meta (found false: missing), replying Redis's error
// when the key holds another type or a string that is not an HLL. A missing key gives ok and
// a nil value.
func (c *Ctx) hllOpen(key []byte, m codec.Meta, found bool) (s datatype.String, val []byte, ok bool) {
	s, err := datatype.StringFromMeta(c.Tx, c.DB, key, m, found)
	if err != nil {
		c.typeError(err)
		return s, nil, false
	}
	if !s.Exists() {
		return s, nil, true
	}
	if val = s.Value(); !datatype.IsHLL(val) {
		c.Error(errHLLWrongType)
		return s, nil, false
	}
	return s, val, true
}

// hllStore puts the HLL b at key and logs it whole: a sparse HLL's bytes depend on
// hll-sparse-max-bytes, which a replay may not share. A SETRANGE that changes nothing makes
// the replayed value raw too (OBJECT ENCODING says raw for an HLL, as in Redis).
func (c *Ctx) hllStore(s *datatype.String, key, b []byte) {
	s.PutHLL(b)
	c.Tx.Log(c.DB, key, strSET, key, b, strKEEPTTL)
	c.Tx.Log(c.DB, key, strSETRANGE, key, hllZero, b[:1])
}

// hllUnshare makes the HLL val at key raw, as Redis's dbUnshareStringValue does when a PF
// command that may change it opens it: a short value SET made (embstr to OBJECT ENCODING)
// turns raw even when nothing else changes.
func (c *Ctx) hllUnshare(s *datatype.String, key, val []byte) {
	if !s.Raw() && len(val) <= 44 {
		s.PutHLL(val)
		c.Tx.Log(c.DB, key, strSETRANGE, key, hllZero, val[:1])
	}
}

func pfadd(c *Ctx) {
	key := c.Args[1]
	m, found := c.Tx.Meta(c.DB, key)
	s, old, ok := c.hllOpen(key, m, found)
	if !ok {
		return
	}
	var b []byte
	updated := 0
	if old == nil {
		b = datatype.NewHLL()
		updated++
	} else {
		c.hllUnshare(&s, key, old)
		if datatype.HLLEncoding(old) == datatype.HLLDense && datatype.HLLDenseAddsNothing(old, c.Args[2:]) {
			c.W.Int(0) // the common case of a big HLL: no copy, no write
			return
		}
		b = datatype.HLLClone(old)
	}
	wasDense := old != nil && datatype.HLLEncoding(old) == datatype.HLLDense
	maxBytes := hllSparseMax(c)
	for _, elem := range c.Args[2:] {
		var r int
		b, r = datatype.HLLAdd(b, elem, maxBytes)
		if r < 0 {
			// Registers set before the corrupt part stay set, as in Redis, silently.
			if updated > 0 {
				c.hllStore(&s, key, b)
			}
			c.Error(errHLLCorrupt)
			return
		}
		updated += r
	}
	if updated == 0 {
		c.W.Int(0)
		return
	}
	datatype.HLLInvalidate(b)
	if wasDense {
		// A dense HLL changes the same way whatever the configuration: the command is its
		// effect, and a much smaller record than the 12 KB value.
		s.PutHLL(b)
		c.Tx.Log(c.DB, key, append([][]byte{strPFADD}, c.Args[1:]...)...)
	} else {
		c.hllStore(&s, key, b)
	}
	c.notify(pubsub.String, "pfadd", key)
	c.W.Int(1)
}

func pfcount(c *Ctx) {
	if len(c.Args) > 2 {
		// The cardinality of the union; nothing is written.
		var max [datatype.HLLRegisters]uint8
		for _, key := range c.Args[1:] {
			m, found := c.Tx.MetaRead(c.DB, key)
			_, val, ok := c.hllOpen(key, m, found)
			if !ok {
				return
			}
			if val != nil && datatype.HLLMerge(&max, val) != nil {
				c.Error(errHLLCorrupt)
				return
			}
		}
		c.W.Int(int64(datatype.HLLCountRegisters(&max)))
		return
	}
	key := c.Args[1]
	m, found := c.Tx.MetaRead(c.DB, key)
	s, val, ok := c.hllOpen(key, m, found)
	if !ok {
		return
	}
	if val == nil {
		c.W.Int(0)
		return
	}
	c.hllUnshare(&s, key, val)
	if n, valid := datatype.HLLCached(val); valid {
		c.W.Int(int64(n))
		return
	}
	n, err := datatype.HLLCount(val)
	if err != nil {
		c.Error(errHLLCorrupt)
		return
	}
	// The cache is part of the value: Redis writes it (and propagates the change).
	b := datatype.HLLClone(val)
	datatype.HLLSetCached(b, n)
	s.PutHLL(b)
	c.Tx.Log(c.DB, key, strSETRANGE, key, hllEight, b[8:16])
	c.W.Int(int64(n))
}

func pfmerge(c *Ctx) {
	var max [datatype.HLLRegisters]uint8
	dense := false
	var dst []byte
	var ds datatype.String
	for i, key := range c.Args[1:] {
		m, found := c.Tx.MetaRead(c.DB, key)
		s, val, ok := c.hllOpen(key, m, found)
		if !ok {
			return
		}
		if i == 0 {
			ds, dst = s, val
		}
		if val == nil {
			continue
		}
		dense = dense || datatype.HLLEncoding(val) == datatype.HLLDense
		if datatype.HLLMerge(&max, val) != nil {
			c.Error(errHLLCorrupt)
			return
		}
	}
	key := c.Args[1]
	if dst == nil {
		dst = datatype.NewHLL()
	} else {
		dst = datatype.HLLClone(dst)
	}
	dst, err := datatype.HLLStoreMax(dst, &max, dense, hllSparseMax(c))
	if err != nil {
		c.Error(errHLLCorrupt)
		return
	}
	c.hllStore(&ds, key, dst)
	// Redis reports a merge as "pfadd": in effect it adds elements.
	c.notify(pubsub.String, "pfadd", key)
	c.W.OK()
}

func pfdebug(c *Ctx) {
	sub, key := c.Args[1], c.Args[2]
	m, found := c.Tx.Meta(c.DB, key)
	if !found {
		c.Error("ERR The specified key does not exist")
		return
	}
	s, val, ok := c.hllOpen(key, m, found)
	if !ok {
		return
	}
	c.hllUnshare(&s, key, val)
	sparse := datatype.HLLEncoding(val) == datatype.HLLSparse
	switch {
	case EqualFold(sub, "getreg"):
		if sparse {
			if val = c.hllToDense(&s, key, val); val == nil {
				return
			}
		}
		regs := datatype.HLLRegisterValues(val)
		c.W.ArrayLen(len(regs))
		for _, r := range regs {
			c.W.Int(int64(r))
		}
	case EqualFold(sub, "decode"):
		if !sparse {
			c.Error("ERR HLL encoding is not sparse")
			return
		}
		c.W.BulkString(datatype.HLLDecode(val))
	case EqualFold(sub, "encoding"):
		if sparse {
			c.W.Simple("sparse")
		} else {
			c.W.Simple("dense")
		}
	case EqualFold(sub, "todense"):
		if sparse {
			if c.hllToDense(&s, key, val) == nil {
				return
			}
			c.W.Int(1)
		} else {
			c.W.Int(0)
		}
	default:
		c.Error("ERR Unknown PFDEBUG subcommand '" + truncate(sub, len(sub)) + "'")
	}
}

// hllToDense stores the dense form of the sparse HLL val at key and returns it, or replies
// Redis's error and returns nil when val is corrupt.
func (c *Ctx) hllToDense(s *datatype.String, key, val []byte) []byte {
	d, err := datatype.HLLToDense(val)
	if err != nil {
		c.Error(errHLLCorrupt)
		return nil
	}
	c.hllStore(s, key, d)
	return d
}

func pfselftest(c *Ctx) {
	if msg := datatype.HLLSelfTest(hllSparseMax(c)); msg != "" {
		c.Error("ERR " + msg)
		return
	}
	c.W.OK()
}
