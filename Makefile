# shardis: `make run` serves on 127.0.0.1:6379 with data in ./data; `make test` runs everything
# CI runs. Both install what is missing on a fresh Debian machine first.

GO       ?= go
space    := $(subst ,, )
PORT     ?= 6379
DIR      ?= ./data
# Debian packages the build and the tests need (python3-redis: the redis-py Lock test;
# prometheus-redis-exporter: TestExporter_MetricsAsRedis scrapes shardis with it; python3-rq
# and npm (installed from Debian when the machine has none): the job-queue tests of
# internal/apptest; redis-sentinel: the failover test of internal/crashtest).
DEB_PKGS := librocksdb-dev redis-server redis-tools python3 python3-redis prometheus-redis-exporter python3-rq redis-sentinel
# npm packages internal/apptest runs, at fixed versions, installed under .cache/node.
NPM_PKGS := bullmq@6.7.0 ioredis@5.9.2

.PHONY: all build run test unit fuzz difftest deps bench clean release lint

# staticcheck, at a fixed version, installed into GOPATH/bin on first use (staticcheck.conf
# picks the checks: its defaults, less ST1005, as Redis's error texts keep their capitals).
STATICCHECK_VERSION := v0.8.2
STATICCHECK = $(shell $(GO) env GOPATH)/bin/staticcheck

all: build

deps:
	@missing=""; for p in $(DEB_PKGS); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
		echo "installing:$$missing"; \
		SUDO=""; [ "$$(id -u)" = 0 ] || SUDO=sudo; \
		$$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq $$missing >/dev/null; \
	fi
	@command -v npm >/dev/null || { SUDO=""; [ "$$(id -u)" = 0 ] || SUDO=sudo; \
		DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq npm >/dev/null; }
	@[ -f .cache/node/.installed-$(subst @,-,$(subst $(space),_,$(NPM_PKGS))) ] || { \
		mkdir -p .cache/node && cd .cache/node && rm -f .installed-* && \
		npm install --silent --no-audit --no-fund --no-save --prefix . $(NPM_PKGS) && \
		touch .installed-$(subst @,-,$(subst $(space),_,$(NPM_PKGS))); }

# Debian's librocksdb-dev also ships RocksDB as a static archive. Linked into the binary,
# RocksDB's thread-local variables (its perf context, touched on every key comparison) become
# fixed offsets where the shared library calls __tls_get_addr for each: 0.89x the CPU per 1 KiB
# SET (docs/PERFORMANCE.md). Without the archive, the shared library. Tests (go test) link the
# shared one either way.
ROCKSDB_DEPS := -lgflags -lsnappy -lz -lbz2 -llz4 -lzstd -lstdc++ -lm -lpthread
build: deps
	@a=$$(gcc -print-file-name=librocksdb.a); if [ -f "$$a" ]; then \
		echo "bin/shardis: RocksDB linked statically from $$a"; \
		CGO_LDFLAGS="$$a $(ROCKSDB_DEPS)" $(GO) build -tags grocksdb_no_link -o bin/shardis .; \
	else $(GO) build -o bin/shardis .; fi
	$(GO) build -o bin/shardis-bench ./bench/cmd/shardis-bench

run: build
	./bin/shardis --port $(PORT) --bind 127.0.0.1 --dir $(DIR)

lint:
	@[ -x "$(STATICCHECK)" ] || $(GO) install honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION)
	$(STATICCHECK) ./...

# The whole suite: gofmt, vet, staticcheck, unit and integration tests (internal/layering
# checks which packages import which) (crash and restart tests use bin/shardis),
# the concurrent core (and scripts that stray and run again) under the race detector, short fuzz runs of the RESP parser and the DUMP payload reader, and
# difftest against a real redis-server.
test: build
	@unformatted=$$(gofmt -l .); if [ -n "$$unformatted" ]; then echo "gofmt -w these:"; echo "$$unformatted"; exit 1; fi
	$(GO) vet ./...
	$(MAKE) --no-print-directory lint
	$(GO) test -count=1 -timeout 15m ./...
	$(GO) test -race -count=1 -timeout 10m ./reactor ./shard
	$(GO) test -race -count=1 -timeout 10m -run 'TestScriptRoute|TestFunction_CallsOnOtherShards' ./cmds
	$(GO) test -run=NONE -fuzz=FuzzParseCommand -fuzztime=300000x ./codec
	$(GO) test -run=NONE -fuzz=FuzzReadPayload -fuzztime=20000x -fuzzminimizetime=200x ./rdb
	./.ci/difftest.sh

unit: deps
	$(GO) test -count=1 ./...

fuzz: deps
	$(GO) test -run=NONE -fuzz=FuzzParseCommand -fuzztime=60s ./codec
	$(GO) test -run=NONE -fuzz=FuzzReadPayload -fuzztime=60s ./rdb

