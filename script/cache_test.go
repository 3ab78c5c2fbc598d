package script

import (
	"strconv"
	"testing"
)

// The cache drops its oldest scripts past its byte bound, and finds a script by SHA in any case.
func TestScriptCache_BoundedAndCaseInsensitive(t *testing.T) {
	sc := NewCache(1000)
	var first *Script
	for i := range 100 {
		s, err := sc.Load([]byte("return " + strconv.Itoa(i) + " -- padding padding padding"))
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			first = s
		}
	}
	if sc.bytes > sc.maxLen {
		t.Fatalf("cache holds %d bytes, bound %d", sc.bytes, sc.maxLen)
	}
	if sc.Get([]byte(first.sha)) != nil {
		t.Fatal("oldest script still cached past the bound")
	}
	last, _ := sc.Load([]byte("return 99 -- padding padding padding"))
	upper := []byte(last.sha)
	for i, ch := range upper {
		if ch >= 'a' && ch <= 'f' {
			upper[i] = ch - 'a' + 'A'
		}
	}
	if sc.Get(upper) != last {
		t.Fatal("upper-case SHA not found")
	}
	sc.Flush()
	if sc.Get([]byte(last.sha)) != nil || sc.bytes != 0 {
		t.Fatal("flush left scripts")
	}
}

func TestParseShebang(t *testing.T) {
	cases := []struct {
		body    string
		flags   Flags
		code    string
		errText string
	}{
		{"return 1", 0, "return 1", ""},
		{"#!lua\nreturn 1", FlagShebang, "\nreturn 1", ""},
		{"#!lua flags=no-writes,allow-oom\nreturn 1", FlagShebang | FlagNoWrites | FlagAllowOOM, "\nreturn 1", ""},
		{"#!lua flags=\nreturn 1", FlagShebang, "\nreturn 1", ""},
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
