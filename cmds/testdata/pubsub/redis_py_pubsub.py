# redis-py's PubSub against a server: channels, patterns, keyspace notifications, a
# subscriber thread with a handler, unsubscribing. Run by TestPubSub_RedisPy with the address.
import sys
import threading
import time

import redis

host, port = sys.argv[1].rsplit(":", 1)
r = redis.Redis(host=host, port=int(port), decode_responses=True)


def next_message(p, timeout=30.0):
    """The next message (not a (un)subscribe confirmation), waiting up to timeout."""
    m = p.get_message(ignore_subscribe_messages=True, timeout=timeout)
    assert m is not None, "no message within %ss" % timeout
    return m


p = r.pubsub()
p.subscribe("news")
p.psubscribe("n*")
assert p.get_message(timeout=30)["type"] == "subscribe"
assert p.get_message(timeout=30)["type"] == "psubscribe"
assert r.publish("news", "hello") == 2, "two receivers: the channel and the pattern"
got = {(m["type"], m["channel"], m["data"]) for m in (next_message(p), next_message(p))}
assert got == {("message", "news", "hello"), ("pmessage", "news", "hello")}, got
assert r.pubsub_numsub("news") == [("news", 1)]
assert r.pubsub_numpat() == 1

# Keyspace notifications.
r.config_set("notify-keyspace-events", "KEA")
assert r.config_get("notify-keyspace-events") == {"notify-keyspace-events": "AKE"}
k = r.pubsub()
k.psubscribe("__keyevent@0__:*")
assert k.get_message(timeout=30)["type"] == "psubscribe"
r.set("x", "1")
r.rpush("l", "a", "b")
r.delete("x", "l")
events = [(m["channel"], m["data"]) for m in (next_message(k) for _ in range(4))]
assert events == [("__keyevent@0__:set", "x"), ("__keyevent@0__:rpush", "l"),
                  ("__keyevent@0__:del", "x"), ("__keyevent@0__:del", "l")], events
r.config_set("notify-keyspace-events", "")
k.close()

# A handler in a worker thread, as applications use it.
seen = []
done = threading.Event()


def handler(m):
    seen.append(m["data"])
    if len(seen) == 100:
        done.set()


t = r.pubsub()
t.subscribe(**{"jobs": handler})
worker = t.run_in_thread(sleep_time=0.01, daemon=True)
deadline = time.monotonic() + 30
while r.pubsub_numsub("jobs") != [("jobs", 1)]:
    assert time.monotonic() < deadline, "the subscriber thread never subscribed"
    time.sleep(0.01)
for i in range(100):
    r.publish("jobs", str(i))
assert done.wait(30), "the handler got %d of 100 messages" % len(seen)
assert seen == [str(i) for i in range(100)], "out of order: %s" % seen
worker.stop()
worker.join(30)
assert not worker.is_alive(), "the subscriber thread did not stop"
t.close()

p.unsubscribe()
p.punsubscribe()
p.close()
# The server drops the subscriptions once it has seen the connection close.
deadline = time.monotonic() + 30
while r.pubsub_numsub("news") != [("news", 0)]:
    assert time.monotonic() < deadline, "the closed subscriber still counts"
    time.sleep(0.01)
print("ok")
