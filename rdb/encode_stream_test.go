package rdb

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
	"testing"
)

type wtStreamEntry struct {
	id     StreamID
	fields wtElems
}

type wtStreamConsumer struct {
	head    StreamConsumer
	pending []StreamID
}

type wtStreamGroup struct {
	head      StreamGroup
	pending   []StreamPending
	consumers []wtStreamConsumer
}

// wtStream is a slice-backed StreamSource.
type wtStream struct {
	entries []wtStreamEntry
	meta    StreamMeta
	groups  []wtStreamGroup
}

func (s *wtStream) Meta() StreamMeta { return s.meta }
func (s *wtStream) Entries(fn func(StreamID, [][]byte) error) error {
	for _, e := range s.entries {
		if err := fn(e.id, e.fields); err != nil {
			return err
		}
	}
	return nil
}
func (s *wtStream) Groups(fn func(StreamGroup) error) error {
	for _, g := range s.groups {
		if err := fn(g.head); err != nil {
			return err
		}
	}
	return nil
}
func (s *wtStream) group(name []byte) *wtStreamGroup {
	for i := range s.groups {
		if bytes.Equal(s.groups[i].head.Name, name) {
			return &s.groups[i]
		}
	}
	return nil
}
func (s *wtStream) GroupPending(group []byte, fn func(StreamPending) error) error {
	for _, p := range s.group(group).pending {
		if err := fn(p); err != nil {
			return err
		}
	}
	return nil
}
func (s *wtStream) Consumers(group []byte, fn func(StreamConsumer) error) error {
	for _, c := range s.group(group).consumers {
		if err := fn(c.head); err != nil {
			return err
		}
	}
	return nil
}
func (s *wtStream) ConsumerPending(group, consumer []byte, fn func(StreamID) error) error {
	for _, c := range s.group(group).consumers {
		if bytes.Equal(c.head.Name, consumer) {
			for _, id := range c.pending {
				if err := fn(id); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

func wtParseID(t *testing.T, s string) StreamID {
	t.Helper()
	ms, seq, ok := strings.Cut(s, "-")
	a, err1 := strconv.ParseUint(ms, 10, 64)
	b, err2 := strconv.ParseUint(seq, 10, 64)
	if !ok || err1 != nil || err2 != nil {
		t.Fatalf("bad stream id %q", s)
	}
	return StreamID{a, b}
}

// wtStreamFromRedis reads key's entries, meta and groups from Redis (XRANGE, XINFO STREAM
// FULL) into a source.
func wtStreamFromRedis(t *testing.T, rc *referenceRedis, key string) *wtStream {
	t.Helper()
	src := &wtStream{}
	msgs, err := rc.XRange(testCtx, key, "-", "+").Result()
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range msgs {
		// go-redis returns the fields as a map; the order matters, so read them again raw.
		raw := wtDo(t, rc, "XRANGE", key, m.ID, m.ID).([]any)[0].([]any)[1].([]any)
		var fields wtElems
		for _, f := range raw {
			fields = append(fields, []byte(f.(string)))
		}
		src.entries = append(src.entries, wtStreamEntry{wtParseID(t, m.ID), fields})
	}
	info, err := rc.XInfoStreamFull(testCtx, key, 0).Result()
	if err != nil {
		t.Fatal(err)
	}
	src.meta = StreamMeta{Length: uint64(info.Length), LastID: wtParseID(t, info.LastGeneratedID),
		FirstID: wtParseID(t, info.RecordedFirstEntryID), MaxDeletedID: wtParseID(t, info.MaxDeletedEntryID),
		EntriesAdded: uint64(info.EntriesAdded)}
	// go-redis reads a null entries-read (unknown, -1) as 0: take it from the raw reply.
	entriesRead := map[string]int64{}
	full := wtDo(t, rc, "XINFO", "STREAM", key, "FULL").([]any)
	for i := 0; i+1 < len(full); i += 2 {
		if full[i] != "groups" {
			continue
		}
		for _, g := range full[i+1].([]any) {
			fields := g.([]any)
			var name string
			read := int64(-1)
			for j := 0; j+1 < len(fields); j += 2 {
				switch fields[j] {
				case "name":
					name = fields[j+1].(string)
				case "entries-read":
					if v, ok := fields[j+1].(int64); ok {
						read = v
					}
				}
			}
			entriesRead[name] = read
		}
	}
	for _, g := range info.Groups {
		wg := wtStreamGroup{head: StreamGroup{Name: []byte(g.Name), LastID: wtParseID(t, g.LastDeliveredID),
			EntriesRead: entriesRead[g.Name]}}
		for _, p := range g.Pending {
			wg.pending = append(wg.pending, StreamPending{ID: wtParseID(t, p.ID),
				DeliveryTime: p.DeliveryTime.UnixMilli(), DeliveryCount: uint64(p.DeliveryCount)})
		}
		for _, c := range g.Consumers {
			wc := wtStreamConsumer{head: StreamConsumer{Name: []byte(c.Name), SeenTime: c.SeenTime.UnixMilli()}}
			for _, p := range c.Pending {
				wc.pending = append(wc.pending, wtParseID(t, p.ID))
			}
			wg.consumers = append(wg.consumers, wc)
		}
		src.groups = append(src.groups, wg)
	}
	return src
}

func TestDumpBytes_Streams_ByteEqualToRedis(t *testing.T) {
	rc := wtStartRedis(t)
	cases := []struct {
		name  string
		build func()
	}{
		{"one entry", func() { wtDo(t, rc, "XADD", "theirs", "5-1", "name", "value") }},
		{"same and other fields", func() {
			wtDo(t, rc, "XADD", "theirs", "1-1", "a", "1", "b", "two")
			wtDo(t, rc, "XADD", "theirs", "1-2", "a", "3", "b", "four")
			wtDo(t, rc, "XADD", "theirs", "2-0", "b", "1", "a", "2")
			wtDo(t, rc, "XADD", "theirs", "3-0", "a", "1")
			wtDo(t, rc, "XADD", "theirs", "1000000000000-5", "a", "-70000", "b", "x")
		}},
		{"nodes by entries", func() {
			for i := 0; i < 250; i++ {
				wtDo(t, rc, "XADD", "theirs", fmt.Sprintf("%d-%d", 100+i/3, i%3), "f", i, "g", "v"+strconv.Itoa(i))
			}
		}},
		{"nodes by bytes", func() {
			for i := 0; i < 60; i++ {
				wtDo(t, rc, "XADD", "theirs", "*", "payload", strings.Repeat(strconv.Itoa(i%10), 300+i*7))
			}
		}},
		{"groups and consumers", func() {
			for i := 0; i < 20; i++ {
				wtDo(t, rc, "XADD", "theirs", fmt.Sprintf("7-%d", i), "k", i)
			}
			wtDo(t, rc, "XGROUP", "CREATE", "theirs", "g2", "0")
			wtDo(t, rc, "XGROUP", "CREATE", "theirs", "g1", "7-3")
			wtDo(t, rc, "XGROUP", "CREATE", "theirs", "empty", "$")
			wtDo(t, rc, "XREADGROUP", "GROUP", "g1", "bob", "COUNT", 4, "STREAMS", "theirs", ">")
			wtDo(t, rc, "XREADGROUP", "GROUP", "g1", "alice", "COUNT", 3, "STREAMS", "theirs", ">")
			wtDo(t, rc, "XREADGROUP", "GROUP", "g2", "carol", "COUNT", 10, "STREAMS", "theirs", ">")
			wtDo(t, rc, "XACK", "theirs", "g2", "7-2", "7-5")
			wtDo(t, rc, "XCLAIM", "theirs", "g1", "alice", 0, "7-4")
			wtDo(t, rc, "XGROUP", "CREATECONSUMER", "theirs", "g2", "idle")
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rc.Del(testCtx, "theirs")
			c.build()
			src := wtStreamFromRedis(t, rc, "theirs")
			wtCheckRestore(t, rc, Source{Kind: KindStream, Stream: src}, true)
		})
	}
}

func TestDumpBytes_StreamAfterDeletions_SameEntriesAndGroups(t *testing.T) {
	rc := wtStartRedis(t)
	for i := 0; i < 150; i++ {
		wtDo(t, rc, "XADD", "theirs", fmt.Sprintf("9-%d", i), "f", i)
	}
	for i := 0; i < 150; i += 4 {
		wtDo(t, rc, "XDEL", "theirs", fmt.Sprintf("9-%d", i))
	}
	wtDo(t, rc, "XGROUP", "CREATE", "theirs", "g", "0")
	wtDo(t, rc, "XREADGROUP", "GROUP", "g", "c", "COUNT", 5, "STREAMS", "theirs", ">")
	src := wtStreamFromRedis(t, rc, "theirs")
	// Redis keeps the deleted entries in its nodes (flagged); ours has only the live ones.
	wtCheckRestore(t, rc, Source{Kind: KindStream, Stream: src}, false)
	restored := wtStreamFromRedis(t, rc, "ours")
	if fmt.Sprint(restored) != fmt.Sprint(src) {
		t.Fatalf("stream after RESTORE:\n%v\nwant\n%v", restored, src)
	}
}

func TestDumpBytes_StreamNodeLimitsConfigured_ByteEqualToRedis(t *testing.T) {
	for _, c := range []struct {
		maxBytes, maxEntries int
	}{{200, 0}, {0, 7}, {1, 100}} {
		t.Run(fmt.Sprintf("bytes %d entries %d", c.maxBytes, c.maxEntries), func(t *testing.T) {
			rc := wtStartRedis(t, "--stream-node-max-bytes", strconv.Itoa(c.maxBytes),
				"--stream-node-max-entries", strconv.Itoa(c.maxEntries))
			for i := 0; i < 40; i++ {
				wtDo(t, rc, "XADD", "theirs", fmt.Sprintf("%d-1", i+1), "field", strings.Repeat("v", i), "n", i)
			}
			opts := DefaultOptions()
			opts.StreamNodeMaxBytes, opts.StreamNodeMaxEntries = c.maxBytes, c.maxEntries
			wtCheckRestoreWith(t, rc, Source{Kind: KindStream, Stream: wtStreamFromRedis(t, rc, "theirs")}, opts, true)
		})
	}
}
