package latency

import (
	"strings"
	"testing"
)

// Samples of one second are one sample, the longest; the ring keeps the last SeriesLen; the
// all-time high survives the ring.
func TestMonitor_AddKeepsRingAndMax(t *testing.T) {
	var m Monitor
	m.Add("command", 5, 100)
	m.Add("command", 9, 100)
	m.Add("command", 7, 100)
	h, high, ok := m.History("command")
	if !ok || len(h) != 1 || h[0] != (Sample{100, 9}) || high != 9 {
		t.Fatalf("History after three samples in one second = %v, %d, %v", h, high, ok)
	}
	m.Add("command", 500, 101)
	for i := range int64(SeriesLen) {
		m.Add("command", 1+i%3, 200+i)
	}
	h, high, _ = m.History("command")
	if len(h) != SeriesLen || h[0].Time != 200 || h[SeriesLen-1].Time != 200+SeriesLen-1 || high != 500 {
		t.Fatalf("History after %d more samples: %d samples from %v to %v, high %d", SeriesLen, len(h), h[0], h[len(h)-1], high)
	}
	latest := m.Latest()
	if len(latest) != 1 || latest[0].Event != "command" || latest[0].Time != 200+SeriesLen-1 || latest[0].Max != 500 {
		t.Fatalf("Latest = %v", latest)
	}
	if _, _, ok := m.History("COMMAND"); ok {
		t.Fatal("History matched an event name in another case")
	}
}

func TestMonitor_Reset(t *testing.T) {
	var m Monitor
	if n := m.Reset(); n != 0 {
		t.Fatalf("Reset of an empty monitor = %d", n)
	}
	m.Add("command", 5, 100)
	m.Add("fast-command", 5, 100)
	m.Add("expire-cycle", 5, 100)
	if n := m.Reset("COMMAND", "nosuch", "command"); n != 1 {
		t.Fatalf("Reset(COMMAND, nosuch, command) = %d, want 1", n)
	}
	if n := m.Reset(); n != 2 || m.Len() != 0 {
		t.Fatalf("Reset() = %d, %d events left", n, m.Len())
	}
}

// The report's lines for an event: count, average, mean deviation, period, worst, and the
// advice latency.c gives for it.
func TestMonitor_Doctor(t *testing.T) {
	var m Monitor
	off := m.Doctor(DoctorSettings{}, 1000)
	if !strings.HasPrefix(off, "I'm sorry, Dave, I can't do that.") {
		t.Fatalf("Doctor with the monitor off = %q", off)
	}
	m.Add("command", 10, 900)
	m.Add("command", 30, 950)
	rep := m.Doctor(DoctorSettings{Threshold: 5, SlowlogSlowerThan: 10000, Hz: 10}, 1000)
	for _, want := range []string{
		"Dave, I have observed latency spikes in this Redis instance. You don't mind talking about it, do you Dave?\n\n",
		"1. command: 2 latency spikes (average 20ms, mean deviation 10ms, period 50.00 sec). Worst all time event 30ms.\n",
		"\nI have a few advices for you:\n\n",
		"- Your current Slow Log configuration only logs events that are slower than your configured latency monitor threshold. Please use 'CONFIG SET slowlog-log-slower-than 5000'.\n",
		"- Check your Slow Log to understand",
	} {
		if !strings.Contains(rep, want) {
			t.Fatalf("Doctor lacks %q:\n%s", want, rep)
		}
	}
}

// The graph: title, rule, four rows of the sparkline (the highest sample reaches the top row,
// the lowest only the bottom one), a margin, then each sample's age written downwards.
func TestMonitor_Graph(t *testing.T) {
	var m Monitor
	if _, ok := m.Graph("command", 100); ok {
		t.Fatal("Graph of an event with no samples")
	}
	m.Add("command", 10, 50)
	m.Add("command", 40, 90)
	m.Add("command", 20, 99)
	g, ok := m.Graph("command", 100)
	want := "command - high 40 ms, low 10 ms (all time high 40 ms)\n" +
		strings.Repeat("-", 80) + "\n" +
		" # \n" +
		" | \n" +
		" |o\n" +
		"_||\n" +
		"   \n" +
		"511\n" +
		"00s\n" +
		"ss \n"
	if !ok || g != want {
		t.Fatalf("Graph =\n%s\nwant\n%s", g, want)
	}
}
