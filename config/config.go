// Package config holds shardis's server configuration: loading it from a
// redis.conf-style file plus command-line flags, the lock-free accessors the
// server reads on its hot paths, and the CONFIG GET / CONFIG SET / CONFIG
// REWRITE semantics (glob matching, atomic multi-parameter SET, Redis 7 error
// texts, Redis's rewrite of the file).
//
// Every Redis 7.0 parameter is known: those shardis acts on are in paramList
// (params.go), the others in keptParams (kept.go), accepted and kept without
// effect so that a Redis redis.conf loads unchanged.
//
// Command line:
//
//	shardis [FILE] [--name value ...]
//
// FILE, when present, must be the first argument and must not start with
// '-'. Each line holds "name value..." (names are case-insensitive; values
// may be quoted with redis.conf rules; lines starting with '#' and blank
// lines are ignored). Flags are named exactly like the parameters and are
// applied after the file, so they override it. The last occurrence of a
// parameter wins.
package config

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"shardis/pubsub"
)

// Config is the live server configuration. It is safe for concurrent use:
// accessors read an immutable snapshot through a single atomic load and
// never block; Set builds a new snapshot and publishes it atomically, so a
// reader sees either all or none of the values of one CONFIG SET.
type Config struct {
	cur atomic.Pointer[values]

	mu    sync.Mutex // serialises Set and the hooks it runs
	hooks map[string][]func()
	file  string // config file given to Load, "" if none
	// given lists the parameters the config file or the command line set, in order, each once
	// (for the start-up log's list of parameters without effect). Written by Load only.
	given []string
	// users are the "user" directives of the file and command line, each as its words
	// ("user", name, rules...), in order.
	users [][]string
	// userLines gives the "user" lines CONFIG REWRITE writes (see SetUserLines).
	userLines func() []string
}

// LoadError reports a configuration directive that Load rejected, naming
// where it came from: a file and line, or a command-line flag.
type LoadError struct {
	File      string // config file path; "" when the directive came from a flag
	Line      int    // 1-based line number in File; 0 for flags
	Flag      string // the flag as typed (e.g. "--port"); "" for file lines
	Directive string // the offending line, or "name args..." for a flag
	Msg       string // what is wrong, worded like redis-server
}

// Error formats the error like redis-server's fatal config message, on one
// line, e.g.
//
//	config file /etc/shardis.conf, line 12: >>> 'prot 7000': Bad directive or wrong number of arguments
//	command line option --port: >>> 'port abc': argument couldn't be parsed into an integer
func (e *LoadError) Error() string {
	if e.Flag != "" {
		return fmt.Sprintf("command line option %s: >>> '%s': %s", e.Flag, e.Directive, e.Msg)
	}
	return fmt.Sprintf("config file %s, line %d: >>> '%s': %s", e.File, e.Line, e.Directive, e.Msg)
}

// Error texts for directives, as redis-server words them.
const (
	msgBadDirective = "Bad directive or wrong number of arguments"
	msgUnbalanced   = "Unbalanced quotes in configuration line"
)

// Default returns a Config holding every parameter's default value.
func Default() *Config {
	v := &values{kept: make(map[string]string, len(keptParams))}
	for _, p := range allParams {
		if msg := p.set(v, p.def); msg != "" {
			panic("config: bad default for " + p.name + ": " + msg)
		}
	}
	c := &Config{hooks: make(map[string][]func())}
	c.cur.Store(v)
	return c
}

// Load builds the configuration from the process arguments (os.Args[1:]):
// an optional config file as the first argument, then "--name value..."
// flags which override the file. Errors are *LoadError values naming the file
// and line or the flag, except a file that cannot be read, which is reported
// as "can't open config file '...': ...".
//
// Flag syntax follows redis-server: "--name" takes the next argument as its
// value even if it starts with "--", plus any further arguments up to the
// next one starting with "--" (so "--bind 127.0.0.1 ::1" works). A single
// argument "--name value" is split like a config line, "--name=value" is
// also accepted, and "--save" without a value means save "".
func Load(args []string) (*Config, error) {
	c := Default()
	v := *c.cur.Load()
	cloneKept(&v)
	l := loader{v: &v}

	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		c.file = args[0]
		data, err := os.ReadFile(c.file)
		if err != nil {
			return nil, fmt.Errorf("can't open config file '%s': %w", c.file, err)
		}
		if err := l.file(c.file, string(data)); err != nil {
			return nil, err
		}
		args = args[1:]
	}
	flags, err := parseFlags(args)
	if err != nil {
		return nil, err
	}
	for _, f := range flags {
		if strings.EqualFold(f.name, "include") && len(f.args) == 1 {
			if err := l.include(f.args[0]); err != nil {
				return nil, err
			}
			continue
		}
		if msg := l.apply(f.name, f.args); msg != "" {
			return nil, &LoadError{Flag: f.flag, Directive: f.text(), Msg: msg}
		}
	}
	c.given = l.given
	c.users = l.users
	c.cur.Store(&v)
	return c, nil
}

