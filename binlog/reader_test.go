package binlog

import (
	"strings"
	"testing"
)

type sliceCursor struct{ keys, vals [][]byte }

func (c *sliceCursor) Valid() bool   { return len(c.keys) > 0 }
func (c *sliceCursor) Key() []byte   { return c.keys[0] }
func (c *sliceCursor) Value() []byte { return c.vals[0] }
func (c *sliceCursor) Next()         { c.keys, c.vals = c.keys[1:], c.vals[1:] }
func (c *sliceCursor) Err() error    { return nil }

func (c *sliceCursor) add(seq uint64, v []byte) {
	c.keys = append(c.keys, AppendKey(nil, seq))
	c.vals = append(c.vals, v)
}

func TestRead_CopiesAndStopsAtLimit(t *testing.T) {
	c := &sliceCursor{}
	for seq := uint64(1); seq <= 5; seq++ {
		c.add(seq, AppendRecord(nil, 1000, 2, [][]byte{[]byte("SET"), []byte("k"), {byte('0' + seq)}}))
	}
	read := c.vals
	got, err := Read(c, 3, nil)
	if err != nil || len(got) != 3 || got[2].Seq != 3 || got[2].DB != 2 || string(got[2].Args[2]) != "3" {
		t.Fatalf("Read = %+v, %v", got, err)
	}
	read[0][len(read[0])-1] = 'x' // the cursor's memory is reused: entries keep their copy
	got, err = Read(c, 10, got)
	if err != nil || len(got) != 5 || string(got[0].Args[2]) != "1" || string(got[3].Args[2]) != "4" {
		t.Fatalf("Read on = %+v, %v", got, err)
	}
}

func TestRead_NamesTheCorruptRecord(t *testing.T) {
	c := &sliceCursor{}
	c.add(7, AppendRecord(nil, 1, 0, [][]byte{[]byte("DEL"), []byte("k")}))
	c.add(8, []byte{1, 2, 3})
	got, err := Read(c, 10, nil)
	if err == nil || !strings.Contains(err.Error(), "record 8") || len(got) != 1 {
		t.Fatalf("Read = %d entries, %v; want record 8 named", len(got), err)
	}
}
