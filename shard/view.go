package shard

import (
	"errors"
	"time"
)

// ErrNeedsShard is the error of a view (see Store.View) that met something only the shard's
// holder may do: a write, a lazy expiry, a reply stream. The command must run in its shard.
var ErrNeedsShard = errors.New("shard: the command needs its shard")

// View returns a read-only transaction over the committed state of shard id, for an event
// loop to answer a read command without a trip to the shard. It reads what the shard would
// read (its key cache, then RocksDB) but holds nothing: any write, lazy expiry or stream
// fails it with ErrNeedsShard, and a SWAPDB during its life fails it at EndView. Release it
// with EndView, which reports whether its answer stands.
func (s *Store) View(id int) *Tx { return s.ViewAt(id, time.Now()) }

// ViewAt is View for a command whose clock the caller read: now (an event loop reads it once
// per command; a clock read costs 100-200 ns on this machine's virtual clock).
func (s *Store) ViewAt(id int, now time.Time) *Tx {
	tx := s.views.Get().(*Tx)
	sh := s.shards[id]
	tx.beginAt(now.UnixMilli(), sh)
	tx.view = true
	tx.viewEpoch = sh.cache.snapshotEpoch()
	tx.viewCommits = sh.commits.Load()
	tx.viewDBMap = tx.viewDBMap[:0]
	for i := range sh.dbmapPub {
		tx.viewDBMap = append(tx.viewDBMap, int(sh.dbmapPub[i].Load()))
	}
	return tx
}

// EndView releases a view and reports whether what the command read stands: no storage
// error, nothing that needed the shard, no SWAPDB while it read, and no commit under way or
// done while it read: a command reading two keys could otherwise see one before a commit (a
// transaction, a group) and the other after it.
func (s *Store) EndView(tx *Tx) bool {
	ok := tx.err == nil
	sh := tx.shards[0]
	if c := sh.commits.Load(); c != tx.viewCommits || c%2 == 1 {
		ok = false
	}
	for i := range tx.viewDBMap {
		if int(sh.dbmapPub[i].Load()) != tx.viewDBMap[i] {
			ok = false
		}
	}
	if ok {
		tx.publishEvents()
	} else {
		tx.dropEvents()
	}
	tx.reset()
	tx.view = false
	s.views.Put(tx)
	return ok
}

// needsShard fails a view that is about to do what only the shard may; it reports whether
// tx is a view.
func (tx *Tx) needsShard() bool {
	if tx.view {
		tx.fail(ErrNeedsShard)
	}
	return tx.view
}

// newViewTx makes a transaction for the view pool. It has no WriteBatch: a view never writes,
// and a pooled C object would leak when the pool drops it.
func newViewTx(s *Store) *Tx { return &Tx{store: s, overlay: make(map[string]entry)} }

// NeedShard fails a view, whose command must then run in its shard (a read that may block,
// XREAD BLOCK, blocks only there), and reports whether tx is a view.
func (tx *Tx) NeedShard() bool { return tx.needsShard() }
