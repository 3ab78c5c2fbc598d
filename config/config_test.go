package config

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

// defaults is every parameter's CONFIG GET value in a fresh Config.
var defaults = map[string]string{
	"appendfsync":                "everysec",
	"appendonly":                 "yes",
	"bind":                       "127.0.0.1",
	"binlog-max-age":             "3600",
	"binlog-max-entries":         "1000000",
	"repl-fullsync-max-rate":     "0",
	"block-cache-size":           "268435456",
	"key-cache-size":             "67108864",
	"hll-sparse-max-bytes":       "3000",
	"rdb-format":                 "checkpoint",
	"dbfilename":                 "dump.rdb",
	"rdbcompression":             "yes",
	"rdbchecksum":                "yes",
	"disk-reserve":               "67108864",
	"client-output-buffer-limit": "normal 0 0 0 slave 268435456 67108864 60 pubsub 33554432 8388608 60",
	"client-query-buffer-limit":  "1073741824",
	"cpu-pin":                    "yes",
	"enable-protected-configs":   "no",
	"protected-mode":             "yes",
	"supervised":                 "no",
	"tcp-keepalive":              "300",
	"unixsocket":                 "",
	"unixsocketperm":             "0",
	"daemonize":                  "no",
	"databases":                  "16",
	"busy-reply-threshold":       "5000",
	"dir":                        "./data",
	"hz":                         "10",
	"logfile":                    "",
	"loglevel":                   "notice",
	"loops":                      "0",
	"maxclients":                 "10000",
	"notify-keyspace-events":     "",
	"pidfile":                    "",
	"port":                       "6379",
	"proto-max-bulk-len":         "536870912",
	"requirepass":                "",
	"save":                       "",
	"shards":                     "0",
	"slowlog-log-slower-than":    "10000",
	"slowlog-max-len":            "128",
	"timeout":                    "0",
	"tracking-table-max-keys":    "1000000",
	"write-buffer-size":          "268435456",
	"blob-min-size":              "4096",
}

// The latency monitor's parameters, kept apart from the table above so that adding them does
// not realign it.
func init() {
	defaults["latency-monitor-threshold"] = "0"
	defaults["latency-tracking"] = "yes"
	defaults["latency-tracking-info-percentiles"] = "50 99 99.9"
}

// all returns CONFIG GET * as a map, restricted to the parameters shardis acts on (paramList):
// the kept ones are compared with redis-server's own answers in redis7_test.go.
func all(c *Config) map[string]string {
	own := map[string]bool{}
	for _, p := range paramList {
		own[p.name] = true
	}
	m := map[string]string{}
	for _, kv := range c.Get("*") {
		if own[kv[0]] {
			m[kv[0]] = kv[1]
		}
	}
	return m
}

// writeConf writes content to a temporary config file and returns its path.
func writeConf(t *testing.T, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "shardis.conf")
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestDefault_Values(t *testing.T) {
	c := Default()
	if got := all(c); !reflect.DeepEqual(got, defaults) {
		t.Fatalf("defaults mismatch:\n got %v\nwant %v", got, defaults)
	}
	if got, want := len(c.Names()), len(paramList)+len(keptParams); got != want {
		t.Fatalf("Names() has %d entries, want %d", got, want)
	}
	if !sortedStrings(c.Names()) {
		t.Fatalf("Names() not sorted: %v", c.Names())
	}
}

func sortedStrings(s []string) bool {
	for i := 1; i < len(s); i++ {
		if s[i-1] >= s[i] {
			return false
		}
	}
	return true
}

func TestDefault_Accessors(t *testing.T) {
	c := Default()
	ncpu := runtime.NumCPU()
	checks := []struct {
		name      string
		got, want any
	}{
		{"Port", c.Port(), 6379},
		{"Bind", c.Bind(), []string{"127.0.0.1"}},
		{"Dir", c.Dir(), "./data"},
		{"Loops", c.Loops(), ncpu},
		{"Shards", c.Shards(), 4 * ncpu},
		{"CPUPin", c.CPUPin(), true},
		{"RequirePass", c.RequirePass(), ""},
		{"MaxClients", c.MaxClients(), 10000},
		{"Timeout", c.Timeout(), time.Duration(0)},
		{"AppendFsync", c.AppendFsync(), "everysec"},
		{"BlockCacheSize", c.BlockCacheSize(), int64(256 << 20)},
		{"WriteBufferSize", c.WriteBufferSize(), int64(256 << 20)},
		{"ProtoMaxBulkLen", c.ProtoMaxBulkLen(), int64(512 << 20)},
		{"ClientQueryBufferLimit", c.ClientQueryBufferLimit(), int64(1 << 30)},
		{"BinlogMaxEntries", c.BinlogMaxEntries(), int64(1000000)},
		{"BinlogMaxAge", c.BinlogMaxAge(), time.Hour},
		{"FullSyncMaxRate", c.FullSyncMaxRate(), int64(0)},
		{"Hz", c.Hz(), 10},
		{"SlowlogSlowerThan", c.SlowlogSlowerThan(), int64(10000)},
		{"SlowlogMaxLen", c.SlowlogMaxLen(), 128},
		{"Databases", c.Databases(), 16},
		{"LogLevel", c.LogLevel(), "notice"},
		{"LogFile", c.LogFile(), ""},
		{"PidFile", c.PidFile(), ""},
		{"File", c.File(), ""},
	}
	for _, tc := range checks {
		if !reflect.DeepEqual(tc.got, tc.want) {
			t.Errorf("%s() = %v, want %v", tc.name, tc.got, tc.want)
		}
	}
	// Bind returns a copy.
	c.Bind()[0] = "mutated"
	if c.Bind()[0] != "127.0.0.1" {
		t.Error("Bind() exposes internal slice")
	}
}

