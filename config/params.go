package config

import (
	"math"
	"strconv"
	"strings"
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
	protoMaxBulkLen        int64
	clientQueryBufferLimit int64
	binlogMaxEntries       int64
	binlogMaxAge           int64 // seconds
	hz                     int64
	slowlogSlowerThan      int64 // microseconds, -1 disables
	slowlogMaxLen          int64
	databases              int64
	daemonize              bool
	logLevel               string
	logFile                string
	pidFile                string
	outputLimits           [3]OutputLimit // client-output-buffer-limit, by ClientClass
	trackingTableMaxKeys   int64          // 0: no limit
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
	if len(args)%4 != 0 || len(args) == 0 {
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
		hard, ok1 := parseMemory(args[i+1])
		soft, ok2 := parseMemory(args[i+2])
		secs, err := strconv.ParseInt(args[i+3], 10, 64)
		if !ok1 || !ok2 || err != nil || secs < 0 {
			return "Error in hard, soft or soft_seconds setting in buffer limit configuration."
		}
		next[class] = OutputLimit{Hard: hard, Soft: soft, SoftSeconds: secs}
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

// param describes one configuration parameter: how to parse it into a
// snapshot and how to print it back.
type param struct {
	name     string
	mutable  bool     // may be changed with CONFIG SET
	multiArg bool     // takes any number of arguments (bind, save)
	def      []string // default value, as config-file arguments
	// set parses args into v. It returns "" on success or the error text
	// (worded like Redis's own setters) on failure.
	set func(v *values, args []string) string
	// get formats the current value the way CONFIG GET prints it.
	get func(v *values) string
}

// Error texts shared by the typed setters. They match what Redis 7 prints
// for the same failures so clients and test suites see familiar messages.
const (
	errNotInteger = "argument couldn't be parsed into an integer"
	errNotMemory  = "argument must be a memory value"
	errNotYesNo   = "argument must be 'yes' or 'no'"
	errWrongArgs  = "wrong number of arguments"
)

const (
	intMax  = math.MaxInt32
	uintMax = math.MaxUint32
	llMax   = math.MaxInt64
	mb      = 1 << 20
)

// boundsErr formats the out-of-range error for [lo, hi].
func boundsErr(lo, hi int64) string {
	return "argument must be between " + strconv.FormatInt(lo, 10) + " and " +
		strconv.FormatInt(hi, 10) + " inclusive"
}

// intParam builds an integer parameter limited to [lo, hi].
func intParam(name string, mutable bool, def, lo, hi int64, field func(*values) *int64) *param {
	return &param{
		name:    name,
		mutable: mutable,
		def:     []string{strconv.FormatInt(def, 10)},
		set: func(v *values, args []string) string {
			n, ok := parseInt(args[0])
			if !ok {
				return errNotInteger
			}
			if n < lo || n > hi {
				return boundsErr(lo, hi)
			}
			*field(v) = n
			return ""
		},
		get: func(v *values) string { return strconv.FormatInt(*field(v), 10) },
	}
}

// memParam builds a memory-size parameter limited to [lo, hi] bytes. It
// accepts the unit suffixes understood by parseMemory and prints plain bytes.
func memParam(name string, mutable bool, def, lo, hi int64, field func(*values) *int64) *param {
	return &param{
		name:    name,
		mutable: mutable,
		def:     []string{strconv.FormatInt(def, 10)},
		set: func(v *values, args []string) string {
			n, ok := parseMemory(args[0])
			if !ok {
				return errNotMemory
			}
			if n < lo || n > hi {
				return boundsErr(lo, hi)
			}
			*field(v) = n
			return ""
		},
		get: func(v *values) string { return strconv.FormatInt(*field(v), 10) },
	}
}

// boolParam builds a yes/no parameter. check, when non-nil, may veto a value
// by returning an error text.
func boolParam(name string, mutable bool, def bool, field func(*values) *bool, check func(bool) string) *param {
	return &param{
		name:    name,
		mutable: mutable,
		def:     []string{yesNo(def)},
		set: func(v *values, args []string) string {
			var b bool
			switch strings.ToLower(args[0]) {
			case "yes":
				b = true
			case "no":
				b = false
			default:
				return errNotYesNo
			}
			if check != nil {
				if msg := check(b); msg != "" {
					return msg
				}
			}
			*field(v) = b
			return ""
		},
		get: func(v *values) string { return yesNo(*field(v)) },
	}
}

// strParam builds a free-form string parameter. check, when non-nil, may
// veto a value by returning an error text.
func strParam(name string, mutable bool, def string, field func(*values) *string, check func(string) string) *param {
	return &param{
		name:    name,
		mutable: mutable,
		def:     []string{def},
		set: func(v *values, args []string) string {
			if check != nil {
				if msg := check(args[0]); msg != "" {
					return msg
				}
			}
			*field(v) = args[0]
			return ""
		},
		get: func(v *values) string { return *field(v) },
	}
}

// enumParam builds a parameter restricted to options (matched
// case-insensitively, stored and printed in canonical lower case).
func enumParam(name string, mutable bool, def string, options []string, field func(*values) *string) *param {
	msg := "argument must be one of the following: " + strings.Join(options, ", ")
	return &param{
		name:    name,
		mutable: mutable,
		def:     []string{def},
		set: func(v *values, args []string) string {
			for _, o := range options {
				if strings.EqualFold(o, args[0]) {
					*field(v) = o
					return ""
				}
			}
			return msg
		},
		get: func(v *values) string { return *field(v) },
	}
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// maxBindAddrs is the most addresses "bind" accepts (same limit as Redis).
const maxBindAddrs = 16

// Hz is a hint: like Redis, any non-negative value is accepted and then
// clamped into [minHz, maxHz].
const (
	minHz = 1
	maxHz = 500
)

// paramList is the parameter table, sorted by name.
var paramList = []*param{
	// appendfsync: how often the RocksDB WAL is fsynced.
	enumParam("appendfsync", true, "everysec", []string{"always", "everysec", "no"},
		func(v *values) *string { return &v.appendFsync }),

	// appendonly: compatibility key; every write is durable, so it is
	// always "yes". Setting it to "yes" is accepted as a no-op.
	{
		name:    "appendonly",
		mutable: true,
		def:     []string{"yes"},
		set: func(v *values, args []string) string {
			switch strings.ToLower(args[0]) {
			case "yes":
				return ""
			case "no":
				return "appendonly can't be disabled: shardis writes every change to RocksDB"
			}
			return errNotYesNo
		},
		get: func(*values) string { return "yes" },
	},

	// bind: listening addresses.
	{
		name:     "bind",
		mutable:  false,
		multiArg: true,
		def:      []string{"127.0.0.1"},
		set: func(v *values, args []string) string {
			addrs := make([]string, 0, len(args))
			for _, a := range args {
				if a != "" {
					addrs = append(addrs, a)
				}
			}
			if len(addrs) == 0 {
				return "bind needs at least one address"
			}
			if len(addrs) > maxBindAddrs {
				return "Too many bind addresses specified."
			}
			v.bind = addrs
			return ""
		},
		get: func(v *values) string { return strings.Join(v.bind, " ") },
	},

	intParam("binlog-max-age", true, 3600, 0, intMax, func(v *values) *int64 { return &v.binlogMaxAge }),
	intParam("binlog-max-entries", true, 1000000, 0, llMax, func(v *values) *int64 { return &v.binlogMaxEntries }),
	memParam("block-cache-size", true, 256*mb, 0, llMax, func(v *values) *int64 { return &v.blockCacheSize }),
	// client-output-buffer-limit: per class, when a client holding output is disconnected.
	{
		name:     "client-output-buffer-limit",
		mutable:  true,
		multiArg: true,
		def: []string{"normal", "0", "0", "0", "slave", "268435456", "67108864", "60",
			"pubsub", "33554432", "8388608", "60"},
		set: setOutputLimits,
		get: getOutputLimits,
	},
	memParam("client-query-buffer-limit", true, 1024*mb, mb, llMax, func(v *values) *int64 { return &v.clientQueryBufferLimit }),

	boolParam("cpu-pin", false, true, func(v *values) *bool { return &v.cpuPin }, nil),

	boolParam("daemonize", false, false, func(v *values) *bool { return &v.daemonize }, func(b bool) string {
		if b {
			return "daemonize yes is not supported: run shardis in the foreground under a process supervisor"
		}
		return ""
	}),

	intParam("databases", false, 16, 1, intMax, func(v *values) *int64 { return &v.databases }),

	strParam("dir", false, "./data", func(v *values) *string { return &v.dir }, func(s string) string {
		if s == "" {
			return "dir can't be empty"
		}
		return ""
	}),

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

	memParam("key-cache-size", true, 64*mb, 0, llMax, func(v *values) *int64 { return &v.keyCacheSize }),
	strParam("logfile", false, "", func(v *values) *string { return &v.logFile }, nil),
	enumParam("loglevel", true, "notice", []string{"debug", "verbose", "notice", "warning"},
		func(v *values) *string { return &v.logLevel }),
	intParam("loops", false, 0, 0, 1024, func(v *values) *int64 { return &v.loops }),
	intParam("maxclients", true, 10000, 1, uintMax, func(v *values) *int64 { return &v.maxClients }),
	strParam("pidfile", false, "", func(v *values) *string { return &v.pidFile }, nil),
	intParam("port", false, 6379, 0, 65535, func(v *values) *int64 { return &v.port }),
	memParam("proto-max-bulk-len", true, 512*mb, mb, llMax, func(v *values) *int64 { return &v.protoMaxBulkLen }),
	strParam("requirepass", true, "", func(v *values) *string { return &v.requirePass }, nil),

	// save: compatibility key; shardis takes no RDB snapshots, so the value
	// is validated like Redis does and then ignored. It always reads "".
	{
		name:     "save",
		mutable:  true,
		multiArg: true,
		def:      []string{""},
		set: func(v *values, args []string) string {
			if len(args) == 1 && args[0] == "" {
				return ""
			}
			if len(args)%2 != 0 {
				return "Invalid save parameters"
			}
			for i, a := range args {
				n, err := strconv.ParseInt(a, 10, 64)
				if err != nil || (i%2 == 0 && n < 1) || (i%2 == 1 && n < 0) {
					return "Invalid save parameters"
				}
			}
			return ""
		},
		get: func(*values) string { return "" },
	},

	intParam("shards", false, 0, 0, 4096, func(v *values) *int64 { return &v.shards }),
	intParam("slowlog-log-slower-than", true, 10000, -1, llMax, func(v *values) *int64 { return &v.slowlogSlowerThan }),
	intParam("slowlog-max-len", true, 128, 0, llMax, func(v *values) *int64 { return &v.slowlogMaxLen }),
	intParam("timeout", true, 0, 0, intMax, func(v *values) *int64 { return &v.timeout }),
	intParam("tracking-table-max-keys", true, 1000000, 0, llMax, func(v *values) *int64 { return &v.trackingTableMaxKeys }),
	memParam("write-buffer-size", false, 256*mb, mb, llMax, func(v *values) *int64 { return &v.writeBufferSize }),
}

// paramsByName indexes paramList by lower-case name.
var paramsByName = func() map[string]*param {
	m := make(map[string]*param, len(paramList))
	for _, p := range paramList {
		m[p.name] = p
	}
	return m
}()

// lookupParam finds a parameter by name, case-insensitively.
func lookupParam(name string) *param {
	if p, ok := paramsByName[name]; ok {
		return p
	}
	return paramsByName[strings.ToLower(name)]
}

// parseInt parses a decimal integer strictly: an optional '-', then digits,
// no '+', no spaces and no leading zeros (except "0" itself).
func parseInt(s string) (int64, bool) {
	if s == "0" {
		return 0, true
	}
	digits := strings.TrimPrefix(s, "-")
	if digits == "" || digits[0] < '1' || digits[0] > '9' {
		return 0, false
	}
	for i := 1; i < len(digits); i++ {
		if digits[i] < '0' || digits[i] > '9' {
			return 0, false
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, false
	}
	return n, true
}

// parseMemory parses a non-negative size with an optional unit:
// b = 1, k = 1000, kb = 1024, m = 1000^2, mb = 1024^2, g = 1000^3,
// gb = 1024^3 (case-insensitive). Plain numbers are bytes.
func parseMemory(s string) (int64, bool) {
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	if i == 0 {
		return 0, false
	}
	var mul int64
	switch strings.ToLower(s[i:]) {
	case "", "b":
		mul = 1
	case "k":
		mul = 1000
	case "kb":
		mul = 1024
	case "m":
		mul = 1000 * 1000
	case "mb":
		mul = 1024 * 1024
	case "g":
		mul = 1000 * 1000 * 1000
	case "gb":
		mul = 1024 * 1024 * 1024
	default:
		return 0, false
	}
	n, err := strconv.ParseInt(s[:i], 10, 64)
	if err != nil || n > math.MaxInt64/mul {
		return 0, false
	}
	return n * mul, true
}

// isSpace reports whether c is ASCII white space (as C's isspace).
func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'
}

func hexVal(c byte) (byte, bool) {
	switch {
	case c >= '0' && c <= '9':
		return c - '0', true
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10, true
	case c >= 'A' && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}

// splitArgs splits a configuration line into arguments using redis.conf
// quoting rules:
//
//   - arguments are separated by white space;
//   - "double quotes" allow the escapes \n \r \t \b \a \xHH, and a backslash
//     before any other character yields that character;
//   - 'single quotes' are literal except for \' (a single quote);
//   - a closing quote must be followed by white space or the end of line.
//
// ok is false when quotes are unbalanced or a closing quote is followed by
// another character.
func splitArgs(line string) (args []string, ok bool) {
	i, n := 0, len(line)
	for {
		for i < n && isSpace(line[i]) {
			i++
		}
		if i >= n {
			return args, true
		}
		var cur []byte
		const (
			plain = iota
			double
			single
		)
		state := plain
	token:
		for {
			switch state {
			case double:
				if i >= n {
					return nil, false
				}
				c := line[i]
				switch {
				case c == '\\' && i+3 < n && line[i+1] == 'x':
					hi, ok1 := hexVal(line[i+2])
					lo, ok2 := hexVal(line[i+3])
					if ok1 && ok2 {
						cur = append(cur, hi<<4|lo)
						i += 4
						continue
					}
					cur = append(cur, 'x') // "\x" without two hex digits: plain x
					i += 2
				case c == '\\' && i+1 < n:
					e := line[i+1]
					switch e {
					case 'n':
						e = '\n'
					case 'r':
						e = '\r'
					case 't':
						e = '\t'
					case 'b':
						e = '\b'
					case 'a':
						e = '\a'
					}
					cur = append(cur, e)
					i += 2
				case c == '"':
					if i+1 < n && !isSpace(line[i+1]) {
						return nil, false
					}
					i++
					break token
				default:
					cur = append(cur, c)
					i++
				}
			case single:
				if i >= n {
					return nil, false
				}
				c := line[i]
				switch {
				case c == '\\' && i+1 < n && line[i+1] == '\'':
					cur = append(cur, '\'')
					i += 2
				case c == '\'':
					if i+1 < n && !isSpace(line[i+1]) {
						return nil, false
					}
					i++
					break token
				default:
					cur = append(cur, c)
					i++
				}
			default:
				if i >= n || isSpace(line[i]) {
					break token
				}
				switch c := line[i]; c {
				case '"':
					state = double
				case '\'':
					state = single
				default:
					cur = append(cur, c)
				}
				i++
			}
		}
		args = append(args, string(cur))
	}
}

// globMatch reports whether name matches pattern, ignoring ASCII case.
// Supported syntax (as in Redis 7 CONFIG GET and KEYS): '*' matches any
// sequence including the empty one, '?' any single byte, "[abc]" one byte
// from the set (ranges like "[a-z]" allowed, "[^...]" negates) and '\x'
// the byte x literally.
func globMatch(pattern, name string) bool {
	p, s := 0, 0
	starP, starS := -1, 0
	for s < len(name) {
		if p < len(pattern) {
			switch pattern[p] {
			case '*':
				for p < len(pattern) && pattern[p] == '*' {
					p++
				}
				if p == len(pattern) {
					return true
				}
				starP, starS = p, s
				continue
			case '?':
				p++
				s++
				continue
			case '[':
				if ok, next := matchClass(pattern, p, name[s]); ok {
					p = next
					s++
					continue
				}
			case '\\':
				lit, adv := byte('\\'), 1
				if p+1 < len(pattern) {
					lit, adv = pattern[p+1], 2
				}
				if lower(lit) == lower(name[s]) {
					p += adv
					s++
					continue
				}
			default:
				if lower(pattern[p]) == lower(name[s]) {
					p++
					s++
					continue
				}
			}
		}
		// Mismatch: let the most recent '*' swallow one more byte.
		if starP < 0 {
			return false
		}
		starS++
		p, s = starP, starS
	}
	for p < len(pattern) && pattern[p] == '*' {
		p++
	}
	return p == len(pattern)
}

// matchClass matches c against the bracket expression starting at
// pattern[open] == '['. It returns whether c matched and the index just past
// the closing ']' (or the end of the pattern when the class is unterminated).
func matchClass(pattern string, open int, c byte) (bool, int) {
	i := open + 1
	neg := i < len(pattern) && pattern[i] == '^'
	if neg {
		i++
	}
	c = lower(c)
	matched := false
	for i < len(pattern) && pattern[i] != ']' {
		switch {
		case pattern[i] == '\\' && i+1 < len(pattern):
			if lower(pattern[i+1]) == c {
				matched = true
			}
			i += 2
		case i+2 < len(pattern) && pattern[i+1] == '-' && pattern[i+2] != ']':
			lo, hi := lower(pattern[i]), lower(pattern[i+2])
			if lo > hi {
				lo, hi = hi, lo
			}
			if c >= lo && c <= hi {
				matched = true
			}
			i += 3
		default:
			if lower(pattern[i]) == c {
				matched = true
			}
			i++
		}
	}
	if i < len(pattern) {
		i++ // skip ']'
	}
	return matched != neg, i
}

func lower(c byte) byte {
	if c >= 'A' && c <= 'Z' {
		return c + ('a' - 'A')
	}
	return c
}
