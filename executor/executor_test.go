package executor

import (
	"strings"
	"testing"

	"shardis/cmds"
	"shardis/codec"
	"shardis/config"
	"shardis/server"
	"shardis/shard"
)

func panicking() *cmds.Command {
	return &cmds.Command{Name: "boom", Run: func(c *cmds.Ctx) {
		c.Tx.SetMeta(c.DB, []byte("half"), &codec.Meta{Type: codec.TypeString, Value: []byte("x")})
		panic("a bug")
	}}
}

// A command that panics answers an error and its group's writes are not committed.
func TestExecutor_Run_PanicFailsTheGroup(t *testing.T) {
	store, err := shard.Open(shard.Options{Dir: t.TempDir(), Shards: 1, Databases: 16})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	cfg, err := config.Load([]string{"--dir", t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	e := New(server.New(cfg, store))
	var reply string
	err = store.Do(0, func(tx *shard.Tx) {
		tx.SetMeta(0, []byte("other"), &codec.Meta{Type: codec.TypeString, Value: []byte("y")})
		ctx := &cmds.Ctx{Args: [][]byte{[]byte("boom")}, Tx: tx, Cmd: panicking()}
		e.Run(ctx)
		reply = string(ctx.W.Buf)
	})
	if reply != "-ERR internal error in 'boom'\r\n" {
		t.Fatalf("reply %q", reply)
	}
	if err == nil || !strings.Contains(err.Error(), "internal error") {
		t.Fatalf("commit error %v, want the internal error", err)
	}
	_ = store.Do(0, func(tx *shard.Tx) {
		if tx.Exists(0, []byte("half")) || tx.Exists(0, []byte("other")) {
			t.Error("writes of the failed group were committed")
		}
	})
}
