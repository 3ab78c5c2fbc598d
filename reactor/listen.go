package reactor

import (
	"context"
	"errors"
	"fmt"
	"log"
	"net"
	"os"
	"strconv"
	"strings"
	"syscall"

	"github.com/panjf2000/gnet/v2"
)

// listenAddr is one bind address resolved for gnet.
type listenAddr struct {
	network  string // tcp4 or tcp6
	host     string // as net.JoinHostPort wants it
	optional bool   // given with a leading '-': skipped when the address is unavailable
}

// parseBind resolves bind's addresses as Redis reads them: "*" is every IPv4 address, "::*"
// every IPv6 one, and a leading '-' marks an address that may be unavailable on this host.
func parseBind(binds []string) []listenAddr {
	out := make([]listenAddr, 0, len(binds))
	for _, b := range binds {
		a := listenAddr{network: "tcp4", host: b}
		if strings.HasPrefix(b, "-") {
			a.optional, a.host = true, b[1:]
		}
		switch a.host {
		case "*":
			a.host = "0.0.0.0"
		case "::*":
			a.host = "::"
		}
		if strings.Contains(a.host, ":") {
			a.network = "tcp6"
		}
		out = append(out, a)
	}
	return out
}

// unavailable reports whether err says the address cannot exist on this host (no such
// interface address, or no IPv6): the errors for which Redis skips an optional bind address.
func unavailable(err error) bool {
	for _, e := range []syscall.Errno{syscall.EADDRNOTAVAIL, syscall.EAFNOSUPPORT, syscall.EPROTONOSUPPORT,
		syscall.ESOCKTNOSUPPORT, syscall.EPFNOSUPPORT, syscall.ENOPROTOOPT} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}

// tcpListeners checks every bind address and returns the gnet addresses to listen on.
//
// A plain bind (no SO_REUSEPORT) of each address fails while any other process listens there:
// the loops bind with SO_REUSEPORT, which would otherwise let a second server start silently
// beside the first and take half its connections. An optional address that does not exist
// here is skipped, as Redis skips it; any other failure stops the start, naming the address.
func tcpListeners(binds []string, port int) ([]string, error) {
	var out []string
	for _, a := range parseBind(binds) {
		addr := net.JoinHostPort(a.host, strconv.Itoa(port))
		ln, err := net.Listen(a.network, addr)
		if err != nil {
			if a.optional && unavailable(err) {
				log.Printf("bind address %s is unavailable here, skipped (optional)", addr)
				continue
			}
			return nil, fmt.Errorf("could not create server TCP listening socket %s: %w", addr, err)
		}
		_ = ln.Close()
		out = append(out, a.network+"://"+addr)
	}
	return out, nil
}

// listenUnix opens the unix socket at path (replacing a stale one, as Redis does) with the
// permissions perm (0: the umask's). gnet cannot give a unix socket to every SO_REUSEPORT
// loop, so the server accepts on it itself and hands each connection to a loop (acceptUnix).
func listenUnix(path string, perm os.FileMode) (*net.UnixListener, error) {
	_ = os.Remove(path)
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		return nil, fmt.Errorf("failed opening Unix socket %s: %w", path, err)
	}
	if perm != 0 {
		if err := os.Chmod(path, perm); err != nil {
			_ = ln.Close()
			return nil, fmt.Errorf("failed opening Unix socket %s: %w", path, err)
		}
	}
	return ln, nil
}

// acceptUnix hands each connection accepted on ln to an event loop until ln is closed. The
// connection's file descriptor is duplicated into the loop, so the accepted one is closed here.
func (s *Server) acceptUnix(ln *net.UnixListener) {
	select {
	case <-s.loopsUp: // the loops are registered: Register may pick one
	case <-s.stopped:
		return
	}
	for {
		c, err := ln.AcceptUnix()
		if err != nil {
			return
		}
		res, err := s.eng.Register(gnet.NewNetConnContext(context.Background(), c))
		if err == nil {
			r := <-res
			err = r.Err
		}
		if err != nil {
			log.Printf("Accepting client connection on %s: %v", s.unixPath, err)
		}
		_ = c.Close()
	}
}

// protectedModeRefusal is what Redis 7.0 writes to a client it refuses in protected mode.
const protectedModeRefusal = "-DENIED Redis is running in protected mode because protected mode is enabled and no password is set for the default user. In this mode connections are only accepted from the loopback interface. If you want to connect from external computers to Redis you may adopt one of the following solutions: 1) Just disable protected mode sending the command 'CONFIG SET protected-mode no' from the loopback interface by connecting to Redis from the same host the server is running, however MAKE SURE Redis is not publicly accessible from internet if you do so. Use CONFIG REWRITE to make this change permanent. 2) Alternatively you can just disable the protected mode by editing the Redis configuration file, and setting the protected mode option to 'no', and then restarting the server. 3) If you started the server manually just for testing, restart it with the '--protected-mode no' option. 4) Setup a an authentication password for the default user. NOTE: You only need to do one of the above things in order for the server to start accepting connections from the outside.\r\n"

// refusedByProtectedMode decides, as Redis 7.0 does, whether a new client is refused: protected
// mode is on, no password is set, and the client comes over TCP from outside the loopback
// interface (remote nil means a unix socket client).
func refusedByProtectedMode(protected bool, password string, remote net.Addr) bool {
	if !protected || password != "" {
		return false
	}
	tcp, ok := remote.(*net.TCPAddr)
	if !ok {
		return false
	}
	return !tcp.IP.IsLoopback()
}