func TestResolved_LoopsShards(t *testing.T) {
	c, err := Load([]string{"--loops", "3", "--shards", "8"})
	if err != nil {
		t.Fatal(err)
	}
	if c.Loops() != 3 || c.Shards() != 8 {
		t.Fatalf("Loops/Shards = %d/%d, want 3/8", c.Loops(), c.Shards())
	}
	if got := c.Get("shards")[0][1]; got != "8" {
		t.Fatalf("CONFIG GET shards = %q", got)
	}
}

func TestParseMemory(t *testing.T) {
	tests := []struct {
		in   string
		want int64
		ok   bool
	}{
		{"0", 0, true},
		{"1024", 1024, true},
		{"100b", 100, true},
		{"1k", 1000, true},
		{"1K", 1000, true},
		{"1kb", 1024, true},
		{"1KB", 1024, true},
		{"1kB", 1024, true},
		{"2m", 2000000, true},
		{"2mb", 2 << 20, true},
		{"3g", 3000000000, true},
		{"3gb", 3 << 30, true},
		{"3Gb", 3 << 30, true},
		{"0010", 10, true},
		{"", 0, false},
		{"mb", 0, false},
		{"-1", 0, false},
		{"+1", 0, false},
		{"1.5mb", 0, false},
		{"1 mb", 0, false},
		{"1tb", 0, false},
		{"1kbb", 0, false},
		{"abc", 0, false},
		{"9223372036854775807", 9223372036854775807, true},
		{"9223372036854775808", 0, false},
		{"9000000000gb", 0, false},
	}
	for _, tc := range tests {
		got, ok := parseMemory(tc.in)
		if ok != tc.ok || got != tc.want {
			t.Errorf("parseMemory(%q) = %d, %v; want %d, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}

func TestParseInt(t *testing.T) {
	tests := []struct {
		in   string
		want int64
		ok   bool
	}{
		{"0", 0, true},
		{"7", 7, true},
		{"-1", -1, true},
		{"1234567", 1234567, true},
		{"9223372036854775807", 9223372036854775807, true},
		{"-9223372036854775808", -9223372036854775808, true},
		{"9223372036854775808", 0, false},
		{"", 0, false},
		{"-", 0, false},
		{"-0", 0, false},
		{"007", 0, false},
		{"+7", 0, false},
		{" 7", 0, false},
		{"7 ", 0, false},
		{"1k", 0, false},
		{"1_000", 0, false},
		{"0x10", 0, false},
	}
	for _, tc := range tests {
		got, ok := parseInt(tc.in)
		if ok != tc.ok || got != tc.want {
			t.Errorf("parseInt(%q) = %d, %v; want %d, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}

func TestSplitArgs(t *testing.T) {
	tests := []struct {
		in   string
		want []string
		ok   bool
	}{
		{"", nil, true},
		{"   \t ", nil, true},
		{"port 6379", []string{"port", "6379"}, true},
		{"  bind   1.2.3.4\t::1  ", []string{"bind", "1.2.3.4", "::1"}, true},
		{`requirepass ""`, []string{"requirepass", ""}, true},
		{`requirepass "a b"`, []string{"requirepass", "a b"}, true},
		{`requirepass 'a b'`, []string{"requirepass", "a b"}, true},
		{`x "a\"b"`, []string{"x", `a"b`}, true},
		{`x "a\\b"`, []string{"x", `a\b`}, true},
		{`x "\n\r\t\b\a"`, []string{"x", "\n\r\t\b\a"}, true},
		{`x "\x41\x7a"`, []string{"x", "Az"}, true},
		{`x "\x4g"`, []string{"x", "x4g"}, true},
		{`x "\q"`, []string{"x", "q"}, true},
		{`x 'it\'s'`, []string{"x", "it's"}, true},
		{`x 'a\nb'`, []string{"x", `a\nb`}, true},
		{`x a"b c"`, []string{"x", "ab c"}, true},
		{`x "#not a comment"`, []string{"x", "#not a comment"}, true},
		{`x a#b`, []string{"x", "a#b"}, true},
		{`x "abc`, nil, false},
		{`x 'abc`, nil, false},
		{`x "abc"def`, nil, false},
		{`x 'abc'def`, nil, false},
		{`x "abc\"`, nil, false},
	}
	for _, tc := range tests {
		got, ok := splitArgs(tc.in)
		if ok != tc.ok || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("splitArgs(%q) = %q, %v; want %q, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}

func TestGlobMatch(t *testing.T) {
	tests := []struct {
		pattern, name string
		want          bool
	}{
		{"*", "port", true},
		{"*", "", true},
		{"port", "port", true},
		{"PORT", "port", true},
		{"por", "port", false},
		{"p*", "port", true},
		{"*t", "port", true},
		{"*o*", "port", true},
		{"p**t", "port", true},
		{"*max*len*", "slowlog-max-len", true},
		{"*max*len*", "maxclients", false},
		{"p?rt", "port", true},
		{"p?rt", "prt", false},
		{"????", "port", true},
		{"???", "port", false},
		{"[pq]ort", "port", true},
		{"[PQ]ort", "port", true},
		{"[^p]ort", "port", false},
		{"[^q]ort", "port", true},
		{"[a-z]ort", "port", true},
		{"[z-a]ort", "port", true},
		{"[A-Z]ort", "port", true},
		{"[0-9]ort", "port", false},
		{"[]port", "port", false},
		{"[p", "p", true},
		{`p\ort`, "port", true},
		{`p\*rt`, "port", false},
		{`p\*rt`, "p*rt", true},
		{`\?`, "?", true},
		{`\?`, "a", false},
		{`[\]]`, "]", true},
		{"a*b*c", "aXXbYYc", true},
		{"a*b*c", "aXXbYY", false},
		{"*-*-*", "client-query-buffer-limit", true},
		{"*-*-*-*-*", "client-query-buffer-limit", false},
	}
	for _, tc := range tests {
		if got := globMatch(tc.pattern, tc.name); got != tc.want {
			t.Errorf("globMatch(%q, %q) = %v, want %v", tc.pattern, tc.name, got, tc.want)
		}
	}
}

func TestLoad_File(t *testing.T) {
	path := writeConf(t, `# shardis test config

   # indented comment
PORT 7001
bind 10.0.0.1 "::1"
dir "/var/lib/shard dis"
requirepass 'p@ss "word"'
Cpu-Pin NO
appendfsync ALWAYS
loglevel Warning
block-cache-size 1gb
write-buffer-size 64MB
proto-max-bulk-len 2m
client-query-buffer-limit 2048kb
slowlog-log-slower-than -1
timeout 300
binlog-max-age 0
save ""
save 900 1 300 10
daemonize no
appendonly yes
hz 100
port 7002
`)
	c, err := Load([]string{path})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"port":                      "7002", // last occurrence wins
		"bind":                      "10.0.0.1 ::1",
		"dir":                       "/var/lib/shard dis",
		"requirepass":               `p@ss "word"`,
		"cpu-pin":                   "no",
		"appendfsync":               "always",
		"loglevel":                  "warning",
		"block-cache-size":          "1073741824",
		"write-buffer-size":         "67108864",
		"proto-max-bulk-len":        "2000000",
		"client-query-buffer-limit": "2097152",
		"slowlog-log-slower-than":   "-1",
		"timeout":                   "300",
		"binlog-max-age":            "0",
		"save":                      "900 1 300 10",
		"hz":                        "100",
	}
	got := all(c)
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %q, want %q", k, got[k], v)
		}
	}
	if c.File() != path {
		t.Errorf("File() = %q, want %q", c.File(), path)
	}
	if c.Timeout() != 300*time.Second || c.BinlogMaxAge() != 0 || c.CPUPin() {
		t.Errorf("accessors: timeout %v, binlog age %v, cpu-pin %v", c.Timeout(), c.BinlogMaxAge(), c.CPUPin())
	}
	if !reflect.DeepEqual(c.Bind(), []string{"10.0.0.1", "::1"}) {
		t.Errorf("Bind() = %q", c.Bind())
	}
}

func TestLoad_CRLFAndNoTrailingNewline(t *testing.T) {
	path := writeConf(t, "port 7100\r\n# c\r\nmaxclients 5")
	c, err := Load([]string{path})
	if err != nil {
		t.Fatal(err)
	}
	if c.Port() != 7100 || c.MaxClients() != 5 {
		t.Fatalf("port %d maxclients %d", c.Port(), c.MaxClients())
	}
}

func TestLoad_FileThenFlags(t *testing.T) {
	path := writeConf(t, "port 7000\ndir /from/file\nshards 4\ncpu-pin yes\nmaxclients 50\n")
	c, err := Load([]string{path, "--port", "7500", "--dir", "/tmp/x", "--shards", "8", "--cpu-pin", "no"})
	if err != nil {
		t.Fatal(err)
	}
	if c.Port() != 7500 || c.Dir() != "/tmp/x" || c.Shards() != 8 || c.CPUPin() || c.MaxClients() != 50 {
		t.Fatalf("got port %d dir %q shards %d cpu-pin %v maxclients %d",
			c.Port(), c.Dir(), c.Shards(), c.CPUPin(), c.MaxClients())
	}
}

func TestLoad_FlagForms(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want map[string]string
	}{
		{"none", nil, map[string]string{"port": "6379"}},
		{"simple", []string{"--port", "7000"}, map[string]string{"port": "7000"}},
		{"case-insensitive name", []string{"--MaxClients", "7"}, map[string]string{"maxclients": "7"}},
		{"equals form", []string{"--port=7001", "--requirepass=a=b"},
			map[string]string{"port": "7001", "requirepass": "a=b"}},
		{"single argument with space", []string{"--port 7002", "--requirepass \"x y\""},
			map[string]string{"port": "7002", "requirepass": "x y"}},
		{"multi-value bind", []string{"--bind", "0.0.0.0", "::", "--port", "1"},
			map[string]string{"bind": "0.0.0.0 ::", "port": "1"}},
		{"value that looks like a flag", []string{"--requirepass", "--secret", "--port", "2"},
			map[string]string{"requirepass": "--secret", "port": "2"}},
		{"negative value", []string{"--slowlog-log-slower-than", "-1"},
			map[string]string{"slowlog-log-slower-than": "-1"}},
		{"empty value", []string{"--requirepass", ""}, map[string]string{"requirepass": ""}},
		{"bare save last", []string{"--port", "3", "--save"}, map[string]string{"save": "", "port": "3"}},
		{"bare save then flag", []string{"--save", "--port", "4"}, map[string]string{"save": "", "port": "4"}},
		{"save with values", []string{"--save", "900", "1"}, map[string]string{"save": "900 1"}},
		{"memory units", []string{"--block-cache-size", "1GB", "--write-buffer-size", "32mb"},
			map[string]string{"block-cache-size": "1073741824", "write-buffer-size": "33554432"}},
		{"later flag wins", []string{"--port", "5", "--port", "6"}, map[string]string{"port": "6"}},
		{"hz clamped high", []string{"--hz", "1000"}, map[string]string{"hz": "500"}},
		{"hz clamped low", []string{"--hz", "0"}, map[string]string{"hz": "1"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, err := Load(tc.args)
			if err != nil {
				t.Fatal(err)
			}
			got := all(c)
			for k, v := range tc.want {
				if got[k] != v {
					t.Errorf("%s = %q, want %q", k, got[k], v)
				}
			}
		})
	}
}

func TestLoad_FileErrors(t *testing.T) {
	tests := []struct {
		name    string
		content string
		line    int
		msg     string
	}{
		{"unknown directive", "port 1\n\n# x\nprot 7000\n", 4, "Bad directive or wrong number of arguments"},
		{"missing value", "port\n", 1, "wrong number of arguments"},
		{"too many values", "port 1 2\n", 1, "wrong number of arguments"},
		{"not an integer", "maxclients lots\n", 1, "argument couldn't be parsed into an integer"},
		{"out of range", "port 65536\n", 1, "argument must be between 0 and 65535 inclusive"},
		{"negative timeout", "timeout -1\n", 1, "argument must be between 0 and 2147483647 inclusive"},
		{"bad memory", "block-cache-size 1tb\n", 1, "argument must be a memory value"},
		{"memory too small", "proto-max-bulk-len 1000\n", 1, "argument must be between 1048576 and 9223372036854775807 inclusive"},
		{"bad bool", "cpu-pin maybe\n", 1, "argument must be 'yes' or 'no'"},
		{"bad enum", "appendfsync sometimes\n", 1, "argument(s) must be one of the following: everysec, always, no"},
		{"bad loglevel", "loglevel loud\n", 1, "argument(s) must be one of the following: debug, verbose, notice, warning"},
		{"unbalanced quotes", "port 1\nrequirepass \"abc\n", 2, "Unbalanced quotes in configuration line"},
		{"junk after quote", "dir \"a\"b\n", 1, "Unbalanced quotes in configuration line"},
		{"replicaof bad port", "replicaof 10.0.0.1 65536\n", 1, "Invalid master port"},
		{"cluster", "cluster-enabled yes\n", 1, "cluster-enabled yes is not supported"},
		{"bad save", "save 900\n", 1, "Invalid save parameters"},
		{"empty dir", "dir \"\"\n", 1, "dir can't be empty"},
		{"too many binds", "bind" + strings.Repeat(" 1.1.1.1", 17) + "\n", 1, "Too many bind addresses specified."},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := writeConf(t, tc.content)
			_, err := Load([]string{path})
			var le *LoadError
			if !errors.As(err, &le) {
				t.Fatalf("want *LoadError, got %v", err)
			}
			if le.File != path || le.Line != tc.line || !strings.HasPrefix(le.Msg, tc.msg) {
				t.Fatalf("got file %q line %d msg %q; want line %d msg %q", le.File, le.Line, le.Msg, tc.line, tc.msg)
			}
			if s := err.Error(); !strings.Contains(s, path) || !strings.Contains(s, "line ") || !strings.Contains(s, tc.msg) {
				t.Fatalf("error text %q lacks file, line or message", s)
			}
		})
	}
}

func TestLoad_FlagErrors(t *testing.T) {
	tests := []struct {
		name string
		args []string
		flag string
		msg  string
	}{
		{"unknown flag", []string{"--prot", "1"}, "--prot", "Bad directive or wrong number of arguments"},
		{"bad value", []string{"--port", "abc"}, "--port", "argument couldn't be parsed into an integer"},
		{"missing value", []string{"--port"}, "--port", "wrong number of arguments"},
		{"two values", []string{"--port", "1", "2"}, "--port", "wrong number of arguments"},
		{"bad bool", []string{"--cpu-pin", "maybe"}, "--cpu-pin", "argument must be 'yes' or 'no'"},
		{"flag swallowed as value", []string{"--cpu-pin", "--port", "1"}, "--cpu-pin", "wrong number of arguments"},
		{"equals form bad value", []string{"--shards=-1"}, "--shards", "argument must be between 0 and 4096 inclusive"},
		{"more shards than the store takes", []string{"--shards", "5000"}, "--shards", "argument must be between 0 and 4096 inclusive"},
		{"stray argument", []string{"--port", "1", "--", "x"}, "--", "expected an option"},
		{"flags only is fine", []string{"--port", "1"}, "", ""},
		{"single dash", []string{"-port", "1"}, "-port", "expected an option"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Load(tc.args)
			if tc.flag == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			var le *LoadError
			if !errors.As(err, &le) {
				t.Fatalf("want *LoadError, got %v", err)
			}
			if le.Flag != tc.flag || !strings.HasPrefix(le.Msg, tc.msg) {
				t.Fatalf("got flag %q msg %q; want %q %q", le.Flag, le.Msg, tc.flag, tc.msg)
			}
			if !strings.Contains(err.Error(), tc.flag) {
				t.Fatalf("error text %q does not name the flag", err)
			}
		})
	}
}

func TestLoad_FlagOverridesBadFileValueStillFails(t *testing.T) {
	// The file is applied before flags, so a bad file line is fatal even if a
	// flag would have overridden it (as with redis-server).
	path := writeConf(t, "port nope\n")
	if _, err := Load([]string{path, "--port", "1"}); err == nil {
		t.Fatal("want error")
	}
}

func TestLoad_MissingFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "absent.conf")
	_, err := Load([]string{path})
	if err == nil || !strings.Contains(err.Error(), "can't open config file '"+path+"'") {
		t.Fatalf("got %v", err)
	}
	if !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("error does not wrap os.ErrNotExist: %v", err)
	}
}

func TestLoad_MemoryUnits(t *testing.T) {
	tests := []struct {
		in   string
		want int64
	}{
		{"5000000", 5000000},
		{"5000k", 5000000},
		{"4096kb", 4 << 20},
		{"2m", 2000000},
		{"3MB", 3 << 20},
		{"1g", 1000000000},
		{"2Gb", 2 << 30},
	}
	for _, tc := range tests {
		path := writeConf(t, "block-cache-size "+tc.in+"\n")
		c, err := Load([]string{path})
		if err != nil {
			t.Fatalf("%s: %v", tc.in, err)
		}
		if c.BlockCacheSize() != tc.want {
			t.Errorf("block-cache-size %s = %d, want %d", tc.in, c.BlockCacheSize(), tc.want)
		}
	}
}

func TestGet_Patterns(t *testing.T) {
	c := Default()
	tests := []struct {
		pattern string
		want    [][2]string
	}{
		{"port", [][2]string{{"port", "6379"}}},
		{"PORT", [][2]string{{"PORT", "6379"}}}, // exact lookups echo the caller's spelling, like Redis 7
		{"nosuch", [][2]string{}},
		{"nosuch*", [][2]string{}},
		{"slowlog*", [][2]string{{"slowlog-log-slower-than", "10000"}, {"slowlog-max-len", "128"}}},
		{"*MAX-LEN", [][2]string{
			{"acllog-max-len", "128"}, {"slowlog-max-len", "128"},
		}},
		{"slave*-ip", [][2]string{{"slave-announce-ip", ""}}}, // aliases are listed too, as in Redis

		{"?ave", [][2]string{{"save", ""}}},
		{"[bk]*-size", [][2]string{{"blob-min-size", "4096"}, {"block-cache-size", "268435456"}, {"key-cache-size", "67108864"}}},
		{"d[ai]*", [][2]string{{"daemonize", "no"}, {"databases", "16"}, {"dir", "./data"}, {"disable-thp", "yes"}, {"disk-reserve", "67108864"}}},
	}
	for _, tc := range tests {
		if got := c.Get(tc.pattern); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("Get(%q) = %q, want %q", tc.pattern, got, tc.want)
		}
	}
	if got, want := len(c.Get("*")), len(allNames); got != want {
		t.Errorf("Get(*) returned %d params, want %d", got, want)
	}
}

