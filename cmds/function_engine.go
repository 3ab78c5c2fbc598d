package cmds

import (
	"context"
	"log"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"weak"

	lua "github.com/yuin/gopher-lua"

	"shardis/shard"
)

// Function libraries (FUNCTION LOAD, FCALL), as Redis 7.0 has them.
//
// Libraries are data: each one's code is kept in shard 0 under the state key 's' 'f' · name
// (shard/state.go, docs/ENCODING.md), written in the FUNCTION command's WriteBatch with its
// binlog record, so they survive a restart and replicate. In memory, each store has one
// funcEngine: one Lua state in which FUNCTION LOAD checks and registers libraries, an
// immutable funcSet of the libraries and their functions, replaced whole on every change,
// which FUNCTION LIST, DUMP and STATS read without a lock, and the runners FCALL takes (Lua
// states with every library loaded, function_runner.go), so that functions holding disjoint
// shards run at the same time.
//
// Ownership: funcEngine.mu owns the engine's Lua state. Loading a library takes it, holding
// shard 0, and never waits for a shard while holding it. FCALL takes a runner, owned by its
// goroutine until it gives it back; it takes no lock while the function runs.

// funcLibrary is one loaded library. Immutable once loaded.
type funcLibrary struct {
	name  string
	code  string         // the whole code, shebang included, as FUNCTION LOAD got it
	funcs []*luaFunction // sorted by name
}

// luaFunction is one registered function. Immutable once its library is loaded.
type luaFunction struct {
	name    string
	desc    string
	hasDesc bool
	flags   scriptFlags
	fn      *lua.LFunction // lives in the engine's Lua state; FCALL runs its runner's copy
	lib     *funcLibrary
	// wide: a call strayed beyond its declared keys' shards (Ctx.Strayed), so later calls
	// hold every shard from the start (fcallRoute).
	wide atomic.Bool
}

// funcSet is every library of a store. Immutable: a change makes a new set.
type funcSet struct {
	libs  map[string]*funcLibrary // by name (case-sensitive, as Redis)
	funcs map[string]*luaFunction // by lower-case name (Redis looks functions up ignoring case)
}

func newFuncSet() *funcSet {
	return &funcSet{libs: map[string]*funcLibrary{}, funcs: map[string]*luaFunction{}}
}

func (s *funcSet) clone() *funcSet {
	n := newFuncSet()
	for k, v := range s.libs {
		n.libs[k] = v
	}
	for k, v := range s.funcs {
		n.funcs[k] = v
	}
	return n
}

func (s *funcSet) add(lib *funcLibrary) {
	s.libs[lib.name] = lib
	for _, f := range lib.funcs {
		s.funcs[strings.ToLower(f.name)] = f
	}
}

func (s *funcSet) remove(lib *funcLibrary) {
	delete(s.libs, lib.name)
	for _, f := range lib.funcs {
		delete(s.funcs, strings.ToLower(f.name))
	}
}

// join adds libs to s (a clone): an existing library of the same name is an error, or is
// replaced with replace; a function whose name another library has is an error. It returns
// Redis's error text, or "".
func (s *funcSet) join(libs []*funcLibrary, replace bool, quoteLib bool) string {
	for _, lib := range libs {
		if old := s.libs[lib.name]; old != nil {
			if !replace {
				if quoteLib {
					return "Library '" + lib.name + "' already exists"
				}
				return "Library " + lib.name + " already exists"
			}
			s.remove(old)
		}
	}
	for _, lib := range libs {
		for _, f := range lib.funcs {
			if s.funcs[strings.ToLower(f.name)] != nil {
				return "Function " + f.name + " already exists"
			}
		}
		s.add(lib)
	}
	return ""
}

// sortedLibs returns the libraries by name.
func (s *funcSet) sortedLibs() []*funcLibrary {
	libs := make([]*funcLibrary, 0, len(s.libs))
	for _, l := range s.libs {
		libs = append(libs, l)
	}
	slices.SortFunc(libs, func(a, b *funcLibrary) int { return strings.Compare(a.name, b.name) })
	return libs
}

// funcEngine is one store's libraries and the Lua state they live in.
type funcEngine struct {
	mu      sync.Mutex // owns vm
	vm      *scriptVM  // where FUNCTION LOAD checks and registers libraries
	set     atomic.Pointer[funcSet]
	loaded  sync.Once  // the store's libraries were read back (load)
	runners runnerPool // the states FCALL runs functions in (function_runner.go)
}

