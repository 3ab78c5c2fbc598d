package server

import (
	"path/filepath"
	"strings"
	"testing"

	"shardis/config"
)

// LoadUsers applies user lines and the aclfile as Redis does at start, and refuses what
// Redis refuses: a wrong rule, both ways of defining users at once, a missing aclfile.
func TestLoadUsers(t *testing.T) {
	load := func(args ...string) error {
		t.Helper()
		cfg, err := config.Load(args)
		if err != nil {
			t.Fatal(err)
		}
		return New(cfg, nil).LoadUsers()
	}
	if err := load("--requirepass", "pw", "--user", "a", "on", ">x", "~*", "allcommands"); err != nil {
		t.Fatalf("valid user line: %v", err)
	}
	err := load("--user", "a", "on", "+@nosuch")
	if err == nil || !strings.Contains(err.Error(), "Error loading ACL rule '+@nosuch' for the user named 'a': Unknown command or category name in ACL") {
		t.Fatalf("wrong rule: %v", err)
	}
	missing := filepath.Join(t.TempDir(), "none.acl")
	err = load("--aclfile", missing, "--user", "a", "on")
	if err == nil || !strings.Contains(err.Error(), "please define either an ACL file or declare users directly in your redis.conf, but not both") {
		t.Fatalf("aclfile and user lines: %v", err)
	}
	err = load("--aclfile", missing)
	if err == nil || !strings.Contains(err.Error(), "Error loading ACLs, opening file '"+missing+"': No such file or directory") {
		t.Fatalf("missing aclfile: %v", err)
	}
	cfg, _ := config.Load([]string{"--requirepass", "pw", "--user", "default", "on", "nopass", "~*", "+@all"})
	s := New(cfg, nil)
	if err := s.LoadUsers(); err != nil {
		t.Fatal(err)
	}
	if s.ACL.AuthRequired() {
		t.Fatal("a user default line did not replace requirepass's password")
	}
}
