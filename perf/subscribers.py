#!/usr/bin/env python3
"""Hold N subscribers on one channel of a Redis-protocol server and discard what
they receive; on SIGTERM print the bytes received (perf/compare-programs.sh
divides by the frame size to count delivered messages). Loopback only."""
import selectors, signal, socket, sys

port, n, channel = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3].encode()
sel = selectors.DefaultSelector()
socks = []
for _ in range(n):
    s = socket.create_connection(("127.0.0.1", port))
    s.sendall(b"*2\r\n$9\r\nSUBSCRIBE\r\n$%d\r\n%s\r\n" % (len(channel), channel))
    s.setblocking(False)
    sel.register(s, selectors.EVENT_READ)
    socks.append(s)
total = 0
confirm = len(b"*3\r\n$9\r\nsubscribe\r\n$%d\r\n%s\r\n:1\r\n" % (len(channel), channel))
stop = False
def on_term(*_):
    global stop
    stop = True
signal.signal(signal.SIGTERM, on_term)
print("ready", flush=True)
while not stop:
    for key, _ in sel.select(timeout=0.2):
        try:
            data = key.fileobj.recv(1 << 20)
        except BlockingIOError:
            continue
        total += len(data)
print(total - confirm * n, flush=True)
