package bench

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"net"
	"strconv"
	"strings"
	"time"
)

// CommandSpec is one --command with its --command-ratio and --command-key-pattern.
type CommandSpec struct {
	Text    string
	Ratio   int
	Pattern byte
}

// Config is a parsed command line. Defaults are memtier_benchmark's.
type Config struct {
	Server   string
	Port     int
	Threads  int
	Clients  int // per thread
	Pipeline int

	RatioSet, RatioGet int

	DataMin, DataMax int // equal unless --data-size-range
	RandomData       bool

	KeyPrefix              string
	KeyMin, KeyMax         uint64
	SetPattern, GetPattern byte
	KeyMedian, KeyStddev   float64

	Requests uint64 // per client; 0 when TestTime is set or AllKeys
	AllKeys  bool   // --requests allkeys: the key range split over all clients
	TestTime time.Duration

	Commands []CommandSpec
	Protocol int // 2 or 3 (HELLO 3 on connect)

	Prefill         bool
	PrefillPipeline int

	JSONOut       string
	Runs          int
	Vs            string
	HideHistogram bool

	// Args is the command line as given, for the JSON record.
	Args []string
}

// Addr is the address of the server under test (A).
func (c *Config) Addr() string { return net.JoinHostPort(c.Server, strconv.Itoa(c.Port)) }

// TotalClients is threads × clients.
func (c *Config) TotalClients() int { return c.Threads * c.Clients }

// DefaultConfig returns memtier_benchmark's defaults.
func DefaultConfig() *Config {
	return &Config{
		Server: "localhost", Port: 6379, Threads: 4, Clients: 50, Pipeline: 1,
		RatioSet: 1, RatioGet: 10, DataMin: 32, DataMax: 32,
		KeyPrefix: "memtier-", KeyMin: 0, KeyMax: 10000000,
		SetPattern: PatternRandom, GetPattern: PatternRandom,
		Requests: 10000, Protocol: 2, PrefillPipeline: 16, Runs: 1,
	}
}

// ParseRatio parses "SET:GET", e.g. "1:10".
func ParseRatio(s string) (set, get int, err error) {
	a, b, ok := strings.Cut(s, ":")
	if !ok {
		return 0, 0, fmt.Errorf("ratio %q: want SET:GET, e.g. 1:10", s)
	}
	set, err1 := strconv.Atoi(a)
	get, err2 := strconv.Atoi(b)
	if err1 != nil || err2 != nil || set < 0 || get < 0 {
		return 0, 0, fmt.Errorf("ratio %q: want two non-negative integers SET:GET", s)
	}
	if set == 0 && get == 0 {
		return 0, 0, fmt.Errorf("ratio %q: both sides are zero", s)
	}
	return set, get, nil
}

// ParseKeyPattern parses "R:R" (set pattern : get pattern); a single letter means both.
func ParseKeyPattern(s string) (set, get byte, err error) {
	a, b, ok := strings.Cut(strings.ToUpper(s), ":")
	if !ok {
		b = a
	}
	if len(a) != 1 || len(b) != 1 || !validPattern(a[0]) || !validPattern(b[0]) {
		return 0, 0, fmt.Errorf("key pattern %q: want SET:GET with each of R (random), S (sequential), G (gaussian), P (parallel)", s)
	}
	return a[0], b[0], nil
}

// parseRange parses "MIN-MAX".
func parseRange(s string) (int, int, error) {
	a, b, ok := strings.Cut(s, "-")
	lo, err1 := strconv.Atoi(a)
	hi, err2 := strconv.Atoi(b)
	if !ok || err1 != nil || err2 != nil || lo < 1 || hi < lo {
		return 0, 0, fmt.Errorf("range %q: want MIN-MAX with 1 <= MIN <= MAX", s)
	}
	return lo, hi, nil
}

// The flag.Value types below keep memtier's syntax for each option.

type ratioFlag struct{ c *Config }

func (f ratioFlag) String() string {
	if f.c == nil {
		return ""
	}
	return fmt.Sprintf("%d:%d", f.c.RatioSet, f.c.RatioGet)
}
func (f ratioFlag) Set(s string) (err error) {
	f.c.RatioSet, f.c.RatioGet, err = ParseRatio(s)
	return err
}

type patternFlag struct{ c *Config }

