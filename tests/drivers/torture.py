#!/usr/bin/env python3
"""Every protocol abuse at once against one klog-serve, for a bounded time.

usage: torture.py PORT SECONDS READY_FILE [MAX_REQUEST]

Threads, each bounded by an iteration count and by SECONDS:
  idle      thousands of connections held open, half of them stopped in
            the middle of a frame (READY_FILE is created once they are up)
  random    connections that send random bytes and vanish
  cut       produce frames cut at every length, then the connection closed
  sizes     frame sizes of 2^31-1, just over MAX_REQUEST, negative, below
            the header: answered REQUEST_TOO_LARGE or INVALID_REQUEST, and
            closed
  lies      counts and lengths inside bodies that lie (huge part counts,
            string lengths past the end, negative sizes): INVALID_REQUEST
            or REQUEST_TOO_LARGE, the connection kept and still answering
  deaf      a client that pipelines 1 MiB fetches and never reads: the
            broker must stop reading it (it can send only so much)
  flood     a client that pipelines tiny METADATA requests as fast as it
            can and checks every answer's correlation id
  drip      a valid request sent one byte at a time, slowly

Exits 1 if an answer is wrong (error code, correlation, order); prints a
summary line of what it did.
"""

import os
import random
import resource
import socket
import struct
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import klogwire as kw  # noqa: E402

INVALID_REQUEST, REQUEST_TOO_LARGE = 11, 14


