# shardis: `make run` serves on 127.0.0.1:6379 with data in ./data; `make test` runs everything
# CI runs. Both install what is missing on a fresh Debian machine first.

GO       ?= go
PORT     ?= 6379
DIR      ?= ./data
# Debian packages the build and the tests need (python3-redis: the redis-py Lock test).
DEB_PKGS := librocksdb-dev redis-server redis-tools python3 python3-redis

.PHONY: all build run test unit fuzz difftest deps bench clean

all: build

deps:
	@missing=""; for p in $(DEB_PKGS); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
		echo "installing:$$missing"; \
		SUDO=""; [ "$$(id -u)" = 0 ] || SUDO=sudo; \
		$$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq $$missing >/dev/null; \
	fi

build: deps
	$(GO) build -o bin/shardis .
	$(GO) build -o bin/shardis-bench ./bench/cmd/shardis-bench

run: build
	./bin/shardis --port $(PORT) --bind 127.0.0.1 --dir $(DIR)

# The whole suite: gofmt, vet, unit and integration tests (crash and restart tests use bin/shardis),
# the concurrent core again under the race detector, a short fuzz run of the RESP parser, and
# difftest against a real redis-server.
test: build
	@unformatted=$$(gofmt -l .); if [ -n "$$unformatted" ]; then echo "gofmt -w these:"; echo "$$unformatted"; exit 1; fi
	$(GO) vet ./...
	$(GO) test -count=1 -timeout 15m ./...
	$(GO) test -race -count=1 -timeout 10m ./reactor ./shard
	$(GO) test -run=NONE -fuzz=FuzzParseCommand -fuzztime=300000x ./codec
	./.ci/difftest.sh

unit: deps
	$(GO) test -count=1 ./...

fuzz: deps
	$(GO) test -run=NONE -fuzz=FuzzParseCommand -fuzztime=60s ./codec

difftest: build
	./.ci/difftest.sh

BENCH_TIME ?= 8
BENCH_RUNS ?= 2
# BENCH_PROFILE=cpu (or mem, block, mutex) keeps a Go profile of shardis per load profile in profiles/.
BENCH_PROFILE ?=
# BENCH_ONLY=mix-p1,set-1k runs only those load profiles.
BENCH_ONLY ?=
# The side-by-side suite against redis-server (appendonly yes, everysec): about 8 minutes
# (BENCH_TIME=2 for a quick pass); writes BENCHMARKS.md and docs/bench-pipeline.svg.
bench: deps
	GO="$(GO)" $(GO) run ./bench/cmd/suite -time $(BENCH_TIME) -runs $(BENCH_RUNS) \
		-profile "$(BENCH_PROFILE)" -only "$(BENCH_ONLY)"

clean:
	rm -rf bin
