package config

import (
	"maps"
	"path/filepath"
	"strconv"
	"strings"
)

// keptParams are Redis 7.0's parameters that have no meaning for shardis (encoding sizes of an
// in-memory store, RDB and AOF files, defragmentation, allocator, cluster and TLS settings, …):
// each is accepted in the config file, on the command line and by CONFIG SET, validated as
// Redis validates it (same error texts), kept, returned by CONFIG GET, written by CONFIG
// REWRITE, and named once in the start-up log. Their values live in values.kept. The
// Redis-typed builders below mirror Redis's numeric types: Redis's unsigned and size_t types
// compare a negative value as a huge one, so they fail the bounds check, not the parse.
var keptParams = []*param{
	// The ACL parameters are kept here for their Redis types, but shardis acts on them
	// (Config.ACLFile, ACLLogMaxLen, ACLPubsubAllChannels).
	withEffect(keptEnum("acl-pubsub-default", true, "resetchannels", "allchannels", "resetchannels")),
	withEffect(keptStr("aclfile", "", false, "", nil)),
	withEffect(keptNum("acllog-max-len", "", true, 128, uSpec(0, longMax))),
	keptNum("active-defrag-cycle-max", "", true, 25, iSpec(1, 99)),
	keptNum("active-defrag-cycle-min", "", true, 1, iSpec(1, 99)),
	keptNum("active-defrag-ignore-bytes", "", true, 100*mb, uMemSpec(1, llMax)),
	keptNum("active-defrag-max-scan-fields", "", true, 1000, uSpec(1, longMax)),
	keptNum("active-defrag-threshold-lower", "", true, 10, iSpec(0, 1000)),
	keptNum("active-defrag-threshold-upper", "", true, 100, iSpec(0, 1000)),
	keptNum("active-expire-effort", "", true, 1, iSpec(1, 10)),
	keptBool("activedefrag", "", true, false, func(b bool) string {
		if b {
			return "Active defragmentation cannot be enabled: it requires a Redis server compiled with a modified Jemalloc like the one shipped by default with the Redis source distribution"
		}
		return ""
	}),
	keptBool("activerehashing", "", true, true, nil),
	keptBool("always-show-logo", "", false, false, nil),
	keptBool("aof-disable-auto-gc", "", true, false, nil),
	keptBool("aof-load-truncated", "", true, true, nil),
	keptBool("aof-rewrite-incremental-fsync", "", true, true, nil),
	keptBool("aof-timestamp-enabled", "", true, false, nil),
	keptBool("aof-use-rdb-preamble", "", true, true, nil),
	keptStr("aof_rewrite_cpulist", "", false, "", nil),
	keptStr("appenddirname", "", false, "appendonlydir", baseName("appenddirname can't be a path, just a dirname")),
	keptStr("appendfilename", "", false, "appendonly.aof", baseName("appendfilename can't be a path, just a filename")),
	keptNum("auto-aof-rewrite-min-size", "", true, 64*mb, memSpec(0, llMax)),
	keptNum("auto-aof-rewrite-percentage", "", true, 100, iSpec(0, intMax)),
	keptStr("bgsave_cpulist", "", false, "", nil),
	keptStr("bind-source-addr", "", true, "", nil),
	keptStr("bio_cpulist", "", false, "", nil),
	keptBool("cluster-allow-pubsubshard-when-down", "", true, true, nil),
	keptBool("cluster-allow-reads-when-down", "", true, false, nil),
	keptBool("cluster-allow-replica-migration", "", true, true, nil),
	keptNum("cluster-announce-bus-port", "", true, 0, iSpec(0, 65535)),
	keptStr("cluster-announce-hostname", "", true, "", validHostname),
	keptStr("cluster-announce-ip", "", true, "", nil),
	keptNum("cluster-announce-port", "", true, 0, iSpec(0, 65535)),
	keptNum("cluster-announce-tls-port", "", true, 0, iSpec(0, 65535)),
	keptStr("cluster-config-file", "", false, "nodes.conf", nil),
	// shardis runs standalone: accepting "yes" and running without a cluster would mislead.
	keptBool("cluster-enabled", "", false, false, func(b bool) string {
		if b {
			return "cluster-enabled yes is not supported: shardis runs standalone"
		}
		return ""
	}),
	keptNum("cluster-link-sendbuf-limit", "", true, 0, uMemSpec(0, ullMax)),
	keptNum("cluster-migration-barrier", "", true, 1, iSpec(0, intMax)),
	keptNum("cluster-node-timeout", "", true, 15000, iSpec(0, llMax)),
	keptNum("cluster-port", "", false, 0, iSpec(0, 65535)),
	keptEnum("cluster-preferred-endpoint-type", true, "ip", "ip", "hostname", "unknown-endpoint"),
	keptBool("cluster-replica-no-failover", "cluster-slave-no-failover", true, false, nil),
	keptNum("cluster-replica-validity-factor", "cluster-slave-validity-factor", true, 10, iSpec(0, intMax)),
	keptBool("cluster-require-full-coverage", "", true, true, nil),
	keptBool("crash-log-enabled", "", true, true, nil),
	keptBool("crash-memcheck-enabled", "", true, true, nil),
	keptBool("disable-thp", "", false, true, nil),
	keptBool("dynamic-hz", "", true, true, nil),
	withEffect(keptEnum("enable-debug-command", false, "no", "no", "yes", "local")),
	keptEnum("enable-module-command", false, "no", "no", "yes", "local"),
	keptNum("hash-max-listpack-entries", "hash-max-ziplist-entries", true, 512, uSpec(0, longMax)),
	keptNum("hash-max-listpack-value", "hash-max-ziplist-value", true, 64, uMemSpec(0, longMax)),
	keptStr("ignore-warnings", "", true, "", nil),
	keptNum("io-threads", "", false, 1, iSpec(1, 128)),
	keptBool("io-threads-do-reads", "", false, false, nil),
	keptBool("jemalloc-bg-thread", "", true, true, nil),
	keptBool("lazyfree-lazy-eviction", "", true, false, nil),
	keptBool("lazyfree-lazy-expire", "", true, false, nil),
	keptBool("lazyfree-lazy-server-del", "", true, false, nil),
	keptBool("lazyfree-lazy-user-del", "", true, false, nil),
	keptBool("lazyfree-lazy-user-flush", "", true, false, nil),
	withEffect(keptNum("lfu-decay-time", "", true, 1, iSpec(0, intMax))),
	withEffect(keptNum("lfu-log-factor", "", true, 10, iSpec(0, intMax))),
	keptNum("list-compress-depth", "", true, 0, iSpec(0, intMax)),
	keptNum("list-max-listpack-size", "list-max-ziplist-size", true, -2, iSpec(intMin, intMax)),
	keptStr("masterauth", "", true, "", nil),
	keptStr("masteruser", "", true, "", nil),
	keptNum("maxmemory", "", true, 0, uMemSpec(0, ullMax)),
	keptNum("maxmemory-clients", "", true, 0, numSpec{numKind: numKind{memory: true, percent: true}, lo: -100, hi: ssizeMax}),
	keptNum("maxmemory-eviction-tenacity", "", true, 10, iSpec(0, 100)),
	keptEnum("maxmemory-policy", true, "noeviction", "volatile-lru", "volatile-lfu", "volatile-random",
		"volatile-ttl", "allkeys-lru", "allkeys-lfu", "allkeys-random", "noeviction"),
	keptNum("maxmemory-samples", "", true, 5, iSpec(1, intMax)),
	keptNum("min-replicas-max-lag", "min-slaves-max-lag", true, 10, iSpec(0, intMax)),
	keptNum("min-replicas-to-write", "min-slaves-to-write", true, 0, iSpec(0, intMax)),
	keptBool("no-appendfsync-on-rewrite", "", true, false, nil),
	// "yes" and "relative" are one setting, which CONFIG GET calls "yes".
	keptSpecial("oom-score-adj", true, "no", func(args []string) (string, string) {
		switch s := strings.ToLower(args[0]); s {
		case "no", "yes", "absolute":
			return s, ""
		case "relative":
			return "yes", ""
		}
		return "", enumErr([]string{"no", "yes", "relative", "absolute"})
	}),
	withMulti(keptSpecial("oom-score-adj-values", true, "0 200 800", setOOMValues)),
	keptStr("proc-title-template", "", true, "{title} {listen-addr} {server-mode}", validTitleTemplate),
	keptEnum("propagation-error-behavior", true, "ignore", "ignore", "panic", "panic-on-replicas"),
	keptBool("rdb-del-sync-files", "", true, false, nil),
	keptBool("rdb-save-incremental-fsync", "", true, true, nil),
	keptNum("repl-backlog-size", "", true, mb, memSpec(1, llMax)),
	keptNum("repl-backlog-ttl", "", true, 3600, iSpec(0, longMax)),
	keptBool("repl-disable-tcp-nodelay", "", true, false, nil),
	keptEnum("repl-diskless-load", true, "disabled", "disabled", "on-empty-db", "swapdb"),
	keptBool("repl-diskless-sync", "", true, true, nil),
	keptNum("repl-diskless-sync-delay", "", true, 5, iSpec(0, intMax)),
	keptNum("repl-diskless-sync-max-replicas", "", true, 0, iSpec(0, intMax)),
	keptNum("repl-ping-replica-period", "repl-ping-slave-period", true, 10, iSpec(1, intMax)),
	keptNum("repl-timeout", "", true, 60, iSpec(1, intMax)),
	keptStr("replica-announce-ip", "slave-announce-ip", true, "", nil),
	keptNum("replica-announce-port", "slave-announce-port", true, 0, iSpec(0, 65535)),
	keptBool("replica-announced", "", true, true, nil),
	keptBool("replica-ignore-disk-write-errors", "", true, false, nil),
	keptBool("replica-ignore-maxmemory", "slave-ignore-maxmemory", true, true, nil),
	keptBool("replica-lazy-flush", "slave-lazy-flush", true, false, nil),
	keptNum("replica-priority", "slave-priority", true, 100, iSpec(0, intMax)),
	keptBool("replica-read-only", "slave-read-only", true, true, nil),
	keptBool("replica-serve-stale-data", "slave-serve-stale-data", true, true, nil),
	// "replicaof host port" makes the server a replica at start (package replication reads
	// it); "no one" is the default.
	withAlias(withMulti(keptSpecial("replicaof", false, "", func(args []string) (string, string) {
		if len(args) == 1 && args[0] == "" {
			return "", "" // the default: not a replica
		}
		if len(args) != 2 {
			return "", errWrongArgs
		}
		if strings.EqualFold(args[0], "no") && strings.EqualFold(args[1], "one") {
			return "", ""
		}
		if port, err := strconv.ParseInt(args[1], 10, 64); err != nil || port < 0 || port > 65535 {
			return "", "Invalid master port"
		}
		return args[0] + " " + args[1], ""
	})), "slaveof"),
	keptEnum("sanitize-dump-payload", true, "no", "no", "yes", "clients"),
	keptStr("server_cpulist", "", false, "", nil),
	keptNum("set-max-intset-entries", "", true, 512, uSpec(0, longMax)),
	keptBool("set-proc-title", "", false, true, nil),
	withMulti(keptSpecial("shutdown-on-sigint", true, "default", setShutdownFlags)),
	withMulti(keptSpecial("shutdown-on-sigterm", true, "default", setShutdownFlags)),
	keptNum("shutdown-timeout", "", true, 10, iSpec(0, intMax)),
	keptNum("socket-mark-id", "", false, 0, uSpec(0, uintMax)),
	keptBool("stop-writes-on-bgsave-error", "", true, true, nil),
	keptNum("stream-node-max-bytes", "", true, 4096, uMemSpec(0, longMax)),
	keptNum("stream-node-max-entries", "", true, 100, iSpec(0, llMax)),
	keptBool("syslog-enabled", "", false, false, nil),
	keptEnum("syslog-facility", false, "local0", "user", "local0", "local1", "local2", "local3",
		"local4", "local5", "local6", "local7"),
	keptStr("syslog-ident", "", false, "redis", nil),
	keptNum("tcp-backlog", "", false, 511, iSpec(0, intMax)),
	keptEnum("tls-auth-clients", true, "yes", "no", "yes", "optional"),
	keptStr("tls-ca-cert-dir", "", true, "", nil),
	keptStr("tls-ca-cert-file", "", true, "", nil),
	keptStr("tls-cert-file", "", true, "", nil),
	keptStr("tls-ciphers", "", true, "", nil),
	keptStr("tls-ciphersuites", "", true, "", nil),
	keptStr("tls-client-cert-file", "", true, "", nil),
	keptStr("tls-client-key-file", "", true, "", nil),
	keptStr("tls-client-key-file-pass", "", true, "", nil),
	// shardis has no TLS: turning it on fails as Redis fails when it cannot set TLS up.
	keptBool("tls-cluster", "", true, false, noTLS),
	keptStr("tls-dh-params-file", "", true, "", nil),
	keptStr("tls-key-file", "", true, "", nil),
	keptStr("tls-key-file-pass", "", true, "", nil),
	withCheck(keptNum("tls-port", "", true, 0, iSpec(0, 65535)), func(args []string) string {
		if n, ok := parseInt(args[0]); ok && n > 0 && n <= 65535 {
			return errTLS
		}
		return ""
	}),
	keptBool("tls-prefer-server-ciphers", "", true, false, nil),
	keptStr("tls-protocols", "", true, "", nil),
	keptBool("tls-replication", "", true, false, noTLS),
	keptNum("tls-session-cache-size", "", true, 20480, iSpec(0, intMax)),
	keptNum("tls-session-cache-timeout", "", true, 300, iSpec(0, intMax)),
	keptBool("tls-session-caching", "", true, true, nil),
	withEffect(keptNum("zset-max-listpack-entries", "zset-max-ziplist-entries", true, 128, uSpec(0, longMax))),
	withEffect(keptNum("zset-max-listpack-value", "zset-max-ziplist-value", true, 64, uMemSpec(0, longMax))),

	// Redis's hidden parameters (HIDDEN_CONFIG): CONFIG GET shows them by their exact name
	// only, not to a pattern. Those that would change what the server does are refused at any
	// value but their default, since shardis does not do it.
	withHidden(keptNum("loading-process-events-interval-bytes", "", true, 2*mb, iSpec(1024, intMax))),
	withHidden(notBuiltNum("key-load-delay", 0, iSpec(intMin, intMax),
		"shardis loads no dataset key by key (its loading is RocksDB's recovery)")),
	withHidden(keptBool("lua-enable-deprecated-api", "", false, false, func(b bool) string {
		if b {
			return "lua-enable-deprecated-api yes is not supported: shardis's Lua has no deprecated API to enable"
		}
		return ""
	})),
	withHidden(notBuiltNum("rdb-key-save-delay", 0, iSpec(intMin, intMax),
		"shardis saves a RocksDB checkpoint, not key by key")),
	withHidden(keptBool("use-exit-on-panic", "", true, false, nil)),
	withHidden(notBuiltNum("watchdog-period", 0, iSpec(0, intMax), "shardis has no software watchdog")),
}

