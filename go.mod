module shardis

go 1.26.0

require (
	github.com/cespare/xxhash/v2 v2.3.0
	github.com/linxGnu/grocksdb v1.7.15
	github.com/panjf2000/gnet/v2 v2.10.0
	github.com/pkg/profile v1.7.0
	github.com/redis/go-redis/v9 v9.23.0
	github.com/valyala/bytebufferpool v1.0.0
	github.com/yuin/gopher-lua v1.1.2
	golang.org/x/sys v0.48.0
)

require (
	github.com/felixge/fgprof v0.9.3 // indirect
	github.com/google/pprof v0.0.0-20211214055906-6f57359322fd // indirect
	github.com/panjf2000/ants/v2 v2.12.1 // indirect
	go.uber.org/atomic v1.12.0 // indirect
	go.uber.org/multierr v1.11.0 // indirect
	go.uber.org/zap v1.28.0 // indirect
	golang.org/x/sync v0.11.0 // indirect
	gopkg.in/natefinch/lumberjack.v2 v2.2.1 // indirect
)
