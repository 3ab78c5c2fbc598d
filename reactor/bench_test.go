package reactor_test

import (
	"bufio"
	"net"
	"strconv"
	"testing"

	"shardis/internal/testserver"
)

// BenchmarkServer_PipelinedGetSet drives a real server over loopback with pipelines of 16
// commands, SET:GET 1:15 over 1,000 keys, and reports the cost per command. Client and
// server share the process, so allocs/op counts both; the client here allocates nothing per
// command after warm-up, so allocs/op is the server's.
func BenchmarkServer_PipelinedGetSet(b *testing.B) {
	srv := testserver.Start(b)
	c, err := net.Dial("tcp", srv.Addr)
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	r := bufio.NewReaderSize(c, 64<<10)
	const depth, keys = 16, 1000
	var reqs [][]byte
	for i := range keys {
		k := "key:" + strconv.Itoa(i)
		set := "*3\r\n$3\r\nSET\r\n$" + strconv.Itoa(len(k)) + "\r\n" + k + "\r\n$8\r\nvalue-42\r\n"
		get := "*2\r\n$3\r\nGET\r\n$" + strconv.Itoa(len(k)) + "\r\n" + k + "\r\n"
		if i%depth == 0 {
			reqs = append(reqs, []byte(set))
		} else {
			reqs = append(reqs, []byte(get))
		}
	}
	var batch []byte
	roundTrip := func(from int) {
		batch = batch[:0]
		for i := range depth {
			batch = append(batch, reqs[(from+i)%keys]...)
		}
		if _, err := c.Write(batch); err != nil {
			b.Fatal(err)
		}
		for range depth {
			line, err := r.ReadSlice('\n')
			if err != nil {
				b.Fatal(err)
			}
			if line[0] == '$' && line[1] != '-' {
				if _, err := r.ReadSlice('\n'); err != nil {
					b.Fatal(err)
				}
			}
		}
	}
	for i := 0; i < keys; i += depth { // every key exists: GETs hit
		roundTrip(i)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for n := 0; n < b.N; n += depth {
		roundTrip(n)
	}
}
