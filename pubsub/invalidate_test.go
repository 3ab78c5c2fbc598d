package pubsub

import "testing"

// Invalidations are framed as redis-server 7.0.15 sends them: a RESP3 push, a RESP2 message on
// __redis__:invalidate to a subscribed redirect target, nothing to another RESP2 connection.
func TestDeliverInvalidation_Frames(t *testing.T) {
	newSub := func(resp3 bool) *Subscriber {
		s := NewSubscriber(func() {}, func() Limit { return Limit{} }, func(int64) {})
		s.RESP3.Store(resp3)
		return s
	}
	keys := AppendKeys(nil, []byte("a"), []byte("bc"))
	cases := []struct {
		resp3, asMessage bool
		payload          []byte
		want             string
	}{
		{true, false, keys, ">2\r\n$10\r\ninvalidate\r\n*2\r\n$1\r\na\r\n$2\r\nbc\r\n"},
		{true, true, NullPayload(true), ">2\r\n$10\r\ninvalidate\r\n_\r\n"},
		{false, true, keys, "*3\r\n$7\r\nmessage\r\n$20\r\n__redis__:invalidate\r\n*2\r\n$1\r\na\r\n$2\r\nbc\r\n"},
		{false, true, NullPayload(false), "*3\r\n$7\r\nmessage\r\n$20\r\n__redis__:invalidate\r\n$-1\r\n"},
		{false, false, keys, ""},
	}
	for _, tc := range cases {
		s := newSub(tc.resp3)
		s.DeliverInvalidation(tc.payload, tc.asMessage)
		if got := string(s.Drain(nil, DrainAll)); got != tc.want {
			t.Errorf("resp3=%v asMessage=%v: got %q, want %q", tc.resp3, tc.asMessage, got, tc.want)
		}
	}
	if got := string(InvalidationPush(keys)); got != cases[0].want {
		t.Errorf("InvalidationPush: %q", got)
	}
	s := newSub(true)
	s.DeliverRedirBroken(42)
	if got := string(s.Drain(nil, DrainAll)); got != ">2\r\n$21\r\ntracking-redir-broken\r\n:42\r\n" {
		t.Errorf("redir broken: %q", got)
	}
	s = newSub(false)
	s.DeliverRedirBroken(42)
	if got := string(s.Drain(nil, DrainAll)); got != "" {
		t.Errorf("redir broken in RESP2: %q", got)
	}
}
