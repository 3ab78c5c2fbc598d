package codec

import (
	"bytes"
	"fmt"
	"math"
	"math/rand"
	"strconv"
	"strings"
	"testing"
	"unsafe"
)

// argsOf turns parsed args into strings for comparison.
func argsOf(args [][]byte) []string {
	out := make([]string, len(args))
	for i, a := range args {
		out[i] = string(a)
	}
	return out
}

func sameArgs(got [][]byte, want []string) bool {
	if len(got) != len(want) {
		return false
	}
	for i := range got {
		if string(got[i]) != want[i] {
			return false
		}
	}
	return true
}

func encodeMultibulk(args [][]byte) []byte {
	b := AppendArrayLen(nil, len(args))
	for _, a := range args {
		b = AppendBulk(b, a)
	}
	return b
}

// within reports whether sub lies inside buf's memory.
func within(sub, buf []byte) bool {
	if len(sub) == 0 {
		return true
	}
	if len(buf) == 0 {
		return false
	}
	s := uintptr(unsafe.Pointer(unsafe.SliceData(sub)))
	b := uintptr(unsafe.Pointer(unsafe.SliceData(buf)))
	return s >= b && s+uintptr(len(sub)) <= b+uintptr(len(buf))
}

func TestParseIntMatchesString2ll(t *testing.T) {
	cases := []struct {
		in string
		v  int64
		ok bool
	}{
		{"0", 0, true},
		{"1", 1, true},
		{"-1", -1, true},
		{"99", 99, true},
		{"9223372036854775807", 9223372036854775807, true},
		{"-9223372036854775808", -9223372036854775808, true},
		{"9223372036854775808", 0, false},
		{"-9223372036854775809", 0, false},
		{"18446744073709551616", 0, false},
		{"99999999999999999999", 0, false},
		{"", 0, false},
		{"-", 0, false},
		{"-0", 0, false},
		{"+1", 0, false},
		{"01", 0, false},
		{"00", 0, false},
		{" 1", 0, false},
		{"1 ", 0, false},
		{"1a", 0, false},
		{"0x10", 0, false},
		{"000000000000000000001", 0, false}, // 21 bytes: too long
	}
	for _, c := range cases {
		v, ok := ParseInt([]byte(c.in))
		if ok != c.ok || (ok && v != c.v) {
			t.Errorf("ParseInt(%q) = %d, %v; want %d, %v", c.in, v, ok, c.v, c.ok)
		}
	}
}

