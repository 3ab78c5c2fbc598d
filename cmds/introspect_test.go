package cmds_test

import (
	"bytes"
	"context"
	"slices"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"shardis/internal/testserver"
)

var introCtx = context.Background()

func introDo(t *testing.T, c *redis.Client, args ...any) any {
	t.Helper()
	v, err := c.Do(introCtx, args...).Result()
	if err != nil {
		t.Fatalf("%v: %v", args, err)
	}
	return v
}

func introErr(t *testing.T, c *redis.Client, want string, args ...any) {
	t.Helper()
	err := c.Do(introCtx, args...).Err()
	if err == nil || err.Error() != want {
		t.Errorf("%v: got error %v, want %q", args, err, want)
	}
}

// TestCommandIntrospection runs the COMMAND cases against one server.
func TestCommandIntrospection(t *testing.T) {
	s := testserver.Start(t)
	for _, tc := range []struct {
		name string
		fn   func(*testing.T, *testserver.Server)
	}{
		{"Command_GoRedisParsesCommandTable", introCommand_GoRedisParsesCommandTable},
		{"CommandInfo_Get_MatchesRedisBytes", introCommandInfo_Get_MatchesRedisBytes},
		{"CommandInfo_UnknownNamesAreNil", introCommandInfo_UnknownNamesAreNil},
		{"CommandInfo_SubcommandsNested", introCommandInfo_SubcommandsNested},
		{"CommandDocs_Get", introCommandDocs_Get},
		{"CommandDocs_SetArguments", introCommandDocs_SetArguments},
		{"CommandDocs_AllCommandsWithSubcommands", introCommandDocs_AllCommandsWithSubcommands},
		{"CommandGetKeys_Mset", introCommandGetKeys_Mset},
		{"CommandGetKeys_Errors", introCommandGetKeys_Errors},
		{"CommandGetKeysAndFlags_Rename", introCommandGetKeysAndFlags_Rename},
		{"CommandList_Filters", introCommandList_Filters},
		{"Command_HelpAndUnknownSubcommand", introCommand_HelpAndUnknownSubcommand},
	} {
		t.Run(tc.name, func(t *testing.T) { tc.fn(t, s) })
	}
}

// go-redis parses COMMAND to learn key positions and which commands are read-only.
func introCommand_GoRedisParsesCommandTable(t *testing.T, s *testserver.Server) {
	for _, proto := range []int{2, 3} {
		c := s.Client(t, func(o *redis.Options) { o.Protocol = proto })
		introGoRedisCommand(t, c)
	}
}

func introGoRedisCommand(t *testing.T, c *redis.Client) {
	cmds, err := c.Command(introCtx).Result()
	if err != nil {
		t.Fatal(err)
	}
	get := cmds["get"]
	if get == nil || get.FirstKeyPos != 1 || get.LastKeyPos != 1 || get.StepCount != 1 || !get.ReadOnly || get.Arity != 2 {
		t.Fatalf("get: %+v", get)
	}
	if set := cmds["set"]; set == nil || set.ReadOnly || set.Arity != -3 || !slices.Contains(set.ACLFlags, "@write") {
		t.Fatalf("set: %+v", set)
	}
	if cmds["command"] == nil {
		t.Fatal("no command entry")
	}
	n, err := c.Do(introCtx, "COMMAND", "COUNT").Int()
	if err != nil || n != len(cmds) {
		t.Fatalf("COMMAND COUNT %d (%v), COMMAND lists %d", n, err, len(cmds))
	}
}

