package cmds_test

import (
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"shardis/internal/testserver"
)

const counterLib = `#!lua name=counter
redis.register_function('counter_incr', function(keys, args)
  return redis.call('INCRBY', keys[1], args[1])
end)
redis.register_function{function_name='counter_get', callback=function(keys)
  return redis.call('GET', keys[1])
end, flags={'no-writes'}, description='reads the counter'}
`

// go-redis's FunctionLoad and FCall: the function runs its commands; FCALL_RO runs only a
// no-writes function.
func TestFunction_GoRedisLoadAndFCall(t *testing.T) {
	s := testserver.Start(t)
	c := s.Client(t)
	name, err := c.FunctionLoad(testCtx, counterLib).Result()
	if err != nil || name != "counter" {
		t.Fatalf("FUNCTION LOAD: %q %v", name, err)
	}
	for i := 1; i <= 3; i++ {
		n, err := c.FCall(testCtx, "counter_incr", []string{"n:{a}"}, 5).Int()
		if err != nil || n != 5*i {
			t.Fatalf("FCALL %d: %d %v", i, n, err)
		}
	}
	if v, err := c.FCallRO(testCtx, "counter_get", []string{"n:{a}"}).Text(); err != nil || v != "15" {
		t.Fatalf("FCALL_RO counter_get: %q %v", v, err)
	}
	if err := c.FCallRO(testCtx, "counter_incr", []string{"n:{a}"}, 1).Err(); err == nil ||
		err.Error() != "ERR Can not execute a script with write flag using *_ro command." {
		t.Fatalf("FCALL_RO of a writing function: %v", err)
	}
	if err := c.FCall(testCtx, "nope", nil).Err(); err == nil || err.Error() != "ERR Function not found" {
		t.Fatalf("FCALL of a missing function: %v", err)
	}
	if err := c.FunctionLoad(testCtx, counterLib).Err(); err == nil ||
		err.Error() != "ERR Library 'counter' already exists" {
		t.Fatalf("second FUNCTION LOAD: %v", err)
	}
	libs, err := c.FunctionList(testCtx, redis.FunctionListQuery{LibraryNamePattern: "count*", WithCode: true}).Result()
	if err != nil || len(libs) != 1 || libs[0].Name != "counter" || libs[0].Code != counterLib ||
		len(libs[0].Functions) != 2 || libs[0].Functions[0].Name != "counter_get" ||
		fmt.Sprint(libs[0].Functions[0].Flags) != "[no-writes]" || libs[0].Functions[0].Description != "reads the counter" {
		t.Fatalf("FUNCTION LIST: %+v %v", libs, err)
	}
	if err := c.FunctionDelete(testCtx, "counter").Err(); err != nil {
		t.Fatal(err)
	}
	if err := c.FCall(testCtx, "counter_incr", []string{"n:{a}"}, 1).Err(); err == nil ||
		err.Error() != "ERR Function not found" {
		t.Fatalf("FCALL after FUNCTION DELETE: %v", err)
	}
}

