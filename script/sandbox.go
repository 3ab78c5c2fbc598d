package script

import (
	lua "github.com/yuin/gopher-lua"
)

// The read-only environment. Redis 7.0 marks the globals table, every library table and the
// string metatable read-only (its Lua has a readonly flag on tables), so that no script leaves
// anything behind for the next one in the same Lua state. gopher-lua has no such flag, so a
// VM shows scripts proxies instead: an empty table whose metatable reads the real table
// (__index) and refuses writes (__newindex). What could still reach a proxy's own slots or its
// metatable is wrapped: rawset, setmetatable and table.insert refuse a proxy with Redis's text;
// rawget, next and pairs read the table it shows; getmetatable shows what Redis shows (nothing
// for a library, a read-only view of the globals' error metatable). Strings' metatable is a
// table scripts never get: getmetatable('') returns a read-only view of it. Chunks made at run
// time (loadstring, load) get the proxy of the globals as their environment (the state's Env),
// not the table of every base function gopher-lua opened.
//
// The proxies are built once per VM; a run costs nothing more than the proxies' __index (a
// table, followed by gopher-lua without a call), and only the wrapped functions look a table
// up in the VM's map of proxies.

// errReadonly is Redis's text for a write to a read-only table.
const errReadonly = "Attempt to modify a readonly table"

// roView is what a read-only proxy shows: the table it reads, and what getmetatable returns
// for it (nil for a library, a read-only view of the error metatable for the globals).
type roView struct {
	target *lua.LTable
	meta   lua.LValue
}

// readonly returns a proxy that reads t and refuses every write with Redis's error (raised at
// the script's line, as Redis's VM raises it); strict makes reading a key t lacks an error too
// (the globals). The VM remembers it for the wrapped base functions.
func (vm *VM) readonly(t *lua.LTable, strict bool) *lua.LTable {
	L := vm.state
	proxy := L.NewTable()
	mt := L.NewTable()
	if strict {
		mt.RawSetString("__index", L.NewFunction(func(L *lua.LState) int {
			key := L.Get(2)
			v := t.RawGet(key)
			if v == lua.LNil {
				L.RaiseError("Script attempted to access nonexistent global variable '%s'", key.String())
			}
			L.Push(v)
			return 1
		}))
	} else {
		mt.RawSetString("__index", t)
	}
	mt.RawSetString("__newindex", vm.refuseWrite)
	L.SetMetatable(proxy, mt)
	vm.ro[proxy] = roView{target: t, meta: lua.LNil}
	return proxy
}

// raiseReadonly raises Redis's error for a write a C function refuses (rawset, setmetatable,
// table.insert): without a position, as luaL_error in a C function gives none.
func raiseReadonly(L *lua.LState) {
	L.Error(lua.LString(errReadonly), 0)
}

// shownTable returns the table a script's table value stands for: a proxy's target, or the
// value itself.
func (vm *VM) shownTable(t *lua.LTable) *lua.LTable {
	if v, ok := vm.ro[t]; ok {
		return v.target
	}
	return t
}

