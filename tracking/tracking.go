// Package tracking is server-assisted client-side caching (CLIENT TRACKING), as Redis 7.0's
// tracking.c: the table of which connections may cache which keys, the prefixes of BCAST
// connections, and the invalidation messages sent when keys change.
//
// The server has one Table. The shards report every key a successful commit changed
// (shard.Tracker) while at least one connection tracks; the executor tells the table which
// keys a tracking connection reads. Invalidations go through each connection's pub/sub queue
// (pubsub.Subscriber), so their ordering and output limits are those of pub/sub messages.
package tracking

import (
	"bytes"
	"errors"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"shardis/pubsub"
	"shardis/shard"
)

// Options are CLIENT TRACKING ON's options.
type Options struct {
	Redirect int64 // connection id invalidations go to (0: the tracking connection itself)
	BCAST    bool
	OptIn    bool
	OptOut   bool
	NoLoop   bool
	Prefixes []string // BCAST only; sorted, no two overlapping
}

// Conn is one connection's tracking state. The reactor makes it with the connection; only the
// Table changes its mode (under the table's lock); any goroutine reads it.
type Conn struct {
	id     int64
	sub    *pubsub.Subscriber
	mode   atomic.Pointer[Options] // nil: tracking off; never changed once published
	broken atomic.Bool             // the redirect target was gone when an invalidation was due
}

// NewConn returns the tracking state of connection id, whose own messages go to sub.
func NewConn(id int64, sub *pubsub.Subscriber) *Conn { return &Conn{id: id, sub: sub} }

// Mode returns the connection's options and whether tracking is on.
func (c *Conn) Mode() (Options, bool) {
	if m := c.mode.Load(); m != nil {
		return *m, true
	}
	return Options{}, false
}

// On reports whether the connection tracks.
func (c *Conn) On() bool { return c.mode.Load() != nil }

// BrokenRedirect reports whether an invalidation found the redirect target gone (CLIENT LIST
// flag R, CLIENT TRACKINGINFO broken_redirect).
func (c *Conn) BrokenRedirect() bool { return c.broken.Load() }

// Remembers reports whether the keys of a read run now are to be remembered: tracking is on
// in the default mode, and CLIENT CACHING (caching: given for this command) allows it.
func (c *Conn) Remembers(caching bool) bool {
	m := c.mode.Load()
	if m == nil || m.BCAST {
		return false
	}
	return !(m.OptIn && !caching || m.OptOut && caching)
}

// Writes is the part of the store the table switches: shard.Store.TrackWrites.
type Writes interface{ TrackWrites(on bool) }

// Target is a connection invalidations are redirected to.
type Target struct {
	Sub *pubsub.Subscriber
	// Subscribed: it holds a pub/sub subscription, so a RESP2 target gets messages on
	// __redis__:invalidate.
	Subscribed bool
}

// Table is the server's tracking state. It is safe for concurrent use.
//
// Bounds: the default-mode table holds at most MaxKeys() keys (tracking-table-max-keys; 0:
// no limit); past it keys are evicted at random, their invalidations sent, as Redis's
// trackingLimitUsedSlots does: when a read remembers one more, and, while the table stays
// over (the limit was lowered: Trim), every 100 ms, each pass evicting at most 100 keys
// times the passes in a row that found it over. Entries of connections that stopped
// tracking stay until their key is written or evicted (Redis keeps them too); they are
// skipped when invalidating.
type Table struct {
	writes  Writes
	lookup  func(id int64) (Target, bool)
	maxKeys func() int64

	mu    sync.Mutex
	conns map[int64]*Conn               // connections with tracking on
	keys  map[string]map[int64]struct{} // key -> ids of connections that may cache it
	items int64                         // sum of the sets' sizes
	// prefixes of BCAST connections ("" matches every key) -> their connections.
	prefixes map[string]map[*Conn]struct{}
	// overPasses counts the eviction passes in a row that left the table over its bound
	// (Redis's timeout_counter); trimming says a goroutine runs them every trimPeriod.
	overPasses int
	trimming   bool
}

