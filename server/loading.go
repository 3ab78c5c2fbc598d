package server

import (
	"sync"
	"sync/atomic"
	"time"
)

// Admission bits: states in which the reactor refuses some commands before they run. It
// reads them with one atomic load per command (Admission); 0 is the normal state.
const (
	// AdmitLoading: the store is opening; only commands with the loading flag run.
	AdmitLoading uint32 = 1 << iota
	// AdmitDiskError: the disk is (nearly) full or RocksDB failed a write; write commands
	// are refused with DiskError, as Redis refuses them when it cannot write its AOF.
	AdmitDiskError
	// AdmitReadOnly: a read-only replica; clients' writes are refused with ReadOnlyError.
	AdmitReadOnly
	// AdmitMasterDown: a replica whose link is down, with replica-serve-stale-data no; only
	// the commands flagged stale run (MasterDownError).
	AdmitMasterDown
	// AdmitNoReplicas: a master with min-replicas-to-write and fewer good replicas; writes
	// are refused with NoReplicasError.
	AdmitNoReplicas
)

// DiskError is Redis's reply to a write command while it cannot write its AOF, with the
// error of a full disk: shardis answers it while its disk guard turns writes away.
const DiskError = "MISCONF Errors writing to the AOF file: No space left on device"

// Admission returns the admission bits (one atomic load).
func (s *Server) Admission() uint32 { return s.admission.Load() }

// LoadingError is Redis's reply to a command without the loading flag while the dataset is
// being loaded: shardis answers it while the store opens (Load).
const LoadingError = "LOADING Redis is loading the dataset in memory"

// loadState is the server's loading phase: from start until the store is open (AdmitLoading);
// this is for INFO and for commands held until the end.
type loadState struct {
	startedAt atomic.Int64 // unix seconds Load began
	mu        sync.Mutex   // guards waiters and the end of loading
	waiters   []func()
}

// Loading reports whether the store is still opening: the reactor answers LoadingError to
// every command without the loading flag meanwhile. One atomic load.
func (s *Server) Loading() bool { return s.admission.Load()&AdmitLoading != 0 }

// LoadingProgress returns when loading began (unix seconds), and how many bytes of
// write-ahead log were replayed so far and are to be in all (INFO persistence's loading_*
// fields).
func (s *Server) LoadingProgress() (startedAt, loaded, total int64) {
	loaded, total = s.Store.ReplayProgress()
	return s.load.startedAt.Load(), loaded, total
}

// Load opens the store (shard.Store.Open: RocksDB's recovery, then the shards and their
// TTL and binlog workers start) and ends the loading phase. The server may serve meanwhile:
// New put it in the loading phase when its store was not open. On error the server stays
// loading; the caller stops it.
func (s *Server) Load() error {
	s.load.startedAt.Store(time.Now().Unix())
	if err := s.Store.Open(); err != nil {
		return err
	}
	if s.AfterOpen != nil {
		if err := s.AfterOpen(); err != nil {
			return err
		}
	}
	if s.Replication != nil {
		if err := s.Replication.Start(); err != nil {
			return err
		}
	}
	s.endLoading()
	return nil
}

// endLoading ends the loading phase and wakes the connections holding commands back.
func (s *Server) endLoading() {
	s.load.mu.Lock()
	s.admission.And(^AdmitLoading)
	waiters := s.load.waiters
	s.load.waiters = nil
	s.load.mu.Unlock()
	for _, wake := range waiters {
		wake()
	}
}

// WaitLoaded registers wake to be called when loading ends, for a connection holding back a
// command that needs the store; it reports false (and registers nothing) when loading already
// ended, so the caller can go on.
func (s *Server) WaitLoaded(wake func()) bool {
	s.load.mu.Lock()
	defer s.load.mu.Unlock()
	if !s.Loading() {
		return false
	}
	s.load.waiters = append(s.load.waiters, wake)
	return true
}
