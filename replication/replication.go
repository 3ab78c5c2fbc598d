// Package replication is the master and replica sides of shardis's replication link, with
// Redis's interface (REPLICAOF, PSYNC, REPLCONF, ROLE, WAIT, INFO replication) so that
// redis-cli, sentinel and clients see what they expect, over shardis's own storage: a
// replica's shard i mirrors its master's shard i, record for record, at the master's binlog
// sequences (shard/replica.go). docs/REPLICATION.md describes the protocol and its guarantees.
//
// The replication offset shown outward is the sum of every shard's last binlog sequence: it
// grows with what the master logs, and a replica's equals its master's once it caught up.
package replication

import (
	"encoding/json"
	"fmt"
	"log"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"shardis/executor"
	"shardis/server"
	"shardis/shard"
)

// Replication is a server's replication: its replicas when it is a master, its link when it
// is a replica. It implements server.Replication.
type Replication struct {
	srv   *server.Server
	exec  *executor.Executor
	store *shard.Store

	mu sync.Mutex
	// Master side: replicas that sent REPLCONF or PSYNC, by connection.
	replicas map[*server.Client]*feed
	// The ids: replid is the server's (srv.ReplID), replid2 the master's it was a replica of
	// before a failover, valid up to second (per shard last sequence), nil when none.
	replid2 string
	second  []uint64
	// Replica side: the link to the master, nil on a master.
	link *link
	// waits are WAIT's waiters, woken by every ACK.
	waits map[*waiter]struct{}
	// stopCron ends cron (Stop).
	stopCron chan struct{}
	// failover is the FAILOVER under way (failover.go), nil when none.
	failover *failoverState
	// rdb is Redis's RDB format over the store (SetRDBFormat), for Redis replicas and
	// masters; nil refuses them.
	rdb RDBFormat
	// resharded is set while this server replicates a master with another shard count
	// (reshard.go): it serves no replica then.
	resharded atomic.Bool
}

// cron counts the good replicas once a second, as Redis's replicationCron does, for
// min-replicas-to-write.
func (r *Replication) cron(stop <-chan struct{}) {
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
			r.checkGoodReplicas()
		}
	}
}

// checkGoodReplicas refuses writes while fewer than min-replicas-to-write replicas
// acknowledged within min-replicas-max-lag seconds (both non-zero), on a master.
func (r *Replication) checkGoodReplicas() {
	cfg := r.srv.Config
	need, _ := strconv.Atoi(cfg.Value("min-replicas-to-write"))
	maxLag, _ := strconv.ParseInt(cfg.Value("min-replicas-max-lag"), 10, 64)
	if need == 0 || maxLag == 0 || r.store.Replica() {
		r.srv.SetNoReplicas(false)
		return
	}
	good := 0
	for _, in := range r.Info().Replicas {
		if in.State == "online" && in.Lag <= maxLag {
			good++
		}
	}
	r.srv.SetNoReplicas(good < need)
}

// persisted is what replication keeps in the store (shard.StateReplication in shard 0), with
// the data it describes: the server's replication id (a replica's is its master's), so that a
// restarted server resumes with a partial sync.
type persisted struct {
	ReplID  string   `json:"replid"`
	ReplID2 string   `json:"replid2,omitempty"`
	Second  []uint64 `json:"second,omitempty"`
}

// New makes the replication of srv, whose commands run through exec. Start begins it once the
// store is open.
func New(srv *server.Server, exec *executor.Executor) *Replication {
	return &Replication{srv: srv, exec: exec, store: srv.Store,
		replicas: map[*server.Client]*feed{}, waits: map[*waiter]struct{}{}, rdb: storeFormat{cfg: srv.Config}}
}

// Start reads the persisted ids and, when the configuration says replicaof, connects to the
// master. Call it after the store is open.
func (r *Replication) Start() error {
	r.store.SetBinlogPin(r.pin)
	r.srv.Config.OnChange("replica-read-only", func() {
		r.srv.SetReadOnlyReplica(r.store.Replica() && r.srv.Config.Value("replica-read-only") == "yes")
	})
	r.srv.Config.OnChange("replica-serve-stale-data", func() {
		r.mu.Lock()
		l := r.link
		r.mu.Unlock()
		if l != nil {
			l.mu.Lock()
			up := l.up
			l.mu.Unlock()
			if !up {
				l.setMasterDown()
			}
		}
	})
	r.stopCron = make(chan struct{})
	go r.cron(r.stopCron)
	var p persisted
	var found bool
	err := r.store.ReadStatePrefix(0, shard.StateReplication, func(name, val []byte) {
		if len(name) == 0 { // not the other states under the prefix (reshard.go)
			found = json.Unmarshal(val, &p) == nil
		}
	})
	if err != nil {
		return fmt.Errorf("replication: %w", err)
	}
	if found && p.ReplID != "" {
		r.srv.SetReplID(p.ReplID)
		r.mu.Lock()
		r.replid2, r.second = p.ReplID2, p.Second
		r.mu.Unlock()
	} else if err := r.persist(); err != nil {
		return err
	}
	if mp, err := r.masterPositions(); err != nil {
		return fmt.Errorf("replication: %w", err)
	} else if mp != nil {
		r.resharded.Store(true) // it replicated a master with another shard count
	}
	if v := r.srv.Config.Value("replicaof"); v != "" {
		host, portText, _ := strings.Cut(v, " ")
		port, _ := strconv.Atoi(portText)
		return r.ReplicaOf(host, port)
	}
	return nil
}

