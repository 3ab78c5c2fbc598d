package bench

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strconv"
)

// replyKind classifies a reply for the statistics: a load generator only needs to know whether
// a reply was an error, a nil (a GET miss) or anything else, and how many bytes it took.
type replyKind uint8

const (
	replyValue replyKind = iota
	replyNil
	replyError
)

// replyReader reads RESP2 and RESP3 replies from a buffered connection without allocating for
// anything but error texts: bulk payloads are skipped with Discard.
type replyReader struct {
	r *bufio.Reader
}

func newReplyReader(r io.Reader, size int) *replyReader {
	return &replyReader{r: bufio.NewReaderSize(r, size)}
}

// buffered reports how many bytes are already read from the socket and not yet parsed.
func (rr *replyReader) buffered() int { return rr.r.Buffered() }

var errProtocol = errors.New("protocol error")

// line returns the next line without its CRLF. The slice is valid until the next read.
func (rr *replyReader) line() ([]byte, int, error) {
	b, err := rr.r.ReadSlice('\n')
	if err == bufio.ErrBufferFull {
		// A very long simple string or error: collect it.
		long := append([]byte(nil), b...)
		for err == bufio.ErrBufferFull {
			b, err = rr.r.ReadSlice('\n')
			long = append(long, b...)
		}
		b = long
	}
	if err != nil {
		return nil, len(b), err
	}
	n := len(b)
	if n < 2 || b[n-2] != '\r' {
		return nil, n, fmt.Errorf("%w: line not terminated by CRLF", errProtocol)
	}
	return b[:n-2], n, nil
}

// parseLen parses the decimal length or count after a type byte.
func parseLen(b []byte) (int64, error) {
	if len(b) == 0 {
		return 0, fmt.Errorf("%w: empty length", errProtocol)
	}
	neg := false
	if b[0] == '-' {
		neg = true
		b = b[1:]
		if len(b) == 0 {
			return 0, fmt.Errorf("%w: bad length", errProtocol)
		}
	}
	var n int64
	for _, c := range b {
		if c < '0' || c > '9' || n > (1<<53) {
			return 0, fmt.Errorf("%w: bad length %q", errProtocol, b)
		}
		n = n*10 + int64(c-'0')
	}
	if neg {
		n = -n
	}
	return n, nil
}

// read reads one complete reply. It returns its kind, the bytes it took on the wire and, for
// errors, the error text.
func (rr *replyReader) read() (replyKind, int, string, error) {
	return rr.readDepth(0)
}

func (rr *replyReader) readDepth(depth int) (replyKind, int, string, error) {
	if depth > 64 {
		return 0, 0, "", fmt.Errorf("%w: nesting too deep", errProtocol)
	}
	b, n, err := rr.line()
	if err != nil {
		return 0, n, "", err
	}
	if len(b) == 0 {
		return 0, n, "", fmt.Errorf("%w: empty line", errProtocol)
	}
	// b points into the read buffer: the type byte must be kept before reading further.
	typ := b[0]
	switch typ {
	case '+', ':', ',', '#', '(':
		return replyValue, n, "", nil
	case '_':
		return replyNil, n, "", nil
	case '-':
		return replyError, n, string(b[1:]), nil
	case '$', '=', '!':
		size, err := parseLen(b[1:])
		if err != nil {
			return 0, n, "", err
		}
		if size < 0 {
			return replyNil, n, "", nil
		}
		if typ == '!' {
			// RESP3 blob error: keep its text.
			buf := make([]byte, size+2)
			if _, err := io.ReadFull(rr.r, buf); err != nil {
				return 0, n, "", err
			}
			return replyError, n + len(buf), string(buf[:size]), nil
		}
		d, err := rr.r.Discard(int(size + 2))
		return replyValue, n + d, "", err
	case '*', '~', '%', '>', '|':
		count, err := parseLen(b[1:])
		if err != nil {
			return 0, n, "", err
		}
		if count < 0 {
			return replyNil, n, "", nil
		}
		if typ == '%' || typ == '|' {
			count *= 2
		}
		for i := int64(0); i < count; i++ {
			// An error inside an array (e.g. EXEC's) counts as a value: the command itself ran.
			_, m, _, err := rr.readDepth(depth + 1)
			n += m
			if err != nil {
				return 0, n, "", err
			}
		}
		switch typ {
		case '|':
			// Attributes precede the reply they describe.
			k, m, msg, err := rr.readDepth(depth + 1)
			return k, n + m, msg, err
		case '>':
			// An out-of-band push (RESP3): not the reply we wait for.
			k, m, msg, err := rr.readDepth(depth)
			return k, n + m, msg, err
		}
		return replyValue, n, "", nil
	}
	return 0, n, "", fmt.Errorf("%w: unexpected reply type %q", errProtocol, typ)
}

// appendArrayHeader appends "*n\r\n".
func appendArrayHeader(b []byte, n int) []byte {
	b = append(b, '*')
	b = strconv.AppendInt(b, int64(n), 10)
	return append(b, '\r', '\n')
}

// appendBulk appends one bulk string.
func appendBulk(b []byte, s []byte) []byte {
	b = append(b, '$')
	b = strconv.AppendInt(b, int64(len(s)), 10)
	b = append(b, '\r', '\n')
	b = append(b, s...)
	return append(b, '\r', '\n')
}

// encodeCommand renders a request as a RESP array of bulk strings.
func encodeCommand(args ...string) []byte {
	b := appendArrayHeader(nil, len(args))
	for _, a := range args {
		b = appendBulk(b, []byte(a))
	}
	return b
}