func TestGetMulti(t *testing.T) {
	c := Default()
	got := c.GetMulti([]string{"timeout", "port", "p[io]*", "TIMEOUT"})
	want := [][2]string{{"pidfile", ""}, {"port", "6379"}, {"timeout", "0"}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("GetMulti = %q, want %q", got, want)
	}
	if got := c.GetMulti(nil); got == nil || len(got) != 0 {
		t.Fatalf("GetMulti(nil) = %#v", got)
	}
}

func TestSet_OK(t *testing.T) {
	c := Default()
	err := c.Set([][2]string{
		{"maxclients", "50"},
		{"TIMEOUT", "30"},
		{"appendfsync", "Always"},
		{"block-cache-size", "1gb"},
		{"proto-max-bulk-len", "1mb"},
		{"client-query-buffer-limit", "2mb"},
		{"binlog-max-entries", "0"},
		{"binlog-max-age", "60"},
		{"repl-fullsync-max-rate", "50mb"},
		{"hz", "20"},
		{"slowlog-log-slower-than", "-1"},
		{"slowlog-max-len", "0"},
		{"loglevel", "debug"},
		{"requirepass", "s3cret"},
		{"save", ""},
		{"appendonly", "yes"},
	})
	if err != nil {
		t.Fatal(err)
	}
	if c.MaxClients() != 50 || c.Timeout() != 30*time.Second || c.AppendFsync() != "always" ||
		c.BlockCacheSize() != 1<<30 || c.ProtoMaxBulkLen() != 1<<20 || c.ClientQueryBufferLimit() != 2<<20 ||
		c.BinlogMaxEntries() != 0 || c.BinlogMaxAge() != time.Minute || c.FullSyncMaxRate() != 50<<20 || c.Hz() != 20 ||
		c.SlowlogSlowerThan() != -1 || c.SlowlogMaxLen() != 0 || c.LogLevel() != "debug" ||
		c.RequirePass() != "s3cret" {
		t.Fatalf("values not applied: %v", all(c))
	}
	if got := c.Get("block-cache-size")[0][1]; got != "1073741824" {
		t.Fatalf("CONFIG GET block-cache-size = %q, want bytes", got)
	}
	// Save accepts Redis-valid schedules (kept, without effect) and reads them back.
	if err := c.Set([][2]string{{"save", "3600 1 300 100"}}); err != nil {
		t.Fatal(err)
	}
	if got := c.Get("save")[0][1]; got != "3600 1 300 100" {
		t.Fatalf("save = %q", got)
	}
	// Clear the password again.
	if err := c.Set([][2]string{{"requirepass", ""}}); err != nil || c.RequirePass() != "" {
		t.Fatalf("clearing requirepass: %v %q", err, c.RequirePass())
	}
}

