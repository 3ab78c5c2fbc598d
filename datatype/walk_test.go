package datatype

import (
	"fmt"
	"testing"

	"shardis/codec"
	"shardis/shard"
)

// The walks give a sorted set in score order and a stream's entries, groups, PEL, consumers
// and each consumer's pending ids, from a transaction (the sorted set packed in its meta).
func TestWalk_ZSetAndStream_InFormatOrder(t *testing.T) {
	s := openStore(t)
	k, sk := []byte("z"), []byte("s")
	do(t, s, func(tx *shard.Tx) {
		z := NewZSet(tx, 0, k)
		z.Insert([]byte("b"), 2)
		z.Insert([]byte("a"), 2)
		z.Insert([]byte("c"), -1)
		z.Save()
		st, _ := LookupStream(tx, 0, sk)
		for i := uint64(1); i <= 3; i++ {
			if err := st.Add(codec.StreamID{Ms: i}, [][]byte{[]byte("f"), []byte(fmt.Sprint(i))}); err != nil {
				t.Fatal(err)
			}
		}
		g, _ := st.CreateGroup([]byte("g"), codec.StreamID{Ms: 3}, 3)
		g.CreateConsumer([]byte("alice"), 7)
		g.SetNACK(codec.StreamID{Ms: 2}, NACK{DeliveryTime: 9, DeliveryCount: 1, Consumer: []byte("alice")})
		g.Save()
		st.Save()
	})
	var out []string
	do(t, s, func(tx *shard.Tx) {
		m, _ := tx.Meta(0, k)
		_ = WalkZSet(ValueScan(tx, 0, k, &m), func(member []byte, score float64) error {
			out = append(out, fmt.Sprintf("%s=%g", member, score))
			return nil
		})
		m, _ = tx.Meta(0, sk)
		scan := ValueScan(tx, 0, sk, &m)
		_ = WalkStreamEntries(scan, func(id codec.StreamID, fv [][]byte) error {
			out = append(out, fmt.Sprintf("%s:%s", id, fv))
			return nil
		})
		_ = WalkStreamGroups(scan, func(g StreamGroupInfo) error {
			out = append(out, fmt.Sprintf("group %s %s %d %d %d", g.Name, g.LastID, g.EntriesRead, g.Pending, g.Consumers))
			return WalkStreamPending(scan, g.Name, func(id codec.StreamID, n NACK) error {
				out = append(out, fmt.Sprintf("pel %s %d %d", id, n.DeliveryTime, n.DeliveryCount))
				return nil
			})
		})
		_ = WalkStreamConsumers(scan, []byte("g"), func(name []byte, seen int64, pending uint64) error {
			out = append(out, fmt.Sprintf("consumer %s %d %d", name, seen, pending))
			return WalkStreamOwned(scan, []byte("g"), name, func(id codec.StreamID) error {
				out = append(out, "owns "+id.String())
				return nil
			})
		})
	})
	want := "[c=-1 a=2 b=2 1-0:[f 1] 2-0:[f 2] 3-0:[f 3] group g 3-0 3 1 1 pel 2-0 9 1 consumer alice 7 1 owns 2-0]"
	if got := fmt.Sprint(out); got != want {
		t.Fatalf("walks gave\n%s\nwant\n%s", got, want)
	}
}
