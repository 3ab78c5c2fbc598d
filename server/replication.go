package server

import "time"

// Replication is the server's replication (package replication, set by main before serving):
// what the commands and INFO ask of it. Safe for concurrent use.
type Replication interface {
	// Start begins replication once the store is open (Load calls it): the persisted ids, and
	// the link to the master when the configuration names one.
	Start() error
	// Stop ends the link and the replicas' feeds, before the store closes.
	Stop()
	// ReplicaOf makes the server a replica of host:port, or a master again when host is ""
	// (REPLICAOF NO ONE). It returns at once; the link is made in the background.
	ReplicaOf(host string, port int) error
	// Info describes the replication state (INFO replication, ROLE).
	Info() ReplInfo
	// Replconf runs REPLCONF for cl (args after the command name) and returns its reply, or
	// "" when there is none (ACK).
	Replconf(cl *Client, args []string) string
	// Psync serves PSYNC or SYNC for replica cl: it writes the reply line and the stream
	// that follows to cl itself, and returns an error text when it refuses.
	Psync(cl *Client, req PsyncRequest) string
	// Failover starts FAILOVER (host "" for any replica; timeout 0 for none) and returns
	// Redis's error text, or "" once it started; AbortFailover is FAILOVER ABORT.
	Failover(host string, port int, force bool, timeout time.Duration) string
	AbortFailover() string
	// Wait blocks until n replicas acknowledged everything written so far, or timeout passed
	// (0: for ever), or cancel was closed, and returns how many did.
	Wait(n int, timeout time.Duration, cancel <-chan struct{}) int
}

// PsyncRequest is what a replica asked for with PSYNC or SYNC.
type PsyncRequest struct {
	ReplID   string // "?" asks for a full sync
	Offset   int64  // -1 with ReplID "?"
	Failover bool   // PSYNC … FAILOVER: a replica of the sender takes over as master first
	Sync     bool   // SYNC: the RDB comes with no +FULLRESYNC line
}

// ReplInfo is the replication state as INFO replication and ROLE show it.
type ReplInfo struct {
	Replica bool // role: slave
	// Replica side.
	MasterHost        string
	MasterPort        int
	LinkUp            bool
	LastIOSecs        int64 // seconds since the last data from the master
	SyncInProgress    bool
	LinkDownSecs      int64 // seconds since the link went down (-1 while up)
	ReplicaReadOnly   bool
	ReplicaPriority   int64
	ReplicaReplOffset uint64 // what the replica applied
	// RedisMasterOffset is the byte offset applied of a redis-server master's stream, -1
	// when the master is a shardis (or none).
	RedisMasterOffset int64
	// Both.
	ReplID, ReplID2 string
	FailoverState   string // no-failover, waiting-for-sync, failover-in-progress
	Offset          uint64 // master_repl_offset
	SecondOffset    int64  // -1: none
	Replicas        []ReplicaInfo
}

// ReplicaInfo is one connected replica as its master sees it.
type ReplicaInfo struct {
	IP     string
	Port   int
	State  string // wait_bgsave, send_bulk, online
	Offset uint64
	Lag    int64 // seconds since its last ACK
}

// ReadOnlyError is Redis's reply to a write on a read-only replica.
const ReadOnlyError = "READONLY You can't write against a read only replica."

// MasterDownError is Redis's reply on a replica whose link is down with
// replica-serve-stale-data no.
const MasterDownError = "MASTERDOWN Link with MASTER is down and replica-serve-stale-data is set to 'no'."

// NoReplicasError is Redis's reply to a write when min-replicas-to-write is not met.
const NoReplicasError = "NOREPLICAS Not enough good replicas to write."

// SetNoReplicas sets or clears AdmitNoReplicas.
func (s *Server) SetNoReplicas(on bool) {
	if on {
		s.admission.Or(AdmitNoReplicas)
	} else {
		s.admission.And(^AdmitNoReplicas)
	}
}

// SetReadOnlyReplica sets or clears AdmitReadOnly: writes from clients are refused with
// ReadOnlyError.
func (s *Server) SetReadOnlyReplica(on bool) {
	if on {
		s.admission.Or(AdmitReadOnly)
	} else {
		s.admission.And(^AdmitReadOnly)
	}
}

// SetMasterDown sets or clears AdmitMasterDown: only commands flagged stale run.
func (s *Server) SetMasterDown(on bool) {
	if on {
		s.admission.Or(AdmitMasterDown)
	} else {
		s.admission.And(^AdmitMasterDown)
	}
}

// BeginSyncLoad puts the server in the loading phase while a replica loads its master's data
// (LOADING to what needs the data); EndSyncLoad ends it and wakes the connections holding
// commands back.
func (s *Server) BeginSyncLoad() {
	s.load.startedAt.Store(time.Now().Unix())
	s.admission.Or(AdmitLoading)
}

// EndSyncLoad ends BeginSyncLoad's loading phase.
func (s *Server) EndSyncLoad() { s.endLoading() }