// notBuiltNum is a kept numeric parameter whose non-default values ask for something shardis
// does not do: any value but def is refused ("<name> <value> is not supported: <why>") after
// Redis's own checks, rather than accepted and silently ignored.
func notBuiltNum(name string, def int64, sp numSpec, why string) *param {
	return withCheck(keptNum(name, "", true, def, sp), func(args []string) string {
		if n, ok := parseInt(args[0]); ok && n != def {
			return name + " " + args[0] + " is not supported: " + why
		}
		return ""
	})
}

func withHidden(p *param) *param { p.hidden = true; return p }

const errTLS = "Unable to update TLS configuration. Check server logs."

func noTLS(b bool) string {
	if b {
		return errTLS
	}
	return ""
}

// Numeric specs named after Redis's numeric types.
func iSpec(lo, hi int64) numSpec { return numSpec{lo: lo, hi: uint64(hi)} }
func uSpec(lo int64, hi uint64) numSpec {
	return numSpec{numKind: numKind{unsigned: true}, lo: lo, hi: hi}
}
func memSpec(lo, hi int64) numSpec {
	return numSpec{numKind: numKind{memory: true}, lo: lo, hi: uint64(hi)}
}
func uMemSpec(lo int64, hi uint64) numSpec {
	return numSpec{numKind: numKind{unsigned: true, memory: true}, lo: lo, hi: hi}
}

