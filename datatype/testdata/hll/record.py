#!/usr/bin/env python3
"""Records redis-server's answers to the HyperLogLog script ops.txt into recorded.txt.

Usage: record.py PORT  (a redis-server 7.0.15 on 127.0.0.1:PORT; its data is flushed).

Each op of ops.txt is copied to recorded.txt, followed by what Redis answered:
  get KEY                  -> "= HEX" (the value's bytes, hex)
  pfcount KEY...           -> "= N" or "= !ERROR"
  anything else            -> "= REPLY"
Ops that generate elements (the Go test expands them the same way):
  pfaddrange KEY PREFIX START END BATCH   PFADD KEY PREFIX<i> for i in [START, END), BATCH per call
  pfaddlen KEY N                          PFADD KEY "" "a" "aa" ... (lengths 0..N-1, bytes 'a'+i%26)
"""
import socket
import sys


class Conn:
    def __init__(self, port):
        self.s = socket.create_connection(("127.0.0.1", port))
        self.f = self.s.makefile("rb")

    def call(self, *args):
        out = [b"*%d\r\n" % len(args)]
        for a in args:
            if isinstance(a, str):
                a = a.encode()
            out.append(b"$%d\r\n%s\r\n" % (len(a), a))
        self.s.sendall(b"".join(out))
        return self.read()

    def read(self):
        line = self.f.readline()[:-2]
        t, rest = line[:1], line[1:]
        if t in (b"+", b":"):
            return rest
        if t == b"-":
            return b"!" + rest
        if t == b"$":
            n = int(rest)
            if n < 0:
                return None
            data = self.f.read(n + 2)[:-2]
            return data
        if t == b"*":
            return [self.read() for _ in range(int(rest))]
        raise ValueError(line)


def lens(n):
    return [bytes((ord("a") + i % 26) for i in range(k)) for k in range(n)]


def main():
    c = Conn(int(sys.argv[1]))
    c.call("FLUSHALL")
    c.call("CONFIG", "SET", "hll-sparse-max-bytes", "3000")
    out = []
    for line in open("ops.txt"):
        line = line.rstrip("\n")
        out.append(line)
        if not line or line.startswith("#"):
            continue
        w = line.split(" ")
        op = w[0]
        if op == "pfaddrange":
            key, prefix, start, end, batch = w[1], w[2], int(w[3]), int(w[4]), int(w[5])
            r = []
            for i in range(start, end, batch):
                r.append(c.call("PFADD", key, *[prefix + str(j) for j in range(i, min(i + batch, end))]))
            out.append("= " + b",".join(r).decode())
        elif op == "pfaddlen":
            out.append("= " + c.call("PFADD", w[1], *lens(int(w[2]))).decode())
        elif op == "get":
            out.append("= " + c.call("GET", w[1]).hex())
        elif op == "pfcount":
            out.append("= " + c.call("PFCOUNT", *w[1:]).decode())
        elif op == "config":
            out.append("= " + c.call("CONFIG", "SET", w[1], w[2]).decode())
        else:
            r = c.call(op.upper(), *w[1:])
            out.append("= " + (r.decode() if isinstance(r, bytes) else repr(r)))
    open("recorded.txt", "w").write("\n".join(out) + "\n")


main()
