package script

import (
	"log"
	"strings"
	"sync"

	lua "github.com/yuin/gopher-lua"
)

// Function runners: the Lua states FCALL runs functions in. Functions run holding only their
// declared keys' shards, so calls on disjoint shards run at the same time; each needs a Lua
// state of its own (a gopher-lua state is not safe for two goroutines), with every library of
// the current Libraries loaded in it. The engine keeps a bounded free list of them; a runner
// made for an older set (a FUNCTION LOAD, DELETE, FLUSH or RESTORE came since) is dropped and
// a new one is made, by running each library's code again, as Redis does when it loads its
// libraries. The engine's own state (Functions.vm) is only where FUNCTION LOAD checks and
// registers libraries.

// maxIdleRunners bounds the runners an engine keeps between calls.
const maxIdleRunners = 16

// Runner is one Lua state with every library of one Libraries loaded. Owned by the goroutine that took
// it (TakeRunner) until it gives it back (PutRunner).
type Runner struct {
	vm  *VM
	set *Libraries
	fns map[string]*lua.LFunction // by lower-case function name
}

// runnerPool is an engine's idle runners.
type runnerPool struct {
	mu   sync.Mutex
	idle []*Runner
}

// TakeRunner returns a runner for set (the engine's Current libraries, read once by the
// caller): an idle one made for it, or a new one. The caller owns it until PutRunner.
func (e *Functions) TakeRunner(set *Libraries) *Runner {
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

// PutRunner gives r back for later calls, unless its set is no longer current or enough are
// idle. The caller must not use r after.
func (e *Functions) PutRunner(r *Runner) {
	if r.set != e.Current() {
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
func newFuncRunner(set *Libraries) *Runner {
	r := &Runner{vm: newFunctionVM(), set: set, fns: map[string]*lua.LFunction{}}
	for _, lib := range set.Sorted() {
		md, errText := checkLibrary(lib.code)
		var loaded *Library
		if errText == "" {
			loaded, errText = loadLibrary(r.vm, md, lib.code, LoadTimeout)
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

// Function readies f (from r's libraries) to run in r's state with keys and argv (its KEYS and
// ARGV arguments). It reports false when f's library is not loaded in this state (it failed
// to load here, logged): FCALL then answers as for a function that does not exist.
func (r *Runner) Function(f *Function, keys, argv [][]byte) (Invocation, bool) {
	fn := r.fns[strings.ToLower(f.name)]
	if fn == nil {
		return Invocation{}, false
	}
	L := r.vm.state
	return Invocation{vm: r.vm, fn: fn, name: f.name, source: functionErrorSource, function: true,
		wide: &f.wide, args: []lua.LValue{argTable(L, keys), argTable(L, argv)}}, true
}
