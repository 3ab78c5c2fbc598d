package crashtest

import (
	"context"
	"crypto/sha1"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"shardis/codec"
	"shardis/config"
	"shardis/datatype"
	"shardis/executor"
	"shardis/internal/testserver"
	"shardis/server"
	"shardis/shard"
)

// replayWorkload sends a deterministic random stream of string, keyspace and expiry commands:
// cross-shard MSET and RENAME, SWAPDB, FLUSHDB, MOVE, relative and absolute expiries (future
// ones far enough not to fall due during the test, and past ones that delete), INCRBYFLOAT,
// SETRANGE, APPEND, keys sharing hash tags. Commands the server does not have yet are dropped
// from the stream the first time they are refused as unknown.
type replayWorkload struct {
	rng     *rand.Rand
	keys    []string
	dbs     int // databases the stream selects (1 when SELECT is not in the server)
	now     int64
	missing map[string]bool
	counts  map[string]int
}

func newReplayWorkload(seed uint64) *replayWorkload {
	w := &replayWorkload{rng: rand.New(rand.NewPCG(seed, 7)), missing: map[string]bool{}, counts: map[string]int{},
		now: time.Now().UnixMilli()}
	for i := range 12 {
		w.keys = append(w.keys, fmt.Sprintf("k%d", i))
	}
	w.keys = append(w.keys, "{t}a", "{t}b", "{t}c", "{u}a", "{u}b", "n0", "n1", "f0", "")
	return w
}

func (w *replayWorkload) key() string { return w.keys[w.rng.IntN(len(w.keys))] }

func (w *replayWorkload) value() string {
	switch w.rng.IntN(8) {
	case 0:
		return strconv.Itoa(w.rng.IntN(2000) - 1000)
	case 1:
		return strconv.FormatFloat(w.rng.Float64()*100-50, 'f', 3, 64)
	case 2:
		return ""
	case 3:
		return "hello world"
	default:
		b := make([]byte, 1+w.rng.IntN(20))
		for i := range b {
			b[i] = byte('a' + w.rng.IntN(26))
		}
		return string(b)
	}
}

// future returns a relative TTL in seconds that cannot fall due during the test.
func (w *replayWorkload) future() int { return 200 + w.rng.IntN(10000) }

// at returns an absolute unix ms: usually far ahead, sometimes in the past (the key goes).
func (w *replayWorkload) at() int64 {
	if w.rng.IntN(6) == 0 {
		return w.now - int64(1+w.rng.IntN(100000))
	}
	return w.now + int64(w.future())*1000 + int64(w.rng.IntN(1000))
}

func pick(rng *rand.Rand, opts ...string) string { return opts[rng.IntN(len(opts))] }

