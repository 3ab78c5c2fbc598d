// Command subscribers holds N subscriber connections to one channel and reads everything
// they receive, so that a PUBLISH load (redis-benchmark ... PUBLISH ch msg) measures the
// server's fan-out, not a slow reader. It prints "ready" once every SUBSCRIBE is sent and, on
// SIGINT or SIGTERM, the bytes received. Loopback addresses only.
package main

import (
	"flag"
	"fmt"
	"net"
	"os"
	"os/signal"
	"sync/atomic"
	"syscall"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:6379", "server address (loopback)")
	n := flag.Int("n", 1, "subscriber connections")
	channel := flag.String("channel", "ch", "channel to subscribe to")
	flag.Parse()
	host, _, err := net.SplitHostPort(*addr)
	if ip := net.ParseIP(host); err != nil || ip == nil || !ip.IsLoopback() {
		fmt.Fprintln(os.Stderr, "subscribers: -addr must be a loopback address")
		os.Exit(2)
	}
	var received atomic.Int64
	for range *n {
		c, err := net.Dial("tcp", *addr)
		if err != nil {
			fmt.Fprintln(os.Stderr, "subscribers:", err)
			os.Exit(1)
		}
		if _, err := fmt.Fprintf(c, "SUBSCRIBE %s\r\n", *channel); err != nil {
			fmt.Fprintln(os.Stderr, "subscribers:", err)
			os.Exit(1)
		}
		go func() {
			buf := make([]byte, 64<<10)
			for {
				k, err := c.Read(buf)
				received.Add(int64(k))
				if err != nil {
					return
				}
			}
		}()
	}
	fmt.Println("ready")
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM)
	<-sig
	fmt.Println("bytes", received.Load())
}
