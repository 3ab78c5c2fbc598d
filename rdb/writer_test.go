package rdb

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Slice-backed sources for the writer's tests (named wt* to stay apart from the reader's).

type wtElems [][]byte

func (s wtElems) Len() int64 { return int64(len(s)) }
func (s wtElems) Each(fn func([]byte) error) error {
	for _, e := range s {
		if err := fn(e); err != nil {
			return err
		}
	}
	return nil
}

type wtPairs [][2][]byte

func (s wtPairs) Len() int64 { return int64(len(s)) }
func (s wtPairs) Each(fn func(f, v []byte) error) error {
	for _, p := range s {
		if err := fn(p[0], p[1]); err != nil {
			return err
		}
	}
	return nil
}

type wtScored struct {
	members [][]byte
	scores  []float64
}

func (s *wtScored) Len() int64 { return int64(len(s.members)) }
func (s *wtScored) Each(fn func([]byte, float64) error) error {
	for i := range s.members {
		if err := fn(s.members[i], s.scores[i]); err != nil {
			return err
		}
	}
	return nil
}

// wtReverseScored also walks descending, as Redis writes a skiplist.
type wtReverseScored struct{ *wtScored }

func (s wtReverseScored) EachReverse(fn func([]byte, float64) error) error {
	for i := len(s.members) - 1; i >= 0; i-- {
		if err := fn(s.members[i], s.scores[i]); err != nil {
			return err
		}
	}
	return nil
}

func wtStrings(ss ...string) wtElems {
	out := make(wtElems, len(ss))
	for i, s := range ss {
		out[i] = []byte(s)
	}
	return out
}

// wtStartRedis is a reference redis-server whose DEBUG command works.
func wtStartRedis(t *testing.T, args ...string) *referenceRedis {
	t.Helper()
	return startRedis(t, append([]string{"--enable-debug-command", "yes"}, args...)...)
}

func wtDo(t *testing.T, rc *referenceRedis, args ...any) any {
	t.Helper()
	v, err := rc.Do(testCtx, args...).Result()
	if err != nil {
		t.Fatalf("%v: %v", args, err)
	}
	return v
}

// wtCheckRestore RESTOREs our payload of src as key "ours" beside key "theirs", built by
// commands, and compares DEBUG DIGEST-VALUE and OBJECT ENCODING; with byteEqual, also Redis's
// own DUMP of "theirs" with our payload.
func wtCheckRestore(t *testing.T, rc *referenceRedis, src Source, byteEqual bool) []byte {
	t.Helper()
	return wtCheckRestoreWith(t, rc, src, DefaultOptions(), byteEqual)
}

// wtCheckRestoreWith is wtCheckRestore with the options of a reference started with another
// configuration.
func wtCheckRestoreWith(t *testing.T, rc *referenceRedis, src Source, opts Options, byteEqual bool) []byte {
	t.Helper()
	var buf bytes.Buffer
	if _, err := Dump(&buf, src, opts); err != nil {
		t.Fatal(err)
	}
	ours := buf.Bytes()
	if err := rc.RestoreReplace(testCtx, "ours", 0, string(ours)).Err(); err != nil {
		t.Fatalf("RESTORE of our payload: %v (payload %x)", err, wtShort(ours))
	}
	dOurs := wtDo(t, rc, "DEBUG", "DIGEST-VALUE", "ours")
	dTheirs := wtDo(t, rc, "DEBUG", "DIGEST-VALUE", "theirs")
	if fmt.Sprint(dOurs) != fmt.Sprint(dTheirs) {
		t.Fatalf("DIGEST-VALUE differs: ours %v, theirs %v", dOurs, dTheirs)
	}
	eOurs := wtDo(t, rc, "OBJECT", "ENCODING", "ours")
	eTheirs := wtDo(t, rc, "OBJECT", "ENCODING", "theirs")
	if eOurs != eTheirs {
		t.Fatalf("OBJECT ENCODING: ours %v, theirs %v", eOurs, eTheirs)
	}
	// The type byte says the encoding Redis holds the value in (RESTORE may convert ours).
	theirs, err := rc.Dump(testCtx, "theirs").Bytes()
	if err != nil {
		t.Fatal(err)
	}
	if ours[0] != theirs[0] {
		t.Fatalf("payload type %d, Redis's DUMP has type %d", ours[0], theirs[0])
	}
	if byteEqual {
		if !bytes.Equal(ours, theirs) {
			t.Fatalf("payload differs from Redis's DUMP:\nours   %x\ntheirs %x", wtShort(ours), wtShort(theirs))
		}
	}
	return ours
}

