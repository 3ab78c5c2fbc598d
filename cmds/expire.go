package cmds

import (
	"math"

	"shardis/cmdspec"
	"shardis/pubsub"
)

// Key expiry. Meta.Expire is an absolute unix time in milliseconds (0: none); every write
// is logged as the absolute PEXPIREAT, so a replica or a replay expires the key at the same
// instant whenever it applies the record.

func init() {
	Register(
		&Command{Name: "expire", Arity: -3, Flags: []string{"write", "fast"},
			ACL: []string{"keyspace", "write", "fast"}, Group: "generic",
			Since: "1.0.0", Summary: "Set a key's time to live in seconds", Complexity: "O(1)",
			Syntax:   "key seconds [NX | XX | GT | LT]",
			KeySpecs: []cmdspec.KeySpec{{Flags: cmdspec.RW | cmdspec.Update, Begin: cmdspec.Index(1), Find: cmdspec.Range(0, 1, 0)}},
			Run:      func(c *Ctx) { expireGeneric(c, c.Tx.Now(), true) }},
		&Command{Name: "pexpire", Arity: -3, Flags: []string{"write", "fast"},
			ACL: []string{"keyspace", "write", "fast"}, Group: "generic",
			Since: "2.6.0", Summary: "Set a key's time to live in milliseconds", Complexity: "O(1)",
			Syntax:   "key milliseconds [NX | XX | GT | LT]",
			KeySpecs: []cmdspec.KeySpec{{Flags: cmdspec.RW | cmdspec.Update, Begin: cmdspec.Index(1), Find: cmdspec.Range(0, 1, 0)}},
			Run:      func(c *Ctx) { expireGeneric(c, c.Tx.Now(), false) }},
		&Command{Name: "expireat", Arity: -3, Flags: []string{"write", "fast"},
			ACL: []string{"keyspace", "write", "fast"}, Group: "generic",
			Since: "1.2.0", Summary: "Set the expiration for a key as a UNIX timestamp", Complexity: "O(1)",
			Syntax:   "key unix-time-seconds [NX | XX | GT | LT]",
			KeySpecs: []cmdspec.KeySpec{{Flags: cmdspec.RW | cmdspec.Update, Begin: cmdspec.Index(1), Find: cmdspec.Range(0, 1, 0)}},
			Run:      func(c *Ctx) { expireGeneric(c, 0, true) }},
		&Command{Name: "pexpireat", Arity: -3, Flags: []string{"write", "fast"},
			ACL: []string{"keyspace", "write", "fast"}, Group: "generic",
			Since:      "2.6.0",
			Summary:    "Set the expiration for a key as a UNIX timestamp specified in milliseconds",
			Complexity: "O(1)", Syntax: "key unix-time-milliseconds [NX | XX | GT | LT]",
			KeySpecs: []cmdspec.KeySpec{{Flags: cmdspec.RW | cmdspec.Update, Begin: cmdspec.Index(1), Find: cmdspec.Range(0, 1, 0)}},
			Run:      func(c *Ctx) { expireGeneric(c, 0, false) }},
		&Command{Name: "expiretime", Arity: 2, Flags: []string{"readonly", "fast"},
			ACL: []string{"keyspace", "read", "fast"}, Group: "generic",
			Since: "7.0.0", Summary: "Get the expiration Unix timestamp for a key", Complexity: "O(1)",
			Syntax:   "key",
			KeySpecs: []cmdspec.KeySpec{{Flags: cmdspec.RO | cmdspec.Access, Begin: cmdspec.Index(1), Find: cmdspec.Range(0, 1, 0)}},
			Traits:   TraitNoTouch, Run: func(c *Ctx) { ttlGeneric(c, false, true) }},
		&Command{Name: "pexpiretime", Arity: 2, Flags: []string{"readonly", "fast"},
			ACL: []string{"keyspace", "read", "fast"}, Group: "generic",
			Since: "7.0.0", Summary: "Get the expiration Unix timestamp for a key in milliseconds",
			Complexity: "O(1)", Syntax: "key",
			KeySpecs: []cmdspec.KeySpec{{Flags: cmdspec.RO | cmdspec.Access, Begin: cmdspec.Index(1), Find: cmdspec.Range(0, 1, 0)}},
			Traits:   TraitNoTouch, Run: func(c *Ctx) { ttlGeneric(c, true, true) }},
		&Command{Name: "ttl", Arity: 2, Flags: []string{"readonly", "fast"}, ACL: []string{"keyspace", "read", "fast"},
			Group: "generic", Since: "1.0.0",
			Summary: "Get the time to live for a key in seconds", Complexity: "O(1)", Syntax: "key",
			KeySpecs: []cmdspec.KeySpec{{Flags: cmdspec.RO | cmdspec.Access, Begin: cmdspec.Index(1), Find: cmdspec.Range(0, 1, 0)}},
			Tips:     []string{"nondeterministic_output"}, Traits: TraitNoTouch,
			Run: func(c *Ctx) { ttlGeneric(c, false, false) }},
		&Command{Name: "pttl", Arity: 2, Flags: []string{"readonly", "fast"}, ACL: []string{"keyspace", "read", "fast"},
			Group: "generic", Since: "2.6.0",
			Summary: "Get the time to live for a key in milliseconds", Complexity: "O(1)", Syntax: "key",
			KeySpecs: []cmdspec.KeySpec{{Flags: cmdspec.RO | cmdspec.Access, Begin: cmdspec.Index(1), Find: cmdspec.Range(0, 1, 0)}},
			Tips:     []string{"nondeterministic_output"}, Traits: TraitNoTouch,
			Run: func(c *Ctx) { ttlGeneric(c, true, false) }},
		&Command{Name: "persist", Arity: 2, Flags: []string{"write", "fast"},
			ACL: []string{"keyspace", "write", "fast"}, Group: "generic",
			Since: "2.2.0", Summary: "Remove the expiration from a key", Complexity: "O(1)", Syntax: "key",
			KeySpecs: []cmdspec.KeySpec{{Flags: cmdspec.RW | cmdspec.Update, Begin: cmdspec.Index(1), Find: cmdspec.Range(0, 1, 0)}},
			Run:      persistCommand},
	)
}

