package replication

import (
	"bufio"
	"io"

	"shardis/config"
	"shardis/rdb"
	"shardis/rdbstore"
	"shardis/shard"
)

// storeFormat is RDBFormat over package rdbstore, with the server's encoding settings.
type storeFormat struct {
	cfg *config.Config
}

func (f storeFormat) WriteRDB(w io.Writer, sn *shard.Snapshot, o RDBWriteOptions) error {
	return rdbstore.WriteRDB(w, sn, rdbstore.WriteOptions{Format: rdbstore.OptionsFrom(f.cfg),
		Aux:    rdb.AuxInfo{Repl: true, ReplID: o.ReplID, ReplOffset: int64(o.Offset)},
		NoData: o.NoData, NoFunctions: o.NoFunctions})
}

// LoadRDB builds the file's keys and function libraries (rdbstore.Builder) into the load's
// transaction, committing every few megabytes. Keys whose time has passed are kept: a replica
// holds what its master holds, and the master's DEL follows.
func (f storeFormat) LoadRDB(r *bufio.Reader, l *shard.Loader) error {
	tx := l.Tx()
	b := &rdbstore.Builder{Tx: tx, Databases: tx.Store().Databases(), Now: tx.Now(), Idle: -1, Freq: -1,
		Flush: l.Commit}
	err := rdb.NewReader(r).Read(b)
	if err == nil {
		err = tx.Err()
	}
	return err
}
