package cmds_test

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"shardis/internal/testserver"

	"github.com/redis/go-redis/v9"
)

// CLIENT TRACKING through hand-written clients (go-redis v9 has no client-side cache): a
// tracking connection reads keys, other connections write them, and the invalidations arrive
// as Redis 7.0 sends them.

// The argument errors, CLIENT CACHING, GETREDIR and TRACKINGINFO replay, byte for byte, what
// redis-server 7.0.15 answered (testdata/tracking).
func TestTracking_MatchesRedis(t *testing.T) {
	replayRecorded(t, "testdata/tracking")
}

// The streams of testdata/tracking/resp3 run on a connection that sent HELLO 3 first (its
// reply, which holds the connection id, is not compared): a client's own invalidations
// follow the reply of the write that caused them, as redis-server 7.0.15 sent them.
func TestTracking_RESP3MatchesRedis(t *testing.T) { replayRecordedRESP3(t, "testdata/tracking/resp3") }

// respConn is a raw RESP connection that keeps push frames apart from replies.
type respConn struct {
	t      *testing.T
	c      net.Conn
	r      *bufio.Reader
	pushes []any // push frames read while waiting for a reply
}

// push is a RESP3 push frame.
type push []any

func dialResp(t *testing.T, addr string, resp3 bool) *respConn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	rc := &respConn{t: t, c: c, r: bufio.NewReader(c)}
	if resp3 {
		rc.do("HELLO", "3")
	}
	return rc
}

func (rc *respConn) send(args ...string) {
	rc.t.Helper()
	var b []byte
	b = fmt.Appendf(b, "*%d\r\n", len(args))
	for _, a := range args {
		b = fmt.Appendf(b, "$%d\r\n%s\r\n", len(a), a)
	}
	if _, err := rc.c.Write(b); err != nil {
		rc.t.Fatal(err)
	}
}

// do sends a command and returns its reply; pushes arriving before it are kept.
func (rc *respConn) do(args ...string) any {
	rc.t.Helper()
	rc.send(args...)
	for {
		v := rc.read()
		if p, ok := v.(push); ok {
			rc.pushes = append(rc.pushes, p)
			continue
		}
		return v
	}
}

// sync returns the pushes that arrived before the reply of a PING sent now: every
// invalidation queued for the connection before the call is among them (the loop writes the
// queue before the next command's reply).
func (rc *respConn) sync() []any {
	rc.t.Helper()
	if got := rc.do("PING"); got != "PONG" {
		rc.t.Fatalf("PING = %#v", got)
	}
	p := rc.pushes
	rc.pushes = nil
	return p
}

// next returns the next frame (reply or push), waiting generously.
func (rc *respConn) next() any {
	rc.t.Helper()
	if len(rc.pushes) > 0 {
		p := rc.pushes[0]
		rc.pushes = rc.pushes[1:]
		return p
	}
	return rc.read()
}

func (rc *respConn) read() any {
	rc.t.Helper()
	_ = rc.c.SetReadDeadline(time.Now().Add(10 * time.Second))
	v, err := readResp(rc.r)
	if err != nil {
		rc.t.Fatal(err)
	}
	return v
}

// readResp reads one RESP2/RESP3 value: strings and errors as string ("-" kept for errors),
// integers as int64, nulls as nil, aggregates as []any (push for '>').
func readResp(r *bufio.Reader) (any, error) {
	line, err := r.ReadString('\n')
	if err != nil {
		return nil, err
	}
	line = strings.TrimSuffix(line, "\r\n")
	if line == "" {
		return nil, fmt.Errorf("empty line")
	}
	body := line[1:]
	switch line[0] {
	case '+':
		return body, nil
	case '-':
		return line, nil
	case ':':
		return strconv.ParseInt(body, 10, 64)
	case '_':
		return nil, nil
	case '#':
		return body == "t", nil
	case ',', '(':
		return body, nil
	case '$', '=':
		n, _ := strconv.Atoi(body)
		if n < 0 {
			return nil, nil
		}
		b := make([]byte, n+2)
		if _, err := io.ReadFull(r, b); err != nil {
			return nil, err
		}
		return string(b[:n]), nil
	case '*', '>', '~', '%':
		n, _ := strconv.Atoi(body)
		if n < 0 {
			return nil, nil
		}
		if line[0] == '%' {
			n *= 2
		}
		list := make([]any, 0, n)
		for range n {
			v, err := readResp(r)
			if err != nil {
				return nil, err
			}
			list = append(list, v)
		}
		if line[0] == '>' {
			return push(list), nil
		}
		return list, nil
	}
	return nil, fmt.Errorf("unexpected %q", line)
}

