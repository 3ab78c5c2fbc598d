package bench

import (
	"bytes"
	"math/rand/v2"
	"reflect"
	"testing"
)

func seqKeys(from, to uint64) *keyGen {
	return newKeyGen(PatternSequential, from, to, 0, 1, 0, 0, rand.New(rand.NewPCG(1, 1)))
}

func fixedData(size int) *dataGen {
	return &dataGen{buf: newDataBuffer(size, false), min: size, max: size, rng: rand.New(rand.NewPCG(1, 1))}
}

func TestTemplate_ExpandsKeyAndData(t *testing.T) {
	tm, err := ParseTemplate("hset __key__ f __data__")
	if err != nil {
		t.Fatal(err)
	}
	if tm.Name != "HSET" || tm.KeyCount() != 1 {
		t.Fatalf("name %q keys %d", tm.Name, tm.KeyCount())
	}
	got := tm.Expand("memtier-", seqKeys(5, 9), fixedData(3))
	if want := []string{"hset", "memtier-5", "f", "xxx"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("got %q, want %q", got, want)
	}
}

func TestTemplate_EveryPlaceholderDrawsAgain(t *testing.T) {
	tm, _ := ParseTemplate("MSET __key__ __data__ __key__ __data__")
	got := tm.Expand("k:", seqKeys(1, 100), fixedData(2))
	if want := []string{"MSET", "k:1", "xx", "k:2", "xx"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("got %q, want %q", got, want)
	}
	if tm.KeyCount() != 2 {
		t.Fatalf("KeyCount %d", tm.KeyCount())
	}
}

func TestTemplate_PlaceholdersInsideArgumentsAndQuotes(t *testing.T) {
	tm, err := ParseTemplate(`SET user:__key__:name "a b" '' v__data__!`)
	if err != nil {
		t.Fatal(err)
	}
	got := tm.Expand("", seqKeys(42, 42), fixedData(1))
	if want := []string{"SET", "user:42:name", "a b", "", "vx!"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("got %q, want %q", got, want)
	}
}

func TestTemplate_WireFormatMatchesExpansion(t *testing.T) {
	tm, _ := ParseTemplate("ZADD __key__ 1 __data__ 2 m__key__")
	wire, _ := tm.appendRequest([]byte("prev"), nil, []byte("p-"), seqKeys(7, 20), fixedData(4))
	args := tm.Expand("p-", seqKeys(7, 20), fixedData(4))
	want := append([]byte("prev"), encodeCommand(args...)...)
	if !bytes.Equal(wire, want) {
		t.Fatalf("wire %q, want %q", wire, want)
	}
	if string(wire) != "prev*6\r\n$4\r\nZADD\r\n$3\r\np-7\r\n$1\r\n1\r\n$4\r\nxxxx\r\n$1\r\n2\r\n$4\r\nmp-8\r\n" {
		t.Fatalf("wire %q", wire)
	}
}

func TestTemplate_Errors(t *testing.T) {
	for _, s := range []string{"", "   ", `GET "unterminated`} {
		if _, err := ParseTemplate(s); err == nil {
			t.Errorf("ParseTemplate(%q) accepted", s)
		}
	}
}

func TestDataGen_RandomSizesWithinRange(t *testing.T) {
	d := &dataGen{buf: newDataBuffer(64, true), min: 10, max: 64, random: true, rng: rand.New(rand.NewPCG(2, 2))}
	seen := map[int]bool{}
	distinct := map[string]bool{}
	for i := 0; i < 5000; i++ {
		v := d.Next()
		if len(v) < 10 || len(v) > 64 {
			t.Fatalf("size %d outside 10-64", len(v))
		}
		seen[len(v)] = true
		distinct[string(v)] = true
	}
	if len(seen) != 55 {
		t.Errorf("%d distinct sizes, want all 55", len(seen))
	}
	if len(distinct) < 4900 {
		t.Errorf("only %d distinct random values of 5000", len(distinct))
	}
}
