package executor

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"shardis/cmds"
	"shardis/config"
	"shardis/server"
	"shardis/shard"
)

// host is a BlockHost that records the reply.
type host struct {
	mu       sync.Mutex
	blocking int
	replies  []string
	got      chan struct{}
}

func newHost() *host { return &host{got: make(chan struct{}, 1)} }

func (h *host) Blocking() { h.mu.Lock(); h.blocking++; h.mu.Unlock() }
func (h *host) Unblocked(reply []byte) {
	h.mu.Lock()
	h.replies = append(h.replies, string(reply))
	h.mu.Unlock()
	h.got <- struct{}{}
}

func (h *host) wait(t *testing.T) string {
	t.Helper()
	select {
	case <-h.got:
	case <-time.After(20 * time.Second):
		t.Fatal("no reply in 20s")
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.replies[len(h.replies)-1]
}

func openExecutor(t *testing.T, shards int) (*shard.Store, *Executor) {
	t.Helper()
	store, err := shard.Open(shard.Options{Dir: t.TempDir(), Shards: shards, Databases: 16})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = store.Close() })
	cfg, err := config.Load([]string{"--dir", t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	return store, New(server.New(cfg, store))
}

func argv(s string) [][]byte {
	var out [][]byte
	for _, f := range strings.Fields(s) {
		out = append(out, []byte(f))
	}
	return out
}

// run runs the command line s in a transaction holding every shard.
func run(t *testing.T, store *shard.Store, e *Executor, s string, h cmds.BlockHost, inTx bool) string {
	t.Helper()
	args := argv(s)
	held := store.AcquireAll()
	c := &cmds.Ctx{Args: args, Tx: held.Tx(), Cmd: cmds.Lookup(args), Host: h, InTransaction: inTx}
	e.Run(c)
	if err := held.Release(); err != nil {
		t.Fatal(err)
	}
	return string(c.W.Buf)
}

// Inside MULTI (and scripts) a blocking command answers as its non-blocking form.
func TestBlocking_InTransactionNeverBlocks(t *testing.T) {
	store, e := openExecutor(t, 2)
	h := newHost()
	for cmd, want := range map[string]string{
		"BLPOP q 0":                 "*-1\r\n",
		"BLMOVE q d LEFT LEFT 0":    "$-1\r\n",
		"BRPOPLPUSH q d 0":          "$-1\r\n",
		"BZPOPMIN z 0":              "*-1\r\n",
		"BLMPOP 0 1 q LEFT":         "*-1\r\n",
		"BZMPOP 0 2 z q MAX":        "*-1\r\n",
		"BLPOP q 0.01":              "*-1\r\n",
		"BLMPOP 0 1 q LEFT COUNT 0": "-ERR count should be greater than 0\r\n",
	} {
		if got := run(t, store, e, cmd, h, true); got != want {
			t.Errorf("%s in a transaction = %q, want %q", cmd, got, want)
		}
	}
	if n, _ := store.Blocked(); n != 0 || h.blocking != 0 {
		t.Fatal("a command blocked inside a transaction")
	}
	// Without a host (binlog replay, internal callers) nothing blocks either.
	if got := run(t, store, e, "BLPOP q 0", nil, false); got != "*-1\r\n" {
		t.Fatalf("BLPOP without a host = %q", got)
	}
}

// A blocked command is served by the next write of its key, after that write's commit; a
// write inside a transaction serves nobody until the transaction ends.
func TestBlocking_ServedAfterTheWrite(t *testing.T) {
	store, e := openExecutor(t, 2)
	h := newHost()
	if got := run(t, store, e, "BLPOP a b 0", h, false); got != "" {
		t.Fatalf("blocked BLPOP replied %q", got)
	}
	if n, _ := store.Blocked(); n != 1 || h.blocking != 1 {
		t.Fatal("BLPOP did not block")
	}
	if got := run(t, store, e, "RPUSH b x y", nil, true); got != ":2\r\n" {
		t.Fatalf("RPUSH = %q", got)
	}
	if n, _ := store.Blocked(); n != 1 {
		t.Fatal("served inside a transaction")
	}
	if got := run(t, store, e, "RPUSH b z", nil, false); got != ":3\r\n" {
		t.Fatalf("RPUSH = %q", got)
	}
	if got := h.wait(t); got != "*2\r\n$1\r\nb\r\n$1\r\nx\r\n" {
		t.Fatalf("served reply %q", got)
	}
	if got := run(t, store, e, "LRANGE b 0 -1", nil, false); got != "*2\r\n$1\r\ny\r\n$1\r\nz\r\n" {
		t.Fatalf("LRANGE = %q", got)
	}
}

// A BLMOVE whose destination lives in a shard the pushing transaction does not hold is served
// before the push's job is done.
func TestBlocking_DeferredServeAcrossShards(t *testing.T) {
	store, e := openExecutor(t, 4)
	src, dst := "s", "d0"
	for i := 0; store.ShardOf([]byte(dst)) == store.ShardOf([]byte(src)); i++ {
		dst = "d" + string(rune('0'+i))
	}
	h := newHost()
	run(t, store, e, "BLMOVE "+src+" "+dst+" RIGHT LEFT 0", h, false)
	args := argv("LPUSH " + src + " v")
	err := store.Do(store.ShardOf([]byte(src)), func(tx *shard.Tx) {
		e.Run(&cmds.Ctx{Args: args, Tx: tx, Cmd: cmds.Lookup(args)})
	})
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-h.got: // served before Do returned
	default:
		t.Fatal("the push's job was done before its waiter was served")
	}
	if got := run(t, store, e, "LRANGE "+dst+" 0 -1", nil, false); got != "*1\r\n$1\r\nv\r\n" {
		t.Fatalf("LRANGE dst = %q", got)
	}
	if n, k := store.Blocked(); n != 0 || k != 0 {
		t.Fatalf("Blocked() = %d, %d", n, k)
	}
}

