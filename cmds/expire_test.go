package cmds_test

import (
	"strconv"
	"testing"
	"time"
)

func TestExpire(t *testing.T) {
	keysSuite(t, []keysCase{
		{"Expire_SetsTTLInSeconds", func(t *testing.T, e keysEnv) {
			c := e.c
			expect(t, c, "OK", "SET", "k", "v")
			expect(t, c, int64(1), "EXPIRE", "k", "100")
			expect(t, c, int64(100), "TTL", "k")
			v, _ := doCmd(t, c, "PTTL", "k")
			if ms := v.(int64); ms <= 99000 || ms > 100000 {
				t.Fatalf("PTTL = %d", ms)
			}
		}},
		{"PExpire_SetsTTLInMilliseconds", func(t *testing.T, e keysEnv) {
			c := e.c
			expect(t, c, "OK", "SET", "k", "v")
			expect(t, c, int64(1), "PEXPIRE", "k", "1499")
			// TTL rounds to the nearest second as Redis does: ~1.499 s -> 1.
			expect(t, c, int64(1), "TTL", "k")
			expect(t, c, int64(1), "PEXPIRE", "k", "2600")
			expect(t, c, int64(3), "TTL", "k")
		}},
		{"ExpireAt_AbsoluteTimes", func(t *testing.T, e keysEnv) {
			c := e.c
			expect(t, c, "OK", "SET", "k", "v")
			at := time.Now().Add(time.Hour).Unix()
			expect(t, c, int64(1), "EXPIREAT", "k", strconv.FormatInt(at, 10))
			expect(t, c, at, "EXPIRETIME", "k")
			expect(t, c, at*1000, "PEXPIRETIME", "k")
			expect(t, c, int64(1), "PEXPIREAT", "k", strconv.FormatInt(at*1000+1234, 10))
			expect(t, c, at*1000+1234, "PEXPIRETIME", "k")
			expect(t, c, at+1, "EXPIRETIME", "k") // (ms+500)/1000 rounds up
		}},
		{"Expire_PastTimeDeletesKey", func(t *testing.T, e keysEnv) {
			c := e.c
			for _, args := range [][]any{
				{"EXPIRE", "k", "-1"}, {"PEXPIRE", "k", "0"}, {"EXPIREAT", "k", "1"}, {"PEXPIREAT", "k", "100"},
				{"EXPIRE", "k", "-9223372036854775"}, {"PEXPIRE", "k", "-9223372036854775808"},
			} {
				expect(t, c, "OK", "SET", "k", "v")
				expect(t, c, int64(1), args...)
				expect(t, c, int64(0), "EXISTS", "k")
				expect(t, c, int64(0), "DBSIZE")
			}
		}},
		{"Expire_MissingKeyRepliesZero", func(t *testing.T, e keysEnv) {
			c := e.c
			expect(t, c, int64(0), "EXPIRE", "nope", "100")
			expect(t, c, int64(0), "PEXPIREAT", "nope", "1")
			expect(t, c, int64(0), "DBSIZE")
		}},
		{"Expire_NXAndXX", func(t *testing.T, e keysEnv) {
			c := e.c
			expect(t, c, "OK", "SET", "k", "v")
			expect(t, c, int64(0), "EXPIRE", "k", "100", "XX")
			expect(t, c, int64(-1), "TTL", "k")
			expect(t, c, int64(1), "EXPIRE", "k", "100", "nx")
			expect(t, c, int64(0), "EXPIRE", "k", "200", "NX")
			expect(t, c, int64(100), "TTL", "k")
			expect(t, c, int64(1), "EXPIRE", "k", "200", "XX")
			expect(t, c, int64(200), "TTL", "k")
		}},
		{"Expire_GTAndLT", func(t *testing.T, e keysEnv) {
			c := e.c
			expect(t, c, "OK", "SET", "k", "v")
			// No expiry counts as infinite: GT never succeeds, LT always does.
			expect(t, c, int64(0), "EXPIRE", "k", "100", "GT")
			expect(t, c, int64(1), "EXPIRE", "k", "100", "LT")
			expect(t, c, int64(0), "EXPIRE", "k", "200", "LT")
			expect(t, c, int64(0), "EXPIRE", "k", "99", "GT")
			expect(t, c, int64(1), "EXPIRE", "k", "200", "GT")
			expect(t, c, int64(200), "TTL", "k")
			expect(t, c, int64(1), "EXPIRE", "k", "50", "lt")
			expect(t, c, int64(50), "TTL", "k")
			expect(t, c, int64(0), "EXPIRE", "k", "49", "XX", "GT")
			expect(t, c, int64(1), "EXPIRE", "k", "-1", "LT") // past: deleted
			expect(t, c, int64(0), "EXISTS", "k")
		}},
		{"Expire_OptionErrors", func(t *testing.T, e keysEnv) {
			c := e.c
			expect(t, c, "OK", "SET", "k", "v")
			for _, opts := range [][]any{{"NX", "XX"}, {"NX", "GT"}, {"lt", "nx"}} {
				expectErr(t, c, "ERR NX and XX, GT or LT options at the same time are not compatible",
					append([]any{"EXPIRE", "k", "10"}, opts...)...)
			}
			expectErr(t, c, "ERR GT and LT options at the same time are not compatible", "PEXPIRE", "k", "10", "GT", "LT")
			expectErr(t, c, "ERR Unsupported option foo", "EXPIRE", "k", "10", "foo")
			// Options are checked before the number.
			expectErr(t, c, "ERR Unsupported option foo", "EXPIRE", "k", "abc", "foo")
			expectErr(t, c, "ERR value is not an integer or out of range", "EXPIRE", "k", "abc")
			expectErr(t, c, "ERR value is not an integer or out of range", "EXPIREAT", "k", "1.5")
			expectErr(t, c, "ERR wrong number of arguments for 'expire' command", "EXPIRE", "k")
			expect(t, c, int64(-1), "TTL", "k")
		}},
		{"Expire_OverflowErrorsNameTheCommand", func(t *testing.T, e keysEnv) {
			c := e.c
			expect(t, c, "OK", "SET", "k", "v")
			expectErr(t, c, "ERR invalid expire time in 'expire' command", "EXPIRE", "k", "9223372036854775807")
			expectErr(t, c, "ERR invalid expire time in 'expire' command", "EXPIRE", "k", "-9223372036854776")
			expectErr(t, c, "ERR invalid expire time in 'expireat' command", "EXPIREAT", "k", "9223372036854776")
			expectErr(t, c, "ERR invalid expire time in 'pexpire' command", "PEXPIRE", "k", "9223372036854775807")
			// The key is checked after the time: a missing key gets the same error.
			expectErr(t, c, "ERR invalid expire time in 'pexpire' command", "PEXPIRE", "nope", "9223372036854775807")
			expect(t, c, int64(-1), "TTL", "k")
			// PEXPIREAT has no base to add: the largest time is valid.
			expect(t, c, int64(1), "PEXPIREAT", "k", "9223372036854775807")
			expect(t, c, int64(9223372036854775807), "PEXPIRETIME", "k")
			expect(t, c, int64(9223372036854776), "EXPIRETIME", "k")
		}},
		{"TTL_MissingAndPersistentKeys", func(t *testing.T, e keysEnv) {
			c := e.c
			expect(t, c, int64(-2), "TTL", "nope")
			expect(t, c, int64(-2), "PTTL", "nope")
			expect(t, c, int64(-2), "EXPIRETIME", "nope")
			expect(t, c, int64(-2), "PEXPIRETIME", "nope")
			expect(t, c, "OK", "SET", "k", "v")
			expect(t, c, int64(-1), "TTL", "k")
			expect(t, c, int64(-1), "PTTL", "k")
			expect(t, c, int64(-1), "EXPIRETIME", "k")
			expect(t, c, int64(-1), "PEXPIRETIME", "k")
			expectErr(t, c, "ERR wrong number of arguments for 'ttl' command", "TTL")
			expectErr(t, c, "ERR wrong number of arguments for 'pexpiretime' command", "PEXPIRETIME", "a", "b")
		}},
		{"Persist_RemovesExpiry", func(t *testing.T, e keysEnv) {
			c := e.c
			expect(t, c, int64(0), "PERSIST", "nope")
			expect(t, c, "OK", "SET", "k", "v")
			expect(t, c, int64(0), "PERSIST", "k")
			expect(t, c, int64(1), "EXPIRE", "k", "100")
			expect(t, c, int64(1), "PERSIST", "k")
			expect(t, c, int64(-1), "TTL", "k")
			expect(t, c, "v", "GET", "k")
			expectErr(t, c, "ERR wrong number of arguments for 'persist' command", "PERSIST")
		}},
		{"PExpire_KeyIsGoneAfterItsTTL", func(t *testing.T, e keysEnv) {
			c := e.c
			expect(t, c, "OK", "SET", "k", "v")
			expect(t, c, int64(1), "PEXPIRE", "k", "100")
			time.Sleep(300 * time.Millisecond)
			expectNil(t, c, "GET", "k")
			expect(t, c, int64(0), "EXISTS", "k")
			expect(t, c, int64(-2), "TTL", "k")
		}},
		{"PExpire_ExpiryWorkerDropsDBSize", func(t *testing.T, e keysEnv) {
			c := e.c
			for i := range 10 {
				k := "k" + strconv.Itoa(i)
				expect(t, c, "OK", "SET", k, "v")
				expect(t, c, int64(1), "PEXPIRE", k, "100")
			}
			expect(t, c, "OK", "SET", "stays", "v")
			expect(t, c, int64(11), "DBSIZE")
			deadline := time.Now().Add(1500 * time.Millisecond)
			for {
				v, _ := doCmd(t, c, "DBSIZE")
				if v == int64(1) {
					return
				}
				if time.Now().After(deadline) {
					t.Fatalf("DBSIZE is still %v 1.5 s after the keys expired", v)
				}
				time.Sleep(50 * time.Millisecond)
			}
		}},
		{"Expire_ReplacedBySetWithoutTTL", func(t *testing.T, e keysEnv) {
			c := e.c
			expect(t, c, "OK", "SET", "k", "v")
			expect(t, c, int64(1), "EXPIRE", "k", "100")
			expect(t, c, int64(1), "EXPIRE", "k", "300")
			expect(t, c, int64(300), "TTL", "k")
			expect(t, c, "OK", "SET", "k", "v2")
			expect(t, c, int64(-1), "TTL", "k")
		}},
	})
}
