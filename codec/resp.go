// Package codec holds shardis's byte-level formats: the RESP wire protocol
// (requests in resp.go, replies in reply.go) and the storage encoding.
//
// The request parser (ParseCommand, Parser) reproduces the framing rules of
// Redis 7.0's processInlineBuffer / processMultibulkBuffer byte for byte,
// including the error texts sent before a connection is closed. It never
// copies a bulk argument: arguments are sub-slices of the caller's buffer.
//
// The reply writers (Append*, Writer) append to a caller-owned []byte and do
// not allocate when it has enough capacity.
package codec

import (
	"bytes"
	"math"
	"slices"
)

// Limits bound what one request may make the server allocate.
//
// The zero value is usable: a MaxBulkLen <= 0 means DefaultMaxBulkLen.
type Limits struct {
	MaxBulkLen      int64 // proto-max-bulk-len (Redis default 512 MiB)
	Unauthenticated bool  // true: Redis's stricter limits for clients that have not AUTHed (multibulk len > 10, bulk len > 16384 are protocol errors)
}

const (
	// DefaultMaxBulkLen is Redis's default proto-max-bulk-len (512 MiB),
	// used when Limits.MaxBulkLen <= 0.
	DefaultMaxBulkLen int64 = 512 << 20

	// MaxMultibulkLen is the largest element count a "*<n>" header may
	// announce. Redis 7.0 accepts up to INT_MAX (the 1024*1024 cap of older
	// versions was removed by redis/redis#9528, which shipped in 7.0);
	// larger counts are "invalid multibulk length". The parser never
	// allocates in proportion to the announced count: argv grows only as
	// elements actually arrive.
	MaxMultibulkLen = math.MaxInt32

	// InlineMaxSize is Redis's PROTO_INLINE_MAX_SIZE: how many unparsed
	// bytes may accumulate without the line terminator of an inline command
	// or of a "*"/"$" header before the request is a protocol error.
	InlineMaxSize = 64 * 1024

	unauthMaxMultibulkLen = 10
	unauthMaxBulkLen      = 16384
)

// ProtocolError is a malformed request. Msg is Redis's text without the "ERR " prefix, e.g. "Protocol error: invalid bulk length".
//
// After a ProtocolError the stream cannot be resynchronised: Redis replies
// "-ERR " + Msg and closes the connection once the reply is written. Msg
// never contains '\r' or '\n' (Redis replaces them with spaces, and so does
// this package). Values returned by the parser may be shared between calls:
// do not modify them.
type ProtocolError struct{ Msg string }

// Error returns e.Msg (without the "ERR " prefix).
func (e *ProtocolError) Error() string { return e.Msg }

var (
	errTooBigInline      = &ProtocolError{"Protocol error: too big inline request"}
	errUnbalancedQuotes  = &ProtocolError{"Protocol error: unbalanced quotes in request"}
	errTooBigMbulkCount  = &ProtocolError{"Protocol error: too big mbulk count string"}
	errInvalidMbulkLen   = &ProtocolError{"Protocol error: invalid multibulk length"}
	errUnauthMbulkLen    = &ProtocolError{"Protocol error: unauthenticated multibulk length"}
	errTooBigBulkCount   = &ProtocolError{"Protocol error: too big bulk count string"}
	errInvalidBulkLen    = &ProtocolError{"Protocol error: invalid bulk length"}
	errUnauthBulkLen     = &ProtocolError{"Protocol error: unauthenticated bulk length"}
	errExpectedDollarFmt = "Protocol error: expected '$', got '"
)

// expectedDollar builds Redis's "expected '$', got 'X'" error. X is the raw
// byte (C's %c), except that '\r' and '\n' become spaces as in
// addReplyErrorFormat.
func expectedDollar(c byte) *ProtocolError {
	if c == '\r' || c == '\n' {
		c = ' '
	}
	return &ProtocolError{errExpectedDollarFmt + string([]byte{c}) + "'"}
}