// engines maps each store (by a weak pointer, so a closed store can go: tests open many) to
// its *funcEngine. A sync.Map: read by every FCALL, written once per store.
var engines sync.Map

// functionStatePrefix is the state key prefix of libraries: 's' 'f' · library name.
var functionStatePrefix = []byte("f")

// functionsOf returns the engine of the store c runs against, loading the store's libraries
// on first use.
func functionsOf(c *Ctx) *funcEngine {
	var st *shard.Store
	if c.Tx != nil {
		st = c.Tx.Store()
	} else {
		st = c.Srv.Store
	}
	key := weak.Make(st)
	v, ok := engines.Load(key)
	if !ok {
		var loaded bool
		if v, loaded = engines.LoadOrStore(key, &funcEngine{}); !loaded {
			runtime.AddCleanup(st, func(k weak.Pointer[shard.Store]) { engines.Delete(k) }, key)
		}
	}
	e := v.(*funcEngine)
	e.loaded.Do(func() { e.load(st) })
	return e
}

// functionsFootprint returns how many libraries and functions the server's store holds and
// the bytes of their code (INFO memory). It makes the store's engine (a Lua state) only when
// the store holds a library: INFO on a server without functions costs one short read.
func functionsFootprint(c *Ctx) (libs, funcs, codeBytes int64) {
	st := c.Srv.Store
	if !st.Opened() {
		return 0, 0, 0 // loading: nothing is known yet, as in Redis while it loads
	}
	if _, made := engines.Load(weak.Make(st)); !made {
		found := false
		_ = st.ReadStatePrefix(functionStateShard, functionStatePrefix, func(_, _ []byte) { found = true })
		if !found {
			return 0, 0, 0
		}
	}
	for _, lib := range functionsOf(c).current().libs {
		libs++
		funcs += int64(len(lib.funcs))
		codeBytes += int64(len(lib.code))
	}
	return libs, funcs, codeBytes
}

// load makes the engine's Lua state and loads the libraries st keeps.
func (e *funcEngine) load(st *shard.Store) {
	e.vm = newFunctionVM()
	set := newFuncSet()
	err := st.ReadStatePrefix(functionStateShard, functionStatePrefix, func(name, code []byte) {
		lib, errText := e.compile(string(code), 0)
		if errText == "" {
			errText = set.join([]*funcLibrary{lib}, false, true)
		}
		if errText != "" { // never for what FUNCTION LOAD checked and stored
			log.Printf("functions: library %q not loaded: %s", name, errText)
		}
	})
	if err != nil {
		log.Printf("functions: %v", err)
	}
	e.set.Store(set)
}

// lookup returns the function called name (any case), or nil.
func (s *funcSet) lookup(name []byte) *luaFunction {
	for _, ch := range name {
		if 'A' <= ch && ch <= 'Z' {
			return s.funcs[strings.ToLower(string(name))]
		}
	}
	return s.funcs[string(name)]
}

// current returns the libraries now.
func (e *funcEngine) current() *funcSet { return e.set.Load() }

// functionLoadTimeout bounds the run of a library's code at FUNCTION LOAD, as Redis's.
const functionLoadTimeout = 500 * time.Millisecond

// libraryMeta is a library's shebang: engine and name, and the code after the shebang line.
type libraryMeta struct {
	engine, name, body string
}

// parseLibraryMeta reads "#!lua name=<name>" as Redis 7.0 does; the error is Redis's text.
func parseLibraryMeta(code string) (libraryMeta, string) {
	if !strings.HasPrefix(code, "#!") {
		return libraryMeta{}, "Missing library metadata"
	}
	end := strings.IndexByte(code, '\n')
	if end < 0 {
		return libraryMeta{}, "Invalid library metadata"
	}
	parts := strings.Fields(code[:end])
	if len(parts) == 0 {
		return libraryMeta{}, "Invalid library metadata"
	}
	md := libraryMeta{engine: parts[0][2:], body: code[end:]}
	hasName := false
	for _, p := range parts[1:] {
		if len(p) >= 5 && strings.EqualFold(p[:5], "name=") {
			if hasName {
				return libraryMeta{}, "Invalid metadata value, name argument was given multiple times"
			}
			md.name, hasName = p[5:], true
			continue
		}
		return libraryMeta{}, "Invalid metadata value given: " + p
	}
	if !hasName {
		return libraryMeta{}, "Library name was not given"
	}
	return md, ""
}

