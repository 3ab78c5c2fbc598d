package server

import "time"

// expirePassed samples a TTL worker pass that took at least latency-monitor-threshold as the
// latency monitor's expire-cycle event (Redis samples its active expire cycle the same way).
// Called from the shards' TTL workers.
func (s *Server) expirePassed(d time.Duration) {
	if limit := s.Config.LatencyThreshold(); limit > 0 && d.Milliseconds() >= limit {
		s.Latency.Add("expire-cycle", d.Milliseconds(), time.Now().Unix())
	}
}
