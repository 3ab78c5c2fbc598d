package glob

import (
	"bytes"
	"math/rand"
	"strings"
	"testing"
	"time"
)

// matchCases were checked against Redis 7.0.15: the case-sensitive ones with
// KEYS on a live server, the nocase ones against its stringmatchlen.
var matchCases = []struct {
	pattern, s string
	nocase     bool
	want       bool
}{
	// Empty pattern / subject.
	{"", "", false, true},
	{"", "a", false, false},
	{"a", "", false, false},
	{"*", "", false, false}, // Redis: the matcher never sees "" as matching "*"
	{"**", "", false, false},
	{"?", "", false, false},
	{"[a]", "", false, false},

	// Stars.
	{"*", "anything", false, true},
	{"*", "\x00\xff\r\n", false, true},
	{"***", "x", false, true},
	{"a*", "a", false, true},
	{"a**", "a", false, true},
	{"a*b", "ab", false, true},
	{"a*b", "axxxb", false, true},
	{"a*b", "axxxbc", false, false},
	{"*b", "abab", false, true},
	{"*a*b*", "xxaxxbxx", false, true},
	{"*a*b*", "xxbxxaxx", false, false},
	{"h*llo", "hllo", false, true},
	{"h*llo", "heeeello", false, true},
	{"user:*:name", "user:1000:name", false, true},
	{"user:*:name", "user:1000:email", false, false},
	{"*.png", "cdn/logo.png", false, true},
	{"a*?", "a", false, false},
	{"a*?", "ab", false, true},
	{"*?*", "a", false, true},
	{"*?*", "", false, false},

	// Question mark.
	{"h?llo", "hello", false, true},
	{"h?llo", "hllo", false, false},
	{"???", "abc", false, true},
	{"???", "ab", false, false},
	{"?", "\x00", false, true},

	// Classes.
	{"h[ae]llo", "hello", false, true},
	{"h[ae]llo", "hallo", false, true},
	{"h[ae]llo", "hillo", false, false},
	{"h[^e]llo", "hallo", false, true},
	{"h[^e]llo", "hello", false, false},
	{"h[a-b]llo", "hbllo", false, true},
	{"h[a-b]llo", "hcllo", false, false},
	{"[z-a]", "m", false, true}, // reversed range
	{"[z-a]", "A", false, false},
	{"[0-9][0-9]", "42", false, true},
	{"[]", "]", false, false},      // "[]" is an empty class: nothing matches
	{"[]]", "]", false, false},     // ... and the second ']' is a literal after it
	{"[]]", "]]", false, false},    //
	{"[]a]", "]", false, false},    //
	{"[^]", "x", false, true},      // empty negated class: anything
	{"[a-]", "-", false, false},    // '-' then ']' is a range a..']'
	{"[a-]", "^", false, true},     // ']'(93) <= '^'(94) <= 'a'(97)
	{"[a-]b", "^", false, true},    // the class never closed: it is one element
	{"[a-]b", "b", false, true},    // ... with 'b' as a member
	{"[a-]b", "^b", false, false},  // ... so it matches one byte, not two
	{"[-a]", "-", false, true},     // a leading '-' is literal
	{"[a-c-e]", "d", false, false}, //
	{"[a-c-e]", "-", false, true},  //
	{"[\\]]", "]", false, true},    // escaped ']' inside a class
	{"[\\-]", "-", false, true},
	{"[\\^a]", "^", false, true},
	{"[\\\\]", "\\", false, true},
	{"[a\\", "\\", false, true}, // unterminated: trailing '\' is literal
	{"[a\\", "a", false, true},
	{"[abc", "b", false, true}, // unterminated class ends with the pattern
	{"[abc", "d", false, false},
	{"[abc", "bc", false, false},
	{"[", "[", false, false}, // "[" alone matches nothing
	{"[", "a", false, false},
	{"[^", "a", false, true}, // "[^" alone matches any byte
	{"[^", "", false, false},
	{"[^", "ab", false, false},
	{"x[", "x[", false, false},
	{"[*]", "*", false, true},
	{"[*]", "a", false, false},
	{"[?]", "?", false, true},
	{"[[]", "[", false, true},
	{"[a-\xff]", "\xff", false, true}, // signed chars: range is \xff(-1)..'a'
	{"[a-\xff]", "0", false, true},
	{"[a-\xff]", "b", false, false},
	{"[\x80-\xff]", "\x90", false, true},
	{"[\x80-\xff]", "a", false, false},

	// Escapes outside classes.
	{"\\*", "*", false, true},
	{"\\*", "a", false, false},
	{"\\?", "?", false, true},
	{"\\[a]", "[a]", false, true},
	{"a\\", "a\\", false, true}, // a trailing '\' is a literal '\'
	{"\\a", "a", false, true},
	{"\\\\", "\\", false, true},
	{"*\\*", "ab*", false, true},

	// Case folding.
	{"HELLO", "hello", false, false},
	{"HELLO", "hello", true, true},
	{"h?LLo", "HeLlO", true, true},
	{"[A-C]x", "bX", true, true},
	{"[a-c]", "B", true, true},
	{"[abc]", "B", true, true},
	{"[^abc]", "B", true, false},
	{"[Z-a]", "_", false, true}, // 'Z'(90)..'a'(97)
	{"[Z-a]", "_", true, false}, // swapped then lowered: 'z'..'a' is empty
	{"[Z-a]", "z", true, false},
	{"[\\A]", "a", true, false}, // escaped class members compare exactly
	{"[\\A]", "A", true, true},
	{"\\A", "a", true, true},              // but escapes outside classes fold
	{"\xc3\x89", "\xc3\xa9", true, false}, // only ASCII folds
	{"[\x80-z]", "m", false, true},        // -128..122
	{"[\x80-z]", "m", true, false},        // tolower(-128) is 128: 128..122 is empty
	{"[\xff-z]", "m", true, true},         // tolower(-1) stays -1 (EOF)
}