func TestSet_Unknown(t *testing.T) {
	c := Default()
	err := c.Set([][2]string{{"maxclients", "5"}, {"Foo", "bar"}})
	want := "ERR Unknown option or number of arguments for CONFIG SET - 'Foo'"
	if err == nil || err.Error() != want {
		t.Fatalf("got %v, want %q", err, want)
	}
	if c.MaxClients() != 10000 {
		t.Fatal("partial apply")
	}
}

func TestSet_Immutable(t *testing.T) {
	for _, name := range []string{"port", "PORT", "bind", "loops", "shards", "cpu-pin", "write-buffer-size",
		"databases", "daemonize", "logfile", "pidfile"} {
		c := Default()
		err := c.Set([][2]string{{name, "1"}})
		want := "ERR CONFIG SET failed (possibly related to argument '" + name + "') - can't set immutable config"
		if err == nil || err.Error() != want {
			t.Errorf("Set(%s): got %v, want %q", name, err, want)
		}
	}
}

func TestSet_Duplicate(t *testing.T) {
	c := Default()
	err := c.Set([][2]string{{"hz", "20"}, {"maxclients", "5"}, {"HZ", "30"}})
	want := "ERR CONFIG SET failed (possibly related to argument 'HZ') - duplicate parameter"
	if err == nil || err.Error() != want {
		t.Fatalf("got %v, want %q", err, want)
	}
	if c.Hz() != 10 || c.MaxClients() != 10000 {
		t.Fatal("partial apply")
	}
}

