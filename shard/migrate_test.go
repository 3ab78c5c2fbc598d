package shard

import (
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
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

// writeFormat5List stores list key (logical db 0) as a format-5 build did: a meta without
// the list-nodes flag and one data key per element at its position.
func writeFormat5List(t *testing.T, s *Store, key string, elems []string) {
	t.Helper()
	k := []byte(key)
	if err := s.Do(s.ShardOf(k), func(tx *Tx) {
		m := codec.Meta{Type: codec.TypeList, Version: tx.NewVersion(k), Count: uint64(len(elems)),
			Head: codec.ListInitialSeq - 3, Tail: codec.ListInitialSeq - 3 + uint64(len(elems))}
		tx.SetMeta(0, k, &m) // the key's bookkeeping
		p := tx.part(k)
		mv := codec.AppendMeta(nil, &m)
		mv[0] = byte(codec.TypeList) // no flag
		tx.putRaw(p, codec.AppendMetaKey(nil, tx.pdb(p, 0), k), mv)
		prefix := tx.DataPrefix(0, k, m.Version)
		for i, e := range elems {
			tx.putRaw(p, appendFormat5ListSeq(slices.Clone(prefix), m.Head+uint64(i)), []byte(e))
		}
	}); err != nil {
		t.Fatal(err)
	}
}

// readNodeList returns the elements of list key read from its nodes, checking that every data
// key is a node or a big element of a live position.
func readNodeList(t *testing.T, s *Store, key string) []string {
	t.Helper()
	k := []byte(key)
	var out []string
	if err := s.Do(s.ShardOf(k), func(tx *Tx) {
		m, ok := tx.Meta(0, k)
		if !ok {
			return
		}
		it := tx.IterateData(0, k, m.Version, nil, nil, false)
		defer it.Close()
		var node []byte
		for ; it.Valid(); it.Next() {
			n, seq, big, ok := codec.ParseListElem(it.Elem())
			if !ok || n < m.Head>>codec.ListNodeShift || n > (m.Tail-1)>>codec.ListNodeShift {
				t.Errorf("%s: data key %x is not a node or big element of [%d, %d)", key, it.Elem(), m.Head, m.Tail)
				return
			}
			if big {
				if kind, _ := codec.ListNodeSlot(node, int(seq%codec.ListNodeSlots)); kind != codec.ListSlotBig || seq != m.Head+uint64(len(out)) {
					t.Errorf("%s: big element at %d out of place", key, seq)
					return
				}
				out = append(out, string(it.Value()))
			} else {
				node = slices.Clone(it.Value())
			}
			for seq := max(m.Head+uint64(len(out)), n<<codec.ListNodeShift); seq < min(m.Tail, (n+1)<<codec.ListNodeShift); seq++ {
				kind, e := codec.ListNodeSlot(node, int(seq%codec.ListNodeSlots))
				if kind != codec.ListSlotInline {
					break
				}
				out = append(out, string(e))
			}
		}
		if uint64(len(out)) != m.Count {
			t.Errorf("%s: %d elements read, meta count %d", key, len(out), m.Count)
		}
	}); err != nil {
		t.Fatal(err)
	}
	return out
}

// A format-5 directory's lists are converted to nodes when it opens, big elements to keys of
// their own, keys and their counts kept; a rerun (a crash before the manifest was rewritten)
// leaves the lists already converted as they are.
func TestStore_Open_MigratesFormat5_ListsToNodes(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(Options{Dir: dir, Shards: 2, Databases: 16})
	if err != nil {
		t.Fatal(err)
	}
	lists := map[string][]string{"short": {"a", "", "c"}}
	var long []string
	for i := range 200 {
		e := fmt.Sprint("e", i)
		if i%9 == 4 {
			e += strings.Repeat("x", 300)
		}
		long = append(long, e)
	}
	lists["long"] = long
	for k, elems := range lists {
		writeFormat5List(t, s, k, elems)
	}
	_ = s.Do(0, func(tx *Tx) { tx.SetMeta(0, []byte("str"), str("v")) })
	s.Close()
	for round := range 2 {
		setManifestFormat(t, dir, 5, 2)
		s = openTestStore(t, dir, 2)
		if f := manifestFormat(t, s); f != codec.FormatVersion {
			t.Fatalf("round %d: manifest format %d after the migration", round, f)
		}
		for k, want := range lists {
			if got := readNodeList(t, s, k); !slices.Equal(got, want) {
				t.Fatalf("round %d: %s = %.200q, want %.200q", round, k, got, want)
			}
		}
		if n := s.shards[0].Keys(0) + s.shards[1].Keys(0); n != 3 {
			t.Errorf("round %d: %d keys, want 3", round, n)
		}
		s.Close()
	}
}