// A timeout answers the null array; CLIENT UNBLOCK's Unblock loses to a settled waiter.
func TestBlocking_TimeoutAndUnblock(t *testing.T) {
	store, e := openExecutor(t, 1)
	h := newHost()
	cl := &server.Client{ID: 7}
	args := argv("BZPOPMAX z 0.01")
	held := store.AcquireAll()
	e.Run(&cmds.Ctx{Args: args, Tx: held.Tx(), Cmd: cmds.Lookup(args), Host: h, Client: cl})
	_ = held.Release()
	if got := h.wait(t); got != "*-1\r\n" {
		t.Fatalf("timeout reply %q", got)
	}
	if cl.Blocked() != nil {
		t.Fatal("the client still shows blocked")
	}
	args = argv("BLPOP q 0")
	held = store.AcquireAll()
	e.Run(&cmds.Ctx{Args: args, Tx: held.Tx(), Cmd: cmds.Lookup(args), Host: h, Client: cl})
	_ = held.Release()
	u := cl.Blocked()
	if u == nil || !u.Unblock(server.UnblockError) || u.Unblock(server.UnblockTimeout) {
		t.Fatal("Unblock did not settle the waiter exactly once")
	}
	if got := h.wait(t); got != "-UNBLOCKED client unblocked via CLIENT UNBLOCK\r\n" {
		t.Fatalf("unblock reply %q", got)
	}
	// A client that is gone blocks nothing.
	if cl.Gone() != nil {
		t.Fatal("Gone returned a settled command")
	}
	held = store.AcquireAll()
	e.Run(&cmds.Ctx{Args: args, Tx: held.Tx(), Cmd: cmds.Lookup(args), Host: h, Client: cl})
	_ = held.Release()
	if got := h.wait(t); got != "" {
		t.Fatalf("a gone client's reply %q", got)
	}
	if n, k := store.Blocked(); n != 0 || k != 0 {
		t.Fatalf("Blocked() = %d, %d", n, k)
	}
}

type replyHost struct{ reply []byte }

func (h *replyHost) Blocking()              {}
func (h *replyHost) Unblocked(reply []byte) { h.reply = reply }

// A blocked command whose serving commit the disk guard refused gets Redis's MISCONF, as any
// other refused commit, never the store's error text.
func TestBlocking_ServedCommitRefusedForDisk_MISCONF(t *testing.T) {
	for _, err := range []error{
		fmt.Errorf("commit: %w", shard.ErrNoSpace),
		fmt.Errorf("commit: %w (IO error: No space left on device: While appending to file: 000295.blob)", shard.ErrNoSpace),
		fmt.Errorf("commit: %w", shard.ErrWriteFailed),
	} {
		h := &replyHost{}
		b := &Blocked{host: h}
		b.Served(err)
		if got, want := string(h.reply), "-"+server.DiskError+"\r\n"; got != want {
			t.Errorf("Served(%v) replied %q, want %q", err, got, want)
		}
	}
}
