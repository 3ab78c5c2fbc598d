package bench

import (
	"context"
	"encoding/json"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// startRedis starts a private redis-server on a free loopback port; the test is skipped when
// redis-server is not installed.
func startRedis(t *testing.T) string {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		t.Skip("redis-server not installed")
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	dir := t.TempDir()
	cmd := exec.Command(bin, "--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--save", "",
		"--appendonly", "no", "--dir", dir, "--logfile", filepath.Join(dir, "log"))
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	deadline := time.Now().Add(10 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.Write(encodeCommand("PING"))
			rr := newReplyReader(c, 512)
			kind, _, _, err := rr.read()
			c.Close()
			if err == nil && kind == replyValue {
				return addr
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("redis-server on %s did not answer", addr)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func readReport(t *testing.T, path string) *Report {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var rep Report
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatalf("json: %v\n%s", err, b)
	}
	return &rep
}

func TestIntegration_OneSecondLoadAgainstRedis(t *testing.T) {
	addr := startRedis(t)
	host, port, _ := net.SplitHostPort(addr)
	out := filepath.Join(t.TempDir(), "r.json")
	var stdout, stderr strings.Builder
	code := Main(context.Background(), []string{"-s", host, "-p", port, "-t", "2", "-c", "4", "--pipeline", "4",
		"--test-time", "1", "--key-maximum", "1000", "--ratio", "1:3", "--json-out", out}, &stdout, &stderr)
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout.String(), stderr.String())
	}
	rep := readReport(t, out)
	run := rep.Servers[0].Runs[0]
	if run.Totals.Ops == 0 || run.Totals.Errors != 0 || len(run.ConnErrors) != 0 {
		t.Fatalf("totals %+v, connection errors %v", run.Totals, run.ConnErrors)
	}
	if len(run.Types) != 2 || run.Types[0].Type != "Sets" || run.Types[1].Type != "Gets" {
		t.Fatalf("types %+v", run.Types)
	}
	// 1:3 in every client's sequence: three GETs per SET (±1 per client for the cut-off).
	sets, gets := float64(run.Types[0].Ops), float64(run.Types[1].Ops)
	if gets < 3*sets-3*8 || gets > 3*sets+3*8 {
		t.Errorf("sets %v gets %v: not 1:3", sets, gets)
	}
	// At least the test time (how much longer depends on the machine's load: not asserted).
	if run.Seconds < 1 || run.Totals.P50Ms <= 0 || run.Totals.P99Ms < run.Totals.P50Ms {
		t.Errorf("seconds %v p50 %v p99 %v", run.Seconds, run.Totals.P50Ms, run.Totals.P99Ms)
	}
	if !strings.Contains(stdout.String(), "Totals") || !strings.Contains(stderr.String(), "[RUN #1") {
		t.Errorf("no table or no progress line:\n%s\n%s", stdout.String(), stderr.String())
	}
}

func TestIntegration_PrefillCommandsAndVsAgainstRedis(t *testing.T) {
	addr := startRedis(t)
	out := filepath.Join(t.TempDir(), "r.json")
	var stdout, stderr strings.Builder
	// The same server as A and B: the A/B machinery end to end, with RESP3 and --command.
	code := Main(context.Background(), []string{"--server", "127.0.0.1", "--port", strings.Split(addr, ":")[1],
		"--vs", addr, "--runs", "2", "-t", "1", "-c", "3", "--requests", "50", "--protocol", "resp3",
		"--prefill", "--key-minimum", "1", "--key-maximum", "100", "--key-prefix", "h:",
		"--command", "HSET __key__ f __data__", "--command", "HGET __key__ f", "--command-ratio", "2",
		"--command", "NOSUCHCMD __key__", "--hide-histogram", "--json-out", out}, &stdout, &stderr)
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout.String(), stderr.String())
	}
	rep := readReport(t, out)
	if strings.Join(rep.Order, "") != "ABBA" || len(rep.Servers) != 2 || len(rep.RatioAB) != 4 {
		t.Fatalf("order %v servers %d ratios %d", rep.Order, len(rep.Servers), len(rep.RatioAB))
	}
	for _, s := range rep.Servers {
		if s.Prefill == nil || s.Prefill.Totals.Ops != 100 || s.Prefill.Totals.Errors != 0 {
			t.Fatalf("prefill %+v", s.Prefill)
		}
		for _, r := range s.Runs {
			// 3 clients × 50 requests, cycle HSET HGET HGET NOSUCHCMD.
			if r.Totals.Ops != 150 || len(r.Types) != 3 {
				t.Fatalf("run %+v", r)
			}
			if r.Types[2].Type != "NOSUCHCMD" || r.Types[2].Errors == 0 || !strings.Contains(r.Types[2].FirstError, "unknown command") {
				t.Fatalf("error replies not recorded: %+v", r.Types[2])
			}
			if r.Types[0].Errors != 0 || r.Types[1].Errors != 0 {
				t.Fatalf("unexpected errors %+v", r.Types)
			}
		}
	}
	if !strings.Contains(stdout.String(), "A/B COMPARISON") {
		t.Fatalf("no comparison:\n%s", stdout.String())
	}
}

func TestIntegration_InterruptStopsAndReports(t *testing.T) {
	addr := startRedis(t)
	host, port, _ := net.SplitHostPort(addr)
	out := filepath.Join(t.TempDir(), "r.json")
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(300*time.Millisecond, cancel)
	var stdout, stderr strings.Builder
	start := time.Now()
	code := Main(ctx, []string{"-s", host, "-p", port, "-t", "1", "-c", "2", "--test-time", "30",
		"--hide-histogram", "--json-out", out}, &stdout, &stderr)
	if code != 130 || time.Since(start) > 5*time.Second {
		t.Fatalf("exit %d after %v", code, time.Since(start))
	}
	rep := readReport(t, out)
	if !rep.Interrupted || len(rep.Servers[0].Runs) != 1 || rep.Servers[0].Runs[0].Totals.Ops == 0 {
		t.Fatalf("report %+v", rep)
	}
}

func TestIntegration_UnreachableServerFails(t *testing.T) {
	l, _ := net.Listen("tcp", "127.0.0.1:0")
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	var stdout, stderr strings.Builder
	code := Main(context.Background(), []string{"-s", "127.0.0.1", "-p", strconv.Itoa(port), "-t", "1", "-c", "1", "-n", "1"}, &stdout, &stderr)
	if code != 1 || !strings.Contains(stderr.String(), "connect to") {
		t.Fatalf("exit %d, stderr %q", code, stderr.String())
	}
}