// next returns the next command.
func (w *replayWorkload) next() []any {
	r := w.rng
	k := w.key()
	switch n := r.IntN(100); {
	case n < 14:
		args := []any{"SET", k, w.value()}
		if r.IntN(4) == 0 {
			args = append(args, pick(r, "NX", "XX"))
		}
		if r.IntN(5) == 0 {
			args = append(args, "GET")
		}
		switch r.IntN(7) {
		case 0:
			args = append(args, "EX", w.future())
		case 1:
			args = append(args, "PX", w.future()*1000+r.IntN(1000))
		case 2:
			args = append(args, "EXAT", w.at()/1000)
		case 3:
			args = append(args, "PXAT", w.at())
		case 4:
			args = append(args, "KEEPTTL")
		}
		return args
	case n < 17:
		return []any{"SETEX", k, w.future(), w.value()}
	case n < 19:
		return []any{"PSETEX", k, w.future() * 1000, w.value()}
	case n < 21:
		return []any{"SETNX", k, w.value()}
	case n < 23:
		return []any{"GETSET", k, w.value()}
	case n < 25:
		return []any{"GETDEL", k}
	case n < 28:
		switch r.IntN(5) {
		case 0:
			return []any{"GETEX", k, "EX", w.future()}
		case 1:
			return []any{"GETEX", k, "PXAT", w.at()}
		case 2:
			return []any{"GETEX", k, "PERSIST"}
		case 3:
			return []any{"GETEX", k, "PX", w.future() * 1000}
		}
		return []any{"GETEX", k, "EXAT", w.at() / 1000}
	case n < 33:
		args := []any{pick(r, "MSET", "MSET", "MSETNX")}
		for range 1 + r.IntN(4) {
			args = append(args, w.key(), w.value())
		}
		return args
	case n < 37:
		return []any{"APPEND", k, w.value()}
	case n < 40:
		return []any{"SETRANGE", k, r.IntN(30), w.value()}
	case n < 46:
		return []any{pick(r, "INCR", "DECR"), pick(r, "n0", "n1", k)}
	case n < 49:
		return []any{pick(r, "INCRBY", "DECRBY"), pick(r, "n0", "n1", k), r.IntN(200) - 100}
	case n < 53:
		return []any{"INCRBYFLOAT", pick(r, "f0", "n0", k), pick(r, "1.5", "-0.25", "3e2", "0.1", "-7")}
	case n < 58:
		args := []any{pick(r, "DEL", "UNLINK")}
		for range 1 + r.IntN(3) {
			args = append(args, w.key())
		}
		return args
	case n < 63:
		return []any{pick(r, "RENAME", "RENAME", "RENAMENX"), k, w.key()}
	case n < 66:
		args := []any{"COPY", k, w.key()}
		if w.dbs > 1 && r.IntN(2) == 0 {
			args = append(args, "DB", r.IntN(w.dbs))
		}
		if r.IntN(2) == 0 {
			args = append(args, "REPLACE")
		}
		return args
	case n < 69 && w.dbs > 1:
		return []any{"MOVE", k, r.IntN(w.dbs)}
	case n < 70 && w.dbs > 1:
		return []any{"SWAPDB", r.IntN(w.dbs), r.IntN(w.dbs)}
	case n < 71 && r.IntN(3) == 0:
		return []any{"FLUSHDB"}
	case n < 78:
		args := []any{pick(r, "EXPIRE", "PEXPIRE"), k, 0}
		if args[0] == "EXPIRE" {
			args[2] = w.future()
		} else {
			args[2] = w.future() * 1000
		}
		if r.IntN(10) == 0 {
			args[2] = -1 // a non-positive TTL deletes the key
		}
		if r.IntN(3) == 0 {
			args = append(args, pick(r, "NX", "XX", "GT", "LT"))
		}
		return args
	case n < 83:
		at := w.at()
		if r.IntN(2) == 0 {
			return []any{"EXPIREAT", k, at / 1000}
		}
		return []any{"PEXPIREAT", k, at}
	case n < 86:
		return []any{"PERSIST", k}
	case n < 89: // bitmaps past 4 KiB are fragmented strings
		return []any{"SETBIT", k, r.IntN(8 * 40000), r.IntN(2)}
	case n < 91:
		return []any{"SETRANGE", k, r.IntN(40000), w.value()}
	case n < 92:
		return []any{"BITOP", pick(r, "AND", "OR", "XOR"), k, w.key(), w.key()}
	case n < 93:
		return []any{"BITFIELD", k, "INCRBY", "u8", "#" + strconv.Itoa(r.IntN(20000)), r.IntN(300)}
	}
	return []any{"GET", k}
}

// run sends ops commands spread over the clients (one per database).
func (w *replayWorkload) run(t *testing.T, clients []*redis.Client, ops int) {
	t.Helper()
	ctx := context.Background()
	for range ops {
		args := w.next()
		name := args[0].(string)
		if w.missing[name] {
			continue
		}
		err := clients[w.rng.IntN(len(clients))].Do(ctx, args...).Err()
		var rerr redis.Error
		switch {
		case isUnknownCommand(err):
			w.missing[name] = true
		case err == nil || err == redis.Nil || errors.As(err, &rerr):
			w.counts[name]++ // an error reply is part of the workload (WRONGTYPE, not an integer, …)
		default:
			t.Fatalf("%v: %v", args, err)
		}
	}
}

