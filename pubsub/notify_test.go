package pubsub

import "testing"

// CONFIG SET then CONFIG GET of notify-keyspace-events, as redis-server 7.0.15 answered.
func TestClasses_ParseAndFormatAsRedis(t *testing.T) {
	for in, want := range map[string]string{
		"": "", "A": "A", "AKE": "AKE", "AKEnm": "AKEm", "KEA": "AKE", "g$": "g$", "nK": "nK",
		"Km": "Km", "xe": "xe", "EgAd": "AE", "zzK": "zK", "Ax": "A",
	} {
		c, ok := ParseClasses(in)
		if !ok || c.String() != want {
			t.Errorf("%q: %q, %v; want %q", in, c.String(), ok, want)
		}
	}
	if _, ok := ParseClasses("Q"); ok {
		t.Error("Q accepted")
	}
}

func TestRegistry_NotifyChannels(t *testing.T) {
	var r Registry
	s, _, _ := newTestSubscriber(0)
	r.Subscribe(s, Pattern, "__key*__:*")
	r.Notify(nil, 0, Keyspace|Keyevent|Generic, "del", 3, []byte("k"))
	want := "*4\r\n$8\r\npmessage\r\n$10\r\n__key*__:*\r\n$16\r\n__keyspace@3__:k\r\n$3\r\ndel\r\n" +
		"*4\r\n$8\r\npmessage\r\n$10\r\n__key*__:*\r\n$18\r\n__keyevent@3__:del\r\n$1\r\nk\r\n"
	if got := string(s.Drain(nil, DrainAll)); got != want {
		t.Fatalf("got %q", got)
	}
}