// withEffect marks a kept parameter that shardis acts on though it has no accessor of its
// own (read with Config.Value): the start-up log does not name it as without effect.
func withEffect(p *param) *param { p.noEffect = false; return p }

func withMulti(p *param) *param               { p.multiArg = true; return p }
func withAlias(p *param, alias string) *param { p.alias = alias; return p }
func withCheck(p *param, check func([]string) string) *param {
	set := p.set
	p.set = func(v *values, args []string) string {
		if msg := set(v, args); msg != "" {
			return msg
		}
		return check(args)
	}
	return p
}

// keptSpecial builds a kept parameter from a parser returning the CONFIG GET form or an error.
func keptSpecial(name string, mutable bool, def string, parse func(args []string) (string, string)) *param {
	return &param{
		name:     name,
		mutable:  mutable,
		noEffect: true,
		def:      fieldsOrEmpty(def),
		set: func(v *values, args []string) string {
			s, msg := parse(args)
			if msg != "" {
				return msg
			}
			v.kept[name] = s
			return ""
		},
		get: func(v *values) string { return v.kept[name] },
	}
}

func keptNum(name, alias string, mutable bool, def int64, sp numSpec) *param {
	p := keptSpecial(name, mutable, sp.format(def), func(args []string) (string, string) {
		n, msg := sp.parse(args[0])
		return sp.format(n), msg
	})
	p.alias, p.memory = alias, sp.memory
	return p
}

