package server

import (
	"strings"
	"testing"
)

// Queue keeps its own copy: the reactor reuses the buffer the arguments came from.
func TestMulti_Queue_CopiesArguments(t *testing.T) {
	var m Multi
	buf := []byte("SETkv")
	m.Queue([][]byte{buf[:3], buf[3:4], buf[4:5]}, true, false)
	big := []byte(strings.Repeat("x", 10000)) // past one arena chunk
	m.Queue([][]byte{[]byte("GET"), big}, false, false)
	copy(buf, "XXXXX")
	big[0] = 'y'
	if got := string(m.Commands[0][0]) + string(m.Commands[0][1]) + string(m.Commands[0][2]); got != "SETkv" {
		t.Fatalf("first command now %q: it aliased the caller's buffer", got)
	}
	if m.Commands[1][1][0] != 'x' || len(m.Commands[1][1]) != 10000 {
		t.Fatal("second command aliased the caller's buffer")
	}
	if !m.MayWrite || m.ChangesConn || m.Aborted {
		t.Fatalf("flags: may write %v, changes conn %v, aborted %v", m.MayWrite, m.ChangesConn, m.Aborted)
	}
	m.Queue([][]byte{[]byte("SELECT"), []byte("1")}, false, true)
	if !m.ChangesConn || len(m.Commands) != 3 {
		t.Fatal("a connection command was not noted")
	}
}

func TestClient_TakeMulti_EndsIt(t *testing.T) {
	cl := &Client{Multi: &Multi{}}
	cl.Multi.Queue([][]byte{[]byte("PING")}, false, false)
	cl.Publish()
	if _, _, flags, n := cl.Published(); flags&PubMulti == 0 || n != 1 {
		t.Fatalf("published flags %b, queued %d; want multi with 1", flags, n)
	}
	m := cl.TakeMulti()
	if m == nil || len(m.Commands) != 1 || cl.Multi != nil {
		t.Fatal("TakeMulti did not hand the transaction over")
	}
	cl.Publish()
	if _, _, flags, n := cl.Published(); flags&PubMulti != 0 || n != -1 {
		t.Fatalf("after TakeMulti: flags %b, queued %d", flags, n)
	}
}

func TestServer_Paused_WriteHoldsOnlyWrites(t *testing.T) {
	var s Server
	until := int64(1 << 50)
	s.pauseUntil.Store(until)
	if p, _ := s.Paused(false, 1000); p {
		t.Fatal("a read is held by a WRITE pause")
	}
	if p, u := s.Paused(true, 1000); !p || u != until {
		t.Fatal("a write is not held by a WRITE pause")
	}
	if p, _ := s.Paused(true, until); p {
		t.Fatal("held after the pause ended")
	}
}
