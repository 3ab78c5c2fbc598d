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
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/pkg/profile"

	"shardis/cmds"
	"shardis/config"
	"shardis/executor"
	"shardis/rdbstore"
	"shardis/reactor"
	"shardis/replication"
	"shardis/server"
	"shardis/shard"
)

func main() {
	if len(os.Args) == 2 {
		switch os.Args[1] {
		case "-v", "--version":
			fmt.Println(versionLine())
			return
		case "-h", "--help":
			fmt.Fprint(os.Stderr, usage)
			os.Exit(1)
		}
	}
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "shardis:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	args, prof := profileFlag(args)
	args, loadRDB := stripFlag(args, "--load-rdb")
	cfg, err := config.Load(args)
	if err != nil {
		return err
	}
	logFile, err := openLog(cfg)
	if err != nil {
		return err
	}
	if detach(cfg) {
		if logFile != nil {
			_ = logFile.Close()
		}
		return daemonize()
	}
	if logFile != nil {
		defer logFile.Close()
		log.SetOutput(logFile)
	}
	log.Printf("shardis %s (Redis %s protocol) starting, pid %d", server.Version, cmds.RedisVersion, os.Getpid())
	if cfg.File() != "" {
		log.Printf("configuration loaded from %s", cfg.File())
	}
	if kept := cfg.GivenWithoutEffect(); len(kept) > 0 {
		log.Printf("these directives are accepted and kept (CONFIG GET, CONFIG REWRITE) but have no effect in shardis: %s",
			strings.Join(kept, ", "))
	}
	if pidFile := pidFilePath(cfg); pidFile != "" {
		if err := os.WriteFile(pidFile, []byte(strconv.Itoa(os.Getpid())+"\n"), 0o644); err != nil {
			log.Printf("Failed to write PID file: %v", err)
		} else {
			defer os.Remove(pidFile)
		}
	}
	if os.Getenv("GOMAXPROCS") == "" {
		runtime.GOMAXPROCS(reactor.Procs(cfg.Loops(), runtime.NumCPU()))
	}
	if prof != "" {
		defer startProfile(prof, cfg.Dir()).Stop()
	}
	store, err := shard.New(storeOptions(cfg))
	if err != nil {
		return err
	}
	cfg.OnChange("block-cache-size", func() { store.SetBlockCacheSize(cfg.BlockCacheSize()) })
	cfg.OnChange("key-cache-size", func() { store.SetKeyCacheSize(cfg.KeyCacheSize()) })
	// The server listens at once and answers LOADING while the store opens (RocksDB replays
	// its write-ahead log, seconds after a crash with millions of keys), as Redis does while
	// it loads its dataset.
	state := server.New(cfg, store)
	if err := state.LoadUsers(); err != nil {
		_ = store.Close()
		return err
	}
	if loadRDB != "" {
		state.AfterOpen = func() error {
			started := time.Now()
			stats, err := rdbstore.LoadFile(loadRDB, store, rdbstore.LoadOptions{})
			if err == nil {
				log.Printf("RDB file %s loaded: %d keys in %v", loadRDB, stats.Keys, time.Since(started).Round(time.Millisecond))
			}
			return err
		}
	}
	exec := executor.New(state)
	state.Replication = replication.New(state, exec)
	srv := reactor.New(state, exec)
	loaded := make(chan error, 1)
	go func() {
		started := time.Now()
		err := state.Load()
		loaded <- err
		if err != nil {
			log.Printf("Fatal error loading the data in %s: %v", cfg.Dir(), err)
			srv.Stop()
			return
		}
		logNotice(cfg, "data in %s opened in %v", cfg.Dir(), time.Since(started).Round(time.Millisecond))
		// Ready as Redis means it: listening and done loading.
		select {
		case <-srv.Ready():
		case <-srv.Stopped():
			return
		}
		logNotice(cfg, "%v ready to accept connections", srv)
		if err := notifySupervisor(cfg.SupervisedMode()); err != nil {
			log.Printf("supervised: %v", err)
		}
	}()

	signal.Ignore(syscall.SIGHUP) // as Redis: closing the terminal does not stop the server
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
	serveErr := srv.Serve()
	// A stop while loading (SIGTERM, SHUTDOWN, or Serve failing) waits for the store to open
	// (RocksDB's recovery cannot be interrupted), then closes it as usual.
	loadErr := <-loaded
	state.Replication.Stop()
	closeErr := store.Close()
	log.Printf("shardis stopped")
	return errors.Join(loadErr, serveErr, closeErr)
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
		BlobMinSize:     cfg.BlobMinSize(),
		Fsync:           cfg.AppendFsync,
		Binlog:          func() (int64, time.Duration) { return cfg.BinlogMaxEntries(), cfg.BinlogMaxAge() },
		Hz:              cfg.Hz,
		DiskReserve:     cfg.DiskReserve,
	}
}

// profileFlag removes "--profile cpu|mem|block|mutex" from args: it is a process flag, not a
// config key.
// stripFlag takes "name value" out of the command line (a start-up option that is no
// configuration parameter: CONFIG REWRITE must not keep it) and returns the value.
func stripFlag(args []string, name string) ([]string, string) {
	for i := 0; i+1 < len(args); i++ {
		if args[i] == name {
			return append(args[:i:i], args[i+2:]...), args[i+1]
		}
	}
	return args, ""
}

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

// logNotice logs a line of Redis's notice level: shown unless loglevel is warning. Every other
// line shardis logs is a warning in Redis's terms and always shown.
func logNotice(cfg *config.Config, format string, args ...any) {
	if cfg.LogLevel() != "warning" {
		log.Printf(format, args...)
	}
}

// usage is what --help prints, after redis-server's.
const usage = `Usage: ./shardis [/path/to/shardis.conf] [options]
       ./shardis -v or --version
       ./shardis -h or --help

Examples:
       ./shardis (run the server with default conf)
       ./shardis /etc/redis/redis.conf
       ./shardis --port 7777
       ./shardis --dir /new/empty/dir --load-rdb /path/to/dump.rdb
       ./shardis /etc/myshardis.conf --loglevel verbose

`

// versionLine is what --version prints, in redis-server's format with shardis's name and
// version, then the Redis version it answers as.
func versionLine() string {
	return fmt.Sprintf("shardis server v=%s sha=00000000:0 malloc=go bits=%d build=0 redis_version=%s go=%s",
		server.Version, strconv.IntSize, cmds.RedisVersion, runtime.Version())
}
