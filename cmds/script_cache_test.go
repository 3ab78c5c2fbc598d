package cmds

import (
	"strconv"
	"testing"
)

// The cache drops its oldest scripts past its byte bound, and finds a script by SHA in any case.
func TestScriptCache_BoundedAndCaseInsensitive(t *testing.T) {
	sc := &scriptCache{bySHA: map[string]*cachedScript{}, maxLen: 1000}
	var first *cachedScript
	for i := range 100 {
		s, errText := sc.load([]byte("return " + strconv.Itoa(i) + " -- padding padding padding"))
		if errText != "" {
			t.Fatal(errText)
		}
		if i == 0 {
			first = s
		}
	}
	if sc.bytes > sc.maxLen {
		t.Fatalf("cache holds %d bytes, bound %d", sc.bytes, sc.maxLen)
	}
	if sc.get([]byte(first.sha)) != nil {
		t.Fatal("oldest script still cached past the bound")
	}
	last, _ := sc.load([]byte("return 99 -- padding padding padding"))
	upper := []byte(last.sha)
	for i, ch := range upper {
		if ch >= 'a' && ch <= 'f' {
			upper[i] = ch - 'a' + 'A'
		}
	}
	if sc.get(upper) != last {
		t.Fatal("upper-case SHA not found")
	}
	sc.flush()
	if sc.get([]byte(last.sha)) != nil || sc.bytes != 0 {
		t.Fatal("flush left scripts")
	}
}

func TestParseShebang(t *testing.T) {
	cases := []struct {
		body    string
		flags   scriptFlags
		code    string
		errText string
	}{
		{"return 1", 0, "return 1", ""},
		{"#!lua\nreturn 1", scriptShebang, "\nreturn 1", ""},
		{"#!lua flags=no-writes,allow-oom\nreturn 1", scriptShebang | scriptNoWrites | scriptAllowOOM, "\nreturn 1", ""},
		{"#!lua flags=\nreturn 1", scriptShebang, "\nreturn 1", ""},
		{"#!lua flags=bad\nreturn 1", 0, "", "ERR Unexpected flag in script shebang: bad"},
		{"#!lua foo\nreturn 1", 0, "", "ERR Unknown lua shebang option: foo"},
		{"#!foo\nreturn 1", 0, "", "ERR Unexpected engine in script shebang: #!foo"},
	}
	for _, tc := range cases {
		flags, code, errText := parseShebang(tc.body)
		if flags != tc.flags || code != tc.code || errText != tc.errText {
			t.Errorf("%q: %v %q %q, want %v %q %q", tc.body, flags, code, errText, tc.flags, tc.code, tc.errText)
		}
	}
}
