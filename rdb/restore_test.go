package rdb

import (
	"errors"
	"strings"
	"testing"
)

// Payloads Redis's RESTORE refuses or takes: ReadPayload gives the same verdict as
// redis-server 7.0.15 with sanitize-dump-payload yes (the deep checks), and an empty
// collection is refused with "Bad data format" whatever the setting.
func TestReadPayload_SameVerdictAsRedisRestore(t *testing.T) {
	rc := startRedis(t)
	cases := map[string][]byte{
		"empty-list":             {TypeList, 0},
		"empty-quicklist2":       {TypeListQuicklist2, 0},
		"empty-node-quicklist2":  new(rdbBuf).bytes(TypeListQuicklist2).len(1).len(2).str(string(listpack())).b,
		"empty-hash-listpack":    new(rdbBuf).bytes(TypeHashListpack).str(string(listpack())).b,
		"empty-zset-ziplist":     new(rdbBuf).bytes(TypeZSetZiplist).str(string(ziplist())).b,
		"trailing-byte":          {TypeString, 1, 'v', 'x'},
		"nan-score":              {TypeZSet, 1, 1, 'm', 253},
		"dup-hash-listpack":      new(rdbBuf).bytes(TypeHashListpack).str(string(listpack("a", "1", "a", "2"))).b,
		"odd-hash-listpack":      new(rdbBuf).bytes(TypeHashListpack).str(string(listpack("a", "1", "b"))).b,
		"intset-unordered":       new(rdbBuf).bytes(TypeSetIntset).str("\x02\x00\x00\x00\x02\x00\x00\x00\x05\x00\x03\x00").b,
		"quicklist2-container-3": new(rdbBuf).bytes(TypeListQuicklist2).len(1).len(3).str("x").b,
		"quicklist2-plain":       new(rdbBuf).bytes(TypeListQuicklist2).len(2).len(1).str("plain").len(2).str(string(listpack("a", int64(5)))).b,
		"ziplist-list":           new(rdbBuf).bytes(TypeListZiplist).str(string(ziplist("a", int64(-7), "b"))).b,
		"zipmap":                 new(rdbBuf).bytes(TypeHashZipmap).str(string(zipmap(1, "f", "v"))).b,
	}
	// streamPayload makes whole payloads: keep their bodies.
	streamBody := func(p []byte) []byte { return p[:len(p)-payloadFooterBytes] }
	cases["stream-pel-no-consumer"] = streamBody(streamPayload(func(w *rdbBuf) {
		w.len(1).str("g").len(1).len(2).len(2).len(1).id(1, 1).u64le(1).len(1).len(0)
	}))
	cases["stream-consumer-unknown"] = streamBody(streamPayload(func(w *rdbBuf) {
		w.len(1).str("g").len(1).len(2).len(2).len(1).id(1, 1).u64le(1).len(1)
		w.len(1).str("c").u64le(1).len(1).id(1, 2)
	}))
	cases["stream-good"] = streamBody(streamPayload(func(w *rdbBuf) {
		w.len(1).str("g").len(1).len(2).len(2).len(1).id(1, 1).u64le(1).len(1)
		w.len(1).str("c").u64le(1).len(1).id(1, 1)
	}))
	for name, body := range cases {
		payload := withFooter(body, Version)
		for _, sanitize := range []string{"yes", "no"} {
			if err := rc.ConfigSet(testCtx, "sanitize-dump-payload", sanitize).Err(); err != nil {
				t.Fatal(err)
			}
			redisErr := rc.Restore(testCtx, "k", 0, string(payload)).Err()
			rc.Del(testCtx, "k")
			if strings.HasPrefix(name, "empty-") && (redisErr == nil || redisErr.Error() != "ERR Bad data format") {
				t.Errorf("%s, sanitize %s: Redis answered %v", name, sanitize, redisErr)
			}
			if sanitize == "no" {
				continue
			}
			err := ReadPayload(payload, newRecorder())
			if err != nil && !errors.Is(err, ErrBadFormat) {
				t.Errorf("%s: %v, want nil or ErrBadFormat", name, err)
			}
			if (err == nil) != (redisErr == nil) {
				t.Errorf("%s: ReadPayload %v, Redis (sanitize yes) %v", name, err, redisErr)
			}
		}
	}
}