func TestMatchTable(t *testing.T) {
	for _, c := range matchCases {
		if got := Match([]byte(c.pattern), []byte(c.s), c.nocase); got != c.want {
			t.Errorf("Match(%q, %q, nocase=%v) = %v, want %v", c.pattern, c.s, c.nocase, got, c.want)
		}
		if got := MatchString(c.pattern, c.s, c.nocase); got != c.want {
			t.Errorf("MatchString(%q, %q, nocase=%v) = %v, want %v", c.pattern, c.s, c.nocase, got, c.want)
		}
	}
}

// refMatch is a direct recursive statement of the semantics (exponential in
// the worst case, so only for short inputs): Match must agree with it.
func refMatch(p, s []byte, nocase bool) bool {
	if len(s) == 0 {
		return len(p) == 0
	}
	return refRest(p, s, nocase)
}

// refRest matches p against a non-empty s.
func refRest(p, s []byte, nocase bool) bool {
	if len(p) == 0 {
		return false
	}
	if p[0] == '*' {
		for len(p) > 1 && p[1] == '*' {
			p = p[1:]
		}
		if len(p) == 1 {
			return true
		}
		for i := range s {
			if refRest(p[1:], s[i:], nocase) {
				return true
			}
		}
		return false
	}
	ok, next := matchOne(p, 0, s[0], nocase)
	if !ok {
		return false
	}
	p, s = p[next:], s[1:]
	if len(s) == 0 {
		for len(p) > 0 && p[0] == '*' {
			p = p[1:]
		}
		return len(p) == 0
	}
	return refRest(p, s, nocase)
}