func TestSet_BadValues(t *testing.T) {
	tests := []struct {
		name, value, msg string
	}{
		{"maxclients", "many", "argument couldn't be parsed into an integer"},
		{"maxclients", "1k", "argument couldn't be parsed into an integer"},
		{"maxclients", "0", "argument must be between 1 and 4294967295 inclusive"},
		{"maxclients", "4294967296", "argument must be between 1 and 4294967295 inclusive"},
		{"timeout", "-1", "argument must be between 0 and 2147483647 inclusive"},
		{"timeout", "1.5", "argument couldn't be parsed into an integer"},
		{"hz", "-1", "argument must be between 0 and 2147483647 inclusive"},
		{"slowlog-log-slower-than", "-2", "argument must be between -1 and 9223372036854775807 inclusive"},
		{"slowlog-max-len", "-1", "argument must be between 0 and 9223372036854775807 inclusive"},
		{"tracking-table-max-keys", "-1", "argument must be between 0 and 9223372036854775807 inclusive"},
		{"tracking-table-max-keys", "abc", "argument couldn't be parsed into an integer"},
		{"binlog-max-entries", "-5", "argument must be between 0 and 9223372036854775807 inclusive"},
		{"binlog-max-age", "1h", "argument couldn't be parsed into an integer"},
		{"block-cache-size", "lots", "argument must be a memory value"},
		{"block-cache-size", "-1", "argument must be a memory value"},
		{"proto-max-bulk-len", "1000k", "argument must be between 1048576 and 9223372036854775807 inclusive"},
		{"client-query-buffer-limit", "1kb", "argument must be between 1048576 and 9223372036854775807 inclusive"},
		{"appendfsync", "often", "argument(s) must be one of the following: everysec, always, no"},
		{"loglevel", "", "argument(s) must be one of the following: debug, verbose, notice, warning"},
		{"appendonly", "maybe", "argument must be 'yes' or 'no'"},
		{"save", "900", "Invalid save parameters"},
		{"save", "0 1", "Invalid save parameters"},
		{"save", "900 -1", "Invalid save parameters"},
	}
	for _, tc := range tests {
		c := Default()
		err := c.Set([][2]string{{strings.ToUpper(tc.name), tc.value}})
		// Value errors quote the canonical (lower-case) name, like Redis.
		want := "ERR CONFIG SET failed (possibly related to argument '" + tc.name + "') - " + tc.msg
		if err == nil || err.Error() != want {
			t.Errorf("Set(%s %q): got %v, want %q", tc.name, tc.value, err, want)
		}
		if !reflect.DeepEqual(all(c), defaults) {
			t.Errorf("Set(%s %q) changed values despite failing", tc.name, tc.value)
		}
	}
}

