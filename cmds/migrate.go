package cmds

import (
	"bufio"
	"bytes"
	"errors"
	"net"
	"strconv"
	"time"

	"shardis/cmdspec"
	"shardis/codec"
	"shardis/pubsub"
	"shardis/rdbstore"
)

// MIGRATE sends keys to another server (a redis-server or a shardis) as RESTORE commands
// and deletes them here once the target took them. It runs holding no shard (ExecServer, in a
// coordinator goroutine of its own) and in three steps, so that no other client waits on a
// slow target: it holds the keys' shards to read their payloads, releases them, talks to the
// target, then holds them again to delete each key the target acknowledged if it still holds
// what was sent (its payload and expire are unchanged), as docs/COMPATIBILITY.md says. The
// connection is not cached: each MIGRATE connects, SELECTs and closes.

func init() {
	Register(&Command{Name: "migrate", Arity: -6, Flags: []string{"write"},
		ACL: []string{"keyspace", "write", "slow", "dangerous"}, Group: "generic", Since: "2.6.0",
		Summary:    "Atomically transfer a key from a Redis instance to another one.",
		Complexity: "This command actually executes a DUMP+DEL in the source instance, and a RESTORE in the target instance. See the pages of these commands for time complexity. Also an O(N) data transfer between the two instances is performed.",
		Syntax:     `host port <key | ""> destination-db timeout [COPY] [REPLACE] [AUTH password | AUTH2 username password] [KEYS key [key ...]]`,
		Tips:       []string{"nondeterministic_output"},
		KeySpecs: []cmdspec.KeySpec{
			{Flags: cmdspec.RW | cmdspec.Access | cmdspec.Delete, Begin: cmdspec.Index(3), Find: cmdspec.Range(0, 1, 0)},
			{Flags: cmdspec.RW | cmdspec.Access | cmdspec.Delete | cmdspec.Incomplete, Begin: cmdspec.Keyword("KEYS", -2), Find: cmdspec.Range(-1, 1, 0)},
		},
		Keys:   migrateKeys,
		Secret: migrateSecret,
		Exec:   ExecServer, Run: migrateCommand})
}

// migrateKeys returns MIGRATE's keys: those after KEYS, else the key argument.
func migrateKeys(args [][]byte) [][]byte {
	for j := 6; j < len(args); j++ {
		switch {
		case EqualFold(args[j], "keys"):
			return args[j+1:]
		case EqualFold(args[j], "auth"):
			j++
		case EqualFold(args[j], "auth2"):
			j += 2
		}
	}
	if len(args) > 3 && len(args[3]) > 0 {
		return args[3:4]
	}
	return nil
}

// migrateSecret: AUTH's password and AUTH2's username and password are redacted, as Redis does.
func migrateSecret(args [][]byte, i int) bool {
	for j := 6; j < len(args) && j < i; j++ {
		switch {
		case EqualFold(args[j], "keys"):
			return false
		case EqualFold(args[j], "auth"):
			if i == j+1 {
				return true
			}
			j++
		case EqualFold(args[j], "auth2"):
			if i == j+1 || i == j+2 {
				return true
			}
			j += 2
		}
	}
	return false
}

// migrated is one key read for MIGRATE: its payload and expire time as sent.
type migrated struct {
	key      []byte
	payload  []byte
	expireAt int64
}

// errMigrateInTransaction: MIGRATE holds and releases its keys' shards twice around the
// network, which a transaction or a script, running with its shards held, cannot let it do.
const errMigrateInTransaction = "ERR MIGRATE is not allowed inside MULTI/EXEC or scripts in shardis"

