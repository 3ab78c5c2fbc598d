package shard

import (
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/linxGnu/grocksdb"

	"shardis/codec"
)

// setManifestFormat rewrites the manifest of the closed data directory dir as format would
// have written it, leaving everything else as it is.
func setManifestFormat(t *testing.T, dir string, format, shards int) {
	t.Helper()
	opts := grocksdb.NewDefaultOptions()
	defer opts.Destroy()
	path := filepath.Join(dir, "rocksdb")
	names, err := grocksdb.ListColumnFamilies(opts, path)
	if err != nil {
		t.Fatal(err)
	}
	cfOpts := make([]*grocksdb.Options, len(names))
	for i := range cfOpts {
		cfOpts[i] = opts
	}
	db, cfs, err := grocksdb.OpenDbColumnFamilies(opts, path, names, cfOpts)
	if err != nil {
		t.Fatal(err)
	}
	wo := grocksdb.NewDefaultWriteOptions()
	b, _ := json.Marshal(manifest{Format: format, Shards: shards})
	err = db.PutCF(wo, cfs[0], manifestKey, b)
	wo.Destroy()
	for _, cf := range cfs {
		cf.Destroy()
	}
	db.Close()
	if err != nil {
		t.Fatal(err)
	}
}

func manifestFormat(t *testing.T, s *Store) int {
	t.Helper()
	v, err := s.db.GetCF(s.ro, s.defCF, manifestKey)
	if err != nil {
		t.Fatal(err)
	}
	defer v.Free()
	var m manifest
	if err := json.Unmarshal(v.Data(), &m); err != nil {
		t.Fatal(err)
	}
	return m.Format
}

// A format-2 directory (binlog records without units) opens: its manifest is rewritten and
// its records read back as records that stand alone.
func TestStore_Open_MigratesFormat2(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(Options{Dir: dir, Shards: 2, Databases: 16})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Do(0, func(tx *Tx) { tx.LogShard(0, 3, []byte("FLUSHDB")) }); err != nil {
		t.Fatal(err)
	}
	s.Close()
	setManifestFormat(t, dir, 2, 2)

	s = openTestStore(t, dir, 2)
	if f := manifestFormat(t, s); f != codec.FormatVersion {
		t.Fatalf("manifest format %d after the migration, want %d", f, codec.FormatVersion)
	}
	recs, err := s.ReadBinlog(0, 0, 10)
	if err != nil || len(recs) != 1 || recs[0].DB != 3 || recs[0].Unit.ID != 0 || string(recs[0].Args[0]) != "FLUSHDB" {
		t.Fatalf("records after the migration: %+v, %v", recs, err)
	}
}

// A format-3, 4 or 5 directory opens as this build's format: nothing in it changes, and an
// older build can no longer open it (it would misread streams, fragmented strings, units in
// one shard, packed hashes and sets).
func TestStore_Open_MigratesFormat3To5(t *testing.T) {
	for _, from := range []int{3, 4, 5} {
		t.Run(fmt.Sprint(from), func(t *testing.T) { testMigratesFrom(t, from) })
	}
}

func testMigratesFrom(t *testing.T, from int) {
	dir := t.TempDir()
	s, err := Open(Options{Dir: dir, Shards: 1, Databases: 16})
	if err != nil {
		t.Fatal(err)
	}
	_ = s.Do(0, func(tx *Tx) { tx.SetMeta(0, []byte("k"), str("v")) })
	s.Close()
	setManifestFormat(t, dir, from, 1)
	s = openTestStore(t, dir, 1)
	if f := manifestFormat(t, s); f != codec.FormatVersion {
		t.Fatalf("manifest format %d after the migration, want %d", f, codec.FormatVersion)
	}
	_ = s.Do(0, func(tx *Tx) {
		if m, ok := tx.Meta(0, []byte("k")); !ok || string(m.Value) != "v" {
			t.Errorf("a key of the format-%d directory: %v %q", from, ok, m.Value)
		}
	})
}

// A directory of a format this build does not know (a newer one, or one with no migration)
// is refused with both versions named, and left as it was.
func TestStore_Open_RefusesUnknownFormat(t *testing.T) {
	for _, format := range []int{codec.FormatVersion + 1, 1} {
		t.Run(fmt.Sprint(format), func(t *testing.T) {
			dir := t.TempDir()
			s, err := Open(Options{Dir: dir, Shards: 1, Databases: 16})
			if err != nil {
				t.Fatal(err)
			}
			s.Close()
			setManifestFormat(t, dir, format, 1)
			_, err = Open(Options{Dir: dir, Shards: 1, Databases: 16})
			want := fmt.Sprintf("has format %d, this build reads format %d", format, codec.FormatVersion)
			if !errors.Is(err, ErrLayout) || !strings.Contains(err.Error(), want) {
				t.Fatalf("Open = %v, want %q", err, want)
			}
			setManifestFormat(t, dir, codec.FormatVersion, 1) // still openable once told the truth
			openTestStore(t, dir, 1)
		})
	}
}