// ParseCommand parses the first complete command in buf.
// Returns argv (appended to argv[:0]; the slices point into buf, except inline args that needed unescaping which point into fresh memory),
// n = bytes consumed (n>0 with len(args)==0 means an empty command such as a blank inline line or "*0\r\n" that must just be skipped),
// need = when the command is incomplete (n==0, err==nil): the total number of bytes buf must hold before parsing can progress (known exactly once a bulk header has been read; otherwise len(buf)+1),
// err = *ProtocolError for malformed input.
//
// Ownership: the returned args alias buf (each has its capacity clipped to
// its length, so appending to one never overwrites buf). They are valid only
// while the caller leaves buf[:n] untouched; copy an argument that must
// outlive the buffer (e.g. a key or value being stored). ParseCommand itself
// retains nothing and never allocates for multibulk requests beyond growing
// argv; a bulk of length L costs no allocation of L.
//
// Incomplete input: every call re-parses buf from its start, so a command
// made of very many small arguments that arrives in many reads costs
// O(len(command)) per call. Callers that want O(len) overall should keep a
// Parser per connection instead; both give identical results.
//
// Byte-for-byte Redis 7.0 behaviour worth knowing (all verified against
// redis-server 7.0.15):
//   - a request starting with '*' is multibulk, anything else is inline;
//   - only the '\r' of each "*<n>\r\n" / "$<n>\r\n" header is checked: the
//     byte after it is skipped whatever it is, and so are the two bytes
//     after each bulk payload (Redis does not verify the trailing CRLF);
//   - numbers follow Redis's string2ll: no '+', no leading zeros, no "-0";
//   - Redis searches for terminators with strchr, so a NUL byte inside an
//     inline line or a header hides the terminator behind it: the request
//     stays incomplete until more than InlineMaxSize bytes are buffered and
//     then fails with the matching "too big" error. Bulk payloads are
//     binary-safe.
func ParseCommand(buf []byte, argv [][]byte, lim Limits) (args [][]byte, n int, need int, err error) {
	return parse(buf, argv[:0], lim, nil)
}

// Parser is a resumable ParseCommand for one connection. The zero value is
// ready to use.
//
// When a multibulk command is incomplete, Parser remembers how far it got, so
// the next call only parses the newly arrived elements; this keeps a command
// of millions of small arguments received in many reads O(len) overall.
// Between a call that returned an incomplete command (n == 0, err == nil)
// and the next call, the caller must pass a buffer that starts with the same
// bytes (it may have been reallocated or moved, and may have grown); after a
// call returns a command (n > 0) or an error, the next call starts afresh on
// whatever buffer it is given. Call Reset when abandoning a partly received
// command (e.g. when the connection is reused). A Parser is not safe for
// concurrent use.
//
// A Parser keeps no per-element state: while a command is incomplete it
// remembers where its elements start, how many there are and where the next
// one begins; once the last one arrives it walks the (already checked)
// headers again to make the arguments. What it holds for a command being
// received is so a few integers, whatever its size.
type Parser struct {
	remaining int // elements of the current multibulk still to read; 0: none in progress
	pos       int // offset in buf where the next element header starts
	first     int // offset in buf of the first element header
	count     int // elements of the current multibulk
}

// Reset forgets any partly parsed command.
func (p *Parser) Reset() { *p = Parser{} }

// Pending returns the offset in the buffer where the header of the element being waited for
// starts, or -1 when no multibulk command is partly parsed.
func (p *Parser) Pending() int {
	if p.remaining == 0 {
		return -1
	}
	return p.pos
}

// Parse is ParseCommand with resumption; see Parser for the contract on buf.
// The results, including need, and the aliasing rules are those of
// ParseCommand.
func (p *Parser) Parse(buf []byte, argv [][]byte, lim Limits) (args [][]byte, n int, need int, err error) {
	return parse(buf, argv[:0], lim, p)
}

// ParseAppend is Parse appending the arguments to argv (not to argv[:0]):
// argv is returned unchanged when no command is complete. A caller that
// collects the arguments of many commands in one slice so never copies them.
func (p *Parser) ParseAppend(buf []byte, argv [][]byte, lim Limits) (args [][]byte, n int, need int, err error) {
	return parse(buf, argv, lim, p)
}

