package cmds_test

import (
	"bufio"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"shardis/internal/testserver"
)

// exporterBinary is Debian's prometheus-redis-exporter (make deps installs it).
const exporterBinary = "prometheus-redis-exporter"

// TestExporter_MetricsAsRedis runs the real prometheus-redis-exporter against shardis holding
// the data cmds/testdata/exporter_metrics.txt was recorded with on redis-server 7.0.15, and
// checks that it reports every metric it reports for Redis, that shardis is up for it, and
// that it logs no warning or error.
func TestExporter_MetricsAsRedis(t *testing.T) {
	bin, err := exec.LookPath(exporterBinary)
	if err != nil {
		t.Skipf("%s is not installed (make deps installs it)", exporterBinary)
	}
	want := exporterWantMetrics(t)

	s := testserver.Start(t)
	c := s.Client(t)
	for _, cmd := range [][]any{
		{"SET", "a", "1"}, {"HSET", "h", "f", "v"}, {"LPUSH", "l", "x", "y"}, {"SADD", "s", "m"},
		{"ZADD", "z", "1", "m"}, {"SET", "e", "v", "EX", "1000"},
	} {
		if err := c.Do(connCtx, cmd...).Err(); err != nil {
			t.Fatalf("%v: %v", cmd, err)
		}
	}
	c1 := s.Client(t)
	if err := c1.Do(connCtx, "SELECT", "1").Err(); err != nil {
		t.Fatal(err)
	}
	if err := c1.Do(connCtx, "SET", "b", "2").Err(); err != nil {
		t.Fatal(err)
	}

	web := fmt.Sprintf("127.0.0.1:%d", testserver.FreePort(t))
	// The log is read only after Wait, when exec's copying goroutine is done with it.
	var logBuf strings.Builder
	cmd := exec.Command(bin, "-redis.addr", "redis://"+s.Addr, "-web.listen-address", web)
	cmd.Stdout, cmd.Stderr = &logBuf, &logBuf
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()

	body := exporterScrape(t, "http://"+web+"/metrics")
	got := map[string]bool{}
	sc := bufio.NewScanner(strings.NewReader(body))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		l := sc.Text()
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		if i := strings.IndexAny(l, "{ "); i > 0 {
			got[l[:i]] = true
		}
	}
	if !strings.Contains(body, "\nredis_up 1\n") {
		t.Errorf("the exporter does not see shardis up:\n%s", body)
	}
	var missing []string
	for _, m := range want {
		if !got[m] {
			missing = append(missing, m)
		}
	}
	if len(missing) > 0 {
		t.Errorf("%d of the %d metrics the exporter reports for Redis are missing: %v", len(missing), len(want), missing)
	}
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	for _, l := range strings.Split(logBuf.String(), "\n") {
		if strings.Contains(l, "level=warn") || strings.Contains(l, "level=error") || strings.Contains(l, "level=fatal") {
			t.Errorf("exporter log: %s", l)
		}
	}
}

// exporterWantMetrics reads the metric names recorded from redis-server.
func exporterWantMetrics(t *testing.T) []string {
	data, err := os.ReadFile("testdata/exporter_metrics.txt")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, l := range strings.Split(string(data), "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
			names = append(names, l)
		}
	}
	if len(names) < 100 {
		t.Fatalf("testdata/exporter_metrics.txt holds only %d names", len(names))
	}
	return names
}

// exporterScrape fetches the metrics page once the exporter listens (bounded wait; it scrapes
// shardis on each request).
func exporterScrape(t *testing.T, url string) string {
	t.Helper()
	hc := &http.Client{Timeout: 30 * time.Second}
	var lastErr error
	for range 300 {
		resp, err := hc.Get(url)
		if err != nil {
			lastErr = err
			time.Sleep(50 * time.Millisecond)
			continue
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("GET %s: %d %v", url, resp.StatusCode, err)
		}
		return string(b)
	}
	t.Fatalf("the exporter never answered on %s: %v", url, lastErr)
	return ""
}
