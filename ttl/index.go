// Package ttl owns per-shard expiry: the TTL index, a list of (expire time, key) ordered by
// time, and the worker that walks it from the oldest entry and has the shard delete what
// expired. The authoritative expire time is in the key's meta value; an index entry is only a
// hint that is checked against the meta before anything is deleted, so a stale entry (left by
// FLUSHDB's range delete, say) is harmless and simply dropped.
package ttl

import (
	"context"
	"encoding/binary"
	"time"
)

// Prefix is the first byte of every TTL index key.
const Prefix byte = 't'

// AppendKey appends the index key 't' | expire ms (8, big-endian) | db | user key.
func AppendKey(b []byte, expireMs int64, db int, key []byte) []byte {
	b = binary.BigEndian.AppendUint64(append(b, Prefix), uint64(expireMs))
	b = append(b, byte(db))
	return append(b, key...)
}

// DecodeKey splits an index key; key aliases k.
func DecodeKey(k []byte) (expireMs int64, db int, key []byte, ok bool) {
	if len(k) < 10 || k[0] != Prefix {
		return 0, 0, nil, false
	}
	return int64(binary.BigEndian.Uint64(k[1:9])), int(k[9]), k[10:], true
}

// UpperBound returns the first index key after every entry due at or before nowMs.
func UpperBound(nowMs int64) []byte {
	return binary.BigEndian.AppendUint64([]byte{Prefix}, uint64(nowMs+1))
}

// LowerBound is the smallest index key.
func LowerBound() []byte { return []byte{Prefix} }

// Expirer deletes the keys whose time has come, at most limit of them, and says how many
// it deleted. A shard implements it by running the walk in its own goroutine.
type Expirer interface {
	ExpireDue(limit int) (int, error)
}

// BatchLimit bounds one walk so a burst of expiries never stalls a shard's commands.
const BatchLimit = 256

// Run calls e.ExpireDue every interval, and again at once while a walk was full, until ctx
// is done. interval is re-read on each tick so CONFIG SET hz applies without a restart.
// pass, when not nil, is told how long each tick's walks took together (the latency
// monitor's expire-cycle event).
func Run(ctx context.Context, e Expirer, interval func() time.Duration, pass func(time.Duration)) {
	timer := time.NewTimer(interval())
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-timer.C:
		}
		start := time.Now()
		for ctx.Err() == nil {
			n, err := e.ExpireDue(BatchLimit)
			if err != nil || n < BatchLimit {
				break
			}
		}
		if pass != nil {
			pass(time.Since(start))
		}
		timer.Reset(interval())
	}
}