// Errors of FUNCTION LOAD and of a function's run, byte for byte as redis-server 7.0.15.
func TestFunction_Errors(t *testing.T) {
	s := testserver.Start(t)
	c := s.Client(t)
	for _, tc := range []struct{ code, want string }{
		{"no shebang", "ERR Missing library metadata"},
		{"#!lua\nredis.register_function('f', function() end)", "ERR Library name was not given"},
		{"#!lua name=x foo=bar\n", "ERR Invalid metadata value given: foo=bar"},
		{"#!js name=x\n", "ERR Engine 'js' not found"},
		{"#!lua name=x-y\n", "ERR Library names can only contain letters, numbers, or underscores(_) and must be at least one character long"},
		{"#!lua name=x\nlocal a = 1", "ERR No functions registered"},
		{"#!lua name=x\nredis.call('ping')", "ERR Error registering functions: ERR user_function:2: Script attempted to access nonexistent global variable 'call'"},
		{"#!lua name=x\nfoo = 1", "ERR Error registering functions: ERR user_function:2: Attempt to modify a readonly table"},
		{"#!lua name=x\nredis.register_function('f', 1)", "ERR Error registering functions: ERR second argument to redis.register_function must be a function"},
		{"#!lua name=x\nredis.register_function{function_name='f', callback=function() end, flags={'bad'}}", "ERR Error registering functions: ERR unknown flag given"},
		{"#!lua name=x\nredis.register_function('f', function() end)\nredis.register_function('f', function() end)", "ERR Error registering functions: ERR Function already exists in the library"},
	} {
		if err := c.FunctionLoad(testCtx, tc.code).Err(); err == nil || err.Error() != tc.want {
			t.Errorf("FUNCTION LOAD %q: %v, want %s", tc.code, err, tc.want)
		}
	}
	if err := c.FunctionLoad(testCtx, "#!lua name=e\nredis.register_function('boom', function() error('bang') end)").Err(); err != nil {
		t.Fatal(err)
	}
	if err := c.FCall(testCtx, "boom", nil).Err(); err == nil ||
		err.Error() != "ERR user_function:2: bang script: boom, on @user_function:2." {
		t.Fatalf("FCALL boom: %v", err)
	}
	if err := c.Do(testCtx, "FCALL", "boom", "x").Err(); err == nil || err.Error() != "ERR Bad number of keys provided" {
		t.Fatalf("FCALL with a bad numkeys: %v", err)
	}
	if err := c.FunctionLoad(testCtx, "#!lua name=e2\nredis.register_function('BOOM', function() end)").Err(); err == nil ||
		err.Error() != "ERR Function BOOM already exists" {
		t.Fatalf("FUNCTION LOAD of a colliding function: %v", err)
	}
}

// FUNCTION DUMP and RESTORE round-trip with every policy.
func TestFunction_DumpRestore(t *testing.T) {
	s := testserver.Start(t)
	c := s.Client(t)
	if err := c.FunctionLoad(testCtx, counterLib).Err(); err != nil {
		t.Fatal(err)
	}
	dump, err := c.FunctionDump(testCtx).Result()
	if err != nil {
		t.Fatal(err)
	}
	if err := c.FunctionRestore(testCtx, dump).Err(); err == nil || err.Error() != "ERR Library counter already exists" {
		t.Fatalf("RESTORE (APPEND) over the same library: %v", err)
	}
	if err := c.Do(testCtx, "FUNCTION", "RESTORE", dump, "REPLACE").Err(); err != nil {
		t.Fatalf("RESTORE REPLACE: %v", err)
	}
	if err := c.FunctionFlush(testCtx).Err(); err != nil {
		t.Fatal(err)
	}
	if err := c.FunctionRestore(testCtx, dump).Err(); err != nil {
		t.Fatal(err)
	}
	if n, err := c.FCall(testCtx, "counter_incr", []string{"k"}, 2).Int(); err != nil || n != 2 {
		t.Fatalf("FCALL after RESTORE: %d %v", n, err)
	}
	bad := dump[:len(dump)-1] + string(dump[len(dump)-1]^1)
	if err := c.FunctionRestore(testCtx, bad).Err(); err == nil || err.Error() != "ERR DUMP payload version or checksum are wrong" {
		t.Fatalf("RESTORE of a corrupt payload: %v", err)
	}
	if err := c.Do(testCtx, "FUNCTION", "RESTORE", dump, "BAD").Err(); err == nil ||
		err.Error() != "ERR Wrong restore policy given, value should be either FLUSH, APPEND or REPLACE." {
		t.Fatalf("RESTORE with a bad policy: %v", err)
	}
}

// redisServerDump is FUNCTION DUMP of redis-server 7.0.15 holding library rlib (rget, rset);
// its code is LZF-compressed, as Redis writes RDB strings.
const redisServerDump = "f5c3407840d01f23216c7561206e616d653d726c69620a72656469732e72656769737465725f660f756e6374696f6e282772676574272c20e00010116b6579732c2061726773292072657475726e2006403b0863616c6c2827474554202d4024085b315d2920656e6429e0125b0073e0245b0053e0035b8083a0640164290a0056ba2c6a58eb4eb4"

