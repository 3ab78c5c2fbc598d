package codec

import (
	"math"
	"strconv"
	"testing"
)

func TestAppendFunctions(t *testing.T) {
	cases := []struct {
		got  []byte
		want string
	}{
		{AppendSimple(nil, "OK"), "+OK\r\n"},
		{AppendSimple(nil, ""), "+\r\n"},
		{AppendSimple(nil, "a\r\nb"), "+a  b\r\n"},
		{AppendError(nil, "ERR syntax error"), "-ERR syntax error\r\n"},
		{AppendError(nil, "WRONGTYPE Operation against a key holding the wrong kind of value"), "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"},
		{AppendError(nil, "ERR bad\r\nthing\n"), "-ERR bad  thing \r\n"},
		{AppendInt(nil, 0), ":0\r\n"},
		{AppendInt(nil, -42), ":-42\r\n"},
		{AppendInt(nil, math.MaxInt64), ":9223372036854775807\r\n"},
		{AppendInt(nil, math.MinInt64), ":-9223372036854775808\r\n"},
		{AppendBulk(nil, []byte("hello")), "$5\r\nhello\r\n"},
		{AppendBulk(nil, nil), "$0\r\n\r\n"},
		{AppendBulk(nil, []byte("a\r\n\x00b")), "$5\r\na\r\n\x00b\r\n"},
		{AppendBulkString(nil, "héllo"), "$6\r\nhéllo\r\n"},
		{AppendBulkString(nil, ""), "$0\r\n\r\n"},
		{AppendArrayLen(nil, 0), "*0\r\n"},
		{AppendArrayLen(nil, 3), "*3\r\n"},
		{AppendArrayLen(nil, -1), "*-1\r\n"},
		{AppendArrayLen(nil, -7), "*-1\r\n"},
		{AppendBulk([]byte("prefix"), []byte("x")), "prefix$1\r\nx\r\n"},
	}
	for i, c := range cases {
		if string(c.got) != c.want {
			t.Errorf("case %d: got %q, want %q", i, c.got, c.want)
		}
	}
}

func TestWriter(t *testing.T) {
	type op struct {
		name       string
		f          func(w *Writer)
		resp2, res string // res: RESP3
	}
	ops := []op{
		{"OK", func(w *Writer) { w.OK() }, "+OK\r\n", "+OK\r\n"},
		{"Simple", func(w *Writer) { w.Simple("PONG") }, "+PONG\r\n", "+PONG\r\n"},
		{"Error", func(w *Writer) { w.Error("ERR unknown command") }, "-ERR unknown command\r\n", "-ERR unknown command\r\n"},
		{"Int", func(w *Writer) { w.Int(-7) }, ":-7\r\n", ":-7\r\n"},
		{"Bulk", func(w *Writer) { w.Bulk([]byte("v")) }, "$1\r\nv\r\n", "$1\r\nv\r\n"},
		{"BulkString", func(w *Writer) { w.BulkString("val") }, "$3\r\nval\r\n", "$3\r\nval\r\n"},
		{"Null", func(w *Writer) { w.Null() }, "$-1\r\n", "_\r\n"},
		{"NullArray", func(w *Writer) { w.NullArray() }, "*-1\r\n", "_\r\n"},
		{"ArrayLen", func(w *Writer) { w.ArrayLen(2) }, "*2\r\n", "*2\r\n"},
		{"ArrayLen-1", func(w *Writer) { w.ArrayLen(-1) }, "*-1\r\n", "*-1\r\n"},
		{"MapLen", func(w *Writer) { w.MapLen(3) }, "*6\r\n", "%3\r\n"},
		{"MapLen0", func(w *Writer) { w.MapLen(0) }, "*0\r\n", "%0\r\n"},
		{"SetLen", func(w *Writer) { w.SetLen(4) }, "*4\r\n", "~4\r\n"},
		{"PushLen", func(w *Writer) { w.PushLen(3) }, "*3\r\n", ">3\r\n"},
		{"Double", func(w *Writer) { w.Double(1.5) }, "$3\r\n1.5\r\n", ",1.5\r\n"},
		{"DoubleInt", func(w *Writer) { w.Double(10) }, "$2\r\n10\r\n", ",10\r\n"},
		{"DoubleTenth", func(w *Writer) { w.Double(0.1) }, "$19\r\n0.10000000000000001\r\n", ",0.10000000000000001\r\n"},
		{"DoubleExp", func(w *Writer) { w.Double(1e20) }, "$5\r\n1e+20\r\n", ",1e+20\r\n"},
		{"DoubleNegZero", func(w *Writer) { w.Double(math.Copysign(0, -1)) }, "$2\r\n-0\r\n", ",-0\r\n"},
		{"DoubleInf", func(w *Writer) { w.Double(math.Inf(1)) }, "$3\r\ninf\r\n", ",inf\r\n"},
		{"DoubleNegInf", func(w *Writer) { w.Double(math.Inf(-1)) }, "$4\r\n-inf\r\n", ",-inf\r\n"},
		{"DoubleLongest", func(w *Writer) { w.Double(-2.2250738585072014e-308) }, "$24\r\n-2.2250738585072014e-308\r\n", ",-2.2250738585072014e-308\r\n"},
		{"BoolTrue", func(w *Writer) { w.Bool(true) }, ":1\r\n", "#t\r\n"},
		{"BoolFalse", func(w *Writer) { w.Bool(false) }, ":0\r\n", "#f\r\n"},
		{"Verbatim", func(w *Writer) { w.Verbatim("txt", "Some string") }, "$11\r\nSome string\r\n", "=15\r\ntxt:Some string\r\n"},
		{"VerbatimEmpty", func(w *Writer) { w.Verbatim("mkd", "") }, "$0\r\n\r\n", "=4\r\nmkd:\r\n"},
		{"BigNumber", func(w *Writer) { w.BigNumber("3492890328409238509324850943850943825024385") }, "$43\r\n3492890328409238509324850943850943825024385\r\n", "(3492890328409238509324850943850943825024385\r\n"},
		{"Raw", func(w *Writer) { w.Raw([]byte("+QUEUED\r\n")) }, "+QUEUED\r\n", "+QUEUED\r\n"},
	}
	for _, o := range ops {
		var w2 Writer // zero value: RESP2
		o.f(&w2)
		if string(w2.Buf) != o.resp2 {
			t.Errorf("%s RESP2: got %q, want %q", o.name, w2.Buf, o.resp2)
		}
		w3 := Writer{RESP3: true}
		o.f(&w3)
		if string(w3.Buf) != o.res {
			t.Errorf("%s RESP3: got %q, want %q", o.name, w3.Buf, o.res)
		}
	}
}

