package shard

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"
	"unsafe"

	"github.com/linxGnu/grocksdb"

	"shardis/binlog"
	"shardis/codec"
	"shardis/internal/memfree"
	"shardis/ttl"
)

// ErrNotHeld is returned when a command touches a key whose shard its transaction does not
// hold: a command table entry with wrong key positions.
var ErrNotHeld = errors.New("shard: key outside the shards this command holds")

// Tx is the unit of atomicity: the writes of one group of commands in one shard, or of one
// command across the shards a coordinator holds. Everything goes into one WriteBatch that is
// committed once; reads see the transaction's own writes first (read-your-writes).
//
// A Tx is owned by the goroutine that holds its shards and is reused: values it returns
// (Meta.Value, Get results, iterator keys) stay valid until the group commits.
type Tx struct {
	store   *Store
	shards  []*Shard // held shards, ascending id
	parts   []txPart // parallel to shards
	wb      *grocksdb.WriteBatch
	overlay map[string]entry // holder-shard index (2 bytes) | raw key -> latest state
	ranges  []rangeDel       // DeleteRange tombstones written by this transaction
	fresh   []freshVersion   // collection versions made by this transaction (NewVersion)
	// cachedPuts are the overlay keys written with PutDataCached, in order: the commit adds
	// the last maxCachedPuts of them to the key cache.
	cachedPuts []string
	// sortKeys is commit's scratch for putting a big overlay in order (putOverlaySorted).
	sortKeys    []string
	arena       []byte   // copies of values read from RocksDB, reset at commit
	tails       [][]byte // big values the overlay references (entry.tail)
	scratch     []byte
	tailScratch [][]tailEntry // see captureTail
	logKey      []byte        // the binlog key logArgs puts
	metaKey     []byte        // meta's buffer for the meta key
	wbBytes     int64         // about what the WriteBatch holds (the disk guard's estimate)
	nowMs       int64
	// applying: the commands apply a master's records (SetApplying): nothing expires, nothing
	// is logged.
	applying bool
	// bulk: the transaction is a load's (Loader.Tx): commits skip the WAL (the load flushes
	// the memtables when it finishes) and the key cache, which a load leaves empty.
	bulk   bool
	big    bool  // counted as a big transaction (bigtx.go)
	err    error // first storage error; fails the commit
	hits   int64 // Meta lookups that found / missed their key (see TakeLookups)
	misses int64
	// readLookups says Meta lookups are reads, whose misses are "keymiss" events (see
	// SetReadLookups).
	readLookups bool
	// noTouch says Meta lookups record no access (see SetTouch and access.go).
	noTouch bool
	// lastTouch is the access hash of the key the current command touched last (0: none).
	lastTouch uint64

	// A transaction over several shards holds its binlog records until the commit, which
	// marks them as one unit if they are in more than one shard (see unit.go).
	unitLog [][]byte // see holdForUnit
	// unitDepth > 0: between BeginUnit and EndUnit, the records are held for one unit even
	// in one shard.
	unitDepth int
	// joining is the held record LogItems is still adding items to (see unit.go).
	joining  joinedRecord
	confined int // Shards reports only held shard confined-1 (0: all); see Confine

	touched []touch // user keys written while their shard had waiters (see noteWrite)
	// saving: a savepoint is active (savepoint.go), and undo holds the overlay's state of each
	// key before the writes made since.
	saving bool
	undo   []undoEntry
	// events are the keyspace events of the transaction's commands, published at commit;
	// eventKeys holds their keys (see events.go).
	events    []Event
	eventKeys []byte
	origin    EventOrigin // see SetOrigin
	// readyNext is the first touched key NextReady has not looked at; served are the waiters
	// this transaction served and deferred the ready keys it could not serve (see waiters.go).
	// served and deferred outlive begin: they are settled when the transaction commits.
	readyNext int
	served    []*Waiter
	deferred  []ReadyKey

	// Client-side caching (tracked.go): the keys written while tracking is on, with their
	// writers, reported to the store's Tracker once the commit succeeded.
	writer     int64
	owner      ReplyTail // where frames after the writer's reply go (see SetWriter)
	trackGen   uint64    // Store.trackGen at begin
	tracked    []Access
	trackArena []byte

	// A view (Store.View) reads committed state outside the shard: it writes nothing, maps
	// databases with the snapshot viewDBMap and caches what it reads only if no commit came
	// since viewEpoch.
	view        bool
	viewEpoch   uint64
	viewCommits uint64 // Shard.commits when the view began
	viewDBMap   []int
}

// entry is the transaction's latest knowledge of one raw key.
type entry struct {
	val []byte
	// tail, when not 0, says the value goes on after val with tx.tails[tail-1]: a big string's
	// bytes, referenced from the caller (SetMeta), which go into the WriteBatch at commit
	// without a Go copy. An index, not a slice, keeps the overlay's entries small.
	tail   int32
	exists bool
	dirty  bool // written by this transaction (false: cached read)
	// noted says the savepoint under way has the key's earlier state in tx.undo: later writes
	// to it record nothing more (see noteUndo).
	noted bool
}