class Torture:
    def __init__(self, port, seconds, ready, max_request):
        self.port, self.ready = port, ready
        self.deadline = time.monotonic() + seconds
        self.max_request = max_request
        self.counts = {}
        self.failures = []
        self.lock = threading.Lock()

    def more(self):
        return time.monotonic() < self.deadline and not self.failures

    def count(self, what, n=1):
        with self.lock:
            self.counts[what] = self.counts.get(what, 0) + n

    def fail(self, what):
        with self.lock:
            self.failures.append(what)

    def conn(self, timeout=5):
        s = socket.create_connection(("127.0.0.1", self.port),
                                     timeout=timeout)
        return s

    # ---- abusers ----

    def idle(self):
        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
        n = max(100, min(3000, hard - 300))
        held = []
        try:
            for i in range(n):
                s = self.conn()
                if i % 2:
                    s.sendall(b"\0\0\0\x40\0\1\0\1")  # 8 of 64 bytes
                held.append(s)
            self.count("idle", n)
        finally:
            open(self.ready, "w").close()
        while self.more():
            time.sleep(0.1)
        for s in held:
            s.close()

    def random_bytes(self):
        rnd = random.Random(1)
        for _ in range(400):
            if not self.more():
                break
            try:
                s = self.conn()
                data = os.urandom(rnd.randint(1, 30000))
                if rnd.random() < 0.3:  # a plausible frame size first
                    data = struct.pack(">i", rnd.randint(8, 5000)) + data
                s.sendall(data)
                s.close()
            except OSError:
                pass
            self.count("random")

    def cut(self):
        entry = kw.entry(b"cut")
        frame = kw.produce(9, [("cut", 0, entry)], acks=1)
        for i in range(3):
            for n in range(1, len(frame)):
                if not self.more():
                    return
                s = self.conn()
                s.sendall(frame[:n])
                s.close()
                self.count("cut")

    def answer_then_close(self, raw, want_err):
        s = self.conn()
        s.sendall(raw)
        corr, err, body = kw.read_response(s)
        if err != want_err or body:
            self.fail("size %r: error %d" % (raw[:4], err))
        if s.recv(1) != b"":
            self.fail("size %r: not closed" % raw[:4])
        s.close()

    def sizes(self):
        for _ in range(100):
            if not self.more():
                return
            for size, err in ((0x7fffffff, REQUEST_TOO_LARGE),
                              (self.max_request + 1, REQUEST_TOO_LARGE),
                              (-1, INVALID_REQUEST),
                              (-0x80000000, INVALID_REQUEST),
                              (0, INVALID_REQUEST),
                              (7, INVALID_REQUEST)):
                try:
                    self.answer_then_close(
                        struct.pack(">ihhi", size, 0, 1, 5), err)
                except (OSError, ConnectionError) as e:
                    self.fail("size %d: %s" % (size, e))
                self.count("sizes")

    def lies(self):
        bodies = [
            (0, struct.pack(">hii", 1, 1000, 0x7fffffff)),  # parts
            (0, struct.pack(">hii", 1, 1000, 1) + b"\x7f\xff" + b"x"),
            (0, struct.pack(">hii", 1, 1000, 1) + kw.string("t")
             + struct.pack(">ii", 0, -5)),                   # set size
            (0, struct.pack(">hii", 1, 1000, 1) + kw.string("t")
             + struct.pack(">ii", 0, 0x7fffffff)),
            (0, struct.pack(">hii", 7, 1000, 0)),             # acks 7
            (1, struct.pack(">iii", -1, 0, 0)),               # max wait
            (1, struct.pack(">iii", 0, 0, 1) + kw.string("t")
             + struct.pack(">iqi", 0, 0, -1)),                # max bytes
            (4, struct.pack(">i", 1) + kw.string("t")
             + struct.pack(">iqi", 0, -3, 1)),                # time -3
            (5, struct.pack(">i", -1)),
            (5, struct.pack(">i", 1) + struct.pack(">h", -1)),
            (5, struct.pack(">i", 100000) + kw.string("t") * 10),
        ]
        try:
            s = self.conn()
        except OSError as e:
            return self.fail("lies: %s" % e)
        corr = 0
        for _ in range(200):
            if not self.more():
                break
            for api, body in bodies:
                corr += 1
                s.sendall(kw.request(api, corr, body))
                got, err, rest = kw.read_response(s)
                if got != corr or err not in (INVALID_REQUEST,
                                              REQUEST_TOO_LARGE):
                    return self.fail("lie %d/%r: corr %d error %d"
                                     % (api, body[:12], got, err))
                self.count("lies")
            # And the connection still serves a good request.
            corr += 1
            s.sendall(kw.metadata(corr))
            got, err, _ = kw.read_response(s)
            if (got, err) != (corr, 0):
                return self.fail("after lies: corr %d error %d"
                                 % (got, err))
        s.close()

    def deaf(self):
        try:
            s = self.conn()
            # 2 MiB to fetch, then fetches of all of it, never read.
            recs = [os.urandom(1000) for _ in range(1000)]
            for corr in range(2):
                s.sendall(kw.produce(corr, [("deaf", 0, kw.message_set(recs))],
                                     acks=1))
                if kw.read_response(s)[1] != 0:
                    return self.fail("deaf: produce refused")
            s.setblocking(False)
            frame = kw.fetch(1, [("deaf", 0, 0, 1 << 20)])
            sent = 0
            while self.more() and sent < 1000000:
                try:
                    s.send(frame)
                    sent += 1
                except BlockingIOError:
                    time.sleep(0.05)
            if sent == 1000000:
                self.fail("deaf: the broker never stopped reading")
            self.count("deaf", sent)
            s.close()
        except OSError as e:
            self.fail("deaf: %s" % e)

    def flood(self):
        try:
            s = self.conn(timeout=10)
        except OSError as e:
            return self.fail("flood: %s" % e)
        got = [0]

        def reader():
            try:
                while True:
                    corr, err, _ = kw.read_response(s)
                    if corr != got[0] or err != 0:
                        self.fail("flood: corr %d (want %d) error %d"
                                  % (corr, got[0], err))
                        return
                    got[0] += 1
            except (OSError, ConnectionError):
                pass

        rx = threading.Thread(target=reader, daemon=True)
        rx.start()
        sent = 0
        try:
            while self.more() and sent < 300000:
                s.sendall(b"".join(kw.metadata(sent + i, ["good"])
                                   for i in range(100)))
                sent += 100
        except OSError as e:
            self.fail("flood: %s" % e)
        deadline = time.monotonic() + 10
        while got[0] < sent and time.monotonic() < deadline:
            time.sleep(0.01)
        if got[0] != sent:
            self.fail("flood: %d of %d answered" % (got[0], sent))
        s.close()
        self.count("flood", sent)

    def drip(self):
        frame = kw.metadata(77, ["good"])
        for _ in range(5):
            if not self.more():
                return
            try:
                s = self.conn()
                for b in frame:
                    s.sendall(bytes([b]))
                    time.sleep(0.01)
                corr, err, _ = kw.read_response(s)
                if (corr, err) != (77, 0):
                    self.fail("drip: corr %d error %d" % (corr, err))
                s.close()
            except (OSError, ConnectionError) as e:
                self.fail("drip: %s" % e)
            self.count("drip")

    def run(self):
        workers = [threading.Thread(target=f, daemon=True) for f in (
            self.idle, self.random_bytes, self.cut, self.sizes, self.lies,
            self.deaf, self.flood, self.drip)]
        for w in workers:
            w.start()
        for w in workers:
            w.join(max(1, self.deadline - time.monotonic() + 30))
        if any(w.is_alive() for w in workers):
            self.fail("a worker hangs")
        print("torture: " + ", ".join("%s %d" % kv
                                       for kv in sorted(self.counts.items())))
        for f in self.failures:
            print("torture: FAILED: %s" % f, file=sys.stderr)
        return 1 if self.failures else 0


def main():
    if len(sys.argv) not in (4, 5):
        sys.exit(__doc__.strip().splitlines()[2])
    port, seconds, ready = int(sys.argv[1]), float(sys.argv[2]), sys.argv[3]
    max_request = int(sys.argv[4]) if len(sys.argv) == 5 else 100 << 20
    sys.exit(Torture(port, seconds, ready, max_request).run())


if __name__ == "__main__":
    main()
