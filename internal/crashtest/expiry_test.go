package crashtest

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"shardis/codec"
	"shardis/internal/testserver"
	"shardis/shard"
	"shardis/ttl"
)

// TestExpiry_UntouchedKeysLeaveMemoryAndDisk sets 1000 keys with PX 500 and never touches them
// again: the TTL worker alone must bring DBSIZE to 0 within 2 s of the writes, and once the
// server stopped the store must hold neither their meta keys nor their TTL index entries.
func TestExpiry_UntouchedKeysLeaveMemoryAndDisk(t *testing.T) {
	s := testserver.Start(t, "--shards", "4")
	c := s.Client(t)
	ctx := context.Background()
	const n = 1000
	pipe := c.Pipeline()
	for i := range n {
		pipe.Set(ctx, fmt.Sprintf("e:%d", i), "v", 500*time.Millisecond) // SET key v PX 500
	}
	if _, err := pipe.Exec(ctx); err != nil {
		t.Fatal(err)
	}
	setAt := time.Now()

	sum := func(f func(sh *shard.Shard) int64) (total int64) {
		for id := range s.Store.NumShards() {
			total += f(s.Store.Shard(id))
		}
		return total
	}
	keys := func() int64 { return sum(func(sh *shard.Shard) int64 { return sh.Keys(0) }) }
	expires := func() int64 { return sum(func(sh *shard.Shard) int64 { return sh.Expires(0) }) }
	if k, e := keys(), expires(); k == 0 || e != k {
		t.Fatalf("right after the writes: %d keys, %d with an expire; want every key to carry its PX", k, e)
	}
	dbsize := func() (int64, bool) { // false: DBSIZE is not in the server yet
		v, err := c.DBSize(ctx).Result()
		if isUnknownCommand(err) {
			return 0, false
		}
		if err != nil {
			t.Fatalf("DBSIZE: %v", err)
		}
		return v, true
	}
	for {
		size, ok := dbsize()
		if k := keys(); k == 0 && (!ok || size == 0) {
			t.Logf("every key expired %v after the writes (DBSIZE available: %v)", time.Since(setAt).Round(time.Millisecond), ok)
			break
		}
		if time.Since(setAt) > 60*time.Second { // a bound on the wait, not a speed check
			t.Fatalf("60s after the writes: DBSIZE %d (available: %v), shard counters %d keys, %d expires",
				size, ok, keys(), expires())
		}
		time.Sleep(20 * time.Millisecond)
	}
	if e := expires(); e != 0 {
		t.Errorf("expire counters say %d keys still have a TTL", e)
	}
	if info, err := c.Info(ctx, "stats").Result(); err != nil || !strings.Contains(info, "expired_keys:1000\r\n") {
		t.Errorf("INFO stats should count 1000 expired keys: %v\n%s", err, info)
	}

	s.Stop()
	st := testserver.OpenStore(t, s.Dir, 4)
	for id := range st.NumShards() {
		var metas, index []string
		if err := st.Do(id, func(tx *shard.Tx) {
			it := tx.IterateShard(id, []byte{codec.PrefixMeta}, []byte{codec.PrefixMeta + 1}, false)
			for ; it.Valid(); it.Next() {
				_, _, key, _ := codec.DecodeMetaKey(it.Key())
				metas = append(metas, string(key))
			}
			it.Close()
			it = tx.IterateShard(id, []byte{ttl.Prefix}, []byte{ttl.Prefix + 1}, false)
			for ; it.Valid(); it.Next() {
				_, _, key, _ := ttl.DecodeKey(it.Key())
				index = append(index, string(key))
			}
			it.Close()
		}); err != nil {
			t.Fatal(err)
		}
		if len(metas) > 0 {
			t.Errorf("shard %d: %d meta keys left on disk, e.g. %q", id, len(metas), metas[0])
		}
		if len(index) > 0 {
			t.Errorf("shard %d: %d TTL index entries left on disk, e.g. %q", id, len(index), index[0])
		}
	}
}
