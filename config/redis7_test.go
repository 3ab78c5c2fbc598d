package config

import (
	"bufio"
	"errors"
	"os"
	"strings"
	"testing"
)

// shardisDiffers lists the recorded answers shardis gives differently on purpose, each with
// the reason (docs/COMPATIBILITY.md).
var shardisDiffers = map[string]string{
	// Redis can move its listeners and its data directory live; shardis cannot.
	"port": "immutable", "bind": "immutable", "dir": "immutable",
}

// recorded reads testdata/redis7_config.txt (see testdata/record.py): redis-server 7.0.15's
// CONFIG GET * and its answers to CONFIG SET probes.
func recorded(t *testing.T) (get [][2]string, set [][3]string) {
	t.Helper()
	f, err := os.Open("testdata/redis7_config.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		parts := strings.Split(sc.Text(), "\t")
		switch parts[0] {
		case "get":
			get = append(get, [2]string{parts[1], parts[2]})
		case "set":
			set = append(set, [3]string{parts[1], parts[2], parts[3]})
		}
	}
	if len(get) < 150 || len(set) < 1000 {
		t.Fatalf("testdata too short: %d get, %d set lines", len(get), len(set))
	}
	return get, set
}

// Every parameter and alias redis-server 7.0 lists in CONFIG GET * is listed by shardis, with
// Redis's default except where shardis's default differs on purpose.
func TestRedis7_ConfigGetAllListsEveryParameter(t *testing.T) {
	get, _ := recorded(t)
	ours := map[string]string{}
	for _, kv := range Default().Get("*") {
		ours[kv[0]] = kv[1]
	}
	ownDefault := map[string]bool{
		"port": true, "dir": true, "bind": true, "save": true, "appendonly": true,
		"daemonize": true, "logfile": true, "pidfile": true,
	}
	for _, kv := range get {
		name, want := kv[0], kv[1]
		got, ok := ours[name]
		if !ok {
			t.Errorf("CONFIG GET * lacks %s", name)
			continue
		}
		if got != want && !ownDefault[name] {
			t.Errorf("default of %s = %q, redis-server has %q", name, got, want)
		}
	}
}

// CONFIG SET answers each recorded probe value as redis-server 7.0.15 did, byte for byte.
func TestRedis7_ConfigSetAnswers(t *testing.T) {
	_, set := recorded(t)
	n := 0
	for _, r := range set {
		name, value, want := r[0], r[1], r[2]
		if shardisDiffers[name] != "" {
			continue
		}
		c := Default()
		got := "OK"
		if err := c.Set([][2]string{{name, value}}); err != nil {
			got = err.Error()
		}
		if got != want {
			t.Errorf("CONFIG SET %s %q:\n got %s\nwant %s", name, value, got, want)
		}
		n++
	}
	t.Logf("%d recorded answers compared", n)
}

// Values CONFIG SET cannot reach (immutable parameters) are checked when the file or the command
// line is read, with redis-server 7.0.15's messages (recorded with
// "redis-server --port 0 --NAME VALUE", last line of its fatal error).
func TestRedis7_LoadErrors(t *testing.T) {
	for _, c := range []struct{ args, msg string }{
		{"unixsocketperm abc", "argument couldn't be parsed as an octal number"},
		{"unixsocketperm 999", "argument couldn't be parsed as an octal number"},
		{"unixsocketperm 1000", "argument must be between 0 and 777 inclusive"},
		{"unixsocketperm -1", "argument must be between 0 and 777 inclusive"},
		{"io-threads 0", "argument must be between 1 and 128 inclusive"},
		{"io-threads 129", "argument must be between 1 and 128 inclusive"},
		{"supervised foo", "argument(s) must be one of the following: upstart, systemd, auto, no"},
		{"daemonize maybe", "argument must be 'yes' or 'no'"},
		{"databases 0", "argument must be between 1 and 2147483647 inclusive"},
		{"tcp-backlog -1", "argument must be between 0 and 2147483647 inclusive"},
		{"socket-mark-id -1", "argument must be between 0 and 4294967295 inclusive"},
		{"socket-mark-id abc", "argument couldn't be parsed into an integer"},
		{"socket-mark-id 4294967296", "argument must be between 0 and 4294967295 inclusive"},
		{"syslog-facility x", "argument(s) must be one of the following: user, local0, local1, local2, local3, local4, local5, local6, local7"},
		{"appendfilename a/b", "appendfilename can't be a path, just a filename"},
		{"appenddirname a/b", "appenddirname can't be a path, just a dirname"},
		{"cluster-port 70000", "argument must be between 0 and 65535 inclusive"},
		{"enable-debug-command maybe", "argument(s) must be one of the following: no, yes, local"},
		{"rdbchecksum x", "argument must be 'yes' or 'no'"},
		{"replicaof a", "wrong number of arguments"},
		{"replicaof a b", "Invalid master port"},
		{"replicaof a 70000", "Invalid master port"},
		{"bind 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17", "Too many bind addresses specified."},
		{"save 1", "Invalid save parameters"},
		{"port 70000", "argument must be between 0 and 65535 inclusive"},
	} {
		f := strings.Fields(c.args)
		_, err := Load(append([]string{"--" + f[0]}, f[1:]...))
		var le *LoadError
		if !errors.As(err, &le) || le.Msg != c.msg {
			t.Errorf("--%s: %v; want %q", c.args, err, c.msg)
		}
	}
}