// loader applies the directives of a config file and the command line to one snapshot.
type loader struct {
	v         *values
	given     []string
	saveSeen  bool // a save directive was applied: later ones add to it, as in Redis
	depth     int  // include nesting
	seenGiven map[string]bool
	users     [][]string // "user" directives, each as its words
}

// file applies the directives of a config file's content.
func (l *loader) file(file, content string) error {
	for i, line := range strings.Split(content, "\n") {
		line = strings.Trim(line, " \t\r\n")
		if line == "" || line[0] == '#' {
			continue
		}
		args, ok := splitArgs(line)
		if !ok {
			return &LoadError{File: file, Line: i + 1, Directive: line, Msg: msgUnbalanced}
		}
		if len(args) == 0 {
			continue
		}
		if strings.EqualFold(args[0], "include") && len(args) == 2 {
			if err := l.include(args[1]); err != nil {
				return err
			}
			continue
		}
		if msg := l.apply(args[0], args[1:]); msg != "" {
			return &LoadError{File: file, Line: i + 1, Directive: line, Msg: msg}
		}
	}
	return nil
}

// maxIncludeDepth bounds nested includes, so a file that includes itself fails instead of
// recursing without end.
const maxIncludeDepth = 16

// include applies the files an include directive names, as Redis does: a path with a glob
// pattern includes every match (none is fine), a plain path must be readable.
func (l *loader) include(pattern string) error {
	if l.depth >= maxIncludeDepth {
		return fmt.Errorf("can't open config file '%s': includes nested deeper than %d", pattern, maxIncludeDepth)
	}
	paths := []string{pattern}
	if strings.ContainsAny(pattern, "*?[") {
		var err error
		if paths, err = filepath.Glob(pattern); err != nil {
			paths = nil
		}
	}
	l.depth++
	defer func() { l.depth-- }()
	for _, path := range paths {
		data, err := os.ReadFile(path)
		if err != nil {
			return fmt.Errorf("can't open config file '%s': %w", path, err)
		}
		if err := l.file(path, string(data)); err != nil {
			return err
		}
	}
	return nil
}

// apply sets one parameter from a file line or flag, returning "" or the error text.
func (l *loader) apply(name string, args []string) string {
	if strings.EqualFold(name, "user") {
		// ACL users: kept in order for the ACL registry, which checks their rules at start.
		if len(args) < 1 {
			return errWrongArgs
		}
		l.users = append(l.users, append([]string{"user"}, args...))
		return ""
	}
	p, _ := lookupParam(name)
	if p == nil {
		return msgBadDirective
	}
	if !p.multiArg && len(args) != 1 {
		return errWrongArgs
	}
	if p.multiArg && len(args) == 1 && args[0] != "" {
		// As redis-server: the one argument of a multi-argument directive is split like a
		// config line, so `--save "900 1 300 10"` and `client-output-buffer-limit "normal
		// 256mb 64mb 60"` work (an empty one stays: save "" clears).
		if parts, ok := splitArgs(args[0]); ok {
			args = parts
		}
	}
	if p.name == "save" && l.saveSeen && len(args) > 0 && !(len(args) == 1 && args[0] == "") {
		// Successive save lines add save points; save "" clears them.
		args = append(strings.Fields(getSave(l.v)), args...)
	}
	if msg := p.set(l.v, args); msg != "" {
		return msg
	}
	if p.name == "save" {
		l.saveSeen = true
	}
	if l.seenGiven == nil {
		l.seenGiven = make(map[string]bool)
	}
	if !l.seenGiven[p.name] {
		l.seenGiven[p.name] = true
		l.given = append(l.given, p.name)
	}
	return ""
}

