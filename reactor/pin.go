package reactor

import (
	"runtime"
	"sync"
	"sync/atomic"

	"golang.org/x/sys/unix"
)

// pinner pins each event-loop thread to one CPU, round robin, the first time the loop runs a
// callback. When pinning is on, gnet locks every loop to its OS thread (WithLockOSThread,
// see Serve), so pinning the calling thread pins the loop for good.
type pinner struct {
	enabled bool
	pinned  sync.Map // thread id -> struct{}
	next    atomic.Int32
}

func (p *pinner) pinCurrentThread() {
	if !p.enabled {
		return
	}
	tid := unix.Gettid()
	if _, done := p.pinned.LoadOrStore(tid, struct{}{}); done {
		return
	}
	cpu := int(p.next.Add(1)-1) % runtime.NumCPU()
	var set unix.CPUSet
	set.Set(cpu)
	_ = unix.SchedSetaffinity(0, &set) // best effort: a container may forbid it
}