func TestMatchAgreesWithReference(t *testing.T) {
	r := rand.New(rand.NewSource(42))
	palpha := []byte("aAbB*?[]^-\\z\x80\xff")
	salpha := []byte("aAbBz-]^\\[*?\x80\xff")
	for i := 0; i < 300000; i++ {
		p := make([]byte, r.Intn(10))
		for j := range p {
			p[j] = palpha[r.Intn(len(palpha))]
		}
		s := make([]byte, r.Intn(9))
		for j := range s {
			s[j] = salpha[r.Intn(len(salpha))]
		}
		nocase := r.Intn(2) == 0
		want := refMatch(p, s, nocase)
		if got := Match(p, s, nocase); got != want {
			t.Fatalf("Match(%q, %q, %v) = %v, reference says %v", p, s, nocase, got, want)
		}
		if got := MatchString(string(p), string(s), nocase); got != want {
			t.Fatalf("MatchString(%q, %q, %v) = %v, reference says %v", p, s, nocase, got, want)
		}
	}
}

// TestStarGroupLimit pins Redis's recursion guard: a match that must pass
// through more than 1000 non-trailing star groups fails (checked on
// redis-server 7.0.15 with KEYS).
func TestStarGroupLimit(t *testing.T) {
	s := []byte(strings.Repeat("a", 1200) + "b")
	for _, c := range []struct {
		groups int
		want   bool
	}{{999, true}, {1000, true}, {1001, false}, {1002, false}} {
		p := []byte(strings.Repeat("*a", c.groups-1) + "*b")
		if got := Match(p, s, false); got != c.want {
			t.Errorf("%d star groups: got %v, want %v", c.groups, got, c.want)
		}
	}
	// A trailing star does not count: it matches without going deeper.
	p := []byte(strings.Repeat("*a", 1000) + "*")
	if !Match(p, s, false) {
		t.Error("1000 star groups plus a trailing star should match")
	}
	// Reaching the limit only matters if the match gets that far.
	p = []byte("x" + strings.Repeat("*a", 2000))
	if Match(p, s, false) {
		t.Error("unexpected match")
	}
}

// TestNoExponentialBlowup runs patterns that make a naive backtracking
// matcher take exponential time.
func TestNoExponentialBlowup(t *testing.T) {
	start := time.Now()
	cases := []struct{ p, s string }{
		{strings.Repeat("*a", 30) + "*b", strings.Repeat("a", 10000)},
		{strings.Repeat("a*", 30) + "b", strings.Repeat("a", 10000)},
		{strings.Repeat("*?", 900) + "b", strings.Repeat("a", 5000)},
		{"*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*b", strings.Repeat("a", 100000)},
		{strings.Repeat("*[a-z]", 500) + "!", strings.Repeat("q", 3000)},
	}
	for _, c := range cases {
		if MatchString(c.p, c.s, false) {
			t.Errorf("%.20q... unexpectedly matched", c.p)
		}
	}
	t.Logf("took %v", time.Since(start))
}

func TestMatchNoAllocs(t *testing.T) {
	p, s := []byte("user:*:[a-z]?name"), []byte("user:12345:xyname")
	ps, ss := string(p), string(s)
	allocs := testing.AllocsPerRun(1000, func() {
		if !Match(p, s, true) || !MatchString(ps, ss, false) {
			t.Fatal("no match")
		}
	})
	if allocs != 0 {
		t.Errorf("allocs = %v, want 0", allocs)
	}
}

func TestMatchDoesNotModifyInput(t *testing.T) {
	p, s := []byte("[A-Z]*\\x"), []byte("QWERTYx")
	p0, s0 := bytes.Clone(p), bytes.Clone(s)
	Match(p, s, true)
	if !bytes.Equal(p, p0) || !bytes.Equal(s, s0) {
		t.Fatal("input modified")
	}
}

func BenchmarkMatch(b *testing.B) {
	cases := map[string]struct{ p, s string }{
		"prefix":  {"user:*", "user:1234:session"},
		"class":   {"[a-z]*:[0-9]*", "user:1234"},
		"literal": {"user:1234:session", "user:1234:session"},
		"adverse": {"*a*a*a*a*a*a*a*b", strings.Repeat("a", 1000)},
	}
	for name, c := range cases {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				MatchString(c.p, c.s, false)
			}
		})
	}
}