func wtShort(b []byte) []byte {
	if len(b) > 400 {
		return b[:400]
	}
	return b
}

func TestDumpBytes_Strings_ByteEqualToRedis(t *testing.T) {
	rc := wtStartRedis(t)
	values := []string{"", "hello", "0", "12", "-1", "127", "128", "-128", "-129", "32767", "32768",
		"-32769", "2147483647", "2147483648", "-2147483648", "-2147483649", "12345678901",
		"9223372036854775807", "-9223372036854775808", "007", "+1", "-0", " 1", "1.5",
		strings.Repeat("a", 20), strings.Repeat("a", 21), strings.Repeat("ab", 12), strings.Repeat("abc", 100),
		strings.Repeat("x", 5000) + strings.Repeat("yz", 3000), "0123456789012345678901234567890123456789",
	}
	for _, v := range values {
		rc.Set(testCtx, "theirs", v, 0)
		wtCheckRestore(t, rc, Source{Kind: KindString, String: []byte(v)}, true)
		if got := rc.Get(testCtx, "ours").Val(); got != v {
			t.Fatalf("GET ours = %q, want %q", got, v)
		}
	}
}

func TestDumpBytes_LongCompressibleString_LZFAndRestoresInRedis(t *testing.T) {
	rc := wtStartRedis(t)
	var sb strings.Builder
	for i := 0; sb.Len() < 300000; i++ {
		fmt.Fprintf(&sb, "line %d of a long and rather repetitive text; ", i%977)
	}
	v := sb.String()
	payload, err := DumpBytes(Source{Kind: KindString, String: []byte(v)})
	if err != nil {
		t.Fatal(err)
	}
	if payload[1] != 0xC3 || len(payload) > len(v)/2 {
		t.Fatalf("not LZF-compressed: marker %#x, %d bytes for %d", payload[1], len(payload), len(v))
	}
	if err := rc.RestoreReplace(testCtx, "k", 0, string(payload)).Err(); err != nil {
		t.Fatal(err)
	}
	if got := rc.Get(testCtx, "k").Val(); got != v {
		t.Fatalf("GET after RESTORE differs (len %d, want %d)", len(got), len(v))
	}
	rc.Set(testCtx, "theirs", v, 0)
	if theirs := rc.Dump(testCtx, "theirs").Val(); theirs != string(payload) {
		t.Fatalf("payload differs from Redis's DUMP (%d vs %d bytes)", len(payload), len(theirs))
	}
}

func TestDumpBytes_IncompressibleString_LeftRaw(t *testing.T) {
	v := make([]byte, 1000)
	x := uint64(88172645463325252)
	for i := range v {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		v[i] = byte(x)
	}
	payload, err := DumpBytes(Source{Kind: KindString, String: v})
	if err != nil {
		t.Fatal(err)
	}
	// type, 14-bit length (2 bytes), the bytes, footer.
	if len(payload) != 1+2+len(v)+payloadFooterBytes || !bytes.Equal(payload[3:3+len(v)], v) {
		t.Fatalf("incompressible value not written raw: %d bytes", len(payload))
	}
	rc := wtStartRedis(t)
	rc.Set(testCtx, "theirs", v, 0)
	if theirs := rc.Dump(testCtx, "theirs").Val(); theirs != string(payload) {
		t.Fatal("payload differs from Redis's DUMP")
	}
}