difftest: build
	./.ci/difftest.sh

BENCH_TIME ?= 8
BENCH_RUNS ?= 2
# BENCH_PROFILE=cpu (or mem, block, mutex) keeps a Go profile of shardis per load profile in profiles/.
BENCH_PROFILE ?=
# BENCH_ONLY=mix-p1,set-1k runs only those load profiles.
BENCH_ONLY ?=
# BENCH_BUILDS: which builds of shardis to measure (release, debian, or both in order);
# auto = the release build and then Debian's once make release has run, else Debian's alone.
BENCH_BUILDS ?= auto
# The side-by-side suite against redis-server (appendonly yes, everysec): about 8 minutes per
# build (BENCH_TIME=2 for a quick pass); writes BENCHMARKS.md and docs/bench-pipeline.svg.
bench: deps
	GO="$(GO)" $(GO) run ./bench/cmd/suite -time $(BENCH_TIME) -runs $(BENCH_RUNS) \
		-profile "$(BENCH_PROFILE)" -only "$(BENCH_ONLY)" -builds "$(BENCH_BUILDS)"

# The release build: RocksDB from Debian's own source package (the version librocksdb-dev has),
# built once per machine as a static library with release flags (NDEBUG, -O2, no debug info;
# USE_SSE=1 for the hardware CRC32C of every WAL record, which PORTABLE=1 alone leaves in software)
# into .cache/rocksdb-release, and bin/shardis linked statically against it (grocksdb's
# grocksdb_no_link tag, CGO_LDFLAGS). make run and make test keep using Debian's shared
# library. The first make release takes a while (README gives the time); later ones only link.
ROCKSDB_RELEASE := $(CURDIR)/.cache/rocksdb-release
RELEASE_ENV = CGO_CFLAGS="-I$(ROCKSDB_RELEASE)/include" \
	CGO_LDFLAGS="-L$(ROCKSDB_RELEASE) -lrocksdb $$(cat $(ROCKSDB_RELEASE)/ldflags) -lstdc++ -lm"

release: deps $(ROCKSDB_RELEASE)/librocksdb.a
	$(RELEASE_ENV) $(GO) build -tags grocksdb_no_link -o bin/shardis .
	$(GO) build -o bin/shardis-bench ./bench/cmd/shardis-bench
	@echo "bin/shardis: release build, RocksDB linked statically from $(ROCKSDB_RELEASE)"

$(ROCKSDB_RELEASE)/librocksdb.a:
	@set -e; SUDO=""; [ "$$(id -u)" = 0 ] || SUDO=sudo; \
	if [ -z "$$(apt-cache showsrc rocksdb 2>/dev/null)" ]; then \
		. /etc/os-release; \
		printf 'Types: deb-src\nURIs: http://deb.debian.org/debian\nSuites: %s\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n' "$$VERSION_CODENAME" \
			| $$SUDO tee /etc/apt/sources.list.d/shardis-deb-src.sources >/dev/null; \
		$$SUDO apt-get update -qq; \
	fi; \
	dpkg -s dpkg-dev >/dev/null 2>&1 || $$SUDO apt-get install -y -qq dpkg-dev >/dev/null; \
	version=$$(dpkg-query -W -f '$${Version}' librocksdb-dev); \
	src=$(CURDIR)/.cache/rocksdb-src; rm -rf "$$src"; mkdir -p "$$src"; \
	echo "fetching rocksdb $$version from Debian's source package"; \
	(cd "$$src" && apt-get source -qq "rocksdb=$$version" >/dev/null); \
	dir=$$(ls -d "$$src"/rocksdb-*/); \
	echo "building $$dir with DEBUG_LEVEL=0 PORTABLE=1 USE_SSE=1 on $$(nproc) CPUs"; \
	USE_SSE=1 $(MAKE) -C "$$dir" static_lib DEBUG_LEVEL=0 PORTABLE=1 DISABLE_WARNING_AS_ERROR=1 \
		USE_RTTI=1 EXTRA_CXXFLAGS=-g0 -j"$$(nproc)" >"$$src/build.log" 2>&1 \
		|| { tail -30 "$$src/build.log"; exit 1; }; \
	mkdir -p $(ROCKSDB_RELEASE); rm -rf $(ROCKSDB_RELEASE)/include; \
	cp -r "$$dir/include" $(ROCKSDB_RELEASE)/include; \
	sed -n 's/^PLATFORM_LDFLAGS=//p' "$$dir/make_config.mk" > $(ROCKSDB_RELEASE)/ldflags; \
	strip --strip-debug -o $(ROCKSDB_RELEASE)/librocksdb.a "$$dir/librocksdb.a"; \
	echo "$$version" > $(ROCKSDB_RELEASE)/version

clean:
	rm -rf bin
