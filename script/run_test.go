package script

import (
	"strings"
	"testing"
	"time"

	"shardis/codec"
)

// fakeCaller answers redis.call from a table of RESP replies by command name and records
// what the script called.
type fakeCaller struct {
	replies map[string]string
	calls   []string // each call's arguments joined by spaces
	resp3   []bool
}

func (f *fakeCaller) Call(args [][]byte, resp3 bool) []byte {
	parts := make([]string, len(args))
	for i, a := range args {
		parts[i] = string(a)
	}
	f.calls = append(f.calls, strings.Join(parts, " "))
	f.resp3 = append(f.resp3, resp3)
	if r, ok := f.replies[strings.ToLower(parts[0])]; ok {
		return []byte(r)
	}
	return []byte("-ERR Unknown Redis command called from script\r\n")
}

func (f *fakeCaller) ACLCheck(args [][]byte) (exists, allowed bool) {
	_, ok := f.replies[strings.ToLower(string(args[0]))]
	return ok, ok
}

// runScript loads body in a fresh cache and runs it with keys and argv against caller, and
// returns the reply (or error reply) as written.
func runScript(t *testing.T, body string, keys, argv []string, caller Caller) string {
	t.Helper()
	s, err := NewCache(1 << 20).Load([]byte(body))
	if err != nil {
		t.Fatalf("load %q: %v", body, err)
	}
	vm := GetVM()
	defer PutVM(vm)
	inv := vm.Script(s, bytesOf(keys), bytesOf(argv))
	rs := Start(nil, inv.Name(), nil, inv.IsFunction())
	defer rs.Finish()
	var w codec.Writer
	inv.Run(rs, caller, &w)
	return string(w.Buf)
}

func bytesOf(ss []string) [][]byte {
	out := make([][]byte, len(ss))
	for i, s := range ss {
		out[i] = []byte(s)
	}
	return out
}

// redis.call hands the command to the Caller and converts its reply; errors end the script
// with Redis's error reply, naming the script and line; pcall returns them as tables.
func TestRun_RedisCallThroughCaller(t *testing.T) {
	caller := &fakeCaller{replies: map[string]string{
		"get":     "$3\r\nbar\r\n",
		"incr":    "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n",
		"hgetall": "*2\r\n$1\r\nf\r\n$1\r\nv\r\n",
	}}
	if got := runScript(t, "return redis.call('get', KEYS[1])", []string{"k"}, nil, caller); got != "$3\r\nbar\r\n" {
		t.Errorf("get: %q", got)
	}
	if len(caller.calls) != 1 || caller.calls[0] != "get k" {
		t.Errorf("calls: %q", caller.calls)
	}
	sha := scriptSHA([]byte("\nreturn redis.call('incr', 'k')"))
	want := "-WRONGTYPE Operation against a key holding the wrong kind of value script: " + sha + ", on @user_script:2.\r\n"
	if got := runScript(t, "\nreturn redis.call('incr', 'k')", nil, nil, caller); got != want {
		t.Errorf("error reply:\n got  %q\n want %q", got, want)
	}
	if got := runScript(t, "return redis.pcall('incr', 'k').err", nil, nil, caller); got != "$65\r\nWRONGTYPE Operation against a key holding the wrong kind of value\r\n" {
		t.Errorf("pcall: %q", got)
	}
	if got := runScript(t, "return redis.pcall('nosuch').err", nil, nil, caller); got != "$44\r\nERR Unknown Redis command called from script\r\n" {
		t.Errorf("refusal: %q", got)
	}
	if got := runScript(t, "return redis.call('hgetall', ARGV[1], 7)", nil, []string{"h"}, caller); got != "*2\r\n$1\r\nf\r\n$1\r\nv\r\n" {
		t.Errorf("array: %q", got)
	}
	if last := caller.calls[len(caller.calls)-1]; last != "hgetall h 7" {
		t.Errorf("number argument: %q", last)
	}
}

// What the engine refuses itself never reaches the Caller.
func TestRun_ArgumentsCheckedBeforeTheCaller(t *testing.T) {
	caller := &fakeCaller{replies: map[string]string{"get": "$-1\r\n"}}
	for code, want := range map[string]string{
		"return redis.pcall().err":                                   "ERR Please specify at least one argument for this redis lib call",
		"return redis.pcall('get', {}).err":                          "ERR Lua redis lib command arguments must be strings or integers",
		"return redis.pcall('get', true).err":                        "ERR Lua redis lib command arguments must be strings or integers",
		"return redis.acl_check_cmd('get')":                          "1",
		"local _, e = pcall(redis.acl_check_cmd, 'nosuch') return e": "ERR Invalid command passed to redis.acl_check_cmd()",
	} {
		got := runScript(t, code, nil, nil, caller)
		if !strings.Contains(got, want) {
			t.Errorf("%s: %q, want %q in it", code, got, want)
		}
	}
	if len(caller.calls) != 0 {
		t.Errorf("the caller was called: %q", caller.calls)
	}
}