func TestWriterAppendsInOrder(t *testing.T) {
	w := Writer{Buf: []byte("x")}
	w.MapLen(1)
	w.BulkString("k")
	w.Int(1)
	if want := "x*2\r\n$1\r\nk\r\n:1\r\n"; string(w.Buf) != want {
		t.Fatalf("got %q, want %q", w.Buf, want)
	}
}

// glibcG holds doubles and what glibc's printf("%.17g") prints for them
// (generated with a C program; the bits are exact). They pin FormatDouble to
// C, including the cases where Go's default formatting differs: exponent
// form at and above 1e17 with a two-digit minimum exponent, 17 significant
// digits, no trailing zeros, and "-0".
var glibcG = []struct {
	bits uint64
	want string
}{
	{0x0000000000000000, "0"},
	{0x0000000000000001, "4.9406564584124654e-324"},
	{0x0010000000000000, "2.2250738585072014e-308"},
	{0x01a56e1fc2f8f359, "1e-300"},
	{0x3ee4f8b588e368f1, "1.0000000000000001e-05"},
	{0x3eef75104d551d69, "1.5e-05"},
	{0x3eff75104d551d6a, "3.0000000000000004e-05"},
	{0x3f1a36e2eb1c432d, "0.0001"},
	{0x3f201f31f46ed246, "0.00012300000000000001"},
	{0x3fb999999999999a, "0.10000000000000001"},
	{0x3fd3333333333334, "0.30000000000000004"},
	{0x3fd5555555555555, "0.33333333333333331"},
	{0x3fe0000000000000, "0.5"},
	{0x3fe5555555555555, "0.66666666666666663"},
	{0x3fefe00000000000, "0.99609375"},
	{0x3ff0000000000000, "1"},
	{0x3ff8000000000000, "1.5"},
	{0x40091eb851eb851f, "3.1400000000000001"},
	{0x4011666666666666, "4.3499999999999996"},
	{0x4059000000000000, "100"},
	{0x40934a456d5cfaad, "1234.5678"},
	{0x430c6bf526340000, "1000000000000000"},
	{0x43118b54f22aeb03, "1234567890123456.8"},
	{0x4340000000000000, "9007199254740992"},
	{0x4341c37937e07fff, "9999999999999998"},
	{0x4341c37937e08000, "10000000000000000"},
	{0x4345ee2a2eb5a5c4, "12345678901234568"},
	{0x4376345785d8a000, "1e+17"},
	{0x437b69b4ba630f35, "1.2345678901234568e+17"},
	{0x4415af1d78b58c40, "1e+20"},
	{0x444b1ae4d6e2ef50, "1e+21"},
	{0x4480f0cf064dd592, "1e+22"},
	{0x44dfe185ca57c517, "6.0221407599999999e+23"},
	{0x54b249ad2594c37d, "1e+100"},
	{0x7fefffffffffffff, "1.7976931348623157e+308"},
	{0x8000000000000000, "-0"},
	{0xbff0000000000000, "-1"},
	{0xc004000000000000, "-2.5"},
	{0xc05edd2f1a9fbe77, "-123.456"},
	{0xffefffffffffffff, "-1.7976931348623157e+308"},
}