// invalidated returns the keys of invalidation pushes (nil entries stand for the null
// invalidation), failing on any other push.
func invalidated(t *testing.T, pushes []any) []any {
	t.Helper()
	var keys []any
	for _, p := range pushes {
		f := p.(push)
		if len(f) != 2 || f[0] != "invalidate" {
			t.Fatalf("unexpected push %#v", f)
		}
		if f[1] == nil {
			keys = append(keys, nil)
			continue
		}
		keys = append(keys, f[1].([]any)...)
	}
	return keys
}

func sortedStrings(vs []any) []string {
	var out []string
	for _, v := range vs {
		out = append(out, fmt.Sprint(v))
	}
	slices.Sort(out)
	return out
}

// A RESP3 tracking client is told once of every write of a key it read, whichever shard
// holds the key, whoever writes it (another client, EXEC, expiry), and of FLUSHALL as the
// null invalidation; a key it did not read, or read and was already told about, is not sent.
func TestTracking_RESP3DefaultMode(t *testing.T) {
	s := testserver.Start(t)
	a := dialResp(t, s.Addr, true)
	b := dialResp(t, s.Addr, false)
	if got := a.do("CLIENT", "TRACKING", "ON"); got != "OK" {
		t.Fatalf("CLIENT TRACKING ON = %#v", got)
	}
	// Keys spread over the 4 shards; read alone (answered in the event loop), in MGET and
	// through a view (HGET, STRLEN).
	var keys []string
	for i := range 12 {
		k := "key:" + strconv.Itoa(i)
		keys = append(keys, k)
		b.do("SET", k, "v")
	}
	for _, k := range keys[:4] {
		a.do("GET", k)
	}
	a.do("MGET", keys[4], keys[5], keys[6])
	a.do("STRLEN", keys[7])
	b.do("HSET", "h", "f", "v")
	a.do("HGET", "h", "f")
	if p := a.sync(); len(p) != 0 {
		t.Fatalf("pushes before any write: %#v", p)
	}
	for _, k := range keys {
		b.do("SET", k, "w")
	}
	b.do("HSET", "h", "f", "w")
	want := append(slices.Clone(keys[:8]), "h")
	slices.Sort(want)
	if got := sortedStrings(invalidated(t, a.sync())); !slices.Equal(got, want) {
		t.Fatalf("invalidated %v, want %v", got, want)
	}
	// Forgotten once told: writing again sends nothing.
	b.do("SET", keys[0], "x")
	if p := a.sync(); len(p) != 0 {
		t.Fatalf("second write invalidated again: %#v", p)
	}

	// EXEC's writes.
	a.do("MGET", keys[0], keys[1])
	b.do("MULTI")
	b.do("SET", keys[0], "1")
	b.do("APPEND", keys[1], "z")
	b.do("EXEC")
	if got := sortedStrings(invalidated(t, a.sync())); !slices.Equal(got, []string{keys[0], keys[1]}) {
		t.Fatalf("EXEC invalidated %v", got)
	}

	// The writer's own write: the invalidation follows the reply, as in Redis.
	a.do("GET", keys[2])
	if got := a.do("SET", keys[2], "own"); got != "OK" {
		t.Fatalf("SET = %#v", got)
	}
	if got := invalidated(t, a.sync()); !slices.Equal(got, []any{keys[2]}) {
		t.Fatalf("own write invalidated %v", got)
	}

	// Expiry by the TTL worker.
	b.do("SET", "soon", "v", "PX", "30")
	a.do("GET", "soon") // may already be gone; either way it is tracked now
	b.do("SET", "soon", "v", "PX", "30")
	invalidated(t, a.sync())
	a.do("GET", "soon")
	if f, ok := a.next().(push); !ok || fmt.Sprint(f) != "[invalidate [soon]]" {
		t.Fatalf("expiry: got %#v", f)
	}

	// FLUSHALL: the null invalidation, and the table is empty afterwards.
	a.do("GET", keys[3])
	b.do("FLUSHALL")
	if got := invalidated(t, a.sync()); !slices.Equal(got, []any{nil}) {
		t.Fatalf("FLUSHALL invalidated %#v", got)
	}
	b.do("SET", keys[3], "v")
	if p := a.sync(); len(p) != 0 {
		t.Fatalf("a write after FLUSHALL invalidated %#v", p)
	}
	if info := b.do("INFO", "stats").(string); !strings.Contains(info, "tracking_total_keys:0\r\n") {
		t.Fatalf("INFO stats after FLUSHALL:\n%s", info)
	}
}