// redis.setresp(3) asks the Caller for RESP3 replies and makes the script's own reply follow
// RESP3's conversions.
func TestRun_SetRESP3(t *testing.T) {
	caller := &fakeCaller{replies: map[string]string{"hgetall": "%1\r\n$1\r\nf\r\n$1\r\nv\r\n"}}
	got := runScript(t, "redis.setresp(3) local m = redis.call('hgetall', 'h') return m.map.f", nil, nil, caller)
	if got != "$1\r\nv\r\n" || len(caller.resp3) != 1 || !caller.resp3[0] {
		t.Fatalf("reply %q, resp3 %v", got, caller.resp3)
	}
	if got := runScript(t, "redis.setresp(2) return redis.call('hgetall', 'h') ~= nil", nil, nil, caller); got != ":1\r\n" || caller.resp3[1] {
		t.Fatalf("RESP2: reply %q, resp3 %v", got, caller.resp3)
	}
}

// A run stops at its next instruction once interrupted, even in a loop that calls nothing; a
// killed one says SCRIPT KILL stopped it.
func TestRun_InterruptAndKill(t *testing.T) {
	s, err := NewCache(1 << 20).Load([]byte("while true do end"))
	if err != nil {
		t.Fatal(err)
	}
	for _, kill := range []bool{false, true} {
		vm := GetVM()
		inv := vm.Script(s, nil, nil)
		rs := Start(nil, inv.Name(), nil, false)
		go func() {
			time.Sleep(20 * time.Millisecond)
			if kill {
				rs.killed.Store(true)
			}
			rs.Interrupt()
		}()
		var w codec.Writer
		inv.Run(rs, &fakeCaller{}, &w)
		rs.Finish()
		PutVM(vm)
		got := string(w.Buf)
		if !strings.HasPrefix(got, "-") || !strings.Contains(got, "script: "+s.SHA()) {
			t.Fatalf("kill %v: %q", kill, got)
		}
		if killed := strings.HasPrefix(got, "-ERR Script killed by user with SCRIPT KILL..."); killed != kill {
			t.Fatalf("kill %v: %q", kill, got)
		}
	}
}

// A VM keeps no state of a run: KEYS and ARGV are the run's, and redis.setresp does not carry
// over.
func TestRun_VMReusedAcrossRuns(t *testing.T) {
	vm := newVM()
	defer vm.state.Close()
	cache := NewCache(1 << 20)
	s, _ := cache.Load([]byte("redis.setresp(3) return {#KEYS, #ARGV}"))
	s2, _ := cache.Load([]byte("return {#KEYS, #ARGV, redis.call('x')}"))
	caller := &fakeCaller{replies: map[string]string{"x": "+OK\r\n"}}
	for i, tc := range []struct {
		s          *Script
		keys, argv []string
		want       string
	}{
		{s, []string{"a", "b"}, []string{"c"}, "*2\r\n:2\r\n:1\r\n"},
		{s2, nil, []string{"c"}, "*3\r\n:0\r\n:1\r\n+OK\r\n"},
	} {
		inv := vm.Script(tc.s, bytesOf(tc.keys), bytesOf(tc.argv))
		rs := Start(nil, inv.Name(), nil, false)
		var w codec.Writer
		inv.Run(rs, caller, &w)
		rs.Finish()
		if string(w.Buf) != tc.want {
			t.Errorf("run %d: %q, want %q", i, w.Buf, tc.want)
		}
	}
	if len(caller.resp3) != 1 || caller.resp3[0] {
		t.Errorf("RESP3 carried over to the next run: %v", caller.resp3)
	}
}

// A small script as applications run them (a redis.call, a global library call, a string
// method and a table), run again and again in one pooled VM: what the sandbox costs per run.
func BenchmarkRun_SmallScript(b *testing.B) {
	s, err := NewCache(1 << 20).Load([]byte(
		"local v = redis.call('get', KEYS[1]) local t = {v, string.len(v), v:upper()} return #t"))
	if err != nil {
		b.Fatal(err)
	}
	caller := &fakeCaller{replies: map[string]string{"get": "$3\r\nabc\r\n"}}
	keys, argv := bytesOf([]string{"k"}), bytesOf([]string{"a"})
	var w codec.Writer
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		caller.calls, caller.resp3 = caller.calls[:0], caller.resp3[:0]
		vm := GetVM()
		inv := vm.Script(s, keys, argv)
		rs := Start(nil, inv.Name(), nil, inv.IsFunction())
		w.Buf = w.Buf[:0]
		inv.Run(rs, caller, &w)
		rs.Finish()
		PutVM(vm)
	}
	if string(w.Buf) != ":3\r\n" {
		b.Fatalf("reply %q", w.Buf)
	}
}