func TestFormatDoubleMatchesGlibc(t *testing.T) {
	for _, c := range glibcG {
		f := math.Float64frombits(c.bits)
		if got := string(FormatDouble(nil, f)); got != c.want {
			t.Errorf("FormatDouble(%v) = %q, want %q", f, got, c.want)
		}
	}
	specials := []struct {
		f    float64
		want string
	}{
		{math.Inf(1), "inf"},
		{math.Inf(-1), "-inf"},
		{math.Float64frombits(0x7ff8000000000001), "nan"},
		{math.Float64frombits(0xfff8000000000001), "-nan"},
		{1e20, "1e+20"},
		{1.0000000000000001e-05, "1.0000000000000001e-05"},
		{math.Copysign(0, -1), "-0"},
	}
	for _, c := range specials {
		if got := string(FormatDouble([]byte("p:"), c.f)); got != "p:"+c.want {
			t.Errorf("FormatDouble(%v) = %q, want %q", c.f, got, "p:"+c.want)
		}
	}
}

// TestFormatDoubleRoundTrips: 17 significant digits always read back as the
// same double, which is why Redis uses %.17g.
func TestFormatDoubleRoundTrips(t *testing.T) {
	for i := uint64(0); i < 200000; i++ {
		bits := i*0x9E3779B97F4A7C15 + 12345
		f := math.Float64frombits(bits)
		if math.IsNaN(f) || math.IsInf(f, 0) {
			continue
		}
		s := string(FormatDouble(nil, f))
		g, err := strconv.ParseFloat(s, 64)
		if err != nil || math.Float64bits(g) != bits {
			t.Fatalf("%x: %q does not round-trip", bits, s)
		}
	}
}

func TestReplyNoAllocs(t *testing.T) {
	val := []byte("some value bytes")
	w := Writer{Buf: make([]byte, 0, 4096)}
	allocs := testing.AllocsPerRun(1000, func() {
		w.Buf = w.Buf[:0]
		w.ArrayLen(8)
		w.Bulk(val)
		w.BulkString("str")
		w.Int(123456789)
		w.Double(3.14159)
		w.Null()
		w.Simple("OK")
		w.Error("ERR x")
		w.Bool(true)
	})
	if allocs != 0 {
		t.Errorf("RESP2 Writer allocs = %v, want 0", allocs)
	}
	w.RESP3 = true
	allocs = testing.AllocsPerRun(1000, func() {
		w.Buf = w.Buf[:0]
		w.MapLen(2)
		w.Double(-1e-300)
		w.Verbatim("txt", "hello")
		w.BigNumber("12345678901234567890")
	})
	if allocs != 0 {
		t.Errorf("RESP3 Writer allocs = %v, want 0", allocs)
	}
}

func BenchmarkAppendBulk(b *testing.B) {
	val := []byte("value-value-value")
	buf := make([]byte, 0, 64)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		buf = AppendBulk(buf[:0], val)
	}
}

func BenchmarkAppendInt(b *testing.B) {
	buf := make([]byte, 0, 64)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		buf = AppendInt(buf[:0], int64(i))
	}
}

func BenchmarkWriterDouble(b *testing.B) {
	w := Writer{Buf: make([]byte, 0, 64)}
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		w.Buf = w.Buf[:0]
		w.Double(float64(i) * 1.1)
	}
}