// trimPeriod is how often an over-full table is trimmed: Redis's serverCron at hz 10.
const trimPeriod = 100 * time.Millisecond

// NewTable returns an empty table. writes is switched on while any connection tracks; lookup
// finds a redirect target by connection id; maxKeys is tracking-table-max-keys.
func NewTable(writes Writes, lookup func(id int64) (Target, bool), maxKeys func() int64) *Table {
	return &Table{writes: writes, lookup: lookup, maxKeys: maxKeys,
		conns: make(map[int64]*Conn), keys: make(map[string]map[int64]struct{}),
		prefixes: make(map[string]map[*Conn]struct{})}
}

// Stats returns INFO's tracking_clients, tracking_total_keys, tracking_total_items and
// tracking_total_prefixes.
func (t *Table) Stats() (clients, keys, items, prefixes int64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return int64(len(t.conns)), int64(len(t.keys)), t.items, int64(len(t.prefixes))
}

// Errors of CLIENT TRACKING ON, with Redis 7.0's texts (after "ERR ").
var (
	ErrPrefixNeedsBCAST = errors.New("PREFIX option requires BCAST mode to be enabled")
	ErrSwitchBCAST      = errors.New("You can't switch BCAST mode on/off before disabling tracking for this client, and then re-enabling it with a different mode.")
	ErrOptWithBCAST     = errors.New("OPTIN and OPTOUT are not compatible with BCAST")
	ErrOptInAndOut      = errors.New("You can't specify both OPTIN mode and OPTOUT mode")
	ErrSwitchOpt        = errors.New("You can't switch OPTIN/OPTOUT mode before disabling tracking for this client, and then re-enabling it with a different mode.")
)

// Enable turns tracking on for c with o (CLIENT TRACKING ON), or changes its options when it is
// on already: BCAST prefixes add to those it has. It returns Redis's error, changing nothing,
// when o conflicts with itself or with c's current mode.
func (t *Table) Enable(c *Conn, o Options) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	cur := c.mode.Load()
	switch {
	case !o.BCAST && len(o.Prefixes) > 0:
		return ErrPrefixNeedsBCAST
	case cur != nil && cur.BCAST != o.BCAST:
		return ErrSwitchBCAST
	case o.BCAST && (o.OptIn || o.OptOut):
		return ErrOptWithBCAST
	case o.OptIn && o.OptOut:
		return ErrOptInAndOut
	case cur != nil && (o.OptIn && cur.OptOut || o.OptOut && cur.OptIn):
		return ErrSwitchOpt
	}
	var old []string
	if cur != nil {
		old = cur.Prefixes
	}
	if o.BCAST {
		if err := checkPrefixes(old, o.Prefixes); err != nil {
			return err
		}
	}
	next := o
	next.Prefixes = nil
	if o.BCAST {
		add := o.Prefixes
		if len(add) == 0 {
			add = []string{""}
		}
		next.Prefixes = slices.Clone(old)
		for _, p := range add {
			if _, dup := slices.BinarySearch(next.Prefixes, p); !dup {
				next.Prefixes = append(next.Prefixes, p)
			}
			if t.prefixes[p] == nil {
				t.prefixes[p] = make(map[*Conn]struct{})
			}
			t.prefixes[p][c] = struct{}{}
		}
		slices.Sort(next.Prefixes)
	}
	c.broken.Store(false)
	c.mode.Store(&next)
	if cur == nil {
		t.conns[c.id] = c
		if len(t.conns) == 1 {
			t.writes.TrackWrites(true)
		}
	}
	return nil
}

// checkPrefixes returns Redis's error when a new prefix overlaps (one is a prefix of the
// other) an existing one or another new one.
func checkPrefixes(existing, added []string) error {
	overlap := func(a, b string) bool { return strings.HasPrefix(a, b) || strings.HasPrefix(b, a) }
	for i, p := range added {
		for _, e := range existing {
			if overlap(p, e) {
				return errors.New("Prefix '" + p + "' overlaps with an existing prefix '" + e +
					"'. Prefixes for a single client must not overlap.")
			}
		}
		for _, q := range added[i+1:] {
			if overlap(p, q) {
				return errors.New("Prefix '" + p + "' overlaps with another provided prefix '" + q +
					"'. Prefixes for a single client must not overlap.")
			}
		}
	}
	return nil
}