// A dump taken from redis-server restores here.
func TestFunction_RestoresRedisServerDump(t *testing.T) {
	s := testserver.Start(t)
	c := s.Client(t)
	payload, _ := hex.DecodeString(redisServerDump)
	if err := c.FunctionRestore(testCtx, string(payload)).Err(); err != nil {
		t.Fatalf("RESTORE: %v", err)
	}
	if err := c.FCall(testCtx, "rset", []string{"k"}, "v").Err(); err != nil {
		t.Fatal(err)
	}
	if v, err := c.FCall(testCtx, "rget", []string{"k"}).Text(); err != nil || v != "v" {
		t.Fatalf("FCALL rget: %q %v", v, err)
	}
	libs, err := c.FunctionList(testCtx, redis.FunctionListQuery{WithCode: true}).Result()
	if err != nil || len(libs) != 1 || !strings.HasPrefix(libs[0].Code, "#!lua name=rlib\n") {
		t.Fatalf("FUNCTION LIST: %+v %v", libs, err)
	}
}

// Libraries are data: they survive a restart, FLUSHALL keeps them, FUNCTION FLUSH is durable
// too.
func TestFunction_SurviveRestart(t *testing.T) {
	dir := t.TempDir()
	s := testserver.StartIn(t, dir)
	c := s.Client(t)
	if err := c.FunctionLoad(testCtx, counterLib).Err(); err != nil {
		t.Fatal(err)
	}
	if err := c.FunctionLoad(testCtx, "#!lua name=gone\nredis.register_function('gone_f', function() return 1 end)").Err(); err != nil {
		t.Fatal(err)
	}
	if err := c.FunctionDelete(testCtx, "gone").Err(); err != nil {
		t.Fatal(err)
	}
	if err := c.FlushAll(testCtx).Err(); err != nil {
		t.Fatal(err)
	}
	s.Stop()

	s = testserver.StartIn(t, dir)
	c = s.Client(t)
	if n, err := c.FCall(testCtx, "counter_incr", []string{"k"}, 7).Int(); err != nil || n != 7 {
		t.Fatalf("FCALL after restart: %d %v", n, err)
	}
	libs, err := c.FunctionList(testCtx, redis.FunctionListQuery{}).Result()
	if err != nil || len(libs) != 1 || libs[0].Name != "counter" {
		t.Fatalf("FUNCTION LIST after restart: %+v %v", libs, err)
	}
	if err := c.FunctionFlush(testCtx).Err(); err != nil {
		t.Fatal(err)
	}
	s.Stop()

	s = testserver.StartIn(t, dir)
	c = s.Client(t)
	if libs, err := c.FunctionList(testCtx, redis.FunctionListQuery{}).Result(); err != nil || len(libs) != 0 {
		t.Fatalf("FUNCTION LIST after FLUSH and restart: %+v %v", libs, err)
	}
}