// flagDirective is one "--name value..." group from the command line.
type flagDirective struct {
	flag string // as typed, e.g. "--port"
	name string
	args []string
}

// text renders the directive as the equivalent config-file line.
func (f flagDirective) text() string {
	return strings.Join(append([]string{f.name}, f.args...), " ")
}

// parseFlags groups command-line arguments into directives.
func parseFlags(args []string) ([]flagDirective, error) {
	var out []flagDirective
	for i := 0; i < len(args); {
		a := args[i]
		if !strings.HasPrefix(a, "--") || len(a) == 2 {
			return nil, &LoadError{Flag: a, Directive: a,
				Msg: "expected an option like --port (the config file, if any, must be the first argument)"}
		}
		f := flagDirective{flag: a}
		body := a[2:]
		bare := false
		if k := strings.IndexByte(body, '='); k > 0 && !strings.ContainsAny(body[:k], " \t") {
			f.flag = a[:k+2]
			f.name, f.args = body[:k], []string{body[k+1:]}
		} else if strings.ContainsAny(body, " \t") {
			parts, ok := splitArgs(body)
			if !ok || len(parts) == 0 {
				return nil, &LoadError{Flag: a, Directive: body, Msg: msgUnbalanced}
			}
			f.flag = "--" + parts[0]
			f.name, f.args = parts[0], parts[1:]
		} else {
			f.name, bare = body, true
		}
		i++
		isSave := strings.EqualFold(f.name, "save")
		// A bare "--name" always takes the next argument as its value, even
		// if it looks like a flag (e.g. a password), except "--save" which
		// may be given without a value.
		if bare && i < len(args) && !(isSave && strings.HasPrefix(args[i], "--")) {
			f.args = append(f.args, args[i])
			i++
		}
		for i < len(args) && !strings.HasPrefix(args[i], "--") {
			f.args = append(f.args, args[i])
			i++
		}
		if isSave && len(f.args) == 0 {
			f.args = []string{""}
		}
		out = append(out, f)
	}
	return out, nil
}

// Get implements CONFIG GET for one pattern: every parameter whose name
// matches the glob pattern (case-insensitive; * ? [...] and \ escapes),
// as name/value pairs sorted by name. Values are formatted as Redis prints
// them: booleans as yes/no, memory sizes as plain byte counts, lists space
// separated. As in Redis 7, a pattern without glob characters is an exact,
// case-insensitive lookup and the reply echoes the name as the caller spelled
// it. The result is never nil.
func (c *Config) Get(pattern string) [][2]string {
	return getFrom(c.cur.Load(), pattern)
}

// getFrom implements Get against one snapshot.
func getFrom(v *values, pattern string) [][2]string {
	if !strings.ContainsAny(pattern, "*?[") {
		if p, _ := lookupParam(pattern); p != nil {
			return [][2]string{{pattern, p.get(v)}}
		}
		return [][2]string{}
	}
	out := [][2]string{}
	for _, name := range allNames {
		if globMatch(pattern, name) {
			p, _ := lookupParam(name)
			out = append(out, [2]string{name, p.get(v)})
		}
	}
	return out
}

// allNames is every parameter name and alias but the hidden ones, sorted: what CONFIG GET *
// lists, as Redis lists aliases too.
var allNames = func() []string {
	var names []string
	for _, p := range allParams {
		if p.hidden {
			continue
		}
		names = append(names, p.name)
		if p.alias != "" {
			names = append(names, p.alias)
		}
	}
	slices.Sort(names)
	return names
}()

// GetMulti implements the Redis 7 multi-pattern form CONFIG GET p1 p2 ...:
// the union of Get over all patterns, read from one consistent snapshot,
// each parameter reported once (under the first spelling that matched it),
// sorted by parameter name. The result is never nil.
func (c *Config) GetMulti(patterns []string) [][2]string {
	v := c.cur.Load()
	byName := make(map[string][2]string)
	for _, pat := range patterns {
		for _, kv := range getFrom(v, pat) {
			name := strings.ToLower(kv[0])
			if _, ok := byName[name]; !ok {
				byName[name] = kv
			}
		}
	}
	out := make([][2]string, 0, len(byName))
	for _, name := range slices.Sorted(maps.Keys(byName)) {
		out = append(out, byName[name])
	}
	return out
}