func TestSet_FirstErrorWins(t *testing.T) {
	tests := []struct {
		name  string
		pairs [][2]string
		want  string
	}{
		{"immutable before unknown", [][2]string{{"port", "1"}, {"nosuch", "1"}},
			"ERR CONFIG SET failed (possibly related to argument 'port') - can't set immutable config"},
		{"unknown before immutable", [][2]string{{"nosuch", "1"}, {"port", "1"}},
			"ERR Unknown option or number of arguments for CONFIG SET - 'nosuch'"},
		{"name errors before value errors", [][2]string{{"maxclients", "x"}, {"port", "1"}},
			"ERR CONFIG SET failed (possibly related to argument 'port') - can't set immutable config"},
		{"first bad value", [][2]string{{"hz", "20"}, {"maxclients", "x"}, {"timeout", "-1"}},
			"ERR CONFIG SET failed (possibly related to argument 'maxclients') - argument couldn't be parsed into an integer"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := Default()
			err := c.Set(tc.pairs)
			if err == nil || err.Error() != tc.want {
				t.Fatalf("got %v, want %q", err, tc.want)
			}
		})
	}
}

func TestSet_Empty(t *testing.T) {
	err := Default().Set(nil)
	if err == nil || err.Error() != "ERR wrong number of arguments for 'config|set' command" {
		t.Fatalf("got %v", err)
	}
}