// dumpStore returns every live key of every database and shard as "db/key" -> "type|expire|value".
func dumpStore(t *testing.T, st *shard.Store) map[string]string {
	t.Helper()
	out := map[string]string{}
	for id := range st.NumShards() {
		if err := st.Do(id, func(tx *shard.Tx) {
			for db := range st.Databases() {
				tx.ScanKeys(id, db, nil, func(key []byte, m *codec.Meta) bool {
					v := fmt.Sprintf("%s|%d|", m.Type, m.Expire)
					if m.Type == codec.TypeString && m.Frag {
						s, _ := datatype.StringFromMeta(tx, db, key, *m, true)
						v += fmt.Sprintf("fragmented %x", sha1.Sum(s.Value()))
					} else if m.Type == codec.TypeString {
						v += strconv.Quote(string(m.Value))
					} else {
						v += fmt.Sprintf("count=%d", m.Count)
					}
					out[fmt.Sprintf("%d/%q", db, key)] = v
					return true
				})
			}
		}); err != nil {
			t.Fatalf("dump shard %d: %v", id, err)
		}
	}
	return out
}

// diffDumps lists the differences between two dumps, sorted.
func diffDumps(want, got map[string]string) []string {
	var diffs []string
	for k, v := range want {
		if g, ok := got[k]; !ok {
			diffs = append(diffs, fmt.Sprintf("%s: missing after replay (was %s)", k, v))
		} else if g != v {
			diffs = append(diffs, fmt.Sprintf("%s: %s after replay, was %s", k, g, v))
		}
	}
	for k, v := range got {
		if _, ok := want[k]; !ok {
			diffs = append(diffs, fmt.Sprintf("%s: %s after replay, absent in the server", k, v))
		}
	}
	sort.Strings(diffs)
	return diffs
}

// replayInto replays every shard's binlog of src into a fresh store with the same shard count.
func replayInto(t *testing.T, src *shard.Store) (*shard.Store, *executor.Executor, int) {
	t.Helper()
	dir := t.TempDir()
	dst := testserver.OpenStore(t, dir, src.NumShards())
	cfg, err := config.Load([]string{"--dir", dir, "--shards", strconv.Itoa(src.NumShards())})
	if err != nil {
		t.Fatal(err)
	}
	srv := executor.New(&server.Server{Store: dst, Config: cfg})
	held := 0
	for id := range src.NumShards() {
		first, last := src.Shard(id).BinlogRange()
		if first > 1 {
			t.Fatalf("shard %d: binlog starts at record %d: it was trimmed, the replay would be partial", id, first)
		}
		held += int(last)
	}
	// Replay keeps the units of cross-shard writes (MSET, RENAME, SWAPDB, FLUSHALL) whole.
	total, err := srv.Replay(context.Background(), src)
	if err != nil {
		t.Fatalf("replay after %d records: %v", total, err)
	}
	if total < held { // the TTL worker of src may append records meanwhile, never remove
		t.Fatalf("replayed %d records, the binlogs hold %d", total, held)
	}
	return dst, srv, total
}

