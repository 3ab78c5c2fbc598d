package replication

import (
	"log"
	"math"
	"net"
	"strings"
	"time"
)

// FAILOVER: a coordinated failover from this master to one of its replicas, as Redis 6.2+
// does it. The master pauses writes (as CLIENT PAUSE WRITE), waits until a replica (the one
// named, or any) acknowledged everything, then becomes a replica of it with PSYNC … FAILOVER,
// which makes the target promote itself and continue the old master's history; the old master
// continues as its replica with a partial sync. A timeout aborts the failover unless FORCE.

// Failover states (INFO's master_failover_state).
const (
	failoverNone       = "no-failover"
	failoverWaitSync   = "waiting-for-sync"
	failoverInProgress = "failover-in-progress"
)

// failoverState is the running failover, under r.mu.
type failoverState struct {
	state string
	host  string // target, "" for any caught-up replica
	port  int
	end   time.Time // zero: no timeout
	force bool
	stop  chan struct{}
}

func (r *Replication) failoverStateName() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.failover == nil {
		return failoverNone
	}
	return r.failover.state
}

// Failover starts FAILOVER [TO host port [FORCE]] [TIMEOUT ms] and returns Redis's error text,
// or "" once it started.
func (r *Replication) Failover(host string, port int, force bool, timeout time.Duration) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	switch {
	case r.failover != nil:
		return "ERR FAILOVER already in progress."
	case r.link != nil:
		return "ERR FAILOVER is not valid when server is a replica."
	case r.startedReplicas() == 0:
		return "ERR FAILOVER requires connected replicas."
	case force && (timeout == 0 || host == ""):
		return "ERR FAILOVER with force option requires both a timeout and target HOST and IP."
	}
	if host != "" {
		f := r.findReplica(host, port)
		if f == nil {
			return "ERR FAILOVER target HOST and PORT is not a replica."
		}
		if s, _ := f.state.Load().(string); s != "online" {
			return "ERR FAILOVER target replica is not online."
		}
		log.Printf("FAILOVER requested to %s:%d.", host, port)
	} else {
		log.Printf("FAILOVER requested to any replica.")
	}
	fo := &failoverState{state: failoverWaitSync, host: host, port: port, force: force, stop: make(chan struct{})}
	if timeout > 0 {
		fo.end = time.Now().Add(timeout)
	}
	r.failover = fo
	r.srv.Pause(math.MaxInt64, false)
	go r.runFailover(fo)
	return ""
}

// AbortFailover is FAILOVER ABORT.
func (r *Replication) AbortFailover() string {
	r.mu.Lock()
	fo := r.failover
	r.mu.Unlock()
	if fo == nil {
		return "ERR No failover in progress."
	}
	r.abortFailover(fo, "Failover manually aborted")
	return ""
}

// startedReplicas counts the connections that sent PSYNC. r.mu is held.
func (r *Replication) startedReplicas() int {
	n := 0
	for _, f := range r.replicas {
		if f.started {
			n++
		}
	}
	return n
}

// findReplica returns the started replica announcing host:port. r.mu is held.
func (r *Replication) findReplica(host string, port int) *feed {
	for _, f := range r.replicas {
		if !f.started || f.port != port {
			continue
		}
		ip := f.ip
		if ip == "" {
			ip, _, _ = net.SplitHostPort(f.cl.Addr)
		}
		if strings.EqualFold(ip, host) {
			return f
		}
	}
	return nil
}

// caughtUpReplica returns the address of a replica that acknowledged everything (the target's
// when one was named), or ok false.
func (r *Replication) caughtUpReplica(fo *failoverState) (host string, port int, ok bool) {
	target := r.store.LastSeqs()
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, f := range r.replicas {
		if !f.started {
			continue
		}
		ip := f.ip
		if ip == "" {
			ip, _, _ = net.SplitHostPort(f.cl.Addr)
		}
		if fo.host != "" && (!strings.EqualFold(ip, fo.host) || f.port != fo.port) {
			continue
		}
		seqs, _ := f.acked.Load().([]uint64)
		if len(seqs) == len(target) && offset(seqs) == offset(target) {
			return ip, f.port, true
		}
	}
	return "", 0, false
}

// runFailover waits for a caught-up replica (asking for ACKs), then hands over to it.
func (r *Replication) runFailover(fo *failoverState) {
	t := time.NewTicker(10 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-fo.stop:
			return
		case <-t.C:
		}
		r.askAcks()
		host, port, ok := r.caughtUpReplica(fo)
		if !ok && !fo.end.IsZero() && time.Now().After(fo.end) {
			if !fo.force {
				r.abortFailover(fo, "Replica never caught up before timeout")
				return
			}
			host, port, ok = fo.host, fo.port, true
			log.Printf("FAILOVER to %s:%d time out exceeded, failing over.", host, port)
		}
		if !ok {
			continue
		}
		log.Printf("Failover target %s:%d is synced, failing over.", host, port)
		r.mu.Lock()
		if r.failover != fo {
			r.mu.Unlock()
			return
		}
		fo.state, fo.host, fo.port = failoverInProgress, host, port
		old := r.link
		r.link = newLink(r, host, port)
		r.link.failover = fo
		next := r.link
		r.mu.Unlock()
		if old != nil {
			old.stop()
		}
		r.store.SetReplica(true)
		r.srv.SetReadOnlyReplica(r.srv.Config.Value("replica-read-only") == "yes")
		r.dropReplicas()
		go next.run()
		return
	}
}

// askAcks asks every replica for an ACK now.
func (r *Replication) askAcks() {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, f := range r.replicas {
		select {
		case f.getack <- struct{}{}:
		default:
		}
	}
}

// abortFailover ends fo without a handover: the server stays (or becomes again) a master and
// writes resume.
func (r *Replication) abortFailover(fo *failoverState, why string) {
	r.mu.Lock()
	if r.failover != fo {
		r.mu.Unlock()
		return
	}
	r.failover = nil
	close(fo.stop)
	var l *link
	if fo.state == failoverInProgress {
		l, r.link = r.link, nil
	}
	r.mu.Unlock()
	if l != nil {
		l.stop()
		r.promote()
	}
	r.srv.Unpause()
	log.Printf("FAILOVER aborted: %s", why)
}

// failoverDone ends fo once the target accepted the handover: this server is its replica.
func (r *Replication) failoverDone(fo *failoverState) {
	r.mu.Lock()
	if r.failover != fo {
		r.mu.Unlock()
		return
	}
	r.failover = nil
	close(fo.stop)
	r.mu.Unlock()
	r.srv.Unpause()
	log.Printf("Failover to %s:%d succeeded.", fo.host, fo.port)
}
