package rdb

import (
	"fmt"
	"io"
	"runtime"
	"strconv"
	"strings"
	"testing"
)

// wtMixedList is n elements of varied sizes and kinds (integers, short and long strings).
func wtMixedList(n int) wtElems {
	var out wtElems
	for i := 0; i < n; i++ {
		switch i % 5 {
		case 0:
			out = append(out, []byte(strconv.Itoa(i*i-5000)))
		case 1:
			out = append(out, []byte("element-"+strconv.Itoa(i)))
		case 2:
			out = append(out, []byte(strings.Repeat(string(rune('a'+i%26)), i%300)))
		case 3:
			out = append(out, []byte(strconv.Itoa(i*1000003)))
		default:
			out = append(out, []byte(fmt.Sprintf("%x-%d", i*7919, i)))
		}
	}
	return out
}

func wtRPush(t *testing.T, rc *referenceRedis, key string, elems wtElems) {
	t.Helper()
	rc.Del(testCtx, key)
	for i := 0; i < len(elems); i += 100 {
		args := []any{"RPUSH", key}
		for _, e := range elems[i:min(i+100, len(elems))] {
			args = append(args, e)
		}
		wtDo(t, rc, args...)
	}
}

func TestDumpBytes_Lists_ByteEqualToRedis(t *testing.T) {
	type config struct {
		name string
		args []string
		set  func(*Options)
	}
	configs := []config{
		{"default", nil, func(*Options) {}},
		{"size -1", []string{"--list-max-listpack-size", "-1"}, func(o *Options) { o.ListMaxListpackSize = -1 }},
		{"5 entries", []string{"--list-max-listpack-size", "5"}, func(o *Options) { o.ListMaxListpackSize = 5 }},
		{"size -10 (as -5)", []string{"--list-max-listpack-size", "-10"}, func(o *Options) { o.ListMaxListpackSize = -10 }},
		{"40000 entries (as 32767)", []string{"--list-max-listpack-size", "40000"}, func(o *Options) { o.ListMaxListpackSize = 40000 }},
		{"compress depth 1", []string{"--list-compress-depth", "1"}, func(o *Options) { o.ListCompressDepth = 1 }},
		{"compress depth 2, size -1", []string{"--list-compress-depth", "2", "--list-max-listpack-size", "-1"},
			func(o *Options) { o.ListCompressDepth, o.ListMaxListpackSize = 2, -1 }},
		{"no rdbcompression", []string{"--rdbcompression", "no"}, func(o *Options) { o.Compression = false }},
	}
	lists := []struct {
		name  string
		elems wtElems
	}{
		{"small", wtStrings("a", "1", "-1", "hello world", "")},
		{"mixed 3000", wtMixedList(3000)},
		{"compressible", func() wtElems {
			var out wtElems
			for i := 0; i < 2000; i++ {
				out = append(out, []byte("the same prefix again and again "+strconv.Itoa(i%10)))
			}
			return out
		}()},
	}
	for _, c := range configs {
		t.Run(c.name, func(t *testing.T) {
			rc := wtStartRedis(t, c.args...)
			opts := DefaultOptions()
			c.set(&opts)
			for _, l := range lists {
				t.Run(l.name, func(t *testing.T) {
					wtRPush(t, rc, "theirs", l.elems)
					wtCheckRestoreOpts(t, rc, Source{Kind: KindList, List: l.elems}, opts)
				})
			}
		})
	}
}

func TestDumpBytes_ListPlainNodes_ByteEqualToRedis(t *testing.T) {
	for _, depth := range []int{0, 1} {
		t.Run("compress depth "+strconv.Itoa(depth), func(t *testing.T) {
			rc := wtStartRedis(t, "--list-compress-depth", strconv.Itoa(depth))
			wtDo(t, rc, "DEBUG", "QUICKLIST-PACKED-THRESHOLD", "100")
			opts := DefaultOptions()
			opts.ListPackedThreshold, opts.ListCompressDepth = 100, depth
			elems := wtStrings("small", strings.Repeat("p", 100), "x", "y", strings.Repeat("q", 150),
				strings.Repeat("r", 99), "12345", strings.Repeat("s", 200), "z")
			wtRPush(t, rc, "theirs", elems)
			wtCheckRestoreOpts(t, rc, Source{Kind: KindList, List: elems}, opts)
		})
	}
}

// wtCheckRestoreOpts: payloads of lists built by RPUSH are deterministic, so byte-equal.
func wtCheckRestoreOpts(t *testing.T, rc *referenceRedis, src Source, opts Options) {
	t.Helper()
	wtCheckRestoreWith(t, rc, src, opts, true)
}

// wtGeneratedList yields n elements made on the fly, never held.
type wtGeneratedList struct{ n int }

func (g wtGeneratedList) Len() int64 { return int64(g.n) }
func (g wtGeneratedList) Each(fn func([]byte) error) error {
	buf := make([]byte, 0, 128)
	x := uint64(0x9E3779B97F4A7C15)
	for i := 0; i < g.n; i++ {
		// 80 bytes of hex from a xorshift generator: LZF finds little to take out.
		buf = buf[:0]
		for len(buf) < 80 {
			x ^= x << 13
			x ^= x >> 7
			x ^= x << 17
			buf = strconv.AppendUint(buf, x, 16)
		}
		buf = buf[:80]
		if err := fn(buf); err != nil {
			return err
		}
	}
	return nil
}

func TestWriter_MillionElementList_BoundedHeap(t *testing.T) {
	if testing.Short() {
		t.Skip("writes about 90 MB")
	}
	src := Source{Kind: KindList, List: wtGeneratedList{n: 1_000_000}}
	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	var peak uint64
	sample := 0
	probe := &wtHeapProbe{w: io.Discard, every: 1 << 20, peak: &peak, sample: &sample}
	w := NewWriter(probe, DefaultOptions())
	if err := w.SelectDB(0); err != nil {
		t.Fatal(err)
	}
	if err := w.WriteKey(Key{Name: []byte("big"), Idle: -1, Freq: -1}, src); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	// The elements alone are 80 MB, little of it compressible.
	if w.Written() < 60<<20 {
		t.Fatalf("wrote %d bytes: less than the elements", w.Written())
	}
	if sample == 0 {
		t.Fatal("the heap was never sampled")
	}
	// A node is 8 KiB and the LZF table 512 KiB; a generous 32 MiB still catches a writer
	// that holds the value (~80 MB of elements).
	grown := int64(peak) - int64(before.HeapAlloc)
	t.Logf("wrote %d bytes; heap peak %d KiB above the start", w.Written(), grown>>10)
	if grown > 32<<20 {
		t.Fatalf("heap grew by %d MiB while writing (%d bytes written)", grown>>20, w.Written())
	}
}

// wtHeapProbe samples the heap every so many bytes written through it.
type wtHeapProbe struct {
	w       io.Writer
	every   int
	pending int
	peak    *uint64
	sample  *int
}

func (p *wtHeapProbe) Write(b []byte) (int, error) {
	p.pending += len(b)
	if p.pending >= p.every {
		p.pending = 0
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		*p.sample++
		*p.peak = max(*p.peak, m.HeapAlloc)
	}
	return p.w.Write(b)
}
