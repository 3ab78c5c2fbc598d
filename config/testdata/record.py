#!/usr/bin/env python3
"""Records redis-server 7.0's configuration answers for config's tests.

Run from this directory with redis-server 7.0 on PATH:

    python3 record.py > redis7_config.txt

It starts a redis-server on a free loopback port in a temporary directory and writes:

    get <TAB> name <TAB> value            every pair of CONFIG GET * (defaults, except port
                                          and dir, which the recorder chose)
    set <TAB> name <TAB> value <TAB> reply  CONFIG SET name value for each probe value of each
                                          parameter; reply is "OK" or the error line without "-"

A probe that succeeded is undone by setting the recorded default back. port, bind, dir,
requirepass, masterauth and masteruser are left out: changing them changes who can talk to the
recorder.
"""
import os, socket, subprocess, sys, tempfile, time

PROBES = ["abc", "", "-1", "0", "1", "01", "1.5", "-9223372036854775809",
          "99999999999999999999999", "18446744073709551615", "4294967296", "100%", "-101%",
          "10mb", "1gb", "yes", "no", "a b", "1 2", "777", "0777", "999"]
SKIP = {"port", "bind", "dir", "requirepass", "masterauth", "masteruser"}


def resp(*args):
    out = b"*%d\r\n" % len(args)
    for a in args:
        a = a.encode()
        out += b"$%d\r\n%s\r\n" % (len(a), a)
    return out


class Conn:
    def __init__(self, port):
        self.s = socket.create_connection(("127.0.0.1", port))
        self.f = self.s.makefile("rb")

    def call(self, *args):
        self.s.sendall(resp(*args))
        return self.read()

    def read(self):
        line = self.f.readline().rstrip(b"\r\n").decode()
        t, rest = line[0], line[1:]
        if t in "+-:":
            return line
        if t == "$":
            n = int(rest)
            if n < 0:
                return None
            data = self.f.read(n + 2)[:-2]
            return data.decode()
        if t == "*":
            return [self.read() for _ in range(int(rest))]
        raise ValueError(line)


def main():
    d = tempfile.mkdtemp()
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    p = subprocess.Popen(["redis-server", "--port", str(port), "--dir", d],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(100):
            try:
                c = Conn(port)
                break
            except OSError:
                time.sleep(0.05)
        flat = c.call("CONFIG", "GET", "*")
        defaults = dict(zip(flat[0::2], flat[1::2]))
        for name in sorted(defaults):
            print("get\t%s\t%s" % (name, defaults[name]))
        for name in sorted(defaults):
            if name in SKIP:
                continue
            for v in PROBES:
                r = c.call("CONFIG", "SET", name, v)
                r = r[1:]
                print("set\t%s\t%s\t%s" % (name, v, r))
                if r == "OK":
                    back = c.call("CONFIG", "SET", name, defaults[name])
                    assert back == "+OK", (name, back)
                if r.endswith("can't set immutable config"):
                    break
    finally:
        p.kill()
        p.wait()


main()