type rangeDel struct {
	part         int
	lower, upper []byte
	// live: data keys of a collection's live version (DeleteDataRange), which the key cache
	// may hold; an old version's keys are never read again.
	live bool
}

// txPart is the pending bookkeeping of one held shard, applied when the commit succeeds.
type txPart struct {
	keys, expires []int64 // per physical db deltas
	countsDirty   bool
	dbmapDirty    bool
	nextSeq       uint64 // next binlog sequence to hand out
	firstSeq      uint64 // new first sequence after a trim (0: unchanged)
	logMaxMs      int64  // the newest time among the records this transaction logged
}

func newTx(s *Store) *Tx {
	return &Tx{store: s, wb: grocksdb.NewWriteBatch(), overlay: make(map[string]entry)}
}

func (tx *Tx) destroy() { tx.wb.Destroy() }

func (tx *Tx) begin(shards ...*Shard) { tx.beginAt(time.Now().UnixMilli(), shards...) }

// beginAt is begin with the first command's clock, nowMs, read by the caller.
func (tx *Tx) beginAt(nowMs int64, shards ...*Shard) {
	tx.shards = append(tx.shards[:0], shards...)
	for len(tx.parts) < len(shards) {
		tx.parts = append(tx.parts, txPart{})
	}
	tx.parts = tx.parts[:len(shards)]
	n := tx.store.opts.Databases
	for i, sh := range shards {
		p := &tx.parts[i]
		if len(p.keys) != n {
			p.keys, p.expires = make([]int64, n), make([]int64, n)
		}
		clear(p.keys)
		clear(p.expires)
		p.countsDirty, p.dbmapDirty, p.firstSeq, p.logMaxMs = false, false, 0, 0
		p.nextSeq = sh.lastSeq.Load() + 1
	}
	tx.err = nil
	tx.applying = false
	tx.unitDepth = 0
	tx.confined = 0
	tx.trackGen = tx.store.trackGen.Load()
	tx.nowMs = nowMs
}

// StartCommand fixes the clock for the next command, as Redis does per command.
func (tx *Tx) StartCommand() { tx.nowMs = time.Now().UnixMilli() }

// Now returns the command's time in unix milliseconds.
func (tx *Tx) Now() int64 { return tx.nowMs }

// Store returns the store the transaction belongs to.
func (tx *Tx) Store() *Store { return tx.store }

// Shards returns the ids of the held shards, ascending.
func (tx *Tx) Shards() []int {
	if tx.confined > 0 {
		return []int{tx.confined - 1}
	}
	ids := make([]int, len(tx.shards))
	for i, sh := range tx.shards {
		ids[i] = sh.id
	}
	return ids
}

// Err returns the first storage error the transaction met; the commit will fail with it.
func (tx *Tx) Err() error { return tx.err }

// Fail makes the commit fail with err: for a command that cannot finish what it started.
func (tx *Tx) Fail(err error) { tx.fail(err) }

func (tx *Tx) fail(err error) {
	if tx.err == nil {
		tx.err = err
	}
}

// part returns the index of the held shard that owns key, or -1.
func (tx *Tx) part(key []byte) int {
	if len(tx.shards) == 1 {
		return 0
	}
	return tx.partOf(tx.store.ShardOf(key))
}

func (tx *Tx) partOf(id int) int {
	for i, sh := range tx.shards {
		if sh.id == id {
			return i
		}
	}
	return -1
}

// pdb maps logical db to the physical db of held part p.
func (tx *Tx) pdb(p, db int) int {
	if tx.view {
		return tx.viewDBMap[db]
	}
	return tx.shards[p].dbmap[db]
}

func (tx *Tx) overlayKey(p int, raw []byte) []byte {
	tx.scratch = append(tx.scratch[:0], byte(p>>8), byte(p))
	tx.scratch = append(tx.scratch, raw...)
	return tx.scratch
}

// getRaw returns the current value of raw key in part p.
func (tx *Tx) getRaw(p int, raw []byte) ([]byte, bool) { return tx.read(p, raw, false) }

// getMetaHead is getRaw for a meta key whose caller needs, if it is a string, only the
// header (type and expire): the key cache may answer with the header of a value it no longer
// holds in full (keyCache.lookup).
func (tx *Tx) getMetaHead(p int, raw []byte) ([]byte, bool) { return tx.read(p, raw, true) }

func (tx *Tx) read(p int, raw []byte, headOK bool) ([]byte, bool) {
	ok := tx.overlayKey(p, raw)
	if e, found := tx.overlay[string(ok)]; found {
		if e.tail != 0 && !headOK {
			return tx.joinTail(string(ok), e), e.exists
		}
		return e.val, e.exists
	}
	if tx.inRangeDel(p, raw) || len(tx.fresh) > 0 && tx.inFreshVersion(p, raw) {
		return nil, false
	}
	sh := tx.shards[p]
	if v, exists, hit := sh.cache.lookup(raw, headOK); hit {
		return v, exists
	}
	v, err := tx.store.db.GetPinnedCF(tx.store.ro, sh.cf, raw)
	if err != nil {
		tx.fail(fmt.Errorf("read shard %d: %w", sh.id, err))
		return nil, false
	}
	defer v.Destroy()
	exists := v.Exists()
	if tx.view {
		sh.cache.putIfEpoch(raw, v.Data(), exists, tx.viewEpoch)
	} else if val, ok := sh.cache.put(raw, v.Data(), exists, true); ok {
		return val, exists
	}
	// Not cached (caches off, or a huge value): remember it for the rest of the group.
	if !exists {
		tx.overlay[string(tx.overlayKey(p, raw))] = entry{}
		return nil, false
	}
	start := len(tx.arena)
	tx.arena = append(tx.arena, v.Data()...)
	val := tx.arena[start:len(tx.arena):len(tx.arena)]
	tx.overlay[string(tx.overlayKey(p, raw))] = entry{val: val, exists: true}
	return val, true
}