func keptBool(name, alias string, mutable, def bool, check func(bool) string) *param {
	p := keptSpecial(name, mutable, yesNo(def), func(args []string) (string, string) {
		var b bool
		switch strings.ToLower(args[0]) {
		case "yes":
			b = true
		case "no":
		default:
			return "", errNotYesNo
		}
		if check != nil {
			if msg := check(b); msg != "" {
				return "", msg
			}
		}
		return yesNo(b), ""
	})
	p.alias = alias
	return p
}

func keptEnum(name string, mutable bool, def string, options ...string) *param {
	return keptSpecial(name, mutable, def, func(args []string) (string, string) {
		for _, o := range options {
			if strings.EqualFold(o, args[0]) {
				return o, ""
			}
		}
		return "", enumErr(options)
	})
}

func keptStr(name, alias string, mutable bool, def string, check func(string) string) *param {
	p := keptSpecial(name, mutable, "", func(args []string) (string, string) {
		if check != nil {
			if msg := check(args[0]); msg != "" {
				return "", msg
			}
		}
		return args[0], ""
	})
	p.alias, p.quoted, p.def = alias, true, []string{def}
	return p
}

// baseName refuses a value that is a path, with Redis's message.
func baseName(msg string) func(string) string {
	return func(s string) string {
		if filepath.Base(s) != s {
			return msg
		}
		return ""
	}
}

