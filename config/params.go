package config

import (
	"math"
	"slices"
	"strconv"
	"strings"

	"shardis/pubsub"
)

// values is one complete, immutable snapshot of every parameter. The Config
// publishes a new snapshot on every successful change, so readers never see
// a half-applied CONFIG SET.
type values struct {
	port                   int64
	bind                   []string // never mutated after publication
	dir                    string
	loops                  int64 // 0 = one per CPU
	shards                 int64 // 0 = 4 x CPUs
	cpuPin                 bool
	requirePass            string
	maxClients             int64
	timeout                int64 // seconds
	appendFsync            string
	blockCacheSize         int64
	keyCacheSize           int64
	writeBufferSize        int64
	blobMinSize            int64
	protoMaxBulkLen        int64
	clientQueryBufferLimit int64
	binlogMaxEntries       int64
	binlogMaxAge           int64 // seconds
	fullSyncMaxRate        int64 // bytes a second, 0: no limit
	hz                     int64
	slowlogSlowerThan      int64 // microseconds, -1 disables
	slowlogMaxLen          int64
	databases              int64
	daemonize              bool
	logLevel               string
	logFile                string
	pidFile                string
	outputLimits           [3]OutputLimit // client-output-buffer-limit, by ClientClass
	notifyEvents           pubsub.Class   // notify-keyspace-events
	busyReplyThreshold     int64          // milliseconds (busy-reply-threshold, lua-time-limit)
	appendOnly             bool
	save                   []int64 // seconds, changes, seconds, changes...; never mutated after publication
	protectedMode          bool
	tcpKeepalive           int64 // seconds, 0 = off
	unixSocket             string
	unixSocketPerm         int64
	supervised             string
	protectedConfigs       string // enable-protected-configs: no, yes or local
	latencyThreshold       int64  // milliseconds (latency-monitor-threshold), 0 = off
	latencyTracking        bool   // per-command latency histograms (latency-tracking)
	latencyPercentiles     string // latency-tracking-info-percentiles, as CONFIG GET prints it
	// kept holds the parameters shardis accepts and reports but does not act on (keptParams),
	// by name, as CONFIG GET prints them. Copied, never mutated, after publication.
	kept                 map[string]string
	trackingTableMaxKeys int64  // 0: no limit
	diskReserve          int64  // bytes
	hllSparseMaxBytes    int64  // a sparse HyperLogLog past this size turns dense
	rdbFormat            string // rdb-format: what SAVE and BGSAVE write (checkpoint, rdb, both)
	dbFilename           string // dbfilename: the RDB file's name in dir
	rdbCompression       bool   // rdbcompression: LZF in RDB files
	rdbChecksum          bool   // rdbchecksum: an RDB file's CRC-64
}

// ClientClass is a class of client-output-buffer-limit.
type ClientClass int

// The classes, in the order CONFIG GET prints them.
const (
	ClassNormal ClientClass = iota
	ClassReplica
	ClassPubSub
)

var classNames = [3]string{"normal", "slave", "pubsub"}

// OutputLimit is one class's client-output-buffer-limit: a client holding more than Hard
// bytes of output, or more than Soft for SoftSeconds on end, is disconnected. 0 disables a
// limit.
type OutputLimit struct {
	Hard, Soft, SoftSeconds int64
}

// setOutputLimits parses "class hard soft seconds [class hard soft seconds ...]", changing
// only the classes it names, with Redis's errors.
func setOutputLimits(v *values, args []string) string {
	if len(args)%4 != 0 {
		return "Wrong number of arguments in buffer limit configuration."
	}
	next := v.outputLimits
	for i := 0; i < len(args); i += 4 {
		class := -1
		switch strings.ToLower(args[i]) {
		case "normal":
			class = int(ClassNormal)
		case "slave", "replica":
			class = int(ClassReplica)
		case "pubsub":
			class = int(ClassPubSub)
		}
		if class < 0 {
			return "Invalid client class specified in buffer limit configuration."
		}
		hard, ok1 := parseMemoryU(args[i+1])
		soft, ok2 := parseMemoryU(args[i+2])
		secs, err := strconv.ParseInt(args[i+3], 10, 64)
		if args[i+3] == "" {
			secs, err = 0, nil
		}
		if !ok1 || !ok2 || err != nil || secs < 0 {
			return "Error in hard, soft or soft_seconds setting in buffer limit configuration."
		}
		next[class] = OutputLimit{Hard: int64(min(hard, math.MaxInt64)), Soft: int64(min(soft, math.MaxInt64)), SoftSeconds: secs}
	}
	v.outputLimits = next
	return ""
}

