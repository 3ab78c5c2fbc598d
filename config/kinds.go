package config

import (
	"math"
	"strconv"
	"strings"
)

// param describes one configuration parameter: how to parse it into a snapshot, how to print it
// back for CONFIG GET, and how CONFIG REWRITE writes it.
type param struct {
	name      string
	alias     string // Redis's other name for it (slaveof for replicaof), or ""
	mutable   bool   // may be changed with CONFIG SET
	protected bool   // CONFIG SET needs enable-protected-configs (dir, dbfilename), as in Redis 7
	multiArg  bool   // takes any number of arguments (bind, save)
	noEffect  bool   // accepted, validated and kept, but shardis does not act on it
	hidden    bool   // Redis's HIDDEN_CONFIG: CONFIG GET shows it by its exact name only
	quoted    bool   // a string: CONFIG REWRITE writes it quoted
	memory    bool   // a byte count: CONFIG REWRITE writes it with a unit (64mb)
	def       []string
	// set parses args into v. It returns "" on success or the error text (worded like Redis's
	// own setters) on failure.
	set func(v *values, args []string) string
	// get formats the current value the way CONFIG GET prints it.
	get func(v *values) string
	// lines, when set, gives the argument strings of the lines CONFIG REWRITE writes for a
	// parameter that Redis writes as several lines (save, client-output-buffer-limit).
	lines func(v *values) []string
}

// Error texts shared by the typed setters. They match what Redis 7 prints for the same
// failures so clients and test suites see familiar messages.
const (
	errNotInteger = "argument couldn't be parsed into an integer"
	errNotMemory  = "argument must be a memory value"
	errNotMemPct  = "argument must be a memory or percent value"
	errNotOctal   = "argument couldn't be parsed as an octal number"
	errNotYesNo   = "argument must be 'yes' or 'no'"
	errWrongArgs  = "wrong number of arguments"
)

const (
	intMin   = math.MinInt32
	intMax   = math.MaxInt32
	uintMax  = math.MaxUint32
	llMax    = math.MaxInt64
	ullMax   = math.MaxUint64
	longMax  = math.MaxInt64
	ssizeMax = math.MaxInt64
	mb       = 1 << 20
)

// boundsErr formats the out-of-range error for [lo, hi].
func boundsErr(lo, hi int64) string {
	return "argument must be between " + strconv.FormatInt(lo, 10) + " and " +
		strconv.FormatInt(hi, 10) + " inclusive"
}

// numKind says how a numeric parameter is written and checked, after Redis's numeric configs.
type numKind struct {
	unsigned bool // compared and printed as an unsigned 64-bit value (Redis's unsigned types)
	memory   bool // accepts units (10mb); CONFIG REWRITE writes it with one
	percent  bool // also accepts "N%", kept as -N
	octal    bool // written and read in base 8 (unixsocketperm)
}

// numSpec is a numeric parameter's kind and bounds. hi is an unsigned bound for unsigned
// parameters and a signed one otherwise.
type numSpec struct {
	numKind
	lo int64
	hi uint64
}

// parse reads s as Redis reads a numeric config value and checks its bounds.
func (sp numSpec) parse(s string) (int64, string) {
	var n int64
	switch {
	case sp.memory:
		if sp.percent && len(s) > 1 && s[len(s)-1] == '%' {
			if k, ok := parseInt(s[:len(s)-1]); ok && k >= 0 {
				n = -k
				break
			}
		}
		u, ok := parseMemoryU(s)
		if !ok {
			if sp.percent {
				return 0, errNotMemPct
			}
			return 0, errNotMemory
		}
		n = int64(u)
	case sp.octal:
		k, err := strconv.ParseInt(s, 8, 64)
		if err != nil {
			return 0, errNotOctal
		}
		n = k
	default:
		k, ok := parseInt(s)
		if !ok {
			return 0, errNotInteger
		}
		n = k
	}
	if sp.unsigned {
		if u := uint64(n); u < uint64(sp.lo) || u > sp.hi {
			if sp.octal {
				return 0, "argument must be between " + strconv.FormatUint(uint64(sp.lo), 8) + " and " +
					strconv.FormatUint(sp.hi, 8) + " inclusive"
			}
			return 0, "argument must be between " + strconv.FormatUint(uint64(sp.lo), 10) + " and " +
				strconv.FormatUint(sp.hi, 10) + " inclusive"
		}
		return n, ""
	}
	if sp.percent && n < 0 {
		if n < sp.lo {
			return 0, "percentage argument must be less or equal to " + strconv.FormatInt(-sp.lo, 10)
		}
		return n, ""
	}
	if n < sp.lo || n > int64(sp.hi) {
		return 0, boundsErr(sp.lo, int64(sp.hi))
	}
	return n, ""
}

// format prints n as CONFIG GET does.
func (sp numSpec) format(n int64) string {
	switch {
	case sp.percent && n < 0:
		return strconv.FormatInt(-n, 10) + "%"
	case sp.octal:
		return strconv.FormatInt(n, 8)
	case sp.unsigned:
		return strconv.FormatUint(uint64(n), 10)
	}
	return strconv.FormatInt(n, 10)
}

