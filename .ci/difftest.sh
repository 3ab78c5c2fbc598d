#!/usr/bin/env bash
# Runs difftest (a copy of ../shared/tools/difftest, kept here so a clean clone has it)
# against bin/shardis on a free loopback port, a fresh server and data directory per family.
# A real redis-server is the oracle; difftest starts and stops its own. Families and sizes are
# the ones the issues require.
set -euo pipefail
cd "$(dirname "$0")/.."
DIFFTEST=.ci/difftest
[ -x ../shared/tools/difftest/difftest ] && DIFFTEST=../shared/tools/difftest/difftest

pid=""
dir=""
stop() {
	[ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null || true
	[ -n "$dir" ] && rm -rf "$dir"
	pid="" dir=""
}
trap stop EXIT

run() { # family ops [extra difftest flags]
	port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
	dir=$(mktemp -d)
	./bin/shardis --port "$port" --bind 127.0.0.1 --dir "$dir" --cpu-pin no >"$dir/log" 2>&1 &
	pid=$!
	# Ready once loaded: PING answers while the store still opens (as Redis answers it while
	# loading), and a family's first FLUSHALL would get LOADING on a busy machine.
	for _ in $(seq 600); do
		redis-cli -p "$port" info persistence 2>/dev/null | tr -d '\r' | grep -qx 'loading:0' && break
		sleep 0.1
	done
	echo "difftest --types $1 --seed 1-3 --ops $2 ${*:3}"
	python3 "$DIFFTEST" --target "127.0.0.1:$port" --types "$1" --seed 1-3 --ops "$2" --keep-going --timeout 600 "${@:3}"
	stop
}

run string 5000
run keys 20000
run expire 5000
for family in hash list set zset; do
	run "$family" 20000
done
run multi 5000
run hll 5000 --strict-errors
run blocking 5000
run geo 5000 --strict-errors
run bitmap 5000 --strict-errors
# Streams: entries (XADD … XREAD) and consumer groups (XGROUP … XINFO), whole error texts.
run stream 5000 --strict-errors
# Subscribers, publishers and keyspace notifications; its writes borrow the data families.
run pubsub 5000
# Scripts (EVAL and FCALL) wrap commands of every family.
run script 5000