// Redis 7.0.15's reply to COMMAND INFO get, byte for byte.
func introCommandInfo_Get_MatchesRedisBytes(t *testing.T, s *testserver.Server) {
	const resp2 = "*1\r\n*10\r\n$3\r\nget\r\n:2\r\n*2\r\n+readonly\r\n+fast\r\n:1\r\n:1\r\n:1\r\n*3\r\n+@read\r\n" +
		"+@string\r\n+@fast\r\n*0\r\n*1\r\n*6\r\n$5\r\nflags\r\n*2\r\n+RO\r\n+access\r\n$12\r\nbegin_search\r\n*4\r\n" +
		"$4\r\ntype\r\n$5\r\nindex\r\n$4\r\nspec\r\n*2\r\n$5\r\nindex\r\n:1\r\n$9\r\nfind_keys\r\n*4\r\n$4\r\ntype\r\n" +
		"$5\r\nrange\r\n$4\r\nspec\r\n*6\r\n$7\r\nlastkey\r\n:0\r\n$7\r\nkeystep\r\n:1\r\n$5\r\nlimit\r\n:0\r\n*0\r\n"
	const resp3 = "*1\r\n*10\r\n$3\r\nget\r\n:2\r\n~2\r\n+readonly\r\n+fast\r\n:1\r\n:1\r\n:1\r\n~3\r\n+@read\r\n" +
		"+@string\r\n+@fast\r\n~0\r\n~1\r\n%3\r\n$5\r\nflags\r\n~2\r\n+RO\r\n+access\r\n$12\r\nbegin_search\r\n%2\r\n" +
		"$4\r\ntype\r\n$5\r\nindex\r\n$4\r\nspec\r\n%1\r\n$5\r\nindex\r\n:1\r\n$9\r\nfind_keys\r\n%2\r\n$4\r\ntype\r\n" +
		"$5\r\nrange\r\n$4\r\nspec\r\n%3\r\n$7\r\nlastkey\r\n:0\r\n$7\r\nkeystep\r\n:1\r\n$5\r\nlimit\r\n:0\r\n~0\r\n"
	got := testserver.Raw(t, s.Addr, []byte("*3\r\n$7\r\nCOMMAND\r\n$4\r\nINFO\r\n$3\r\nget\r\n"), 300*time.Millisecond)
	if string(got) != resp2 {
		t.Errorf("RESP2:\n got  %q\n want %q", got, resp2)
	}
	got = testserver.Raw(t, s.Addr, []byte("*2\r\n$5\r\nHELLO\r\n$1\r\n3\r\n*3\r\n$7\r\nCOMMAND\r\n$4\r\nINFO\r\n$3\r\nGET\r\n"), 300*time.Millisecond)
	if !bytes.HasSuffix(got, []byte(resp3)) {
		t.Errorf("RESP3:\n got  %q\n want suffix %q", got, resp3)
	}
}

func introCommandInfo_UnknownNamesAreNil(t *testing.T, s *testserver.Server) {
	c := s.Client(t)
	v := introDo(t, c, "COMMAND", "INFO", "nosuch", "CONFIG|GET", "get|x").([]any)
	if len(v) != 3 || v[0] != nil || v[2] != nil {
		t.Fatalf("got %v", v)
	}
	if e, ok := v[1].([]any); !ok || len(e) != 10 || e[0] != "config|get" {
		t.Fatalf("config|get: %v", v[1])
	}
}

func introCommandInfo_SubcommandsNested(t *testing.T, s *testserver.Server) {
	c := s.Client(t)
	v := introDo(t, c, "COMMAND", "INFO", "command").([]any)
	e := v[0].([]any)
	subs := e[9].([]any)
	var names []string
	for _, sub := range subs {
		names = append(names, sub.([]any)[0].(string))
	}
	want := []string{"command|count", "command|docs", "command|getkeys", "command|getkeysandflags", "command|help", "command|info", "command|list"}
	if !slices.Equal(names, want) {
		t.Fatalf("subcommands %v, want %v", names, want)
	}
	if tips := e[7].([]any); len(tips) != 1 || tips[0] != "nondeterministic_output_order" {
		t.Fatalf("tips %v", tips)
	}
}

// introAsMap turns a RESP2 flat array or a RESP3 map into a map.
func introAsMap(t *testing.T, v any) map[string]any {
	t.Helper()
	out := map[string]any{}
	switch m := v.(type) {
	case map[any]any:
		for k, x := range m {
			out[k.(string)] = x
		}
	case []any:
		for i := 0; i+1 < len(m); i += 2 {
			out[m[i].(string)] = m[i+1]
		}
	default:
		t.Fatalf("not a map: %#v", v)
	}
	return out
}

