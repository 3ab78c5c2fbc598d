package cmds

import (
	"log"
	"runtime"
	"sync"
	"weak"

	"shardis/script"
	"shardis/shard"
)

// Where function libraries live. Libraries are data: each one's code is kept in shard 0 under
// the state key 's' 'f' · name (shard/state.go, docs/ENCODING.md), written in the FUNCTION
// command's WriteBatch with its binlog record, so they survive a restart and replicate. In
// memory, each store has one engine (script.Functions), made at the first function command,
// which reads the libraries back from disk.

// storeFunctions is a store's function engine, made once (loaded).
type storeFunctions struct {
	loaded sync.Once
	eng    *script.Functions
}

// engines maps each store (by a weak pointer, so a closed store can go: tests open many) to
// its *storeFunctions. A sync.Map: read by every FCALL, written once per store.
var engines sync.Map

// functionStatePrefix is the state key prefix of libraries: 's' 'f' · library name.
var functionStatePrefix = []byte("f")

// functionsOf returns the engine of the store c runs against, loading the store's libraries
// on first use.
func functionsOf(c *Ctx) *script.Functions {
	var st *shard.Store
	if c.Tx != nil {
		st = c.Tx.Store()
	} else {
		st = c.Keyspace.Store
	}
	key := weak.Make(st)
	v, ok := engines.Load(key)
	if !ok {
		var loaded bool
		if v, loaded = engines.LoadOrStore(key, &storeFunctions{}); !loaded {
			runtime.AddCleanup(st, func(k weak.Pointer[shard.Store]) { engines.Delete(k) }, key)
		}
	}
	sf := v.(*storeFunctions)
	sf.loaded.Do(func() { sf.eng = loadFunctions(st) })
	return sf.eng
}

// loadFunctions makes the engine of the libraries st keeps.
func loadFunctions(st *shard.Store) *script.Functions {
	var stored []script.StoredLibrary
	err := st.ReadStatePrefix(functionStateShard, functionStatePrefix, func(name, code []byte) {
		stored = append(stored, script.StoredLibrary{Name: string(name), Code: string(code)})
	})
	eng := script.NewFunctions(stored)
	if err != nil {
		log.Printf("functions: %v", err)
	}
	return eng
}

// FunctionsFootprint returns how many libraries and functions the server's store holds and
// the bytes of their code (INFO memory). It makes the store's engine (a Lua state) only when
// the store holds a library: INFO on a server without functions costs one short read.
func FunctionsFootprint(c *Ctx) (libs, funcs, codeBytes int64) {
	st := c.Keyspace.Store
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
	l, f, b := functionsOf(c).Current().Footprint()
	return int64(l), int64(f), int64(b)
}

// ReloadFunctions makes the next function command read st's libraries again: a replica's
// full sync replaced them.
func ReloadFunctions(st *shard.Store) { engines.Delete(weak.Make(st)) }