// numParam builds a numeric parameter stored in an int64 field.
func numParam(name string, mutable bool, def int64, sp numSpec, field func(*values) *int64) *param {
	return &param{
		name:    name,
		mutable: mutable,
		memory:  sp.memory,
		def:     []string{sp.format(def)},
		set: func(v *values, args []string) string {
			n, msg := sp.parse(args[0])
			if msg != "" {
				return msg
			}
			*field(v) = n
			return ""
		},
		get: func(v *values) string { return sp.format(*field(v)) },
	}
}

// intParam builds a signed integer parameter limited to [lo, hi].
func intParam(name string, mutable bool, def, lo, hi int64, field func(*values) *int64) *param {
	return numParam(name, mutable, def, numSpec{lo: lo, hi: uint64(hi)}, field)
}

// uintParam builds an integer parameter of one of Redis's unsigned types, limited to [lo, hi]:
// a negative value is read as a huge one and fails the bounds check as in Redis.
func uintParam(name string, mutable bool, def, lo int64, hi uint64, field func(*values) *int64) *param {
	return numParam(name, mutable, def, numSpec{numKind: numKind{unsigned: true}, lo: lo, hi: hi}, field)
}

// memParam builds a memory-size parameter limited to [lo, hi] bytes. It accepts the unit
// suffixes understood by parseMemoryU and prints plain bytes.
func memParam(name string, mutable bool, def, lo, hi int64, field func(*values) *int64) *param {
	return numParam(name, mutable, def, numSpec{numKind: numKind{memory: true}, lo: lo, hi: uint64(hi)}, field)
}

// boolParam builds a yes/no parameter. check, when non-nil, may veto a value by returning an
// error text.
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

// strParam builds a free-form string parameter. check, when non-nil, may veto a value by
// returning an error text.
func strParam(name string, mutable bool, def string, field func(*values) *string, check func(string) string) *param {
	return &param{
		name:    name,
		mutable: mutable,
		quoted:  true,
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

// enumParam builds a parameter restricted to options (matched case-insensitively, stored and
// printed in canonical lower case). options are in Redis's order, which its error lists.
func enumParam(name string, mutable bool, def string, options []string, field func(*values) *string) *param {
	msg := enumErr(options)
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

func enumErr(options []string) string {
	return "argument(s) must be one of the following: " + strings.Join(options, ", ")
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// memUnit returns the multiplier of a size suffix: b = 1, k = 1000, kb = 1024, m = 1000^2,
// mb = 1024^2, g = 1000^3, gb = 1024^3 (case-insensitive), "" = 1.
func memUnit(suffix string) (uint64, bool) {
	switch strings.ToLower(suffix) {
	case "", "b":
		return 1, true
	case "k":
		return 1000, true
	case "kb":
		return 1024, true
	case "m":
		return 1000 * 1000, true
	case "mb":
		return 1024 * 1024, true
	case "g":
		return 1000 * 1000 * 1000, true
	case "gb":
		return 1024 * 1024 * 1024, true
	}
	return 0, false
}

// leadingDigits returns how many decimal digits s starts with.
func leadingDigits(s string) int {
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	return i
}

// parseMemoryU parses a size as Redis's memtoull does: decimal digits (possibly none, which
// reads as 0) and an optional unit (see memUnit). A number too large for 64 bits saturates and
// the multiplication wraps, as in Redis; a sign is refused.
func parseMemoryU(s string) (uint64, bool) {
	i := leadingDigits(s)
	mul, ok := memUnit(s[i:])
	if !ok || i >= 128 {
		return 0, false
	}
	if i == 0 {
		return 0, true
	}
	n, err := strconv.ParseUint(s[:i], 10, 64)
	if err != nil {
		n = math.MaxUint64
	}
	return n * mul, true
}

// ParseMemoryU is parseMemoryU for the commands that take a size as Redis's memtoull reads
// it (DEBUG QUICKLIST-PACKED-THRESHOLD).
func ParseMemoryU(s string) (uint64, bool) { return parseMemoryU(s) }

// parseMemory parses a non-negative size that fits in an int64: digits and an optional unit
// (see memUnit), refusing what would overflow. shardis's own size parameters use it.
func parseMemory(s string) (int64, bool) {
	i := leadingDigits(s)
	mul, ok := memUnit(s[i:])
	if i == 0 || !ok {
		return 0, false
	}
	n, err := strconv.ParseInt(s[:i], 10, 64)
	if err != nil || n > math.MaxInt64/int64(mul) {
		return 0, false
	}
	return n * int64(mul), true
}

// formatBytes writes a byte count as CONFIG REWRITE does: in gb, mb or kb when it is a whole
// number of them, else in bytes.
func formatBytes(n int64) string {
	switch {
	case n != 0 && n%(1<<30) == 0:
		return strconv.FormatInt(n/(1<<30), 10) + "gb"
	case n != 0 && n%(1<<20) == 0:
		return strconv.FormatInt(n/(1<<20), 10) + "mb"
	case n != 0 && n%(1<<10) == 0:
		return strconv.FormatInt(n/(1<<10), 10) + "kb"
	}
	return strconv.FormatInt(n, 10)
}