func TestProtocolErrors(t *testing.T) {
	big := strings.Repeat("x", InlineMaxSize+1)
	unauth := Limits{Unauthenticated: true}
	cases := []struct {
		name string
		in   string
		lim  Limits
		msg  string
	}{
		{"too big inline", big, Limits{}, "Protocol error: too big inline request"},
		{"too big inline NUL hides newline", "PING\x00" + big + "\n", Limits{}, "Protocol error: too big inline request"},
		{"unbalanced double", "SET a \"b\r\n", Limits{}, "Protocol error: unbalanced quotes in request"},
		{"unbalanced single", "SET a 'b\n", Limits{}, "Protocol error: unbalanced quotes in request"},
		{"closing quote followed by text", "ECHO \"a\"b\r\n", Limits{}, "Protocol error: unbalanced quotes in request"},
		{"closing single quote followed by text", "ECHO 'a'b\r\n", Limits{}, "Protocol error: unbalanced quotes in request"},
		{"mid-token quote then text", "ECHO a\"b c\"d\r\n", Limits{}, "Protocol error: unbalanced quotes in request"},
		{"escaped closing quote leaves it open", "ECHO \"x\\\"\r\n", Limits{}, "Protocol error: unbalanced quotes in request"},
		{"escaped closing single quote leaves it open", "ECHO 'a\\\\'\r\n", Limits{}, "Protocol error: unbalanced quotes in request"},
		{"too big mbulk count", "*" + big, Limits{}, "Protocol error: too big mbulk count string"},
		{"mbulk not a number", "*abc\r\n", Limits{}, "Protocol error: invalid multibulk length"},
		{"mbulk trailing junk", "*11x\r\n", Limits{}, "Protocol error: invalid multibulk length"},
		{"mbulk plus sign", "*+1\r\n$4\r\nPING\r\n", Limits{}, "Protocol error: invalid multibulk length"},
		{"mbulk empty", "*\r\n", Limits{}, "Protocol error: invalid multibulk length"},
		{"mbulk leading zero", "*01\r\n", Limits{}, "Protocol error: invalid multibulk length"},
		{"mbulk over INT_MAX", "*2147483648\r\n", Limits{}, "Protocol error: invalid multibulk length"},
		{"mbulk 3e9", "*3000000000\r\n", Limits{}, "Protocol error: invalid multibulk length"},
		{"mbulk overflow", "*99999999999999999999\r\n", Limits{}, "Protocol error: invalid multibulk length"},
		{"mbulk unauthenticated", "*11\r\n", unauth, "Protocol error: unauthenticated multibulk length"},
		{"mbulk invalid beats unauth", "*x\r\n", unauth, "Protocol error: invalid multibulk length"},
		{"expected $", "*3\r\n$3\r\nSET\r\n$1\r\nx\r\nfooz\r\n", Limits{}, "Protocol error: expected '$', got 'f'"},
		{"expected $ got CR", "*2\r\n$4\r\nECHO\r\n\r\n", Limits{}, "Protocol error: expected '$', got ' '"},
		{"expected $ got LF", "*1\r\n\n\r\n", Limits{}, "Protocol error: expected '$', got ' '"},
		{"expected $ raw byte", "*1\r\n\xffabc\r\n", Limits{}, "Protocol error: expected '$', got '\xff'"},
		{"expected $ for inline-looking element", "*1\r\nPING\r\n", Limits{}, "Protocol error: expected '$', got 'P'"},
		{"bulk not a number", "*1\r\n$abc\r\n", Limits{}, "Protocol error: invalid bulk length"},
		{"bulk trailing junk", "*1\r\n$17000x\r\n", Limits{}, "Protocol error: invalid bulk length"},
		{"bulk negative", "*1\r\n$-1\r\n", Limits{}, "Protocol error: invalid bulk length"},
		{"bulk minus zero", "*1\r\n$-0\r\nPING\r\n", Limits{}, "Protocol error: invalid bulk length"},
		{"bulk leading zero", "*1\r\n$04\r\nPING\r\n", Limits{}, "Protocol error: invalid bulk length"},
		{"bulk empty", "*1\r\n$\r\n", Limits{}, "Protocol error: invalid bulk length"},
		{"bulk high byte", "*1\r\n$\xff\r\n", Limits{}, "Protocol error: invalid bulk length"},
		{"bulk over default max", "*1\r\n$536870913\r\n", Limits{}, "Protocol error: invalid bulk length"},
		{"bulk over custom max", "*1\r\n$101\r\n", Limits{MaxBulkLen: 100}, "Protocol error: invalid bulk length"},
		{"bulk over max while unauth", "*1\r\n$101\r\n", Limits{MaxBulkLen: 100, Unauthenticated: true}, "Protocol error: invalid bulk length"},
		{"bulk unauthenticated", "*1\r\n$16385\r\n", unauth, "Protocol error: unauthenticated bulk length"},
		{"too big bulk count", "*1\r\n$" + big, Limits{}, "Protocol error: too big bulk count string"},
		{"too big bulk count later element", "*2\r\n$1\r\na\r\n" + big, Limits{}, "Protocol error: too big bulk count string"},
		{"error in second element", "*2\r\n$1\r\na\r\n$x\r\n", Limits{}, "Protocol error: invalid bulk length"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for _, mode := range []string{"ParseCommand", "Parser"} {
				var (
					args [][]byte
					n    int
					need int
					err  error
				)
				if mode == "Parser" {
					var p Parser
					args, n, need, err = p.Parse([]byte(c.in), nil, c.lim)
					if p.remaining != 0 || p.count != 0 {
						t.Errorf("%s: parser state not reset after error", mode)
					}
				} else {
					args, n, need, err = ParseCommand([]byte(c.in), nil, c.lim)
				}
				pe, ok := err.(*ProtocolError)
				if !ok {
					t.Fatalf("%s: got args=%q n=%d need=%d err=%v; want ProtocolError %q", mode, argsOf(args), n, need, err, c.msg)
				}
				if pe.Msg != c.msg || pe.Error() != c.msg {
					t.Errorf("%s: Msg = %q, want %q", mode, pe.Msg, c.msg)
				}
				if n != 0 || len(args) != 0 {
					t.Errorf("%s: error with n=%d args=%q", mode, n, argsOf(args))
				}
			}
		})
	}
}

