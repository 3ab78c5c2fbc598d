package crashtest

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

const misconf = "MISCONF Errors writing to the AOF file: No space left on device"

// mountSmallFS mounts a tmpfs of size bytes on a fresh directory and returns it; it is
// unmounted when the test ends. The test is skipped when the kernel refuses the mount (not
// root, or no tmpfs in this sandbox).
func mountSmallFS(t *testing.T, size string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "mnt")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size="+size, "tmpfs", dir).CombinedOutput(); err != nil {
		t.Skipf("a small filesystem is needed and mounting a tmpfs was refused: %v: %s", err, out)
	}
	t.Cleanup(func() { _ = exec.Command("umount", "-l", dir).Run() })
	return dir
}

// fill writes a file on dir's filesystem until it is full.
func fill(t *testing.T, path string) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	chunk := make([]byte, 1<<20)
	for range 4096 {
		if _, err := f.Write(chunk); err != nil {
			if errors.Is(err, syscall.ENOSPC) {
				return
			}
			t.Fatal(err)
		}
	}
	t.Fatal("the filesystem never filled")
}

// waitFor retries f (a bounded number of times, pausing between tries) until it reports true.
func waitFor(t *testing.T, what string, f func() bool) {
	t.Helper()
	for range 600 {
		if f() {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("never: %s", what)
}

// TestDiskFull_WritesRefusedReadsGoOnNoAbort fills the disk under a running server: writers
// get Redis's MISCONF error while reads go on, writes resume when there is room again,
// SIGTERM on a full disk stops cleanly (Debian's librocksdb aborts on an assertion when it
// meets a full disk: it must never be let near one), a start on a full disk exits with a
// message, and once there is room every acknowledged write is there.
func TestDiskFull_WritesRefusedReadsGoOnNoAbort(t *testing.T) {
	mnt := mountSmallFS(t, "64m")
	dir, filler := filepath.Join(mnt, "data"), filepath.Join(mnt, "filler")
	flags := []string{"--shards", "2", "--write-buffer-size", "16mb", "--disk-reserve", "0"}
	p, _ := startShardis(t, dir, flags...)
	c := p.client(t)
	ctx := context.Background()
	acked := map[string]string{}
	set := func(k, v string) error {
		err := c.Set(ctx, k, v, 0).Err()
		if err == nil {
			acked[k] = v
		}
		return err
	}
	if err := set("before", "1"); err != nil {
		t.Fatal(err)
	}
	n := 0
	refused := func() bool {
		n++
		err := set("k"+strconv.Itoa(n), strings.Repeat("v", 4096))
		if err != nil && err.Error() != misconf {
			t.Fatalf("a write on a full disk got %q, want %q", err, misconf)
		}
		return err != nil
	}

	fill(t, filler)
	waitFor(t, "a write refused on the full disk", refused)
	if v, err := c.Get(ctx, "before").Result(); err != nil || v != "1" {
		t.Fatalf("GET on a full disk = %q, %v", v, err)
	}
	if err := c.Ping(ctx).Err(); err == nil || err.Error() != misconf {
		t.Fatalf("PING on a full disk = %v; Redis answers %s", err, misconf)
	}
	if info := c.Info(ctx, "persistence").Val(); !strings.Contains(info, "aof_last_write_status:err") {
		t.Fatalf("INFO persistence on a full disk:\n%s", info)
	}
	// Room again: writes resume.
	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "writes accepted once there is room", func() bool { return !refused() })
	if info := c.Info(ctx, "persistence").Val(); !strings.Contains(info, "aof_last_write_status:ok") {
		t.Fatalf("INFO persistence with room again:\n%s", info)
	}
	// Full again, and stopped while full.
	fill(t, filler)
	waitFor(t, "a write refused on the full disk again", refused)
	if code := p.stop(t, 30*time.Second); code != 0 || strings.Contains(p.out.String(), "Assertion") {
		t.Fatalf("SIGTERM on a full disk: exit code %d; output:\n%s", code, p.out)
	}

	q := launchShardis(t, dir, flags...)
	if code := q.waitExit(t, 30*time.Second); code == 0 || !strings.Contains(q.out.String(), "No space left on device") ||
		!strings.Contains(q.out.String(), "free some space") || strings.Contains(q.out.String(), "Assertion") {
		t.Fatalf("a start on a full disk: exit code %d; want a message and a non-zero exit; output:\n%s", code, q.out)
	}

	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	p, _ = startShardis(t, dir, flags...)
	c = p.client(t)
	for k, v := range acked {
		if got, err := c.Get(ctx, k).Result(); err != nil || got != v {
			t.Fatalf("after the restart, GET %s = %d bytes, %v; the write was acknowledged", k, len(got), err)
		}
	}
	if err := c.Set(ctx, "after", "1", 0).Err(); err != nil {
		t.Fatal(err)
	}
	if code := p.stop(t, 30*time.Second); code != 0 {
		t.Fatalf("SIGTERM: exit code %d; output:\n%s", code, p.out)
	}
}
