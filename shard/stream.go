package shard

import (
	"encoding/binary"
	"errors"
	"fmt"
	"sync"

	"shardis/codec"
)

// ErrStreamClosed is returned by Stream.Fill after the stream was closed, which Store.Close
// does to every stream still open.
var ErrStreamClosed = errors.New("shard: reply stream closed")

// EmitFunc appends one element of a streamed reply to w: elem is the element part of the data
// key, val its value. Both are valid only during the call.
type EmitFunc func(w *codec.Writer, elem, val []byte)

// Stream reads the data keys of one collection for a reply too large to build at once
// (HGETALL of a million fields). It is made in the shard goroutine by Tx.StreamData and sees
// the collection as it was at that moment: a RocksDB iterator is a consistent view, so later
// writes, even to the same key, do not show. The reply is then produced piece by piece with
// Fill, long after the group committed, as fast as the client reads it; the server never holds
// more of it than a few pieces.
//
// Fill and Close may be called from any goroutine, one at a time or concurrently (a mutex
// orders them). Close must be called; it is idempotent.
type Stream struct {
	store     *Store
	mu        sync.Mutex
	r         batchReader // the collection's entries, read in batches
	prefixLen int
	left      int // elements still to emit; < 0: until the end of the range
	emit      EmitFunc
	closed    bool
	// A string's bytes (StreamString) instead of elements: its length, the fragment size,
	// the next offset to write, and whether the final CRLF is out.
	str              bool
	strLen, fragSize int64
	pos              int64
	crlf             bool
	// Elements the stream was given (StreamElems) instead of a reader: element, value, ….
	held     bool
	heldElem [][]byte
}

// StreamElems opens a Stream over elements the caller holds and hands over: elems alternates
// element and value, in reply order (a packed collection's elements, which live in its meta).
func (tx *Tx) StreamElems(elems [][]byte, emit EmitFunc) *Stream {
	s := &Stream{store: tx.store, left: -1, emit: emit, held: true, heldElem: elems}
	tx.store.trackStream(s)
	return s
}

// StreamData opens a Stream over the data keys of collection key (logical db, version) whose
// element part lies in [lowerElem, upperElem) (nil: unbounded), in order or reversed, emitting
// at most limit elements (limit < 0: all).
//
// A stream reads committed data only, so the writes this transaction made so far are
// committed first: the group's earlier commands become durable a little earlier than the
// group, and each command stays atomic. A failed early commit fails the transaction.
func (tx *Tx) StreamData(db int, key []byte, version uint64, lowerElem, upperElem []byte, reverse bool, limit int, emit EmitFunc) (*Stream, error) {
	return tx.openStream(db, key, version, lowerElem, upperElem, reverse, &Stream{left: limit, emit: emit})
}

// StreamString opens a Stream over the bytes of the fragmented string key (logical db,
// version) of length bytes in fragments of fragSize: Fill writes them in order, zeros for
// missing fragments and past short ones, then CRLF. The bulk header is the caller's. As with
// StreamData, the transaction's writes so far are committed first.
func (tx *Tx) StreamString(db int, key []byte, version uint64, length int64, fragSize int) (*Stream, error) {
	return tx.openStream(db, key, version, nil, nil, false,
		&Stream{left: -1, str: true, strLen: length, fragSize: int64(fragSize)})
}

func (tx *Tx) openStream(db int, key []byte, version uint64, lowerElem, upperElem []byte, reverse bool, s *Stream) (*Stream, error) {
	if tx.needsShard() {
		return nil, ErrNeedsShard
	}
	p := tx.part(key)
	if p < 0 {
		tx.fail(ErrNotHeld)
		return nil, ErrNotHeld
	}
	if tx.hasWrites() {
		shards := append([]*Shard(nil), tx.shards...)
		err := tx.commit()
		tx.begin(shards...)
		if err != nil {
			tx.fail(err)
			return nil, err
		}
	}
	prefix := tx.DataPrefix(db, key, version)
	lower := append(append([]byte(nil), prefix...), lowerElem...)
	upper := PrefixEnd(prefix)
	if upperElem != nil {
		upper = append(append([]byte(nil), prefix...), upperElem...)
	}
	s.store, s.prefixLen = tx.store, len(prefix)
	s.r = openBatchReader(tx.store.db, tx.shards[p].cf, lower, upper, reverse)
	tx.store.trackStream(s)
	return s, nil
}