func TestLimitsBoundaries(t *testing.T) {
	unauth := Limits{Unauthenticated: true}
	ok := []struct {
		in  string
		lim Limits
	}{
		{"*10\r\n", unauth},                            // exactly 10 elements is allowed
		{"*1\r\n$16384\r\n", unauth},                   // exactly 16384 bytes is allowed
		{"*2147483647\r\n", Limits{}},                  // INT_MAX elements announced: fine, nothing allocated
		{"*2000000\r\n", Limits{}},                     // above the pre-7.0 1024*1024 cap
		{"*1\r\n$536870912\r\n", Limits{}},             // exactly the default max
		{"*1\r\n$100\r\n", Limits{MaxBulkLen: 100}},    // exactly a custom max
		{"*1\r\n$9999\r\n", Limits{MaxBulkLen: -5}},    // <= 0 means default
		{"*11\r\n", Limits{}},                          // only unauthenticated clients are limited
		{strings.Repeat("x", InlineMaxSize), Limits{}}, // 64 KiB without newline: still waiting
		{"*" + strings.Repeat("1", InlineMaxSize-1), Limits{}},
		{"*1\r\n" + "$" + strings.Repeat("1", InlineMaxSize-1), Limits{}},
	}
	for _, c := range ok {
		args, n, need, err := ParseCommand([]byte(c.in), nil, c.lim)
		if err != nil || n != 0 || len(args) != 0 || need <= len(c.in) {
			t.Errorf("%.40q %+v: got args=%d n=%d need=%d err=%v; want incomplete", c.in, c.lim, len(args), n, need, err)
		}
	}
}

func TestParseMultibulk(t *testing.T) {
	cases := []struct {
		in   string
		want []string
		n    int
	}{
		{"*1\r\n$4\r\nPING\r\n", []string{"PING"}, 14},
		{"*3\r\n$3\r\nSET\r\n$3\r\nkey\r\n$5\r\nvalue\r\n", []string{"SET", "key", "value"}, 33},
		{"*2\r\n$0\r\n\r\n$0\r\n\r\n", []string{"", ""}, 16},
		{"*1\r\n$6\r\na\r\nb\x00c\r\n", []string{"a\r\nb\x00c"}, 16}, // binary-safe payload
		{"*1\r\n$4\r\n\r\n\r\n\r\n", []string{"\r\n\r\n"}, 14},
		{"*1\r\n$4\r\nPINGXY", []string{"PING"}, 14},          // trailing CRLF is not checked
		{"*1\rX$4\rXPING\r\n", []string{"PING"}, 14},          // LF after CR is not checked
		{"*1\r\n$4\r\nPING\r\nGARBAGE", []string{"PING"}, 14}, // only the first command
		{"*2\r\n$3\r\nGET\r\n$1\r\nk\r\n*1\r\n", []string{"GET", "k"}, 20},
	}
	for _, c := range cases {
		for _, mode := range []string{"ParseCommand", "Parser"} {
			var args [][]byte
			var n, need int
			var err error
			buf := []byte(c.in)
			if mode == "Parser" {
				var p Parser
				args, n, need, err = p.Parse(buf, nil, Limits{})
			} else {
				args, n, need, err = ParseCommand(buf, nil, Limits{})
			}
			if err != nil || n != c.n || need != 0 || fmt.Sprint(argsOf(args)) != fmt.Sprint(c.want) {
				t.Errorf("%s(%q) = %q n=%d need=%d err=%v; want %q n=%d", mode, c.in, argsOf(args), n, need, err, c.want, c.n)
			}
			for i, a := range args {
				if !within(a, buf) {
					t.Errorf("%s(%q): arg %d does not alias buf", mode, c.in, i)
				}
				if cap(a) != len(a) {
					t.Errorf("%s(%q): arg %d has cap %d > len %d", mode, c.in, i, cap(a), len(a))
				}
			}
		}
	}
}

