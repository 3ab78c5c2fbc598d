package script

import (
	"bytes"
	"crypto/sha1"
	"encoding/hex"
	"errors"
	"strings"
	"sync"
	"sync/atomic"

	lua "github.com/yuin/gopher-lua"
	"github.com/yuin/gopher-lua/parse"
)

// The script cache: every script EVAL or SCRIPT LOAD compiled, by SHA1, for EVALSHA. It is
// shared by every goroutine (guarded by its mutex); a Script is immutable once made but for
// its wide mark, and its compiled proto is shared by every VM (gopher-lua protos are
// read-only once compiled).
//
// The cache is bounded: past its byte bound of script text, the oldest scripts are dropped
// (EVALSHA then answers NOSCRIPT and clients such as go-redis fall back to EVAL). Redis 7.0
// never drops a script but on SCRIPT FLUSH.

// DefaultCacheBytes is the script text a server's cache holds before it drops old scripts.
const DefaultCacheBytes = 64 << 20

// Script is one compiled script of the cache. Immutable but for its wide mark; it stays
// valid after the cache dropped it (a run in progress finishes).
type Script struct {
	sha   string // lower-case hex SHA1 of body
	body  string
	proto *lua.FunctionProto
	flags Flags
	// wide: a run strayed beyond its declared keys' shards, so later runs hold every shard
	// from the start (Invocation.MarkWide).
	wide atomic.Bool
}

// SHA returns the script's lower-case hex SHA1.
func (s *Script) SHA() string { return s.sha }

// Flags returns the flags of the script's shebang (FlagShebang set when it has one).
func (s *Script) Flags() Flags { return s.flags }

// Wide reports whether a run of the script strayed beyond its declared keys' shards.
func (s *Script) Wide() bool { return s.wide.Load() }

// Cache is the script cache: scripts by SHA1, bounded in bytes of script text. Safe for
// concurrent use.
type Cache struct {
	mu     sync.Mutex
	bySHA  map[string]*Script
	order  []string // SHAs in insertion order, for eviction
	bytes  int
	maxLen int
}

// NewCache returns an empty cache that holds up to maxBytes of script text.
func NewCache(maxBytes int) *Cache {
	return &Cache{bySHA: map[string]*Script{}, maxLen: maxBytes}
}

// scriptSHA returns the lower-case hex SHA1 of body.
func scriptSHA(body []byte) string {
	sum := sha1.Sum(body)
	return hex.EncodeToString(sum[:])
}

// Get returns the script with sha (any case), or nil.
func (sc *Cache) Get(sha []byte) *Script {
	if len(sha) != 40 {
		return nil
	}
	key := strings.ToLower(string(sha))
	sc.mu.Lock()
	defer sc.mu.Unlock()
	return sc.bySHA[key]
}

// Peek returns the cached script whose body is body, or nil.
func (sc *Cache) Peek(body []byte) *Script {
	sha := scriptSHA(body)
	sc.mu.Lock()
	defer sc.mu.Unlock()
	return sc.bySHA[sha]
}

// Load compiles body and caches it (or returns the cached script). The error, of a script
// that does not compile or has a bad shebang, is Redis's reply text.
func (sc *Cache) Load(body []byte) (*Script, error) {
	sha := scriptSHA(body)
	sc.mu.Lock()
	s := sc.bySHA[sha]
	sc.mu.Unlock()
	if s != nil {
		return s, nil
	}
	flags, code, errText := parseShebang(string(body))
	if errText != "" {
		return nil, errors.New(errText)
	}
	proto, err := compileChunk(code, scriptErrorSource)
	if err != nil {
		return nil, errors.New("ERR Error compiling script (new function): " + err.Error())
	}
	s = &Script{sha: sha, body: string(body), proto: proto, flags: flags}
	sc.mu.Lock()
	defer sc.mu.Unlock()
	if old := sc.bySHA[sha]; old != nil {
		return old, nil
	}
	sc.bySHA[sha] = s
	sc.order = append(sc.order, sha)
	sc.bytes += len(body)
	for sc.bytes > sc.maxLen && len(sc.order) > 1 {
		victim := sc.order[0]
		sc.order = sc.order[1:]
		if v := sc.bySHA[victim]; v != nil {
			sc.bytes -= len(v.body)
			delete(sc.bySHA, victim)
		}
	}
	return s, nil
}

// Flush empties the cache (SCRIPT FLUSH).
func (sc *Cache) Flush() {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	sc.bySHA = map[string]*Script{}
	sc.order = nil
	sc.bytes = 0
}

// compileChunk compiles code as the chunk source ("user_script", "user_function"), so
// errors read "user_script:LINE: …" as in Redis.
func compileChunk(code, source string) (*lua.FunctionProto, error) {
	chunk, err := parse.Parse(strings.NewReader(code), source)
	if err != nil {
		return nil, err
	}
	return lua.Compile(chunk, source)
}

// Flags are the flags of a script's shebang (#!lua flags=…) or of a function
// (redis.register_function's flags).
type Flags uint8

const (
	FlagShebang        Flags = 1 << iota // the script has a shebang: flags decide, not compat mode
	FlagNoWrites                         // no-writes
	FlagAllowOOM                         // allow-oom
	FlagAllowStale                       // allow-stale
	FlagNoCluster                        // no-cluster
	FlagAllowCrossSlot                   // allow-cross-slot-keys
)

var shebangFlagNames = map[string]Flags{
	"no-writes":             FlagNoWrites,
	"allow-oom":             FlagAllowOOM,
	"allow-stale":           FlagAllowStale,
	"no-cluster":            FlagNoCluster,
	"allow-cross-slot-keys": FlagAllowCrossSlot,
}

// ShebangFlags returns the flags of body's shebang (0 without one); ok is false for a bad
// shebang. Only the first line is read: what a command's flags depend on before it runs.
func ShebangFlags(body []byte) (flags Flags, ok bool) {
	if end := bytes.IndexByte(body, '\n'); end >= 0 {
		body = body[:end]
	}
	flags, _, errText := parseShebang(string(body))
	return flags, errText == ""
}

// parseShebang reads the "#!lua flags=a,b" first line of body as Redis 7.0 does. It returns
// the flags, the code to compile (the shebang line blanked, so line numbers stay) and the
// error reply of a bad shebang.
func parseShebang(body string) (Flags, string, string) {
	if !strings.HasPrefix(body, "#!") {
		return 0, body, ""
	}
	end := strings.IndexByte(body, '\n')
	if end < 0 {
		end = len(body)
	}
	parts := strings.Fields(body[:end])
	if len(parts) == 0 || parts[0] != "#!lua" {
		engine := body[:end]
		if len(parts) > 0 {
			engine = parts[0]
		}
		return 0, "", "ERR Unexpected engine in script shebang: " + engine
	}
	flags := FlagShebang
	for _, p := range parts[1:] {
		list, ok := strings.CutPrefix(p, "flags=")
		if !ok {
			return 0, "", "ERR Unknown lua shebang option: " + p
		}
		if list == "" {
			continue
		}
		for _, name := range strings.Split(list, ",") {
			f, ok := shebangFlagNames[name]
			if !ok {
				return 0, "", "ERR Unexpected flag in script shebang: " + name
			}
			flags |= f
		}
	}
	return flags, body[end:], ""
}

// Stats returns how many scripts the cache holds and the bytes of their text (INFO memory).
func (sc *Cache) Stats() (n, bytes int) {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	return len(sc.bySHA), sc.bytes
}

// Size returns the bytes of script text the cache holds (MEMORY STATS lua.caches).
func (sc *Cache) Size() int {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	return sc.bytes
}