// configSetErr formats a CONFIG SET failure the way Redis 7 does.
func configSetErr(arg, msg string) error {
	return fmt.Errorf("ERR CONFIG SET failed (possibly related to argument '%s') - %s", arg, msg)
}

// Set implements CONFIG SET name value [name value ...]. It is atomic: every
// pair is validated first and either all values are applied or none. Errors
// carry the Redis 7 texts, including the "ERR " prefix, so the server can
// reply with "-" + err.Error():
//
//	ERR Unknown option or number of arguments for CONFIG SET - 'foo'
//	ERR CONFIG SET failed (possibly related to argument 'port') - can't set immutable config
//	ERR CONFIG SET failed (possibly related to argument 'hz') - duplicate parameter
//	ERR CONFIG SET failed (possibly related to argument 'maxclients') - argument couldn't be parsed into an integer
//	ERR CONFIG SET failed (possibly related to argument 'maxclients') - argument must be between 1 and 4294967295 inclusive
//	ERR CONFIG SET failed (possibly related to argument 'block-cache-size') - argument must be a memory value
//	ERR CONFIG SET failed (possibly related to argument 'appendfsync') - argument(s) must be one of the following: everysec, always, no
//	ERR CONFIG SET failed (possibly related to argument 'dir') - can't set protected config
//	ERR CONFIG SET failed (possibly related to argument 'cpu-pin') - argument must be 'yes' or 'no'
//
// Names are checked first, in order (first problem wins; unknown, immutable
// and duplicate errors quote the name as given), then values, in order
// (value errors quote the canonical name). A value for a multi-argument
// parameter (save) is split on spaces. After a successful Set, the OnChange
// hooks of every parameter whose value actually changed run, in argument
// order, before Set returns. An empty pairs slice is an arity error.
func (c *Config) Set(pairs [][2]string) error { return c.SetFrom(pairs, false) }

// SetFrom is Set for a client: local tells whether it connected from the loopback interface or
// the unix socket, which enable-protected-configs local requires to change a protected
// parameter (dir, dbfilename), as in Redis.
func (c *Config) SetFrom(pairs [][2]string, local bool) error {
	if len(pairs) == 0 {
		return errors.New("ERR wrong number of arguments for 'config|set' command")
	}
	ps := make([]*param, len(pairs))
	names := make([]string, len(pairs))
	pc := c.cur.Load().protectedConfigs
	protectedOK := pc == "yes" || pc == "local" && local
	for i, kv := range pairs {
		p, name := lookupParam(kv[0])
		if p == nil {
			return fmt.Errorf("ERR Unknown option or number of arguments for CONFIG SET - '%s'", kv[0])
		}
		if !p.mutable && !(p.protected && !protectedOK) {
			return configSetErr(kv[0], "can't set immutable config")
		}
		if p.protected && !protectedOK {
			return configSetErr(kv[0], "can't set protected config")
		}
		if slices.Contains(ps[:i], p) {
			return configSetErr(kv[0], "duplicate parameter")
		}
		ps[i], names[i] = p, name
	}

	c.mu.Lock()
	defer c.mu.Unlock()
	old := c.cur.Load()
	next := *old
	cloneKept(&next)
	for i, p := range ps {
		args := []string{pairs[i][1]}
		if p.multiArg {
			// As Redis splits it: on single spaces, and "" is no argument at all.
			args = nil
			if pairs[i][1] != "" {
				args = strings.Split(pairs[i][1], " ")
			}
		}
		if msg := p.set(&next, args); msg != "" {
			return configSetErr(names[i], msg)
		}
	}
	c.cur.Store(&next)

	for _, p := range ps {
		if p.get(old) == p.get(&next) {
			continue
		}
		for _, fn := range c.hooks[p.name] {
			fn()
		}
	}
	return nil
}

