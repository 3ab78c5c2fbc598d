package cmds_test

import (
	"bufio"
	"net"
	"testing"
	"time"

	"shardis/internal/testserver"
)

// Redis prints the arguments of an unknown command or subcommand as C strings: each is cut at
// its first NUL byte (checked against redis-server 7.0.15).
func TestUnknownCommand_ArgumentsCutAtNUL(t *testing.T) {
	t.Parallel()
	s := testserver.Start(t)
	for _, tc := range []struct{ req, want string }{
		{"*3\r\n$4\r\nfo\x00o\r\n$3\r\na\x00b\r\n$2\r\ncd\r\n", "-ERR unknown command 'fo', with args beginning with: 'a' 'cd' \r\n"},
		{"*2\r\n$6\r\nconfig\r\n$3\r\nx\x00y\r\n", "-ERR unknown subcommand 'x'. Try CONFIG HELP.\r\n"},
		{"*2\r\n$4\r\nGET\x00\r\n$1\r\nk\r\n", "-ERR unknown command 'GET', with args beginning with: 'k' \r\n"},
	} {
		nc, err := net.Dial("tcp", s.Addr)
		if err != nil {
			t.Fatal(err)
		}
		_ = nc.SetDeadline(time.Now().Add(5 * time.Second))
		if _, err := nc.Write([]byte(tc.req)); err != nil {
			t.Fatal(err)
		}
		got, err := bufio.NewReader(nc).ReadString('\n')
		nc.Close()
		if err != nil || got != tc.want {
			t.Errorf("%q: got %q, %v; want %q", tc.req, got, err, tc.want)
		}
	}
}
