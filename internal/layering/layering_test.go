// Package layering holds the test that keeps the packages in their layers (docs/ARCHITECTURE.md):
// the reactor is network only, commands are described and run above storage, and nothing low
// reaches up. It reads the real import graph with go list.
package layering

import (
	"encoding/json"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

const module = "shardis/"

// forbidden lists, per package, the packages it must not import directly.
var forbidden = map[string][]string{
	// Network only: it asks the executor what a command needs and has it run.
	"reactor": {"cmds", "acl", "config", "tracking", "shard", "script", "binlog", "ttl"},
	// Runs commands for every caller; the network is above it.
	"executor": {"reactor"},
	// The command families: run by the executor, never calling up into it or the network.
	"cmds":  {"executor", "reactor", "admin"},
	"admin": {"executor", "reactor", "replication"},
	// Storage knows no command, connection or server.
	"shard": {"cmds", "executor", "reactor", "server", "acl", "config", "tracking", "script"},
	// The server's state is below the executor and the network.
	"server": {"cmds", "executor", "reactor"},
	"codec":  {"shard", "cmds", "executor", "reactor", "server"},
	"binlog": {"shard", "cmds", "executor", "reactor", "server"},
	"ttl":    {"shard", "cmds", "executor", "reactor", "server"},
	"acl":    {"cmds", "executor", "reactor", "server", "shard"},
	"pubsub": {"cmds", "executor", "reactor", "server", "shard"},
	// The Lua engine calls back into commands through its Caller, never by importing them.
	"script": {"cmds", "executor", "reactor"},
	// The data types: storage below, no command or server above.
	"datatype": {"cmds", "executor", "reactor", "server", "script", "acl", "config"},
	// What COMMAND makes of a declaration, knowing nothing of the table.
	"cmdspec": {"cmds", "executor", "reactor", "server", "shard"},
	// The replication link runs what it applies through the executor, never a command
	// directly, and is reached by the commands through server.Replication.
	"replication": {"cmds", "admin", "reactor", "datatype", "script"},
	// Redis's serialization format knows nothing of shardis: values come and go as sources
	// and handler calls.
	"rdb": {"shard", "codec", "datatype", "binlog", "cmds", "executor", "reactor", "server", "config", "script", "replication"},
	// The store's keys in and out of that format: below the commands, the server and the
	// replication that use it.
	"rdbstore": {"cmds", "executor", "reactor", "server", "admin", "replication"},
}

// onlyImporters names third-party packages only some packages may import.
var onlyImporters = map[string][]string{
	// Lua lives in the script package; the command families see only its API.
	"github.com/yuin/gopher-lua": {"shardis/script"},
}

// reactorImporters are the only packages that may import the reactor: the program and the
// test server.
var reactorImporters = []string{"shardis", "shardis/internal/testserver"}

type listed struct {
	ImportPath string
	Imports    []string
}

func packages(t *testing.T) []listed {
	t.Helper()
	out, err := exec.Command("go", "list", "-json=ImportPath,Imports", "shardis/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	var pkgs []listed
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for dec.More() {
		var p listed
		if err := dec.Decode(&p); err != nil {
			t.Fatalf("go list output: %v", err)
		}
		pkgs = append(pkgs, p)
	}
	if len(pkgs) < 10 {
		t.Fatalf("go list found %d packages; is the module root right?", len(pkgs))
	}
	return pkgs
}

func TestLayering_NoPackageImportsAcrossItsLayer(t *testing.T) {
	seen := map[string]bool{}
	for _, p := range packages(t) {
		name := strings.TrimPrefix(p.ImportPath, module)
		seen[name] = true
		for _, imp := range p.Imports {
			if allowed, ok := onlyImporters[imp]; ok && !slices.Contains(allowed, p.ImportPath) {
				t.Errorf("%s imports %s; only %v may", p.ImportPath, imp, allowed)
			}
			dep, ok := strings.CutPrefix(imp, module)
			if !ok {
				continue
			}
			if slices.Contains(forbidden[name], dep) {
				t.Errorf("%s imports %s, which its layer must not (internal/layering)", p.ImportPath, imp)
			}
			if dep == "reactor" && !slices.Contains(reactorImporters, p.ImportPath) {
				t.Errorf("%s imports the reactor; only %v may", p.ImportPath, reactorImporters)
			}
		}
	}
	for name := range forbidden {
		if !seen[name] {
			t.Errorf("the rules name package %s, which no longer exists: update internal/layering", name)
		}
	}
}