func TestDumpBytes_Sets_EncodingsAsRedis(t *testing.T) {
	rc := wtStartRedis(t)
	ints := func(from, n, step int) []string {
		var out []string
		for i := 0; i < n; i++ {
			out = append(out, strconv.Itoa(from+i*step))
		}
		return out
	}
	cases := []struct {
		name      string
		members   []string
		byteEqual bool
	}{
		{"small intset", []string{"3", "1", "2"}, true},
		{"intset int16", []string{"-5", "300", "-32768", "32767"}, true},
		{"intset int32", []string{"1", "70000", "-2147483648"}, true},
		{"intset int64", []string{"1", "-9223372036854775808", "9223372036854775807", "5000000000"}, true},
		{"512 ints", ints(-1000, 512, 7), true},
		{"513 ints", ints(0, 513, 1), false},
		{"not canonical", []string{"1", "01"}, false},
		{"strings", []string{"a", "b", "1"}, false},
		{"large", append(ints(0, 300, 1), strings.Repeat("m", 100)), false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rc.Del(testCtx, "theirs")
			args := []any{"SADD", "theirs"}
			for i := len(c.members) - 1; i >= 0; i-- { // another order than ours
				args = append(args, c.members[i])
			}
			wtDo(t, rc, args...)
			wtCheckRestore(t, rc, Source{Kind: KindSet, Set: wtStrings(c.members...)}, c.byteEqual)
		})
	}
}

func TestDumpBytes_Hashes_EncodingsAsRedis(t *testing.T) {
	rc := wtStartRedis(t)
	pairs := func(n, valueLen int) wtPairs {
		var out wtPairs
		for i := 0; i < n; i++ {
			v := strconv.Itoa(i * 1000)
			if valueLen > 0 {
				v = strings.Repeat(string(rune('a'+i%26)), valueLen)
			}
			out = append(out, [2][]byte{[]byte("field:" + strconv.Itoa(i)), []byte(v)})
		}
		return out
	}
	cases := []struct {
		name      string
		pairs     wtPairs
		byteEqual bool
	}{
		{"small", wtPairs{{[]byte("a"), []byte("1")}, {[]byte("b"), []byte("hello")}, {[]byte("-7"), []byte("-70000")}}, true},
		{"512 fields", pairs(512, 0), true},
		{"value of 64", pairs(10, 64), true},
		{"513 fields", pairs(513, 0), false},
		{"value of 65", pairs(10, 65), false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rc.Del(testCtx, "theirs")
			args := []any{"HSET", "theirs"}
			for _, p := range c.pairs {
				args = append(args, p[0], p[1])
			}
			wtDo(t, rc, args...)
			wtCheckRestore(t, rc, Source{Kind: KindHash, Hash: c.pairs}, c.byteEqual)
		})
	}
}

func TestDumpBytes_ZSets_EncodingsAsRedis(t *testing.T) {
	rc := wtStartRedis(t)
	small := &wtScored{}
	for i, s := range []float64{math.Inf(-1), -1e20, -2.25, math.Copysign(0, -1), 0.1, 1, 1.5,
		3.0000000000000004, 4611686018427387904, 4611686018427387905 * 2, 1e20, 1.7976931348623157e308, math.Inf(1)} {
		small.members = append(small.members, []byte("m"+strconv.Itoa(i)))
		small.scores = append(small.scores, s)
	}
	big := &wtScored{}
	for i := 0; i < 200; i++ {
		big.members = append(big.members, []byte(fmt.Sprintf("member-%03d", i)))
		big.scores = append(big.scores, float64(i/3)+0.5)
	}
	long := &wtScored{members: [][]byte{[]byte("a"), bytes.Repeat([]byte("b"), 65)}, scores: []float64{1, 2}}
	cases := []struct {
		name      string
		src       ScoredSource
		byteEqual bool
	}{
		{"listpack", small, true},
		{"skiplist descending", wtReverseScored{big}, true},
		{"skiplist ascending", big, false},
		{"member of 65", long, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rc.Del(testCtx, "theirs")
			args := []any{"ZADD", "theirs"}
			_ = c.src.Each(func(m []byte, s float64) error {
				args = append(args, strconv.FormatFloat(s, 'g', -1, 64), m)
				return nil
			})
			wtDo(t, rc, args...)
			wtCheckRestore(t, rc, Source{Kind: KindZSet, ZSet: c.src}, c.byteEqual)
		})
	}
}

