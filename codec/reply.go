package codec

import (
	"math"
	"strconv"
)

// The Append* functions append one encoded RESP value to b and return the
// extended slice, like append: they allocate only when b lacks capacity,
// never retain b or their arguments, and leave b[:len(b)] untouched. The
// encodings are the same in RESP2 and RESP3.

// AppendSimple appends the simple string "+<s>\r\n". A '\r' or '\n' in s
// would break the framing, so each is written as a space (Redis never emits
// one in a status reply).
func AppendSimple(b []byte, s string) []byte {
	b = append(b, '+')
	b = appendLine(b, s)
	return append(b, '\r', '\n')
}

// AppendError appends the error reply "-<msg>\r\n". msg is the full text
// including its code, e.g. "ERR syntax error" or "WRONGTYPE Operation
// against a key holding the wrong kind of value"; no prefix is added. Every
// '\r' or '\n' in msg is written as a space, as Redis's addReplyErrorFormat
// does.
func AppendError(b []byte, msg string) []byte {
	b = append(b, '-')
	b = appendLine(b, msg)
	return append(b, '\r', '\n')
}

// appendLine appends s with '\r' and '\n' replaced by spaces.
func appendLine(b []byte, s string) []byte {
	for {
		i := indexCRLF(s)
		if i < 0 {
			return append(b, s...)
		}
		b = append(b, s[:i]...)
		b = append(b, ' ')
		s = s[i+1:]
	}
}

func indexCRLF(s string) int {
	for i := 0; i < len(s); i++ {
		if s[i] == '\r' || s[i] == '\n' {
			return i
		}
	}
	return -1
}

// AppendInt appends the integer reply ":<n>\r\n".
func AppendInt(b []byte, n int64) []byte {
	return appendPrefixed(b, ':', n)
}

// AppendBulk appends the bulk string "$<len(p)>\r\n<p>\r\n". p may hold any
// bytes. A nil p is an empty bulk string, not a null: use Writer.Null for
// that.
func AppendBulk(b []byte, p []byte) []byte {
	b = appendPrefixed(b, '$', int64(len(p)))
	b = append(b, p...)
	return append(b, '\r', '\n')
}

// AppendBulkString is AppendBulk for a string.
func AppendBulkString(b []byte, s string) []byte {
	b = appendPrefixed(b, '$', int64(len(s)))
	b = append(b, s...)
	return append(b, '\r', '\n')
}

// AppendArrayLen appends the array header "*<n>\r\n"; n < 0 appends the
// RESP2 null array "*-1\r\n". The caller then appends the n elements.
func AppendArrayLen(b []byte, n int) []byte {
	if n < 0 {
		return append(b, "*-1\r\n"...)
	}
	return appendPrefixed(b, '*', int64(n))
}

func appendPrefixed(b []byte, prefix byte, n int64) []byte {
	b = append(b, prefix)
	b = strconv.AppendInt(b, n, 10)
	return append(b, '\r', '\n')
}

// FormatDouble appends f formatted as C's printf("%.17g", f), which is what
// Redis 7.0 sends for doubles: at most 17 significant digits, trailing zeros
// dropped, exponent form ("1e+20", "1.0000000000000001e-05") when the decimal
// exponent is < -4 or >= 17, "-0" for negative zero, and glibc's "inf",
// "-inf", "nan", "-nan" for the special values.
func FormatDouble(b []byte, f float64) []byte {
	switch {
	case math.IsInf(f, 1):
		return append(b, "inf"...)
	case math.IsInf(f, -1):
		return append(b, "-inf"...)
	case math.IsNaN(f):
		if math.Signbit(f) {
			return append(b, "-nan"...)
		}
		return append(b, "nan"...)
	}
	// strconv's 'g' with an explicit precision follows the same rules as
	// C's %g (exponent threshold, trailing-zero removal, two-digit minimum
	// exponent, correctly rounded digits); reply_test.go pins the cases.
	return strconv.AppendFloat(b, f, 'g', 17, 64)
}

// Writer appends replies for one connection's protocol version to Buf. The zero value writes RESP2.
//
// Each method appends exactly one RESP value (or one aggregate header, whose
// elements the caller then writes) to w.Buf, growing it like append; nothing
// is allocated while Buf has capacity. Writer never retains the arguments it
// is given. The owner of the Writer owns Buf: typically it writes Buf to the
// connection and then truncates it with w.Buf = w.Buf[:0] to reuse the
// memory. A Writer is not safe for concurrent use.
type Writer struct {
	Buf   []byte
	RESP3 bool
}

// OK appends "+OK\r\n".
func (w *Writer) OK() { w.Buf = append(w.Buf, "+OK\r\n"...) }

// Simple appends a simple string; see AppendSimple.
func (w *Writer) Simple(s string) { w.Buf = AppendSimple(w.Buf, s) }

// Error appends an error reply; msg is the full text with its code, see
// AppendError.
func (w *Writer) Error(msg string) { w.Buf = AppendError(w.Buf, msg) }

// Int appends an integer reply.
func (w *Writer) Int(n int64) { w.Buf = AppendInt(w.Buf, n) }

