package datatype

import (
	"testing"

	"shardis/codec"
	"shardis/shard"
)

func id(ms, seq uint64) codec.StreamID { return codec.StreamID{Ms: ms, Seq: seq} }

func TestStreamGroup_PendingMovesBetweenConsumers_CountsFollow(t *testing.T) {
	s := openStore(t)
	key := []byte("s")
	do(t, s, func(tx *shard.Tx) {
		st, _ := LookupStream(tx, 0, key)
		st.Create()
		g, ok := st.CreateGroup([]byte("g"), id(5, 0), 3)
		if !ok {
			t.Fatal("CreateGroup failed")
		}
		if _, ok := st.CreateGroup([]byte("g"), id(0, 0), 0); ok {
			t.Fatal("CreateGroup of an existing group succeeded")
		}
		g.CreateConsumer([]byte("alice"), 100)
		g.CreateConsumer([]byte("bob"), 100)
		for i := uint64(1); i <= 3; i++ {
			g.SetNACK(id(i, 0), NACK{DeliveryTime: 200, DeliveryCount: 1, Consumer: []byte("alice")})
		}
		g.SetNACK(id(2, 0), NACK{DeliveryTime: 300, DeliveryCount: 2, Consumer: []byte("bob")})
		g.Save()
		st.Save()
	})
	do(t, s, func(tx *shard.Tx) {
		st, _ := LookupStream(tx, 0, key)
		if st.Info().Groups != 1 {
			t.Fatalf("groups %d, want 1", st.Info().Groups)
		}
		g, ok := st.Group([]byte("g"))
		if !ok || g.LastID != id(5, 0) || g.EntriesRead != 3 || g.Pending() != 3 || g.Consumers() != 2 {
			t.Fatalf("group %+v ok %v", g, ok)
		}
		a, b := g.Consumer([]byte("alice"), false, 0), g.Consumer([]byte("bob"), true, 400)
		if a.Pending() != 2 || b.Pending() != 1 || b.SeenTime != 400 {
			t.Fatalf("alice %d bob %d pending, bob seen %d", a.Pending(), b.Pending(), b.SeenTime)
		}
		if n, ok := g.NACK(id(2, 0)); !ok || string(n.Consumer) != "bob" || n.DeliveryCount != 2 || n.DeliveryTime != 300 {
			t.Fatalf("NACK 2-0 = %+v %v", n, ok)
		}
		if ids := g.OwnedIDs([]byte("alice"), codec.MinStreamID, codec.MaxStreamID, 0); len(ids) != 2 || ids[0] != id(1, 0) || ids[1] != id(3, 0) {
			t.Fatalf("alice owns %v", ids)
		}
		if !g.Ack(id(1, 0)) || g.Ack(id(1, 0)) {
			t.Fatal("Ack results wrong")
		}
		if n, ok := g.DeleteConsumer([]byte("alice")); !ok || n != 1 {
			t.Fatalf("DeleteConsumer = %d %v, want 1 true", n, ok)
		}
		g.Save()
		st.Save()
	})
	do(t, s, func(tx *shard.Tx) {
		st, _ := LookupStream(tx, 0, key)
		g, _ := st.Group([]byte("g"))
		if g.Pending() != 1 || g.Consumers() != 1 {
			t.Fatalf("pending %d consumers %d, want 1 1", g.Pending(), g.Consumers())
		}
		if names := g.ConsumerNames(); len(names) != 1 || string(names[0]) != "bob" {
			t.Fatalf("consumers %q", names)
		}
		first, last := g.FirstLastPending()
		if first != id(2, 0) || last != id(2, 0) {
			t.Fatalf("first %v last %v", first, last)
		}
		if !st.DestroyGroup([]byte("g")) || st.DestroyGroup([]byte("g")) {
			t.Fatal("DestroyGroup results wrong")
		}
		st.Save()
	})
	do(t, s, func(tx *shard.Tx) {
		st, _ := LookupStream(tx, 0, key)
		it := st.c.iter(nil, nil, false)
		defer it.Close()
		if it.Valid() {
			t.Fatalf("data key %q left after DestroyGroup", it.Elem())
		}
		if st.Info().Groups != 0 || len(st.GroupNames()) != 0 {
			t.Fatal("group still listed")
		}
	})
}