// parse appends the first command of buf to args; on an incomplete command
// or an error, args comes back as it was given.
func parse(buf []byte, args [][]byte, lim Limits, st *Parser) ([][]byte, int, int, error) {
	base := len(args)
	a, n, need, err := parseAt(buf, args, lim, st)
	if n == 0 || err != nil {
		a = a[:base]
	}
	return a, n, need, err
}

func parseAt(buf []byte, args [][]byte, lim Limits, st *Parser) ([][]byte, int, int, error) {
	if st != nil && st.remaining > 0 {
		if st.pos > len(buf) {
			// The caller broke the contract (buf shrank). Start over rather
			// than slice out of range.
			st.Reset()
		} else {
			return parseElements(buf, args, lim, st, st.pos, st.remaining, true)
		}
	}
	if len(buf) == 0 {
		return args, 0, 1, nil
	}
	if buf[0] != '*' {
		return parseInline(buf, args)
	}
	return parseMultibulk(buf, args, lim, st)
}

// indexTerm returns the index of the first c in b, or -1 if there is none or
// a NUL byte comes first (C strchr on a NUL-terminated buffer).
func indexTerm(b []byte, c byte) int {
	// Headers are short: look at the first bytes directly before paying
	// for the vectorised searches.
	for i := 0; i < len(b) && i < 24; i++ {
		switch b[i] {
		case c:
			return i
		case 0:
			return -1
		}
	}
	i := bytes.IndexByte(b, c)
	if i < 0 {
		return -1
	}
	if bytes.IndexByte(b[:i], 0) >= 0 {
		return -1
	}
	return i
}

// parseInline handles a request whose first byte is not '*'.
func parseInline(buf []byte, args [][]byte) ([][]byte, int, int, error) {
	nl := indexTerm(buf, '\n')
	if nl < 0 {
		if len(buf) > InlineMaxSize {
			return args, 0, 0, errTooBigInline
		}
		return args, 0, len(buf) + 1, nil
	}
	end := nl
	if end > 0 && buf[end-1] == '\r' {
		end--
	}
	args, ok := splitArgs(buf[:end], args)
	if !ok {
		return args, 0, 0, errUnbalancedQuotes
	}
	return args, nl + 1, 0, nil
}

// parseMultibulk reads the "*<n>\r\n" header at buf[0] and then the elements.
func parseMultibulk(buf []byte, args [][]byte, lim Limits, st *Parser) ([][]byte, int, int, error) {
	cr := indexTerm(buf, '\r')
	if cr < 0 {
		if len(buf) > InlineMaxSize {
			return args, 0, 0, errTooBigMbulkCount
		}
		return args, 0, len(buf) + 1, nil
	}
	if cr > len(buf)-2 { // the byte after '\r' has not arrived
		return args, 0, len(buf) + 1, nil
	}
	count, ok := ParseInt(buf[1:cr])
	if !ok || count > MaxMultibulkLen {
		return args, 0, 0, errInvalidMbulkLen
	}
	if count > unauthMaxMultibulkLen && lim.Unauthenticated {
		return args, 0, 0, errUnauthMbulkLen
	}
	pos := cr + 2
	if count <= 0 {
		return args, pos, 0, nil // empty command: skip it
	}
	if st != nil {
		st.first, st.count = pos, int(count)
	}
	// Room for the elements at once, as many as the bytes at hand can hold (an element takes
	// at least 6): never for the count a header merely announces.
	if n := min(int(count), (len(buf)-pos)/6); cap(args)-len(args) < n {
		args = slices.Grow(args, n)
	}
	return parseElements(buf, args, lim, st, pos, int(count), false)
}

