package crashtest

import (
	"context"
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
