package replication

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"shardis/executor"
	"shardis/shard"
)

// A shardis replica of a redis-server: the master answers REPLCONF shardis-shards with
// "Unrecognized REPLCONF option", and the link then speaks Redis's replication as a Redis
// replica does: PSYNC, an RDB (length-prefixed or between EOF marks) loaded into the shards,
// then the master's command stream applied unit by unit (a MULTI … EXEC as one commit), with
// the replica's offset counted in bytes of that stream and acknowledged every second. Each
// unit's commit keeps the master's replication id, the offset after the unit and the
// stream's database with the data (stateRedisPosition), so a dropped link, a restart or a
// kill -9 continues with a partial sync.

// redisMaster is what a link knows of a Redis master's stream.
type redisMaster struct {
	active atomic.Bool   // the master is a redis-server (INFO reads it)
	offset atomic.Uint64 // bytes of the stream applied: the replica's replication offset
	// The link's goroutine only:
	replid string
	known  bool // replid and offset name a position the master may continue from
	db     int  // the database the master's last SELECT chose: a partial sync goes on in it
}

// redisSession continues a session's handshake with a Redis master from PSYNC on.
func (l *link) redisSession(conn net.Conn, br *bufio.Reader, call func(args ...string) (string, error)) error {
	r := l.r
	format := r.rdbFormat()
	if format == nil {
		return errors.New("the master is a redis-server and this build cannot load an RDB")
	}
	rm := &l.redis
	rm.active.Store(true)
	if !rm.known {
		// After a restart: where the last unit applied left the stream, kept with the data.
		if err := rm.loadPosition(r.store); err != nil {
			return err
		}
	}
	replid, off := "?", "-1"
	if rm.known {
		replid, off = rm.replid, strconv.FormatUint(rm.offset.Load()+1, 10)
	}
	reply, err := call("PSYNC", replid, off)
	for err == nil && reply == "" {
		// As Redis's replica: the master may send newlines before its reply, to keep the
		// connection alive while it gets ready.
		var line string
		_ = conn.SetReadDeadline(time.Now().Add(l.timeout()))
		line, err = br.ReadString('\n')
		reply = strings.TrimRight(line, "\r\n")
	}
	if err != nil {
		return err
	}
	switch {
	case strings.HasPrefix(reply, "+FULLRESYNC "):
		fields := strings.Fields(reply)
		if len(fields) != 3 {
			return fmt.Errorf("bad FULLRESYNC line %q", reply)
		}
		start, err := strconv.ParseUint(fields[2], 10, 64)
		if err != nil {
			return fmt.Errorf("bad FULLRESYNC line %q", reply)
		}
		log.Printf("Full resync from master: %s:%s", fields[1], fields[2])
		rm.known = false
		if err := l.redisFullSync(conn, br, format, fields[1], start); err != nil {
			return err
		}
		rm.replid, rm.known, rm.db = fields[1], true, 0
		rm.offset.Store(start)
	case strings.HasPrefix(reply, "+CONTINUE"):
		log.Printf("Successful partial resynchronization with master.")
		if id := strings.TrimSpace(strings.TrimPrefix(reply, "+CONTINUE")); id != "" && id != rm.replid {
			rm.replid = id // the master changed history (a failover promoted it): we follow it
			r.srv.SetReplID(id)
		}
	default:
		return fmt.Errorf("master refused PSYNC: %s", reply)
	}
	l.mu.Lock()
	l.up, l.lastIO = true, time.Now()
	l.mu.Unlock()
	r.srv.SetMasterDown(false)
	log.Printf("MASTER <-> REPLICA sync: Master accepted a Partial Resynchronization or finished a full one; link up")
	ackStop := make(chan struct{})
	defer close(ackStop)
	go l.ackEvery(conn, time.Second, ackStop, l.redisAck)
	return l.applyRedis(conn, br)
}