func (f patternFlag) String() string {
	if f.c == nil {
		return ""
	}
	return string([]byte{f.c.SetPattern, ':', f.c.GetPattern})
}
func (f patternFlag) Set(s string) (err error) {
	f.c.SetPattern, f.c.GetPattern, err = ParseKeyPattern(s)
	return err
}

type dataSizeFlag struct {
	c   *Config
	set *bool
}

func (f dataSizeFlag) String() string {
	if f.c == nil {
		return ""
	}
	return strconv.Itoa(f.c.DataMin)
}
func (f dataSizeFlag) Set(s string) error {
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 {
		return fmt.Errorf("data size %q: want a positive integer", s)
	}
	f.c.DataMin, f.c.DataMax = n, n
	*f.set = true
	return nil
}

type dataRangeFlag struct {
	c   *Config
	set *bool
}

func (f dataRangeFlag) String() string { return "" }
func (f dataRangeFlag) Set(s string) (err error) {
	f.c.DataMin, f.c.DataMax, err = parseRange(s)
	*f.set = true
	return err
}

type requestsFlag struct {
	c   *Config
	set *bool
}

func (f requestsFlag) String() string {
	if f.c == nil {
		return ""
	}
	return strconv.FormatUint(f.c.Requests, 10)
}
func (f requestsFlag) Set(s string) error {
	*f.set = true
	if strings.EqualFold(s, "allkeys") {
		f.c.AllKeys, f.c.Requests = true, 0
		return nil
	}
	n, err := strconv.ParseUint(s, 10, 64)
	if err != nil || n == 0 {
		return fmt.Errorf("requests %q: want a positive integer or allkeys", s)
	}
	f.c.AllKeys, f.c.Requests = false, n
	return nil
}

type commandFlag struct{ c *Config }

func (f commandFlag) String() string { return "" }
func (f commandFlag) Set(s string) error {
	if _, err := ParseTemplate(s); err != nil {
		return err
	}
	f.c.Commands = append(f.c.Commands, CommandSpec{Text: s, Ratio: 1, Pattern: PatternRandom})
	return nil
}

// commandRatioFlag and commandPatternFlag apply to the --command given last, as in memtier.
type commandRatioFlag struct{ c *Config }

