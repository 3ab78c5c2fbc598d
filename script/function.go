package script

import (
	"context"
	"errors"
	"log"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	lua "github.com/yuin/gopher-lua"

	"shardis/codec"
)

// Function libraries (FUNCTION LOAD, FCALL), as Redis 7.0 has them.
//
// A Functions is the engine of one store's libraries: one Lua state in which FUNCTION LOAD
// checks and registers libraries, an immutable Libraries of the libraries and their
// functions, replaced whole on every change, which FUNCTION LIST, DUMP and STATS read without
// a lock, and the runners FCALL takes (Lua states with every library loaded,
// function_runner.go), so that functions holding disjoint shards run at the same time.
// Keeping the libraries' code on disk and logging the changes is the caller's (cmds keeps
// them in shard 0's state keys): each change takes a persist func, which it calls once the
// change is checked and before it is published.
//
// Ownership: Functions.mu owns the engine's Lua state and serializes changes. A change takes
// it (FUNCTION LOAD holds shard 0 meanwhile) and never waits for a shard while holding it.
// FCALL takes a runner, owned by its goroutine until it gives it back; it takes no lock while
// the function runs.

// Library is one loaded library. Immutable once loaded.
type Library struct {
	name  string
	code  string      // the whole code, shebang included, as FUNCTION LOAD got it
	funcs []*Function // sorted by name
}

// Name returns the library's name (from its shebang's name=).
func (l *Library) Name() string { return l.name }

// Code returns the library's whole code, shebang included, as FUNCTION LOAD got it.
func (l *Library) Code() string { return l.code }

// Functions returns the library's functions by name; the caller must not change the slice.
func (l *Library) Functions() []*Function { return l.funcs }

// Function is one registered function. Immutable once its library is loaded, but for its
// wide mark.
type Function struct {
	name    string
	desc    string
	hasDesc bool
	flags   Flags
	fn      *lua.LFunction // lives in the engine's Lua state; FCALL runs its runner's copy
	lib     *Library
	// wide: a call strayed beyond its declared keys' shards, so later calls hold every
	// shard from the start (Invocation.MarkWide).
	wide atomic.Bool
}

// Name returns the function's name as registered.
func (f *Function) Name() string { return f.name }

// Description returns the function's description, and false when it was given none.
func (f *Function) Description() (string, bool) { return f.desc, f.hasDesc }

// Flags returns the function's flags (never FlagShebang).
func (f *Function) Flags() Flags { return f.flags }

// Wide reports whether a call of the function strayed beyond its declared keys' shards.
func (f *Function) Wide() bool { return f.wide.Load() }

// Libraries is every library of a store. Immutable: a change makes a new one.
type Libraries struct {
	libs  map[string]*Library  // by name (case-sensitive, as Redis)
	funcs map[string]*Function // by lower-case name (Redis looks functions up ignoring case)
}

func newLibraries() *Libraries {
	return &Libraries{libs: map[string]*Library{}, funcs: map[string]*Function{}}
}

func (s *Libraries) clone() *Libraries {
	n := newLibraries()
	for k, v := range s.libs {
		n.libs[k] = v
	}
	for k, v := range s.funcs {
		n.funcs[k] = v
	}
	return n
}

func (s *Libraries) add(lib *Library) {
	s.libs[lib.name] = lib
	for _, f := range lib.funcs {
		s.funcs[strings.ToLower(f.name)] = f
	}
}

func (s *Libraries) remove(lib *Library) {
	delete(s.libs, lib.name)
	for _, f := range lib.funcs {
		delete(s.funcs, strings.ToLower(f.name))
	}
}

