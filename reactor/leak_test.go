package reactor_test

import (
	"runtime"
	"testing"
	"weak"

	"shardis/internal/testserver"
	"shardis/shard"
)

// A stopped server leaves nothing of itself in memory: gnet's engine registry held every
// engine it ran, and through its event handler the server and its store.
func TestServer_Stop_ReleasesTheStore(t *testing.T) {
	var store weak.Pointer[shard.Store]
	t.Run("serve", func(t *testing.T) { // its cleanup stops the server and closes the store
		s := testserver.Start(t)
		store = weak.Make(s.Store)
		if err := s.Client(t).Set(t.Context(), "k", "v", 0).Err(); err != nil {
			t.Fatal(err)
		}
	})
	for i := 0; i < 20 && store.Value() != nil; i++ {
		runtime.GC()
	}
	if store.Value() != nil {
		t.Fatal("the stopped server's store is still reachable")
	}
}