func getOutputLimits(v *values) string {
	var b strings.Builder
	for i, l := range v.outputLimits {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(classNames[i] + " " + strconv.FormatInt(l.Hard, 10) + " " +
			strconv.FormatInt(l.Soft, 10) + " " + strconv.FormatInt(l.SoftSeconds, 10))
	}
	return b.String()
}

// outputLimitLines gives CONFIG REWRITE's lines for client-output-buffer-limit: one per class.
func outputLimitLines(v *values) []string {
	out := make([]string, len(v.outputLimits))
	for i, l := range v.outputLimits {
		name := classNames[i]
		if ClientClass(i) == ClassReplica {
			name = "replica" // as Redis 7 writes it; CONFIG GET says "slave"
		}
		out[i] = name + " " + formatBytes(l.Hard) + " " + formatBytes(l.Soft) + " " +
			strconv.FormatInt(l.SoftSeconds, 10)
	}
	return out
}

// maxBindAddrs is the most addresses "bind" accepts (same limit as Redis).
const maxBindAddrs = 16

// Hz is a hint: like Redis, any non-negative value is accepted and then
// clamped into [minHz, maxHz].
const (
	minHz = 1
	maxHz = 500
)

// paramList is the table of the parameters shardis acts on, sorted by name. keptParams
// (kept.go) holds those it only accepts and reports; allParams joins the two.
var paramList = []*param{
	// appendfsync: how often the RocksDB WAL is fsynced.
	enumParam("appendfsync", true, "everysec", []string{"everysec", "always", "no"},
		func(v *values) *string { return &v.appendFsync }),

	// appendonly: kept and reported; every write goes to the RocksDB WAL whatever its value
	// (docs/CONFIG.md).
	withNoEffect(boolParam("appendonly", true, true, func(v *values) *bool { return &v.appendOnly }, nil)),

	// bind: listening addresses; a leading '-' marks one that may be unavailable.
	{
		name:     "bind",
		mutable:  false,
		multiArg: true,
		def:      []string{"127.0.0.1"},
		set: func(v *values, args []string) string {
			if len(args) > maxBindAddrs {
				return "Too many bind addresses specified."
			}
			if len(args) == 1 && args[0] == "" {
				args = nil
			}
			v.bind = append([]string(nil), args...)
			return ""
		},
		get: func(v *values) string { return strings.Join(v.bind, " ") },
	},

	intParam("binlog-max-age", true, 3600, 0, intMax, func(v *values) *int64 { return &v.binlogMaxAge }),
	intParam("binlog-max-entries", true, 1000000, 0, llMax, func(v *values) *int64 { return &v.binlogMaxEntries }),
	memParam("block-cache-size", true, 256*mb, 0, llMax, func(v *values) *int64 { return &v.blockCacheSize }),
	// busy-reply-threshold and its old name lua-time-limit are one value, as in Redis 7.0.
	withAlias(intParam("busy-reply-threshold", true, 5000, 0, longMax, func(v *values) *int64 { return &v.busyReplyThreshold }), "lua-time-limit"),
	// client-output-buffer-limit: per class, when a client holding output is disconnected.
	{
		name:     "client-output-buffer-limit",
		mutable:  true,
		multiArg: true,
		def: []string{"normal", "0", "0", "0", "slave", "268435456", "67108864", "60",
			"pubsub", "33554432", "8388608", "60"},
		set:   setOutputLimits,
		get:   getOutputLimits,
		lines: outputLimitLines,
	},
	withMemory(numParam("client-query-buffer-limit", true, 1024*mb,
		numSpec{numKind: numKind{unsigned: true, memory: true}, lo: mb, hi: longMax},
		func(v *values) *int64 { return &v.clientQueryBufferLimit })),

	boolParam("cpu-pin", false, true, func(v *values) *bool { return &v.cpuPin }, nil),

	// daemonize: main re-executes itself detached (Go cannot fork a running runtime).
	boolParam("daemonize", false, false, func(v *values) *bool { return &v.daemonize }, nil),

	intParam("databases", false, 16, 1, intMax, func(v *values) *int64 { return &v.databases }),

	// dbfilename: the name in dir of the RDB file SAVE and BGSAVE write when rdb-format says so.
	withProtected(strParam("dbfilename", true, "dump.rdb", func(v *values) *string { return &v.dbFilename },
		baseName("dbfilename can't be a path, just a filename"))),
	// disk-reserve: free space on the data directory's disk that writes must leave (besides
	// what RocksDB's flushes and compactions may take); below it commands that add data get
	// MISCONF. The default is capped at a sixteenth of the volume (DiskReserve).
	memParam("disk-reserve", true, defaultDiskReserve, 0, llMax, func(v *values) *int64 { return &v.diskReserve }),

	withProtected(strParam("dir", false, "./data", func(v *values) *string { return &v.dir }, func(s string) string {
		if s == "" {
			return "dir can't be empty"
		}
		return ""
	})),

	enumParam("enable-protected-configs", false, "no", []string{"no", "yes", "local"},
		func(v *values) *string { return &v.protectedConfigs }),

	// hz: accepted in [0, INT_MAX], stored clamped to [1, 500].
	{
		name:    "hz",
		mutable: true,
		def:     []string{"10"},
		set: func(v *values, args []string) string {
			n, ok := parseInt(args[0])
			if !ok {
				return errNotInteger
			}
			if n < 0 || n > intMax {
				return boundsErr(0, intMax)
			}
			v.hz = min(max(n, minHz), maxHz)
			return ""
		},
		get: func(v *values) string { return strconv.FormatInt(v.hz, 10) },
	},

	// hll-sparse-max-bytes: the size past which PFADD and PFMERGE turn a sparse HyperLogLog dense.
	numParam("hll-sparse-max-bytes", true, 3000, uMemSpec(0, longMax), func(v *values) *int64 { return &v.hllSparseMaxBytes }),
	memParam("key-cache-size", true, 64*mb, 0, llMax, func(v *values) *int64 { return &v.keyCacheSize }),
	// latency-monitor-threshold: commands and expire passes at least this slow are sampled by
	// the latency monitor (LATENCY LATEST ...); 0 turns it off.
	intParam("latency-monitor-threshold", true, 0, 0, llMax, func(v *values) *int64 { return &v.latencyThreshold }),
	// latency-tracking: per-command latency histograms (LATENCY HISTOGRAM, INFO latencystats).
	boolParam("latency-tracking", true, true, func(v *values) *bool { return &v.latencyTracking }, nil),
	// latency-tracking-info-percentiles: the percentiles INFO latencystats reports.
	{
		name:     "latency-tracking-info-percentiles",
		mutable:  true,
		multiArg: true,
		def:      []string{"50", "99", "99.9"},
		set: func(v *values, args []string) string {
			s, msg := setPercentiles(args)
			if msg == "" {
				v.latencyPercentiles = s
			}
			return msg
		},
		get: func(v *values) string { return v.latencyPercentiles },
	},
	strParam("logfile", false, "", func(v *values) *string { return &v.logFile }, nil),
	enumParam("loglevel", true, "notice", []string{"debug", "verbose", "notice", "warning"},
		func(v *values) *string { return &v.logLevel }),
	intParam("loops", false, 0, 0, 1024, func(v *values) *int64 { return &v.loops }),
	uintParam("maxclients", true, 10000, 1, uintMax, func(v *values) *int64 { return &v.maxClients }),
	// notify-keyspace-events: the classes of keyspace notifications published (pubsub/notify.go).
	withQuoted(&param{
		name:    "notify-keyspace-events",
		mutable: true,
		def:     []string{""},
		set: func(v *values, args []string) string {
			c, ok := pubsub.ParseClasses(args[0])
			if !ok {
				return "Invalid event class character. Use 'Ag$lshzxeKEtmdn'."
			}
			v.notifyEvents = c
			return ""
		},
		get: func(v *values) string { return v.notifyEvents.String() },
	}),
	strParam("pidfile", false, "", func(v *values) *string { return &v.pidFile }, nil),
	intParam("port", false, 6379, 0, 65535, func(v *values) *int64 { return &v.port }),
	boolParam("protected-mode", true, true, func(v *values) *bool { return &v.protectedMode }, nil),
	withMemory(memParam("proto-max-bulk-len", true, 512*mb, mb, longMax, func(v *values) *int64 { return &v.protoMaxBulkLen })),
	// rdb-format: what SAVE and BGSAVE write: a RocksDB checkpoint (dir/checkpoint), Redis's
	// RDB file (dir/dbfilename) from a consistent snapshot, or both (docs/CONFIG.md).
	enumParam("rdb-format", true, "checkpoint", []string{"checkpoint", "rdb", "both"},
		func(v *values) *string { return &v.rdbFormat }),
	// rdbchecksum, rdbcompression: the RDB file's CRC-64 and LZF-compressed strings.
	boolParam("rdbchecksum", false, true, func(v *values) *bool { return &v.rdbChecksum }, nil),
	boolParam("rdbcompression", true, true, func(v *values) *bool { return &v.rdbCompression }, nil),
	// repl-fullsync-max-rate: the bytes a second a full sync sends a shardis replica at most.
	memParam("repl-fullsync-max-rate", true, 0, 0, llMax, func(v *values) *int64 { return &v.fullSyncMaxRate }),
	withQuoted(strParam("requirepass", true, "", func(v *values) *string { return &v.requirePass }, nil)),

	// save: kept and reported (shardis takes no RDB snapshots), validated as Redis does.
	withNoEffect(&param{
		name:     "save",
		mutable:  true,
		multiArg: true,
		def:      []string{""},
		set:      setSave,
		get:      getSave,
		lines:    saveLines,
	}),

	intParam("shards", false, 0, 0, 4096, func(v *values) *int64 { return &v.shards }),
	intParam("slowlog-log-slower-than", true, 10000, -1, llMax, func(v *values) *int64 { return &v.slowlogSlowerThan }),
	uintParam("slowlog-max-len", true, 128, 0, longMax, func(v *values) *int64 { return &v.slowlogMaxLen }),
	enumParam("supervised", false, "no", []string{"upstart", "systemd", "auto", "no"},
		func(v *values) *string { return &v.supervised }),
	intParam("tcp-keepalive", true, 300, 0, intMax, func(v *values) *int64 { return &v.tcpKeepalive }),
	intParam("timeout", true, 0, 0, intMax, func(v *values) *int64 { return &v.timeout }),
	strParam("unixsocket", false, "", func(v *values) *string { return &v.unixSocket }, nil),
	numParam("unixsocketperm", false, 0, numSpec{numKind: numKind{unsigned: true, octal: true}, lo: 0, hi: 0o777},
		func(v *values) *int64 { return &v.unixSocketPerm }),
	uintParam("tracking-table-max-keys", true, 1000000, 0, longMax, func(v *values) *int64 { return &v.trackingTableMaxKeys }),
	memParam("write-buffer-size", false, 256*mb, mb, llMax, func(v *values) *int64 { return &v.writeBufferSize }),
	memParam("blob-min-size", false, 4096, 0, llMax, func(v *values) *int64 { return &v.blobMinSize }),
}

