package rdb

import (
	"bytes"
	"fmt"
	"math/rand"
	"strings"
	"testing"
)

// wtLZFExpand is LZF decompression as the format defines it, for checking our output here
// (the reader has its own).
func wtLZFExpand(in []byte, outLen int) ([]byte, error) {
	out := make([]byte, 0, outLen)
	for i := 0; i < len(in); {
		ctrl := int(in[i])
		i++
		if ctrl < 1<<5 {
			n := ctrl + 1
			if i+n > len(in) {
				return nil, fmt.Errorf("literal run past the input at %d", i)
			}
			out = append(out, in[i:i+n]...)
			i += n
			continue
		}
		n := ctrl >> 5
		if n == 7 {
			if i >= len(in) {
				return nil, fmt.Errorf("truncated length at %d", i)
			}
			n += int(in[i])
			i++
		}
		if i >= len(in) {
			return nil, fmt.Errorf("truncated offset at %d", i)
		}
		ref := len(out) - (ctrl&0x1f)<<8 - int(in[i]) - 1
		i++
		if ref < 0 {
			return nil, fmt.Errorf("reference before the start at %d", i)
		}
		for j := 0; j < n+2; j++ {
			out = append(out, out[ref+j])
		}
	}
	if len(out) != outLen {
		return nil, fmt.Errorf("expanded to %d bytes, want %d", len(out), outLen)
	}
	return out, nil
}

func TestLZFCompress_RoundTrip_Expands(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	var c lzfCompressor
	inputs := [][]byte{
		[]byte(strings.Repeat("a", 21)),
		[]byte(strings.Repeat("abcdefgh", 1000)),
		bytes.Repeat([]byte{0}, 70000),
	}
	for i := 0; i < 300; i++ {
		n := rng.Intn(20000) + 3
		b := make([]byte, n)
		alphabet := rng.Intn(255) + 1
		for j := range b {
			if j > 10 && rng.Intn(4) == 0 { // copy from before, so that matches exist
				b[j] = b[j-1-rng.Intn(min(j, 9000))]
			} else {
				b[j] = byte(rng.Intn(alphabet))
			}
		}
		inputs = append(inputs, b)
	}
	for i, in := range inputs {
		out := make([]byte, len(in)+len(in)/16+64)
		n := c.compress(in, out)
		if n == 0 {
			t.Fatalf("input %d (%d bytes): not compressed with room to spare", i, len(in))
		}
		got, err := wtLZFExpand(out[:n], len(in))
		if err != nil || !bytes.Equal(got, in) {
			t.Fatalf("input %d (%d bytes): round trip failed: %v", i, len(in), err)
		}
		// With too little room it gives up rather than overflow.
		if small := c.compress(in, make([]byte, n-1)); small != 0 {
			t.Fatalf("input %d: compressed into %d bytes with only %d", i, small, n-1)
		}
	}
}

func TestLZFCompress_TableFromEarlierCalls_SameOutput(t *testing.T) {
	in := []byte(strings.Repeat("hello world, hello lzf. ", 50))
	var fresh, used lzfCompressor
	other := []byte(strings.Repeat("lzf hello, world hello. ", 70))
	used.compress(other, make([]byte, len(other)))
	a, b := make([]byte, len(in)), make([]byte, len(in))
	na, nb := fresh.compress(in, a), used.compress(in, b)
	if na == 0 || !bytes.Equal(a[:na], b[:nb]) {
		t.Fatalf("output depends on earlier calls: %d vs %d bytes", na, nb)
	}
}

func BenchmarkLZFCompress_Text(b *testing.B) {
	var sb strings.Builder
	for i := 0; sb.Len() < 1<<20; i++ {
		fmt.Fprintf(&sb, "entry %d: user:%d logged in from 10.0.%d.%d; ", i, i*7919%100000, i%256, i*31%256)
	}
	in := []byte(sb.String())
	out := make([]byte, len(in))
	var c lzfCompressor
	b.SetBytes(int64(len(in)))
	for i := 0; i < b.N; i++ {
		if c.compress(in, out) == 0 {
			b.Fatal("not compressed")
		}
	}
}
