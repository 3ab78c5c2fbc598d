package server

import (
	"strconv"
	"sync"
	"time"
)

// SlowEntry is one SLOWLOG entry.
type SlowEntry struct {
	ID       int64
	Time     int64 // unix seconds
	Duration int64 // microseconds
	Args     []string
	Addr     string
	Name     string
}

// Slowlog keeps the slowest recent commands, as Redis's SLOWLOG.
type Slowlog struct {
	mu      sync.Mutex
	entries []SlowEntry // newest first
	nextID  int64
}

// Maximum argument count and length kept per entry, as in Redis.
const (
	slowlogMaxArgc   = 32
	slowlogMaxArgLen = 128
)

// Add records a command that took d, keeping at most maxLen entries.
func (s *Slowlog) Add(args [][]byte, d time.Duration, cl *Client, maxLen int) {
	e := SlowEntry{Time: time.Now().Unix(), Duration: d.Microseconds()}
	for i, a := range args {
		if i == slowlogMaxArgc-1 && len(args) > slowlogMaxArgc {
			e.Args = append(e.Args, "... ("+strconv.Itoa(len(args)-slowlogMaxArgc+1)+" more arguments)")
			break
		}
		if len(a) > slowlogMaxArgLen {
			e.Args = append(e.Args, string(a[:slowlogMaxArgLen])+"... ("+strconv.Itoa(len(a)-slowlogMaxArgLen)+" more bytes)")
		} else {
			e.Args = append(e.Args, string(a))
		}
	}
	if cl != nil {
		e.Addr, e.Name = cl.Addr, cl.Name()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	e.ID = s.nextID
	s.nextID++
	s.entries = append([]SlowEntry{e}, s.entries...)
	if len(s.entries) > maxLen {
		s.entries = s.entries[:maxLen]
	}
}

// Get returns up to n of the newest entries (n < 0: all).
func (s *Slowlog) Get(n int) []SlowEntry {
	s.mu.Lock()
	defer s.mu.Unlock()
	if n < 0 || n > len(s.entries) {
		n = len(s.entries)
	}
	return append([]SlowEntry(nil), s.entries[:n]...)
}

// Len returns the number of entries.
func (s *Slowlog) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.entries)
}

// Reset empties the log.
func (s *Slowlog) Reset() {
	s.mu.Lock()
	s.entries = nil
	s.mu.Unlock()
}
