package shard

import (
	"sync"
	"sync/atomic"

	"github.com/linxGnu/grocksdb"

	"shardis/binlog"
)

// A shard's binlog tail: copies of its last committed records, so a caught-up replication
// feed reads them from memory. Read through RocksDB, every feed step opened an iterator on the
// binlog family, whose vector memtable sorts a copy of itself for each iterator: 18% of a
// master's CPU under 1 KiB SETs with one replica (docs/PERFORMANCE.md).
//
// The tail is filled only once something read the binlog (a feed), from the WriteBatch a
// commit wrote, inside the commit: while the transaction still holds its shards, so a reader
// (ReadBinlog runs in the shard's goroutine) sees a unit's records in all its shards at once,
// as it does through RocksDB. It always ends at the shard's last sequence and is contiguous;
// anything it cannot vouch for empties it, and reads fall back to RocksDB.
type binlogTail struct {
	mu    sync.Mutex
	ents  []tailEntry // ascending, contiguous sequences
	head  int         // ents[head:] are live
	bytes int
}

type tailEntry struct {
	seq uint64
	rec []byte
}

// binlogIterators counts the iterators opened on binlog families (tests: a caught-up feed
// opens none).
var binlogIterators atomic.Int64

// Bounds of a shard's tail: a replica a few thousand records behind still reads from memory.
const (
	tailMaxBytes   = 4 << 20
	tailMaxEntries = 16384
	// tailMaxBatch: a bigger commit is not parsed; it empties the tails it logged in.
	tailMaxBatch = 1 << 20
)

func (t *binlogTail) reset() {
	t.mu.Lock()
	clear(t.ents)
	t.ents, t.head, t.bytes = t.ents[:0], 0, 0
	t.mu.Unlock()
}

// append adds records that follow last (the shard's last sequence before them); a gap
// empties the tail first.
func (t *binlogTail) append(last uint64, recs []tailEntry) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if n := len(t.ents); n > t.head && t.ents[n-1].seq != last {
		clear(t.ents)
		t.ents, t.head, t.bytes = t.ents[:0], 0, 0
	}
	for _, e := range recs {
		t.ents = append(t.ents, e)
		t.bytes += len(e.rec)
	}
	for t.head < len(t.ents) && (t.bytes > tailMaxBytes || len(t.ents)-t.head > tailMaxEntries) {
		t.bytes -= len(t.ents[t.head].rec)
		t.ents[t.head] = tailEntry{}
		t.head++
	}
	if t.head > len(t.ents)/2 { // compact the slice
		n := copy(t.ents, t.ents[t.head:])
		clear(t.ents[n:])
		t.ents, t.head = t.ents[:n], 0
	}
}

// dropBelow forgets the records before first (retention trimmed them).
func (t *binlogTail) dropBelow(first uint64) {
	t.mu.Lock()
	for t.head < len(t.ents) && t.ents[t.head].seq < first {
		t.bytes -= len(t.ents[t.head].rec)
		t.ents[t.head] = tailEntry{}
		t.head++
	}
	t.mu.Unlock()
}

// read decodes up to limit records from sequence from on, if the tail holds from (or from is
// just past its end) and ends at last, the shard's last sequence; ok false: read RocksDB.
func (t *binlogTail) read(from, last uint64, limit int) (out []binlog.Entry, ok bool, err error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	live := t.ents[t.head:]
	if len(live) == 0 || live[len(live)-1].seq != last || from < live[0].seq || from > last+1 {
		return nil, false, nil
	}
	c := &tailCursor{ents: live[from-live[0].seq:]}
	out, err = binlog.Read(c, limit, nil)
	return out, true, err
}

// tailCursor is a binlog.Cursor over tail entries.
type tailCursor struct {
	ents []tailEntry
	key  []byte
}

func (c *tailCursor) Valid() bool { return len(c.ents) > 0 }
func (c *tailCursor) Key() []byte {
	c.key = binlog.AppendKey(c.key[:0], c.ents[0].seq)
	return c.key
}
func (c *tailCursor) Value() []byte { return c.ents[0].rec }
func (c *tailCursor) Next()         { c.ents = c.ents[1:] }
func (c *tailCursor) Err() error    { return nil }

// captureTail copies the binlog records tx's WriteBatch holds into its shards' tails, after
// the batch was written. Called in commit before the shards' last sequences move.
func (tx *Tx) captureTail() {
	logged := false
	for i, sh := range tx.shards {
		if tx.parts[i].nextSeq-1 > sh.lastSeq.Load() {
			logged = true
		}
	}
	if !logged {
		return
	}
	if tx.wbBytes > tailMaxBatch {
		for i, sh := range tx.shards {
			if tx.parts[i].nextSeq-1 > sh.lastSeq.Load() {
				sh.tail.reset()
			}
		}
		return
	}
	recs := tx.tailScratch[:0]
	if cap(recs) < len(tx.shards) {
		recs = make([][]tailEntry, len(tx.shards))
	}
	recs = recs[:len(tx.shards)]
	for i := range recs {
		recs[i] = recs[i][:0]
	}
	it := tx.wb.NewIterator()
	for it.Next() {
		r := it.Record()
		if r.Type != grocksdb.WriteBatchCFValueRecord {
			continue
		}
		for i, sh := range tx.shards {
			if uint32(r.CF) != sh.logID {
				continue
			}
			seq, ok := binlog.KeySeq(r.Key)
			if !ok {
				sh.tail.reset()
				continue
			}
			recs[i] = append(recs[i], tailEntry{seq: seq, rec: append([]byte(nil), r.Value...)})
		}
	}
	for i, sh := range tx.shards {
		if len(recs[i]) == 0 {
			continue
		}
		last := sh.lastSeq.Load()
		good := it.Error() == nil && recs[i][0].seq == last+1 && recs[i][len(recs[i])-1].seq == tx.parts[i].nextSeq-1
		for j := 1; good && j < len(recs[i]); j++ {
			good = recs[i][j].seq == recs[i][j-1].seq+1
		}
		if !good {
			sh.tail.reset()
			continue
		}
		sh.tail.append(last, recs[i])
		clear(recs[i])
	}
	tx.tailScratch = recs
}