// RESP2 with REDIRECT: the invalidations are messages on __redis__:invalidate to the
// subscribed redirect target; FLUSHDB sends the null one.
func TestTracking_RESP2Redirect(t *testing.T) {
	s := testserver.Start(t)
	sub := dialResp(t, s.Addr, false)
	id := sub.do("CLIENT", "ID").(int64)
	if got := fmt.Sprint(sub.do("SUBSCRIBE", "__redis__:invalidate")); got != "[subscribe __redis__:invalidate 1]" {
		t.Fatalf("SUBSCRIBE = %s", got)
	}
	tr := dialResp(t, s.Addr, false)
	w := dialResp(t, s.Addr, false)
	if got := tr.do("CLIENT", "TRACKING", "ON", "REDIRECT", strconv.FormatInt(id, 10)); got != "OK" {
		t.Fatalf("TRACKING = %#v", got)
	}
	if got := tr.do("CLIENT", "GETREDIR"); got != id {
		t.Fatalf("GETREDIR = %#v", got)
	}
	if list := tr.do("CLIENT", "INFO").(string); !strings.Contains(list, " flags=t ") ||
		!strings.Contains(list, " redir="+strconv.FormatInt(id, 10)+" ") {
		t.Fatalf("CLIENT INFO: %s", list)
	}
	tr.do("GET", "r")
	w.do("SET", "r", "1")
	if got := fmt.Sprint(sub.next()); got != "[message __redis__:invalidate [r]]" {
		t.Fatalf("message = %s", got)
	}
	tr.do("GET", "r")
	w.do("FLUSHDB")
	if got := fmt.Sprintf("%#v", sub.next()); got != `[]interface {}{"message", "__redis__:invalidate", interface {}(nil)}` {
		t.Fatalf("null message = %s", got)
	}
}

// BCAST: every write of a key under a registered prefix is reported, one message per prefix
// and commit; NOLOOP leaves out the connection's own writes.
func TestTracking_BCASTPrefixesAndNoLoop(t *testing.T) {
	s := testserver.Start(t)
	a := dialResp(t, s.Addr, true)
	w := dialResp(t, s.Addr, false)
	if got := a.do("CLIENT", "TRACKING", "ON", "BCAST", "PREFIX", "user:", "PREFIX", "obj:", "NOLOOP"); got != "OK" {
		t.Fatalf("TRACKING = %#v", got)
	}
	w.do("SET", "user:1", "a") // never read: BCAST needs no read
	w.do("SET", "other", "b")
	w.do("MSET", "obj:1", "x", "obj:2", "y")
	got := invalidated(t, a.sync())
	if s := sortedStrings(got); !slices.Equal(s, []string{"obj:1", "obj:2", "user:1"}) {
		t.Fatalf("BCAST invalidated %v", s)
	}
	a.do("SET", "user:2", "own") // NOLOOP
	if p := a.sync(); len(p) != 0 {
		t.Fatalf("NOLOOP: own write reported %#v", p)
	}
	if info := w.do("INFO", "stats").(string); !strings.Contains(info, "tracking_total_prefixes:2\r\n") {
		t.Fatalf("INFO stats:\n%s", info)
	}
	if list := a.do("CLIENT", "INFO").(string); !strings.Contains(list, " flags=tB ") {
		t.Fatalf("CLIENT INFO: %s", list)
	}
}

