// Package latency is shardis's latency monitor (Redis's latency.c): per event name, the last
// samples of operations that took at least latency-monitor-threshold milliseconds, and the
// per-command latency histograms of LATENCY HISTOGRAM and INFO latencystats. It knows nothing
// of commands or configuration: the executor feeds it, the LATENCY command reads it.
package latency

import (
	"slices"
	"strings"
	"sync"
)

// SeriesLen is how many samples an event keeps, as Redis's LATENCY_TS_LEN.
const SeriesLen = 160

// Sample is one latency spike: when (unix seconds) and how long (milliseconds). Spikes of the
// same second are one sample, the longest.
type Sample struct {
	Time    int64
	Latency int64
}

// series is one event's ring of samples; a zero Time marks an unused slot.
type series struct {
	samples [SeriesLen]Sample
	next    int   // the slot the next sample goes to
	max     int64 // all-time high since the event was created or reset
}

// Monitor holds the samples of every event. Events are created by their first sample and
// dropped by Reset. The zero Monitor is ready; it is safe for concurrent use. It is written only
// for operations past the threshold, so one mutex is enough.
type Monitor struct {
	mu     sync.Mutex
	events map[string]*series
}

// Add records that event took ms milliseconds at unix second now.
func (m *Monitor) Add(event string, ms, now int64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.events == nil {
		m.events = make(map[string]*series)
	}
	s := m.events[event]
	if s == nil {
		s = &series{}
		m.events[event] = s
	}
	s.max = max(s.max, ms)
	prev := &s.samples[(s.next+SeriesLen-1)%SeriesLen]
	if prev.Time == now {
		prev.Latency = max(prev.Latency, ms)
		return
	}
	s.samples[s.next] = Sample{Time: now, Latency: ms}
	s.next = (s.next + 1) % SeriesLen
}

// Latest is an event's most recent sample and its all-time high (LATENCY LATEST).
type Latest struct {
	Event string
	Sample
	Max int64
}

// Latest returns every event's latest sample, by event name.
func (m *Monitor) Latest() []Latest {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]Latest, 0, len(m.events))
	for name, s := range m.events {
		out = append(out, Latest{Event: name, Sample: s.samples[(s.next+SeriesLen-1)%SeriesLen], Max: s.max})
	}
	slices.SortFunc(out, func(a, b Latest) int { return strings.Compare(a.Event, b.Event) })
	return out
}

// History returns event's samples, oldest first, and its all-time high; ok is false when the
// event has no samples. Event names match case-sensitively, as in Redis.
func (m *Monitor) History(event string) (samples []Sample, allTime int64, ok bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	s := m.events[event]
	if s == nil {
		return nil, 0, false
	}
	return s.history(), s.max, true
}

func (s *series) history() []Sample {
	var out []Sample
	for j := range SeriesLen {
		if smp := s.samples[(s.next+j)%SeriesLen]; smp.Time != 0 {
			out = append(out, smp)
		}
	}
	return out
}

// Reset drops the named events (matched case-insensitively, as Redis's LATENCY RESET), or
// every event when none is named, and returns how many it dropped.
func (m *Monitor) Reset(events ...string) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(events) == 0 {
		n := len(m.events)
		clear(m.events)
		return n
	}
	n := 0
	for _, ev := range events {
		for name := range m.events {
			if strings.EqualFold(name, ev) {
				delete(m.events, name)
				n++
			}
		}
	}
	return n
}

// Len returns how many events have samples.
func (m *Monitor) Len() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.events)
}
