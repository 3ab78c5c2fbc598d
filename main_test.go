package main

import (
	"testing"

	"shardis/config"
)

// shards left at 0 lets an existing data directory keep its own count; a configured count
// must match the directory's.
func TestStoreOptions_ShardsFromDirOnlyWhenNotConfigured(t *testing.T) {
	for _, c := range []struct {
		args    []string
		fromDir bool
	}{
		{nil, true},
		{[]string{"--shards", "0"}, true},
		{[]string{"--shards", "4"}, false},
	} {
		cfg, err := config.Load(c.args)
		if err != nil {
			t.Fatal(err)
		}
		o := storeOptions(cfg)
		if o.ShardsFromDir != c.fromDir || o.Shards < 1 {
			t.Errorf("%v: Shards %d ShardsFromDir %v, want ShardsFromDir %v", c.args, o.Shards, o.ShardsFromDir, c.fromDir)
		}
	}
}