// parseElements reads remaining "$<len>\r\n<payload>\r\n" elements starting at
// pos; with a resumed Parser, the earlier elements were checked already.
//
// A call that starts a command appends its elements to args as it reads them
// (an incomplete command drops them again: parse). A resumed call only checks
// the new elements, and the command it completes gets its arguments from
// collectArgs, which walks the headers checked by the earlier calls: each call
// costs O(newly parsed bytes) however much of the command came before, and a
// command that arrived whole is walked once.
func parseElements(buf []byte, args [][]byte, lim Limits, st *Parser, pos, remaining int, resumed bool) ([][]byte, int, int, error) {
	base := len(args)
	maxBulk := lim.MaxBulkLen
	if maxBulk <= 0 {
		maxBulk = DefaultMaxBulkLen
	}
	for remaining > 0 {
		rest := buf[pos:]
		cr := indexTerm(rest, '\r')
		if cr < 0 {
			if len(rest) > InlineMaxSize {
				return fail(args, st, errTooBigBulkCount)
			}
			return incomplete(args, st, pos, remaining, len(buf)+1)
		}
		if cr > len(rest)-2 {
			return incomplete(args, st, pos, remaining, len(buf)+1)
		}
		if rest[0] != '$' {
			return fail(args, st, expectedDollar(rest[0]))
		}
		bl, ok := ParseInt(rest[1:cr])
		if !ok || bl < 0 || bl > maxBulk {
			return fail(args, st, errInvalidBulkLen)
		}
		if bl > unauthMaxBulkLen && lim.Unauthenticated {
			return fail(args, st, errUnauthBulkLen)
		}
		start := pos + cr + 2
		// Compare in int64 without computing bl+2, which overflows when
		// MaxBulkLen is near math.MaxInt64.
		if avail := int64(len(buf) - start); bl > avail-2 {
			// Remember where this header starts, not the payload: a resumed
			// parse re-reads the header, which is cheap and keeps the state
			// small.
			need := math.MaxInt
			if bl <= int64(math.MaxInt-2-start) {
				need = start + int(bl) + 2
			}
			return incomplete(args, st, pos, remaining, need)
		}
		l := int(bl)
		if !resumed {
			args = append(args, buf[start:start+l:start+l])
		}
		pos = start + l + 2 // the two bytes after the payload are not checked
		remaining--
	}
	if st != nil {
		if resumed {
			args = collectArgs(buf, args[:base], st.first, st.count)
		}
		st.Reset()
	}
	return args, pos, 0, nil
}

// collectArgs appends the count elements whose headers start at pos, which
// parseElements checked, to args (grown once, to fit them).
func collectArgs(buf []byte, args [][]byte, pos, count int) [][]byte {
	args = slices.Grow(args, count)
	for ; count > 0; count-- {
		cr := pos + bytes.IndexByte(buf[pos:], '\r')
		l, _ := ParseInt(buf[pos+1 : cr])
		start := cr + 2
		end := start + int(l)
		args = append(args, buf[start:end:end])
		pos = end + 2
	}
	return args
}

func incomplete(args [][]byte, st *Parser, pos, remaining, need int) ([][]byte, int, int, error) {
	if st != nil {
		st.pos = pos
		st.remaining = remaining
	}
	return args, 0, need, nil
}

func fail(args [][]byte, st *Parser, err error) ([][]byte, int, int, error) {
	if st != nil {
		st.Reset()
	}
	return args, 0, 0, err
}

// ParseInt is Redis's string2ll: an optional '-', then either "0" alone or a
// digit 1-9 followed by digits; no '+', no leading zeros, no "-0", at most 20
// bytes, and the value must fit in an int64.
func ParseInt(b []byte) (int64, bool) {
	if len(b) == 0 || len(b) >= 21 {
		return 0, false
	}
	if len(b) == 1 && b[0] == '0' {
		return 0, true
	}
	neg := b[0] == '-'
	if neg {
		b = b[1:]
		if len(b) == 0 {
			return 0, false
		}
	}
	if b[0] < '1' || b[0] > '9' {
		return 0, false
	}
	var v uint64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		d := uint64(c - '0')
		if v > (math.MaxUint64-d)/10 {
			return 0, false
		}
		v = v*10 + d
	}
	if neg {
		if v > 1<<63 {
			return 0, false
		}
		return int64(-v), true // -(1<<63) wraps to math.MinInt64, as intended
	}
	if v > math.MaxInt64 {
		return 0, false
	}
	return int64(v), true
}

