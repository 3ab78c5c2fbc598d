#!/bin/sh
# Records redis-server 7.0.15's CONFIG REWRITE of Debian's redis.conf after a set of CONFIG SETs
set -e
out=${1:-.}
d=$(mktemp -d)
mkdir $d/data
sed -e "s|^dir /var/lib/redis|dir /tmp/shardis-rewrite-data|" -e 's|^port 6379|port 7392|' /etc/redis/redis.conf > $d/redis.conf
cp $d/redis.conf $out/debian-redis.conf.in
mkdir -p /tmp/shardis-rewrite-data
redis-server $d/redis.conf --daemonize no --logfile "" >/tmp/rwrec.log 2>&1 &
sleep 1.5
redis-cli -p 7392 config set maxmemory 100mb hz 20 save "100 1 200 5" client-output-buffer-limit "pubsub 64mb 16mb 90" appendfsync always slowlog-max-len 200 latency-tracking-info-percentiles "50 99" requirepass "secret word" hash-max-ziplist-entries 100 maxmemory-policy allkeys-lru loglevel warning protected-mode no tcp-keepalive 60 repl-backlog-size 3000000 proc-title-template '{title} "x"'
redis-cli -p 7392 -a "secret word" --no-auth-warning config rewrite
redis-cli -p 7392 -a "secret word" --no-auth-warning shutdown nosave >/dev/null || true
cp $d/redis.conf $out/debian-redis.conf.rewritten
rm -rf $d
