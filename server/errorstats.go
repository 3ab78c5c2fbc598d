package server

import (
	"bytes"
	"slices"
	"strings"
	"sync"
)

// maxErrorKinds bounds how many distinct error prefixes are counted: scripts can reply errors
// with any prefix, and a client must not be able to grow the table without bound. Redis 7.2
// has the same limit (128); 7.0 has none.
const maxErrorKinds = 128

// ErrorStats counts error replies by their prefix (the first word: ERR, WRONGTYPE, NOAUTH, …)
// for INFO errorstats, as Redis's afterErrorReply does. The zero value is ready and safe for
// concurrent use; only error replies touch it.
type ErrorStats struct {
	mu     sync.Mutex
	counts map[string]int64
}

// Count records one error reply: msg is the error's text, with or without its leading '-'.
// The prefix is the text before the first space within 32 bytes; without one it is "ERR".
func (e *ErrorStats) Count(msg []byte) {
	msg = bytes.TrimPrefix(msg, []byte("-"))
	head := msg[:min(len(msg), 31)]
	name := "ERR"
	if i := bytes.IndexByte(head, ' '); i >= 0 {
		name = string(head[:i])
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.counts == nil {
		e.counts = make(map[string]int64)
	}
	if _, ok := e.counts[name]; ok || len(e.counts) < maxErrorKinds {
		e.counts[name]++
	}
}

// ErrorCount is one line of INFO errorstats.
type ErrorCount struct {
	Name  string
	Count int64
}

// All returns the counts by prefix, in byte order (as Redis's rax iterates them).
func (e *ErrorStats) All() []ErrorCount {
	e.mu.Lock()
	out := make([]ErrorCount, 0, len(e.counts))
	for name, n := range e.counts {
		out = append(out, ErrorCount{name, n})
	}
	e.mu.Unlock()
	slices.SortFunc(out, func(a, b ErrorCount) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// Reset forgets every count (CONFIG RESETSTAT).
func (e *ErrorStats) Reset() {
	e.mu.Lock()
	clear(e.counts)
	e.mu.Unlock()
}