func TestSet_Atomic(t *testing.T) {
	c := Default()
	calls := 0
	c.OnChange("maxclients", func() { calls++ })
	c.OnChange("hz", func() { calls++ })
	err := c.Set([][2]string{{"maxclients", "5"}, {"hz", "50"}, {"appendfsync", "bogus"}})
	if err == nil {
		t.Fatal("want error")
	}
	if c.MaxClients() != 10000 || c.Hz() != 10 || c.AppendFsync() != "everysec" {
		t.Fatalf("partial apply: maxclients %d hz %d", c.MaxClients(), c.Hz())
	}
	if calls != 0 {
		t.Fatalf("hooks ran %d times after a failed Set", calls)
	}
}

func TestSet_HzClamped(t *testing.T) {
	c := Default()
	for _, tc := range []struct {
		in   string
		want int
	}{{"0", 1}, {"1", 1}, {"250", 250}, {"500", 500}, {"100000", 500}} {
		if err := c.Set([][2]string{{"hz", tc.in}}); err != nil {
			t.Fatal(err)
		}
		if c.Hz() != tc.want {
			t.Errorf("hz %s -> %d, want %d", tc.in, c.Hz(), tc.want)
		}
	}
}

func TestOnChange_Hooks(t *testing.T) {
	c := Default()
	var order []string
	var seen int64
	c.OnChange("block-cache-size", func() {
		order = append(order, "cache1")
		seen = c.BlockCacheSize() // the new value is visible to the hook
	})
	c.OnChange("BLOCK-CACHE-SIZE", func() { order = append(order, "cache2") })
	c.OnChange("requirepass", func() { order = append(order, "pass") })
	c.OnChange("port", func() { order = append(order, "port") }) // immutable: never fires

	steps := []struct {
		name  string
		pairs [][2]string
		want  []string
	}{
		{"change both", [][2]string{{"requirepass", "x"}, {"block-cache-size", "1mb"}}, []string{"pass", "cache1", "cache2"}},
		{"same values", [][2]string{{"requirepass", "x"}, {"block-cache-size", "1048576"}}, nil},
		{"unrelated", [][2]string{{"maxclients", "3"}}, nil},
		{"failed set", [][2]string{{"block-cache-size", "2mb"}, {"hz", "x"}}, nil},
		{"one changed", [][2]string{{"block-cache-size", "2mb"}}, []string{"cache1", "cache2"}},
	}
	for _, st := range steps {
		order = nil
		_ = c.Set(st.pairs)
		if !reflect.DeepEqual(order, st.want) {
			t.Errorf("%s: hooks ran %v, want %v", st.name, order, st.want)
		}
	}
	if seen != 2<<20 {
		t.Errorf("hook saw block-cache-size %d, want %d", seen, 2<<20)
	}
}

func TestOnChange_UnknownPanics(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("OnChange(unknown) did not panic")
		}
	}()
	Default().OnChange("nosuch", func() {})
}

func TestConcurrent_ReadersAndSetters(t *testing.T) {
	c := Default()
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				// Both values always come from the same CONFIG SET.
				m := all(c)
				if (m["maxclients"] == "111") != (m["timeout"] == "111") {
					t.Errorf("torn read: maxclients %s timeout %s", m["maxclients"], m["timeout"])
					return
				}
				_ = c.MaxClients() + c.Hz()
			}
		}()
	}
	for i := range 500 {
		v := "111"
		if i%2 == 1 {
			v = "222"
		}
		if err := c.Set([][2]string{{"maxclients", v}, {"timeout", v}}); err != nil {
			t.Fatal(err)
		}
	}
	close(stop)
	wg.Wait()
}

// TestExampleFile checks that shardis.conf.example loads, yields exactly the
// defaults and documents every parameter.
func TestExampleFile(t *testing.T) {
	path := filepath.Join("..", "shardis.conf.example")
	c, err := Load([]string{path})
	if err != nil {
		t.Fatal(err)
	}
	if got := all(c); !reflect.DeepEqual(got, defaults) {
		t.Fatalf("example file does not match defaults:\n got %v\nwant %v", got, defaults)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range paramList {
		name := p.name
		re := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(name) + ` `)
		if !re.Match(data) {
			t.Errorf("example file has no %q directive", name)
		}
	}
}

