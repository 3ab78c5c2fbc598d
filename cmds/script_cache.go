package cmds

import (
	"crypto/sha1"
	"encoding/hex"
	"strings"
	"sync"
	"sync/atomic"

	lua "github.com/yuin/gopher-lua"
	"github.com/yuin/gopher-lua/parse"
)

// The script cache: every script EVAL or SCRIPT LOAD compiled, by SHA1, for EVALSHA. It is
// shared by every goroutine (guarded by its mutex); a cachedScript is immutable once made but
// for its wide mark, and its compiled proto is shared by every VM (gopher-lua protos are
// read-only once compiled).
//
// The cache is bounded: past scriptCacheMaxBytes of script text, the oldest scripts are
// dropped (EVALSHA then answers NOSCRIPT and clients such as go-redis fall back to EVAL).
// Redis 7.0 never drops a script but on SCRIPT FLUSH.

const scriptCacheMaxBytes = 64 << 20

type cachedScript struct {
	sha   string // lower-case hex SHA1 of body
	body  string
	proto *lua.FunctionProto
	flags scriptFlags
	// wide: a run strayed beyond its declared keys' shards (Ctx.Strayed), so later runs hold
	// every shard from the start (scriptRoute).
	wide atomic.Bool
}

type scriptCache struct {
	mu     sync.Mutex
	bySHA  map[string]*cachedScript
	order  []string // SHAs in insertion order, for eviction
	bytes  int
	maxLen int
}

var scripts = &scriptCache{bySHA: map[string]*cachedScript{}, maxLen: scriptCacheMaxBytes}

// scriptSHA returns the lower-case hex SHA1 of body.
func scriptSHA(body []byte) string {
	sum := sha1.Sum(body)
	return hex.EncodeToString(sum[:])
}

// get returns the script with sha (any case), or nil.
func (sc *scriptCache) get(sha []byte) *cachedScript {
	if len(sha) != 40 {
		return nil
	}
	key := strings.ToLower(string(sha))
	sc.mu.Lock()
	defer sc.mu.Unlock()
	return sc.bySHA[key]
}

// peek returns the cached script whose body is body, or nil.
func (sc *scriptCache) peek(body []byte) *cachedScript {
	sha := scriptSHA(body)
	sc.mu.Lock()
	defer sc.mu.Unlock()
	return sc.bySHA[sha]
}

// load compiles body and caches it (or returns the cached script). The error is the reply
// text of a script that does not compile or has a bad shebang.
func (sc *scriptCache) load(body []byte) (*cachedScript, string) {
	sha := scriptSHA(body)
	sc.mu.Lock()
	s := sc.bySHA[sha]
	sc.mu.Unlock()
	if s != nil {
		return s, ""
	}
	flags, code, errText := parseShebang(string(body))
	if errText != "" {
		return nil, errText
	}
	proto, err := compileChunk(code, scriptErrorSource)
	if err != nil {
		return nil, "ERR Error compiling script (new function): " + err.Error()
	}
	s = &cachedScript{sha: sha, body: string(body), proto: proto, flags: flags}
	sc.mu.Lock()
	defer sc.mu.Unlock()
	if old := sc.bySHA[sha]; old != nil {
		return old, ""
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
	return s, ""
}

// flush empties the cache (SCRIPT FLUSH).
func (sc *scriptCache) flush() {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	sc.bySHA = map[string]*cachedScript{}
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

// scriptFlags are the flags of a script's shebang (#!lua flags=…).
type scriptFlags uint8

const (
	scriptShebang scriptFlags = 1 << iota // the script has a shebang: flags decide, not compat mode
	scriptNoWrites
	scriptAllowOOM
	scriptAllowStale
	scriptNoCluster
	scriptAllowCrossSlot
)

var shebangFlagNames = map[string]scriptFlags{
	"no-writes":             scriptNoWrites,
	"allow-oom":             scriptAllowOOM,
	"allow-stale":           scriptAllowStale,
	"no-cluster":            scriptNoCluster,
	"allow-cross-slot-keys": scriptAllowCrossSlot,
}

// parseShebang reads the "#!lua flags=a,b" first line of body as Redis 7.0 does. It returns
// the flags, the code to compile (the shebang line blanked, so line numbers stay) and the
// error reply of a bad shebang.
func parseShebang(body string) (scriptFlags, string, string) {
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
	flags := scriptShebang
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

// stats returns how many scripts the cache holds and the bytes of their text.
func (sc *scriptCache) stats() (n, bytes int) {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	return len(sc.bySHA), sc.bytes
}

// size returns the bytes of script text the cache holds (MEMORY STATS lua.caches).
func (sc *scriptCache) size() int {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	return sc.bytes
}