// joinTail makes overlay entry e (under overlay key k) of a referenced big value one slice,
// for a read of the whole value within the transaction that wrote it: rare, and copied once.
func (tx *Tx) joinTail(k string, e entry) []byte {
	if e.tail == 0 {
		return e.val
	}
	tail := tx.tailOf(e)
	v := make([]byte, 0, len(e.val)+len(tail))
	v = append(append(v, e.val...), tail...)
	e.val, e.tail = v, 0
	tx.overlay[k] = e
	return v
}

// tailOf returns the referenced rest of e's value (nil for none).
func (tx *Tx) tailOf(e entry) []byte {
	if e.tail == 0 {
		return nil
	}
	return tx.tails[e.tail-1]
}

func (tx *Tx) inRangeDel(p int, raw []byte) bool {
	for _, r := range tx.ranges {
		if r.part == p && bytes.Compare(raw, r.lower) >= 0 && bytes.Compare(raw, r.upper) < 0 {
			return true
		}
	}
	return false
}

// putRaw writes raw key in part p. val is copied. Point writes wait in the overlay and go into
// the WriteBatch at commit, once per key, with the key's final state: a hot key written by many
// commands of a group costs one memtable insert, not one per command.
func (tx *Tx) putRaw(p int, raw, val []byte) {
	if tx.needsShard() {
		return
	}
	start := len(tx.arena)
	tx.arena = append(tx.arena, val...)
	tx.putArena(p, raw, start)
}

// putArena is putRaw of the value the caller appended to tx.arena from start on.
func (tx *Tx) putArena(p int, raw []byte, start int) { tx.putArenaTail(p, raw, start, nil) }

// putArenaTail is putArena of a value that goes on with tail, which is referenced: it must not
// change until the transaction commits.
func (tx *Tx) putArenaTail(p int, raw []byte, start int, tail []byte) {
	tx.putArenaEntry(p, raw, start, tail, false)
}

// putArenaEntry is putArenaTail; with cache, the commit adds the key to the key cache (see
// entry.cache).
func (tx *Tx) putArenaEntry(p int, raw []byte, start int, tail []byte, cache bool) {
	if tx.needsShard() {
		tx.arena = tx.arena[:start]
		return
	}
	k := string(tx.overlayKey(p, raw))
	if tx.saving {
		tx.noteUndo(k)
	}
	e := entry{val: tx.arena[start:len(tx.arena):len(tx.arena)], exists: true, dirty: true, noted: tx.saving}
	if cache {
		tx.cachedPuts = append(tx.cachedPuts, k)
	}
	if tail != nil {
		tx.tails = append(tx.tails, tail)
		e.tail = int32(len(tx.tails))
	}
	tx.overlay[k] = e
	tx.noteBig()
	tx.noteWrite(p, raw, false)
}

func (tx *Tx) deleteRaw(p int, raw []byte) {
	if tx.needsShard() {
		return
	}
	k := string(tx.overlayKey(p, raw))
	if tx.saving {
		tx.noteUndo(k)
	}
	tx.overlay[k] = entry{dirty: true, noted: tx.saving}
	tx.noteWrite(p, raw, true)
}

// deleteRange removes [lower, upper) of part p. It goes into the WriteBatch at once, so it
// precedes every point write, which commit adds with each key's final state (a key written
// after the range delete is put back; one written before is marked deleted here).
func (tx *Tx) deleteRange(p int, lower, upper []byte) {
	if tx.needsShard() {
		return
	}
	tx.wb.DeleteRangeCF(tx.shards[p].cf, lower, upper)
	for k, e := range tx.overlay {
		if int(k[0])<<8|int(k[1]) == p && k[2:] >= string(lower) && k[2:] < string(upper) {
			if tx.saving {
				tx.noteUndo(k)
			}
			e.val, e.exists, e.dirty, e.noted = nil, false, true, tx.saving
			tx.overlay[k] = e
		}
	}
	tx.ranges = append(tx.ranges, rangeDel{part: p, lower: bytes.Clone(lower), upper: bytes.Clone(upper)})
}

// ---- keys ----

// Meta returns the meta of key in logical db. A key whose expire time has passed is deleted
// here (lazy expiry) and reported absent. m.Value stays valid until the commit.
func (tx *Tx) Meta(db int, key []byte) (m codec.Meta, ok bool) {
	m, ok = tx.meta(db, key)
	if ok {
		tx.hits++
		if p := tx.part(key); p >= 0 {
			tx.touchKey(p, tx.pdb(p, db), key, false)
		}
	} else {
		tx.misses++
		if tx.readLookups {
			tx.Notify(EventKeyMiss, "keymiss", db, key)
		}
	}
	return m, ok
}