// OPTIN tracks only the reads after CLIENT CACHING YES (the next command, or the whole
// MULTI/EXEC); OPTOUT tracks all but those after CLIENT CACHING NO.
func TestTracking_OptInOptOut(t *testing.T) {
	s := testserver.Start(t)
	w := dialResp(t, s.Addr, false)
	in := dialResp(t, s.Addr, true)
	in.do("CLIENT", "TRACKING", "ON", "OPTIN")
	in.do("GET", "i1")
	in.do("CLIENT", "CACHING", "YES")
	in.do("GET", "i2")
	in.do("GET", "i3")
	in.do("CLIENT", "CACHING", "YES")
	in.do("MULTI")
	in.do("GET", "i4")
	in.do("GET", "i5")
	in.do("EXEC")
	in.do("GET", "i6")
	out := dialResp(t, s.Addr, true)
	out.do("CLIENT", "TRACKING", "ON", "OPTOUT")
	out.do("GET", "o1")
	out.do("CLIENT", "CACHING", "NO")
	out.do("GET", "o2")
	out.do("GET", "o3")
	w.do("MSET", "i1", "1", "i2", "1", "i3", "1", "i4", "1", "i5", "1", "i6", "1", "o1", "1", "o2", "1", "o3", "1")
	if got := sortedStrings(invalidated(t, in.sync())); !slices.Equal(got, []string{"i2", "i4", "i5"}) {
		t.Fatalf("OPTIN invalidated %v", got)
	}
	if got := sortedStrings(invalidated(t, out.sync())); !slices.Equal(got, []string{"o1", "o3"}) {
		t.Fatalf("OPTOUT invalidated %v", got)
	}
}

// A RESP3 tracking client whose redirect target is gone gets tracking-redir-broken when an
// invalidation is due, and CLIENT LIST shows flag R.
func TestTracking_RedirBroken(t *testing.T) {
	s := testserver.Start(t)
	target := dialResp(t, s.Addr, false)
	id := target.do("CLIENT", "ID").(int64)
	a := dialResp(t, s.Addr, true)
	w := dialResp(t, s.Addr, false)
	a.do("CLIENT", "TRACKING", "ON", "REDIRECT", strconv.FormatInt(id, 10))
	a.do("GET", "k")
	target.c.Close()
	waitFor(t, func() bool {
		return !strings.Contains(w.do("CLIENT", "LIST").(string), "id="+strconv.FormatInt(id, 10)+" ")
	})
	w.do("SET", "k", "v")
	if got := fmt.Sprint(a.sync()); got != fmt.Sprintf("[[tracking-redir-broken %d]]", id) {
		t.Fatalf("pushes %s", got)
	}
	if list := a.do("CLIENT", "INFO").(string); !strings.Contains(list, " flags=tR ") {
		t.Fatalf("CLIENT INFO: %s", list)
	}
	if got := fmt.Sprint(a.do("CLIENT", "TRACKINGINFO")); got != fmt.Sprintf("[flags [on broken_redirect] redirect %d prefixes []]", id) {
		t.Fatalf("TRACKINGINFO = %s", got)
	}
}

// tracking-table-max-keys bounds the table: reading more keys evicts some, and their
// clients are told.
func TestTracking_TableBound(t *testing.T) {
	s := testserver.Start(t)
	a := dialResp(t, s.Addr, true)
	w := dialResp(t, s.Addr, false)
	if got := w.do("CONFIG", "SET", "tracking-table-max-keys", "10"); got != "OK" {
		t.Fatalf("CONFIG SET = %#v", got)
	}
	if got := fmt.Sprint(w.do("CONFIG", "GET", "tracking-table-max-keys")); got != "[tracking-table-max-keys 10]" {
		t.Fatalf("CONFIG GET = %s", got)
	}
	a.do("CLIENT", "TRACKING", "ON")
	for i := range 25 {
		a.do("GET", "b:"+strconv.Itoa(i))
	}
	evicted := invalidated(t, a.sync())
	if len(evicted) != 15 {
		t.Fatalf("evicted %d keys (%v), want 15", len(evicted), evicted)
	}
	if info := w.do("INFO", "stats").(string); !strings.Contains(info, "tracking_total_keys:10\r\n") {
		t.Fatalf("INFO stats:\n%s", info)
	}
	// The evicted keys are forgotten, the others are still tracked.
	for i := range 25 {
		w.do("SET", "b:"+strconv.Itoa(i), "v")
	}
	rest := invalidated(t, a.sync())
	all := sortedStrings(append(evicted, rest...))
	if len(rest) != 10 || len(slices.Compact(all)) != 25 {
		t.Fatalf("after eviction of %v, writes invalidated %v", evicted, rest)
	}
}

