package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestRocksdbBuild_ReleaseOnlyWhenCached(t *testing.T) {
	root := t.TempDir()
	if desc, env := rocksdbBuild(root); env != nil || !strings.Contains(desc, "Debian") {
		t.Fatalf("no cache: %q, %v", desc, env)
	}
	dir := filepath.Join(root, ".cache", "rocksdb-release")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, body := range map[string]string{"librocksdb.a": "!<arch>\n", "ldflags": " -lpthread -lz\n", "version": "7.8.3-2\n"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	desc, env := rocksdbBuild(root)
	if !strings.Contains(desc, "release build 7.8.3-2") || len(env) != 2 ||
		env[1] != "CGO_LDFLAGS=-L"+dir+" -lrocksdb -lpthread -lz -lstdc++ -lm" {
		t.Fatalf("cached: %q, %q", desc, env)
	}
}