// MetaRead is Meta for a read lookup in a command that writes (GETSET's old value, the
// sources of SUNIONSTORE): a miss is a "keymiss" event, as in a read command.
func (tx *Tx) MetaRead(db int, key []byte) (m codec.Meta, ok bool) {
	m, ok = tx.Meta(db, key)
	if !ok && !tx.readLookups {
		tx.Notify(EventKeyMiss, "keymiss", db, key)
	}
	return m, ok
}

// SetReadLookups says whether the next command's lookups are reads (a read-only command's
// are: Redis reports their misses as "keymiss" events) and returns the previous setting.
func (tx *Tx) SetReadLookups(read bool) (prev bool) {
	prev, tx.readLookups = tx.readLookups, read
	return prev
}

// TakeLookups returns how many Meta lookups found their key and how many did not since the
// last call, and resets the counts (INFO keyspace_hits/misses of read commands).
func (tx *Tx) TakeLookups() (hits, misses int64) {
	hits, misses = tx.hits, tx.misses
	tx.hits, tx.misses = 0, 0
	return hits, misses
}

func (tx *Tx) meta(db int, key []byte) (m codec.Meta, ok bool) {
	p := tx.part(key)
	if p < 0 {
		tx.fail(ErrNotHeld)
		return m, false
	}
	pdb := tx.pdb(p, db)
	// Built in the transaction's buffer: nothing below keeps it (the key cache and the
	// overlay copy their keys), but the lazy expiry, which gets a copy.
	tx.metaKey = codec.AppendMetaKey(tx.metaKey[:0], pdb, key)
	mk := tx.metaKey
	v, ok := tx.getRaw(p, mk)
	if !ok {
		return m, false
	}
	if err := codec.DecodeMeta(v, &m); err != nil {
		tx.fail(fmt.Errorf("key %q: %w", key, err))
		return m, false
	}
	if tx.expiredAt(m.Expire) {
		if tx.store.replica.Load() {
			return codec.Meta{}, false // hidden: the master deletes it and logs the DEL
		}
		if tx.needsShard() { // lazy expiry deletes the key
			return codec.Meta{}, false
		}
		mk = bytes.Clone(mk)
		tx.removeKey(p, pdb, mk, key, v)
		tx.logPart(p, db, cmdDEL, key)
		tx.store.ExpiredKeys.Add(1)
		tx.Notify(EventExpired, "expired", db, key)
		return codec.Meta{}, false
	}
	return m, true
}

// Exists reports whether key is live in logical db.
func (tx *Tx) Exists(db int, key []byte) bool {
	_, ok := tx.Meta(db, key)
	return ok
}

// SetMeta creates or replaces key in logical db with m, keeping the key count and the TTL
// index in step. Replacing a collection with a new version makes its old data keys
// invisible; they are reclaimed in the background. A string value of at least refValueMin
// bytes is referenced, not copied: it must not change until the transaction commits.
func (tx *Tx) SetMeta(db int, key []byte, m *codec.Meta) {
	p := tx.part(key)
	if p < 0 {
		tx.fail(ErrNotHeld)
		return
	}
	pdb := tx.pdb(p, db)
	mk := codec.AppendMetaKey(nil, pdb, key)
	old, existed := tx.getMetaHead(p, mk)
	part := &tx.parts[p]
	oldExpire := int64(0)
	if existed {
		oldExpire = codec.MetaExpire(old)
		if tx.expiredAt(oldExpire) {
			// Overwriting a key whose time came without looking it up first: Redis's write
			// lookup expires it, then adds the key anew.
			tx.Notify(EventExpired, "expired", db, key)
			tx.Notify(EventNew, "new", db, key)
		}
	} else {
		part.keys[pdb]++
		part.countsDirty = true
		tx.Notify(EventNew, "new", db, key)
	}
	if !existed || tx.expiredAt(oldExpire) {
		tx.store.created(tx.shards[p], pdb, key, tx.nowMs)
	} else {
		tx.touchKey(p, pdb, key, true) // a write over a key it did not look up (SET) is an access too
	}
	if existed && codec.MetaHasData(old) {
		var om codec.Meta
		if codec.DecodeMeta(old, &om) == nil && (om.Type != m.Type || om.Frag != m.Frag || om.Version != m.Version) {
			tx.dropData(p, pdb, key, old) // overwritten by a new value: its elements go
		}
	}
	if oldExpire != m.Expire {
		if oldExpire != 0 {
			tx.deleteRaw(p, ttl.AppendKey(nil, oldExpire, pdb, key))
			part.expires[pdb]--
		}
		if m.Expire != 0 {
			tx.putRaw(p, ttl.AppendKey(nil, m.Expire, pdb, key), nil)
			part.expires[pdb]++
		}
		part.countsDirty = true
	}
	// Encoded straight into the arena the overlay points into. A big string's value is not
	// copied here: the overlay references it after the header, and RocksDB copies it into the
	// WriteBatch at commit.
	start := len(tx.arena)
	if m.Type == codec.TypeString && len(m.Value) >= refValueMin && !tx.view {
		head := *m
		head.Value = nil
		tx.arena = codec.AppendMeta(tx.arena, &head)
		tx.putArenaTail(p, mk, start, m.Value)
		return
	}
	tx.arena = codec.AppendMeta(tx.arena, m)
	if tx.rewriteMeta(p, mk, start) {
		return
	}
	tx.putArena(p, mk, start)
}

