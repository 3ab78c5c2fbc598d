package bench

import (
	"errors"
	"flag"
	"io"
	"strings"
	"testing"
	"time"
)

func parse(t *testing.T, args ...string) *Config {
	t.Helper()
	c, err := ParseFlags(args, io.Discard)
	if err != nil {
		t.Fatalf("ParseFlags(%q): %v", args, err)
	}
	return c
}

func TestFlags_DefaultsAreMemtiers(t *testing.T) {
	c := parse(t)
	if c.Server != "localhost" || c.Port != 6379 || c.Threads != 4 || c.Clients != 50 || c.Pipeline != 1 ||
		c.RatioSet != 1 || c.RatioGet != 10 || c.DataMin != 32 || c.DataMax != 32 || c.KeyPrefix != "memtier-" ||
		c.KeyMin != 0 || c.KeyMax != 10000000 || c.SetPattern != 'R' || c.GetPattern != 'R' ||
		c.Requests != 10000 || c.TestTime != 0 || c.Protocol != 2 || c.Runs != 1 {
		t.Fatalf("defaults: %+v", c)
	}
}

func TestFlags_ShortLongAndEqualsForms(t *testing.T) {
	c := parse(t, "-s", "10.0.0.1", "-p", "7000", "-t", "2", "-c=8", "--pipeline=16", "--ratio", "1:0",
		"-d", "1024", "--key-prefix=k:", "--key-minimum", "1", "--key-maximum=500", "--key-pattern", "S:g",
		"--test-time", "2.5", "--protocol", "resp3", "--prefill", "--json-out-file", "/tmp/x.json",
		"-x", "3", "--vs", "127.0.0.1:6379", "--hide-histogram", "-R")
	if c.Addr() != "10.0.0.1:7000" || c.Threads != 2 || c.Clients != 8 || c.Pipeline != 16 ||
		c.RatioSet != 1 || c.RatioGet != 0 || c.DataMin != 1024 || c.KeyPrefix != "k:" || c.KeyMin != 1 ||
		c.KeyMax != 500 || c.SetPattern != 'S' || c.GetPattern != 'G' || c.TestTime != 2500*time.Millisecond ||
		c.Requests != 0 || c.Protocol != 3 || !c.Prefill || c.JSONOut != "/tmp/x.json" || c.Runs != 3 ||
		c.Vs != "127.0.0.1:6379" || !c.HideHistogram || !c.RandomData || c.TotalClients() != 16 {
		t.Fatalf("parsed: %+v", c)
	}
	c = parse(t, "--server", "h", "--port", "1", "--threads", "1", "--clients", "1", "--requests", "allkeys",
		"--data-size-range", "10-100", "--runs", "2", "--json-out", "f")
	if c.Server != "h" || !c.AllKeys || c.Requests != 0 || c.DataMin != 10 || c.DataMax != 100 || c.Runs != 2 || c.JSONOut != "f" {
		t.Fatalf("parsed: %+v", c)
	}
	if c = parse(t, "-n", "7"); c.Requests != 7 {
		t.Fatalf("-n 7: %d", c.Requests)
	}
}

func TestFlags_CommandsTakeTheRatioAndPatternThatFollow(t *testing.T) {
	c := parse(t, "--command", "LPUSH __key__ __data__", "--command-ratio", "3", "--command-key-pattern", "s",
		"--command=RPOP __key__", "--command", "HSET __key__ f __data__", "--command-ratio=2")
	want := []CommandSpec{{"LPUSH __key__ __data__", 3, 'S'}, {"RPOP __key__", 1, 'R'}, {"HSET __key__ f __data__", 2, 'R'}}
	if len(c.Commands) != 3 {
		t.Fatalf("commands %+v", c.Commands)
	}
	for i := range want {
		if c.Commands[i] != want[i] {
			t.Errorf("command %d: %+v, want %+v", i, c.Commands[i], want[i])
		}
	}
	ops := c.ops()
	if len(ops) != 3 || ops[0].name != "LPUSH" || ops[1].name != "RPOP" || ops[2].ratio != 2 || ops[0].pattern != 'S' {
		t.Fatalf("ops %+v", ops)
	}
	if p := c.prefillOp(); p.name != "LPUSH" || p.pattern != PatternParallel {
		t.Fatalf("prefill op %+v", p)
	}
}

func TestFlags_Rejected(t *testing.T) {
	for _, args := range [][]string{
		{"--ratio", "1-10"}, {"--ratio", "0:0"}, {"--ratio", "-1:2"},
		{"--key-pattern", "X:R"}, {"--key-pattern", "RR"},
		{"--command-ratio", "2"}, {"--command-key-pattern", "R"},
		{"--command", "GET k", "--command-ratio", "0"}, {"--command", "GET k", "--command-key-pattern", "Q"},
		{"--command", ""}, {"--requests", "10", "--test-time", "5"}, {"--requests", "0"},
		{"-d", "10", "--data-size-range", "1-5"}, {"--data-size-range", "9-3"}, {"-d", "0"},
		{"--key-minimum", "10", "--key-maximum", "5"}, {"--protocol", "resp4"}, {"--vs", "nope"},
		{"--threads", "0"}, {"--pipeline", "0"}, {"--runs", "0"}, {"--test-time", "-1"},
		{"--no-such-flag"}, {"stray"},
	} {
		if _, err := ParseFlags(args, io.Discard); err == nil {
			t.Errorf("ParseFlags(%q) accepted", args)
		}
	}
	var out strings.Builder
	if _, err := ParseFlags([]string{"--help"}, &out); !errors.Is(err, flag.ErrHelp) || !strings.Contains(out.String(), "--key-pattern") {
		t.Errorf("--help: err %v, output %q", err, out.String())
	}
}

func TestRatio_CycleSendsEachOpRatioTimesInARow(t *testing.T) {
	c := parse(t, "--ratio", "1:10")
	cyc := newCycle(c.ops())
	counts := [2]int{}
	var first []int
	for i := 0; i < 1100; i++ {
		op := cyc.next()
		counts[op]++
		if i < 13 {
			first = append(first, op)
		}
	}
	if counts != [2]int{100, 1000} {
		t.Fatalf("1:10 over 1100 requests: %v", counts)
	}
	want := []int{0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 1}
	for i := range want {
		if first[i] != want[i] {
			t.Fatalf("sequence %v, want %v", first, want)
		}
	}
	// One side zero: only the other op exists.
	if ops := parse(t, "--ratio", "0:1").ops(); len(ops) != 1 || ops[0].name != "Gets" || !ops[0].hits {
		t.Fatalf("0:1 ops %+v", ops)
	}
	if ops := parse(t, "--ratio", "5:0").ops(); len(ops) != 1 || ops[0].name != "Sets" {
		t.Fatalf("5:0 ops %+v", ops)
	}
	// Command ratios 2:3:1.
	c = parse(t, "--command", "A", "--command-ratio", "2", "--command", "B", "--command-ratio", "3", "--command", "C")
	cyc = newCycle(c.ops())
	var seq []int
	for i := 0; i < 12; i++ {
		seq = append(seq, cyc.next())
	}
	want = []int{0, 0, 1, 1, 1, 2, 0, 0, 1, 1, 1, 2}
	for i := range want {
		if seq[i] != want[i] {
			t.Fatalf("2:3:1 sequence %v, want %v", seq, want)
		}
	}
}
