package cmds_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"shardis/internal/testserver"
)

// TestNotify_Keyspace_MatchesRedis replays testdata/notify: one RESP3 connection subscribed
// to every keyspace channel runs writes of every family, and gets each command's events as
// push frames where Redis writes them in its replies, byte for byte as redis-server 7.0.15.
func TestNotify_Keyspace_MatchesRedis(t *testing.T) { replayRecordedRESP3(t, "testdata/notify") }

// A RESP2 subscriber on its own connection (go-redis) sees another client's writes, and the
// TTL worker's "expired", with nobody reading the key.
func TestNotify_GoRedisSubscriber_WritesAndActiveExpiry(t *testing.T) {
	s := testserver.Start(t, "--hz", "100")
	ctx := context.Background()
	c := s.Client(t)
	if err := c.ConfigSet(ctx, "notify-keyspace-events", "Egx$").Err(); err != nil {
		t.Fatal(err)
	}
	ps := s.Client(t).PSubscribe(ctx, "__keyevent@*__:*")
	defer ps.Close()
	if _, err := ps.Receive(ctx); err != nil {
		t.Fatal(err)
	}
	// Keys in several shards; MSET is one multi-shard command.
	if err := c.MSet(ctx, "a", "1", "b", "2", "c", "3").Err(); err != nil {
		t.Fatal(err)
	}
	if err := c.PExpire(ctx, "b", 50*time.Millisecond).Err(); err != nil {
		t.Fatal(err)
	}
	want := []string{"set a", "set b", "set c", "expire b", "expired b"}
	for i, w := range want {
		msgCtx, cancel := context.WithTimeout(ctx, 60*time.Second)
		m, err := ps.ReceiveMessage(msgCtx)
		cancel()
		if err != nil {
			t.Fatalf("event %d (%s): %v", i, w, err)
		}
		got := strings.TrimPrefix(m.Channel, "__keyevent@0__:") + " " + m.Payload
		if got != w {
			t.Fatalf("event %d = %q, want %q", i, got, w)
		}
	}
	if n, err := c.Exists(ctx, "b").Result(); err != nil || n != 0 {
		t.Fatalf("EXISTS b = %d, %v after its expired event", n, err)
	}
}

// Keyspace events are published only when a subscriber could get them: with the classes
// but neither K nor E, nothing is published, and CONFIG GET shows the classes as Redis does.
func TestNotify_Config_ClassesAndChannels(t *testing.T) {
	s := testserver.Start(t)
	ctx := context.Background()
	c := s.Client(t)
	for _, tc := range []struct{ set, get string }{
		{"KEA", "AKE"}, {"Ag$", "A"}, {"EKnm", "nKEm"}, {"gx", "gx"}, {"", ""},
	} {
		if err := c.ConfigSet(ctx, "notify-keyspace-events", tc.set).Err(); err != nil {
			t.Fatalf("CONFIG SET %q: %v", tc.set, err)
		}
		got, err := c.ConfigGet(ctx, "notify-keyspace-events").Result()
		if err != nil || got["notify-keyspace-events"] != tc.get {
			t.Fatalf("CONFIG GET after %q = %v, %v; want %q", tc.set, got, err, tc.get)
		}
	}
	err := c.ConfigSet(ctx, "notify-keyspace-events", "KEQ").Err()
	want := "ERR CONFIG SET failed (possibly related to argument 'notify-keyspace-events') - Invalid event class character. Use 'Ag$lshzxeKEtmdn'."
	if err == nil || err.Error() != want {
		t.Fatalf("CONFIG SET KEQ: %v, want %q", err, want)
	}
	// Classes without K or E publish nothing: a subscriber's PING after another client's
	// write comes back with nothing before it (an event would be queued before the write's
	// reply). With K it does get the event: the check can fail.
	sub := dialResp(t, s.Addr, false)
	sub.send("PSUBSCRIBE", "*")
	sub.read() // the psubscribe confirmation
	for _, tc := range []struct {
		classes string
		event   bool
	}{{"g$", false}, {"K$", true}} {
		if err := c.ConfigSet(ctx, "notify-keyspace-events", tc.classes).Err(); err != nil {
			t.Fatal(err)
		}
		if err := c.Set(ctx, "x", "1", 0).Err(); err != nil {
			t.Fatal(err)
		}
		sub.send("PING")
		first := sub.read()
		got, _ := first.([]any)
		isEvent := len(got) == 4 && got[0] == "pmessage" && got[2] == "__keyspace@0__:x"
		if isEvent != tc.event {
			t.Fatalf("notify-keyspace-events %q: first frame after SET is %#v", tc.classes, first)
		}
		if isEvent {
			sub.read() // the PONG
		}
	}
}

// A read that misses, alone in its batch (so the event loop could answer it), still gets its
// "keymiss" push before its reply on a RESP3 connection subscribed to its own events.
func TestNotify_KeyMissOfALoneReadBeforeItsReply(t *testing.T) {
	s := testserver.Start(t)
	rc := dialResp(t, s.Addr, true)
	rc.do("CONFIG", "SET", "notify-keyspace-events", "Em")
	rc.send("PSUBSCRIBE", "__keyevent@0__:*")
	if p, ok := rc.read().(push); !ok || len(p) != 3 || p[0] != "psubscribe" {
		t.Fatalf("PSUBSCRIBE: %#v", p)
	}
	for _, cmd := range [][]string{{"GET", "missing"}, {"HGET", "missing", "f"}, {"LLEN", "missing"}} {
		rc.send(cmd...)
		first, second := rc.read(), rc.read()
		p, ok := first.(push)
		if !ok || len(p) != 4 || p[2] != "__keyevent@0__:keymiss" || p[3] != "missing" {
			t.Fatalf("%v: first frame %#v, want the keymiss push (then the reply %#v)", cmd, first, second)
		}
		if _, isPush := second.(push); isPush {
			t.Fatalf("%v: second frame %#v, want the reply", cmd, second)
		}
	}
}