func withNoEffect(p *param) *param  { p.noEffect = true; return p }
func withProtected(p *param) *param { p.protected = true; return p }
func withQuoted(p *param) *param    { p.quoted = true; return p }
func withMemory(p *param) *param    { p.memory = true; return p }

// setSave validates "seconds changes [seconds changes ...]" as Redis does; a single "" clears.
func setSave(v *values, args []string) string {
	if len(args) == 0 || len(args) == 1 && args[0] == "" {
		v.save = nil
		return ""
	}
	if len(args)%2 != 0 {
		return "Invalid save parameters"
	}
	pairs := make([]int64, len(args))
	for i, a := range args {
		n, err := strconv.ParseInt(a, 10, 64)
		if err != nil || (i%2 == 0 && n < 1) || (i%2 == 1 && n < 0) {
			return "Invalid save parameters"
		}
		pairs[i] = n
	}
	v.save = pairs
	return ""
}

func getSave(v *values) string {
	parts := make([]string, len(v.save))
	for i, n := range v.save {
		parts[i] = strconv.FormatInt(n, 10)
	}
	return strings.Join(parts, " ")
}

// saveLines gives CONFIG REWRITE's save lines: one per pair, or save "" when there is none.
func saveLines(v *values) []string {
	if len(v.save) == 0 {
		return []string{`""`}
	}
	var out []string
	for i := 0; i+1 < len(v.save); i += 2 {
		out = append(out, strconv.FormatInt(v.save[i], 10)+" "+strconv.FormatInt(v.save[i+1], 10))
	}
	return out
}

// allParams is every parameter, sorted by name.
var allParams = func() []*param {
	all := append(slices.Clone(paramList), keptParams...)
	slices.SortFunc(all, func(a, b *param) int { return strings.Compare(a.name, b.name) })
	return all
}()

// paramsByName indexes allParams by lower-case name and alias.
var paramsByName = func() map[string]*param {
	m := make(map[string]*param, 2*len(allParams))
	for _, p := range allParams {
		if m[p.name] != nil {
			panic("config: parameter " + p.name + " declared twice")
		}
		m[p.name] = p
		if p.alias != "" {
			m[p.alias] = p
		}
	}
	return m
}()

// lookupParam finds a parameter by name or alias, case-insensitively, and returns the name
// it was found under (the alias when the caller used it), which Redis quotes in its errors.
func lookupParam(name string) (*param, string) {
	key := name
	p, ok := paramsByName[key]
	if !ok {
		key = strings.ToLower(name)
		p = paramsByName[key]
	}
	if p == nil {
		return nil, ""
	}
	return p, key
}