// rewriteMeta writes the collection meta encoded in tx.arena[start:] over the one this
// transaction wrote earlier for meta key mk, in place, when it has the same size, and reports
// whether it did. A command that adds one member to a big set per call (a script's million
// SADDs) so holds one meta, not one per call. Nothing else holds a collection meta's bytes
// (DecodeMeta aliases only a string's, a stream's and a packed hash's or set's, which have no
// data keys: all are left alone); a savepoint's
// undo holds the key's state before it, so a meta written before the savepoint is not
// rewritten.
// rewriteMetaMin is the overlay size from which SetMeta looks for a meta to rewrite in place:
// a small group's few metas cost less than the lookup would on every write.
const rewriteMetaMin = 64

func (tx *Tx) rewriteMeta(p int, mk []byte, start int) bool {
	enc := tx.arena[start:]
	if t := codec.MetaType(enc); len(tx.overlay) < rewriteMetaMin || t == codec.TypeString || t == codec.TypeStream ||
		!codec.MetaHasData(enc) || tx.needsShard() {
		return false
	}
	e, ok := tx.overlay[string(tx.overlayKey(p, mk))]
	if !ok || !e.dirty || !e.exists || e.tail != 0 || len(e.val) != len(enc) ||
		codec.MetaType(e.val) == codec.TypeString || tx.saving && !e.noted {
		return false
	}
	copy(e.val, enc)
	tx.arena = tx.arena[:start]
	tx.noteWrite(p, mk, false)
	return true
}

// Delete removes key from logical db and reports whether it was live.
func (tx *Tx) Delete(db int, key []byte) bool {
	if !tx.Exists(db, key) {
		return false
	}
	p := tx.part(key)
	pdb := tx.pdb(p, db)
	mk := codec.AppendMetaKey(nil, pdb, key)
	v, _ := tx.getRaw(p, mk)
	tx.removeKey(p, pdb, mk, key, v)
	return true
}

// removeKey deletes an existing key's meta and TTL entry and counts it gone.
func (tx *Tx) removeKey(p, pdb int, mk, key, val []byte) {
	part := &tx.parts[p]
	if exp := codec.MetaExpire(val); exp != 0 {
		tx.deleteRaw(p, ttl.AppendKey(nil, exp, pdb, key))
		part.expires[pdb]--
	}
	part.keys[pdb]--
	part.countsDirty = true
	tx.dropData(p, pdb, key, val)
	tx.deleteRaw(p, mk)
}

// NewVersion returns a version for a new collection stored under key.
func (tx *Tx) NewVersion(key []byte) uint64 {
	if tx.needsShard() {
		return 0
	}
	p := max(tx.part(key), 0)
	v := tx.shards[p].nextVersion(uint64(time.Now().UnixNano()))
	if len(tx.fresh) < maxFresh {
		tx.fresh = append(tx.fresh, freshVersion{p: p, version: v})
	}
	return v
}

// maxFresh bounds the versions a transaction remembers as fresh: a group that creates many
// collections looks the rest up as before.
const maxFresh = 8

// freshVersion is a collection version handed out by this transaction (NewVersion): no data
// key of it exists outside the overlay, since versions only move forward.
type freshVersion struct {
	p       int
	version uint64
}

// inFreshVersion reports whether raw is a data key of a version this transaction made: then it
// is absent unless the overlay has it, and neither the key cache nor RocksDB is asked (a
// script adding a million members to a new set would ask a million times).
func (tx *Tx) inFreshVersion(p int, raw []byte) bool {
	if len(raw) < 8 || raw[0] != codec.PrefixData {
		return false
	}
	kl := int(binary.BigEndian.Uint32(raw[4:8]))
	if len(raw) < 16+kl {
		return false
	}
	v := binary.BigEndian.Uint64(raw[8+kl : 16+kl])
	for _, f := range tx.fresh {
		if f.p == p && f.version == v {
			return true
		}
	}
	return false
}

// PendingKeys returns how many keys of logical db the transaction added (positive) or
// removed (negative) so far across its shards: DBSIZE inside EXEC counts them.
func (tx *Tx) PendingKeys(db int) int64 {
	var n int64
	for i := range tx.shards {
		n += tx.parts[i].keys[tx.pdb(i, db)]
	}
	return n
}

// ---- binlog ----

var cmdDEL = []byte("DEL")

// Log appends a binlog record for a write to key in logical db, in key's shard. args is the
// command in its deterministic form (absolute times, computed results).
func (tx *Tx) Log(db int, key []byte, args ...[]byte) {
	p := tx.part(key)
	if p < 0 {
		tx.fail(ErrNotHeld)
		return
	}
	tx.logArgs(p, db, args)
}

