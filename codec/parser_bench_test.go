package codec

import (
	"fmt"
	"testing"
)

// BenchmarkParserParse is BenchmarkParseCommand through a connection's Parser, as the
// reactor parses.
func BenchmarkParserParse(b *testing.B) {
	var stream []byte
	const cmds = 1000
	for i := 0; i < cmds; i++ {
		stream = append(stream, encodeMultibulk([][]byte{[]byte("SET"), []byte(fmt.Sprintf("key:%06d", i)), []byte("value-value-value")})...)
	}
	argv := make([][]byte, 0, 8)
	var p Parser
	b.SetBytes(int64(len(stream) / cmds))
	b.ReportAllocs()
	b.ResetTimer()
	buf := stream
	for i := 0; i < b.N; i++ {
		if len(buf) == 0 {
			buf = stream
		}
		args, n, _, err := p.Parse(buf, argv, Limits{})
		if err != nil || n == 0 || len(args) != 3 {
			b.Fatal("bad parse")
		}
		argv = args
		buf = buf[n:]
	}
}
