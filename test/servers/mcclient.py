#!/usr/bin/env python3
"""mcclient.py PORT: a memcached text-protocol client for scry's client mode (docs/servers.md).

It reads WITCHER's operation lines on standard input (i;KEY;VALUE;...; set, g;KEY;...; get,
d;KEY;...; delete), sends each as one request to memcached on 127.0.0.1:PORT, waits for the whole
answer and prints it on one line: STORED, NOT_STORED, DELETED, NOT_FOUND, or the value got (a miss
prints MISS). A connection the server closes is an error (exit 1).
"""
import socket
import sys


def answer(f, op):
    """Reads the answer to one request of kind op from the server's stream f."""
    line = f.readline()
    if not line:
        raise EOFError("the server closed the connection")
    line = line.rstrip(b"\r\n")
    if op != "g":
        return line.decode()
    if line == b"END":
        return "MISS"
    if not line.startswith(b"VALUE "):
        return line.decode()
    n = int(line.split()[3])
    data = f.read(n + 2)[:n]
    if f.readline().rstrip(b"\r\n") != b"END":
        raise ValueError("no END after the value")
    return data.decode(errors="replace")


def main():
    s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    f = s.makefile("rb")
    out = sys.stdout
    for raw in sys.stdin:
        fields = raw.rstrip("\n").split(";")
        op = fields[0]
        if op == "i" and len(fields) >= 3:
            key, val = fields[1], fields[2]
            req = "set %s 0 0 %d\r\n%s\r\n" % (key, len(val), val)
        elif op == "g" and len(fields) >= 2:
            req = "get %s\r\n" % fields[1]
        elif op == "d" and len(fields) >= 2:
            req = "delete %s\r\n" % fields[1]
        else:
            print("bad operation: %r" % raw, file=sys.stderr)
            return 2
        s.sendall(req.encode())
        try:
            out.write(answer(f, op) + "\n")
        except (EOFError, ValueError) as e:
            print("mcclient: %s" % e, file=sys.stderr)
            return 1
        out.flush()
    s.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
