package pubsub

import "strconv"

// InvalidateChannel is the channel on which a RESP2 connection that is the redirect target of
// a tracking client (CLIENT TRACKING ... REDIRECT) receives invalidation messages.
const InvalidateChannel = "__redis__:invalidate"

// AppendKeys appends keys encoded as a RESP array of bulk strings: the payload of an
// invalidation message.
func AppendKeys(b []byte, keys ...[]byte) []byte {
	b = append(b, '*')
	b = strconv.AppendInt(b, int64(len(keys)), 10)
	b = append(b, '\r', '\n')
	for _, k := range keys {
		b = appendBulkBytes(b, k)
	}
	return b
}

// NullPayload is the payload of the invalidation that drops everything (FLUSHDB, FLUSHALL),
// as Redis encodes it: the null of the tracking client's protocol.
func NullPayload(resp3 bool) []byte {
	if resp3 {
		return []byte("_\r\n")
	}
	return []byte("$-1\r\n")
}

// DeliverInvalidation queues an invalidation whose payload is an encoded array of keys or a
// null, as Redis sends it: a push frame ["invalidate", payload] to a RESP3 connection; to a
// RESP2 one, when asMessage (it is a redirect target in pub/sub mode), a pub/sub message on
// __redis__:invalidate; else nothing, since RESP2 has no other way to carry it. It goes
// through the subscriber's queue, bounded as pub/sub messages are.
func (s *Subscriber) DeliverInvalidation(payload []byte, asMessage bool) {
	if s.RESP3.Load() {
		body := make([]byte, 0, 17+len(payload))
		body = appendBulk(body, "invalidate")
		s.deliver(2, append(body, payload...))
		return
	}
	if !asMessage {
		return
	}
	body := make([]byte, 0, 40+len(payload))
	body = appendBulk(body, "message")
	body = appendBulk(body, InvalidateChannel)
	s.deliver(3, append(body, payload...))
}

// InvalidationPush returns the RESP3 push frame of an invalidation, for a caller that places
// it itself (after the reply of the command that caused it).
func InvalidationPush(payload []byte) []byte {
	b := append(make([]byte, 0, 21+len(payload)), ">2\r\n"...)
	b = appendBulk(b, "invalidate")
	return append(b, payload...)
}

// DeliverRedirBroken queues Redis's push telling a RESP3 tracking client that the connection
// it redirects invalidations to (id) is gone. Nothing goes to a RESP2 one.
func (s *Subscriber) DeliverRedirBroken(id int64) {
	if !s.RESP3.Load() {
		return
	}
	body := appendBulk(nil, "tracking-redir-broken")
	body = append(body, ':')
	body = strconv.AppendInt(body, id, 10)
	s.deliver(2, append(body, '\r', '\n'))
}
