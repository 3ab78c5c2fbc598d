// Command shardis is a Redis-protocol server that keeps its data in RocksDB.
//
//	shardis [config-file] [--name value ...]
//
// Flags are named as the config keys (see shardis.conf.example and docs/CONFIG.md) and
// override the file. SIGTERM and SIGINT stop it gracefully: no new connections, batches in
// flight finish, the WAL is synced and RocksDB closed.
package main

import (
	"errors"
	"fmt"
	"log"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"syscall"
	"time"

	"github.com/pkg/profile"

	"shardis/cmds"
	"shardis/config"
	"shardis/executor"
	"shardis/reactor"
	"shardis/server"
	"shardis/shard"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "shardis:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	args, prof := profileFlag(args)
	cfg, err := config.Load(args)
	if err != nil {
		return err
	}
	if cfg.LogFile() != "" {
		f, err := os.OpenFile(cfg.LogFile(), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
		if err != nil {
			return err
		}
		defer f.Close()
		log.SetOutput(f)
	}
	if os.Getenv("GOMAXPROCS") == "" {
		runtime.GOMAXPROCS(reactor.Procs(cfg.Loops(), runtime.NumCPU()))
	}
	if prof != "" {
		defer startProfile(prof, cfg.Dir()).Stop()
	}
	started := time.Now()
	store, err := shard.Open(storeOptions(cfg))
	if err != nil {
		return err
	}
	cfg.OnChange("block-cache-size", func() { store.SetBlockCacheSize(cfg.BlockCacheSize()) })
	cfg.OnChange("key-cache-size", func() { store.SetKeyCacheSize(cfg.KeyCacheSize()) })
	state := server.New(cfg, store)
	srv := reactor.New(state, executor.New(state))
	log.Printf("data in %s opened in %v", cfg.Dir(), time.Since(started).Round(time.Millisecond))

	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT)
	go func() {
		select {
		case sig := <-sigs:
			log.Printf("received %v, shutting down", sig)
			srv.Stop()
		case <-srv.Stopped():
		}
	}()
	go func() {
		<-srv.Ready()
		log.Printf("%v ready to accept connections", srv)
	}()
	serveErr := srv.Serve()
	closeErr := store.Close()
	log.Printf("shardis stopped")
	return errors.Join(serveErr, closeErr)
}

// storeOptions derives the store's options from the configuration.
func storeOptions(cfg *config.Config) shard.Options {
	return shard.Options{
		Dir:             cfg.Dir(),
		Shards:          cfg.Shards(),
		ShardsFromDir:   !cfg.ShardsSet(),
		Databases:       cfg.Databases(),
		BlockCacheSize:  cfg.BlockCacheSize(),
		KeyCacheSize:    cfg.KeyCacheSize(),
		WriteBufferSize: cfg.WriteBufferSize(),
		Fsync:           cfg.AppendFsync,
		Binlog:          func() (int64, time.Duration) { return cfg.BinlogMaxEntries(), cfg.BinlogMaxAge() },
		Hz:              cfg.Hz,
	}
}

// profileFlag removes "--profile cpu|mem|block|mutex" from args: it is a process flag, not a
// config key.
func profileFlag(args []string) ([]string, string) {
	for i := 0; i+1 < len(args); i++ {
		if args[i] == "--profile" {
			return append(args[:i:i], args[i+2:]...), args[i+1]
		}
	}
	return args, ""
}

func startProfile(kind, dir string) interface{ Stop() } {
	path := profile.ProfilePath(filepath.Join(dir, "profile"))
	switch kind {
	case "mem":
		return profile.Start(profile.MemProfile, path, profile.NoShutdownHook)
	case "block":
		return profile.Start(profile.BlockProfile, path, profile.NoShutdownHook)
	case "mutex":
		return profile.Start(profile.MutexProfile, path, profile.NoShutdownHook)
	default:
		return profile.Start(profile.CPUProfile, path, profile.NoShutdownHook)
	}
}

var _ = cmds.All