// LogShard appends a binlog record to held shard id, for writes that are not about one key
// (FLUSHDB, SWAPDB).
func (tx *Tx) LogShard(id, db int, args ...[]byte) {
	if p := tx.partOf(id); p >= 0 {
		tx.logArgs(p, db, args)
	}
}

// LogItems is Log for a record whose arguments after the key are items the command applies
// one after the other, each on its own (SADD's members, HSET's field-value pairs, RPUSH's
// elements), so that NAME key a followed by NAME key b does what NAME key a b does. Held for a
// unit (an EXEC, a script, several shards), it is joined to the record before it when that
// one was logged the same way with the same name, database and key: a script's million SADDs
// to one set hold and log a few hundred records, not a million.
func (tx *Tx) LogItems(db int, key []byte, args ...[]byte) {
	p := tx.part(key)
	if p < 0 {
		tx.fail(ErrNotHeld)
		return
	}
	if len(args) < 2 || tx.applying || tx.store.replica.Load() || tx.needsShard() ||
		len(tx.shards) == 1 && tx.unitDepth == 0 || hasBigArg(args) {
		tx.logArgs(p, db, args)
		return
	}
	tx.joinItems(p, db, args)
}

func (tx *Tx) logPart(p, db int, name, key []byte) { tx.logArgs(p, db, [][]byte{name, key}) }

func (tx *Tx) logArgs(p, db int, args [][]byte) {
	// Applying, Mirror stores the master's record; on a replica, the binlog is its master's,
	// and a write to a writable replica stays local, as in Redis.
	if tx.applying || tx.store.replica.Load() || tx.needsShard() {
		return
	}
	tx.closeJoined() // records are held in sequence order
	part := &tx.parts[p]
	tx.logKey = binlog.AppendKey(tx.logKey[:0], part.nextSeq)
	k := tx.logKey
	part.nextSeq++
	part.logMaxMs = max(part.logMaxMs, tx.nowMs)
	if len(tx.shards) == 1 && tx.unitDepth == 0 && hasBigArg(args) {
		// The big argument goes into the WriteBatch from the command's bytes, not through a
		// Go copy of the whole record.
		var parts [][]byte
		tx.scratch, parts = binlog.AppendRecordParts(tx.scratch[:0], tx.nowMs, db, args, refValueMin, nil)
		putV(tx.wb, tx.shards[p].logCF, k, parts...)
		for _, part := range parts {
			tx.wbBytes += int64(len(part))
		}
		tx.wbBytes += int64(len(k))
		tx.store.Dirty.Add(1)
		return
	}
	tx.scratch = binlog.AppendRecord(tx.scratch[:0], tx.nowMs, db, args)
	if len(tx.shards) > 1 || tx.unitDepth > 0 {
		tx.holdForUnit(p, k, tx.scratch)
	} else {
		tx.wb.PutCF(tx.shards[p].logCF, k, tx.scratch)
	}
	tx.wbBytes += int64(len(k) + len(tx.scratch))
	tx.store.Dirty.Add(1)
}

func hasBigArg(args [][]byte) bool {
	for _, a := range args {
		if len(a) >= refValueMin {
			return true
		}
	}
	return false
}

// ---- commit ----

// CommitSoFar commits what the transaction wrote so far and goes on with the same shards held,
// for a command that need not be atomic and writes without bound (DEBUG POPULATE, which Redis
// neither logs nor propagates), so that what it holds until the commit stays small. Inside a
// unit (EXEC, a script) or a savepoint it does nothing: those stay one commit.
func (tx *Tx) CommitSoFar() error {
	if tx.unitDepth > 0 || tx.saving || tx.view {
		return nil
	}
	writer, owner := tx.writer, tx.owner
	err := tx.commitAndGoOn()
	tx.writer, tx.owner = writer, owner
	return err
}

// commitAndGoOn commits and begins again over the same shards.
func (tx *Tx) commitAndGoOn() error {
	shards := slices.Clone(tx.shards)
	err := tx.commit()
	tx.begin(shards...)
	return err
}

// commit writes the batch and, if RocksDB accepted it, applies the bookkeeping, then tells
// the waiters it served how it went. The transaction is empty afterwards either way; the ready
// keys it deferred stay until the committer takes them (takeDeferred).
func (tx *Tx) commit() error {
	err := tx.commitWrites()
	if err == nil {
		tx.publishEvents()
	} else {
		tx.dropEvents()
	}
	tx.settleServed(err)
	return err
}

