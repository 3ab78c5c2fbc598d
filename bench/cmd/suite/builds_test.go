package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fakeReleaseCache makes root look as if make release had cached its library there.
func fakeReleaseCache(t *testing.T, root string) string {
	t.Helper()
	dir := filepath.Join(root, ".cache", "rocksdb-release")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, body := range map[string]string{"librocksdb.a": "!<arch>\n", "ldflags": " -lpthread -lz\n", "version": "7.8.3-2\n"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestRocksdbBuild_ReleaseOnlyWhenCached(t *testing.T) {
	root := t.TempDir()
	if desc, env := rocksdbBuild(root); env != nil || !strings.Contains(desc, "no release build") {
		t.Fatalf("no cache: %q, %v", desc, env)
	}
	dir := fakeReleaseCache(t, root)
	desc, env := rocksdbBuild(root)
	if !strings.Contains(desc, "release build 7.8.3-2") || len(env) != 2 ||
		env[1] != "CGO_LDFLAGS=-L"+dir+" -lrocksdb -lpthread -lz -lstdc++ -lm" {
		t.Fatalf("cached: %q, %q", desc, env)
	}
}

func TestSelectBuilds_AutoMeasuresBothOnceReleaseIsCached(t *testing.T) {
	root := t.TempDir()
	names := func(spec string) string {
		t.Helper()
		bs, err := selectBuilds(root, spec)
		if err != nil {
			return "error: " + err.Error()
		}
		var out []string
		for _, b := range bs {
			out = append(out, b.name+"="+filepath.Base(b.bin))
		}
		return strings.Join(out, " ")
	}
	if got := names("auto"); got != "debian=shardis" {
		t.Errorf("auto without a release library: %s", got)
	}
	if got := names("release"); !strings.Contains(got, "make release") {
		t.Errorf("release without its library: %s", got)
	}
	fakeReleaseCache(t, root)
	for spec, want := range map[string]string{
		"auto":           "release=shardis debian=shardis-debian",
		"debian":         "debian=shardis",
		"debian,release": "debian=shardis release=shardis-release",
	} {
		if got := names(spec); got != want {
			t.Errorf("-builds %s: %s, want %s", spec, got, want)
		}
	}
	for _, bad := range []string{"fast", "debian,debian"} {
		if got := names(bad); !strings.HasPrefix(got, "error: ") {
			t.Errorf("-builds %s accepted: %s", bad, got)
		}
	}
}

// With librocksdb-dev installed (make deps installs it), the debian build links its static
// archive, as make build does.
func TestDebianBuild_ArchiveInstalled_LinksItStatically(t *testing.T) {
	desc, env := debianBuild()
	if len(env) != 1 || !strings.Contains(env[0], "librocksdb.a ") || !strings.Contains(desc, "static archive") {
		t.Fatalf("debian build: %q, %q", desc, env)
	}
}