func introCommandDocs_Get(t *testing.T, s *testserver.Server) {
	for _, proto := range []int{2, 3} {
		c := s.Client(t, func(o *redis.Options) { o.Protocol = proto })
		docs := introAsMap(t, introDo(t, c, "COMMAND", "DOCS", "GET", "nosuch"))
		if len(docs) != 1 {
			t.Fatalf("RESP%d: %v", proto, docs)
		}
		get := introAsMap(t, docs["get"])
		if get["group"] != "string" || get["since"] != "1.0.0" || get["complexity"] != "O(1)" || get["summary"] == "" {
			t.Errorf("RESP%d: %v", proto, get)
		}
		args := get["arguments"].([]any)
		if len(args) != 1 {
			t.Fatalf("RESP%d: arguments %v", proto, args)
		}
		key := introAsMap(t, args[0])
		if key["name"] != "key" || key["type"] != "key" || key["key_spec_index"] != int64(0) || len(key) != 3 {
			t.Errorf("RESP%d: key argument %v", proto, key)
		}
	}
}

// SET's arguments as Redis 7.0 documents them (without the "since" of each).
func introCommandDocs_SetArguments(t *testing.T, s *testserver.Server) {
	c := s.Client(t, func(o *redis.Options) { o.Protocol = 3 })
	set := introAsMap(t, introAsMap(t, introDo(t, c, "COMMAND", "DOCS", "set"))["set"])
	args := set["arguments"].([]any)
	var names []string
	for _, a := range args {
		m := introAsMap(t, a)
		names = append(names, m["name"].(string)+":"+m["type"].(string))
	}
	if want := []string{"key:key", "value:string", "condition:oneof", "get:pure-token", "expiration:oneof"}; !slices.Equal(names, want) {
		t.Fatalf("got %v, want %v", names, want)
	}
	exp := introAsMap(t, args[4])
	if flags, ok := exp["flags"].([]any); !ok || len(flags) != 1 || flags[0] != "optional" {
		t.Errorf("expiration flags %v", exp["flags"])
	}
	ex := introAsMap(t, exp["arguments"].([]any)[0])
	if ex["name"] != "seconds" || ex["type"] != "integer" || ex["token"] != "EX" {
		t.Errorf("EX: %v", ex)
	}
}

func introCommandDocs_AllCommandsWithSubcommands(t *testing.T, s *testserver.Server) {
	c := s.Client(t, func(o *redis.Options) { o.Protocol = 3 })
	docs := introAsMap(t, introDo(t, c, "COMMAND", "DOCS"))
	n, _ := c.Do(introCtx, "COMMAND", "COUNT").Int()
	if len(docs) != n {
		t.Fatalf("COMMAND DOCS has %d commands, COMMAND COUNT %d", len(docs), n)
	}
	subs := introAsMap(t, introAsMap(t, docs["command"])["subcommands"])
	list := introAsMap(t, subs["command|list"])
	if len(subs) != 7 || list["arguments"] == nil {
		t.Fatalf("command subcommands %v", subs)
	}
}

