package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// build is one way of linking shardis that the suite measures.
type build struct {
	name string   // "release" or "debian": the word of -builds and the prefix of later passes' anchors
	desc string   // what BENCHMARKS.md calls it
	env  []string // what go build needs to link it (nil: Debian's shared librocksdb)
	bin  string   // where the binary goes
}

// rocksdbBuild says how to link the release build of make release when .cache/rocksdb-release
// holds it (env is what links it statically); env is nil when it does not.
func rocksdbBuild(root string) (desc string, env []string) {
	dir := filepath.Join(root, ".cache", "rocksdb-release")
	ldflags, err := os.ReadFile(filepath.Join(dir, "ldflags"))
	if _, statErr := os.Stat(filepath.Join(dir, "librocksdb.a")); err != nil || statErr != nil {
		return "no release build of RocksDB", nil
	}
	version, _ := os.ReadFile(filepath.Join(dir, "version"))
	return "release build " + strings.TrimSpace(string(version)) + " (make release: static, DEBUG_LEVEL=0)", []string{
		"CGO_CFLAGS=-I" + filepath.Join(dir, "include"),
		"CGO_LDFLAGS=-L" + dir + " -lrocksdb " + strings.TrimSpace(string(ldflags)) + " -lstdc++ -lm",
	}
}

const debianDesc = "Debian's librocksdb (static archive, built with assertions)"

// debianBuild says how make build links Debian's RocksDB: statically from the archive
// librocksdb-dev ships (env links it), or, without one, the shared library (env nil).
func debianBuild() (desc string, env []string) {
	out, err := exec.Command("gcc", "-print-file-name=librocksdb.a").Output()
	archive := strings.TrimSpace(string(out))
	if _, statErr := os.Stat(archive); err != nil || statErr != nil || !filepath.IsAbs(archive) {
		return "Debian's librocksdb (shared, built with assertions)", nil
	}
	return debianDesc, []string{"CGO_LDFLAGS=" + archive + " " + debianRocksdbDeps}
}

// debianRocksdbDeps are the libraries Debian's RocksDB archive needs (the Makefile's
// ROCKSDB_DEPS).
const debianRocksdbDeps = "-lgflags -lsnappy -lz -lbz2 -llz4 -lzstd -lstdc++ -lm -lpthread"

// selectBuilds resolves -builds. "auto" measures the release build and then Debian's when make
// release has cached its library, else Debian's alone. The first build goes to bin/shardis
// (the one make bench leaves behind), later ones to bin/shardis-NAME.
func selectBuilds(root, spec string) ([]build, error) {
	if spec == "" || spec == "auto" {
		spec = "debian"
		if _, env := rocksdbBuild(root); env != nil {
			spec = "release,debian"
		}
	}
	var out []build
	seen := map[string]bool{}
	for _, name := range strings.Split(spec, ",") {
		name = strings.TrimSpace(name)
		if seen[name] {
			return nil, fmt.Errorf("-builds %q names %s twice", spec, name)
		}
		seen[name] = true
		b := build{name: name, bin: filepath.Join(root, "bin", "shardis")}
		if len(out) > 0 {
			b.bin += "-" + name
		}
		switch name {
		case "release":
			if b.desc, b.env = rocksdbBuild(root); b.env == nil {
				return nil, fmt.Errorf("-builds %q: no release build of RocksDB in .cache/rocksdb-release (run make release)", spec)
			}
		case "debian":
			b.desc, b.env = debianBuild()
		default:
			return nil, fmt.Errorf("-builds %q: want release, debian or auto", spec)
		}
		out = append(out, b)
	}
	return out, nil
}

// compile builds b's binary.
func (b build) compile(ctx context.Context, goBin, root string) error {
	args := []string{"build", "-o", b.bin, "."}
	if b.env != nil {
		args = []string{"build", "-tags", "grocksdb_no_link", "-o", b.bin, "."}
	}
	cmd := exec.CommandContext(ctx, goBin, args...)
	cmd.Dir, cmd.Stdout, cmd.Stderr = root, os.Stdout, os.Stderr
	cmd.Env = append(os.Environ(), b.env...)
	fmt.Printf("suite: %s %s\n", strings.Join(b.env, " "), shellJoin(cmd.Args))
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("build %s: %w", b.name, err)
	}
	return nil
}

// profileName is what the pass at index calls the Go profile of load profile id: the id for the
// first pass, the build's name and the id for later ones.
func (b build) profileName(index int, id string) string {
	if index == 0 {
		return id
	}
	return b.name + "-" + id
}
