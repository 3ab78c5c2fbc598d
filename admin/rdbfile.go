package admin

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	"shardis/rdb"
	"shardis/rdbstore"
	"shardis/server"
)

// persist is what SAVE, BGSAVE and SHUTDOWN SAVE write, as rdb-format says: the RocksDB
// checkpoint, Redis's RDB file, or both.
func persist(srv *server.Server) error {
	format := "checkpoint"
	if srv.Config != nil {
		format = srv.Config.RDBFormat()
	}
	if format != "rdb" {
		if err := srv.Store.Checkpoint(checkpointDir(srv)); err != nil {
			return fmt.Errorf("checkpoint: %w", err)
		}
	}
	if format != "checkpoint" {
		if err := saveRDBFile(srv); err != nil {
			return fmt.Errorf("RDB file: %w", err)
		}
	}
	return nil
}

// saveRDBFile writes dir/dbfilename from a consistent snapshot of every shard: streamed to a
// temporary file, synced, then renamed over the old one, as Redis does. The changes counted
// before the snapshot are the ones it saved (rdb_changes_since_last_save).
func saveRDBFile(srv *server.Server) error {
	st := srv.Store
	dirty := st.Dirty.Load()
	snap, err := st.Snapshot()
	if err != nil {
		return err
	}
	defer snap.Close()
	dir, name := srv.Config.Dir(), srv.Config.DBFilename()
	tmp := filepath.Join(dir, fmt.Sprintf("temp-%d.rdb", os.Getpid()))
	f, err := os.Create(tmp)
	if err != nil {
		return err
	}
	idle, freq := rdb.EvictionFields(srv.Config.Value("maxmemory-policy"))
	err = rdbstore.WriteRDB(f, snap, rdbstore.WriteOptions{Format: rdbstore.OptionsFrom(srv.Config),
		Aux: rdb.AuxInfo{UsedMem: infoRSS()}, Idle: idle, Freq: freq, Started: srv.Started.UnixMilli()})
	if err == nil {
		err = f.Sync()
	}
	if e := f.Close(); err == nil {
		err = e
	}
	if err == nil {
		err = os.Rename(tmp, filepath.Join(dir, name))
	}
	if err != nil {
		os.Remove(tmp)
		return err
	}
	st.LastSave.Store(time.Now().Unix())
	st.Dirty.Add(-dirty)
	return nil
}
