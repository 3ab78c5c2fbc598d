package crashtest

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
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

// freeMB returns the free space of dir's filesystem in MB.
func freeMB(t *testing.T, dir string) float64 {
	t.Helper()
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		t.Fatal(err)
	}
	return float64(st.Bavail) * float64(st.Bsize) / (1 << 20)
}

// TestDiskFull_ServerFillsDiskWithBlobs_MisconfThenDeletesFreeAndWritesResume has the server
// fill a small disk itself with values big enough for blob files (the flushes then write blob
// files, which RocksDB must never meet a full disk with): every refused write gets MISCONF,
// never RocksDB's error; DEL and FLUSHALL run while the disk is low and give the space back;
// then writes resume by themselves, with no restart.
func TestDiskFull_ServerFillsDiskWithBlobs_MisconfThenDeletesFreeAndWritesResume(t *testing.T) {
	mnt := mountSmallFS(t, "64m")
	dir := filepath.Join(mnt, "data")
	p, _ := startShardis(t, dir, "--shards", "2", "--write-buffer-size", "16mb", "--disk-reserve", "8mb")
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("server output:\n%s", p.out)
		}
	})
	c := p.client(t)
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(1, 2))
	value := func() string { // incompressible, so it takes its size in the blob files
		b := make([]byte, 16<<10)
		for i := range b {
			b[i] = byte(rng.Uint32())
		}
		return string(b)
	}
	writeUntilRefused := func(prefix string) int {
		for i := range 8192 { // 128 MB: twice the disk
			err := c.Set(ctx, prefix+strconv.Itoa(i), value(), 0).Err()
			if err == nil {
				continue
			}
			if err.Error() != misconf {
				t.Fatalf("write %d on a filling disk got %q, want %q; output:\n%s", i, err, misconf, p.out)
			}
			return i
		}
		t.Fatalf("8192 writes of 16 KB on a 64 MB disk were all accepted")
		return 0
	}
	free0 := freeMB(t, mnt)
	n := writeUntilRefused("k")
	lowMB := freeMB(t, mnt)
	t.Logf("%.1f MB free at start; %d writes of 16 KB (%.1f MB) accepted before MISCONF; %.1f MB free then",
		free0, n, float64(n)/64, lowMB)
	// A full disk keeps refusing, with MISCONF, and stays up.
	for i := range 20 {
		if err := c.Set(ctx, "more"+strconv.Itoa(i), value(), 0).Err(); err == nil || err.Error() != misconf {
			t.Fatalf("a write on the full disk got %v, want %q", err, misconf)
		}
	}
	if v, err := c.Exists(ctx, "k0").Result(); err != nil || v != 1 {
		t.Fatalf("EXISTS k0 on a full disk = %d, %v", v, err)
	}

	// DEL, UNLINK and FLUSHALL (no denyoom flag) run while the disk is low. The store may
	// still refuse one for a moment, while RocksDB works in the room kept for it (a flush or
	// compaction in progress), with MISCONF too.
	freeing := func(what string, f func() error) {
		waitFor(t, what+" on a low disk", func() bool {
			err := f()
			if err != nil && err.Error() != misconf {
				t.Fatalf("%s on a low disk: %v", what, err)
			}
			return err == nil
		})
	}
	freeing("DEL", func() error { return c.Del(ctx, "k0", "k1", "k2").Err() })
	if got, err := c.Exists(ctx, "k0", "k1", "k2").Result(); err != nil || got != 0 {
		t.Fatalf("EXISTS after DEL = %d, %v", got, err)
	}
	freeing("UNLINK", func() error { return c.Unlink(ctx, "k3").Err() })
	freeing("FLUSHALL", func() error { return c.FlushAll(ctx).Err() })
	// The space comes back (the values' blob files; the binlog keeps its records) and writes
	// resume, with no restart.
	want := float64(n) / 64 / 2
	waitFor(t, fmt.Sprintf("FLUSHALL of %.1f MB of values giving %.1f MB back", float64(n)/64, want), func() bool {
		return freeMB(t, mnt)-lowMB >= want
	})
	waitFor(t, "writes accepted once FLUSHALL freed the disk", func() bool {
		return c.Set(ctx, "after", "1", 0).Err() == nil
	})
	t.Logf("after FLUSHALL: %.1f MB free, writes accepted", freeMB(t, mnt))
	m := writeUntilRefused("again")
	t.Logf("%d writes of 16 KB (%.1f MB) accepted after FLUSHALL before MISCONF again", m, float64(m)/64)
	if m == 0 {
		t.Fatal("no write was accepted after FLUSHALL")
	}
	if code := p.stop(t, 30*time.Second); code != 0 || strings.Contains(p.out.String(), "Assertion") {
		t.Fatalf("SIGTERM: exit code %d; output:\n%s", code, p.out)
	}
}

// TestDiskFull_DefaultSettingsOnSmallVolume_Usable: with the default disk-reserve and
// write-buffer-size, a 64 MB volume opens and takes a fair share of its size in writes
// before MISCONF (the default reserve is at most a sixteenth of the volume, and the memtables
// at most an eighth).
func TestDiskFull_DefaultSettingsOnSmallVolume_Usable(t *testing.T) {
	mnt := mountSmallFS(t, "64m")
	p, _ := startShardis(t, filepath.Join(mnt, "data"), "--shards", "2")
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("server output:\n%s", p.out)
		}
	})
	c := p.client(t)
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(3, 4))
	b := make([]byte, 16<<10)
	n := 0
	for ; n < 8192; n++ {
		for i := range b {
			b[i] = byte(rng.Uint32())
		}
		err := c.Set(ctx, "k"+strconv.Itoa(n), string(b), 0).Err()
		if err == nil {
			continue
		}
		if err.Error() != misconf {
			t.Fatalf("write %d: %v, want %q", n, err, misconf)
		}
		break
	}
	t.Logf("defaults on a 64 MB volume: %d writes of 16 KB (%.1f MB) accepted before MISCONF", n, float64(n)/64)
	if n < 8*64 {
		t.Fatalf("only %.1f MB were written on a 64 MB volume with the default settings; want at least 8", float64(n)/64)
	}
	if code := p.stop(t, 30*time.Second); code != 0 || strings.Contains(p.out.String(), "Assertion") {
		t.Fatalf("SIGTERM: exit code %d; output:\n%s", code, p.out)
	}
}
