package cmds

import (
	"errors"

	"shardis/script"
	"shardis/server"
)

// SCRIPT KILL and FUNCTION KILL, and stopping scripts as the server stops. The registry of
// running scripts and the kill rules are the engine's (script.Kill, script.StopAll).

func scriptKill(c *Ctx, srv *server.Server) { killScript(c, srv, false) }

func functionKill(c *Ctx, srv *server.Server) { killScript(c, srv, true) }

// killScript is SCRIPT KILL (function false) and FUNCTION KILL.
func killScript(c *Ctx, srv *server.Server, function bool) {
	if err := script.Kill(srv, function); err != nil {
		c.Error(err.Error())
		return
	}
	c.W.OK()
}

// StopScripts stops every script srv runs, as the server stops (SHUTDOWN NOSAVE, SIGTERM):
// each ends at its next instruction and fails its transaction, so that none of a script that
// had written commits half done; the server can then wait for its commands to end.
func StopScripts(srv *server.Server) { script.StopAll(srv) }

// errServerStopping fails the transaction of a script the stopping server ended.
var errServerStopping = errors.New("server is shutting down")
