package cmds_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"

	"shardis/internal/testserver"
)

// A small sorted set is packed in its meta (datatype/packed.go) while Redis would hold it as a
// listpack; OBJECT ENCODING, the members and their order follow redis-server step by step
// through the conversions Redis makes: by count, by member length, by CONFIG SET, and never
// back; a ZUNIONSTORE or ZRANGESTORE destination small enough is a listpack again.
func TestZSet_Packed_EncodingAndContentsFollowRedis(t *testing.T) {
	rc, _ := startRedisDebug(t)
	s := testserver.Start(t)
	sc := s.Client(t)
	both := func(args ...any) {
		t.Helper()
		want, werr := rc.Do(testCtx, args...).Result()
		got, gerr := sc.Do(testCtx, args...).Result()
		if fmt.Sprint(got, gerr) != fmt.Sprint(want, werr) {
			t.Fatalf("%v: shardis %v %v, redis %v %v", args, got, gerr, want, werr)
		}
	}
	same := func(step, key string) {
		t.Helper()
		both("OBJECT", "ENCODING", key)
		both("ZRANGE", key, 0, -1, "WITHSCORES")
		both("ZCARD", key)
		if err := sc.Do(testCtx, "DEBUG", "DIGEST-VALUE", key).Err(); err != nil && !strings.Contains(err.Error(), "DEBUG") {
			t.Fatalf("%s: %v", step, err)
		}
	}
	both("ZADD", "z", 1, "a")
	same("first member", "z")
	for i := 0; i < 127; i++ {
		both("ZADD", "z", i%7, fmt.Sprintf("m%03d", i))
	}
	same("128 members", "z")
	both("ZADD", "z", 2.5, "a") // an update in place
	both("ZINCRBY", "z", 1, "m005")
	both("ZADD", "z", "CH", "GT", 100, "m006", 0, "m007")
	same("updates", "z")
	both("ZRANGEBYSCORE", "z", 2, 3, "WITHSCORES", "LIMIT", 1, 5)
	both("ZREVRANGE", "z", 3, 9)
	both("ZRANK", "z", "m100")
	both("ZREVRANK", "z", "a")
	both("ZCOUNT", "z", "(1", 4)
	both("ZRANGEBYLEX", "z", "[m010", "(m020")
	both("ZSCAN", "z", 0, "COUNT", 1000)
	both("ZPOPMIN", "z", 2)
	both("ZPOPMAX", "z")
	both("ZREMRANGEBYRANK", "z", 0, 3)
	same("pops and removes", "z")
	for i := 0; i < 10; i++ { // past 128 members: a skiplist from then on
		both("ZADD", "z", i, fmt.Sprintf("n%d", i))
	}
	same("past the entries limit", "z")
	both("ZREMRANGEBYRANK", "z", 0, -3)
	same("shrunk again", "z")

	both("ZADD", "long", 1, "x")
	both("ZADD", "long", 2, strings.Repeat("y", 64))
	same("a member of 64 bytes", "long")
	both("ZADD", "long", 3, strings.Repeat("y", 65))
	same("a member of 65 bytes", "long")

	both("ZADD", "s1", 1, "a", 2, "b", 3, "c")
	both("ZUNIONSTORE", "u", 2, "s1", "z", "WEIGHTS", 1, 2)
	same("ZUNIONSTORE of a skiplist and a listpack", "u")
	both("ZRANGESTORE", "r", "z", 0, 1)
	same("ZRANGESTORE", "r")
	both("ZINTERSTORE", "i", 2, "s1", "u")
	same("ZINTERSTORE", "i")

	both("CONFIG", "SET", "zset-max-listpack-entries", 3)
	both("ZADD", "c", 1, "a", 2, "b", 3, "c")
	same("3 members under a limit of 3", "c")
	both("ZADD", "c", 4, "d")
	same("4 members under a limit of 3", "c")
	both("CONFIG", "SET", "zset-max-listpack-entries", 0)
	both("ZADD", "zero", 1, "a")
	same("a limit of 0", "zero")
	both("CONFIG", "SET", "zset-max-listpack-entries", 128)
	both("CONFIG", "SET", "zset-max-listpack-value", 2)
	both("ZADD", "v", 1, "ab")
	same("a member at the value limit", "v")
	both("ZADD", "v", 1, "abc")
	same("a member past the value limit", "v")

	both("GEOADD", "g", 13.361389, 38.115556, "Palermo", 15.087269, 37.502669, "Catania")
	both("GEOADD", "g", "CH", 15.654512, 38.232743, "Palermo")
	same("GEOADD CH moves a member", "g")
	both("GEORADIUS_RO", "g", 14.016095, 37.649692, 100, "km", "WITHDIST", "ASC")
}

// Score updates of a packed sorted set are saved, in a MULTI and in a script too (the update
// rewrites the meta, where a set of data keys writes only its data keys).
func TestZSet_Packed_UpdatesInMultiAndScriptAreKept(t *testing.T) {
	s := testserver.Start(t)
	c := s.Client(t)
	c.ZAdd(testCtx, "z", redis.Z{Score: 1, Member: "a"}, redis.Z{Score: 2, Member: "b"})
	if _, err := c.TxPipelined(testCtx, func(p redis.Pipeliner) error {
		p.ZAdd(testCtx, "z", redis.Z{Score: 5, Member: "a"})
		p.ZIncrBy(testCtx, "z", 10, "b")
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if err := c.Eval(testCtx, "redis.call('zadd', KEYS[1], 7, 'a')", []string{"z"}).Err(); err != nil && err != redis.Nil {
		t.Fatal(err)
	}
	got, err := c.ZRangeWithScores(testCtx, "z", 0, -1).Result()
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(got) != "[{7 a} {12 b}]" {
		t.Fatalf("ZRANGE WITHSCORES: %v", got)
	}
	if enc := c.ObjectEncoding(testCtx, "z").Val(); enc != "listpack" {
		t.Fatalf("OBJECT ENCODING %q", enc)
	}
}