// The binlog carries library changes: replaying it into another store gives its libraries.
func TestFunction_BinlogReplay(t *testing.T) {
	s := testserver.Start(t)
	c := s.Client(t)
	for _, code := range []string{counterLib,
		"#!lua name=gone\nredis.register_function('gone_f', function() return 1 end)"} {
		if err := c.FunctionLoad(testCtx, code).Err(); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.FunctionDelete(testCtx, "gone").Err(); err != nil {
		t.Fatal(err)
	}
	// RESTORE FLUSH is logged as the FLUSH and the LOADs it amounts to.
	dump, err := c.FunctionDump(testCtx).Result()
	if err != nil {
		t.Fatal(err)
	}
	if err := c.FunctionLoad(testCtx, "#!lua name=gone2\nredis.register_function('gone2_f', function() return 1 end)").Err(); err != nil {
		t.Fatal(err)
	}
	if err := c.Do(testCtx, "FUNCTION", "RESTORE", dump, "FLUSH").Err(); err != nil {
		t.Fatal(err)
	}
	dst, ex := testserver.ReplayTarget(t, 4)
	for id := 0; id < 4; id++ {
		if _, err := ex.ReplayShard(s.Store, id); err != nil {
			t.Fatalf("replay shard %d: %v", id, err)
		}
	}
	var names []string
	if err := dst.ReadStatePrefix(0, []byte("f"), func(name, code []byte) {
		names = append(names, string(name))
		if string(code) != counterLib {
			t.Errorf("library %s: code %q", name, code)
		}
	}); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(names) != "[counter]" {
		t.Fatalf("libraries after replay: %v", names)
	}
}

// keyInAnotherShard returns a key whose shard is not key's.
func keyInAnotherShard(t *testing.T, s *testserver.Server, key string) string {
	t.Helper()
	for i := range 1000 {
		k := "other:" + strconv.Itoa(i)
		if s.Store.ShardOf([]byte(k)) != s.Store.ShardOf([]byte(key)) {
			return k
		}
	}
	t.Fatal("no key in another shard")
	return ""
}

// Functions hold their declared keys' shards and each call runs in a Lua state of its own: a
// function on another shard runs to its end while a slow one is still running (before the
// busy threshold: past it the whole server is busy, as Redis).
func TestFunction_CallsOnOtherShardsRunBeside(t *testing.T) {
	s := testserver.Start(t)
	c := s.Client(t)
	if err := c.FunctionLoad(testCtx, "#!lua name=beside\n"+
		"redis.register_function{function_name='spin', callback=function() while true do end end, flags={'no-writes'}}\n"+
		"redis.register_function('bump', function(keys) return redis.call('INCR', keys[1]) end)").Err(); err != nil {
		t.Fatal(err)
	}
	other := keyInAnotherShard(t, s, "slow")
	if err := c.ConfigSet(testCtx, "busy-reply-threshold", "600000").Err(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- scriptClient(t, s).FCall(testCtx, "spin", []string{"slow"}).Err() }()
	waitFor(t, func() bool { // spin was dispatched (its shard is idle: it runs)
		list, err := c.ClientList(testCtx).Result()
		return err == nil && strings.Contains(list, "cmd=fcall ")
	})
	for want := int64(1); want <= 3; want++ {
		if n, err := c.FCall(testCtx, "bump", []string{other}).Int64(); err != nil || n != want {
			t.Fatalf("FCALL bump on another shard while spin runs: %d, %v", n, err)
		}
	}
	select {
	case err := <-done:
		t.Fatalf("spin ended: %v", err)
	default:
	}
	c.Do(testCtx, "SHUTDOWN", "NOSAVE") // stops spin; the connection closes
	select {
	case err := <-done:
		if err == nil {
			t.Fatal("spin returned")
		}
	case <-time.After(60 * time.Second): // a hang, not a speed check
		t.Fatal("spin still running after SHUTDOWN NOSAVE")
	}
	s.Stop()
}

// FCALL pipelined after FUNCTION LOAD calls the library just loaded, whatever shard its key
// is in (FUNCTION LOAD runs in shard 0; an FCALL of one key in its key's shard ran beside it
// and could call the library before the load).
func TestFunction_LoadThenCallPipelined_InOrder(t *testing.T) {
	s := testserver.Start(t)
	c := s.Client(t)
	key := keyInAnotherShard(t, s, "shard0probe")
	for s.Store.ShardOf([]byte(key)) == 0 { // FUNCTION LOAD runs in shard 0: take another
		key += "x"
	}
	for i := range 30 {
		pipe := c.Pipeline()
		pipe.Do(testCtx, "FUNCTION", "LOAD", "REPLACE",
			fmt.Sprintf("#!lua name=order\nredis.register_function('version', function() return %d end)", i))
		call := pipe.FCall(testCtx, "version", []string{key})
		pipe.Exec(testCtx)
		if n, err := call.Int(); err != nil || n != i {
			t.Fatalf("round %d: FCALL after FUNCTION LOAD gave %d, %v", i, n, err)
		}
	}
}
