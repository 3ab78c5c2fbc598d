package server

import (
	"testing"

	"shardis/config"
	"shardis/shard"
)

func TestLoad_EndsLoadingAndWakesWaiters(t *testing.T) {
	cfg, err := config.Load([]string{"--dir", t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	store, err := shard.New(shard.Options{Dir: cfg.Dir(), Shards: 2, Databases: 16})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	s := New(cfg, store)
	if !s.Loading() {
		t.Fatal("a server over a store not open yet is not loading")
	}
	woken := 0
	if !s.WaitLoaded(func() { woken++ }) {
		t.Fatal("WaitLoaded while loading registered nothing")
	}
	if err := s.Load(); err != nil {
		t.Fatal(err)
	}
	if s.Loading() || woken != 1 || !store.Opened() {
		t.Fatalf("after Load: loading %v, waiters woken %d, store open %v", s.Loading(), woken, store.Opened())
	}
	if s.WaitLoaded(func() { woken++ }) || woken != 1 {
		t.Fatal("WaitLoaded after loading registered a waiter")
	}
	if started, _, _ := s.LoadingProgress(); started == 0 {
		t.Fatal("no loading start time")
	}
}
