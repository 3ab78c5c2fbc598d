package replication

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"shardis/binlog"
)

// The stream a master sends a shardis replica after its +FULLRESYNC or +CONTINUE line is a
// sequence of frames: kind (1) · payload length (uvarint) · payload. docs/REPLICATION.md
// describes each.
const (
	// frameKeys: part of a shard's snapshot: shard (uvarint), then pairs of key and value,
	// each as length (uvarint) · bytes, as the shard's key family holds them.
	frameKeys byte = 'K'
	// frameShardDone: a shard's snapshot is whole: shard (uvarint) · its binlog sequence at
	// the snapshot (uvarint).
	frameShardDone byte = 'E'
	// frameSyncDone: every shard's snapshot was sent; binlog steps follow.
	frameSyncDone byte = 'F'
	// frameStep: one step of the binlog (binlog.Step): parts (uvarint), then for each part
	// shard (uvarint) · records (uvarint) · for each record sequence (uvarint) · length
	// (uvarint) · the record as the binlog stores it.
	frameStep byte = 'T'
	// frameRDB: a full sync of a replica with another shard count (reshard.go): a piece of
	// the snapshot as an RDB file; the frameSyncDone after the last one carries the
	// snapshot's positions: count (uvarint) · one sequence per shard (uvarint).
	frameRDB byte = 'R'
	// framePing: the master is there: its offset (uvarint) · whether it asks for an ACK now
	// (1 byte, 1: yes).
	framePing byte = 'P'
)

// maxFrame bounds a frame a replica accepts: a step holds at most a chunk of records, and a
// record at most a few big arguments (proto-max-bulk-len is 512 MB).
const maxFrame = 2 << 30

// appendFrameHead appends a frame's kind and length.
func appendFrameHead(b []byte, kind byte, n int) []byte {
	return binary.AppendUvarint(append(b, kind), uint64(n))
}

// errBadFrame is a frame that cannot be decoded: the link is dropped and made again.
var errBadFrame = errors.New("replication: malformed frame from the master")

// frameReader reads frames. The payload returned is valid until the next call.
type frameReader struct {
	r   *bufio.Reader
	buf []byte
}

func (fr *frameReader) next() (kind byte, payload []byte, err error) {
	kind, err = fr.r.ReadByte()
	if err != nil {
		return 0, nil, err
	}
	n, err := binary.ReadUvarint(fr.r)
	if err != nil {
		return 0, nil, err
	}
	if n > maxFrame {
		return 0, nil, fmt.Errorf("%w: %d bytes", errBadFrame, n)
	}
	if uint64(cap(fr.buf)) < n {
		fr.buf = make([]byte, n)
	}
	fr.buf = fr.buf[:n]
	if _, err := io.ReadFull(fr.r, fr.buf); err != nil {
		return 0, nil, err
	}
	// A big frame's buffer is not kept for the small ones after it.
	payload = fr.buf
	if n > 64<<20 {
		fr.buf = nil
	}
	return kind, payload, nil
}

// decoder reads a payload's fields.
type decoder struct {
	b   []byte
	err error
}

func (d *decoder) uvarint() uint64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.err = errBadFrame
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) bytes() []byte {
	n := d.uvarint()
	if d.err != nil {
		return nil
	}
	if n > uint64(len(d.b)) {
		d.err = errBadFrame
		return nil
	}
	v := d.b[:n:n]
	d.b = d.b[n:]
	return v
}

func (d *decoder) done() bool { return d.err == nil && len(d.b) == 0 }

// stepEncoder encodes frameStep frames, reusing its buffers between steps: a feed encodes one
// per step the master commits.
type stepEncoder struct {
	body, rec []byte
}

// appendStep appends a frameStep frame of step, whose records it encodes again as the binlog
// stores them.
func (e *stepEncoder) appendStep(b []byte, step binlog.Step) ([]byte, error) {
	body := binary.AppendUvarint(e.body[:0], uint64(len(step.Parts)))
	for _, p := range step.Parts {
		body = binary.AppendUvarint(body, uint64(p.Shard))
		body = binary.AppendUvarint(body, uint64(len(p.Entries)))
		for i := range p.Entries {
			ent := &p.Entries[i]
			rec, err := binlog.AppendEntry(e.rec[:0], &ent.Record)
			if err != nil {
				return b, err
			}
			e.rec = rec
			body = binary.AppendUvarint(body, ent.Seq)
			body = binary.AppendUvarint(body, uint64(len(rec)))
			body = append(body, rec...)
		}
	}
	e.body = body
	if cap(e.body) > 4<<20 { // a huge record's: not kept for the feed's life
		e.body, e.rec = nil, nil
	}
	if b == nil {
		b = make([]byte, 0, binary.MaxVarintLen64+1+len(body))
	}
	b = appendFrameHead(b, frameStep, len(body))
	return append(b, body...), nil
}

// decodeStep decodes a frameStep payload. The step's arguments and raw records alias payload.
func decodeStep(payload []byte, shards int) (binlog.Step, [][][]byte, error) {
	d := decoder{b: payload}
	nparts := d.uvarint()
	if d.err != nil || nparts == 0 || nparts > uint64(shards) {
		return binlog.Step{}, nil, errBadFrame
	}
	step := binlog.Step{Parts: make([]binlog.Part, nparts)}
	raw := make([][][]byte, nparts)
	for i := range step.Parts {
		shard := d.uvarint()
		n := d.uvarint()
		if d.err != nil || shard >= uint64(shards) || n > uint64(len(d.b)) {
			return binlog.Step{}, nil, errBadFrame
		}
		p := &step.Parts[i]
		p.Shard = int(shard)
		p.Entries = make([]binlog.Entry, n)
		raw[i] = make([][]byte, n)
		for j := range p.Entries {
			p.Entries[j].Seq = d.uvarint()
			rec := d.bytes()
			if d.err != nil {
				return binlog.Step{}, nil, d.err
			}
			if err := binlog.DecodeRecord(rec, &p.Entries[j].Record); err != nil {
				return binlog.Step{}, nil, fmt.Errorf("%w: shard %d record %d: %v", errBadFrame, shard, p.Entries[j].Seq, err)
			}
			raw[i][j] = rec
		}
		if len(step.Parts) > 1 {
			step.Unit = p.Entries[0].Unit.ID
		}
	}
	if !d.done() {
		return binlog.Step{}, nil, errBadFrame
	}
	return step, raw, nil
}
