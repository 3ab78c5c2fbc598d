package crashtest

import (
	"context"
	"testing"

	"github.com/redis/go-redis/v9"
)

// TestCrash_KillNine_TransfersNeverTorn: MULTI/EXEC transfers between shards survive kill -9
// under appendfsync always whole or not at all.
func TestCrash_KillNine_TransfersNeverTorn(t *testing.T) {
	killNineDuringTransfers(t, func(ctx context.Context, c *redis.Client, from, to string, amount int64) error {
		_, err := c.TxPipelined(ctx, func(p redis.Pipeliner) error {
			p.DecrBy(ctx, from, amount)
			p.IncrBy(ctx, to, amount)
			return nil
		})
		return err
	})
}
