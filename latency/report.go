package latency

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
)

// stats summarises an event's samples as Redis's analyzeLatencyForEvent: their count, average
// and mean absolute deviation (ms, truncated), and the seconds between the oldest and now.
type stats struct {
	samples            int
	avg, mad, min, max int64
	period             int64
}

func (s *series) analyze(now int64) stats {
	var st stats
	var sum int64
	for _, smp := range s.samples {
		if smp.Time == 0 {
			continue
		}
		st.samples++
		if st.samples == 1 {
			st.min, st.max = smp.Latency, smp.Latency
		} else {
			st.min, st.max = min(st.min, smp.Latency), max(st.max, smp.Latency)
		}
		sum += smp.Latency
		if st.period == 0 || smp.Time < st.period {
			st.period = smp.Time
		}
	}
	if st.samples == 0 {
		return st
	}
	st.avg = sum / int64(st.samples)
	st.period = now - st.period
	if st.period == 0 {
		st.period = 1
	}
	var dev int64
	for _, smp := range s.samples {
		if smp.Time != 0 {
			d := st.avg - smp.Latency
			dev += max(d, -d)
		}
	}
	st.mad = dev / int64(st.samples)
	return st
}

// DoctorSettings are the settings LATENCY DOCTOR's advice depends on.
type DoctorSettings struct {
	Threshold         int64 // latency-monitor-threshold, ms
	SlowlogSlowerThan int64 // slowlog-log-slower-than, µs (-1: off)
	Hz                int
}

// Doctor returns LATENCY DOCTOR's report: Redis's texts and advice for the events shardis
// records, at unix second now.
func (m *Monitor) Doctor(cfg DoctorSettings, now int64) string {
	m.mu.Lock()
	defer m.mu.Unlock()
	var b strings.Builder
	if len(m.events) == 0 && cfg.Threshold == 0 {
		b.WriteString("I'm sorry, Dave, I can't do that. Latency monitoring is disabled in this Redis instance. You may use \"CONFIG SET latency-monitor-threshold <milliseconds>.\" in order to enable it. If we weren't in a deep space mission I'd suggest to take a look at https://redis.io/topics/latency-monitor.\n")
		return b.String()
	}
	var advise struct {
		slowlogEnabled, slowlogTuning, slowlogInspect, scheduler, hz, largeObjects, thp bool
	}
	advices := 0
	names := make([]string, 0, len(m.events))
	for name := range m.events {
		names = append(names, name)
	}
	slices.Sort(names)
	for n, name := range names {
		s := m.events[name]
		if n == 0 {
			b.WriteString("Dave, I have observed latency spikes in this Redis instance. You don't mind talking about it, do you Dave?\n\n")
		}
		st := s.analyze(now)
		fmt.Fprintf(&b, "%d. %s: %d latency spikes (average %dms, mean deviation %dms, period %.2f sec). Worst all time event %dms.",
			n+1, name, st.samples, st.avg, st.mad, float64(st.period)/float64(st.samples), s.max)
		switch strings.ToLower(name) {
		case "command":
			if cfg.SlowlogSlowerThan < 0 {
				advise.slowlogEnabled = true
				advices++
			} else if cfg.SlowlogSlowerThan/1000 > cfg.Threshold {
				advise.slowlogTuning = true
				advices++
			}
			advise.slowlogInspect, advise.largeObjects = true, true
			advices += 2
		case "fast-command":
			advise.scheduler = true
			advices++
		case "expire-cycle":
			advise.hz, advise.largeObjects = true, true
			advices += 2
		}
		b.WriteByte('\n')
	}
	if anonHugePages() > 0 {
		advise.thp = true
		advices++
	}
	switch {
	case len(names) == 0 && advices == 0:
		b.WriteString("Dave, no latency spike was observed during the lifetime of this Redis instance, not in the slightest bit. I honestly think you ought to sit down calmly, take a stress pill, and think things over.\n")
	case len(names) > 0 && advices == 0:
		b.WriteString("\nWhile there are latency events logged, I'm not able to suggest any easy fix. Please use the Redis community to get some help, providing this report in your help request.\n")
	default:
		b.WriteString("\nI have a few advices for you:\n\n")
		if advise.slowlogEnabled {
			fmt.Fprintf(&b, "- There are latency issues with potentially slow commands you are using. Try to enable the Slow Log Redis feature using the command 'CONFIG SET slowlog-log-slower-than %d'. If the Slow log is disabled Redis is not able to log slow commands execution for you.\n", cfg.Threshold*1000)
		}
		if advise.slowlogTuning {
			fmt.Fprintf(&b, "- Your current Slow Log configuration only logs events that are slower than your configured latency monitor threshold. Please use 'CONFIG SET slowlog-log-slower-than %d'.\n", cfg.Threshold*1000)
		}
		if advise.slowlogInspect {
			b.WriteString("- Check your Slow Log to understand what are the commands you are running which are too slow to execute. Please check https://redis.io/commands/slowlog for more information.\n")
		}
		if advise.scheduler {
			b.WriteString("- The system is slow to execute Redis code paths not containing system calls. This usually means the system does not provide Redis CPU time to run for long periods. You should try to:\n" +
				"  1) Lower the system load.\n" +
				"  2) Use a computer / VM just for Redis if you are running other software in the same system.\n" +
				"  3) Check if you have a \"noisy neighbour\" problem.\n" +
				"  4) Check with 'redis-cli --intrinsic-latency 100' what is the intrinsic latency in your system.\n" +
				"  5) Check if the problem is allocator-related by recompiling Redis with MALLOC=libc, if you are using Jemalloc. However this may create fragmentation problems.\n")
		}
		if advise.hz && cfg.Hz < 100 {
			b.WriteString("- In order to make the Redis keys expiring process more incremental, try to set the 'hz' configuration parameter to 100 using 'CONFIG SET hz 100'.\n")
		}
		if advise.largeObjects {
			b.WriteString("- Deleting, expiring or evicting (because of maxmemory policy) large objects is a blocking operation. If you have very large objects that are often deleted, expired, or evicted, try to fragment those objects into multiple smaller objects.\n")
		}
		if advise.thp {
			b.WriteString("- I detected a non zero amount of anonymous huge pages used by your process. This creates very serious latency events in different conditions, especially when Redis is persisting on disk. To disable THP support use the command 'echo never > /sys/kernel/mm/transparent_hugepage/enabled', make sure to also add it into /etc/rc.local so that the command will be executed again after a reboot. Note that even if you have already disabled THP, you still need to restart the Redis process to get rid of the huge pages already created.\n")
		}
	}
	return b.String()
}