func introCommandGetKeys_Mset(t *testing.T, s *testserver.Server) {
	c := s.Client(t)
	got := introDo(t, c, "COMMAND", "GETKEYS", "MSET", "a", "1", "b", "2")
	if want := []any{"a", "b"}; !slices.Equal(got.([]any), want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	got = introDo(t, c, "COMMAND", "GETKEYS", "object", "encoding", "k")
	if want := []any{"k"}; !slices.Equal(got.([]any), want) {
		t.Fatalf("OBJECT ENCODING: got %v, want %v", got, want)
	}
}

func introCommandGetKeys_Errors(t *testing.T, s *testserver.Server) {
	c := s.Client(t)
	introErr(t, c, "ERR Invalid command specified", "COMMAND", "GETKEYS", "nosuch", "a")
	introErr(t, c, "ERR Invalid command specified", "COMMAND", "GETKEYS", "config", "nosuch", "a")
	introErr(t, c, "ERR The command has no key arguments", "COMMAND", "GETKEYS", "ping", "a")
	introErr(t, c, "ERR The command has no key arguments", "COMMAND", "GETKEYS", "config", "get", "x")
	introErr(t, c, "ERR Invalid number of arguments specified for command", "COMMAND", "GETKEYS", "get", "a", "b")
	introErr(t, c, "ERR wrong number of arguments for 'command|getkeys' command", "COMMAND", "GETKEYS", "get")
}

func introCommandGetKeysAndFlags_Rename(t *testing.T, s *testserver.Server) {
	c := s.Client(t)
	introKeysAndFlags(t, c, [][]string{{"a", "RW", "access", "delete"}, {"b", "OW", "update"}},
		"rename", "a", "b")
	// SORT's STORE destination is found by SORT's own key finder: OW update, as in Redis 7.0.
	introKeysAndFlags(t, c, [][]string{{"k1", "RO", "access"}, {"k2", "OW", "update"}},
		"sort", "k1", "by", "w_*", "get", "o_*", "store", "k2")
}

// introKeysAndFlags checks COMMAND GETKEYSANDFLAGS of args: each key with its flags.
func introKeysAndFlags(t *testing.T, c *redis.Client, want [][]string, args ...any) {
	t.Helper()
	got := introDo(t, c, append([]any{"COMMAND", "GETKEYSANDFLAGS"}, args...)...).([]any)
	if len(got) != len(want) {
		t.Fatalf("got %v", got)
	}
	for i, e := range got {
		pair := e.([]any)
		row := []string{pair[0].(string)}
		for _, f := range pair[1].([]any) {
			row = append(row, f.(string))
		}
		if !slices.Equal(row, want[i]) {
			t.Errorf("key %d: got %v, want %v", i, row, want[i])
		}
	}
}

func introCommandList_Filters(t *testing.T, s *testserver.Server) {
	c := s.Client(t)
	strs := func(v any) []string {
		var out []string
		for _, x := range v.([]any) {
			out = append(out, x.(string))
		}
		return out
	}
	all := strs(introDo(t, c, "COMMAND", "LIST"))
	if !slices.Contains(all, "get") || !slices.Contains(all, "command|docs") {
		t.Fatalf("COMMAND LIST: %v", all)
	}
	got := strs(introDo(t, c, "COMMAND", "LIST", "FILTERBY", "PATTERN", "COMMAND*"))
	want := []string{"command", "command|count", "command|docs", "command|getkeys", "command|getkeysandflags", "command|help", "command|info", "command|list"}
	if !slices.Equal(got, want) {
		t.Errorf("PATTERN: got %v, want %v", got, want)
	}
	cat := strs(introDo(t, c, "COMMAND", "LIST", "FILTERBY", "ACLCAT", "STRING"))
	if !slices.Contains(cat, "get") || slices.Contains(cat, "ping") {
		t.Errorf("ACLCAT string: %v", cat)
	}
	if v := introDo(t, c, "COMMAND", "LIST", "FILTERBY", "MODULE", "x").([]any); len(v) != 0 {
		t.Errorf("MODULE: %v", v)
	}
	if v := introDo(t, c, "COMMAND", "LIST", "FILTERBY", "ACLCAT", "@string").([]any); len(v) != 0 {
		t.Errorf("ACLCAT @string: %v", v)
	}
	introErr(t, c, "ERR syntax error", "COMMAND", "LIST", "FILTERBY", "NAME", "x")
	introErr(t, c, "ERR syntax error", "COMMAND", "LIST", "FILTERBY", "PATTERN")
	introErr(t, c, "ERR syntax error", "COMMAND", "LIST", "x")
}

func introCommand_HelpAndUnknownSubcommand(t *testing.T, s *testserver.Server) {
	c := s.Client(t)
	help := introDo(t, c, "COMMAND", "HELP").([]any)
	if len(help) != 21 || help[0] != "COMMAND <subcommand> [<arg> [value] [opt] ...]. Subcommands are:" || help[20] != "    Prints this help." {
		t.Errorf("help: %q", help)
	}
	introErr(t, c, "ERR unknown subcommand 'foo'. Try COMMAND HELP.", "COMMAND", "foo")
	introErr(t, c, "ERR wrong number of arguments for 'command|count' command", "COMMAND", "COUNT", "x")
}
