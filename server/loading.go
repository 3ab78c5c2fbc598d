package server

import (
	"sync"
	"sync/atomic"
	"time"
)

// LoadingError is Redis's reply to a command without the loading flag while the dataset is
// being loaded: shardis answers it while the store opens (Load).
const LoadingError = "LOADING Redis is loading the dataset in memory"

// loadState is the server's loading phase: from start until the store is open. The reactor
// reads loading once per command; the rest is for INFO and for commands held until the end.
type loadState struct {
	loading    atomic.Bool
	startedAt  atomic.Int64 // unix seconds Load began
	totalBytes atomic.Int64 // the write-ahead log to replay when Load began
	mu         sync.Mutex   // guards waiters and the end of loading
	waiters    []func()
}

// Loading reports whether the store is still opening: the reactor answers LoadingError to
// every command without the loading flag meanwhile. One atomic load.
func (s *Server) Loading() bool { return s.load.loading.Load() }

// LoadingProgress returns when loading began (unix seconds) and how many bytes of
// write-ahead log it had to replay (INFO persistence's loading_* fields).
func (s *Server) LoadingProgress() (startedAt, totalBytes int64) {
	return s.load.startedAt.Load(), s.load.totalBytes.Load()
}

// Load opens the store (shard.Store.Open: RocksDB's recovery, then the shards and their
// TTL and binlog workers start) and ends the loading phase. The server may serve meanwhile:
// New put it in the loading phase when its store was not open. On error the server stays
// loading; the caller stops it.
func (s *Server) Load() error {
	s.load.startedAt.Store(time.Now().Unix())
	s.load.totalBytes.Store(s.Store.LogBytes())
	if err := s.Store.Open(); err != nil {
		return err
	}
	s.load.mu.Lock()
	s.load.loading.Store(false)
	waiters := s.load.waiters
	s.load.waiters = nil
	s.load.mu.Unlock()
	for _, wake := range waiters {
		wake()
	}
	return nil
}

// WaitLoaded registers wake to be called when loading ends, for a connection holding back a
// command that needs the store; it reports false (and registers nothing) when loading already
// ended, so the caller can go on.
func (s *Server) WaitLoaded(wake func()) bool {
	s.load.mu.Lock()
	defer s.load.mu.Unlock()
	if !s.load.loading.Load() {
		return false
	}
	s.load.waiters = append(s.load.waiters, wake)
	return true
}