// dir and dbfilename are protected, as in Redis 7: CONFIG SET changes dbfilename only with
// enable-protected-configs yes, or local for a local client; dir, which shardis cannot move
// live, is then immutable.
func TestSet_ProtectedConfigs(t *testing.T) {
	prefix := "ERR CONFIG SET failed (possibly related to argument "
	for _, c := range []struct {
		mode  string
		local bool
		name  string
		want  string
	}{
		{"no", true, "dbfilename", prefix + "'dbfilename') - can't set protected config"},
		{"local", false, "dbfilename", prefix + "'dbfilename') - can't set protected config"},
		{"local", true, "dbfilename", ""},
		{"yes", false, "dbfilename", ""},
		{"no", true, "dir", prefix + "'dir') - can't set protected config"},
		{"yes", true, "dir", prefix + "'dir') - can't set immutable config"},
	} {
		cfg, err := Load([]string{"--enable-protected-configs", c.mode})
		if err != nil {
			t.Fatal(err)
		}
		got := ""
		if err := cfg.SetFrom([][2]string{{c.name, "x.rdb"}}, c.local); err != nil {
			got = err.Error()
		}
		if got != c.want {
			t.Errorf("enable-protected-configs %s, local %v, CONFIG SET %s: %q, want %q", c.mode, c.local, c.name, got, c.want)
		}
	}
}

// Redis 7.0's hidden parameters: CONFIG GET gives each by its exact name with Redis's default
// and lists none for a pattern; CONFIG SET checks values with redis-server 7.0.15's texts;
// one asking for what shardis does not do is refused at any other value than its default.
func TestRedis7_HiddenParameters_ByExactNameOnly(t *testing.T) {
	c := Default()
	for name, def := range map[string]string{
		"key-load-delay": "0", "rdb-key-save-delay": "0", "loading-process-events-interval-bytes": "2097152",
		"watchdog-period": "0", "use-exit-on-panic": "no", "lua-enable-deprecated-api": "no",
	} {
		if got := c.Get(name); len(got) != 1 || got[0][1] != def {
			t.Errorf("CONFIG GET %s = %v, want %s", name, got, def)
		}
		if got := c.Get(name[:len(name)-1] + "*"); len(got) != 0 {
			t.Errorf("CONFIG GET %s* = %v, want nothing (hidden)", name[:len(name)-1], got)
		}
	}
	prefix := "ERR CONFIG SET failed (possibly related to argument "
	for _, tc := range []struct{ name, value, want string }{
		{"key-load-delay", "0", "OK"},
		{"key-load-delay", "abc", prefix + "'key-load-delay') - argument couldn't be parsed into an integer"},
		{"key-load-delay", "2147483648", prefix + "'key-load-delay') - argument must be between -2147483648 and 2147483647 inclusive"},
		{"key-load-delay", "10", prefix + "'key-load-delay') - key-load-delay 10 is not supported: shardis loads no dataset key by key (its loading is RocksDB's recovery)"},
		{"rdb-key-save-delay", "-1", prefix + "'rdb-key-save-delay') - rdb-key-save-delay -1 is not supported: shardis saves a RocksDB checkpoint, not key by key"},
		{"rdb-key-save-delay", "-2147483649", prefix + "'rdb-key-save-delay') - argument must be between -2147483648 and 2147483647 inclusive"},
		{"loading-process-events-interval-bytes", "1024", "OK"},
		{"loading-process-events-interval-bytes", "1023", prefix + "'loading-process-events-interval-bytes') - argument must be between 1024 and 2147483647 inclusive"},
		{"watchdog-period", "-1", prefix + "'watchdog-period') - argument must be between 0 and 2147483647 inclusive"},
		{"watchdog-period", "100", prefix + "'watchdog-period') - watchdog-period 100 is not supported: shardis has no software watchdog"},
		{"use-exit-on-panic", "yes", "OK"},
		{"use-exit-on-panic", "1", prefix + "'use-exit-on-panic') - argument must be 'yes' or 'no'"},
		{"lua-enable-deprecated-api", "yes", prefix + "'lua-enable-deprecated-api') - can't set immutable config"},
	} {
		got := "OK"
		if err := Default().Set([][2]string{{tc.name, tc.value}}); err != nil {
			got = err.Error()
		}
		if got != tc.want {
			t.Errorf("CONFIG SET %s %s:\n got %s\nwant %s", tc.name, tc.value, got, tc.want)
		}
	}
	if _, err := Load([]string{"--lua-enable-deprecated-api", "yes"}); err == nil {
		t.Error("--lua-enable-deprecated-api yes was accepted")
	}
}
