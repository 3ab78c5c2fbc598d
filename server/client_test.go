package server

import "testing"

type fakeBlocked struct{ n int }

func (f *fakeBlocked) Unblock(UnblockReason) bool { f.n++; return true }

// A client records the command it is blocked in until it ends; once gone, nothing blocks.
func TestClient_BlockedAndGone(t *testing.T) {
	cl := &Client{}
	u := &fakeBlocked{}
	if !cl.SetBlocked(u) || cl.Blocked() != u {
		t.Fatal("SetBlocked did not record the command")
	}
	cl.ClearBlocked(&fakeBlocked{}) // another command: no change
	if cl.Blocked() != u {
		t.Fatal("ClearBlocked of another command cleared it")
	}
	if cl.Gone() != u {
		t.Fatal("Gone did not return the blocked command")
	}
	cl.ClearBlocked(u)
	if cl.Blocked() != nil || cl.SetBlocked(u) {
		t.Fatal("a gone client blocked again")
	}
}