func validHostname(s string) string {
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '.') {
			return "Hostnames may only contain alphanumeric characters, hyphens or dots"
		}
	}
	return ""
}

// validTitleTemplate accepts a proc-title-template as Redis does: {name} variables among the
// known ones, {{ and }} as literal braces, and something left once expanded.
func validTitleTemplate(s string) string {
	const bad = "template format is invalid or contains unknown variables"
	known := []string{"title", "listen-addr", "server-mode", "port", "tls-port", "unixsocket", "config-file"}
	var out strings.Builder
	for i := 0; i < len(s); i++ {
		switch {
		case strings.HasPrefix(s[i:], "{{"), strings.HasPrefix(s[i:], "}}"):
			out.WriteByte(s[i])
			i++
		case s[i] == '{':
			end := strings.IndexByte(s[i:], '}')
			if end < 0 {
				return bad
			}
			name := s[i+1 : i+end]
			found := false
			for _, k := range known {
				found = found || k == name
			}
			if !found {
				return bad
			}
			out.WriteString("x")
			i += end
		case s[i] == '}':
			return bad
		default:
			out.WriteByte(s[i])
		}
	}
	if strings.TrimSpace(out.String()) == "" {
		return bad
	}
	return ""
}

// setPercentiles validates latency-tracking-info-percentiles and formats it as Redis prints it.
func setPercentiles(args []string) (string, string) {
	if len(args) == 0 || len(args) == 1 && args[0] == "" {
		return "", ""
	}
	parts := make([]string, len(args))
	for i, a := range args {
		f, err := strconv.ParseFloat(a, 64)
		if err != nil || a == "" || strings.ContainsAny(a, " \t") {
			return "", "Invalid latency-tracking-info-percentiles parameters"
		}
		if f > 100 || f < 0 {
			return "", "latency-tracking-info-percentiles parameters should sit between [0.0,100.0]"
		}
		parts[i] = strconv.FormatFloat(f, 'f', -1, 64)
	}
	return strings.Join(parts, " "), ""
}