func TestWriter_WholeFile_LoadsInRedisWithSameDigest(t *testing.T) {
	ref := wtStartRedis(t)
	expireAt := time.Now().Add(time.Hour).UnixMilli()
	code := "#!lua name=wtlib\nredis.register_function('wtf', function() return 1 end)"
	wtDo(t, ref, "FUNCTION", "LOAD", code)
	wtDo(t, ref, "SET", "s", "value")
	wtDo(t, ref, "RPUSH", "l", "a", "b", "3")
	wtDo(t, ref, "SADD", "set", "x", "y")
	wtDo(t, ref, "HSET", "h", "f", "v")
	wtDo(t, ref, "PEXPIREAT", "h", expireAt)
	wtDo(t, ref, "SELECT", 3)
	wtDo(t, ref, "ZADD", "z", 1, "one", 2, "two")
	wtDo(t, ref, "SET", "n", 42)
	wtDo(t, ref, "PEXPIREAT", "n", expireAt)
	wtDo(t, ref, "XADD", "st", "1-1", "f", "v")
	want := wtDo(t, ref, "DEBUG", "DIGEST")

	dir := t.TempDir()
	f, err := os.Create(filepath.Join(dir, "dump.rdb"))
	if err != nil {
		t.Fatal(err)
	}
	w := NewWriter(f, DefaultOptions())
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	noEvict := Key{Idle: -1, Freq: -1}
	key := func(name string, expire int64) Key {
		k := noEvict
		k.Name, k.ExpireAt = []byte(name), expire
		return k
	}
	must(w.InfoAux(AuxInfo{CTime: time.Now().Unix(), UsedMem: 1 << 20}))
	must(w.Function([]byte(code)))
	must(w.SelectDB(0))
	must(w.ResizeDB(4, 1))
	must(w.WriteKey(key("s", 0), Source{Kind: KindString, String: []byte("value")}))
	must(w.WriteKey(key("l", 0), Source{Kind: KindList, List: wtStrings("a", "b", "3")}))
	must(w.WriteKey(key("set", 0), Source{Kind: KindSet, Set: wtStrings("x", "y")}))
	must(w.WriteKey(key("h", expireAt), Source{Kind: KindHash, Hash: wtPairs{{[]byte("f"), []byte("v")}}}))
	must(w.SelectDB(3))
	must(w.ResizeDB(3, 1))
	must(w.WriteKey(key("z", 0), Source{Kind: KindZSet, ZSet: &wtScored{members: [][]byte{[]byte("one"), []byte("two")}, scores: []float64{1, 2}}}))
	must(w.WriteKey(key("n", expireAt), Source{Kind: KindString, String: []byte("42")}))
	must(w.WriteKey(key("st", 0), Source{Kind: KindStream, Stream: &wtStream{
		entries: []wtStreamEntry{{StreamID{1, 1}, wtStrings("f", "v")}},
		meta:    StreamMeta{Length: 1, LastID: StreamID{1, 1}, FirstID: StreamID{1, 1}, EntriesAdded: 1}}}))
	must(w.Close())
	must(f.Close())

	if out, err := exec.Command("redis-check-rdb", filepath.Join(dir, "dump.rdb")).CombinedOutput(); err != nil {
		t.Fatalf("redis-check-rdb: %v\n%s", err, out)
	}
	loaded := wtStartRedis(t, "--dir", dir, "--dbfilename", "dump.rdb")
	if got := wtDo(t, loaded, "DEBUG", "DIGEST"); got != want {
		t.Fatalf("DEBUG DIGEST of the loaded file %v, of the data built by commands %v", got, want)
	}
	if got := loaded.PExpireTime(testCtx, "h").Val(); got.Milliseconds() != expireAt {
		t.Fatalf("PEXPIRETIME h = %v, want %d", got.Milliseconds(), expireAt)
	}
	if got := wtDo(t, loaded, "FCALL", "wtf", 0); got != int64(1) {
		t.Fatalf("FCALL wtf = %v", got)
	}
}

func TestWriter_ChecksumOff_WritesZeros(t *testing.T) {
	var buf bytes.Buffer
	opts := DefaultOptions()
	opts.Checksum = false
	w := NewWriter(&buf, opts)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	want := append([]byte("REDIS0010\xff"), make([]byte, 8)...)
	if !bytes.Equal(buf.Bytes(), want) {
		t.Fatalf("file %q, want %q", buf.Bytes(), want)
	}
	buf.Reset()
	w = NewWriter(&buf, DefaultOptions())
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	body := buf.Bytes()[:10]
	var crc uint64
	for i := 7; i >= 0; i-- {
		crc = crc<<8 | uint64(buf.Bytes()[10+i])
	}
	if crc != CRC64(0, body) {
		t.Fatalf("footer %#x, CRC-64 of the file %#x", crc, CRC64(0, body))
	}
}

