# redis-py's Lock against a server: acquire, contention, extend, reacquire, release, and the
# release of a lock the client does not own. Run by TestScript_RedisPyLock with the address.
import subprocess
import sys

import redis

host, port = sys.argv[1].rsplit(":", 1)
r = redis.Redis(host=host, port=int(port))
lock = r.lock("resource", timeout=10)
assert lock.acquire(blocking=False), "first acquire"

# Another process contends for the same lock and must not get it.
other = subprocess.run([sys.executable, "-c", f"""
import redis
r = redis.Redis(host={host!r}, port={port})
print(r.lock("resource", timeout=10).acquire(blocking=False))
"""], capture_output=True, text=True, check=True)
assert other.stdout.strip() == "False", "second process got the lock: " + other.stdout + other.stderr

lock.extend(5)
assert r.pttl("resource") > 10000, "extend"
lock.reacquire()
assert 9000 < r.pttl("resource") <= 10000, "reacquire"

stranger = r.lock("resource", timeout=10)
stranger.local.token = b"not-the-owner"
try:
    stranger.release()
    raise AssertionError("released a lock it does not own")
except redis.exceptions.LockNotOwnedError:
    pass

lock.release()
assert r.get("resource") is None, "release"
second = r.lock("resource", timeout=10)
assert second.acquire(blocking=False), "acquire after release"
second.release()
print("ok")
