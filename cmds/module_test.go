package cmds_test

import "testing"

// MODULE answers as a Redis 7.0 without modules: LIST empty, LOAD/LOADEX/UNLOAD refused while
// enable-module-command is no (the default); COMMAND INFO and DOCS of MODULE's subcommands and
// of BGREWRITEAOF as Redis's.
func TestModule_RefusedByDefault_AsRedis(t *testing.T) { replayRecorded(t, "testdata/module") }

// With enable-module-command yes, LOAD and LOADEX fail as a module that does not load, UNLOAD
// finds no module.
func TestModule_Enabled_FailsAsRedis(t *testing.T) {
	replayStreams(t, "testdata/moduleon", false, "--enable-module-command", "yes")
}