func TestWriter_IdleAndFreq_LoadedByRedis(t *testing.T) {
	for _, policy := range []string{"allkeys-lru", "allkeys-lfu"} {
		t.Run(policy, func(t *testing.T) {
			idle, freq := EvictionFields(policy)
			k := Key{Name: []byte("k"), Idle: -1, Freq: -1}
			if idle {
				k.Idle = 1000
			}
			if freq {
				k.Freq = 77
			}
			dir := t.TempDir()
			var buf bytes.Buffer
			w := NewWriter(&buf, DefaultOptions())
			if err := w.SelectDB(0); err != nil {
				t.Fatal(err)
			}
			if err := w.WriteKey(k, Source{Kind: KindString, String: []byte("v")}); err != nil {
				t.Fatal(err)
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, "dump.rdb"), buf.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
			rc := wtStartRedis(t, "--dir", dir, "--maxmemory-policy", policy)
			if idle {
				if got := wtDo(t, rc, "OBJECT", "IDLETIME", "k").(int64); got < 1000 || got > 1100 {
					t.Fatalf("OBJECT IDLETIME = %d, want about 1000", got)
				}
			} else if got := wtDo(t, rc, "OBJECT", "FREQ", "k").(int64); got != 77 && got != 76 {
				t.Fatalf("OBJECT FREQ = %d, want 77 (or 76 after a decay)", got)
			}
		})
	}
}

// wtReadAuxString reads one string of an aux field (a length and bytes, or an integer).
func wtReadAuxString(t *testing.T, b []byte) (string, []byte) {
	t.Helper()
	c := b[0]
	switch c >> 6 {
	case 0:
		n := int(c & 0x3f)
		return string(b[1 : 1+n]), b[1+n:]
	case 1:
		n := int(c&0x3f)<<8 | int(b[1])
		return string(b[2 : 2+n]), b[2+n:]
	case 3:
		switch c & 0x3f {
		case 0:
			return strconv.Itoa(int(int8(b[1]))), b[2:]
		case 1:
			return strconv.Itoa(int(int16(uint16(b[1]) | uint16(b[2])<<8))), b[3:]
		case 2:
			return strconv.Itoa(int(int32(uint32(b[1]) | uint32(b[2])<<8 | uint32(b[3])<<16 | uint32(b[4])<<24))), b[5:]
		}
	}
	t.Fatalf("unexpected string encoding %#x in Redis's aux fields", c)
	return "", nil
}

func TestWriter_SameDataAsRedisSave_ByteEqualFile(t *testing.T) {
	rc := wtStartRedis(t)
	code := "#!lua name=savelib\nredis.register_function('savef', function() return 2 end)"
	expireAt := time.Now().Add(time.Hour).UnixMilli()
	wtDo(t, rc, "FUNCTION", "LOAD", code)
	longName := "a key name long enough to be compressed too: name name name name name"
	wtDo(t, rc, "SET", longName, "a value that is long enough to be compressed, compressed, compressed")
	wtDo(t, rc, "PEXPIREAT", longName, expireAt)
	wtDo(t, rc, "SELECT", 3)
	wtDo(t, rc, "HSET", "12345", "f", 1, "g", "two")
	wtDo(t, rc, "SAVE")
	theirs, err := os.ReadFile(filepath.Join(rc.Dir, "dump.rdb"))
	if err != nil {
		t.Fatal(err)
	}
	// Take the values only Redis knows (ctime, used-mem) from its aux fields.
	aux := map[string]string{}
	rest := theirs[9:]
	for rest[0] == opcodeAux {
		var k, v string
		k, rest = wtReadAuxString(t, rest[1:])
		v, rest = wtReadAuxString(t, rest)
		aux[k] = v
	}
	ctime, _ := strconv.ParseInt(aux["ctime"], 10, 64)
	usedMem, _ := strconv.ParseInt(aux["used-mem"], 10, 64)
	if aux["redis-ver"] != RedisVersion || aux["aof-base"] != "0" || ctime == 0 || usedMem == 0 {
		t.Fatalf("unexpected aux fields from Redis: %v", aux)
	}
	if _, ok := aux["repl-id"]; ok {
		t.Fatalf("Redis wrote replication aux fields: %v", aux)
	}

	var buf bytes.Buffer
	w := NewWriter(&buf, DefaultOptions())
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(w.InfoAux(AuxInfo{CTime: ctime, UsedMem: usedMem}))
	must(w.Function([]byte(code)))
	must(w.SelectDB(0))
	must(w.ResizeDB(1, 1))
	must(w.WriteKey(Key{Name: []byte(longName), ExpireAt: expireAt, Idle: -1, Freq: -1},
		Source{Kind: KindString, String: []byte("a value that is long enough to be compressed, compressed, compressed")}))
	must(w.SelectDB(3))
	must(w.ResizeDB(1, 0))
	must(w.WriteKey(Key{Name: []byte("12345"), Idle: -1, Freq: -1},
		Source{Kind: KindHash, Hash: wtPairs{{[]byte("f"), []byte("1")}, {[]byte("g"), []byte("two")}}}))
	must(w.Close())
	if !bytes.Equal(buf.Bytes(), theirs) {
		t.Fatalf("file differs from Redis's SAVE:\nours   %x\ntheirs %x", buf.Bytes(), theirs)
	}
}