// Disable turns tracking off for c (CLIENT TRACKING OFF, RESET, the connection closing).
func (t *Table) Disable(c *Conn) {
	t.mu.Lock()
	defer t.mu.Unlock()
	cur := c.mode.Load()
	if cur == nil {
		return
	}
	for _, p := range cur.Prefixes {
		delete(t.prefixes[p], c)
		if len(t.prefixes[p]) == 0 {
			delete(t.prefixes, p)
		}
	}
	c.mode.Store(nil)
	c.broken.Store(false)
	delete(t.conns, c.id)
	if len(t.conns) == 0 {
		t.writes.TrackWrites(false)
	}
}

// Remember records that c may cache keys (it is about to read them, in an event loop). The
// caller checked c.Remembers. Past tracking-table-max-keys, keys are evicted and invalidated.
func (t *Table) Remember(c *Conn, keys [][]byte) {
	if len(keys) == 0 {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, k := range keys {
		t.rememberLocked(c, k)
	}
}

func (t *Table) rememberLocked(c *Conn, key []byte) {
	if !c.On() {
		return // tracking went off meanwhile (the connection closed)
	}
	ids := t.keys[string(key)]
	if ids == nil {
		ids = make(map[int64]struct{}, 1)
		t.keys[string(key)] = ids
	}
	if _, ok := ids[c.id]; !ok {
		ids[c.id] = struct{}{}
		t.items++
	}
	if t.limitLocked() {
		t.trimLocked()
	}
}

// limitLocked is one eviction pass (Redis's trackingLimitUsedSlots): it evicts random keys,
// sending their invalidations, until the table is within tracking-table-max-keys or it
// evicted 100 keys for each pass in a row that found it over, this one included. It
// reports whether the table is still over.
func (t *Table) limitLocked() bool {
	limit := t.maxKeys()
	if limit <= 0 || int64(len(t.keys)) <= limit {
		t.overPasses = 0
		return false
	}
	effort := 100 * (t.overPasses + 1)
	for k := range t.keys { // map order is random: Redis evicts random keys too
		if effort == 0 {
			break
		}
		effort--
		t.invalidateKeyLocked([]byte(k), 0, nil)
		if int64(len(t.keys)) <= limit {
			t.overPasses = 0
			return false
		}
	}
	t.overPasses++
	return true
}

// Trim brings the table within tracking-table-max-keys when it is over (the limit was
// lowered: CONFIG SET), as Redis's cron does: one pass at once, then one every trimPeriod
// until it is within.
func (t *Table) Trim() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.limitLocked() {
		t.trimLocked()
	}
}

// trimLocked starts the goroutine that trims the over-full table, unless it runs.
func (t *Table) trimLocked() {
	if t.trimming {
		return
	}
	t.trimming = true
	go func() {
		for {
			time.Sleep(trimPeriod)
			t.mu.Lock()
			if !t.limitLocked() {
				t.trimming = false
				t.mu.Unlock()
				return
			}
			t.mu.Unlock()
		}
	}()
}

// Apply takes the accesses of a commit (shard.Tracker), in order: a read by a tracking
// connection remembers its key; a write sends the key to the connections that may cache it,
// which forget it; a flush sends the null invalidation to every tracking connection and
// empties the table. Then the written keys matching BCAST prefixes go to those connections,
// one message per prefix. NOLOOP connections are not told of their own writes. A
// connection's own invalidation follows the reply of the command that caused it when the
// command's reply is not sent yet (Access.Owner), as Redis sends it.
func (t *Table) Apply(accesses []shard.Access) {
	t.mu.Lock()
	defer t.mu.Unlock()
	writes := false
	for _, a := range accesses {
		switch {
		case a.Reader != nil:
			if c, ok := a.Reader.(*Conn); ok {
				t.rememberLocked(c, a.Key)
			}
		case a.Flush:
			for _, c := range t.conns {
				t.sendLocked(c, pubsub.NullPayload(c.sub.RESP3.Load()), ownerFor(c, a))
			}
			clear(t.keys)
			t.items = 0
		default:
			writes = true
			t.invalidateKeyLocked(a.Key, a.Client, a.Owner)
		}
	}
	if writes && len(t.prefixes) > 0 {
		t.broadcastLocked(accesses)
	}
}

