package executor_test

import (
	"testing"
	"time"

	"shardis/cmds"
	"shardis/config"
	"shardis/executor"
	"shardis/server"
)

// BenchmarkAccount is the executor's per-command bookkeeping (commandstats, latency histogram
// and monitor, slowlog check) for a GET that replied a bulk string, with latency-tracking on
// (Redis's default) and off: the difference is the cost of the histogram.
func BenchmarkAccount(b *testing.B) {
	for _, tracking := range []string{"yes", "no"} {
		b.Run("latency-tracking="+tracking, func(b *testing.B) {
			cfg := config.Default()
			if err := cfg.Set([][2]string{{"latency-tracking", tracking}}); err != nil {
				b.Fatal(err)
			}
			e := executor.New(&server.Server{Config: cfg})
			args := [][]byte{[]byte("get"), []byte("k")}
			cmd := cmds.Lookup(args)
			reply := []byte("$1\r\nv\r\n")
			b.ReportAllocs()
			for range b.N {
				e.Account(cmd, args, 3*time.Microsecond, reply, nil)
			}
		})
	}
}