// Bulk appends a bulk string holding p (nil is an empty string, not null).
func (w *Writer) Bulk(p []byte) { w.Buf = AppendBulk(w.Buf, p) }

// BulkString appends a bulk string holding s.
func (w *Writer) BulkString(s string) { w.Buf = AppendBulkString(w.Buf, s) }

// Null appends the null value: RESP2 "$-1\r\n" (null bulk string), RESP3
// "_\r\n".
func (w *Writer) Null() {
	if w.RESP3 {
		w.Buf = append(w.Buf, "_\r\n"...)
	} else {
		w.Buf = append(w.Buf, "$-1\r\n"...)
	}
}

// NullArray appends a null aggregate: RESP2 "*-1\r\n", RESP3 "_\r\n".
func (w *Writer) NullArray() {
	if w.RESP3 {
		w.Buf = append(w.Buf, "_\r\n"...)
	} else {
		w.Buf = append(w.Buf, "*-1\r\n"...)
	}
}

// ArrayLen appends an array header "*<n>\r\n" (n < 0: "*-1\r\n" in both
// protocols; prefer NullArray). The caller appends the n elements.
func (w *Writer) ArrayLen(n int) { w.Buf = AppendArrayLen(w.Buf, n) }

// MapLen appends a map header for n key/value pairs: RESP3 "%<n>\r\n",
// RESP2 a flat array "*<2n>\r\n". The caller appends 2n elements, key then
// value.
func (w *Writer) MapLen(n int) {
	if w.RESP3 {
		w.Buf = appendPrefixed(w.Buf, '%', int64(n))
	} else {
		w.Buf = appendPrefixed(w.Buf, '*', 2*int64(n))
	}
}

// SetLen appends a set header: RESP3 "~<n>\r\n", RESP2 "*<n>\r\n".
func (w *Writer) SetLen(n int) {
	if w.RESP3 {
		w.Buf = appendPrefixed(w.Buf, '~', int64(n))
	} else {
		w.Buf = appendPrefixed(w.Buf, '*', int64(n))
	}
}

// PushLen appends an out-of-band push header: RESP3 ">n\r\n", RESP2
// "*<n>\r\n" (how Redis sends pub/sub messages to RESP2 clients).
func (w *Writer) PushLen(n int) {
	if w.RESP3 {
		w.Buf = appendPrefixed(w.Buf, '>', int64(n))
	} else {
		w.Buf = appendPrefixed(w.Buf, '*', int64(n))
	}
}

// Double appends a double as Redis 7.0's addReplyDouble does: RESP3
// ",<%.17g>\r\n", RESP2 a bulk string of the same text; infinities are
// "inf"/"-inf" in both. See FormatDouble.
func (w *Writer) Double(f float64) {
	if w.RESP3 {
		w.Buf = append(w.Buf, ',')
		w.Buf = FormatDouble(w.Buf, f)
		w.Buf = append(w.Buf, '\r', '\n')
		return
	}
	// Format into a stack buffer to learn the length for the "$<len>" header.
	var tmp [32]byte
	s := FormatDouble(tmp[:0], f)
	w.Buf = AppendBulk(w.Buf, s)
}

// Bool appends a boolean: RESP3 "#t\r\n"/"#f\r\n", RESP2 ":1\r\n"/":0\r\n".
func (w *Writer) Bool(v bool) {
	switch {
	case w.RESP3 && v:
		w.Buf = append(w.Buf, "#t\r\n"...)
	case w.RESP3:
		w.Buf = append(w.Buf, "#f\r\n"...)
	case v:
		w.Buf = append(w.Buf, ":1\r\n"...)
	default:
		w.Buf = append(w.Buf, ":0\r\n"...)
	}
}

// Verbatim appends a verbatim string: RESP3 "=<len>\r\n<format>:<text>\r\n"
// where format is the three-letter type ("txt" or "mkd") and len counts
// format, colon and text; RESP2 a plain bulk string of text.
func (w *Writer) Verbatim(format, text string) {
	if !w.RESP3 {
		w.Buf = AppendBulkString(w.Buf, text)
		return
	}
	w.Buf = appendPrefixed(w.Buf, '=', int64(len(format)+1+len(text)))
	w.Buf = append(w.Buf, format...)
	w.Buf = append(w.Buf, ':')
	w.Buf = append(w.Buf, text...)
	w.Buf = append(w.Buf, '\r', '\n')
}

// BigNumber appends a big number given as its decimal digits s (e.g.
// "3492890328409238509324850943850943825024385"): RESP3 "(<s>\r\n", RESP2 a
// bulk string of s.
func (w *Writer) BigNumber(s string) {
	if !w.RESP3 {
		w.Buf = AppendBulkString(w.Buf, s)
		return
	}
	w.Buf = append(w.Buf, '(')
	w.Buf = append(w.Buf, s...)
	w.Buf = append(w.Buf, '\r', '\n')
}

// Raw appends p, which must already be valid RESP for this connection's
// protocol (e.g. a cached reply). p is copied, not retained.
func (w *Writer) Raw(p []byte) { w.Buf = append(w.Buf, p...) }
