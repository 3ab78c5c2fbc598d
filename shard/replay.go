package shard

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// walFile is one write-ahead log file RocksDB replays while it opens.
type walFile struct {
	path string
	size int64
}

// snapshotLogs records the write-ahead log files to replay, in the order RocksDB replays
// them (by number, which their zero-padded names sort by), for ReplayProgress.
func (s *Store) snapshotLogs() {
	paths, _ := filepath.Glob(filepath.Join(s.opts.Dir, "rocksdb", "*.log"))
	slices.Sort(paths)
	logs := make([]walFile, 0, len(paths))
	for _, p := range paths {
		if fi, err := os.Stat(p); err == nil {
			logs = append(logs, walFile{path: p, size: fi.Size()})
		}
	}
	s.replay.logs.Store(&logs)
}

// ReplayProgress returns how many bytes of its write-ahead log RocksDB has replayed so far
// while Open runs, and how many there are (INFO's loading_loaded_bytes and
// loading_total_bytes). RocksDB does not report it: the position it reached is read from the
// log file it has open (Linux's /proc/self/fdinfo), the files before it counting whole. When
// no log file is open (before the replay or between files) the last figure stands; once
// open, everything was replayed.
func (s *Store) ReplayProgress() (done, total int64) {
	lp := s.replay.logs.Load()
	if lp == nil {
		return 0, 0
	}
	logs := *lp
	for _, l := range logs {
		total += l.size
	}
	if s.Opened() {
		return total, total
	}
	if pos, i, ok := openLogPosition(logs); ok {
		var before int64
		for _, l := range logs[:i] {
			before += l.size
		}
		done = min(before+pos, total)
		for { // never backwards (readers of two goroutines may race)
			last := s.replay.done.Load()
			if done <= last || s.replay.done.CompareAndSwap(last, done) {
				break
			}
		}
	}
	return s.replay.done.Load(), total
}

// openLogPosition finds which of logs the process has open and the offset reached in it.
func openLogPosition(logs []walFile) (pos int64, index int, ok bool) {
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return 0, 0, false
	}
	for _, fd := range fds {
		target, err := os.Readlink("/proc/self/fd/" + fd.Name())
		if err != nil || !strings.HasSuffix(target, ".log") {
			continue
		}
		i := slices.IndexFunc(logs, func(l walFile) bool { return l.path == target })
		if i < 0 {
			continue
		}
		info, err := os.ReadFile("/proc/self/fdinfo/" + fd.Name())
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(info), "\n") {
			if v, found := strings.CutPrefix(line, "pos:"); found {
				if p, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64); err == nil {
					return p, i, true
				}
			}
		}
	}
	return 0, 0, false
}
