package script

import (
	"reflect"
	"strings"
	"testing"

	"shardis/codec"
)

const libA = `#!lua name=liba
redis.register_function('echo_a', function(keys, args) return {keys[1], args[1]} end)
redis.register_function{function_name='ro_a', callback=function() return redis.call('get', 'k') end,
  description='reads', flags={'no-writes', 'allow-stale'}}
`

// fcall calls the function name of eng's current libraries as FCALL does, and returns its
// reply.
func fcall(t *testing.T, eng *Functions, name string, keys, argv []string, caller Caller) string {
	t.Helper()
	set := eng.Current()
	f := set.Lookup([]byte(name))
	if f == nil {
		return "not found"
	}
	r := eng.TakeRunner(set)
	defer eng.PutRunner(r)
	inv, ok := r.Function(f, bytesOf(keys), bytesOf(argv))
	if !ok {
		return "not loaded"
	}
	rs := Start(nil, inv.Name(), append([][]byte{[]byte("fcall"), []byte(name)}, bytesOf(keys)...), inv.IsFunction())
	defer rs.Finish()
	var w codec.Writer
	inv.Run(rs, caller, &w)
	return string(w.Buf)
}

// A library registers its functions; FCALL calls them by name in any case, with KEYS and ARGV
// as arguments, through a runner.
func TestFunctions_LoadAndCall(t *testing.T) {
	eng := NewFunctions(nil)
	persisted := ""
	lib, err := eng.Load(libA, false, LoadTimeout, func(lib *Library) { persisted = lib.Name() })
	if err != nil {
		t.Fatal(err)
	}
	if lib.Name() != "liba" || persisted != "liba" || lib.Code() != libA {
		t.Fatalf("library %q, persisted %q", lib.Name(), persisted)
	}
	set := eng.Current()
	if set.Len() != 1 || set.NumFunctions() != 2 {
		t.Fatalf("%d libraries, %d functions", set.Len(), set.NumFunctions())
	}
	f := set.Lookup([]byte("RO_A"))
	if f == nil || f.Name() != "ro_a" {
		t.Fatal("lookup ignoring case failed")
	}
	if desc, ok := f.Description(); !ok || desc != "reads" {
		t.Errorf("description %q %v", desc, ok)
	}
	if got := f.Flags().Names(); !reflect.DeepEqual(got, []string{"no-writes", "allow-stale"}) {
		t.Errorf("flags %q", got)
	}
	caller := &fakeCaller{replies: map[string]string{"get": "$1\r\nv\r\n"}}
	if got := fcall(t, eng, "echo_a", []string{"k1"}, []string{"a1"}, caller); got != "*2\r\n$2\r\nk1\r\n$2\r\na1\r\n" {
		t.Errorf("echo_a: %q", got)
	}
	if got := fcall(t, eng, "ro_a", nil, nil, caller); got != "$1\r\nv\r\n" {
		t.Errorf("ro_a: %q", got)
	}
	if l, fns, b := set.Footprint(); l != 1 || fns != 2 || b != len(libA) {
		t.Errorf("footprint %d %d %d", l, fns, b)
	}
}

// Changes are checked before persist runs; a refused change persists and publishes nothing.
func TestFunctions_Changes(t *testing.T) {
	eng := NewFunctions(nil)
	if _, err := eng.Load(libA, false, LoadTimeout, nil); err != nil {
		t.Fatal(err)
	}
	before := eng.Current()
	refuse := func(lib *Library) { t.Fatal("persist of a refused change") }
	for code, want := range map[string]string{
		libA:                              "ERR Library 'liba' already exists",
		"return 1":                        "ERR Missing library metadata",
		"#!lua\nreturn 1":                 "ERR Library name was not given",
		"#!lua name=b-c\nreturn 1":        "ERR Library names can only contain letters",
		"#!js name=b\nreturn 1":           "ERR Engine 'js' not found",
		"#!lua name=b\nreturn 1":          "ERR No functions registered",
		"#!lua name=b\nredis.call('x')":   "Script attempted to access nonexistent global variable 'call'",
		"#!lua name=b\nlocal x = ":        "ERR Error compiling function",
		"#!lua name=b\nwhile true do end": "FUNCTION LOAD timeout",
		"#!lua name=b\nredis.register_function('echo_a', function() end)": "ERR Function echo_a already exists",
	} {
		_, err := eng.Load(code, false, 50e6, refuse)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %q", code, err, want)
		}
	}
	if eng.Current() != before {
		t.Fatal("a refused change was published")
	}
	if err := eng.Delete("nosuch", refuse); err != ErrLibraryNotFound {
		t.Fatalf("delete: %v", err)
	}
	replaced := strings.Replace(libA, "'echo_a'", "'echo_b'", 1)
	if _, err := eng.Load(replaced, true, LoadTimeout, nil); err != nil {
		t.Fatal(err)
	}
	if eng.Current().Lookup([]byte("echo_a")) != nil || eng.Current().Lookup([]byte("echo_b")) == nil {
		t.Fatal("REPLACE kept the old functions")
	}
	if before.Lookup([]byte("echo_a")) == nil {
		t.Fatal("an older set changed")
	}
	deleted := ""
	if err := eng.Delete("liba", func(lib *Library) { deleted = lib.Name() }); err != nil || deleted != "liba" {
		t.Fatalf("delete: %v %q", err, deleted)
	}
	if eng.Current().Len() != 0 {
		t.Fatal("library left after delete")
	}
}

