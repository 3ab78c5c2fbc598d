package cmds

import (
	"log"
	"strings"
	"sync"

	lua "github.com/yuin/gopher-lua"
)

// Function runners: the Lua states FCALL runs functions in. Functions run holding only their
// declared keys' shards, so calls on disjoint shards run at the same time; each needs a Lua
// state of its own (a gopher-lua state is not safe for two goroutines), with every library of
// the current funcSet loaded in it. The engine keeps a bounded free list of them; a runner
// made for an older set (a FUNCTION LOAD, DELETE, FLUSH or RESTORE came since) is dropped and
// a new one is made, by running each library's code again, as Redis does when it loads its
// libraries. The engine's own state (funcEngine.vm) is only where FUNCTION LOAD checks and
// registers libraries.

// maxIdleRunners bounds the runners an engine keeps between calls.
const maxIdleRunners = 16

// funcRunner is one Lua state with the libraries of set loaded. Owned by the goroutine that
// took it (takeRunner) until it gives it back (putRunner).
type funcRunner struct {
	vm  *scriptVM
	set *funcSet
	fns map[string]*lua.LFunction // by lower-case function name
}

// runnerPool is an engine's idle runners.
type runnerPool struct {
	mu   sync.Mutex
	idle []*funcRunner
}

// takeRunner returns a runner for set: an idle one made for it, or a new one.
func (e *funcEngine) takeRunner(set *funcSet) *funcRunner {
	p := &e.runners
	p.mu.Lock()
	for len(p.idle) > 0 {
		r := p.idle[len(p.idle)-1]
		p.idle = p.idle[:len(p.idle)-1]
		if r.set == set {
			p.mu.Unlock()
			return r
		}
	}
	p.mu.Unlock()
	return newFuncRunner(set)
}

// putRunner gives r back for later calls, unless its set is no longer current or enough are
// idle.
func (e *funcEngine) putRunner(r *funcRunner) {
	if r.set != e.current() {
		return
	}
	p := &e.runners
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.idle) < maxIdleRunners {
		p.idle = append(p.idle, r)
	}
}

// newFuncRunner makes a Lua state and loads set's libraries in it. A library that fails now
// (its code passed FUNCTION LOAD, but may behave differently on another run) is logged and
// left out: calling its functions answers as for a function that does not exist.
func newFuncRunner(set *funcSet) *funcRunner {
	r := &funcRunner{vm: newFunctionVM(), set: set, fns: map[string]*lua.LFunction{}}
	for _, lib := range set.sortedLibs() {
		md, errText := checkLibrary(lib.code)
		var loaded *funcLibrary
		if errText == "" {
			loaded, errText = loadLibrary(r.vm, md, lib.code, functionLoadTimeout)
		}
		if errText != "" {
			log.Printf("functions: library %q not loaded for a call: %s", lib.name, errText)
			continue
		}
		for _, f := range loaded.funcs {
			r.fns[strings.ToLower(f.name)] = f.fn
		}
	}
	return r
}