// RESET, CLIENT TRACKING OFF, CLIENT KILL and closing the connection all end tracking.
func TestTracking_ResetKillAndClose(t *testing.T) {
	s := testserver.Start(t)
	w := dialResp(t, s.Addr, false)
	clients := func() string {
		info := w.do("INFO", "clients").(string)
		i := strings.Index(info, "tracking_clients:")
		return strings.Fields(info[i:])[0]
	}
	a := dialResp(t, s.Addr, true)
	a.do("CLIENT", "TRACKING", "ON")
	a.do("GET", "k")
	if got := clients(); got != "tracking_clients:1" {
		t.Fatal(got)
	}
	a.do("RESET")
	a.do("HELLO", "3")
	w.do("SET", "k", "v")
	if p := a.sync(); len(p) != 0 {
		t.Fatalf("after RESET: %#v", p)
	}
	if got := fmt.Sprint(a.do("CLIENT", "TRACKINGINFO")); got != "[flags [off] redirect -1 prefixes []]" {
		t.Fatalf("TRACKINGINFO after RESET = %s", got)
	}
	a.do("CLIENT", "TRACKING", "ON")
	a.do("GET", "k")
	a.do("CLIENT", "TRACKING", "OFF")
	w.do("SET", "k", "w")
	if p := a.sync(); len(p) != 0 {
		t.Fatalf("after TRACKING OFF: %#v", p)
	}
	a.do("CLIENT", "TRACKING", "ON", "BCAST")
	id := a.do("CLIENT", "ID").(int64)
	if got := w.do("CLIENT", "KILL", "ID", strconv.FormatInt(id, 10)); got != int64(1) {
		t.Fatalf("CLIENT KILL = %#v", got)
	}
	waitFor(t, func() bool { return clients() == "tracking_clients:0" })
	c := dialResp(t, s.Addr, true)
	c.do("CLIENT", "TRACKING", "ON")
	c.c.Close()
	waitFor(t, func() bool { return clients() == "tracking_clients:0" })
	w.do("SET", "k", "x") // nobody tracks: nothing to send, nothing breaks
}

// A read run by a script remembers the script's declared keys, not the key it names, and
// EVAL_RO itself remembers nothing, as redis-server 7.0.15 does.
func TestTracking_ScriptsRememberTheirKeys(t *testing.T) {
	s := testserver.Start(t)
	a := dialResp(t, s.Addr, true)
	w := dialResp(t, s.Addr, false)
	a.do("CLIENT", "TRACKING", "ON")
	a.do("EVAL", "return redis.call('get','named')", "1", "declared")
	a.do("EVAL_RO", "return 1", "1", "ro")
	a.do("EVAL", "redis.call('set','w','1') return redis.call('get','x')", "2", "k1", "k2")
	w.do("MSET", "named", "1", "declared", "1", "ro", "1", "k1", "1", "k2", "1", "x", "1")
	if got := sortedStrings(invalidated(t, a.sync())); !slices.Equal(got, []string{"declared", "k1", "k2"}) {
		t.Fatalf("invalidated %v", got)
	}
}