func (tx *Tx) commitWrites() error {
	defer tx.reset()
	if tx.err != nil {
		return tx.err
	}
	if len(tx.overlay) >= sortOverlayMin {
		tx.putOverlaySorted()
	} else {
		for k, e := range tx.overlay {
			if e.dirty {
				tx.putEntry(k, e)
			}
		}
	}
	for i, sh := range tx.shards {
		p := &tx.parts[i]
		if p.countsDirty {
			for pdb := range p.keys {
				if p.keys[pdb] == 0 && p.expires[pdb] == 0 {
					continue
				}
				var v [16]byte
				binary.BigEndian.PutUint64(v[:], uint64(sh.keys[pdb].Load()+p.keys[pdb]))
				binary.BigEndian.PutUint64(v[8:], uint64(sh.expires[pdb].Load()+p.expires[pdb]))
				tx.wb.PutCF(sh.cf, countsKey(pdb), v[:])
			}
		}
		if p.dbmapDirty {
			m := make([]byte, len(sh.dbmap))
			for l, pdb := range sh.dbmap {
				m[l] = byte(pdb)
			}
			tx.wb.PutCF(sh.cf, stateDBMap, m)
		}
	}
	if tx.hasUnitRecords() {
		if err := tx.writeUnit(); err != nil {
			return err
		}
	}
	if tx.wb.Count() == 0 {
		tx.reportTracked() // the reads of tracking clients
		return nil
	}
	if err := tx.store.admitWrite(tx.wbBytes); err != nil {
		return err
	}
	for _, sh := range tx.shards {
		sh.commits.Add(1) // odd: views of these shards started from here on fail
	}
	err := tx.store.db.Write(tx.store.writeOptions(tx.bulk), tx.wb)
	if err != nil {
		err = tx.store.writeFailed(err)
	}
	if err == nil {
		tx.store.wrote(tx)
		if tx.bulk {
			tx.forgetCached()
		} else {
			tx.writeThrough()
		}
		// Inside the commit window: a read answered in an event loop while the tracker runs
		// is retried in the shard, after it.
		tx.reportTracked()
	}
	for _, sh := range tx.shards {
		sh.commits.Add(1)
	}
	if err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	if tx.wbBytes >= flushAfterBytes {
		for _, sh := range tx.shards {
			tx.store.flushSoon(sh)
		}
	} else {
		tx.flushAfterDBFlush()
	}
	if tx.store.tailOn.Load() {
		tx.captureTail()
	}
	logged := false
	defer func() {
		if logged {
			tx.store.logAdvanced()
		}
	}()
	for i, sh := range tx.shards {
		p := &tx.parts[i]
		for pdb := range p.keys {
			sh.keys[pdb].Add(p.keys[pdb])
			sh.expires[pdb].Add(p.expires[pdb])
		}
		if last := p.nextSeq - 1; last > sh.lastSeq.Load() {
			if sh.firstSeq.Load() == 0 {
				sh.firstSeq.Store(sh.lastSeq.Load() + 1)
			}
			sh.lastSeq.Store(last)
			sh.ages.Note(p.nextSeq, p.logMaxMs)
			logged = true
		}
		if p.firstSeq != 0 {
			sh.firstSeq.Store(p.firstSeq)
			sh.tail.dropBelow(p.firstSeq)
		}
		if p.dbmapDirty {
			for l, pdb := range sh.dbmap {
				sh.dbmapPub[l].Store(int32(pdb))
			}
		}
	}
	return nil
}

// sortOverlayMin is the overlay size from which commit puts the keys in order: RocksDB's
// memtable (a skip list) inserts a batch's keys in ascending order for a fraction of the cost
// of the map's random order (a script's million SADDs: 0.6 s instead of 5 s), and sorting a
// few dozen keys costs less than it saves: a pipelined group of LPUSHes or RPOPs on one list
// (a hundred data keys next to each other) took a fifth less time in DB.Write sorted
// (BenchmarkList_PushGroups, BenchmarkList_PopGroups in datatype). Below 16 keys the
// memtable's splice hint gains little.
const sortOverlayMin = 16

