package apptest

import (
	"context"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"shardis/internal/testserver"
)

// nodeModules is where `make deps` installs the npm packages the tests use (bullmq, ioredis),
// relative to the repository root.
const nodeModules = ".cache/node/node_modules"

// runScenario runs a client program against a fresh shardis and returns its last output
// line (a JSON summary); it fails the test with the program's output if the program fails.
// The program's own deadline is generous; the context's is a backstop.
func runScenario(t *testing.T, env []string, name string, args ...string) string {
	t.Helper()
	s := testserver.Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	_, port, _ := net.SplitHostPort(s.Addr)
	cmd.Env = append(os.Environ(), append(env, "PORT="+port)...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	return lines[len(lines)-1]
}

// TestBullMQ_JobsFlowsRepeatsAndLimits_AllComplete: BullMQ adds 500 jobs with delays and
// priorities and a worker completes each once, QueueEvents sees every completion, a
// repeatable job repeats, a rate-limited worker keeps its limit, and a flow's parent runs
// after its children with their results (testdata/bullmq_scenario.js).
func TestBullMQ_JobsFlowsRepeatsAndLimits_AllComplete(t *testing.T) {
	t.Parallel()
	root, _ := filepath.Abs("../..")
	modules := filepath.Join(root, nodeModules)
	if _, err := os.Stat(filepath.Join(modules, "bullmq")); err != nil {
		t.Skipf("bullmq is not installed in %s (make deps installs it)", modules)
	}
	got := runScenario(t, []string{"NODE_PATH=" + modules, "DEADLINE_MS=240000"}, "node", "testdata/bullmq_scenario.js")
	for _, want := range []string{`"completed":500`, `"ranOnce":500`, `"eventsCompleted":500`, `"repeatRuns":true`, `"flowSum":6`} {
		if !strings.Contains(got, want) {
			t.Errorf("BullMQ summary %s lacks %s", got, want)
		}
	}
}

// TestRQ_WorkerRunsJobsFailuresAndScheduled: a real `rq worker --with-scheduler` runs 200
// jobs, puts a failing one in the failed registry and runs one scheduled for later
// (testdata/rq/rq_scenario.py).
func TestRQ_WorkerRunsJobsFailuresAndScheduled(t *testing.T) {
	t.Parallel()
	// Debian's python3-rq is installed for the system python, which a PATH python3 (pyenv,
	// a venv) may not be.
	python := "/usr/bin/python3"
	if err := exec.Command(python, "-c", "import rq").Run(); err != nil {
		t.Skip("python3-rq is not installed (make deps installs it)")
	}
	got := runScenario(t, []string{"DEADLINE_S=240"}, python, "testdata/rq/rq_scenario.py")
	for _, want := range []string{`"finished": 201`, `"scheduled_result": 42`} {
		if !strings.Contains(got, want) {
			t.Errorf("rq summary %s lacks %s", got, want)
		}
	}
}