func TestEmptyCommands(t *testing.T) {
	cases := []struct {
		in string
		n  int
	}{
		{"*0\r\n", 4},
		{"*-1\r\n", 5},
		{"*-5\r\nPING\r\n", 5},
		{"*-9223372036854775808\r\n", 23},
		{"\r\n", 2},
		{"\n", 1},
		{"   \t \r\n", 7},
		{" \x0b\x0c \n", 5},
	}
	for _, c := range cases {
		args, n, need, err := ParseCommand([]byte(c.in), make([][]byte, 3), Limits{Unauthenticated: true})
		if err != nil || n != c.n || len(args) != 0 || need != 0 {
			t.Errorf("%q: args=%q n=%d need=%d err=%v; want empty command n=%d", c.in, argsOf(args), n, need, err, c.n)
		}
	}
}

func TestIncompleteNeed(t *testing.T) {
	cases := []struct {
		in   string
		need int
	}{
		{"", 1},
		{"*", 2},
		{"*1", 3},
		{"*1\r", 4},                     // the byte after '\r' must arrive
		{"*1\r\n", 5},                   // header read, next header unknown
		{"*1\r\n$", 6},                  //
		{"*1\r\n$4\r", 8},               //
		{"*1\r\n$4\r\n", 14},            // bulk header read: exact
		{"*1\r\n$4\r\nPI", 14},          //
		{"*1\r\n$4\r\nPING\r", 14},      // two bytes after the payload needed
		{"*2\r\n$1\r\na\r\n$3\r\n", 20}, // exact for a later element
		{"*1\r\n$0\r\n", 10},
		{"PING", 5},
		{"PING\r", 6},
		{"PING\x00\r\n", 8},              // NUL hides the newline (strchr)
		{"*1\x00\r\n", 6},                // ditto for headers
		{"*1\r\n$4\x00\r\nPING\r\n", 16}, //
		{"*2147483647\r\n$1\r\na\r\n", 21},
	}
	for _, c := range cases {
		for _, mode := range []string{"ParseCommand", "Parser"} {
			var args [][]byte
			var n, need int
			var err error
			if mode == "Parser" {
				var p Parser
				args, n, need, err = p.Parse([]byte(c.in), nil, Limits{})
			} else {
				args, n, need, err = ParseCommand([]byte(c.in), nil, Limits{})
			}
			if err != nil || n != 0 || len(args) != 0 || need != c.need {
				t.Errorf("%s(%q) = args=%q n=%d need=%d err=%v; want incomplete need=%d", mode, c.in, argsOf(args), n, need, err, c.need)
			}
		}
	}
}

func TestNeedDoesNotOverflow(t *testing.T) {
	for _, l := range []string{"9223372036854775807", "9223372036854775806", "9223372036854775805"} {
		_, n, need, err := ParseCommand([]byte("*1\r\n$"+l+"\r\nabc"), nil, Limits{MaxBulkLen: 1<<63 - 1})
		if err != nil || n != 0 || need != math.MaxInt {
			t.Errorf("$%s: n=%d need=%d err=%v", l, n, need, err)
		}
	}
}

