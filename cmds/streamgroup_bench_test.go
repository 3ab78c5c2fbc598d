package cmds_test

import (
	"context"
	"fmt"
	"os"
	"sync"
	"testing"

	"github.com/redis/go-redis/v9"

	"shardis/internal/testserver"
)

// The consumer-group loop of a job queue, through the real protocol: each of 50 clients reads
// its stream's entries one at a time with XREADGROUP … COUNT 1 … > and acknowledges each with
// XACK, pipe reads and the acks of the previous ones in flight at once. Reported as entries/s
// (one XREADGROUP and one XACK each). XGROUP_BENCH_ADDR runs it against another server (a
// redis-server, a bin/shardis) instead of an in-process one.

const xgBenchClients = 50

func xgBenchClient(b *testing.B) *redis.Client {
	b.Helper()
	if addr := os.Getenv("XGROUP_BENCH_ADDR"); addr != "" {
		c := redis.NewClient(&redis.Options{Addr: addr, DisableIdentity: true, Protocol: 2, PoolSize: 2 * xgBenchClients})
		b.Cleanup(func() { c.Close() })
		return c
	}
	s := testserver.Start(b)
	c := redis.NewClient(&redis.Options{Addr: s.Addr, DisableIdentity: true, Protocol: 2, PoolSize: 2 * xgBenchClients})
	b.Cleanup(func() { c.Close() })
	return c
}

func xgBenchReadAck(b *testing.B, pipe int) {
	c := xgBenchClient(b)
	ctx := context.Background()
	per := b.N/xgBenchClients + pipe
	c.FlushAll(ctx)
	var wg sync.WaitGroup
	for i := range xgBenchClients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			key := fmt.Sprintf("bench:%d", i)
			for done := 0; done < per; done += 100 {
				p := c.Pipeline()
				for j := done; j < min(done+100, per); j++ {
					p.XAdd(ctx, &redis.XAddArgs{Stream: key, ID: fmt.Sprintf("%d-1", j+1), Values: []any{"job", "payload-0123456789"}})
				}
				if _, err := p.Exec(ctx); err != nil {
					b.Error(err)
					return
				}
			}
			if err := c.XGroupCreate(ctx, key, "g", "0").Err(); err != nil {
				b.Error(err)
			}
		}()
	}
	wg.Wait()
	b.ResetTimer()
	for i := range xgBenchClients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			key := fmt.Sprintf("bench:%d", i)
			conn := c.Conn()
			defer conn.Close()
			var acks []string
			for read := 0; read < b.N/xgBenchClients; {
				p := conn.Pipeline()
				if len(acks) > 0 {
					p.XAck(ctx, key, "g", acks...)
				}
				reads := make([]*redis.XStreamSliceCmd, pipe)
				for j := range reads {
					reads[j] = p.XReadGroup(ctx, &redis.XReadGroupArgs{Group: "g", Consumer: "c", Streams: []string{key, ">"}, Count: 1, Block: -1})
				}
				if _, err := p.Exec(ctx); err != nil {
					b.Error(err)
					return
				}
				acks = acks[:0]
				for _, r := range reads {
					for _, m := range r.Val()[0].Messages {
						acks = append(acks, m.ID)
					}
				}
				read += pipe
				if pipe == 1 { // pipeline 1: the ack is a round trip of its own
					if err := conn.XAck(ctx, key, "g", acks...).Err(); err != nil {
						b.Error(err)
						return
					}
					acks = acks[:0]
				}
			}
		}()
	}
	wg.Wait()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "entries/s")
}

// BenchmarkXREADGROUP_XACK_Pipeline1: a read, then its ack, each a round trip.
func BenchmarkXREADGROUP_XACK_Pipeline1(b *testing.B) { xgBenchReadAck(b, 1) }

// BenchmarkXREADGROUP_XACK_Pipeline16: 16 reads and the 16 acks of the previous reads in
// flight at once.
func BenchmarkXREADGROUP_XACK_Pipeline16(b *testing.B) { xgBenchReadAck(b, 16) }