// putOverlaySorted puts the overlay's written keys into the WriteBatch in ascending order.
func (tx *Tx) putOverlaySorted() {
	keys := tx.sortKeys[:0]
	if cap(keys) < len(tx.overlay) {
		keys = make([]string, 0, len(tx.overlay))
	}
	for k, e := range tx.overlay {
		if e.dirty {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	for _, k := range keys {
		tx.putEntry(k, tx.overlay[k])
	}
	clear(keys)
	if cap(keys) > maxKeptOverlay {
		keys = nil
	}
	tx.sortKeys = keys[:0]
}

// putEntry puts overlay entry e, under overlay key k, into the WriteBatch.
func (tx *Tx) putEntry(k string, e entry) {
	cf := tx.shards[int(k[0])<<8|int(k[1])].cf
	raw := unsafe.Slice(unsafe.StringData(k[2:]), len(k)-2) // read-only; RocksDB copies it
	tx.wbBytes += int64(len(raw) + len(e.val))
	switch {
	case e.exists && e.tail != 0:
		tail := tx.tailOf(e)
		tx.wbBytes += int64(len(tail))
		putV(tx.wb, cf, raw, e.val, tail)
	case e.exists:
		tx.wb.PutCF(cf, raw, e.val)
	default:
		tx.wb.DeleteCF(cf, raw)
	}
}

// flushedMemtableMin is the memtable size from which a FLUSHDB or FLUSHALL flushes it.
const flushedMemtableMin = 8 << 20

// flushAfterDBFlush flushes the memtables of the shards where the transaction emptied a whole
// database (FLUSHDB, FLUSHALL: a range delete of meta keys) when they hold at least
// flushedMemtableMin: what they held is deleted, and a flush drops it, so that the memory
// goes back as in Redis after a FLUSHALL (INFO used_memory counts the memtables). A small
// memtable is left, so that a test suite's FLUSHALL between tests makes no tiny table files.
func (tx *Tx) flushAfterDBFlush() {
	for i, r := range tx.ranges {
		if len(r.lower) == 0 || r.lower[0] != codec.PrefixMeta || slices.ContainsFunc(tx.ranges[:i], func(o rangeDel) bool {
			return o.part == r.part && len(o.lower) > 0 && o.lower[0] == codec.PrefixMeta
		}) {
			continue
		}
		sh := tx.shards[r.part]
		size, _ := strconv.ParseInt(tx.store.db.GetPropertyCF("rocksdb.cur-size-all-mem-tables", sh.cf), 10, 64)
		if size >= flushedMemtableMin {
			tx.store.flushSoon(sh)
		}
	}
}

// writeThrough brings the shards' key caches up to date with what was just committed: a range
// delete of meta keys (FLUSHDB) empties the cache; every written key is updated, and meta keys
// are added (a key just written is likely to be read). Data keys of dropped collection versions
// may stay cached: reads build keys from the current version, so they are never asked for again.
// forgetCached is writeThrough for a load: the caches stay empty, and a loop's read begun
// before the commit must not insert what it read.
func (tx *Tx) forgetCached() {
	for _, sh := range tx.shards {
		sh.cache.mu.Lock()
		sh.cache.epoch++
		sh.cache.clear()
		sh.cache.mu.Unlock()
	}
}

func (tx *Tx) writeThrough() {
	for _, sh := range tx.shards {
		sh.cache.mu.Lock()
		sh.cache.epoch++
	}
	var emptied int64
	for _, r := range tx.ranges {
		if len(r.lower) > 0 && r.lower[0] == codec.PrefixMeta || r.live {
			c := tx.shards[r.part].cache
			emptied += c.used
			c.clear()
		}
	}
	memfree.Released(int(emptied)) // what the emptied caches held, given back soon
	for k, e := range tx.overlay {
		if !e.dirty {
			continue
		}
		p := int(k[0])<<8 | int(k[1])
		raw := unsafe.Slice(unsafe.StringData(k[2:]), len(k)-2) // read-only; the cache copies it
		if e.tail != 0 {
			tx.shards[p].cache.putBigLocked(raw, e.val, tx.tailOf(e))
			continue
		}
		tx.shards[p].cache.putLocked(raw, e.val, e.exists, raw[0] == codec.PrefixMeta)
	}
	// The last maxCachedPuts data keys written with PutDataCached, with their final state.
	for _, k := range tx.cachedPuts[max(0, len(tx.cachedPuts)-maxCachedPuts):] {
		if e := tx.overlay[k]; e.dirty && e.exists && e.tail == 0 {
			raw := unsafe.Slice(unsafe.StringData(k[2:]), len(k)-2)
			tx.shards[int(k[0])<<8|int(k[1])].cache.putLocked(raw, e.val, true, true)
		}
	}
	for _, sh := range tx.shards {
		sh.cache.mu.Unlock()
	}
}

// maxCachedPuts is how many of the data keys a transaction wrote with PutDataCached the
// commit adds to the key cache: the last ones, the ends of the lists pushed to, which LRANGE
// 0 99 reads. Adding every element of a group of a thousand pushes cost each push about a
// microsecond of map inserts and evictions.
const maxCachedPuts = 256

// maxKeptOverlay is the most overlay entries a transaction keeps the map's room for.
const maxKeptOverlay = 512

func (tx *Tx) reset() {
	switch {
	case tx.wb == nil: // views have none
	case tx.wbBytes > 1<<20:
		// Clear keeps the batch's buffer (a std::string's capacity): one big value would stay
		// pinned in C memory for the shard's life.
		tx.wb.Destroy()
		tx.wb = grocksdb.NewWriteBatch()
		// The Go memory of a big value (the command's input) is let go once its reply is
		// written: have it given back to the system soon after.
		memfree.Released(int(tx.wbBytes))
	default:
		tx.wb.Clear()
	}
	tx.wbBytes = 0
	tx.endBig()
	// Iterating a map costs its capacity, not its length, and commit iterates the overlay: a
	// group that once held thousands of keys would tax every later one.
	if len(tx.overlay) > maxKeptOverlay {
		tx.overlay = make(map[string]entry)
	} else {
		clear(tx.overlay)
	}
	tx.ranges = tx.ranges[:0]
	clear(tx.cachedPuts)
	tx.cachedPuts = tx.cachedPuts[:0]
	tx.fresh = tx.fresh[:0]
	clear(tx.tails) // the callers' values
	tx.tails = tx.tails[:0]
	tx.resetUnit()
	clear(tx.touched)
	tx.touched = tx.touched[:0]
	tx.saving = false
	clear(tx.undo)
	tx.undo = tx.undo[:0]
	tx.resetTracked()
	tx.readyNext = 0
	if n := cap(tx.arena); n > 1<<20 {
		tx.arena = nil      // do not pin one huge value's memory forever
		memfree.Released(n) // a big value read: its reply is written soon
	}
	if cap(tx.scratch) > 1<<20 {
		tx.scratch = nil // nor the binlog record of one
	}
	tx.arena = tx.arena[:0]
}