// anonHugePages returns the bytes of transparent huge pages the process uses (AnonHugePages
// of /proc/self/smaps_rollup), 0 when it cannot tell.
func anonHugePages() int64 {
	data, err := os.ReadFile("/proc/self/smaps_rollup")
	if err != nil {
		return 0
	}
	var total int64
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		line := sc.Text()
		if rest, ok := strings.CutPrefix(line, "AnonHugePages:"); ok {
			f := strings.Fields(rest)
			if len(f) > 0 {
				kb, _ := strconv.ParseInt(f[0], 10, 64)
				total += kb * 1024
			}
		}
	}
	return total
}

// graphCols and graphRows are the size of LATENCY GRAPH's sparkline, as Redis draws it.
const (
	graphCols = 80
	graphRows = 4
)

// Graph returns LATENCY GRAPH's text for event at unix second now, as Redis draws it: a title,
// a rule, and a sparkline of the samples (oldest left) in rows of '_', 'o', '#' and '|' with
// each sample's age written vertically beneath; ok is false when the event has no samples.
func (m *Monitor) Graph(event string, now int64) (string, bool) {
	m.mu.Lock()
	s := m.events[event]
	var samples []Sample
	var allTime int64
	if s != nil {
		samples, allTime = s.history(), s.max
	}
	m.mu.Unlock()
	if s == nil {
		return "", false
	}
	var lo, hi int64
	labels := make([]string, len(samples))
	for i, smp := range samples {
		if i == 0 {
			lo, hi = smp.Latency, smp.Latency
		} else {
			lo, hi = min(lo, smp.Latency), max(hi, smp.Latency)
		}
		elapsed := now - smp.Time
		switch {
		case elapsed < 60:
			labels[i] = strconv.FormatInt(elapsed, 10) + "s"
		case elapsed < 3600:
			labels[i] = strconv.FormatInt(elapsed/60, 10) + "m"
		case elapsed < 3600*24:
			labels[i] = strconv.FormatInt(elapsed/3600, 10) + "h"
		default:
			labels[i] = strconv.FormatInt(elapsed/(3600*24), 10) + "d"
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s - high %d ms, low %d ms (all time high %d ms)\n", event, hi, lo, allTime)
	b.WriteString(strings.Repeat("-", graphCols))
	b.WriteByte('\n')
	for j := 0; j < len(samples); j += graphCols {
		if j != 0 {
			b.WriteByte('\n')
		}
		end := min(j+graphCols, len(samples))
		sparkline(&b, samples[j:end], labels[j:end], float64(lo), float64(hi))
	}
	return b.String(), true
}

// sparkline draws samples as Redis's sparklineRenderRange with SPARKLINE_FILL: graphRows rows
// of three levels each, then the labels top to bottom after a one-line margin. min and max
// are over the whole sequence.
func sparkline(b *strings.Builder, samples []Sample, labels []string, lo, hi float64) {
	const fill = "_o#"
	rel := hi - lo
	if rel == 0 {
		rel = 1
	}
	steps := len(fill) * graphRows
	chars := make([]byte, len(samples))
	for row := 0; ; row++ {
		more := false
		for j := range chars {
			chars[j] = ' '
		}
		for j, smp := range samples {
			if row < graphRows {
				step := int(float64(int((float64(smp.Latency)-lo)*float64(steps))) / rel)
				step = min(max(step, 0), steps-1)
				idx := step - (graphRows-row-1)*len(fill)
				more = true
				if idx >= 0 && idx < len(fill) {
					chars[j] = fill[idx]
				} else if idx >= len(fill) {
					chars[j] = '|'
				}
				continue
			}
			if row-graphRows < 1 { // the margin above the labels
				more = true
				break
			}
			if k := row - graphRows - 1; len(labels[j]) > k {
				more = true
				chars[j] = labels[j][k]
			}
		}
		if !more {
			return
		}
		b.Write(chars)
		b.WriteByte('\n')
	}
}
