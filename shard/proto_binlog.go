package shard

import "os"

// Throwaway prototype for issue 25/27's measurement: SHARDIS_BINLOG_PROTO=cf (today),
// logdata (the record as WriteBatch.PutLogData, out of the memtables) or none (no binlog write).
var binlogProto = os.Getenv("SHARDIS_BINLOG_PROTO")

// SHARDIS_BINLOG_CF=nocomp,nobloom: the binlog families without LZ4 / without bloom filters.
var binlogCFProto = os.Getenv("SHARDIS_BINLOG_CF")
