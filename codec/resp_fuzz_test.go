package codec

import (
	"bytes"
	"strings"
	"testing"
)

// FuzzParseCommand checks ParseCommand's invariants on arbitrary input:
// it never panics; n <= len(buf); errors are well-formed ProtocolErrors;
// multibulk args alias buf[:n] and inline args either alias buf[:n] or are
// fresh copies; re-encoding the args as a multibulk and parsing that gives the
// same args; need never overshoots the point where the command completes;
// and Parser fed the same bytes in two reads agrees with ParseCommand.
func FuzzParseCommand(f *testing.F) {
	seeds := []string{
		"*3\r\n$3\r\nSET\r\n$3\r\nkey\r\n$5\r\nvalue\r\n",
		"*1\r\n$4\r\nPING\r\n*1\r\n$4\r\nPING\r\n",
		"*2\r\n$0\r\n\r\n$6\r\na\r\nb\x00c\r\n",
		"*1\rX$4\rXPINGXY",
		"*0\r\n",
		"*-1\r\n",
		"*2147483648\r\n",
		"*11\r\n",
		"*1\r\n$16385\r\n",
		"*1\r\n$-1\r\n",
		"*1\r\nfoo\r\n",
		"*1\r\n$4\x00\r\nPING\r\n",
		"PING\r\n",
		"SET \"a b\" 'c\\'d' e\"f g\"\r\n",
		"ECHO \"\\x41\\x4g\\n\"\r\n",
		"ECHO \"unterminated\r\n",
		"ECHO 'a'b\n",
		"\r\n",
		"\x0b\x0c \t\n",
		"",
		"*",
	}
	for _, s := range seeds {
		f.Add([]byte(s), false, uint16(0), uint16(3))
		f.Add([]byte(s), true, uint16(5), uint16(11))
	}
	f.Fuzz(func(t *testing.T, data []byte, unauth bool, maxBulk uint16, split uint16) {
		lim := Limits{Unauthenticated: unauth, MaxBulkLen: int64(maxBulk)} // 0: default
		args, n, need, err := ParseCommand(data, nil, lim)
		checkResult(t, data, args, n, need, err)

		multibulk := len(data) > 0 && data[0] == '*'
		for i, a := range args {
			if cap(a) < len(a) {
				t.Fatalf("arg %d: cap < len", i)
			}
			if multibulk && !within(a, data[:n]) {
				t.Fatalf("multibulk arg %d not inside buf[:n]", i)
			}
			if within(a, data) && !within(a, data[:n]) {
				t.Fatalf("arg %d points past n", i)
			}
			if within(a, data) && cap(a) != len(a) {
				t.Fatalf("arg %d aliases buf without a clipped cap", i)
			}
		}

		// Round trip through the multibulk encoding.
		if n > 0 && len(args) > 0 {
			enc := encodeMultibulk(args)
			args2, n2, _, err2 := ParseCommand(enc, nil, Limits{MaxBulkLen: 1 << 62})
			if err2 != nil || n2 != len(enc) || len(args2) != len(args) {
				t.Fatalf("re-parse: n=%d/%d err=%v args=%d/%d", n2, len(enc), err2, len(args2), len(args))
			}
			for i := range args {
				if !bytes.Equal(args[i], args2[i]) {
					t.Fatalf("re-parse arg %d: %q != %q", i, args2[i], args[i])
				}
			}
		}

		// A strict prefix of a complete command is incomplete (or, being
		// large, hit a "too big" limit), and its need never goes past n.
		if n > 0 {
			for _, k := range []int{int(split) % n, n - 1} {
				a, pn, pneed, perr := ParseCommand(data[:k], nil, lim)
				if perr != nil {
					if !strings.Contains(perr.Error(), "too big") {
						t.Fatalf("prefix %d of a complete command: %v", k, perr)
					}
					continue
				}
				if pn != 0 || len(a) != 0 {
					t.Fatalf("prefix %d/%d parsed as complete (n=%d)", k, n, pn)
				}
				if pneed > n {
					t.Fatalf("prefix %d: need %d overshoots command end %d", k, pneed, n)
				}
			}
		}

		// Parser over two reads agrees with ParseCommand.
		var p Parser
		k := 0
		if len(data) > 0 {
			k = int(split) % (len(data) + 1)
		}
		pa, pn, pneed, perr := p.Parse(data[:k], nil, lim)
		if pn == 0 && perr == nil {
			buf := append([]byte(nil), data...) // moved, as after a realloc
			pa, pn, pneed, perr = p.Parse(buf, nil, lim)
			sa, sn, sneed, serr := ParseCommand(buf, nil, lim)
			same(t, "two reads", pa, pn, pneed, perr, sa, sn, sneed, serr)
		} else {
			sa, sn, sneed, serr := ParseCommand(data[:k], nil, lim)
			same(t, "first read", pa, pn, pneed, perr, sa, sn, sneed, serr)
		}
	})
}

func checkResult(t *testing.T, buf []byte, args [][]byte, n, need int, err error) {
	t.Helper()
	if n < 0 || n > len(buf) {
		t.Fatalf("n=%d outside [0, %d]", n, len(buf))
	}
	if err != nil {
		pe, ok := err.(*ProtocolError)
		if !ok {
			t.Fatalf("error %T %v is not a *ProtocolError", err, err)
		}
		if !strings.HasPrefix(pe.Msg, "Protocol error: ") || strings.ContainsAny(pe.Msg, "\r\n") {
			t.Fatalf("malformed message %q", pe.Msg)
		}
		if n != 0 || len(args) != 0 || need != 0 {
			t.Fatalf("error with n=%d args=%d need=%d", n, len(args), need)
		}
		return
	}
	if n == 0 {
		if need <= len(buf) {
			t.Fatalf("incomplete with need=%d <= len=%d", need, len(buf))
		}
		if len(args) != 0 {
			t.Fatalf("incomplete with %d args", len(args))
		}
	} else if need != 0 {
		t.Fatalf("complete with need=%d", need)
	}
}

func same(t *testing.T, what string, a [][]byte, n, need int, err error, b [][]byte, bn, bneed int, berr error) {
	t.Helper()
	if n != bn || need != bneed || len(a) != len(b) || (err == nil) != (berr == nil) ||
		(err != nil && err.Error() != berr.Error()) {
		t.Fatalf("%s: Parser n=%d need=%d args=%d err=%v; ParseCommand n=%d need=%d args=%d err=%v",
			what, n, need, len(a), err, bn, bneed, len(b), berr)
	}
	for i := range a {
		if !bytes.Equal(a[i], b[i]) {
			t.Fatalf("%s: arg %d differs: %q vs %q", what, i, a[i], b[i])
		}
	}
}