func TestInline(t *testing.T) {
	cases := []struct {
		in   string
		want []string
	}{
		{"PING\r\n", []string{"PING"}},
		{"PING\n", []string{"PING"}},
		{"SET a b\r\n", []string{"SET", "a", "b"}},
		{"  SET \t a   b  \r\n", []string{"SET", "a", "b"}},
		{"ECHO x\r\r\n", []string{"ECHO", "x"}},     // the extra \r is a separator
		{"ECHO a\rb\n", []string{"ECHO", "a", "b"}}, // so is one in the middle
		{"ECHO a\x0bb\r\n", []string{"ECHO", "a\x0bb"}},
		{"\x0bECHO x\r\n", []string{"ECHO", "x"}}, // but \v is skipped as a blank
		{"ECHO \"hello world\"\r\n", []string{"ECHO", "hello world"}},
		{"ECHO \"\"\r\n", []string{"ECHO", ""}},
		{"ECHO ''\r\n", []string{"ECHO", ""}},
		{"ECHO \"a\\nb\\r\\t\\b\\a\\\\\\\"\\q\"\r\n", []string{"ECHO", "a\nb\r\t\b\a\\\"q"}},
		{"ECHO \"\\x41\\x4g\\x00\\xfF\"\r\n", []string{"ECHO", "Ax4g\x00\xff"}},
		{"ECHO \"\\x4\"\r\n", []string{"ECHO", "x4"}},
		{"ECHO 'a\\'b'\r\n", []string{"ECHO", "a'b"}},
		{"ECHO 'a\\nb\\\\ '\r\n", []string{"ECHO", "a\\nb\\\\ "}}, // only \' is an escape in single quotes
		{"ECHO 'say \"hi\"'\r\n", []string{"ECHO", "say \"hi\""}},
		{"ECHO \"it's\"\r\n", []string{"ECHO", "it's"}},
		{"ECHO a\"b c\"\r\n", []string{"ECHO", "ab c"}},
		{"ECHO a'b'\r\n", []string{"ECHO", "ab"}},
		{"ECHO \"a\"\x0b\r\n", []string{"ECHO", "a"}}, // closing quote may be followed by any blank
		{"ECHO \"a\"\tb\r\n", []string{"ECHO", "a", "b"}},
		{"ECHO back\\slash\r\n", []string{"ECHO", "back\\slash"}},
		{"ECHO \xff\xfe\r\n", []string{"ECHO", "\xff\xfe"}},
	}
	for _, c := range cases {
		buf := []byte(c.in + "NEXT")
		args, n, need, err := ParseCommand(buf, nil, Limits{})
		if err != nil || n != len(c.in) || need != 0 || fmt.Sprint(argsOf(args)) != fmt.Sprint(c.want) {
			t.Errorf("%q = %q n=%d need=%d err=%v; want %q n=%d", c.in, argsOf(args), n, need, err, c.want, len(c.in))
		}
	}
}

