package cmds

import (
	"sync"

	"shardis/script"
	"shardis/server"
	"shardis/shard"
)

// Running scripts and functions: the glue between a command (its transaction, client and
// reply) and the Lua engine (package script), which runs the Lua and calls back scriptRun
// (script_call.go) for each redis.call.

// runScript runs the EVAL script s with keys and argv and writes its reply (or error) to c.W.
func runScript(c *Ctx, srv *server.Server, s *script.Script, keys, argv [][]byte, readOnly bool) {
	vm := script.GetVM()
	defer script.PutVM(vm)
	runLua(c, srv, vm.Script(s, keys, argv), readOnly)
}

// savepoints are the savepoints narrowed runs mark their transaction with (reused for their
// buffers).
var savepoints = sync.Pool{New: func() any { return new(shard.Savepoint) }}

// runLua runs inv (its VM owned by the caller's goroutine for the run) and writes its reply
// or error to c.W. It registers the run (SCRIPT KILL, BUSY), and when the run holds fewer
// than every shard marks a savepoint, so that a run that strays is undone and runs again
// holding every shard (c.Strayed).
func runLua(c *Ctx, srv *server.Server, inv script.Invocation, readOnly bool) {
	cl := c.Client
	if cl == nil {
		cl = &server.Client{}
	}
	savedDB := cl.DB
	mark := len(c.W.Buf)
	var shards []int
	if c.Tx != nil {
		shards = c.Tx.Shards()
	}
	running := script.Start(srv, inv.Name(), c.Args, inv.IsFunction())
	run := &scriptRun{c: c, inv: inv, readOnly: readOnly, db: c.DB, client: cl, running: running,
		held: shards}
	// A script run by EXEC (InTransaction) cannot run again, so it never strays: EXEC's route
	// gave it every shard, and a key outside them is refused (errScriptUndeclared) rather
	// than leaving a hole in EXEC's reply.
	if c.Tx != nil && !c.InTransaction && len(shards) < c.Tx.Store().NumShards() {
		run.savepoint = savepoints.Get().(*shard.Savepoint)
		defer savepoints.Put(run.savepoint)
		c.Tx.Save(run.savepoint)
	}
	if c.Tx != nil {
		// What the script logs is applied together by replicas, even all in one shard.
		c.Tx.BeginUnit()
		defer c.Tx.EndUnit()
	}
	defer func() {
		running.Finish()
		cl.DB = savedDB
		switch {
		case running.Stopped() && c.Tx != nil:
			c.Tx.Fail(errServerStopping) // as if the server had stopped before the script
			if run.savepoint != nil {
				c.Tx.Forget(run.savepoint)
			}
		case run.strayed:
			c.Tx.RollbackTo(run.savepoint)
			c.Strayed = true
			c.W.Buf = c.W.Buf[:mark]
		case run.savepoint != nil:
			c.Tx.Forget(run.savepoint)
		}
	}()
	inv.Run(running, run, &c.W)
}