// redisFullSync reads the master's RDB and loads it into every shard: LOADING meanwhile.
func (l *link) redisFullSync(conn net.Conn, br *bufio.Reader, format RDBFormat, replid string, start uint64) error {
	r := l.r
	var head string
	for { // a Redis master sends newlines while it prepares the RDB
		_ = conn.SetReadDeadline(time.Now().Add(l.timeout()))
		line, err := br.ReadString('\n')
		if err != nil {
			return err
		}
		if head = strings.TrimRight(line, "\r\n"); head != "" {
			break
		}
		l.heard()
	}
	var mark string
	var size int64
	switch {
	case strings.HasPrefix(head, "$EOF:") && len(head) == 5+40:
		mark = head[5:]
	case strings.HasPrefix(head, "$"):
		n, err := strconv.ParseInt(head[1:], 10, 64)
		if err != nil || n < 0 {
			return fmt.Errorf("bad RDB bulk header %q", head)
		}
		size = n
	default:
		return fmt.Errorf("master sent %q where the RDB should begin", head)
	}
	l.mu.Lock()
	l.syncing = true
	l.mu.Unlock()
	r.dropReplicas()
	r.srv.BeginSyncLoad()
	defer r.srv.EndSyncLoad()
	loader, err := r.store.StartLoad()
	if err != nil {
		return err
	}
	src := br
	var limited *io.LimitedReader
	if mark == "" {
		limited = &io.LimitedReader{R: br, N: size}
		src = bufio.NewReaderSize(limited, 1<<20)
	}
	_ = conn.SetReadDeadline(time.Time{}) // the deadline moves with each read below
	stopDeadline := l.keepReadDeadline(conn)
	err = format.LoadRDB(src, loader)
	if err == nil && mark != "" {
		tail := make([]byte, len(mark))
		if _, err = io.ReadFull(br, tail); err == nil && string(tail) != mark {
			err = errors.New("the RDB did not end with the EOF mark the master announced")
		}
	}
	if err == nil && limited != nil {
		if _, err = io.Copy(io.Discard, src); err == nil && limited.N != 0 {
			err = io.ErrUnexpectedEOF
		}
	}
	stopDeadline()
	if err == nil {
		for id := range r.store.NumShards() {
			if err = loader.FinishShard(id, 0); err != nil {
				break
			}
		}
	}
	if err != nil {
		loader.Abort()
		l.forgetHistory()
		return fmt.Errorf("loading the master's RDB: %w", err)
	}
	tx := loader.Tx() // the position the stream starts from, with the data
	val := appendRedisPosition(nil, replid, start, 0)
	for _, id := range tx.Shards() {
		tx.PutState(id, stateRedisPosition, val)
	}
	return l.finishFullSync(loader, replid)
}

// keepReadDeadline pushes conn's read deadline repl-timeout ahead every second until the
// returned stop is called: a load that reads steadily never times out, a master that stops
// sending does. The loader reads through bufio, so the deadline cannot move per read.
func (l *link) keepReadDeadline(conn net.Conn) (stop func()) {
	done := make(chan struct{})
	go func() {
		t := time.NewTicker(time.Second)
		defer t.Stop()
		_ = conn.SetReadDeadline(time.Now().Add(l.timeout()))
		for {
			select {
			case <-done:
				return
			case <-t.C:
				_ = conn.SetReadDeadline(time.Now().Add(l.timeout()))
			}
		}
	}()
	return func() { close(done) }
}

// applyRedis reads the master's commands and applies them until an error.
func (l *link) applyRedis(conn net.Conn, br *bufio.Reader) error {
	rm := &l.redis
	rd := respReader{r: br}
	l.pendingMulti = 0 // a MULTI the last session left unfinished is sent again: it never counted
	db := rm.db
	var multi []executor.Propagated
	inMulti := false
	for {
		_ = conn.SetReadDeadline(time.Now().Add(l.timeout()))
		args, n, err := rd.command()
		if err != nil {
			return err
		}
		l.heard()
		name := strings.ToLower(string(args[0]))
		switch {
		case name == "ping":
		case name == "select" && len(args) == 2:
			v, err := strconv.Atoi(string(args[1]))
			if err != nil || v < 0 || v >= l.r.store.Databases() {
				return fmt.Errorf("the master selected database %q", args[1])
			}
			db, rm.db = v, v
		case name == "replconf" && len(args) >= 2 && strings.EqualFold(string(args[1]), "getack"):
			// As Redis: the ACK gives the offset before the GETACK itself.
			if err := l.redisAck(conn); err != nil {
				return err
			}
		case name == "multi":
			inMulti, multi = true, multi[:0]
		case name == "exec" && inMulti:
			inMulti = false
			if err := l.applyPropagated(multi, rm.offset.Load()+l.pendingMulti+uint64(n)); err != nil {
				return err
			}
			multi = multi[:0]
		case inMulti:
			multi = append(multi, executor.Propagated{DB: db, Args: cloneArgs(args)})
		default:
			if err := l.applyPropagated([]executor.Propagated{{DB: db, Args: args}}, rm.offset.Load()+uint64(n)); err != nil {
				return err
			}
		}
		if !inMulti {
			rm.offset.Add(uint64(n) + l.pendingMulti)
			l.pendingMulti = 0
		} else {
			l.pendingMulti += uint64(n) // a unit counts once it is applied
		}
	}
}

func cloneArgs(args [][]byte) [][]byte {
	out := make([][]byte, len(args))
	for i, a := range args {
		out[i] = append([]byte(nil), a...)
	}
	return out
}

// applyPropagated applies one unit and logs what failed, as a Redis replica logs a command of
// its master that replied with an error. The same commit keeps the stream's position after
// the unit (end: its byte offset), so a restarted replica continues from there. A unit that
// cannot commit ends the session: the next one continues from the last unit committed.
func (l *link) applyPropagated(unit []executor.Propagated, end uint64) error {
	rm := &l.redis
	val := appendRedisPosition(nil, rm.replid, end, rm.db)
	replyErrs, err := l.r.exec.ApplyUnit(unit, executor.UnitOptions{
		Stopped: l.stopped,
		Commit: func(tx *shard.Tx) {
			for _, id := range tx.Shards() {
				tx.PutState(id, stateRedisPosition, val)
			}
		},
	})
	for _, e := range replyErrs {
		log.Printf("== CRITICAL == This replica is sending an error to its master: %v", e)
	}
	if err != nil {
		return fmt.Errorf("a command from the master failed to commit: %w", err)
	}
	return nil
}