// validFunctionName reports whether name is Redis's [a-zA-Z0-9_]+.
func validFunctionName(name string) bool {
	if name == "" {
		return false
	}
	for i := 0; i < len(name); i++ {
		ch := name[i]
		if !(ch >= 'a' && ch <= 'z' || ch >= 'A' && ch <= 'Z' || ch >= '0' && ch <= '9' || ch == '_') {
			return false
		}
	}
	return true
}

const errBadLibraryName = "Library names can only contain letters, numbers, or underscores(_) and must be at least one character long"

// checkLibrary checks code's metadata as FUNCTION LOAD does before it compiles anything.
func checkLibrary(code string) (libraryMeta, string) {
	md, errText := parseLibraryMeta(code)
	if errText != "" {
		return md, errText
	}
	if !validFunctionName(md.name) {
		return md, errBadLibraryName
	}
	if !strings.EqualFold(md.engine, "lua") {
		return md, "Engine '" + md.engine + "' not found"
	}
	return md, ""
}

// compile loads code as a library in the engine's Lua state: it checks the metadata, compiles
// the code and runs it, which registers the functions. timeout bounds the run (0: none, for
// libraries read back from disk or replayed). It returns Redis's error text (without the ERR
// code) on failure. The caller holds e.mu, or owns e alone.
func (e *funcEngine) compile(code string, timeout time.Duration) (*funcLibrary, string) {
	md, errText := checkLibrary(code)
	if errText != "" {
		return nil, errText
	}
	return e.run(md, code, timeout)
}

func (e *funcEngine) run(md libraryMeta, code string, timeout time.Duration) (*funcLibrary, string) {
	return loadLibrary(e.vm, md, code, timeout)
}

// loadLibrary compiles a library's code and runs it in vm, which registers its functions.
// The caller owns vm.
func loadLibrary(vm *scriptVM, md libraryMeta, code string, timeout time.Duration) (*funcLibrary, string) {
	proto, err := compileChunk(md.body, functionErrorSource)
	if err != nil {
		return nil, "Error compiling function: " + err.Error()
	}
	L := vm.L
	lib := &funcLibrary{name: md.name, code: code}
	vm.loading = lib
	ctx, cancel := context.Background(), context.CancelFunc(func() {})
	if timeout > 0 {
		ctx, cancel = context.WithTimeout(ctx, timeout)
	}
	L.SetContext(ctx)
	defer func() {
		cancel()
		L.RemoveContext()
		vm.loading = nil
		L.SetTop(0)
	}()
	fn := L.NewFunctionFromProto(proto)
	fn.Env = vm.fenv
	L.Push(fn)
	if err := L.PCall(0, 0, L.NewFunction(errorHandler)); err != nil {
		msg, _ := scriptError(err)
		if ctx.Err() != nil {
			msg = "ERR FUNCTION LOAD timeout"
		}
		return nil, "Error registering functions: " + msg
	}
	if len(lib.funcs) == 0 {
		return nil, "No functions registered"
	}
	slices.SortFunc(lib.funcs, func(a, b *luaFunction) int { return strings.Compare(a.name, b.name) })
	return lib, ""
}

// newFunctionVM returns a Lua state for function libraries: the sandbox scripts get, whose
// globals functions see through fenv, which shows only the library API (redis with
// register_function, log and the version) while a library's code runs at FUNCTION LOAD.
func newFunctionVM() *scriptVM {
	vm := newScriptVM()
	L := vm.L
	api := L.NewTable()
	api.RawSetString("register_function", L.NewFunction(vm.registerFunction))
	fields := vm.redisLib
	for _, name := range []string{"log", "LOG_DEBUG", "LOG_VERBOSE", "LOG_NOTICE", "LOG_WARNING",
		"REDIS_VERSION", "REDIS_VERSION_NUM"} {
		api.RawSetString(name, fields.RawGetString(name))
	}
	loadGlobals := L.NewTable()
	loadGlobals.RawSetString("redis", readonlyProxy(L, api, true))
	fenv := L.NewTable()
	mt := L.NewTable()
	mt.RawSetString("__index", L.NewFunction(func(L *lua.LState) int {
		t := vm.globals
		if vm.loading != nil {
			t = loadGlobals
		}
		key := L.Get(2)
		v := t.RawGet(key)
		if v == lua.LNil {
			L.RaiseError("Script attempted to access nonexistent global variable '%s'", key.String())
		}
		L.Push(v)
		return 1
	}))
	mt.RawSetString("__newindex", L.NewFunction(func(L *lua.LState) int {
		L.RaiseError("Attempt to modify a readonly table")
		return 0
	}))
	mt.RawSetString("__metatable", lua.LFalse)
	L.SetMetatable(fenv, mt)
	vm.fenv = fenv
	return vm
}