func TestInlineAliasing(t *testing.T) {
	buf := []byte("SET \"plain quoted\" 'x' a\"b\" \"esc\\n\"\r\n")
	args, _, _, err := ParseCommand(buf, nil, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	want := []bool{true, true, true, false, false}
	for i, a := range args {
		if got := within(a, buf); got != want[i] {
			t.Errorf("arg %d %q: aliases buf = %v, want %v", i, a, got, want[i])
		}
		if within(a, buf) && cap(a) != len(a) {
			t.Errorf("arg %d: cap not clipped", i)
		}
	}
}

// genCommand returns one encoded command, the args it should parse to (nil
// for an empty command) and, for multibulk commands, the offsets where each
// element's header ends and where its payload plus the two trailing bytes
// end.
type genCmd struct {
	enc       []byte
	args      []string
	hdrEnds   []int
	bulkEnds  []int
	multibulk bool
}

func genCommand(r *rand.Rand) genCmd {
	switch k := r.Intn(20); {
	case k == 0:
		return genCmd{enc: []byte("*0\r\n"), multibulk: true}
	case k == 1:
		return genCmd{enc: []byte("*-1\r\n"), multibulk: true}
	case k == 2:
		return genCmd{enc: []byte("\r\n")}
	case k <= 5:
		// Inline command of plain words, sometimes quoted.
		n := 1 + r.Intn(4)
		var sb strings.Builder
		var args []string
		for i := 0; i < n; i++ {
			w := fmt.Sprintf("w%d", r.Intn(100000))
			if i > 0 {
				sb.WriteString(" ")
			}
			switch r.Intn(3) {
			case 0:
				sb.WriteString(w)
			case 1:
				sb.WriteString("\"" + w + " \\x41\"")
				w += " A"
			case 2:
				sb.WriteString("'" + w + "'")
			}
			args = append(args, w)
		}
		if r.Intn(2) == 0 {
			sb.WriteString("\r\n")
		} else {
			sb.WriteString("\n")
		}
		return genCmd{enc: []byte(sb.String()), args: args}
	default:
		n := 1 + r.Intn(6)
		var g genCmd
		g.multibulk = true
		g.enc = append(g.enc, "*"+strconv.Itoa(n)+"\r\n"...)
		for i := 0; i < n; i++ {
			var v []byte
			switch r.Intn(6) {
			case 0:
				v = nil
			case 1:
				v = []byte("\r\n\x00\r\n$3\r\n*1\r\n") // protocol-looking binary
			case 2:
				v = make([]byte, 200+r.Intn(3000))
				r.Read(v)
			default:
				v = []byte(fmt.Sprintf("key:%d", r.Intn(1000000)))
			}
			g.enc = append(g.enc, "$"+strconv.Itoa(len(v))+"\r\n"...)
			g.hdrEnds = append(g.hdrEnds, len(g.enc))
			g.enc = append(g.enc, v...)
			g.enc = append(g.enc, "\r\n"...)
			g.bulkEnds = append(g.bulkEnds, len(g.enc))
			g.args = append(g.args, string(v))
		}
		return g
	}
}

// expectedNeed is the need ParseCommand must report for a command of which
// only the first l bytes are buffered.
func (g genCmd) expectedNeed(l int) int {
	for i := range g.bulkEnds {
		if g.bulkEnds[i] > l {
			if g.hdrEnds[i] <= l {
				return g.bulkEnds[i]
			}
			return l + 1
		}
	}
	return l + 1
}

type parseFunc func(buf []byte, argv [][]byte) ([][]byte, int, int, error)

func TestPipelineRandomChunks(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	var cmds []genCmd
	var stream []byte
	for i := 0; i < 3000; i++ {
		g := genCommand(r)
		cmds = append(cmds, g)
		stream = append(stream, g.enc...)
	}
	for trial := 0; trial < 6; trial++ {
		var p Parser
		modes := map[string]parseFunc{
			"ParseCommand": func(buf []byte, argv [][]byte) ([][]byte, int, int, error) {
				return ParseCommand(buf, argv, Limits{})
			},
			"Parser": func(buf []byte, argv [][]byte) ([][]byte, int, int, error) {
				return p.Parse(buf, argv, Limits{})
			},
		}
		// Byte-by-byte feeding is slow: use a prefix of the stream for the
		// smallest chunk sizes.
		cs, ss := cmds, stream
		if trial < 2 {
			cs = cmds[:400]
			ss = nil
			for _, g := range cs {
				ss = append(ss, g.enc...)
			}
		}
		for name, parse := range modes {
			for _, honorNeed := range []bool{false, true} {
				runPipeline(t, r, name, parse, honorNeed, cs, ss, trial)
			}
		}
	}
}

func runPipeline(t *testing.T, r *rand.Rand, name string, parse parseFunc, honorNeed bool, cmds []genCmd, stream []byte, trial int) {
	t.Helper()
	maxChunk := []int{1, 7, 64, 1500, 9000, 70000}[trial]
	var (
		buf  []byte
		argv [][]byte
		next int // next command expected
		need = 1
	)
	for off := 0; off < len(stream) || len(buf) > 0; {
		if off < len(stream) {
			c := 1 + r.Intn(maxChunk)
			c = min(c, len(stream)-off)
			buf = append(buf, stream[off:off+c]...)
			off += c
			if r.Intn(4) == 0 {
				// Move the buffer, as a connection that reallocates would.
				buf = append([]byte(nil), buf...)
			}
		}
		if honorNeed && len(buf) < need && off < len(stream) {
			continue
		}
		for len(buf) > 0 {
			args, n, nd, err := parse(buf, argv)
			argv = args
			if err != nil {
				t.Fatalf("%s trial %d: command %d: %v", name, trial, next, err)
			}
			if n == 0 {
				if next >= len(cmds) {
					t.Fatalf("%s: incomplete after the last command", name)
				}
				g := cmds[next]
				want := len(buf) + 1
				if g.multibulk {
					want = g.expectedNeed(len(buf))
				}
				if nd != want || nd <= len(buf) {
					t.Fatalf("%s trial %d: command %d with %d/%d bytes: need=%d, want %d", name, trial, next, len(buf), len(g.enc), nd, want)
				}
				need = nd
				break
			}
			need = 1
			// Empty commands yield no args; skip over them in cmds.
			g := cmds[next]
			if n != len(g.enc) {
				t.Fatalf("%s trial %d: command %d: n=%d, want %d", name, trial, next, n, len(g.enc))
			}
			if !sameArgs(args, g.args) {
				t.Fatalf("%s trial %d: command %d: got %q, want %q", name, trial, next, argsOf(args), g.args)
			}
			next++
			buf = buf[n:]
		}
		if off >= len(stream) && len(buf) > 0 {
			t.Fatalf("%s trial %d: %d bytes left unparsed at command %d", name, trial, len(buf), next)
		}
	}
	if next != len(cmds) {
		t.Fatalf("%s trial %d: parsed %d commands, want %d", name, trial, next, len(cmds))
	}
}

// TestParserResumes checks that Parser really skips already parsed
// elements: its state advances while a big command trickles in, and the
// result equals the one-shot parse.
func TestParserResumes(t *testing.T) {
	const elems = 5000
	var args [][]byte
	for i := 0; i < elems; i++ {
		args = append(args, []byte(fmt.Sprintf("member-%d", i)))
	}
	stream := encodeMultibulk(args)
	var p Parser
	var buf []byte
	lastPos := 0
	var got [][]byte
	for off := 0; off < len(stream); {
		c := min(997, len(stream)-off)
		buf = append([]byte(nil), append(buf, stream[off:off+c]...)...)
		off += c
		a, n, need, err := p.Parse(buf, got, Limits{})
		got = a
		if err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			if p.pos < lastPos {
				t.Fatalf("parser went backwards: %d < %d", p.pos, lastPos)
			}
			lastPos = p.pos
			if p.count != elems || p.remaining < 1 || p.remaining > elems {
				t.Fatalf("state: %d elements, %d remaining", p.count, p.remaining)
			}
			if need <= len(buf) {
				t.Fatalf("need %d <= len %d", need, len(buf))
			}
			continue
		}
		if n != len(stream) || len(a) != elems {
			t.Fatalf("n=%d len(args)=%d", n, len(a))
		}
		for i := range a {
			if !bytes.Equal(a[i], args[i]) || !within(a[i], buf) {
				t.Fatalf("arg %d = %q", i, a[i])
			}
		}
		if p.remaining != 0 || p.count != 0 {
			t.Fatal("state not cleared after a complete command")
		}
		return
	}
	t.Fatal("command never completed")
}

