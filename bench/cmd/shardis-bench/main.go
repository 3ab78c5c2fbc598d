// Command shardis-bench is a memtier_benchmark-style load generator for Redis-protocol
// servers; see `shardis-bench --help` and package shardis/bench.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"shardis/bench"
)

func main() {
	// The first Ctrl-C stops the run and prints what was measured; once the context is done
	// the handler is released, so a second Ctrl-C kills the process.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	go func() {
		<-ctx.Done()
		stop()
	}()
	os.Exit(bench.Main(ctx, os.Args[1:], os.Stdout, os.Stderr))
}