// ownerFor returns where c's invalidation caused by access a goes after a reply: a's owner
// when c made a, else nowhere (c's queue).
func ownerFor(c *Conn, a shard.Access) shard.ReplyTail {
	if a.Client == c.id {
		return a.Owner
	}
	return nil
}

// invalidateKeyLocked tells the connections that may cache key that it changed (writer, when
// not 0, made the change; owner is where the writer's own invalidation goes) and forgets
// them.
func (t *Table) invalidateKeyLocked(key []byte, writer int64, owner shard.ReplyTail) {
	ids, ok := t.keys[string(key)]
	if !ok {
		return
	}
	delete(t.keys, string(key))
	t.items -= int64(len(ids))
	var payload []byte
	for id := range ids {
		c := t.conns[id]
		if c == nil {
			continue // stopped tracking since
		}
		m := c.mode.Load()
		if m == nil || m.BCAST || m.NoLoop && id == writer {
			continue
		}
		if payload == nil {
			payload = pubsub.AppendKeys(nil, key)
		}
		var after shard.ReplyTail
		if id == writer {
			after = owner
		}
		t.sendLocked(c, payload, after)
	}
}

// broadcastLocked sends every BCAST connection the written keys matching each of its prefixes,
// one message per prefix, each key once. Redis collects them until the end of its event loop
// iteration; here they go once per commit.
func (t *Table) broadcastLocked(accesses []shard.Access) {
	// In prefix order, as Redis walks its prefix table.
	order := make([]string, 0, len(t.prefixes))
	for p := range t.prefixes {
		order = append(order, p)
	}
	slices.Sort(order)
	for _, prefix := range order {
		conns := t.prefixes[prefix]
		var matched []shard.Access
		seen := make(map[string]struct{})
		for _, w := range accesses {
			if w.Reader != nil || w.Flush || !strings.HasPrefix(string(w.Key), prefix) {
				continue
			}
			if _, dup := seen[string(w.Key)]; dup {
				// Written again, maybe by another client: NOLOOP keeps it only if every
				// writer was the connection itself, as Redis does.
				for i := range matched {
					if string(matched[i].Key) == string(w.Key) && matched[i].Client != w.Client {
						matched[i].Client = 0
					}
				}
				continue
			}
			seen[string(w.Key)] = struct{}{}
			matched = append(matched, w)
		}
		if len(matched) == 0 {
			continue
		}
		// In key order, as Redis keeps them (a radix tree).
		slices.SortFunc(matched, func(a, b shard.Access) int { return bytes.Compare(a.Key, b.Key) })
		for c := range conns {
			m := c.mode.Load()
			if m == nil {
				continue
			}
			var list [][]byte
			for _, w := range matched {
				if m.NoLoop && w.Client == c.id {
					continue
				}
				list = append(list, w.Key)
			}
			if len(list) > 0 {
				t.sendLocked(c, pubsub.AppendKeys(nil, list...), nil)
			}
		}
	}
}

// sendLocked delivers one invalidation payload for tracking connection c: to c itself (after
// the reply of the command that caused it when after takes it, else through its queue), or to
// its redirect target; a target that is gone gets c flagged and, in RESP3, told.
func (t *Table) sendLocked(c *Conn, payload []byte, after shard.ReplyTail) {
	m := c.mode.Load()
	if m == nil {
		return
	}
	if m.Redirect == 0 {
		if after != nil && c.sub.RESP3.Load() && after.AfterReply(pubsub.InvalidationPush(payload)) {
			return
		}
		c.sub.DeliverInvalidation(payload, false)
		return
	}
	target, ok := t.lookup(m.Redirect)
	if !ok {
		c.broken.Store(true)
		c.sub.DeliverRedirBroken(m.Redirect)
		return
	}
	target.Sub.DeliverInvalidation(payload, target.Subscribed)
}