func TestDumpBytes_OtherThresholds_EncodingsAsRedisConfigured(t *testing.T) {
	rc := wtStartRedis(t, "--hash-max-listpack-entries", "2", "--hash-max-listpack-value", "4",
		"--zset-max-listpack-entries", "2", "--zset-max-listpack-value", "4", "--set-max-intset-entries", "2")
	opts := DefaultOptions()
	opts.HashMaxListpackEntries, opts.HashMaxListpackValue = 2, 4
	opts.ZSetMaxListpackEntries, opts.ZSetMaxListpackValue = 2, 4
	opts.SetMaxIntsetEntries = 2
	cases := []struct {
		name string
		cmd  []any
		src  Source
	}{
		{"hash listpack", []any{"HSET", "theirs", "a", "1234", "b", "x"},
			Source{Kind: KindHash, Hash: wtPairs{{[]byte("a"), []byte("1234")}, {[]byte("b"), []byte("x")}}}},
		{"hash of 3", []any{"HSET", "theirs", "a", "1", "b", "2", "c", "3"},
			Source{Kind: KindHash, Hash: wtPairs{{[]byte("a"), []byte("1")}, {[]byte("b"), []byte("2")}, {[]byte("c"), []byte("3")}}}},
		{"hash value of 5", []any{"HSET", "theirs", "a", "12345"},
			Source{Kind: KindHash, Hash: wtPairs{{[]byte("a"), []byte("12345")}}}},
		{"zset listpack", []any{"ZADD", "theirs", 1, "abcd", 2, "b"},
			Source{Kind: KindZSet, ZSet: &wtScored{members: [][]byte{[]byte("abcd"), []byte("b")}, scores: []float64{1, 2}}}},
		{"zset member of 5", []any{"ZADD", "theirs", 1, "abcde"},
			Source{Kind: KindZSet, ZSet: &wtScored{members: [][]byte{[]byte("abcde")}, scores: []float64{1}}}},
		{"zset of 3", []any{"ZADD", "theirs", 1, "a", 2, "b", 3, "c"},
			Source{Kind: KindZSet, ZSet: wtReverseScored{&wtScored{members: [][]byte{[]byte("a"), []byte("b"), []byte("c")}, scores: []float64{1, 2, 3}}}}},
		{"intset of 2", []any{"SADD", "theirs", 5, 4}, Source{Kind: KindSet, Set: wtStrings("4", "5")}},
		{"3 ints", []any{"SADD", "theirs", 5, 4, 3}, Source{Kind: KindSet, Set: wtStrings("3", "4", "5")}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rc.Del(testCtx, "theirs")
			wtDo(t, rc, c.cmd...)
			byteEqual := c.name != "hash of 3" && c.name != "3 ints" && c.name != "hash value of 5"
			wtCheckRestoreWith(t, rc, c.src, opts, byteEqual)
		})
	}
}