// TestDocs checks that docs/CONFIG.md has a table row for every parameter.
func TestDocs(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "docs", "CONFIG.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range paramList {
		if !strings.Contains(string(data), "| `"+p.name+"` |") {
			t.Errorf("docs/CONFIG.md has no table row for %q", p.name)
		}
	}
	for _, p := range keptParams {
		if !strings.Contains(string(data), "`"+p.name+"`") {
			t.Errorf("docs/CONFIG.md does not name %q", p.name)
		}
	}
}

// include applies another file where it stands (a glob includes every match, none is fine),
// and CONFIG REWRITE keeps the include line.
func TestLoad_Include(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "a.conf"), []byte("hz 30\nmaxmemory 1mb\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	main := filepath.Join(dir, "main.conf")
	content := "timeout 7\ninclude " + filepath.Join(dir, "a.conf") + "\ninclude " + filepath.Join(dir, "none-*.conf") + "\nhz 40\n"
	if err := os.WriteFile(main, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := Load([]string{main})
	if err != nil {
		t.Fatal(err)
	}
	if c.Hz() != 40 || c.Timeout() != 7*time.Second || c.Value("maxmemory") != "1048576" {
		t.Fatalf("hz %d timeout %v maxmemory %s", c.Hz(), c.Timeout(), c.Value("maxmemory"))
	}
	if err := c.Rewrite(); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(main)
	if !strings.Contains(string(got), "\ninclude "+filepath.Join(dir, "a.conf")+"\n") {
		t.Fatalf("the include line is gone after CONFIG REWRITE:\n%s", got)
	}
	self := filepath.Join(dir, "self.conf")
	if err := os.WriteFile(self, []byte("include "+self+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Load([]string{self}); err == nil || !strings.Contains(err.Error(), "nested deeper") {
		t.Fatalf("a file including itself: %v", err)
	}
	if _, err := Load([]string{"--include", filepath.Join(dir, "missing.conf")}); err == nil ||
		!strings.Contains(err.Error(), "can't open config file") {
		t.Fatalf("a missing include: %v", err)
	}
}

// TestLoad_MultiArgParamOneQuotedArgument_SplitLikeRedis: redis-server splits the one
// non-empty argument of a multi-argument directive like a config line, on its command line
// (as init scripts write it) and in a config file alike.
func TestLoad_MultiArgParamOneQuotedArgument_SplitLikeRedis(t *testing.T) {
	want := map[string]string{
		"client-output-buffer-limit":        "normal 268435456 67108864 60 slave 268435456 67108864 60 pubsub 33554432 8388608 60",
		"save":                              "900 1 300 10",
		"oom-score-adj-values":              "0 100 900",
		"latency-tracking-info-percentiles": "50 99",
	}
	check := func(t *testing.T, c *Config) {
		t.Helper()
		for k, v := range want {
			if got := c.Value(k); got != v {
				t.Errorf("%s = %q, want %q", k, got, v)
			}
		}
	}
	t.Run("command line", func(t *testing.T) {
		c, err := Load([]string{"--client-output-buffer-limit", "normal 256mb 64mb 60",
			"--save", "900 1 300 10", "--oom-score-adj-values", "0 100 900",
			"--latency-tracking-info-percentiles", "50 99"})
		if err != nil {
			t.Fatal(err)
		}
		check(t, c)
	})
	t.Run("config file", func(t *testing.T) {
		c, err := Load([]string{writeConf(t, "client-output-buffer-limit \"normal 256mb 64mb 60\"\n"+
			"save \"900 1 300 10\"\noom-score-adj-values \"0 100 900\"\nlatency-tracking-info-percentiles \"50 99\"\n")})
		if err != nil {
			t.Fatal(err)
		}
		check(t, c)
	})
	t.Run("save empty", func(t *testing.T) {
		c, err := Load([]string{"--save", "900 1", "--save", ""})
		if err != nil {
			t.Fatal(err)
		}
		if got := all(c)["save"]; got != "" {
			t.Errorf("save = %q after --save \"\", want empty", got)
		}
	})
	t.Run("single-value parameter stays one argument", func(t *testing.T) {
		if _, err := Load([]string{"--port", "0 1"}); err == nil {
			t.Fatal("--port \"0 1\" was accepted; redis-server refuses it")
		}
	})
}

func TestDiskReserve_DefaultIsAutomatic_GivenValueTakenAsIs(t *testing.T) {
	if got := Default().DiskReserve(); got != AutoDiskReserve {
		t.Errorf("default DiskReserve = %d, want AutoDiskReserve", got)
	}
	c, err := Load([]string{"--disk-reserve", "8mb"})
	if err != nil {
		t.Fatal(err)
	}
	if got := c.DiskReserve(); got != 8<<20 {
		t.Errorf("--disk-reserve 8mb: DiskReserve = %d", got)
	}
	if got := Default().Value("disk-reserve"); got != "67108864" {
		t.Errorf("CONFIG GET disk-reserve by default = %q, want 67108864", got)
	}
}