// join adds libs to s (a clone): an existing library of the same name is an error, or is
// replaced with replace; a function whose name another library has is an error. It returns
// Redis's error text (without the ERR code), or "".
func (s *Libraries) join(libs []*Library, replace bool, quoteLib bool) string {
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

// Sorted returns the libraries by name.
func (s *Libraries) Sorted() []*Library {
	libs := make([]*Library, 0, len(s.libs))
	for _, l := range s.libs {
		libs = append(libs, l)
	}
	slices.SortFunc(libs, func(a, b *Library) int { return strings.Compare(a.name, b.name) })
	return libs
}

// Len returns the number of libraries.
func (s *Libraries) Len() int { return len(s.libs) }

// NumFunctions returns the number of functions of every library.
func (s *Libraries) NumFunctions() int { return len(s.funcs) }

// Footprint returns what INFO memory shows of the libraries: how many, their functions
// (counted by library: two names a library registered differing only in case count twice,
// unlike NumFunctions) and the bytes of their code.
func (s *Libraries) Footprint() (libs, funcs, codeBytes int) {
	for _, lib := range s.libs {
		libs++
		funcs += len(lib.funcs)
		codeBytes += len(lib.code)
	}
	return libs, funcs, codeBytes
}

// Dump returns FUNCTION DUMP's payload of the libraries (function_dump.go).
func (s *Libraries) Dump() []byte { return dumpFunctions(s.Sorted()) }

// Functions is one store's libraries and the Lua state they live in (see above). Safe for
// concurrent use.
type Functions struct {
	mu      sync.Mutex // owns vm; serializes changes
	vm      *VM        // where FUNCTION LOAD checks and registers libraries
	set     atomic.Pointer[Libraries]
	runners runnerPool // the states FCALL runs functions in (function_runner.go)
}

// StoredLibrary is a library as the caller kept it: its name (for the log) and its code.
type StoredLibrary struct {
	Name, Code string
}

// NewFunctions returns the engine of libraries read back from disk: each is loaded with no
// time bound; one that fails (never for what FUNCTION LOAD checked and stored) is logged and
// left out.
func NewFunctions(stored []StoredLibrary) *Functions {
	e := &Functions{vm: newFunctionVM()}
	set := newLibraries()
	for _, sl := range stored {
		lib, errText := e.compile(sl.Code, 0)
		if errText == "" {
			errText = set.join([]*Library{lib}, false, true)
		}
		if errText != "" {
			log.Printf("functions: library %q not loaded: %s", sl.Name, errText)
		}
	}
	e.set.Store(set)
	return e
}

// Current returns the libraries now. It stays valid (and unchanged) after later changes.
func (e *Functions) Current() *Libraries { return e.set.Load() }

// LoadTimeout bounds the run of a library's code at FUNCTION LOAD, as Redis's.
const LoadTimeout = 500 * time.Millisecond

// ErrLibraryNotFound is FUNCTION DELETE's error for a library that does not exist.
var ErrLibraryNotFound = errors.New("ERR Library not found")

// replyError returns Redis's error reply text for an engine error text (ERR code).
func replyError(errText string) error { return errors.New("ERR " + errText) }

// Load is FUNCTION LOAD: it checks code's library, runs its code (bounded by timeout; 0 for
// none: a replay applies what the master accepted whatever it takes), which registers its
// functions, and adds it, replacing the library of the same name when replace. persist (may
// be nil) runs under the engine's lock once every check passed, before the change is
// published; it must not fail. The error is Redis's reply text.
func (e *Functions) Load(code string, replace bool, timeout time.Duration, persist func(lib *Library)) (*Library, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	md, errText := checkLibrary(code)
	if errText != "" {
		return nil, replyError(errText)
	}
	set := e.Current()
	if set.libs[md.name] != nil && !replace {
		return nil, replyError("Library '" + md.name + "' already exists")
	}
	lib, errText := e.run(md, code, timeout)
	if errText != "" {
		return nil, replyError(errText)
	}
	next := set.clone()
	if errText := next.join([]*Library{lib}, true, true); errText != "" {
		return nil, replyError(errText)
	}
	if persist != nil {
		persist(lib)
	}
	e.set.Store(next)
	return lib, nil
}

// Delete is FUNCTION DELETE: it removes the library called name (ErrLibraryNotFound). persist
// as for Load.
func (e *Functions) Delete(name string, persist func(lib *Library)) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	set := e.Current()
	lib := set.libs[name]
	if lib == nil {
		return ErrLibraryNotFound
	}
	next := set.clone()
	next.remove(lib)
	if persist != nil {
		persist(lib)
	}
	e.set.Store(next)
	return nil
}

// Flush is FUNCTION FLUSH: it removes every library. persist as for Load.
func (e *Functions) Flush(persist func()) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if persist != nil {
		persist()
	}
	e.set.Store(newLibraries())
}

// RestorePolicy is what FUNCTION RESTORE does with the libraries there are.
type RestorePolicy int

const (
	RestoreAppend  RestorePolicy = iota // add the restored libraries; a name taken is an error
	RestoreReplace                      // add them, replacing the libraries of the same names
	RestoreFlush                        // remove every library first
)