// functionFlagNames are the flags register_function takes, in the order FUNCTION LIST
// shows them.
var functionFlagNames = []struct {
	name string
	flag scriptFlags
}{
	{"no-writes", scriptNoWrites}, {"allow-oom", scriptAllowOOM}, {"allow-stale", scriptAllowStale},
	{"no-cluster", scriptNoCluster}, {"allow-cross-slot-keys", scriptAllowCrossSlot},
}

// registerFunction is redis.register_function, during FUNCTION LOAD only: positional (name,
// callback) or one table of named arguments (function_name, callback, description, flags).
func (vm *scriptVM) registerFunction(L *lua.LState) int {
	lib := vm.loading
	if lib == nil {
		raiseRedisError(L, "redis.register_function can only be called on FUNCTION LOAD command")
	}
	f := &luaFunction{lib: lib}
	switch L.GetTop() {
	case 1:
		t, ok := L.Get(1).(*lua.LTable)
		if !ok {
			raiseRedisError(L, "calling redis.register_function with a single argument is only applicable to Lua table (representing named arguments).")
		}
		hasName := false
		var errText string
		t.ForEach(func(k, v lua.LValue) {
			if errText != "" {
				return
			}
			key, ok := luaString(k)
			if !ok {
				errText = "named argument key given to redis.register_function is not a string"
				return
			}
			switch strings.ToLower(key) {
			case "function_name":
				if f.name, ok = luaString(v); !ok {
					errText = "function_name argument given to redis.register_function must be a string"
				}
				hasName = ok
			case "description":
				if f.desc, ok = luaString(v); !ok {
					errText = "description argument given to redis.register_function must be a string"
				}
				f.hasDesc = ok
			case "callback":
				if f.fn, ok = v.(*lua.LFunction); !ok {
					errText = "callback argument given to redis.register_function must be a function"
				}
			case "flags":
				ft, ok := v.(*lua.LTable)
				if !ok {
					errText = "flags argument to redis.register_function must be a table representing function flags"
					return
				}
				if f.flags, ok = readFunctionFlags(ft); !ok {
					errText = "unknown flag given"
				}
			default:
				errText = "unknown argument given to redis.register_function"
			}
		})
		switch {
		case errText != "":
			raiseRedisError(L, errText)
		case !hasName:
			raiseRedisError(L, "redis.register_function must get a function name argument")
		case f.fn == nil:
			raiseRedisError(L, "redis.register_function must get a callback argument")
		}
	case 2:
		name, ok := luaString(L.Get(1))
		if !ok {
			raiseRedisError(L, "first argument to redis.register_function must be a string")
		}
		fn, ok := L.Get(2).(*lua.LFunction)
		if !ok {
			raiseRedisError(L, "second argument to redis.register_function must be a function")
		}
		f.name, f.fn = name, fn
	default:
		raiseRedisError(L, "wrong number of arguments to redis.register_function")
	}
	if !validFunctionName(f.name) {
		raiseRedisError(L, errBadLibraryName)
	}
	for _, other := range lib.funcs {
		if other.name == f.name {
			raiseRedisError(L, "Function already exists in the library")
		}
	}
	lib.funcs = append(lib.funcs, f)
	return 0
}

// readFunctionFlags reads a flags table (t[1], t[2], … up to the first nil).
func readFunctionFlags(t *lua.LTable) (scriptFlags, bool) {
	var flags scriptFlags
	for i := 1; ; i++ {
		v := t.RawGetInt(i)
		if v == lua.LNil {
			return flags, true
		}
		s, ok := luaString(v)
		if !ok {
			return 0, false
		}
		found := false
		for _, fl := range functionFlagNames {
			if strings.EqualFold(fl.name, s) {
				flags |= fl.flag
				found = true
				break
			}
		}
		if !found {
			return 0, false
		}
	}
}

// luaString is Lua's lua_isstring + lua_tostring: a string, or a number as Lua prints it.
func luaString(v lua.LValue) (string, bool) {
	switch v := v.(type) {
	case lua.LString:
		return string(v), true
	case lua.LNumber:
		return formatLuaG14(float64(v)), true
	}
	return "", false
}
