package atomicfile

import (
	"os"
	"path/filepath"
	"testing"
)

func TestReplace_KeepsPermissionsAndLeavesNoTemporary(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "users.acl")
	if err := os.WriteFile(path, []byte("old\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := Replace(path, "new\n"); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(path)
	if err != nil || string(got) != "new\n" {
		t.Fatalf("content %q, %v", got, err)
	}
	if st, _ := os.Stat(path); st.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, want 0600", st.Mode().Perm())
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("%d files in the directory, want only the replaced one", len(entries))
	}
}

func TestReplace_NewFileIs0644(t *testing.T) {
	path := filepath.Join(t.TempDir(), "new.conf")
	if err := Replace(path, "x"); err != nil {
		t.Fatal(err)
	}
	if st, _ := os.Stat(path); st.Mode().Perm() != 0o644 {
		t.Errorf("mode %v, want 0644", st.Mode().Perm())
	}
}

func TestReplace_MissingDirectoryFails(t *testing.T) {
	if err := Replace(filepath.Join(t.TempDir(), "no", "such", "file"), "x"); err == nil {
		t.Fatal("replaced a file in a directory that does not exist")
	}
}