// stateRedisPosition (per shard, under replication's state prefix): a Redis master's
// replication id, the byte offset after the last unit a commit in this shard applied, and the
// database its stream was in then.
var stateRedisPosition = append(slices.Clone(shard.StateReplication), 'r')

func appendRedisPosition(b []byte, replid string, off uint64, db int) []byte {
	b = binary.AppendUvarint(b, off)
	b = binary.AppendUvarint(b, uint64(db))
	return append(b, replid...)
}

// loadPosition reads the position the last committed unit left: the largest offset any
// shard holds for one replication id.
func (rm *redisMaster) loadPosition(store *shard.Store) error {
	for id := range store.NumShards() {
		err := store.ReadStatePrefix(id, stateRedisPosition, func(name, val []byte) {
			if len(name) != 0 {
				return
			}
			d := decoder{b: val}
			off, db := d.uvarint(), d.uvarint()
			if d.err != nil || len(d.b) == 0 {
				return
			}
			replid := string(d.b)
			if !rm.known || (replid == rm.replid && off > rm.offset.Load()) {
				rm.replid, rm.db, rm.known = replid, int(db), true
				rm.offset.Store(off)
			}
		})
		if err != nil {
			return err
		}
	}
	return nil
}

func (l *link) redisAck(conn net.Conn) error {
	msg := respCommand("REPLCONF", "ACK", strconv.FormatUint(l.redis.offset.Load(), 10))
	l.writeMu.Lock()
	defer l.writeMu.Unlock()
	_ = conn.SetWriteDeadline(time.Now().Add(l.timeout()))
	_, err := conn.Write(msg)
	return err
}

// respReader reads a Redis master's commands: arrays of bulk strings. The arguments it
// returns are valid until the next call.
type respReader struct {
	r    *bufio.Reader
	args [][]byte
	buf  []byte
}

// maxPropagatedArgs and maxPropagatedBulk bound what one command may claim before its bytes
// come (Redis's own limits on a client's input).
const (
	maxPropagatedArgs = 1 << 20
	maxPropagatedBulk = 512 << 20
)

// command reads one command and returns it and how many bytes it took.
func (rd *respReader) command() ([][]byte, int, error) {
	line, n, err := rd.line()
	if err != nil {
		return nil, 0, err
	}
	if len(line) == 0 || line[0] != '*' {
		return nil, 0, fmt.Errorf("the master sent %q where a command should begin", line)
	}
	argc, err := strconv.Atoi(string(line[1:]))
	if err != nil || argc < 1 || argc > maxPropagatedArgs {
		return nil, 0, fmt.Errorf("the master sent a bad array length %q", line)
	}
	rd.args = rd.args[:0]
	if cap(rd.buf) > 4<<20 {
		rd.buf = nil // one big command's buffer is not kept for the small ones after it
	}
	rd.buf = rd.buf[:0]
	type span struct{ from, to int }
	spans := make([]span, 0, argc)
	for range argc {
		head, k, err := rd.line()
		if err != nil {
			return nil, 0, err
		}
		n += k
		if len(head) == 0 || head[0] != '$' {
			return nil, 0, fmt.Errorf("the master sent %q where a bulk string should begin", head)
		}
		size, err := strconv.Atoi(string(head[1:]))
		if err != nil || size < 0 || size > maxPropagatedBulk {
			return nil, 0, fmt.Errorf("the master sent a bad bulk length %q", head)
		}
		from := len(rd.buf)
		rd.buf = append(rd.buf, make([]byte, size+2)...)
		if _, err := io.ReadFull(rd.r, rd.buf[from:]); err != nil {
			return nil, 0, err
		}
		n += size + 2
		rd.buf = rd.buf[:from+size]
		spans = append(spans, span{from, from + size})
	}
	for _, s := range spans {
		rd.args = append(rd.args, rd.buf[s.from:s.to:s.to])
	}
	return rd.args, n, nil
}

// line reads one CRLF-terminated line without its terminator, and its length with it.
func (rd *respReader) line() ([]byte, int, error) {
	line, err := rd.r.ReadSlice('\n')
	if errors.Is(err, bufio.ErrBufferFull) {
		return nil, 0, errors.New("the master sent a protocol line too long")
	}
	if err != nil {
		return nil, 0, err
	}
	n := len(line)
	line = line[:len(line)-1]
	if len(line) > 0 && line[len(line)-1] == '\r' {
		line = line[:len(line)-1]
	}
	return line, n, nil
}
