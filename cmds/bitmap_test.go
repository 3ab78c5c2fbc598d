package cmds_test

import (
	"bufio"
	"bytes"
	"crypto/sha1"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"net"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"shardis/codec"
	"shardis/datatype"
	"shardis/internal/testserver"
	"shardis/shard"
)

// dirSize is the bytes of the files under dir.
func dirSize(t *testing.T, dir string) int64 {
	t.Helper()
	var n int64
	err := filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil // a file RocksDB removed meanwhile
		}
		if info, err := d.Info(); err == nil && !d.IsDir() {
			n += info.Size()
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// A bitmap's last bit costs its fragment, not 512 MB of memory or disk, and every read of it
// answers as Redis's (checked against redis-server 7.0.15 by hand: the same replies).
func TestBitmap_SetBitAtLastOffset_CostsKilobytesAndAnswersAsRedis(t *testing.T) {
	s := testserver.Start(t)
	c := s.Client(t)
	runtime.GC()
	rss, disk := processRSS(t), dirSize(t, s.Dir)
	expect(t, c, int64(0), "SETBIT", "k", "4294967295", "1")
	expect(t, c, int64(1), "GETBIT", "k", "4294967295")
	expect(t, c, int64(0), "GETBIT", "k", "4294967294")
	expect(t, c, int64(536870912), "STRLEN", "k")
	expect(t, c, int64(1), "BITCOUNT", "k")
	expect(t, c, int64(1), "BITCOUNT", "k", "-1", "-1")
	expect(t, c, int64(0), "BITCOUNT", "k", "0", "-2")
	expect(t, c, int64(1), "BITCOUNT", "k", "-8", "-1", "BIT")
	expect(t, c, int64(4294967295), "BITPOS", "k", "1")
	expect(t, c, int64(0), "BITPOS", "k", "0")
	expect(t, c, int64(4294967295), "BITPOS", "k", "1", "-1")
	expect(t, c, int64(4294967288), "BITPOS", "k", "0", "-1")
	expect(t, c, int64(-1), "BITPOS", "k", "1", "0", "-2")
	expect(t, c, "\x00\x00\x01", "GETRANGE", "k", "-3", "-1")
	expect(t, c, "\x00\x01", "GETRANGE", "k", "536870910", "536870999")
	expect(t, c, int64(0), "SETBIT", "k", "4294967294", "1")
	expect(t, c, int64(2), "BITCOUNT", "k")
	expect(t, c, "raw", "OBJECT", "ENCODING", "k")
	expect(t, c, "string", "TYPE", "k")
	if _, err := c.Do(testCtx, "SAVE").Result(); err != nil && !strings.Contains(err.Error(), "unknown") {
		t.Logf("SAVE: %v", err)
	}
	runtime.GC()
	grewRSS, grewDisk := processRSS(t)-rss, dirSize(t, s.Dir)-disk
	t.Logf("RSS grew by %d KB, the data directory by %d KB", grewRSS>>10, grewDisk>>10)
	if grewRSS > 64<<20 || grewDisk > 64<<20 {
		t.Fatalf("SETBIT at bit 2^32-1 grew the RSS by %d MB and the data directory by %d MB",
			grewRSS>>20, grewDisk>>20)
	}
	expect(t, c, "OK", "SET", "k", "small")
	expect(t, c, "small", "GET", "k")
	if n := dataKeys(t, s.Store, "k"); n != 0 {
		t.Fatalf("%d fragments left readable after SET over the bitmap", n)
	}
}

// dataKeys counts the data keys of key's current version (db 0) in its shard.
func dataKeys(t *testing.T, st *shard.Store, key string) int {
	t.Helper()
	n := 0
	if err := st.Do(st.ShardOf([]byte(key)), func(tx *shard.Tx) {
		m, ok := tx.Meta(0, []byte(key))
		if !ok || m.Version == 0 {
			return
		}
		it := tx.IterateData(0, []byte(key), m.Version, nil, nil, false)
		for ; it.Valid(); it.Next() {
			n++
		}
		it.Close()
	}); err != nil {
		t.Fatal(err)
	}
	return n
}

// bitmapEdgeOps is a random stream of string and bit commands whose offsets fall around the
// 1 KiB fragment edges (and the 4 KiB whole-string limit), over strings that grow past it by
// SETBIT, SETRANGE, APPEND, BITFIELD and BITOP, and are replaced by SET, COPY and RENAME.
func bitmapEdgeOps(rng *rand.Rand, n int) [][]any {
	keys := []string{"{b}1", "{b}2", "{b}3", "b4", "b5"}
	key := func() string { return keys[rng.IntN(len(keys))] }
	edge := func() int {
		base := []int{0, 1024, 2048, 4096, 5120, 8192, 40960, 70000}[rng.IntN(8)] // 70000: GET streams
		return max(0, base+rng.IntN(24)-12)
	}
	idx := func() string { return strconv.Itoa(rng.IntN(30000) - 15000) }
	val := func() string { return strings.Repeat(string(rune('a'+rng.IntN(26))), 1+rng.IntN(20)) }
	var ops [][]any
	for range n {
		k := key()
		var op []any
		switch rng.IntN(20) {
		case 0, 1, 2:
			op = []any{"SETBIT", k, edge()*8 + rng.IntN(8), rng.IntN(2)}
		case 3:
			op = []any{"SETRANGE", k, edge(), val()}
		case 4:
			op = []any{"APPEND", k, strings.Repeat("x", 1+rng.IntN(3000))}
		case 5:
			op = []any{"GETBIT", k, edge()*8 + rng.IntN(8)}
		case 6:
			op = []any{"BITCOUNT", k, idx(), idx()}
		case 7:
			op = []any{"BITCOUNT", k, strconv.Itoa(edge() * 8), idx(), "BIT"}
		case 8:
			op = []any{"BITPOS", k, rng.IntN(2), idx()}
		case 9:
			op = []any{"BITPOS", k, rng.IntN(2), idx(), idx(), []string{"BIT", "BYTE"}[rng.IntN(2)]}
		case 10:
			op = []any{"GETRANGE", k, idx(), idx()}
		case 11:
			op = []any{"STRLEN", k}
		case 12:
			op = []any{"DEBUG", "DIGEST-VALUE", k}
		case 13:
			op = []any{"BITOP", []string{"AND", "OR", "XOR"}[rng.IntN(3)], key(), key(), key()}
		case 14:
			op = []any{"BITOP", "NOT", key(), key()}
		case 15:
			op = []any{"BITFIELD", k, "SET", "u16", strconv.Itoa(edge()*8 - 3), rng.IntN(65536),
				"INCRBY", "i12", "#" + strconv.Itoa(edge()/2), rng.IntN(5000) - 2500, "GET", "u63", strconv.Itoa(edge() * 8)}
		case 16:
			if rng.IntN(2) == 0 { // a whole string past the limit, fragmented by its next write
				op = []any{"SET", k, strings.Repeat(val(), 300)}
			} else {
				op = []any{"SET", k, val()}
			}
		case 17:
			op = []any{"COPY", k, key(), "REPLACE"}
		case 18:
			op = []any{"RENAME", k, key()}
		default:
			op = []any{"GET", k}
		}
		ops = append(ops, op)
	}
	return ops
}

// Commands over strings kept in fragments answer as redis-server's over its strings, ops
// spanning fragment edges included.
func TestBitmap_FragmentEdges_MatchRedis(t *testing.T) {
	rc := startRedis(t)
	s := testserver.Start(t, "--shards", "4")
	c := s.Client(t)
	for seed := uint64(1); seed <= 3; seed++ {
		for _, cl := range []*redis.Client{c, rc} {
			if err := cl.FlushAll(testCtx).Err(); err != nil {
				t.Fatal(err)
			}
		}
		for i, op := range bitmapEdgeOps(rand.New(rand.NewPCG(seed, 1)), 1500) {
			want := strFormat(rc.Do(testCtx, op...).Result())
			got := strFormat(c.Do(testCtx, op...).Result())
			if got != want {
				t.Fatalf("seed %d op %d %v:\n got  %.300s\n want %.300s", seed, i, op, got, want)
			}
		}
	}
}

// fragmentedWrites builds fragmented strings every way the binlog must reproduce.
var fragmentedWrites = [][]any{
	{"SETBIT", "a", 100000, 1}, {"SETBIT", "a", 8 * 4096, 1}, {"SETBIT", "a", 7, 1}, {"SETBIT", "a", 100000, 0},
	{"SET", "b", strings.Repeat("y", 4000)}, {"APPEND", "b", strings.Repeat("z", 300)},
	{"SETRANGE", "b", 8190, "edge"}, {"SETRANGE", "c", 20000, "far"},
	{"BITFIELD", "d", "SET", "u8", 70000, 255, "INCRBY", "i5", 32766, 3},
	{"BITOP", "OR", "{x}e", "a", "b"}, {"BITOP", "NOT", "f", "c"}, {"COPY", "a", "{x}g"},
	{"SET", "h", strings.Repeat("q", 5000)}, {"SETBIT", "h", 0, 1}, {"RENAME", "h", "{y}h"},
	{"SETBIT", "i", 90000, 1}, {"SET", "i", "whole again"}, {"SETBIT", "j", 90000, 1}, {"PEXPIRE", "j", 10000000},
}

// dumpStrings reads every string of db 0 whole, with its expire and raw flag.
func dumpStrings(t *testing.T, st *shard.Store) map[string]string {
	t.Helper()
	out := map[string]string{}
	for id := range st.NumShards() {
		if err := st.Do(id, func(tx *shard.Tx) {
			var keys [][]byte
			tx.ScanKeys(id, 0, nil, func(key []byte, _ *codec.Meta) bool {
				keys = append(keys, bytes.Clone(key))
				return true
			})
			for _, key := range keys {
				str, err := datatype.LookupString(tx, 0, key)
				if err != nil {
					t.Errorf("%s: %v", key, err)
					continue
				}
				m := str.Meta()
				exp := m.Expire != 0
				out[string(key)] = fmt.Sprintf("len=%d sha1=%x raw=%v frag=%v expire=%v", str.Len(), sha1.Sum(str.Value()), m.Raw, m.Frag, exp)
			}
		}); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// Fragmented strings survive a restart, and each shard's binlog replayed into an empty store
// rebuilds them byte for byte, without logging their whole values.
func TestBitmap_RestartAndBinlogReplay_RebuildFragmentedStrings(t *testing.T) {
	dir := t.TempDir()
	s := testserver.StartIn(t, dir, "--shards", "4")
	c := s.Client(t)
	for _, cmd := range fragmentedWrites {
		if err := c.Do(testCtx, cmd...).Err(); err != nil {
			t.Fatalf("%v: %v", cmd, err)
		}
	}
	want := dumpStrings(t, s.Store)
	if len(want) != 10 || !strings.Contains(want["a"], "frag=true") || !strings.Contains(want["i"], "frag=false") {
		t.Fatalf("the writes left %v", want)
	}
	dst, dstSrv := testserver.ReplayTarget(t, 4)
	logged := 0
	for id := range s.Store.NumShards() {
		n, err := dstSrv.ReplayShard(s.Store, id)
		if err != nil {
			t.Fatalf("shard %d: %v", id, err)
		}
		logged += n
		for from := uint64(0); ; {
			recs, err := s.Store.ReadBinlog(id, from, 1024)
			if err != nil {
				t.Fatal(err)
			}
			if len(recs) == 0 {
				break
			}
			for _, r := range recs {
				for _, a := range r.Args {
					if len(a) > 5000 {
						t.Errorf("a record of shard %d logs %s with an argument of %d bytes", id, r.Args[0], len(a))
					}
				}
			}
			from = recs[len(recs)-1].Seq + 1
		}
	}
	if got := dumpStrings(t, dst); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("after replaying %d records:\n got  %v\n want %v", logged, got, want)
	}
	s.Stop()
	s2 := testserver.StartIn(t, dir, "--shards", "4")
	if got := dumpStrings(t, s2.Store); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("after a restart:\n got  %v\n want %v", got, want)
	}
	c2 := s2.Client(t)
	expect(t, c2, int64(1), "GETBIT", "a", 8*4096)
	expect(t, c2, "edge", "GETRANGE", "b", 8190, 8193)
}

// GET of a 512 MB bitmap is streamed: the server never holds it whole, and the reply is
// Redis's bytes. A GET behind another shard's write in one pipeline (answered late in the
// event loop) gives the same bytes too.
func TestBitmap_GetHugeBitmap_Streamed(t *testing.T) {
	s := testserver.Start(t, "--shards", "4")
	c := s.Client(t)
	expect(t, c, int64(0), "SETBIT", "k", "4294967295", "1")
	expect(t, c, int64(0), "SETBIT", "k", "8", "1")
	conn, err := net.Dial("tcp", s.Addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	runtime.GC()
	rss := processRSS(t)
	var peak atomic.Int64
	done := make(chan struct{})
	go func() {
		for {
			select {
			case <-done:
				return
			case <-time.After(20 * time.Millisecond):
				if r := processRSS(t); r > peak.Load() {
					peak.Store(r)
				}
			}
		}
	}()
	if _, err := conn.Write([]byte("GET k\r\n")); err != nil {
		t.Fatal(err)
	}
	r := bufio.NewReaderSize(conn, 1<<16)
	header, err := r.ReadString('\n')
	if err != nil || header != "$536870912\r\n" {
		t.Fatalf("header %q, %v", header, err)
	}
	buf := make([]byte, 1<<16)
	var n, nonzero int64
	var first, tail []byte
	for n < 536870912+2 {
		m, err := r.Read(buf[:min(int64(len(buf)), 536870912+2-n)])
		if err != nil {
			t.Fatalf("after %d bytes: %v", n, err)
		}
		if n == 0 {
			first = bytes.Clone(buf[:min(m, 4)])
		}
		for _, b := range buf[:m] {
			if b != 0 {
				nonzero++
			}
		}
		n += int64(m)
		tail = append(tail, buf[:m]...)
		if len(tail) > 3 {
			tail = tail[len(tail)-3:]
		}
	}
	close(done)
	if string(first) != "\x00\x80\x00\x00" || string(tail) != "\x01\r\n" || nonzero != 4 {
		t.Fatalf("reply starts % x, ends % x, %d non-zero bytes", first, tail, nonzero)
	}
	grew := peak.Load() - rss
	t.Logf("RSS peak grew by %d MB during the 512 MB GET", grew>>20)
	if grew > 96<<20 {
		t.Fatalf("the 512 MB GET grew the RSS by %d MB: it was not streamed", grew>>20)
	}
	// A late read: the GET waits behind a write of another shard in the same pipeline.
	expect(t, c, "OK", "SET", "small", strings.Repeat("v", 5000))
	expect(t, c, int64(5000), "SETRANGE", "small", 4998, "xy")
	other := "other"
	for i := 0; s.Store.ShardOf([]byte(other)) == s.Store.ShardOf([]byte("small")); i++ {
		other = fmt.Sprintf("other%d", i)
	}
	p := c.Pipeline()
	p.Set(testCtx, other, "1", 0)
	get := p.Get(testCtx, "small")
	if _, err := p.Exec(testCtx); err != nil {
		t.Fatal(err)
	}
	if v := get.Val(); v != strings.Repeat("v", 4998)+"xy" {
		t.Fatalf("late GET of a fragmented string: %d bytes ending %q", len(v), v[max(0, len(v)-4):])
	}
}

// bitfieldOps is a random stream of BITFIELD and BITFIELD_RO commands: every width, both
// signs, the three overflow behaviours, "#" offsets, values at and past the limits, and the
// malformed arguments Redis refuses.
func bitfieldOps(rng *rand.Rand, n int) [][]any {
	limits := []int64{0, 1, -1, 2, -2, 127, 128, -128, -129, 255, 256, 32767, -32768, 65535,
		1<<31 - 1, -1 << 31, 1<<32 - 1, 1<<62 - 1, 1<<63 - 1, -1 << 63, 12345, -9876}
	enc := func() string {
		switch rng.IntN(30) {
		case 0:
			return []string{"u64", "i65", "u0", "i0", "x8", "", "u", "i-1", "u8\x00x"}[rng.IntN(9)]
		}
		if rng.IntN(2) == 0 {
			return "i" + strconv.Itoa(1+rng.IntN(64))
		}
		return "u" + strconv.Itoa(1+rng.IntN(63))
	}
	off := func() string {
		switch rng.IntN(20) {
		case 0:
			return []string{"-1", "abc", "#-1", "#", "4294967296", "#99999999999"}[rng.IntN(6)]
		case 1, 2, 3:
			return "#" + strconv.Itoa(rng.IntN(40))
		}
		return strconv.Itoa(rng.IntN(9000))
	}
	val := func() string {
		if rng.IntN(25) == 0 {
			return "nan"
		}
		return strconv.FormatInt(limits[rng.IntN(len(limits))]+int64(rng.IntN(3)-1), 10)
	}
	keys := []string{"f1", "f2", "f3"}
	var ops [][]any
	for range n {
		k := keys[rng.IntN(len(keys))]
		if rng.IntN(15) == 0 {
			ops = append(ops, []any{"SET", k, strings.Repeat("ab", rng.IntN(8))})
			continue
		}
		name := "BITFIELD"
		if rng.IntN(6) == 0 {
			name = "BITFIELD_RO"
		}
		op := []any{name, k}
		for range 1 + rng.IntN(4) {
			switch rng.IntN(12) {
			case 0, 1, 2, 3:
				op = append(op, "GET", enc(), off())
			case 4, 5, 6:
				op = append(op, "SET", enc(), off(), val())
			case 7, 8, 9:
				op = append(op, "INCRBY", enc(), off(), val())
			case 10:
				op = append(op, "OVERFLOW", []string{"WRAP", "SAT", "FAIL", "sat", "bogus"}[rng.IntN(5)])
			default:
				op = append(op, []string{"GET", "SET", "incrby", "foo"}[rng.IntN(4)])
			}
		}
		ops = append(ops, op)
		if rng.IntN(4) == 0 {
			ops = append(ops, []any{"GET", k})
		}
	}
	return ops
}

// BITFIELD and BITFIELD_RO answer as Redis's, errors included, and leave the same bytes.
func TestBitmap_Bitfield_MatchesRedis(t *testing.T) {
	rc := startRedis(t)
	s := testserver.Start(t)
	c := s.Client(t)
	answered := 0
	for seed := uint64(1); seed <= 3; seed++ {
		for i, op := range bitfieldOps(rand.New(rand.NewPCG(seed, 2)), 1500) {
			want := strFormat(rc.Do(testCtx, op...).Result())
			got := strFormat(c.Do(testCtx, op...).Result())
			if got != want {
				t.Fatalf("seed %d op %d %q:\n got  %.300s\n want %.300s", seed, i, op, got, want)
			}
			if strings.HasPrefix(want, "[") {
				answered++
			}
		}
	}
	if answered < 1000 {
		t.Fatalf("only %d BITFIELDs were answered without an error: the stream tests little", answered)
	}
	t.Logf("%d BITFIELDs answered", answered)
}
