package acl

import (
	"sync"
)

// Contexts of a denial, as ACL LOG names them.
const (
	ContextToplevel = "toplevel"
	ContextMulti    = "multi"
	ContextLua      = "lua"
)

// groupWindowMs: a denial within this time of a like one bumps that entry's count.
const groupWindowMs = 60000

// LogEntry is one ACL LOG entry.
type LogEntry struct {
	Count    int64
	Reason   Reason
	Context  string
	Object   string // the command, key or channel denied; the command name for a failed AUTH
	Username string
	TimeMs   int64  // when it last happened (unix ms)
	Client   string // CLIENT LIST's line of the client, without its newline
}

// ReasonName is ACL LOG's name of a reason.
func ReasonName(r Reason) string {
	switch r {
	case DeniedCommand:
		return "command"
	case DeniedKey:
		return "key"
	case DeniedChannel:
		return "channel"
	case DeniedAuth:
		return "auth"
	}
	return "unknown"
}

// Log is the ACL log: the newest entries first, at most the length the caller passes.
type Log struct {
	mu      sync.Mutex
	entries []*LogEntry // newest first
}

// Add records e, merging it with a like entry among the 10 newest (same reason, context,
// object and user, within a minute), and trims the log to max entries.
func (l *Log) Add(e LogEntry, max int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for i, old := range l.entries {
		if i >= 10 {
			break
		}
		d := old.TimeMs - e.TimeMs
		if d < 0 {
			d = -d
		}
		if old.Reason == e.Reason && old.Context == e.Context && d <= groupWindowMs &&
			old.Object == e.Object && old.Username == e.Username {
			old.Count++
			old.TimeMs, old.Client = e.TimeMs, e.Client
			copy(l.entries[1:i+1], l.entries[:i])
			l.entries[0] = old
			return
		}
	}
	e.Count = 1
	l.entries = append([]*LogEntry{&e}, l.entries...)
	if len(l.entries) > max {
		for i := max; i < len(l.entries); i++ {
			l.entries[i] = nil
		}
		l.entries = l.entries[:max]
	}
}

// Entries returns copies of the newest n entries.
func (l *Log) Entries(n int) []LogEntry {
	l.mu.Lock()
	defer l.mu.Unlock()
	n = min(n, len(l.entries))
	out := make([]LogEntry, n)
	for i := range out {
		out[i] = *l.entries[i]
	}
	return out
}

// Reset empties the log.
func (l *Log) Reset() {
	l.mu.Lock()
	l.entries = nil
	l.mu.Unlock()
}
