package cmds

import (
	"log"
	"strconv"

	"shardis/cmdspec"
	"shardis/pubsub"
	"shardis/rdbstore"
)

// DUMP, RESTORE, RESTORE-ASKING and MIGRATE: keys as Redis's DUMP payloads (package rdbstore
// over package rdb). MIGRATE's network part is in migrate.go.

const restoreComplexity = "O(1) to create the new key and additional O(N*M) to reconstruct the serialized value, where N is the number of Redis objects composing the value and M their average size. For small string values the time complexity is thus O(1)+O(1*M) where M is small, so simply O(1). However for sorted set values the complexity is O(N*M*log(N)) because inserting values into sorted sets is O(log(N))."

const restoreSyntax = "key ttl serialized-value [REPLACE] [ABSTTL] [IDLETIME seconds] [FREQ frequency]"

func init() {
	Register(
		&Command{Name: "dump", Arity: 2, Flags: []string{"readonly"}, ACL: []string{"keyspace", "read", "slow"},
			Group: "generic", Since: "2.6.0",
			Summary:    "Return a serialized version of the value stored at the specified key.",
			Complexity: "O(1) to access the key and additional O(N*M) to serialize it, where N is the number of Redis objects composing the value and M their average size. For small string values the time complexity is thus O(1)+O(1*M) where M is small, so simply O(1).",
			Syntax:     "key", Tips: []string{"nondeterministic_output"},
			KeySpecs: []cmdspec.KeySpec{{Flags: cmdspec.RO | cmdspec.Access, Begin: cmdspec.Index(1), Find: cmdspec.Range(0, 1, 0)}},
			Run:      dumpCommand},
		&Command{Name: "restore", Arity: -4, Flags: []string{"write", "denyoom"},
			ACL: []string{"keyspace", "write", "slow", "dangerous"}, Group: "generic", Since: "2.6.0",
			Summary:    "Create a key using the provided serialized value, previously obtained using DUMP.",
			Complexity: restoreComplexity, Syntax: restoreSyntax,
			KeySpecs: []cmdspec.KeySpec{{Flags: cmdspec.OW | cmdspec.Update, Begin: cmdspec.Index(1), Find: cmdspec.Range(0, 1, 0)}},
			Run:      restoreCommand},
		&Command{Name: "restore-asking", Arity: -4, Flags: []string{"write", "denyoom", "asking"},
			ACL: []string{"keyspace", "write", "slow", "dangerous"}, Group: "server", Since: "3.0.0",
			Summary:    "An internal command for migrating keys in a cluster",
			Complexity: restoreComplexity, Syntax: restoreSyntax, DocFlags: []string{"syscmd"},
			KeySpecs: []cmdspec.KeySpec{{Flags: cmdspec.OW | cmdspec.Update, Begin: cmdspec.Index(1), Find: cmdspec.Range(0, 1, 0)}},
			Run:      restoreCommand},
	)
}

func dumpCommand(c *Ctx) {
	payload, ok, err := rdbstore.Dump(c.Tx, c.DB, c.Args[1])
	switch {
	case err != nil:
		log.Printf("DUMP: %v", err)
		c.Error("ERR " + err.Error())
	case !ok:
		c.W.Null()
	default:
		c.W.Bulk(payload)
	}
}

var (
	strRESTORE = []byte("RESTORE")
	strABSTTL  = []byte("ABSTTL")
	strREPLACE = []byte("REPLACE")
)

// restoreCommand is RESTORE and RESTORE-ASKING, in Redis's order of checks: options, an
// existing key, the TTL, the payload's version and checksum, its contents. It is logged as
// RESTORE with the absolute expire time and REPLACE, so a replay or a replica builds the
// same key from the same payload.
func restoreCommand(c *Ctx) {
	key := c.Args[1]
	replace, absttl := false, false
	idle, freq := int64(-1), int64(-1)
	for j := 4; j < len(c.Args); j++ {
		more := len(c.Args) - j - 1
		switch a := c.Args[j]; {
		case EqualFold(a, "replace"):
			replace = true
		case EqualFold(a, "absttl"):
			absttl = true
		case EqualFold(a, "idletime") && more >= 1 && freq == -1:
			v, ok := c.IntArg(j + 1)
			if !ok {
				return
			}
			if v < 0 {
				c.Error("ERR Invalid IDLETIME value, must be >= 0")
				return
			}
			idle = v
			j++
		case EqualFold(a, "freq") && more >= 1 && idle == -1:
			v, ok := c.IntArg(j + 1)
			if !ok {
				return
			}
			if v < 0 || v > 255 {
				c.Error("ERR Invalid FREQ value, must be >= 0 and <= 255")
				return
			}
			freq = v
			j++
		default:
			c.Error(ErrSyntax)
			return
		}
	}
	if !replace {
		if _, exists := c.Tx.Meta(c.DB, key); exists {
			c.Error("BUSYKEY Target key name already exists.")
			return
		}
	}
	ttl, ok := c.IntArg(2)
	if !ok {
		return
	}
	if ttl < 0 {
		c.Error("ERR Invalid TTL value, must be >= 0")
		return
	}
	payload := c.Args[3]
	if err := rdbstore.CheckPayload(payload); err != nil {
		c.Error(restoreError(err))
		return
	}
	deleted := replace && c.Tx.Delete(c.DB, key)
	if ttl != 0 && !absttl {
		ttl += c.Tx.Now()
	}
	if ttl != 0 && ttl <= c.Tx.Now() && c.Client != nil {
		// Already expired (a replay or a replica keeps it until the DEL that follows).
		if deleted {
			c.Tx.Log(c.DB, key, keysDEL, key)
			c.notify(pubsub.Generic, "del", key)
		}
		c.W.OK()
		return
	}
	err := rdbstore.BuildPayload(c.Tx, c.DB, key, payload, rdbstore.RestoreOptions{ExpireAt: ttl, Idle: idle, Freq: int(freq)})
	if err != nil { // the payload passed CheckPayload: only storage can fail here
		c.Tx.Fail(err)
		c.Error(restoreError(err))
		return
	}
	c.Tx.Log(c.DB, key, strRESTORE, key, strconv.AppendInt(nil, ttl, 10), payload, strABSTTL, strREPLACE)
	c.notify(pubsub.Generic, "restore", key)
	c.W.OK()
}

func restoreError(err error) string {
	if rdbstore.IsBadPayload(err) {
		return "ERR DUMP payload version or checksum are wrong"
	}
	return "ERR Bad data format"
}
