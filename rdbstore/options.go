package rdbstore

import (
	"strconv"

	"shardis/config"
	"shardis/rdb"
)

// OptionsFrom returns the RDB writer's options from the configuration: Redis's encoding
// thresholds (the parameters kept for CONFIG), rdbcompression and rdbchecksum.
func OptionsFrom(c *config.Config) rdb.Options {
	o := rdb.DefaultOptions()
	if c == nil {
		return o
	}
	num := func(name string, dst *int) {
		if v, err := strconv.Atoi(c.Value(name)); err == nil {
			*dst = v
		}
	}
	num("hash-max-listpack-entries", &o.HashMaxListpackEntries)
	num("hash-max-listpack-value", &o.HashMaxListpackValue)
	num("zset-max-listpack-entries", &o.ZSetMaxListpackEntries)
	num("zset-max-listpack-value", &o.ZSetMaxListpackValue)
	num("set-max-intset-entries", &o.SetMaxIntsetEntries)
	num("list-max-listpack-size", &o.ListMaxListpackSize)
	num("list-compress-depth", &o.ListCompressDepth)
	num("stream-node-max-bytes", &o.StreamNodeMaxBytes)
	num("stream-node-max-entries", &o.StreamNodeMaxEntries)
	o.Compression = c.RDBCompression()
	o.Checksum = c.RDBChecksum()
	return o
}