func migrateCommand(c *Ctx) {
	if c.InTransaction || c.Tx != nil {
		c.Error(errMigrateInTransaction)
		return
	}
	copyOnly, replace := false, false
	var username, password []byte
	auth := false
	keys := [][]byte{c.Args[3]}
	for j := 6; j < len(c.Args); j++ {
		more := len(c.Args) - 1 - j
		switch a := c.Args[j]; {
		case EqualFold(a, "copy"):
			copyOnly = true
		case EqualFold(a, "replace"):
			replace = true
		case EqualFold(a, "auth"):
			if more < 1 {
				c.Error(ErrSyntax)
				return
			}
			j++
			password, auth = c.Args[j], true
		case EqualFold(a, "auth2"):
			if more < 2 {
				c.Error(ErrSyntax)
				return
			}
			username, password, auth = c.Args[j+1], c.Args[j+2], true
			j += 2
		case EqualFold(a, "keys"):
			if len(c.Args[3]) != 0 {
				c.Error("ERR When using MIGRATE KEYS option, the key argument must be set to the empty string")
				return
			}
			keys = c.Args[j+1:]
			j = len(c.Args)
		default:
			c.Error(ErrSyntax)
			return
		}
	}
	timeout, ok := migrateLong(c, c.Args[5])
	if !ok {
		return
	}
	dbid, ok := migrateLong(c, c.Args[4])
	if !ok {
		return
	}
	if timeout <= 0 {
		timeout = 1000
	}
	items, err := migrateRead(c, keys)
	if err != nil {
		c.Error("ERR " + err.Error())
		return
	}
	if len(items) == 0 {
		c.W.Simple("NOKEY")
		return
	}
	var cmd []byte
	if auth {
		if username != nil {
			cmd = codec.AppendArrayLen(cmd, 3)
			cmd = codec.AppendBulk(cmd, []byte("AUTH"))
			cmd = codec.AppendBulk(cmd, username)
		} else {
			cmd = codec.AppendArrayLen(cmd, 2)
			cmd = codec.AppendBulk(cmd, []byte("AUTH"))
		}
		cmd = codec.AppendBulk(cmd, password)
	}
	cmd = codec.AppendArrayLen(cmd, 2)
	cmd = codec.AppendBulk(cmd, []byte("SELECT"))
	cmd = codec.AppendBulk(cmd, strconv.AppendInt(nil, dbid, 10))
	now := time.Now().UnixMilli()
	sent := items[:0]
	for _, it := range items {
		ttl := int64(0)
		if it.expireAt != 0 {
			if ttl = it.expireAt - now; ttl < 0 {
				continue
			}
			ttl = max(ttl, 1)
		}
		sent = append(sent, it)
		if replace {
			cmd = codec.AppendArrayLen(cmd, 5)
		} else {
			cmd = codec.AppendArrayLen(cmd, 4)
		}
		cmd = codec.AppendBulk(cmd, strRESTORE) // no cluster mode: Redis sends RESTORE
		cmd = codec.AppendBulk(cmd, it.key)
		cmd = codec.AppendBulk(cmd, strconv.AppendInt(nil, ttl, 10))
		cmd = codec.AppendBulk(cmd, it.payload)
		if replace {
			cmd = codec.AppendBulk(cmd, strREPLACE)
		}
	}
	acked, reply := migrateSend(string(c.Args[1]), string(c.Args[2]), time.Duration(timeout)*time.Millisecond, cmd, auth, sent)
	if !copyOnly && len(acked) > 0 {
		if err := migrateDelete(c, acked); err != nil {
			c.Error("ERR " + err.Error())
			return
		}
	}
	if reply != "" {
		c.Error(reply)
		return
	}
	c.W.OK()
}

// migrateLong parses a long argument as Redis's getLongFromObjectOrReply.
func migrateLong(c *Ctx, arg []byte) (int64, bool) {
	v, ok := codec.ParseInt(arg)
	if !ok {
		c.Error(ErrNotInt)
	}
	return v, ok
}

// migrateShards returns the shards owning keys.
func migrateShards(c *Ctx, keys [][]byte) []int {
	st := c.Keyspace.Store
	ids := make([]int, 0, len(keys))
	for _, k := range keys {
		ids = append(ids, st.ShardOf(k))
	}
	return ids
}

// migrateRead holds the keys' shards and reads the payload of each key that exists.
func migrateRead(c *Ctx, keys [][]byte) ([]migrated, error) {
	h := c.Keyspace.Store.Acquire(migrateShards(c, keys))
	tx := h.Tx()
	tx.StartCommand()
	var out []migrated
	var err error
	for _, k := range keys {
		m, ok := tx.Meta(c.DB, k)
		if !ok {
			continue
		}
		p, ok, e := rdbstore.Dump(tx, c.DB, k)
		if e != nil {
			err = e
			break
		}
		if ok {
			out = append(out, migrated{key: k, payload: p, expireAt: m.Expire})
		}
	}
	if e := h.Release(); err == nil {
		err = e
	}
	return out, err
}

