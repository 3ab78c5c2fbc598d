package config

import (
	"strconv"
	"strings"
)

// parseInt parses a decimal integer strictly: an optional '-', then digits,
// no '+', no spaces and no leading zeros (except "0" itself).
func parseInt(s string) (int64, bool) {
	if s == "0" {
		return 0, true
	}
	digits := strings.TrimPrefix(s, "-")
	if digits == "" || digits[0] < '1' || digits[0] > '9' {
		return 0, false
	}
	for i := 1; i < len(digits); i++ {
		if digits[i] < '0' || digits[i] > '9' {
			return 0, false
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, false
	}
	return n, true
}

// isSpace reports whether c is ASCII white space (as C's isspace).
func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'
}

func hexVal(c byte) (byte, bool) {
	switch {
	case c >= '0' && c <= '9':
		return c - '0', true
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10, true
	case c >= 'A' && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}

// splitArgs splits a configuration line into arguments using redis.conf
// quoting rules:
//
//   - arguments are separated by white space;
//   - "double quotes" allow the escapes \n \r \t \b \a \xHH, and a backslash
//     before any other character yields that character;
//   - 'single quotes' are literal except for \' (a single quote);
//   - a closing quote must be followed by white space or the end of line.
//
// ok is false when quotes are unbalanced or a closing quote is followed by
// another character.
func splitArgs(line string) (args []string, ok bool) {
	i, n := 0, len(line)
	for {
		for i < n && isSpace(line[i]) {
			i++
		}
		if i >= n {
			return args, true
		}
		var cur []byte
		const (
			plain = iota
			double
			single
		)
		state := plain
	token:
		for {
			switch state {
			case double:
				if i >= n {
					return nil, false
				}
				c := line[i]
				switch {
				case c == '\\' && i+3 < n && line[i+1] == 'x':
					hi, ok1 := hexVal(line[i+2])
					lo, ok2 := hexVal(line[i+3])
					if ok1 && ok2 {
						cur = append(cur, hi<<4|lo)
						i += 4
						continue
					}
					cur = append(cur, 'x') // "\x" without two hex digits: plain x
					i += 2
				case c == '\\' && i+1 < n:
					e := line[i+1]
					switch e {
					case 'n':
						e = '\n'
					case 'r':
						e = '\r'
					case 't':
						e = '\t'
					case 'b':
						e = '\b'
					case 'a':
						e = '\a'
					}
					cur = append(cur, e)
					i += 2
				case c == '"':
					if i+1 < n && !isSpace(line[i+1]) {
						return nil, false
					}
					i++
					break token
				default:
					cur = append(cur, c)
					i++
				}
			case single:
				if i >= n {
					return nil, false
				}
				c := line[i]
				switch {
				case c == '\\' && i+1 < n && line[i+1] == '\'':
					cur = append(cur, '\'')
					i += 2
				case c == '\'':
					if i+1 < n && !isSpace(line[i+1]) {
						return nil, false
					}
					i++
					break token
				default:
					cur = append(cur, c)
					i++
				}
			default:
				if i >= n || isSpace(line[i]) {
					break token
				}
				switch c := line[i]; c {
				case '"':
					state = double
				case '\'':
					state = single
				default:
					cur = append(cur, c)
				}
				i++
			}
		}
		args = append(args, string(cur))
	}
}

// globMatch reports whether name matches pattern, ignoring ASCII case.
// Supported syntax (as in Redis 7 CONFIG GET and KEYS): '*' matches any
// sequence including the empty one, '?' any single byte, "[abc]" one byte
// from the set (ranges like "[a-z]" allowed, "[^...]" negates) and '\x'
// the byte x literally.
func globMatch(pattern, name string) bool {
	p, s := 0, 0
	starP, starS := -1, 0
	for s < len(name) {
		if p < len(pattern) {
			switch pattern[p] {
			case '*':
				for p < len(pattern) && pattern[p] == '*' {
					p++
				}
				if p == len(pattern) {
					return true
				}
				starP, starS = p, s
				continue
			case '?':
				p++
				s++
				continue
			case '[':
				if ok, next := matchClass(pattern, p, name[s]); ok {
					p = next
					s++
					continue
				}
			case '\\':
				lit, adv := byte('\\'), 1
				if p+1 < len(pattern) {
					lit, adv = pattern[p+1], 2
				}
				if lower(lit) == lower(name[s]) {
					p += adv
					s++
					continue
				}
			default:
				if lower(pattern[p]) == lower(name[s]) {
					p++
					s++
					continue
				}
			}
		}
		// Mismatch: let the most recent '*' swallow one more byte.
		if starP < 0 {
			return false
		}
		starS++
		p, s = starP, starS
	}
	for p < len(pattern) && pattern[p] == '*' {
		p++
	}
	return p == len(pattern)
}

// matchClass matches c against the bracket expression starting at
// pattern[open] == '['. It returns whether c matched and the index just past
// the closing ']' (or the end of the pattern when the class is unterminated).
func matchClass(pattern string, open int, c byte) (bool, int) {
	i := open + 1
	neg := i < len(pattern) && pattern[i] == '^'
	if neg {
		i++
	}
	c = lower(c)
	matched := false
	for i < len(pattern) && pattern[i] != ']' {
		switch {
		case pattern[i] == '\\' && i+1 < len(pattern):
			if lower(pattern[i+1]) == c {
				matched = true
			}
			i += 2
		case i+2 < len(pattern) && pattern[i+1] == '-' && pattern[i+2] != ']':
			lo, hi := lower(pattern[i]), lower(pattern[i+2])
			if lo > hi {
				lo, hi = hi, lo
			}
			if c >= lo && c <= hi {
				matched = true
			}
			i += 3
		default:
			if lower(pattern[i]) == c {
				matched = true
			}
			i++
		}
	}
	if i < len(pattern) {
		i++ // skip ']'
	}
	return matched != neg, i
}

func lower(c byte) byte {
	if c >= 'A' && c <= 'Z' {
		return c + ('a' - 'A')
	}
	return c
}
