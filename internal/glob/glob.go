// Package glob implements Redis's glob-style pattern matching (the
// stringmatchlen dialect used by KEYS, SCAN MATCH, PSUBSCRIBE, CONFIG GET,
// ACL key patterns, ...).
//
// Syntax, byte-oriented and binary-safe:
//
//	"*"      any run of bytes (including none)
//	"?"      exactly one byte
//	"[abc]"  one byte from the class; "[^abc]" one byte not in it
//	"[a-z]"  a range; reversed ranges ("[z-a]") are swapped
//	"\x"     the byte x literally (a lone trailing '\' is a literal '\')
//
// The package reproduces Redis's behaviour at the edges, including:
//
//   - an empty subject is matched only by the empty pattern: "*" does not
//     match "" (KEYS and SCAN shortcut the bare "*" pattern before calling
//     the matcher; callers that want that must do the same);
//   - inside a class, "\x" is a literal x compared case-sensitively even
//     when nocase is set; "-" is a range operator only with a byte on each
//     side, and the byte after it is taken literally even if it is ']' (so
//     "[a-]" does not close there);
//   - an unterminated class ("[abc") ends at the end of the pattern, and
//     "[" alone matches nothing while "[^" matches any one byte;
//   - with nocase, range ends are swapped first and lowered second, so
//     "[Z-a]" matches nothing; only ASCII letters fold (C locale tolower);
//   - range bounds compare as C chars do in Redis on x86-64 Linux, i.e.
//     signed: a byte >= 0x80 sorts below 0x00 (so "[a-\xff]" means
//     "\xff..a"), and with nocase glibc's tolower then maps those negative
//     values back to 128..254 (see lowerC);
//   - Redis 7's recursion guard: a match that has to go through more than
//     1000 star groups (runs of '*') other than a trailing one fails.
//
// Matching is iterative with single-star backtracking (when a later '*' is
// reached, earlier ones are never revisited, which is the same cut Redis's
// skipLongerMatches makes), so it costs O(len(pattern) * len(s)) in the
// worst case, never exponential, and uses no recursion or allocation.
package glob

// maxStars is Redis's nesting limit on star groups in one match.
const maxStars = 1000

// Match reports whether s matches pattern, with ASCII case folding when
// nocase is set. It neither retains nor modifies its arguments.
func Match(pattern, s []byte, nocase bool) bool {
	return match(pattern, s, nocase)
}

// MatchString is Match for strings, without converting (or allocating).
func MatchString(pattern, s string, nocase bool) bool {
	return match(pattern, s, nocase)
}

type text interface{ ~string | ~[]byte }

func match[T text](p, s T, nocase bool) bool {
	pi, si := 0, 0
	starRest := -1 // index in p after the latest star group; -1: none yet
	starAt := 0    // position in s where the text after that star is being tried
	stars := 0     // star groups entered so far
	for {
		if pi < len(p) && si < len(s) {
			if p[pi] == '*' {
				for pi+1 < len(p) && p[pi+1] == '*' {
					pi++
				}
				if pi == len(p)-1 {
					return true // a trailing star takes the rest of s
				}
				stars++
				if stars > maxStars {
					return false
				}
				pi++
				starRest, starAt = pi, si
				continue
			}
			var ok bool
			next := pi + 1
			switch c := p[pi]; c {
			case '?', '[', '\\':
				ok, next = matchOne(p, pi, s[si], nocase)
			default: // literal byte: the common case, kept inline
				ok = c == s[si] || (nocase && lowerC(int(c)) == lowerC(int(s[si])))
			}
			if ok {
				pi = next
				si++
				if si < len(s) {
					continue
				}
				// s is used up: only stars may remain in the pattern.
				for pi < len(p) && p[pi] == '*' {
					pi++
				}
				if pi == len(p) {
					return true
				}
			}
		} else if pi == len(p) && si == len(s) {
			return true
		}
		// This attempt failed: let the latest star take one more byte.
		if starRest < 0 {
			return false
		}
		starAt++
		if starAt >= len(s) {
			return false
		}
		pi, si = starRest, starAt
	}
}

// matchOne matches the single-byte pattern element at p[pi] (anything but
// '*') against c. next is the index just past the element.
func matchOne[T text](p T, pi int, c byte, nocase bool) (ok bool, next int) {
	switch p[pi] {
	case '?':
		return true, pi + 1
	case '[':
		return matchClass(p, pi+1, c, nocase)
	case '\\':
		if pi+1 < len(p) {
			pi++
		}
	}
	return eq(p[pi], c, nocase), pi + 1
}

// matchClass matches c against the class whose body starts at p[i] (just
// after the '['). next is the index just past the closing ']' or, for an
// unterminated class, len(p).
func matchClass[T text](p T, i int, c byte, nocase bool) (ok bool, next int) {
	negate := i < len(p) && p[i] == '^'
	if negate {
		i++
	}
	hit := false
	for {
		if i >= len(p) {
			// Unterminated: the class ends with the pattern. (Redis steps
			// back one byte and then forward again past it.)
			next = len(p)
			break
		}
		b := p[i]
		if b == '\\' && i+1 < len(p) {
			i++
			if p[i] == c { // no case folding for escaped bytes
				hit = true
			}
		} else if b == ']' {
			next = i + 1
			break
		} else if i+2 < len(p) && p[i+1] == '-' {
			lo, hi := int(int8(b)), int(int8(p[i+2]))
			x := int(int8(c))
			if lo > hi {
				lo, hi = hi, lo
			}
			if nocase {
				lo, hi, x = lowerC(lo), lowerC(hi), lowerC(x)
			}
			if x >= lo && x <= hi {
				hit = true
			}
			i += 2
		} else if eq(b, c, nocase) {
			hit = true
		}
		i++
	}
	return hit != negate, next
}

func eq(a, b byte, nocase bool) bool {
	if a == b {
		return true
	}
	return nocase && lowerC(int(a)) == lowerC(int(b))
}

// lowerC is glibc's tolower in the "C" locale applied to a C char: 'A'..'Z'
// become lower case and, because glibc's table also covers signed chars,
// -128..-2 come back as c+256 while -1 (EOF) stays -1. Only the range test
// can tell the difference (it maps bytes one to one, so equality is
// unaffected): with nocase, "[\x80-z]" is the empty range 128..122.
func lowerC(c int) int {
	switch {
	case c >= 'A' && c <= 'Z':
		return c + ('a' - 'A')
	case c >= -128 && c <= -2:
		return c + 256
	}
	return c
}