// Restore is FUNCTION RESTORE of the libraries' codes (from ParseDump), loaded with no time
// bound, with policy. persist (may be nil) gets the restored libraries, as for Load. The
// error is Redis's reply text.
func (e *Functions) Restore(codes []string, policy RestorePolicy, persist func(libs []*Library)) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	restored := newLibraries()
	var libs []*Library
	for _, code := range codes {
		lib, errText := e.compile(code, 0)
		if errText == "" {
			errText = restored.join([]*Library{lib}, false, true)
		}
		if errText != "" {
			return replyError(errText)
		}
		libs = append(libs, lib)
	}
	next := restored
	if policy != RestoreFlush {
		next = e.Current().clone()
		if errText := next.join(libs, policy == RestoreReplace, false); errText != "" {
			return replyError(errText)
		}
	}
	if persist != nil {
		persist(libs)
	}
	e.set.Store(next)
	return nil
}

// Lookup returns the function called name (any case), or nil.
func (s *Libraries) Lookup(name []byte) *Function {
	for _, ch := range name {
		if 'A' <= ch && ch <= 'Z' {
			return s.funcs[strings.ToLower(string(name))]
		}
	}
	return s.funcs[string(name)]
}

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
	// Redis splits the shebang with sdssplitargs: name="foo" is name=foo, an unbalanced
	// quote makes it invalid.
	parts, ok := codec.SplitArgs(code[:end])
	if !ok || len(parts) == 0 {
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
func (e *Functions) compile(code string, timeout time.Duration) (*Library, string) {
	md, errText := checkLibrary(code)
	if errText != "" {
		return nil, errText
	}
	return e.run(md, code, timeout)
}

func (e *Functions) run(md libraryMeta, code string, timeout time.Duration) (*Library, string) {
	return loadLibrary(e.vm, md, code, timeout)
}

// loadLibrary compiles a library's code and runs it in vm, which registers its functions.
// The caller owns vm.
func loadLibrary(vm *VM, md libraryMeta, code string, timeout time.Duration) (*Library, string) {
	proto, err := compileChunk(md.body, functionErrorSource)
	if err != nil {
		return nil, "Error compiling function: " + err.Error()
	}
	L := vm.state
	lib := &Library{name: md.name, code: code}
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
	slices.SortFunc(lib.funcs, func(a, b *Function) int { return strings.Compare(a.name, b.name) })
	return lib, ""
}

// newFunctionVM returns a Lua state for function libraries: the sandbox scripts get, whose
// globals functions see through fenv, which shows only the library API (redis with
// register_function, log and the version) while a library's code runs at FUNCTION LOAD.
func newFunctionVM() *VM {
	vm := newVM()
	L := vm.state
	api := L.NewTable()
	api.RawSetString("register_function", L.NewFunction(vm.registerFunction))
	fields := vm.redisLib
	for _, name := range []string{"log", "LOG_DEBUG", "LOG_VERBOSE", "LOG_NOTICE", "LOG_WARNING",
		"REDIS_VERSION", "REDIS_VERSION_NUM"} {
		api.RawSetString(name, fields.RawGetString(name))
	}
	loadGlobals := L.NewTable()
	loadGlobals.RawSetString("redis", vm.readonly(api, true))
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
	mt.RawSetString("__newindex", vm.refuseWrite)
	L.SetMetatable(fenv, mt)
	vm.ro[fenv] = roView{target: vm.globals, meta: lua.LNil}
	vm.showErrorMeta(fenv)
	vm.fenv = fenv
	L.Env = fenv
	return vm
}

// functionFlagNames are the flags register_function takes, in the order FUNCTION LIST
// shows them.
var functionFlagNames = []struct {
	name string
	flag Flags
}{
	{"no-writes", FlagNoWrites}, {"allow-oom", FlagAllowOOM}, {"allow-stale", FlagAllowStale},
	{"no-cluster", FlagNoCluster}, {"allow-cross-slot-keys", FlagAllowCrossSlot},
}

// Names returns the names of the flags set, in the order FUNCTION LIST shows them
// (FlagShebang has none).
func (fl Flags) Names() []string {
	var names []string
	for _, n := range functionFlagNames {
		if fl&n.flag != 0 {
			names = append(names, n.name)
		}
	}
	return names
}

// registerFunction is redis.register_function, during FUNCTION LOAD only: positional (name,
// callback) or one table of named arguments (function_name, callback, description, flags).
func (vm *VM) registerFunction(L *lua.LState) int {
	lib := vm.loading
	if lib == nil {
		raiseRedisError(L, "redis.register_function can only be called on FUNCTION LOAD command")
	}
	f := &Function{lib: lib}
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
func readFunctionFlags(t *lua.LTable) (Flags, bool) {
	var flags Flags
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