func (f commandRatioFlag) String() string { return "" }
func (f commandRatioFlag) Set(s string) error {
	if len(f.c.Commands) == 0 {
		return errors.New("--command-ratio must follow the --command it applies to")
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 {
		return fmt.Errorf("command ratio %q: want a positive integer", s)
	}
	f.c.Commands[len(f.c.Commands)-1].Ratio = n
	return nil
}

type commandPatternFlag struct{ c *Config }

func (f commandPatternFlag) String() string { return "" }
func (f commandPatternFlag) Set(s string) error {
	if len(f.c.Commands) == 0 {
		return errors.New("--command-key-pattern must follow the --command it applies to")
	}
	if len(s) != 1 || !validPattern(strings.ToUpper(s)[0]) {
		return fmt.Errorf("command key pattern %q: want R, S, G or P", s)
	}
	f.c.Commands[len(f.c.Commands)-1].Pattern = strings.ToUpper(s)[0]
	return nil
}

type protocolFlag struct{ c *Config }

func (f protocolFlag) String() string { return "" }
func (f protocolFlag) Set(s string) error {
	switch strings.ToLower(s) {
	case "resp2", "redis":
		f.c.Protocol = 2
	case "resp3":
		f.c.Protocol = 3
	default:
		return fmt.Errorf("protocol %q: want resp2 or resp3", s)
	}
	return nil
}

const usageText = `Usage: shardis-bench [options]
A memtier_benchmark-style load generator for Redis-protocol servers.

Connection:
  -s, --server ADDR            server address (default: localhost)
  -p, --port PORT              server port (default: 6379)
      --protocol resp2|resp3   resp3 sends HELLO 3 on every connection (default: resp2)
      --vs HOST:PORT           run the identical load against a second server too,
                               alternating A B B A A B … over --runs; prints the median of
                               each and the ratio A/B
Test:
  -t, --threads N              threads (default: 4); also caps the Go scheduler at N CPUs
  -c, --clients N              connections per thread (default: 50)
      --pipeline N             requests in flight per connection (default: 1)
  -n, --requests N|allkeys     requests per client (default: 10000); allkeys: the key range
                               split over all clients
      --test-time SECS         run for SECS seconds instead of a number of requests
      --ratio SET:GET          SET:GET ratio (default: 1:10)
  -x, --runs N                 number of runs (per server with --vs; default: 1)
      --prefill                before measuring, write every key of the range once (with
                               SET, or the first --command), parallel over all clients
      --prefill-pipeline N     pipeline depth of the prefill (default: 16)
Arbitrary commands (repeatable; replace the SET:GET mix):
      --command "CMD ARGS"     e.g. "HSET __key__ f __data__"; __key__: a generated key,
                               __data__: a generated value
      --command-ratio N        times the preceding --command is sent in a row (default: 1)
      --command-key-pattern P  key pattern of the preceding --command (default: R)
Values:
  -d, --data-size N            value size in bytes (default: 32)
      --data-size-range MIN-MAX  random value sizes in MIN..MAX
  -R, --random-data            random values (default: 'x' repeated)
Keys:
      --key-prefix PREFIX      (default: "memtier-")
      --key-minimum N          (default: 0)
      --key-maximum N          (default: 10000000)
      --key-pattern SET:GET    R random, S sequential, G gaussian, P parallel (default: R:R)
      --key-median X           centre of G (default: middle of the range)
      --key-stddev X           standard deviation of G (default: range/6)
Output:
      --json-out FILE          write the results as JSON (alias: --json-out-file)
      --hide-histogram         do not print the latency distribution
`

// ParseFlags parses a shardis-bench command line (without the program name). Long options
// take one or two dashes, "--opt value" or "--opt=value".
func ParseFlags(args []string, stderr io.Writer) (*Config, error) {
	c := DefaultConfig()
	c.Args = append([]string(nil), args...)
	fs := flag.NewFlagSet("shardis-bench", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}

	var reqSet, sizeSet, rangeSet bool
	var testTime float64
	var keyMin, keyMax uint64
	str := func(p *string, names ...string) {
		for _, n := range names {
			fs.StringVar(p, n, *p, "")
		}
	}
	num := func(p *int, names ...string) {
		for _, n := range names {
			fs.IntVar(p, n, *p, "")
		}
	}
	val := func(v flag.Value, names ...string) {
		for _, n := range names {
			fs.Var(v, n, "")
		}
	}
	boolean := func(p *bool, names ...string) {
		for _, n := range names {
			fs.BoolVar(p, n, *p, "")
		}
	}
	str(&c.Server, "s", "server", "host")
	num(&c.Port, "p", "port")
	num(&c.Threads, "t", "threads")
	num(&c.Clients, "c", "clients")
	num(&c.Pipeline, "pipeline")
	val(ratioFlag{c}, "ratio")
	val(dataSizeFlag{c, &sizeSet}, "d", "data-size")
	val(dataRangeFlag{c, &rangeSet}, "data-size-range")
	boolean(&c.RandomData, "R", "random-data")
	str(&c.KeyPrefix, "key-prefix")
	keyMin, keyMax = c.KeyMin, c.KeyMax
	fs.Uint64Var(&keyMin, "key-minimum", keyMin, "")
	fs.Uint64Var(&keyMax, "key-maximum", keyMax, "")
	val(patternFlag{c}, "key-pattern")
	fs.Float64Var(&c.KeyMedian, "key-median", 0, "")
	fs.Float64Var(&c.KeyStddev, "key-stddev", 0, "")
	val(requestsFlag{c, &reqSet}, "n", "requests")
	fs.Float64Var(&testTime, "test-time", 0, "")
	val(commandFlag{c}, "command")
	val(commandRatioFlag{c}, "command-ratio")
	val(commandPatternFlag{c}, "command-key-pattern")
	val(protocolFlag{c}, "P", "protocol")
	boolean(&c.Prefill, "prefill")
	num(&c.PrefillPipeline, "prefill-pipeline")
	str(&c.JSONOut, "json-out", "json-out-file")
	num(&c.Runs, "x", "runs", "run-count")
	str(&c.Vs, "vs")
	boolean(&c.HideHistogram, "hide-histogram")
	help := false
	boolean(&help, "h", "help")

	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if help {
		fmt.Fprint(stderr, usageText)
		return nil, flag.ErrHelp
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	c.KeyMin, c.KeyMax = keyMin, keyMax
	if testTime < 0 || math.IsNaN(testTime) || math.IsInf(testTime, 0) {
		return nil, fmt.Errorf("test-time must be positive")
	}
	if testTime > 0 {
		if reqSet {
			return nil, errors.New("give either --requests or --test-time, not both")
		}
		c.TestTime = time.Duration(testTime * float64(time.Second))
		c.Requests = 0
	}
	if sizeSet && rangeSet {
		return nil, errors.New("give either --data-size or --data-size-range, not both")
	}
	if err := c.Validate(); err != nil {
		return nil, err
	}
	return c, nil
}

// Validate checks the combination of options.
func (c *Config) Validate() error {
	switch {
	case c.Port < 1 || c.Port > 65535:
		return fmt.Errorf("port %d out of range", c.Port)
	case c.Threads < 1 || c.Threads > 1024:
		return fmt.Errorf("threads must be 1..1024")
	case c.Clients < 1 || c.Clients > 100000:
		return fmt.Errorf("clients must be 1..100000")
	case c.Pipeline < 1 || c.Pipeline > 100000:
		return fmt.Errorf("pipeline must be 1..100000")
	case c.PrefillPipeline < 1 || c.PrefillPipeline > 100000:
		return fmt.Errorf("prefill-pipeline must be 1..100000")
	case c.KeyMax < c.KeyMin:
		return fmt.Errorf("key-maximum %d is below key-minimum %d", c.KeyMax, c.KeyMin)
	case c.KeyMax == math.MaxUint64:
		return fmt.Errorf("key-maximum too large")
	case c.Runs < 1:
		return fmt.Errorf("runs must be at least 1")
	case c.DataMin < 1 || c.DataMax < c.DataMin || c.DataMax > 512<<20:
		return fmt.Errorf("data size must be 1..%d", 512<<20)
	case c.TestTime == 0 && c.Requests == 0 && !c.AllKeys:
		return fmt.Errorf("give --requests or --test-time")
	case c.KeyStddev < 0:
		return fmt.Errorf("key-stddev must not be negative")
	}
	if c.Vs != "" {
		if _, _, err := net.SplitHostPort(c.Vs); err != nil {
			return fmt.Errorf("--vs %q: want HOST:PORT", c.Vs)
		}
	}
	for _, cmd := range c.Commands {
		if _, err := ParseTemplate(cmd.Text); err != nil {
			return fmt.Errorf("--command %q: %v", cmd.Text, err)
		}
	}
	return nil
}

// opSpec is one entry of a client's request cycle.
type opSpec struct {
	tmpl    *Template
	name    string // statistics type
	ratio   int
	pattern byte
	hits    bool // count hits and misses (GET of the SET:GET mix)
}

// ops returns the request cycle: SET and GET by --ratio, or the --commands by their ratios.
func (c *Config) ops() []opSpec {
	var ops []opSpec
	if len(c.Commands) == 0 {
		if c.RatioSet > 0 {
			t, _ := ParseTemplate("SET " + keyPlaceholder + " " + dataPlaceholder)
			ops = append(ops, opSpec{tmpl: t, name: "Sets", ratio: c.RatioSet, pattern: c.SetPattern})
		}
		if c.RatioGet > 0 {
			t, _ := ParseTemplate("GET " + keyPlaceholder)
			ops = append(ops, opSpec{tmpl: t, name: "Gets", ratio: c.RatioGet, pattern: c.GetPattern, hits: true})
		}
		return ops
	}
	for _, cmd := range c.Commands {
		t, _ := ParseTemplate(cmd.Text)
		ops = append(ops, opSpec{tmpl: t, name: t.Name, ratio: cmd.Ratio, pattern: cmd.Pattern})
	}
	return ops
}

// prefillOp is the command the prefill writes every key with: SET, or the first --command.
func (c *Config) prefillOp() opSpec {
	if len(c.Commands) == 0 {
		t, _ := ParseTemplate("SET " + keyPlaceholder + " " + dataPlaceholder)
		return opSpec{tmpl: t, name: "Sets", ratio: 1, pattern: PatternParallel}
	}
	t, _ := ParseTemplate(c.Commands[0].Text)
	return opSpec{tmpl: t, name: t.Name, ratio: 1, pattern: PatternParallel}
}

// cycle maps the position of a request in a client's sequence to its op: each op is sent ratio
// times in a row, then the next (memtier's ratio semantics).
type cycle struct {
	ops   []opSpec
	which int
	left  int
}

func newCycle(ops []opSpec) *cycle { return &cycle{ops: ops, left: ops[0].ratio} }

// next returns the index of the op of the next request.
func (c *cycle) next() int {
	for c.left == 0 {
		c.which = (c.which + 1) % len(c.ops)
		c.left = c.ops[c.which].ratio
	}
	c.left--
	return c.which
}
