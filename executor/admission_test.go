package executor

import (
	"math"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"shardis/cmds"
	"shardis/config"
	"shardis/server"
	"shardis/shard"
)

// admissionFixture is an executor over a real store whose states (loading, a low disk, a busy
// script, users) a test sets, with a client as a connection would have it.
type admissionFixture struct {
	e       *Executor
	srv     *server.Server
	reserve *atomic.Int64 // the store's disk-reserve: huge makes the disk low
}

func newAdmissionFixture(t *testing.T, loading bool, flags ...string) *admissionFixture {
	t.Helper()
	reserve := &atomic.Int64{}
	opts := shard.Options{Dir: t.TempDir(), Shards: 2, Databases: 16, DiskReserve: reserve.Load}
	var store *shard.Store
	var err error
	if loading {
		store, err = shard.New(opts)
	} else {
		store, err = shard.Open(opts)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	cfg, err := config.Load(append([]string{"--dir", t.TempDir()}, flags...))
	if err != nil {
		t.Fatal(err)
	}
	srv := server.New(cfg, store)
	if err := srv.LoadUsers(); err != nil {
		t.Fatal(err)
	}
	return &admissionFixture{e: New(srv), srv: srv, reserve: reserve}
}

// client returns a connection's client logged in as user (the default user when "").
func (f *admissionFixture) client(t *testing.T, user string) *server.Client {
	t.Helper()
	cl := &server.Client{Addr: "127.0.0.1:50000", Authed: true, Watch: &shard.Watcher{}}
	u := f.srv.ACL.Default()
	if user != "" {
		if u = f.srv.ACL.Get(user); u == nil {
			t.Fatalf("no user %s", user)
		}
	}
	cl.SetUser(u)
	return cl
}

func (f *admissionFixture) admit(from cmds.Caller, cl *server.Client, args ...string) string {
	argv := make([][]byte, len(args))
	for i, a := range args {
		argv[i] = []byte(a)
	}
	return f.e.Admit(&cmds.AdmitRequest{From: from, Cmd: cmds.Lookup(argv), Args: argv, Client: cl})
}

// Each refusal is made by the one admission check, whatever the path the command came by;
// a path refuses what Redis refuses on it, with Redis's text for that path. A path a check
// does not apply to lets the command through (an EXEC'd command passed the client's checks
// when it was queued; a script runs only for a client that passed them; a replicated record
// comes over a trusted link).
func TestAdmit_EveryPathRefusesTheSameWay(t *testing.T) {
	t.Run("NOAUTH", func(t *testing.T) {
		f := newAdmissionFixture(t, false, "--requirepass", "pw")
		cl := f.client(t, "")
		cl.Authed = false
		if got := f.admit(cmds.FromClient, cl, "get", "k"); got != "NOAUTH Authentication required." {
			t.Errorf("client: %q", got)
		}
		if got := f.admit(cmds.FromClient, cl, "auth", "pw"); got != "" {
			t.Errorf("client AUTH (no_auth): %q", got)
		}
		if got := f.admit(cmds.FromReplication, nil, "set", "k", "v"); got != "" {
			t.Errorf("replication: %q", got)
		}
	})

	t.Run("NOPERM", func(t *testing.T) {
		f := newAdmissionFixture(t, false)
		if _, _, err := f.srv.ACL.SetUser("lim", []string{"on", "nopass", "~app:*", "+get", "+set", "+eval", "+multi", "+exec"}); err != nil {
			t.Fatal(err)
		}
		cl := f.client(t, "lim")
		for _, tc := range []struct {
			from cmds.Caller
			want string
		}{
			{cmds.FromClient, "NOPERM this user has no permissions to access one of the keys used as arguments"},
			{cmds.FromExec, "NOPERM ACLs rules changed between the moment the transaction was accumulated and the EXEC call. This command is no longer allowed for the following reason: no permission to touch the specified keys"},
			{cmds.FromScript, "ERR The user executing the script can't access at least one of the keys mentioned in the command arguments"},
			{cmds.FromReplication, ""},
		} {
			from := cl
			if tc.from == cmds.FromReplication {
				from = nil
			}
			if got := f.admit(tc.from, from, "get", "secret:1"); got != tc.want {
				t.Errorf("path %d: %q, want %q", tc.from, got, tc.want)
			}
			if got := f.admit(tc.from, from, "get", "app:1"); got != "" {
				t.Errorf("path %d, a permitted key: %q", tc.from, got)
			}
		}
		if got := len(f.srv.ACL.Log.Entries(10)); got != 3 {
			t.Errorf("ACL LOG holds %d entries, want one per refusing path (3)", got)
		}
	})

	t.Run("LOADING", func(t *testing.T) {
		f := newAdmissionFixture(t, true)
		cl := f.client(t, "")
		if got := f.admit(cmds.FromClient, cl, "get", "k"); got != server.LoadingError {
			t.Errorf("client: %q", got)
		}
		if got := f.admit(cmds.FromClient, cl, "info"); got != "" {
			t.Errorf("client INFO (loading flag): %q", got)
		}
		if got := f.admit(cmds.FromReplication, nil, "set", "k", "v"); got != "" {
			t.Errorf("replication: %q", got)
		}
	})

	t.Run("MISCONF", func(t *testing.T) {
		f := newAdmissionFixture(t, false)
		f.reserve.Store(math.MaxInt64 / 2) // the disk guard now sees too little room
		deadline := time.Now().Add(30 * time.Second)
		for f.srv.Admission()&server.AdmitDiskError == 0 {
			if time.Now().After(deadline) {
				t.Fatal("the disk guard never reported the disk low")
			}
			time.Sleep(10 * time.Millisecond)
		}
		cl := f.client(t, "")
		for _, from := range []cmds.Caller{cmds.FromClient, cmds.FromScript} {
			if got := f.admit(from, cl, "set", "k", "v"); got != server.DiskError {
				t.Errorf("path %d, a write: %q", from, got)
			}
			if got := f.admit(from, cl, "get", "k"); got != "" {
				t.Errorf("path %d, a read: %q", from, got)
			}
			// What frees space runs: Redis's OOM check refuses denyoom commands only.
			for _, freeing := range [][]string{{"del", "k"}, {"unlink", "k"}, {"flushdb"}, {"flushall"}} {
				if from == cmds.FromScript && freeing[0][0] == 'f' {
					continue // not allowed in scripts anyway
				}
				if got := f.admit(from, cl, freeing...); got != "" {
					t.Errorf("path %d, %s while the disk is low: %q; it frees space", from, freeing[0], got)
				}
			}
		}
		// A transaction that only frees space runs.
		cl.Multi = &server.Multi{}
		cl.Multi.Queue([][]byte{[]byte("del"), []byte("k")}, true, false)
		if got := f.admit(cmds.FromClient, cl, "exec"); got != "" {
			t.Errorf("EXEC of a transaction of DEL: %q", got)
		}
		// A transaction that adds data is refused at EXEC, by the client's path.
		cl.Multi = &server.Multi{}
		cl.Multi.Queue([][]byte{[]byte("set"), []byte("k"), []byte("v")}, true, false)
		if got := f.admit(cmds.FromClient, cl, "exec"); !strings.HasPrefix(got, "EXECABORT") || !strings.Contains(got, "MISCONF") {
			t.Errorf("EXEC of a writing transaction: %q", got)
		}
		if cl.Multi != nil {
			t.Error("the refused EXEC left its transaction in place")
		}
	})

	t.Run("BUSY", func(t *testing.T) {
		f := newAdmissionFixture(t, false)
		cl := f.client(t, "")
		mark := f.srv.Busy.Start(-time.Second, false) // past its threshold at once
		defer f.srv.Busy.Stop(mark)
		for i := 0; f.srv.Busy.Error() == ""; i++ { // its timer runs in another goroutine
			if i == 30000 {
				t.Fatal("never busy")
			}
			time.Sleep(time.Millisecond)
		}
		// Every command but the allow_busy ones, whatever shards it needs or none.
		for _, args := range [][]string{{"get", "k"}, {"ping"}, {"client", "id"}, {"exec"}} {
			if got := f.admit(cmds.FromClient, cl, args...); got != server.ErrBusyScript {
				t.Errorf("client %s: %q", args, got)
			}
		}
		for _, args := range [][]string{{"script", "kill"}, {"function", "kill"}, {"function", "stats"}, {"multi"}, {"watch", "k"}, {"auth", "x"}} {
			if got := f.admit(cmds.FromClient, cl, args...); got != "" {
				t.Errorf("client %s (allow_busy): %q", args, got)
			}
		}
		// The earlier checks come first: arity, and inside MULTI no_multi.
		if got := f.admit(cmds.FromClient, cl, "get"); got != "ERR wrong number of arguments for 'get' command" {
			t.Errorf("GET without a key: %q", got)
		}
		cl.Multi = &server.Multi{}
		if got := f.admit(cmds.FromClient, cl, "save"); got != "ERR Command not allowed inside a transaction" {
			t.Errorf("SAVE inside MULTI: %q", got)
		}
		if got := f.admit(cmds.FromClient, cl, "exec"); got != "EXECABORT Transaction discarded because of: "+server.ErrBusyScript {
			t.Errorf("EXEC: %q", got)
		}
		// A script's own commands are not the client's: they run.
		if got := f.admit(cmds.FromScript, cl, "get", "k"); got != "" {
			t.Errorf("script: %q", got)
		}
	})

	t.Run("unknown", func(t *testing.T) {
		f := newAdmissionFixture(t, false)
		cl := f.client(t, "")
		for _, tc := range []struct {
			from cmds.Caller
			want string
		}{
			{cmds.FromClient, "ERR unknown command 'nosuch', with args beginning with: 'a' "},
			{cmds.FromScript, cmds.ErrScriptUnknown},
			{cmds.FromReplication, "ERR unknown command 'nosuch', with args beginning with: 'a' "},
		} {
			if got := f.admit(tc.from, cl, "nosuch", "a"); got != tc.want {
				t.Errorf("path %d: %q, want %q", tc.from, got, tc.want)
			}
		}
	})
}

// A refusal inside MULTI dooms the transaction, and the refused command is counted once.
func TestAdmit_FromClient_RefusalInsideMultiAbortsIt(t *testing.T) {
	f := newAdmissionFixture(t, false)
	cl := f.client(t, "")
	cl.Multi = &server.Multi{}
	if got := f.admit(cmds.FromClient, cl, "get"); got != "ERR wrong number of arguments for 'get' command" {
		t.Fatalf("GET without a key: %q", got)
	}
	if !cl.Multi.Aborted {
		t.Error("the transaction was not doomed")
	}
	if got := f.srv.Stats.ErrorReplies.Load(); got != 1 {
		t.Errorf("error replies %d, want 1", got)
	}
	if got := f.admit(cmds.FromClient, cl, "save"); got != "ERR Command not allowed inside a transaction" {
		t.Errorf("SAVE inside MULTI: %q", got)
	}
}