// DUMP's payload restores with each policy; NewFunctions loads what was stored.
func TestFunctions_DumpRestore(t *testing.T) {
	src := NewFunctions([]StoredLibrary{{Name: "liba", Code: libA}, {Name: "bad", Code: "return 1"}})
	if src.Current().Len() != 1 {
		t.Fatalf("%d libraries loaded back", src.Current().Len())
	}
	codes, err := ParseDump(src.Current().Dump())
	if err != nil || len(codes) != 1 || codes[0] != libA {
		t.Fatalf("parse: %v %q", err, codes)
	}
	dst := NewFunctions(nil)
	var restored []string
	if err := dst.Restore(codes, RestoreAppend, func(libs []*Library) {
		for _, l := range libs {
			restored = append(restored, l.Name())
		}
	}); err != nil || !reflect.DeepEqual(restored, []string{"liba"}) {
		t.Fatalf("restore: %v %q", err, restored)
	}
	if err := dst.Restore(codes, RestoreAppend, nil); err == nil || err.Error() != "ERR Library liba already exists" {
		t.Fatalf("append over an existing library: %v", err)
	}
	if err := dst.Restore(codes, RestoreReplace, nil); err != nil {
		t.Fatalf("replace: %v", err)
	}
	if err := dst.Restore(nil, RestoreFlush, nil); err != nil || dst.Current().Len() != 0 {
		t.Fatalf("flush: %v, %d libraries", err, dst.Current().Len())
	}
}

// A runner made for an older set is not reused once the libraries changed.
func TestFunctions_RunnersFollowTheCurrentSet(t *testing.T) {
	eng := NewFunctions(nil)
	if _, err := eng.Load(libA, false, LoadTimeout, nil); err != nil {
		t.Fatal(err)
	}
	old := eng.Current()
	r := eng.TakeRunner(old)
	eng.PutRunner(r)
	if eng.TakeRunner(old) != r {
		t.Fatal("idle runner not reused")
	}
	eng.PutRunner(r)
	eng.Flush(nil)
	if got := eng.TakeRunner(eng.Current()); got == r {
		t.Fatal("runner of an older set reused")
	}
}

// The shebang is split as Redis splits it (sdssplitargs): a quoted name is the name, an
// unbalanced quote is invalid metadata; texts from redis-server 7.0.15.
func TestParseLibraryMeta_QuotedShebang_AsRedis(t *testing.T) {
	body := "\nredis.register_function('f', function() return 1 end)"
	cases := []struct{ shebang, name, err string }{
		{`#!lua name="bar"`, "bar", ""},
		{`#!"lua" name='q'`, "q", ""},
		{`#!lua "name=x"`, "x", ""},
		{`#!lua name="bar`, "", "Invalid library metadata"},
		{`#!lua name="b"x`, "", "Invalid library metadata"},
		{`#!lua name=a\x41`, `a\x41`, ""},
	}
	for _, tc := range cases {
		md, err := parseLibraryMeta(tc.shebang + body)
		if md.name != tc.name || err != tc.err || (err == "" && md.engine != "lua") {
			t.Errorf("%s: name %q engine %q err %q, want name %q err %q", tc.shebang, md.name, md.engine, err, tc.name, tc.err)
		}
	}
}