// hasWrites reports whether the transaction wrote anything not yet committed.
func (tx *Tx) hasWrites() bool {
	if len(tx.ranges) > 0 || tx.wb.Count() > 0 {
		return true
	}
	for _, e := range tx.overlay {
		if e.dirty {
			return true
		}
	}
	return false
}

// Fill appends elements to w until w holds at least maxBytes or the stream ends, and reports
// whether elements remain. After an error the stream is unusable (the reply is cut short).
func (s *Stream) Fill(w *codec.Writer, maxBytes int) (more bool, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false, ErrStreamClosed
	}
	if s.str {
		return s.fillString(w, maxBytes)
	}
	if s.held {
		for len(s.heldElem) >= 2 && len(w.Buf) < maxBytes {
			s.emit(w, s.heldElem[0], s.heldElem[1])
			s.heldElem = s.heldElem[2:]
		}
		return len(s.heldElem) >= 2, nil
	}
	for s.left != 0 && s.r.valid() && len(w.Buf) < maxBytes {
		s.emit(w, s.r.key()[s.prefixLen:], s.r.val())
		s.r.next()
		if s.left > 0 {
			s.left--
		}
	}
	if err := s.r.err(); err != nil {
		return false, fmt.Errorf("reply stream: %w", err)
	}
	return s.left != 0 && s.r.valid(), nil
}

// fillString is Fill of a string's bytes (StreamString).
func (s *Stream) fillString(w *codec.Writer, maxBytes int) (more bool, err error) {
	for len(w.Buf) < maxBytes && s.pos < s.strLen {
		next := s.strLen // where the next stored fragment starts
		var val []byte
		if s.r.valid() {
			elem := s.r.key()[s.prefixLen:]
			if len(elem) != codec.FragIndexLen {
				s.r.next()
				continue
			}
			next = min(int64(binary.BigEndian.Uint32(elem))*s.fragSize, s.strLen)
			val = s.r.val()
		}
		if s.pos < next { // zeros up to it, in pieces
			n := min(next-s.pos, int64(max(maxBytes-len(w.Buf), 1)))
			w.Buf = append(w.Buf, make([]byte, n)...)
			s.pos += n
			continue
		}
		if end := min(next+int64(len(val)), s.strLen); end > s.pos {
			w.Buf = append(w.Buf, val[s.pos-next:end-next]...)
			s.pos = end
		}
		s.r.next()
	}
	if err := s.r.err(); err != nil {
		return false, fmt.Errorf("reply stream: %w", err)
	}
	if s.pos == s.strLen && !s.crlf && len(w.Buf) < maxBytes {
		w.Buf = append(w.Buf, '\r', '\n')
		s.crlf = true
	}
	return !s.crlf, nil
}

// Close releases the stream's iterator (and the data version it pins).
func (s *Stream) Close() {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	s.closed = true
	if !s.held {
		s.r.close()
	}
	s.mu.Unlock()
	s.store.untrackStream(s)
}

func (s *Store) trackStream(st *Stream) {
	s.streamsMu.Lock()
	s.streams[st] = struct{}{}
	s.streamsMu.Unlock()
	s.StreamsOpened.Add(1)
}

func (s *Store) untrackStream(st *Stream) {
	s.streamsMu.Lock()
	delete(s.streams, st)
	s.streamsMu.Unlock()
}

// OpenStreams returns how many streams are open (tests, INFO).
func (s *Store) OpenStreams() int {
	s.streamsMu.Lock()
	defer s.streamsMu.Unlock()
	return len(s.streams)
}

// closeStreams closes every stream still open: their iterators must go before the DB does.
func (s *Store) closeStreams() {
	s.streamsMu.Lock()
	open := make([]*Stream, 0, len(s.streams))
	for st := range s.streams {
		open = append(open, st)
	}
	s.streamsMu.Unlock()
	for _, st := range open {
		st.Close()
	}
}