// The NX/XX/GT/LT conditions of the EXPIRE family.
const (
	expireNX = 1 << iota
	expireXX
	expireGT
	expireLT
)

var (
	expirePEXPIREAT = []byte("PEXPIREAT")
	expirePERSIST   = []byte("PERSIST")
)

// expireGeneric is EXPIRE, PEXPIRE, EXPIREAT and PEXPIREAT: the time argument (seconds when
// seconds is set) plus base, in unix ms. Checks follow Redis 7.0's order: options, the number,
// overflow, then the key.
func expireGeneric(c *Ctx, base int64, seconds bool) {
	key := c.Args[1]
	var flags int
	for _, opt := range c.Args[3:] {
		switch {
		case EqualFold(opt, "nx"):
			flags |= expireNX
		case EqualFold(opt, "xx"):
			flags |= expireXX
		case EqualFold(opt, "gt"):
			flags |= expireGT
		case EqualFold(opt, "lt"):
			flags |= expireLT
		default:
			c.Error("ERR Unsupported option " + string(opt))
			return
		}
	}
	if flags&expireNX != 0 && flags&(expireXX|expireGT|expireLT) != 0 {
		c.Error("ERR NX and XX, GT or LT options at the same time are not compatible")
		return
	}
	if flags&expireGT != 0 && flags&expireLT != 0 {
		c.Error("ERR GT and LT options at the same time are not compatible")
		return
	}
	when, ok := c.IntArg(2)
	if !ok {
		return
	}
	invalid := "ERR invalid expire time in '" + c.Cmd.Name + "' command"
	if seconds {
		if when > math.MaxInt64/1000 || when < math.MinInt64/1000 {
			c.Error(invalid)
			return
		}
		when *= 1000
	}
	if when > math.MaxInt64-base {
		c.Error(invalid)
		return
	}
	when += base

	m, ok := c.Tx.Meta(c.DB, key)
	if !ok {
		c.W.Int(0)
		return
	}
	if !expireConditionHolds(flags, m.Expire, when) {
		c.W.Int(0)
		return
	}
	if when <= c.Tx.Now() {
		// Redis 7 deletes a key whose new expire time has already passed, and says 1.
		c.Tx.Delete(c.DB, key)
		c.Tx.Log(c.DB, key, keysDEL, key)
		c.notify(pubsub.Generic, "del", key)
		c.W.Int(1)
		return
	}
	m.Expire = when
	c.Tx.SetMeta(c.DB, key, &m)
	c.Tx.Log(c.DB, key, expirePEXPIREAT, key, itoa(when))
	c.W.Int(1) // Redis replies before it notifies here (and after, for the DEL above)
	c.notify(pubsub.Generic, "expire", key)
}

// expireConditionHolds applies NX/XX/GT/LT to a key whose current expire is cur (0: none,
// which GT and LT treat as an infinite TTL) and the new time when.
func expireConditionHolds(flags int, cur, when int64) bool {
	switch {
	case flags&expireNX != 0 && cur != 0:
		return false
	case flags&expireXX != 0 && cur == 0:
		return false
	case flags&expireGT != 0 && (cur == 0 || when <= cur):
		return false
	case flags&expireLT != 0 && cur != 0 && when >= cur:
		return false
	}
	return true
}

// ttlGeneric is TTL, PTTL (relative) and EXPIRETIME, PEXPIRETIME (abs): -2 for a missing
// key, -1 for one without expiry; seconds are rounded as Redis does.
func ttlGeneric(c *Ctx, ms, abs bool) {
	m, ok := c.Tx.Meta(c.DB, c.Args[1])
	if !ok {
		c.W.Int(-2)
		return
	}
	if m.Expire == 0 {
		c.W.Int(-1)
		return
	}
	t := m.Expire
	if !abs {
		t = max(m.Expire-c.Tx.Now(), 0)
	}
	if !ms {
		// t >= 0; unsigned so that an expire near the int64 limit rounds as Redis's build
		// does instead of wrapping negative.
		t = int64((uint64(t) + 500) / 1000)
	}
	c.W.Int(t)
}

func persistCommand(c *Ctx) {
	key := c.Args[1]
	m, ok := c.Tx.Meta(c.DB, key)
	if !ok || m.Expire == 0 {
		c.W.Int(0)
		return
	}
	m.Expire = 0
	c.Tx.SetMeta(c.DB, key, &m)
	c.Tx.Log(c.DB, key, expirePERSIST, key)
	c.notify(pubsub.Generic, "persist", key)
	c.W.Int(1)
}
