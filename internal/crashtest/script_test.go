package crashtest

import (
	"context"
	"sync"
	"testing"

	"github.com/redis/go-redis/v9"
)

// transferScript moves ARGV[1] from KEYS[1] to KEYS[2].
const transferScript = `redis.call('DECRBY', KEYS[1], ARGV[1])
return redis.call('INCRBY', KEYS[2], ARGV[1])`

// TestCrash_KillNine_ScriptTransfersNeverTorn: a Lua script's transfers between shards survive
// kill -9 under appendfsync always whole or not at all.
func TestCrash_KillNine_ScriptTransfersNeverTorn(t *testing.T) {
	killNineDuringTransfers(t, func(ctx context.Context, c *redis.Client, from, to string, amount int64) error {
		return c.Eval(ctx, transferScript, []string{from, to}, amount).Err()
	})
}

// transferLibrary is transferScript as a function library.
const transferLibrary = "#!lua name=bank\nredis.register_function('transfer', function(KEYS, ARGV)\n" +
	transferScript + "\nend)"

// TestCrash_KillNine_FunctionTransfersNeverTorn: FCALL transfers survive kill -9 whole or not
// at all, and the library itself survives every kill -9: it is loaded once, in the first
// cycle, and the later cycles' transfers (which must be acknowledged) call it.
func TestCrash_KillNine_FunctionTransfersNeverTorn(t *testing.T) {
	var once sync.Once
	var loadErr error
	killNineDuringTransfers(t, func(ctx context.Context, c *redis.Client, from, to string, amount int64) error {
		once.Do(func() { loadErr = c.FunctionLoad(ctx, transferLibrary).Err() })
		if loadErr != nil {
			t.Errorf("FUNCTION LOAD: %v", loadErr)
			return loadErr
		}
		return c.FCall(ctx, "transfer", []string{from, to}, amount).Err()
	})
}