// Stop ends the link to the master and the feeds of the replicas (the server stops).
func (r *Replication) Stop() {
	r.mu.Lock()
	if r.stopCron != nil {
		close(r.stopCron)
		r.stopCron = nil
	}
	l := r.link
	r.link = nil
	feeds := make([]*feed, 0, len(r.replicas))
	for _, f := range r.replicas {
		feeds = append(feeds, f)
	}
	r.mu.Unlock()
	if l != nil {
		l.stop()
		<-l.done
	}
	for _, f := range feeds {
		f.stop()
	}
}

// persist writes the ids to the store, as they are when shard 0 runs the write (so that of
// two persists the later one writes the latest ids).
func (r *Replication) persist() error {
	err := r.store.Do(0, func(tx *shard.Tx) {
		r.mu.Lock()
		p := persisted{ReplID: r.srv.ReplID(), ReplID2: r.replid2, Second: r.second}
		r.mu.Unlock()
		b, _ := json.Marshal(p)
		tx.PutState(0, shard.StateReplication, b)
	})
	if err != nil {
		return fmt.Errorf("replication: saving the replication id: %w", err)
	}
	return nil
}

// offset is the replication offset of positions: the sum of the shards' last sequences.
func offset(seqs []uint64) uint64 {
	var n uint64
	for _, s := range seqs {
		n += s
	}
	return n
}

// ReplicaOf makes the server a replica of host:port, or a master again with host "".
func (r *Replication) ReplicaOf(host string, port int) error {
	r.mu.Lock()
	old := r.link
	r.link = nil
	if host != "" {
		r.link = newLink(r, host, port)
	}
	next := r.link
	r.mu.Unlock()
	if old != nil {
		// Not waited for: REPLICAOF may run inside EXEC, holding the shards the link's last
		// step waits for; that step, once it runs, sees the link stopped and applies nothing.
		old.stop()
	}
	if next == nil {
		if old != nil {
			r.promote()
		}
		return nil
	}
	r.store.SetReplica(true)
	r.srv.SetReadOnlyReplica(r.srv.Config.Value("replica-read-only") == "yes")
	r.dropReplicas() // as Redis: its replicas reconnect and sync with the new history
	go next.run()
	log.Printf("Connecting to MASTER %s:%d", host, port)
	return nil
}

// promote makes a former replica a master (REPLICAOF NO ONE, FAILOVER): it takes a new
// replication id and keeps its master's as replid2, valid up to what it applied, so that the
// other replicas of the old master continue with a partial sync (PSYNC2).
func (r *Replication) promote() {
	r.store.SetReplica(false)
	r.srv.SetReadOnlyReplica(false)
	r.srv.SetMasterDown(false)
	resharded := r.resharded.Swap(false)
	r.mu.Lock()
	r.replid2 = r.srv.ReplID()
	r.second = r.store.LastSeqs()
	if resharded {
		// Its binlog is not its master's history: the old master's replicas sync in full.
		r.replid2, r.second = "", nil
	}
	r.mu.Unlock()
	r.srv.ChangeReplID()
	go func() { // in the background: REPLICAOF NO ONE may run in an EXEC holding shard 0
		if err := r.clearMasterPositions(); err != nil {
			log.Printf("replication: %v", err)
		}
		if err := r.persist(); err != nil {
			log.Printf("%v", err)
		}
	}()
	log.Printf("MASTER MODE enabled")
}

// Info describes the replication state (INFO replication, ROLE).
func (r *Replication) Info() server.ReplInfo {
	seqs := r.store.LastSeqs()
	cfg := r.srv.Config
	prio, _ := strconv.ParseInt(cfg.Value("replica-priority"), 10, 64)
	in := server.ReplInfo{ReplID: r.srv.ReplID(), Offset: offset(seqs), SecondOffset: -1,
		ReplicaReadOnly: cfg.Value("replica-read-only") == "yes", ReplicaPriority: prio}
	r.mu.Lock()
	in.ReplID2 = r.replid2
	in.FailoverState = failoverNone
	if r.failover != nil {
		in.FailoverState = r.failover.state
	}
	if r.second != nil {
		in.SecondOffset = int64(offset(r.second)) + 1
	}
	l := r.link
	feeds := make([]*feed, 0, len(r.replicas))
	for _, f := range r.replicas {
		if f.started {
			feeds = append(feeds, f)
		}
	}
	r.mu.Unlock()
	if in.ReplID2 == "" {
		in.ReplID2 = strings.Repeat("0", 40)
	}
	now := time.Now()
	for _, f := range feeds {
		in.Replicas = append(in.Replicas, f.info(now))
	}
	if l != nil {
		in.Replica = true
		in.RedisMasterOffset = -1
		l.describe(&in, now)
		if in.RedisMasterOffset >= 0 {
			// A Redis master's offsets count bytes of its stream: INFO shows its.
			in.Offset = uint64(in.RedisMasterOffset)
		}
		in.ReplicaReplOffset = in.Offset
	}
	return in
}