// A client-side cache kept by the invalidations never holds a stale value: a tracking client
// caches what it reads (pipelined GETs, answered in the event loop or in the shard) while
// another client keeps overwriting the keys; once the writer stopped, every cached value is the
// server's.
func TestTracking_CacheNeverStale(t *testing.T) {
	s := testserver.Start(t)
	const nkeys, rounds = 8, 400
	a := dialResp(t, s.Addr, true)
	a.do("CLIENT", "TRACKING", "ON")
	key := func(i int) string { return "c:" + strconv.Itoa(i) }
	w := dialResp(t, s.Addr, false)
	for i := range nkeys {
		w.do("SET", key(i), "0")
	}
	done := make(chan error, 1)
	go func() {
		c, err := net.Dial("tcp", s.Addr)
		if err != nil {
			done <- err
			return
		}
		defer c.Close()
		r := bufio.NewReader(c)
		for n := 1; n <= rounds*2; n++ {
			k := key(n % nkeys)
			v := strconv.Itoa(n)
			fmt.Fprintf(c, "*3\r\n$3\r\nSET\r\n$%d\r\n%s\r\n$%d\r\n%s\r\n", len(k), k, len(v), v)
			if _, err := readResp(r); err != nil {
				done <- err
				return
			}
		}
		done <- nil
	}()
	cache := map[string]string{}
	apply := func(v any, pending []string) []string {
		if p, ok := v.(push); ok {
			for _, k := range invalidated(t, []any{p}) {
				if k == nil {
					clear(cache)
				} else {
					delete(cache, k.(string))
				}
			}
			return pending
		}
		if v != nil {
			cache[pending[0]] = v.(string)
		}
		return pending[1:]
	}
	for round := range rounds {
		var pending []string
		for j := range 4 { // a pipeline of GETs of keys not cached
			k := key((round*3 + j) % nkeys)
			if _, ok := cache[k]; ok || slices.Contains(pending, k) {
				continue
			}
			a.send("GET", k)
			pending = append(pending, k)
		}
		for len(pending) > 0 {
			pending = apply(a.read(), pending)
		}
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	for _, p := range a.sync() {
		apply(p, nil)
	}
	for k, v := range cache {
		if got := w.do("GET", k); got != v {
			t.Fatalf("cached %s = %s, server has %v", k, v, got)
		}
	}
}

// go-redis's client-side cache (v9.23, experimental) works against shardis: a second GET is
// served from the cache, and a write by another client invalidates it.
func TestTracking_GoRedisClientSideCache(t *testing.T) {
	s := testserver.Start(t)
	w := s.Client(t)
	csc := s.Client(t, func(o *redis.Options) {
		o.Protocol = 3
		o.ClientSideCacheConfig = &redis.ClientSideCacheConfig{MaxEntries: 1000}
	})
	if err := w.Set(testCtx, "cached", "v1", 0).Err(); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if got, err := csc.Get(testCtx, "cached").Result(); err != nil || got != "v1" {
			t.Fatalf("GET = %q, %v", got, err)
		}
	}
	if st := csc.CSCStats(); st.Hits == 0 {
		t.Fatalf("second GET not served from the cache: %+v", st)
	}
	if info, _ := w.ClientList(testCtx).Result(); !strings.Contains(info, " flags=t") {
		t.Fatalf("no tracking connection in CLIENT LIST:\n%s", info)
	}
	if err := w.Set(testCtx, "cached", "v2", 0).Err(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool { return csc.Get(testCtx, "cached").Val() == "v2" })
}

// Lowering tracking-table-max-keys evicts keys past it at once, sending their invalidations
// with no further read, as Redis's cron does.
func TestTracking_LoweredMaxKeysEvictsWithoutARead(t *testing.T) {
	s := testserver.Start(t)
	a := dialResp(t, s.Addr, true)
	admin := dialResp(t, s.Addr, false)
	if got := a.do("CLIENT", "TRACKING", "ON"); got != "OK" {
		t.Fatalf("CLIENT TRACKING ON = %#v", got)
	}
	for i := range 10 {
		a.do("GET", "lk:"+strconv.Itoa(i))
	}
	if got := admin.do("CONFIG", "SET", "tracking-table-max-keys", "3"); got != "OK" {
		t.Fatalf("CONFIG SET = %#v", got)
	}
	var got []any
	for range 7 {
		got = append(got, a.next()) // pushes only: a sends nothing meanwhile
	}
	if keys := invalidated(t, got); len(keys) != 7 {
		t.Fatalf("invalidated %v, want 7 keys", keys)
	}
	info, _ := admin.do("INFO", "stats").(string)
	if !strings.Contains(info, "tracking_total_keys:3\r\n") {
		t.Fatalf("INFO stats after the eviction:\n%s", info)
	}
}