// migrateDeleteBatch is how many deletes MIGRATE commits at a time.
const migrateDeleteBatch = 256

// migrateDelete holds the keys' shards again and deletes each acknowledged key that still
// holds what was sent, logging the DEL and signalling it as Redis does.
func migrateDelete(c *Ctx, acked []migrated) error {
	keys := make([][]byte, len(acked))
	for i := range acked {
		keys[i] = acked[i].key
	}
	h := c.Keyspace.Store.Acquire(migrateShards(c, keys))
	tx := h.Tx()
	tx.StartCommand()
	// Compare every key first, then delete: reads after writes in one transaction cost more.
	var err error
	same := make([]bool, len(acked))
	for i, it := range acked {
		m, ok := tx.MetaRead(c.DB, it.key)
		if !ok || m.Expire != it.expireAt {
			continue
		}
		p, ok, e := rdbstore.Dump(tx, c.DB, it.key)
		if e != nil {
			err = e
			break
		}
		same[i] = ok && bytes.Equal(p, it.payload) // changed since it was sent: the newer value stays
	}
	// Deleting a collection walks the transaction's pending writes (shard.Tx.dropData's
	// iterator): commit every migrateDeleteBatch keys so that they stay few.
	done := 0
	for i, it := range acked {
		if err != nil || !same[i] {
			continue
		}
		tx.Delete(c.DB, it.key)
		tx.Log(c.DB, it.key, keysDEL, it.key)
		tx.Notify(uint32(pubsub.Generic), "del", c.DB, it.key)
		if done++; done%migrateDeleteBatch == 0 {
			err = h.Commit()
		}
	}
	if e := h.Release(); err == nil {
		err = e
	}
	return err
}

// migrateSend connects to host:port, writes cmd and reads a reply for AUTH (when auth),
// SELECT and each RESTORE of sent. It returns the keys the target acknowledged and, when
// something went wrong, the error to answer.
func migrateSend(host, port string, timeout time.Duration, cmd []byte, auth bool, sent []migrated) (acked []migrated, reply string) {
	conn, err := net.DialTimeout("tcp", net.JoinHostPort(host, port), timeout)
	if err != nil {
		// Redis connects without blocking and waits for the socket to be writable: a refused
		// connection shows at its first write, only a timeout while connecting.
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			return nil, "IOERR error or timeout connecting to the client"
		}
		return nil, "IOERR error or timeout writing to target instance"
	}
	defer conn.Close()
	for pos := 0; pos < len(cmd); {
		n := min(len(cmd)-pos, 64<<10)
		_ = conn.SetWriteDeadline(time.Now().Add(timeout))
		if _, err := conn.Write(cmd[pos : pos+n]); err != nil {
			return nil, "IOERR error or timeout writing to target instance"
		}
		pos += n
	}
	r := bufio.NewReaderSize(conn, 1024)
	readLine := func() (string, error) {
		_ = conn.SetReadDeadline(time.Now().Add(timeout))
		line, err := r.ReadString('\n')
		if err != nil {
			return "", err
		}
		return string(bytes.TrimRight([]byte(line), "\r\n")), nil
	}
	var authReply, selectReply string
	if auth {
		if authReply, err = readLine(); err != nil {
			return nil, "IOERR error or timeout reading to target instance"
		}
	}
	if selectReply, err = readLine(); err != nil {
		return nil, "IOERR error or timeout reading to target instance"
	}
	for i := range sent {
		line, err := readLine()
		if err != nil {
			if reply == "" {
				reply = "IOERR error or timeout reading to target instance"
			}
			break
		}
		switch {
		case auth && len(authReply) > 0 && authReply[0] == '-':
			line = authReply
		case len(selectReply) > 0 && selectReply[0] == '-':
			line = selectReply
		}
		if len(line) > 0 && line[0] == '-' {
			if reply == "" {
				reply = "ERR Target instance replied with error: " + line[1:]
			}
			continue
		}
		acked = append(acked, sent[i])
	}
	return acked, reply
}
