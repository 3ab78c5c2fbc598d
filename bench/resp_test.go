package bench

import (
	"strings"
	"testing"
)

func TestReplyReader_KindsAndSizes(t *testing.T) {
	replies := []struct {
		wire string
		kind replyKind
		msg  string
	}{
		{"+OK\r\n", replyValue, ""},
		{"-ERR unknown command 'HSET'\r\n", replyError, "ERR unknown command 'HSET'"},
		{":42\r\n", replyValue, ""},
		{"$5\r\nhello\r\n", replyValue, ""},
		{"$0\r\n\r\n", replyValue, ""},
		{"$-1\r\n", replyNil, ""},
		{"*-1\r\n", replyNil, ""},
		{"*3\r\n$1\r\na\r\n:1\r\n*1\r\n$-1\r\n", replyValue, ""},
		{"*2\r\n-ERR inner\r\n+OK\r\n", replyValue, ""},
		{"_\r\n", replyNil, ""},
		{",3.14\r\n", replyValue, ""},
		{"#t\r\n", replyValue, ""},
		{"(123456789012345678901234567890\r\n", replyValue, ""},
		{"=15\r\ntxt:Some string\r\n", replyValue, ""},
		{"!21\r\nSYNTAX invalid syntax\r\n", replyError, "SYNTAX invalid syntax"},
		{"%2\r\n+server\r\n+redis\r\n+proto\r\n:3\r\n", replyValue, ""},
		{"~2\r\n+a\r\n+b\r\n", replyValue, ""},
		{"|1\r\n+ttl\r\n:3\r\n$2\r\nhi\r\n", replyValue, ""},
		{">2\r\n+message\r\n+x\r\n-ERR after push\r\n", replyError, "ERR after push"},
	}
	var all strings.Builder
	for _, r := range replies {
		all.WriteString(r.wire)
	}
	// A tiny buffer forces long lines and bulk payloads across refills.
	rr := newReplyReader(strings.NewReader(all.String()), 16)
	for _, r := range replies {
		kind, n, msg, err := rr.read()
		if err != nil {
			t.Fatalf("%q: %v", r.wire, err)
		}
		if kind != r.kind || msg != r.msg || n != len(r.wire) {
			t.Errorf("%q: kind %d msg %q size %d, want %d %q %d", r.wire, kind, msg, n, r.kind, r.msg, len(r.wire))
		}
	}
	if rr.buffered() != 0 {
		t.Errorf("%d bytes left", rr.buffered())
	}
}

func TestReplyReader_ProtocolErrors(t *testing.T) {
	for _, wire := range []string{"?x\r\n", "$abc\r\n", "+OK\n", "\r\n", "*1\r\n"} {
		rr := newReplyReader(strings.NewReader(wire), 64)
		if _, _, _, err := rr.read(); err == nil {
			t.Errorf("%q: no error", wire)
		}
	}
}