func setOOMValues(args []string) (string, string) {
	if len(args) != 3 {
		return "", errWrongArgs
	}
	for _, a := range args {
		n, err := strconv.ParseInt(a, 10, 64)
		if err != nil || n < -2000 || n > 2000 {
			return "", "Invalid oom-score-adj-values, elements must be between -2000 and 2000."
		}
	}
	return strings.Join(args, " "), ""
}

// setShutdownFlags reads shutdown-on-sigint/sigterm: flags among save, nosave, now and force
// (or default, none), printed in that order.
func setShutdownFlags(args []string) (string, string) {
	names := []string{"save", "nosave", "now", "force"}
	if len(args) == 0 {
		return "", enumErr(append([]string{"default"}, names...))
	}
	set := map[string]bool{}
	for _, a := range args {
		a = strings.ToLower(a)
		if a == "default" {
			continue
		}
		ok := false
		for _, n := range names {
			ok = ok || n == a
		}
		if !ok {
			return "", enumErr(append([]string{"default"}, names...))
		}
		set[a] = true
	}
	if set["save"] && set["nosave"] {
		return "", "shutdown can't have both 'save' and 'nosave' flags"
	}
	var out []string
	for _, n := range names {
		if set[n] {
			out = append(out, n)
		}
	}
	if len(out) == 0 {
		return "default", ""
	}
	return strings.Join(out, " "), ""
}

// fieldsOrEmpty splits a default into arguments; "" is one empty argument.
func fieldsOrEmpty(s string) []string {
	if s == "" {
		return []string{""}
	}
	return strings.Fields(s)
}

// cloneKept gives a snapshot its own copy of the kept values before a change.
func cloneKept(v *values) { v.kept = maps.Clone(v.kept) }