func TestParserShrunkBufferStartsOver(t *testing.T) {
	var p Parser
	if _, n, _, _ := p.Parse([]byte("*2\r\n$1\r\na\r\n$1\r\n"), nil, Limits{}); n != 0 {
		t.Fatal("expected incomplete")
	}
	args, n, _, err := p.Parse([]byte("PING\r\n"), nil, Limits{}) // contract broken
	if err != nil || n != 6 || len(args) != 1 || string(args[0]) != "PING" {
		t.Fatalf("args=%q n=%d err=%v", argsOf(args), n, err)
	}
	p.Reset()
	args, n, _, err = p.Parse([]byte("*1\r\n$1\r\nx\r\n"), nil, Limits{})
	if err != nil || n != 11 || string(args[0]) != "x" {
		t.Fatalf("after Reset: args=%q n=%d err=%v", argsOf(args), n, err)
	}
}

func TestParseCommandNoAllocs(t *testing.T) {
	buf := []byte("*3\r\n$3\r\nSET\r\n$3\r\nkey\r\n$5\r\nvalue\r\n")
	argv := make([][]byte, 0, 8)
	allocs := testing.AllocsPerRun(1000, func() {
		argv, _, _, _ = ParseCommand(buf, argv, Limits{})
	})
	if allocs != 0 {
		t.Errorf("ParseCommand allocs = %v, want 0", allocs)
	}
	inline := []byte("SET key value\r\n")
	allocs = testing.AllocsPerRun(1000, func() {
		argv, _, _, _ = ParseCommand(inline, argv, Limits{})
	})
	if allocs != 0 {
		t.Errorf("ParseCommand inline allocs = %v, want 0", allocs)
	}
	var p Parser
	allocs = testing.AllocsPerRun(1000, func() {
		argv, _, _, _ = p.Parse(buf, argv, Limits{})
	})
	if allocs != 0 {
		t.Errorf("Parser.Parse allocs = %v, want 0", allocs)
	}
}