// OnChange registers fn to run after a successful Set changed the named
// parameter (e.g. resize the block cache when block-cache-size changes).
// Hooks are not run by Load, nor when Set stores the value already in
// effect. Hooks run synchronously inside Set, one at a time, after the new
// values are visible through the accessors; a hook may read the Config but
// must not call Set or OnChange (it would deadlock). Several hooks may be
// registered for one name; they run in registration order. OnChange panics
// if name is not a parameter (a programming error).
func (c *Config) OnChange(name string, fn func()) {
	p, _ := lookupParam(name)
	if p == nil {
		panic(fmt.Sprintf("config: OnChange for unknown parameter %q", name))
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.hooks[p.name] = append(c.hooks[p.name], fn)
}

// Names returns every parameter name, sorted (aliases not included).
func (c *Config) Names() []string {
	names := make([]string, len(allParams))
	for i, p := range allParams {
		names[i] = p.name
	}
	return names
}

// Known reports whether name is a parameter or an alias of one.
func Known(name string) bool {
	p, _ := lookupParam(name)
	return p != nil
}

// GivenWithoutEffect lists, in the order they were first given, the parameters the config file
// or the command line set that shardis accepts and keeps but does not act on: the start-up log
// names them once.
func (c *Config) GivenWithoutEffect() []string {
	var out []string
	for _, name := range c.given {
		if p, _ := lookupParam(name); p.noEffect {
			out = append(out, name)
		}
	}
	return out
}

// Value returns a parameter's value as CONFIG GET prints it, or "" for an unknown name: for
// the parameters without an accessor of their own (INFO's maxmemory, for instance).
func (c *Config) Value(name string) string {
	if p, _ := lookupParam(name); p != nil {
		return p.get(c.cur.Load())
	}
	return ""
}

// File returns the config file path given to Load, or "" if none was.
func (c *Config) File() string { return c.file }

// Port returns the TCP port to listen on (port).
func (c *Config) Port() int { return int(c.cur.Load().port) }

// Bind returns the addresses to listen on (bind). The slice is a copy.
func (c *Config) Bind() []string { return slices.Clone(c.cur.Load().bind) }

// Dir returns the data directory holding the RocksDB database (dir), as
// configured (possibly relative to the working directory).
func (c *Config) Dir() string { return c.cur.Load().dir }

// RDBFormat returns what SAVE and BGSAVE write: "checkpoint", "rdb" or "both" (rdb-format).
func (c *Config) RDBFormat() string { return c.cur.Load().rdbFormat }

// DBFilename returns the RDB file's name in Dir (dbfilename).
func (c *Config) DBFilename() string { return c.cur.Load().dbFilename }

// RDBCompression reports whether RDB files compress strings with LZF (rdbcompression).
func (c *Config) RDBCompression() bool { return c.cur.Load().rdbCompression }

// RDBChecksum reports whether RDB files end with their CRC-64 (rdbchecksum).
func (c *Config) RDBChecksum() bool { return c.cur.Load().rdbChecksum }

// Loops returns the number of network event loops, resolving the configured
// 0 to runtime.NumCPU().
func (c *Config) Loops() int {
	if n := c.cur.Load().loops; n > 0 {
		return int(n)
	}
	return runtime.NumCPU()
}

// Shards returns the number of shards, resolving the configured 0 to
// 4 * runtime.NumCPU(). The shard count must not change for an existing data
// directory; the storage layer is responsible for enforcing that.
func (c *Config) Shards() int {
	if n := c.cur.Load().shards; n > 0 {
		return int(n)
	}
	return 4 * runtime.NumCPU()
}

// ShardsSet reports whether the shard count was configured (shards is not 0).
func (c *Config) ShardsSet() bool { return c.cur.Load().shards > 0 }

// CPUPin reports whether event loops are locked to their OS threads and pinned to CPUs
// (cpu-pin).
func (c *Config) CPUPin() bool { return c.cur.Load().cpuPin }

// Users returns the "user" directives of the config file and the command line, each as its
// words ("user", name, rules...), for the ACL registry to load at start-up.
func (c *Config) Users() [][]string { return c.users }

// SetUserLines registers what CONFIG REWRITE writes as "user" lines: the ACL users, as
// Redis writes them when there is no aclfile (none when there is one). Call it before the
// server serves.
func (c *Config) SetUserLines(fn func() []string) { c.userLines = fn }

// ACLFile returns aclfile: the ACL file ACL LOAD and ACL SAVE use, "" for none.
func (c *Config) ACLFile() string { return c.cur.Load().kept["aclfile"] }

// ACLLogMaxLen returns acllog-max-len, the number of ACL LOG entries kept.
func (c *Config) ACLLogMaxLen() int {
	n, _ := strconv.Atoi(c.cur.Load().kept["acllog-max-len"])
	return n
}

// ACLPubsubAllChannels reports acl-pubsub-default allchannels: new users may use every
// channel (else none, resetchannels).
func (c *Config) ACLPubsubAllChannels() bool {
	return c.cur.Load().kept["acl-pubsub-default"] == "allchannels"
}

// RequirePass returns the password clients must AUTH with, or "" when no
// authentication is required (requirepass).
func (c *Config) RequirePass() string { return c.cur.Load().requirePass }

// MaxClients returns the maximum number of simultaneously connected clients
// (maxclients).
func (c *Config) MaxClients() int { return int(c.cur.Load().maxClients) }

// Timeout returns how long a client may stay idle before it is closed; 0
// means never (timeout).
func (c *Config) Timeout() time.Duration {
	return time.Duration(c.cur.Load().timeout) * time.Second
}

// AppendFsync returns the WAL fsync policy: "always", "everysec" or "no"
// (appendfsync).
func (c *Config) AppendFsync() string { return c.cur.Load().appendFsync }

// BlockCacheSize returns the RocksDB block cache capacity in bytes
// (block-cache-size).
func (c *Config) BlockCacheSize() int64 { return c.cur.Load().blockCacheSize }

// KeyCacheSize is the budget of the shards' caches of hot keys, split evenly between them
// (key-cache-size).
func (c *Config) KeyCacheSize() int64 { return c.cur.Load().keyCacheSize }

// DiskReserve returns the free space in bytes that writes must leave on the data
// directory's disk (disk-reserve), or AutoDiskReserve while it is the default, 64mb: the
// store then takes the smaller of that and a sixteenth of the volume, so that a small volume
// is usable.
func (c *Config) DiskReserve() int64 {
	if v := c.cur.Load().diskReserve; v != defaultDiskReserve {
		return v
	}
	return AutoDiskReserve
}

// AutoDiskReserve is DiskReserve's answer for the default: shard.Options.DiskReserve's
// "the smaller of 64 MB and a sixteenth of the volume".
const AutoDiskReserve = -1

const defaultDiskReserve = 64 * mb

// WriteBufferSize returns the total memtable budget in bytes shared by all
// shards (write-buffer-size).
func (c *Config) WriteBufferSize() int64 { return c.cur.Load().writeBufferSize }

// BlobMinSize returns the size from which RocksDB keeps a value in a blob file rather than in
// the LSM tree (blob-min-size; 0: never).
func (c *Config) BlobMinSize() int64 { return c.cur.Load().blobMinSize }

// HLLSparseMaxBytes returns the size past which a sparse HyperLogLog turns dense
// (hll-sparse-max-bytes).
func (c *Config) HLLSparseMaxBytes() int64 { return c.cur.Load().hllSparseMaxBytes }

// ProtoMaxBulkLen returns the largest bulk string a client may send, in bytes
// (proto-max-bulk-len).
func (c *Config) ProtoMaxBulkLen() int64 { return c.cur.Load().protoMaxBulkLen }

// NotifyKeyspaceEvents returns the classes of keyspace notifications to publish
// (notify-keyspace-events).
func (c *Config) NotifyKeyspaceEvents() pubsub.Class { return c.cur.Load().notifyEvents }

// OutputLimit returns client-output-buffer-limit for a class of clients.
func (c *Config) OutputLimit(class ClientClass) OutputLimit { return c.cur.Load().outputLimits[class] }

// ClientQueryBufferLimit returns the largest unprocessed input a client may
// accumulate, in bytes (client-query-buffer-limit).
func (c *Config) ClientQueryBufferLimit() int64 { return c.cur.Load().clientQueryBufferLimit }

// BinlogMaxEntries returns how many binlog entries each shard keeps; 0 means
// unlimited (binlog-max-entries).
func (c *Config) BinlogMaxEntries() int64 { return c.cur.Load().binlogMaxEntries }

// BinlogMaxAge returns how long binlog entries are kept; 0 means unlimited
// (binlog-max-age).
func (c *Config) BinlogMaxAge() time.Duration {
	return time.Duration(c.cur.Load().binlogMaxAge) * time.Second
}

// FullSyncMaxRate returns how many bytes a second a full sync sends a shardis replica at
// most; 0 means no limit (repl-fullsync-max-rate).
func (c *Config) FullSyncMaxRate() int64 { return c.cur.Load().fullSyncMaxRate }

// Hz returns how many times per second background work runs, always within
// [1, 500] (hz).
func (c *Config) Hz() int { return int(c.cur.Load().hz) }

// SlowlogSlowerThan returns the slow log threshold in microseconds; -1
// disables the slow log and 0 logs every command (slowlog-log-slower-than).
func (c *Config) SlowlogSlowerThan() int64 { return c.cur.Load().slowlogSlowerThan }

// BusyReplyThreshold returns how long a script runs before other clients get BUSY and
// SCRIPT KILL may stop it (busy-reply-threshold, alias lua-time-limit).
func (c *Config) BusyReplyThreshold() time.Duration {
	return time.Duration(c.cur.Load().busyReplyThreshold) * time.Millisecond
}

// LatencyThreshold returns the latency monitor's threshold in milliseconds; 0 means the monitor
// is off (latency-monitor-threshold).
func (c *Config) LatencyThreshold() int64 { return c.cur.Load().latencyThreshold }

// LatencyTracking reports whether per-command latency histograms are kept (latency-tracking).
func (c *Config) LatencyTracking() bool { return c.cur.Load().latencyTracking }

// LatencyPercentiles returns the percentiles INFO latencystats reports
// (latency-tracking-info-percentiles), in the order given.
func (c *Config) LatencyPercentiles() []float64 {
	fields := strings.Fields(c.cur.Load().latencyPercentiles)
	out := make([]float64, 0, len(fields))
	for _, f := range fields {
		if p, err := strconv.ParseFloat(f, 64); err == nil {
			out = append(out, p)
		}
	}
	return out
}

// SlowlogMaxLen returns how many entries the slow log keeps (slowlog-max-len).
func (c *Config) SlowlogMaxLen() int { return int(c.cur.Load().slowlogMaxLen) }

// Databases returns the number of logical databases for SELECT (databases).
func (c *Config) Databases() int { return int(c.cur.Load().databases) }

// LogLevel returns the log verbosity: "debug", "verbose", "notice" or
// "warning" (loglevel).
func (c *Config) LogLevel() string { return c.cur.Load().logLevel }

// LogFile returns the log file path; "" means standard output (logfile).
func (c *Config) LogFile() string { return c.cur.Load().logFile }

// ProtectedMode reports whether a client from outside the loopback interface is refused while
// no password is set (protected-mode).
func (c *Config) ProtectedMode() bool { return c.cur.Load().protectedMode }

// TCPKeepalive returns the TCP keepalive period of client connections; 0 turns it off
// (tcp-keepalive).
func (c *Config) TCPKeepalive() time.Duration {
	return time.Duration(c.cur.Load().tcpKeepalive) * time.Second
}

// UnixSocket returns the path of the unix socket to listen on, "" for none (unixsocket), and
// the permissions to give it, 0 meaning the umask's (unixsocketperm).
func (c *Config) UnixSocket() (string, os.FileMode) {
	v := c.cur.Load()
	return v.unixSocket, os.FileMode(v.unixSocketPerm)
}

// Daemonize reports whether the server detaches from its terminal (daemonize).
func (c *Config) Daemonize() bool { return c.cur.Load().daemonize }

// Supervised returns the supervision mode: "no", "upstart", "systemd" or "auto" (supervised).
func (c *Config) Supervised() string { return c.cur.Load().supervised }

// SupervisedMode returns the supervised mode in effect: "auto" resolved from the environment
// (systemd when NOTIFY_SOCKET is set, upstart when UPSTART_JOB is, else "no"), as Redis does.
func (c *Config) SupervisedMode() string {
	mode := c.Supervised()
	if mode != "auto" {
		return mode
	}
	switch {
	case os.Getenv("NOTIFY_SOCKET") != "":
		return "systemd"
	case os.Getenv("UPSTART_JOB") != "":
		return "upstart"
	}
	return "no"
}

// PidFile returns the path to write the process id to; "" means none
// (pidfile).
func (c *Config) PidFile() string { return c.cur.Load().pidFile }
