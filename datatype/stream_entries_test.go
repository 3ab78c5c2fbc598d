package datatype

import (
	"fmt"
	"strconv"
	"testing"

	"shardis/codec"
	"shardis/shard"
)

// Listpack sizes as Redis encodes elements: strings that are canonical integers are stored
// as integers.
func TestStream_ListpackSizes_AsRedisEncodes(t *testing.T) {
	for _, c := range []struct {
		s    string
		want uint64
	}{
		{"0", 2}, {"127", 2}, {"128", 3}, {"-1", 3}, {"4095", 3}, {"-4096", 3}, {"4096", 4},
		{"32767", 4}, {"32768", 5}, {"8388607", 5}, {"8388608", 6}, {"2147483648", 10},
		{"9223372036854775807", 10}, {"9223372036854775808", 21}, {"007", 5}, {"-0", 4},
		{"", 2}, {"a", 3}, {string(make([]byte, 63)), 65}, {string(make([]byte, 64)), 67},
		{string(make([]byte, 125)), 128}, {string(make([]byte, 126)), 130},
		{string(make([]byte, 4096)), 4103},
	} {
		if got := lpStrSize([]byte(c.s)); got != c.want {
			t.Errorf("lpStrSize(%.20q) = %d, want %d", c.s, got, c.want)
		}
	}
}

// addEntries adds ids 1-0 … n-0 with one field to stream key.
func addEntries(t *testing.T, s *shard.Store, key string, from, n int, value func(i int) string) {
	t.Helper()
	do(t, s, func(tx *shard.Tx) {
		st, err := LookupStream(tx, 0, []byte(key))
		if err != nil {
			t.Error(err)
			return
		}
		for i := from; i < from+n; i++ {
			if err := st.Add(codec.StreamID{Ms: uint64(i)}, [][]byte{[]byte("f"), []byte(value(i))}); err != nil {
				t.Error(err)
				return
			}
		}
		st.Save()
	})
}

// Nodes hold 100 entries; `~` trims whole nodes only, `=` marks entries within the first
// node; XDEL of a node's last live entry removes the node, and the last node's counters
// follow it when the last node goes.
func TestStream_TrimAndDelete_FollowNodes(t *testing.T) {
	s := openStore(t)
	addEntries(t, s, "s", 1, 250, strconv.Itoa)
	trim := func(a TrimArgs) (got int64, left uint64, nodes uint64) {
		do(t, s, func(tx *shard.Tx) {
			st, _ := LookupStream(tx, 0, []byte("s"))
			got = st.Trim(a)
			st.Save()
			left, nodes = st.Len(), st.Info().Nodes
		})
		return
	}
	if got, left, nodes := trim(TrimArgs{Strategy: TrimMaxLen, Approx: true, MaxLen: 120, Limit: StreamTrimDefaultLimit}); got != 100 || left != 150 || nodes != 2 {
		t.Fatalf("MAXLEN ~ 120: removed %d, %d left in %d nodes; want 100, 150, 2", got, left, nodes)
	}
	if got, left, nodes := trim(TrimArgs{Strategy: TrimMaxLen, MaxLen: 120}); got != 30 || left != 120 || nodes != 2 {
		t.Fatalf("MAXLEN = 120: removed %d, %d left in %d nodes; want 30, 120, 2", got, left, nodes)
	}
	// The first node (101-200) has 70 live, 30 deleted: MINID ~ 201 removes it whole.
	if got, left, nodes := trim(TrimArgs{Strategy: TrimMinID, Approx: true, MinID: codec.StreamID{Ms: 201}, Limit: StreamTrimDefaultLimit}); got != 70 || left != 50 || nodes != 1 {
		t.Fatalf("MINID ~ 201: removed %d, %d left in %d nodes; want 70, 50, 1", got, left, nodes)
	}
	do(t, s, func(tx *shard.Tx) {
		st, _ := LookupStream(tx, 0, []byte("s"))
		for i := 201; i <= 250; i++ {
			if !st.Delete(codec.StreamID{Ms: uint64(i)}) {
				t.Errorf("XDEL %d-0 found nothing", i)
			}
		}
		st.FixFirstID()
		st.Save()
		if info := st.Info(); st.Len() != 0 || info.Nodes != 0 || info.FirstID != (codec.StreamID{}) || info.MaxDeletedID != (codec.StreamID{Ms: 250}) {
			t.Errorf("after deleting all: len %d, %+v", st.Len(), *info)
		}
	})
	// A new entry starts a node again; entries added went on counting.
	addEntries(t, s, "s", 300, 1, strconv.Itoa)
	do(t, s, func(tx *shard.Tx) {
		st, _ := LookupStream(tx, 0, []byte("s"))
		if info := st.Info(); info.Nodes != 1 || info.TailNode != (codec.StreamID{Ms: 300}) || info.EntriesAdded != 251 || info.TailLive != 1 {
			t.Errorf("after a new entry: %+v", *info)
		}
	})
}

// Large values close a node by bytes (stream-node-max-bytes, 4096) before it has 100
// entries; removing the last node hands its counters to the one before.
func TestStream_NodeBytes_CloseNodes(t *testing.T) {
	s := openStore(t)
	value := func(i int) string { return fmt.Sprintf("%0100d", i) }
	addEntries(t, s, "b", 1, 100, value)
	do(t, s, func(tx *shard.Tx) {
		st, _ := LookupStream(tx, 0, []byte("b"))
		info := st.Info()
		// Each entry takes 2+2+2 (flags, ms delta, seq delta) + 103 (a 100-byte value) + 2
		// (lp-count) bytes, the header 7+2+2+2+3+2: a node takes 36 entries (redis-server
		// 7.0.15's XTRIM MAXLEN ~ 0 LIMIT 36 then removes 36, twice, leaving 28).
		if info.Nodes != 3 || info.TailNode != (codec.StreamID{Ms: 73}) || info.TailLive != 28 {
			t.Errorf("100 entries of 100 bytes: %+v", *info)
			return
		}
		for i := 73; i <= 100; i++ {
			st.Delete(codec.StreamID{Ms: uint64(i)})
		}
		st.Save()
		if info.Nodes != 2 || info.TailNode != (codec.StreamID{Ms: 37}) || info.TailLive != 36 || info.TailLast != (codec.StreamID{Ms: 72}) {
			t.Errorf("after deleting the last node: %+v", *info)
		}
	})
}