// TestParserResumingHoldsNothingPerElement: while a command of many elements arrives, the
// parser allocates nothing (it used to keep two ints per element received), and the
// arguments are made once, when the command completes, appended to the caller's slice.
func TestParserResumingHoldsNothingPerElement(t *testing.T) {
	const elems = 100000
	stream := []byte("*" + strconv.Itoa(elems) + "\r\n")
	stream = append(stream, bytes.Repeat([]byte("$1\r\nx\r\n"), elems)...)
	var p Parser
	end := 0
	argv := make([][]byte, 0, 16) // room for what the first 64 bytes hold
	allocs := testing.AllocsPerRun(1, func() {
		p.Reset()
		for end = 64; end < len(stream); end += 64 {
			if _, n, _, err := p.Parse(stream[:end], argv, Limits{}); n != 0 || err != nil {
				t.Fatalf("complete early at %d: %v", end, err)
			}
		}
	})
	if allocs != 0 {
		t.Fatalf("%v allocations while the command was incomplete; want 0", allocs)
	}
	prefix := [][]byte{[]byte("before")}
	args, n, _, err := p.ParseAppend(stream, prefix, Limits{})
	if err != nil || n != len(stream) || len(args) != elems+1 || string(args[0]) != "before" || string(args[elems]) != "x" {
		t.Fatalf("ParseAppend: %d args, n=%d, err=%v", len(args), n, err)
	}
	if got, n, _, _ := p.ParseAppend([]byte("*2\r\n$1\r\n"), prefix, Limits{}); n != 0 || len(got) != 1 {
		t.Fatalf("an incomplete command changed argv: %d args", len(got))
	}
}

func BenchmarkParseCommand(b *testing.B) {
	var stream []byte
	const cmds = 1000
	for i := 0; i < cmds; i++ {
		stream = append(stream, encodeMultibulk([][]byte{[]byte("SET"), []byte(fmt.Sprintf("key:%06d", i)), []byte("value-value-value")})...)
	}
	argv := make([][]byte, 0, 8)
	b.SetBytes(int64(len(stream) / cmds))
	b.ReportAllocs()
	b.ResetTimer()
	buf := stream
	for i := 0; i < b.N; i++ {
		if len(buf) == 0 {
			buf = stream
		}
		args, n, _, err := ParseCommand(buf, argv, Limits{})
		if err != nil || n == 0 || len(args) != 3 {
			b.Fatal("bad parse")
		}
		argv = args
		buf = buf[n:]
	}
}

func BenchmarkParseInline(b *testing.B) {
	buf := []byte("SET key:000001 value-value-value\r\n")
	argv := make([][]byte, 0, 8)
	b.SetBytes(int64(len(buf)))
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		argv, _, _, _ = ParseCommand(buf, argv, Limits{})
	}
}

// BenchmarkTrickle feeds one command of 100k small elements in 4 KiB reads,
// calling the parser after every read: ParseCommand re-parses from the start
// each time (quadratic), Parser resumes (linear).
func BenchmarkTrickle(b *testing.B) {
	var args [][]byte
	for i := 0; i < 100000; i++ {
		args = append(args, []byte(strconv.Itoa(i)))
	}
	stream := encodeMultibulk(args)
	run := func(b *testing.B, parse func(buf []byte, argv [][]byte) ([][]byte, int, int, error)) {
		argv := make([][]byte, 0, len(args))
		buf := make([]byte, 0, len(stream))
		b.SetBytes(int64(len(stream)))
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			buf = buf[:0]
			for off := 0; off < len(stream); {
				c := min(4096, len(stream)-off)
				buf = append(buf, stream[off:off+c]...)
				off += c
				a, n, _, err := parse(buf, argv)
				if err != nil {
					b.Fatal(err)
				}
				argv = a
				if n > 0 && len(a) != len(args) {
					b.Fatal("bad parse")
				}
			}
		}
	}
	b.Run("ParseCommand", func(b *testing.B) {
		run(b, func(buf []byte, argv [][]byte) ([][]byte, int, int, error) { return ParseCommand(buf, argv, Limits{}) })
	})
	b.Run("Parser", func(b *testing.B) {
		var p Parser
		run(b, func(buf []byte, argv [][]byte) ([][]byte, int, int, error) { return p.Parse(buf, argv, Limits{}) })
	})
}