// protectBase replaces, in g (the real globals) and tableLib, the functions that reach a
// table's own slots or metatable with ones that respect the proxies, and gives strings a
// metatable scripts only see read-only. stringLib is the proxy of the string library.
func (vm *VM) protectBase(g, tableLib, stringLib *lua.LTable) {
	L := vm.state
	g.RawSetString("rawset", L.NewFunction(func(L *lua.LState) int {
		t := L.CheckTable(1)
		k, v := L.CheckAny(2), L.CheckAny(3)
		if _, ok := vm.ro[t]; ok {
			raiseReadonly(L)
		}
		L.RawSet(t, k, v)
		L.SetTop(1)
		return 1
	}))
	g.RawSetString("rawget", L.NewFunction(func(L *lua.LState) int {
		L.Push(L.RawGet(vm.shownTable(L.CheckTable(1)), L.CheckAny(2)))
		return 1
	}))
	next := L.NewFunction(func(L *lua.LState) int {
		t := vm.shownTable(L.CheckTable(1))
		k, v := t.Next(L.Get(2))
		if k == lua.LNil {
			L.Push(lua.LNil)
			return 1
		}
		L.Push(k)
		L.Push(v)
		return 2
	})
	baseNext := g.RawGetString("next")
	g.RawSetString("next", next)
	g.RawSetString("pairs", L.NewFunction(func(L *lua.LState) int {
		t := L.CheckTable(1)
		if _, ok := vm.ro[t]; ok {
			L.Push(next)
		} else {
			L.Push(baseNext) // no lookup per step for the script's own tables
		}
		L.Push(t)
		L.Push(lua.LNil)
		return 3
	}))
	g.RawSetString("getmetatable", L.NewFunction(func(L *lua.LState) int {
		obj := L.CheckAny(1)
		if t, ok := obj.(*lua.LTable); ok {
			if v, ok := vm.ro[t]; ok {
				L.Push(v.meta)
				return 1
			}
		}
		L.Push(L.GetMetatable(obj))
		return 1
	}))
	g.RawSetString("setmetatable", vm.refusingProxy(g.RawGetString("setmetatable").(*lua.LFunction), 1))
	tableLib.RawSetString("insert", vm.refusingProxy(tableLib.RawGetString("insert").(*lua.LFunction), 0))

	// Strings' metatable, which getmetatable('') shows read-only.
	shown := L.NewTable()
	shown.RawSetString("__index", stringLib)
	mt := L.NewTable()
	mt.RawSetString("__index", stringLib)
	mt.RawSetString("__metatable", vm.readonly(shown, false))
	L.SetMetatable(lua.LString(""), mt)
}

// refusingProxy wraps base, a function whose first argument is the table it changes, so that
// it refuses a read-only proxy with Redis's error; it returns base's first nret results.
func (vm *VM) refusingProxy(base *lua.LFunction, nret int) *lua.LFunction {
	return vm.state.NewFunction(func(L *lua.LState) int {
		if t, ok := L.Get(1).(*lua.LTable); ok {
			if _, ok := vm.ro[t]; ok {
				raiseReadonly(L)
			}
		}
		L.Insert(base, 1)
		L.Call(L.GetTop()-1, nret)
		return nret
	})
}

// readonlyLib returns the proxy of a library table, its table values made read-only too
// (Redis protects every table reachable from the globals).
func (vm *VM) readonlyLib(t *lua.LTable) *lua.LTable {
	return vm.readonlyTree(t, map[*lua.LTable]*lua.LTable{})
}

// readonlyTree is readonlyLib; made maps each table already given a proxy to it (a table
// that holds itself, as gopher-lua's string library does, gets its own proxy).
func (vm *VM) readonlyTree(t *lua.LTable, made map[*lua.LTable]*lua.LTable) *lua.LTable {
	if p, ok := made[t]; ok {
		return p
	}
	proxy := vm.readonly(t, false)
	made[t] = proxy
	var nested []lua.LValue
	t.ForEach(func(k, v lua.LValue) {
		if sub, ok := v.(*lua.LTable); ok {
			if _, isProxy := vm.ro[sub]; !isProxy {
				nested = append(nested, k)
			}
		}
	})
	for _, k := range nested {
		t.RawSet(k, vm.readonlyTree(t.RawGet(k).(*lua.LTable), made))
	}
	return proxy
}

// readonlyGlobals returns the strict proxy of the globals g, which getmetatable shows with
// Redis's error metatable (its __index), read-only.
func (vm *VM) readonlyGlobals(g *lua.LTable) *lua.LTable {
	env := vm.readonly(g, true)
	vm.showErrorMeta(env)
	return env
}

// showErrorMeta makes getmetatable(proxy) show a read-only table whose __index is the
// proxy's own (the error for a global that does not exist), as Redis shows the globals'.
func (vm *VM) showErrorMeta(proxy *lua.LTable) {
	errMeta := vm.state.NewTable()
	errMeta.RawSetString("__index", proxy.Metatable.(*lua.LTable).RawGetString("__index"))
	v := vm.ro[proxy]
	v.meta = vm.readonly(errMeta, false)
	vm.ro[proxy] = v
}