// TestReplay_BinlogRebuildsEveryDB runs a random string/keyspace/expiry workload against a
// 4-shard server, then replays each shard's binlog into a fresh store and requires the same
// keys, types, values and expire times in every database.
func TestReplay_BinlogRebuildsEveryDB(t *testing.T) {
	s := testserver.Start(t, "--shards", "4", "--binlog-max-entries", "0", "--binlog-max-age", "0")
	ctx := context.Background()
	clients := []*redis.Client{s.Client(t)}
	w := newReplayWorkload(7)
	for db := 1; db < 4; db++ {
		c := s.Client(t, func(o *redis.Options) { o.DB = db; o.PoolSize = 1 })
		if err := c.Ping(ctx).Err(); err != nil {
			if strings.Contains(err.Error(), "unknown command") {
				t.Logf("SELECT is not in the server yet: the workload stays in db 0")
				break
			}
			t.Fatalf("client for db %d: %v", db, err)
		}
		clients = append(clients, c)
	}
	w.dbs = len(clients)
	// Start from a flushed server as difftest does: the FLUSHALL is logged too.
	if err := clients[0].Do(ctx, "FLUSHALL").Err(); isUnknownCommand(err) {
		w.missing["FLUSHALL"] = true
	} else if err != nil {
		t.Fatal(err)
	}
	w.run(t, clients, 3000)
	var missing []string
	for name := range w.missing {
		missing = append(missing, name)
	}
	slices.Sort(missing)
	if len(missing) > 0 {
		t.Logf("commands not in the server yet, left out: %s", strings.Join(missing, " "))
	}
	if w.counts["SET"] == 0 {
		t.Fatal("no SET ran: the workload did nothing")
	}
	s.Stop()

	src := testserver.OpenStore(t, s.Dir, 4)
	want := dumpStore(t, src)
	units := map[uint64]bool{}
	for id := range src.NumShards() {
		for from := uint64(0); ; {
			recs, err := src.ReadBinlog(id, from, 1024)
			if err != nil {
				t.Fatal(err)
			}
			if len(recs) == 0 {
				break
			}
			for _, r := range recs {
				if r.Unit.ID != 0 {
					units[r.Unit.ID] = true
				}
			}
			from = recs[len(recs)-1].Seq + 1
		}
	}
	if len(units) == 0 {
		t.Fatal("no cross-shard write was logged as a unit: the replay of units went untested")
	}
	dst, srv, records := replayInto(t, src)
	got := dumpStore(t, dst)
	dbs := map[string]bool{}
	for k := range want {
		dbs[k[:strings.IndexByte(k, '/')]] = true
	}
	t.Logf("%d records replayed, %d units; %d keys in %d databases; commands sent: %v", records, len(units), len(want), len(dbs), w.counts)
	if len(want) == 0 {
		t.Fatal("the workload left no key: nothing was compared")
	}
	fragmented := 0
	for _, v := range want {
		if strings.Contains(v, "|fragmented ") {
			fragmented++
		}
	}
	if fragmented == 0 && !w.missing["SETBIT"] {
		t.Fatal("the workload left no fragmented string: their replay went untested")
	}
	if diffs := diffDumps(want, got); len(diffs) > 0 {
		if len(diffs) > 20 {
			diffs = append(diffs[:20], fmt.Sprintf("… %d differences in all", len(diffs)))
		}
		t.Fatalf("the replayed store differs from the server's:\n%s", strings.Join(diffs, "\n"))
	}

	// The comparison must be able to fail: one wrong value in the replica is seen.
	victim := "replay-victim" // not a workload key: an extra key
	for k, v := range want {
		if strings.HasPrefix(k, "0/") && strings.HasPrefix(v, "string|") {
			victim, _ = strconv.Unquote(k[2:]) // an existing string: a changed value
			break
		}
	}
	if err := dst.Do(dst.ShardOf([]byte(victim)), func(tx *shard.Tx) {
		if err := srv.Apply(tx, 0, [][]byte{[]byte("SET"), []byte(victim), []byte("not what the server had")}); err != nil {
			t.Error(err)
		}
	}); err != nil {
		t.Fatal(err)
	}
	if len(diffDumps(want, dumpStore(t, dst))) == 0 {
		t.Fatalf("a wrong value of %q in the replayed store went unnoticed by the comparison", victim)
	}
}