// isSpace is C's isspace in the "C" locale.
func isSpace(c byte) bool {
	return c == ' ' || (c >= '\t' && c <= '\r')
}

func isHex(c byte) bool {
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')
}

func hexVal(c byte) byte {
	switch {
	case c >= '0' && c <= '9':
		return c - '0'
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10
	default:
		return c - 'A' + 10
	}
}

// token accumulates one inline argument. While every byte comes verbatim
// from consecutive positions of the line, it is just a window on the line
// (no copy); the first escape or quote boundary that breaks the run moves it
// to freshly allocated memory.
type token struct {
	line       []byte
	start, end int // window on line while owned == nil; start < 0: empty so far
	owned      []byte
	copied     bool
}

func (t *token) addAt(i int) {
	if !t.copied {
		if t.start < 0 {
			t.start, t.end = i, i+1
			return
		}
		if i == t.end {
			t.end++
			return
		}
		t.spill()
	}
	t.owned = append(t.owned, t.line[i])
}

func (t *token) addByte(c byte) {
	if !t.copied {
		t.spill()
	}
	t.owned = append(t.owned, c)
}

func (t *token) spill() {
	t.copied = true
	if t.start >= 0 {
		t.owned = append(make([]byte, 0, t.end-t.start+8), t.line[t.start:t.end]...)
	} else {
		t.owned = make([]byte, 0, 8)
	}
}

func (t *token) bytes(at int) []byte {
	switch {
	case t.copied:
		return t.owned
	case t.start < 0:
		return t.line[at:at:at] // empty, non-nil, e.g. ""
	default:
		return t.line[t.start:t.end:t.end]
	}
}

// splitArgs splits an inline request line with the rules of Redis's
// sdssplitargs: arguments are separated by blanks (C isspace); outside quotes
// an argument ends at ' ', '\t', '\r' or '\n' (not '\v' or '\f'); "double
// quotes" understand \xHH, \n, \r, \t, \b, \a and \<any> -> <any>; 'single
// quotes' understand only \'; a quote may open in the middle of an argument;
// a closing quote must be followed by a blank or the end of the line; an
// unterminated quote is an error (ok == false).
func splitArgs(line []byte, args [][]byte) (_ [][]byte, ok bool) {
	n := len(line)
	i := 0
	for {
		for i < n && isSpace(line[i]) {
			i++
		}
		if i == n {
			return args, true
		}
		t := token{line: line, start: -1}
		inDouble, inSingle := false, false
	scan:
		for {
			switch {
			case inDouble:
				if i == n {
					return args, false // unterminated quotes
				}
				c := line[i]
				switch {
				case c == '\\' && i+3 < n && line[i+1] == 'x' && isHex(line[i+2]) && isHex(line[i+3]):
					t.addByte(hexVal(line[i+2])<<4 | hexVal(line[i+3]))
					i += 3
				case c == '\\' && i+1 < n:
					i++
					switch e := line[i]; e {
					case 'n':
						t.addByte('\n')
					case 'r':
						t.addByte('\r')
					case 't':
						t.addByte('\t')
					case 'b':
						t.addByte('\b')
					case 'a':
						t.addByte('\a')
					default:
						t.addByte(e)
					}
				case c == '"':
					if i+1 < n && !isSpace(line[i+1]) {
						return args, false
					}
					i++
					break scan
				default:
					t.addAt(i)
				}
				i++
			case inSingle:
				if i == n {
					return args, false // unterminated quotes
				}
				c := line[i]
				switch {
				case c == '\\' && i+1 < n && line[i+1] == '\'':
					i++
					t.addByte('\'')
				case c == '\'':
					if i+1 < n && !isSpace(line[i+1]) {
						return args, false
					}
					i++
					break scan
				default:
					t.addAt(i)
				}
				i++
			default:
				if i == n {
					break scan
				}
				switch c := line[i]; c {
				case ' ', '\n', '\r', '\t':
					i++
					break scan
				case '"':
					inDouble = true
				case '\'':
					inSingle = true
				default:
					t.addAt(i)
				}
				i++
			}
		}
		args = append(args, t.bytes(min(i, n)))
	}
}
