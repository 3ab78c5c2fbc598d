package rdb

// Lists as Redis 7.0 holds them (quicklist.c) and writes them (RDB_TYPE_LIST_QUICKLIST_2):
// the number of nodes, then per node its container (plain: one element as is; packed: a
// listpack) and its bytes: LZF-compressed as the quicklist compresses a node more than
// list-compress-depth nodes from either end, else as any string.

// quicklistSizeLevels are the node sizes list-max-listpack-size -1 … -5 allow.
var quicklistSizeLevels = [...]int{4096, 8192, 16384, 32768, 65536}

const (
	quicklistSafetyLimit     = 8192 // a node past this size takes no element by count
	quicklistInsertOverhead  = 8    // Redis's estimate of an entry's bytes beside its data
	quicklistMinCompress     = 48   // smaller nodes are not compressed
	quicklistMinCompressGain = 8    // a compressed node saves more than this or stays raw
)

// quicklistSplitter decides, element by element, where Redis's RPUSH starts a new node.
type quicklistSplitter struct {
	fill      int
	threshold int64
	open      bool // a packed node takes elements
	size      int  // its listpack's bytes
	count     int  // its elements
}

// add takes the next element and says whether it starts a new node, and whether that node is
// plain (the element alone, as is).
func (q *quicklistSplitter) add(elem []byte) (newNode, plain bool) {
	if int64(len(elem)) >= q.threshold {
		q.open = false
		return true, true
	}
	entry := ListpackEntryBytes(elem)
	if q.open && q.allowInsert(len(elem)) {
		q.size += entry
		q.count++
		return false, false
	}
	q.open, q.size, q.count = true, listpackEmptyBytes+entry, 1
	return true, false
}

// allowInsert is _quicklistNodeAllowInsert of an element of n bytes into the open node.
func (q *quicklistSplitter) allowInsert(n int) bool {
	newSize := q.size + n + quicklistInsertOverhead
	if q.fill < 0 {
		if level := -q.fill - 1; level < len(quicklistSizeLevels) && newSize <= quicklistSizeLevels[level] {
			return true
		}
	}
	if newSize > quicklistSafetyLimit {
		return false
	}
	return q.count < q.fill
}

const (
	quicklistFillMin = -5        // list-max-listpack-size below this acts as this
	quicklistFillMax = 1<<15 - 1 // and above this as this (quicklistSetFill)
)

func (e *encoder) newSplitter() quicklistSplitter {
	fill := min(max(e.opts.ListMaxListpackSize, quicklistFillMin), quicklistFillMax)
	return quicklistSplitter{fill: fill, threshold: e.opts.ListPackedThreshold}
}

func (e *encoder) writeList(src ElementSource) error {
	split := e.newSplitter()
	var nodes, elems int64
	err := src.Each(func(el []byte) error {
		elems++
		if n, _ := split.add(el); n {
			nodes++
		}
		return nil
	})
	if err != nil {
		return err
	}
	e.writeType(TypeListQuicklist2)
	e.writeLen(uint64(nodes))

	split = e.newSplitter()
	var node, seen int64 = -1, 0
	e.lp.Reset()
	packed := false
	flush := func() {
		if packed {
			e.writeListNode(quicklistNodePacked, e.lp.Bytes(), node, nodes)
			e.lp.Reset()
			packed = false
		}
	}
	err = src.Each(func(el []byte) error {
		seen++
		if seen > elems {
			return errSourceChanged
		}
		newNode, plain := split.add(el)
		if newNode {
			flush()
			node++
			if node >= nodes {
				return errSourceChanged
			}
			if plain {
				e.writeListNode(quicklistNodePlain, el, node, nodes)
				return e.s.err
			}
			packed = true
		}
		e.lp.AppendString(el)
		return e.s.err
	})
	if err != nil {
		return err
	}
	flush()
	if seen != elems || node != nodes-1 {
		return errSourceChanged
	}
	return e.s.err
}

// writeListNode writes node i of n: its container and its bytes, compressed as the quicklist
// keeps it when it lies deeper than list-compress-depth from both ends.
func (e *encoder) writeListNode(container uint64, data []byte, i, n int64) {
	e.writeLen(container)
	depth := int64(e.opts.ListCompressDepth)
	if depth > 0 && n > 2*depth && i >= depth && i < n-depth && len(data) >= quicklistMinCompress {
		if out := e.compress(data, len(data)); out != nil && len(out)+quicklistMinCompressGain < len(data) {
			e.writeLZFBlob(out, len(data))
			return
		}
	}
	e.writeString(data)
}
