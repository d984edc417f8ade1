#!/usr/bin/env python3
"""kill -9 of klog-serve at random moments during an acks=all produce.

usage: crash.py SERVE_BIN CONSUME_BIN DATA_DIR PORT ROUNDS [SEED]

Each round starts the broker on DATA_DIR, checks what it holds, runs a
pipelining producer (acks -1, up to 8 requests in flight, plain and gzip
batches, two partitions) for a random fraction of a second, and kills the
broker with SIGKILL.  Every produce response that came back NONE is
written down with its offset and records.  In some rounds the tail of one
partition is then torn, as a power loss could leave it: cut at a random
point past everything acknowledged (which was fsynced) and followed by
junk.

After each restart, and once more after a final clean stop:
  - the recovery log line gives exactly the bytes that were not whole,
    CRC-valid entries at the end of the torn segment;
  - klog-consume -o beginning -e exits 0 (nothing corrupt is served);
  - every acknowledged batch is there once, whole, at the offset its
    response gave, in the order of the acknowledgements; no record is
    there twice, and nothing is there that was not sent.

Prints one summary line; exits 1 with the reason on the first violation.
"""

import collections
import os
import random
import re
import signal
import socket
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import klogwire as kw  # noqa: E402

TOPIC = "crash"
PARTITIONS = 2
SEGMENT_BYTES = 64 * 1024
IN_FLIGHT = 8


class Failure(Exception):
    pass


def wait_port(port, proc, seconds=10):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise Failure("klog-serve exited with %d at start"
                          % proc.returncode)
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.02)
    raise Failure("klog-serve did not listen within %ds" % seconds)


class Producer(threading.Thread):
    """Sends batches until the connection breaks; acked holds, in order of
    the responses, (partition, offset, records, gzip, set size) for every
    NONE."""

    def __init__(self, port, rnd, tag):
        super().__init__(daemon=True)
        self.port, self.rnd, self.tag = port, rnd, tag
        self.acked = []
        self.sent = 0
        self.errors = collections.Counter()
        self.window = threading.Semaphore(IN_FLIGHT)
        self.pending = collections.deque()
        self.lock = threading.Lock()
        self.stop = False

    def batch(self, n):
        recs = [("%s.%d.%d" % (self.tag, self.sent, i)).encode()
                for i in range(n)]
        gz = self.rnd.random() < 0.2
        mset = kw.gzip_entry(recs) if gz else kw.message_set(recs)
        return recs, gz, mset

    def receive(self, sock):
        try:
            while True:
                corr, err, body = kw.read_response(sock)
                with self.lock:
                    want, part, recs, gz, size = self.pending.popleft()
                self.window.release()
                if corr != want:
                    raise Failure("response %d for request %d"
                                  % (corr, want))
                if err != 0:
                    self.errors[kw.WIRE_ERRORS.get(err, err)] += 1
                    continue
                (topic, p, perr, offset), = kw.parse_produce_response(body)
                if (topic, p) != (TOPIC, part):
                    raise Failure("response for %s-%d" % (topic, p))
                if perr != 0:
                    self.errors[kw.WIRE_ERRORS.get(perr, perr)] += 1
                    continue
                self.acked.append((part, offset, recs, gz, size))
        except (OSError, ConnectionError):
            pass
        finally:
            self.stop = True
            for _ in range(IN_FLIGHT):
                self.window.release()

    def run(self):
        try:
            sock = kw.connect(self.port)
        except OSError:
            return
        sock.settimeout(None)
        rx = threading.Thread(target=self.receive, args=(sock,),
                              daemon=True)
        rx.start()
        try:
            while not self.stop:
                self.window.acquire()
                if self.stop:
                    break
                part = self.sent % PARTITIONS
                recs, gz, mset = self.batch(self.rnd.randint(1, 30))
                with self.lock:
                    self.pending.append((self.sent, part, recs, gz,
                                         len(mset)))
                sock.sendall(kw.produce(self.sent, [(TOPIC, part, mset)]))
                self.sent += 1
        except OSError:
            pass
        rx.join()
        sock.close()


class Crash:
    def __init__(self, serve, consume, data, port, rounds, seed):
        self.serve, self.consume = serve, consume
        self.data, self.port, self.rounds = data, port, rounds
        self.rnd = random.Random(seed)
        self.ledger = [[] for _ in range(PARTITIONS)]  # acked, in order
        self.batch_end = [0] * PARTITIONS  # end of the last acked batch
        self.expect_cut = {}     # partition -> bytes recovery must cut
        self.proc = None
        self.stats = collections.Counter()

    def log_path(self, rnd):
        return os.path.join(self.data, "..", "serve.%d.log" % rnd)

    def start(self, rnd):
        args = [self.serve, "-d", self.data, "-l",
                "127.0.0.1:%d" % self.port, "--segment-bytes",
                str(SEGMENT_BYTES), "--topic", "%s:%d" % (TOPIC, PARTITIONS)]
        if rnd % 3 == 2:  # batched flushes: acks=all waits for them
            args += ["--flush-ms", "30", "--flush-messages", "500"]
        log = open(self.log_path(rnd), "wb")
        self.proc = subprocess.Popen(args, stderr=log)
        log.close()
        wait_port(self.port, self.proc)

    def kill(self):
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait()
        self.proc = None

    def last_segment(self, part):
        d = os.path.join(self.data, "%s-%d" % (TOPIC, part))
        segs = sorted(f for f in os.listdir(d) if f.endswith(".klog"))
        return os.path.join(d, segs[-1]), int(segs[-1][:20])

    def tear(self, part):
        """Cut the last segment past what was acked, then add junk."""
        path, base = self.last_segment(part)
        size = os.path.getsize(path)
        floor = max(self.batch_end[part] - base, 0)
        cut = self.rnd.randint(floor, size) if size > floor else size
        junk = os.urandom(self.rnd.randint(1, 300))
        if self.rnd.random() < 0.5:
            # A plausible header that promises more than there is.
            junk = (len(junk) + 50).to_bytes(4, "big") + b"\0" + junk
        with open(path, "r+b") as f:
            f.truncate(cut)
            f.seek(cut)
            f.write(junk)
        self.stats["torn"] += 1

    def expected_cuts(self):
        """What recovery must cut from each partition's last segment."""
        for part in range(PARTITIONS):
            path, _ = self.last_segment(part)
            data = open(path, "rb").read()
            self.expect_cut[part] = len(data) - kw.valid_prefix(data)

    def check_recovery_log(self, rnd):
        text = open(self.log_path(rnd), "rb").read().decode()
        total = 0
        for part in range(PARTITIONS):
            want = self.expect_cut.get(part, 0)
            got = re.findall(r'topic "%s" partition %d: recovery truncated '
                             r'(\d+) bytes' % (TOPIC, part), text)
            if want == 0 and got:
                raise Failure("round %d: partition %d: recovery cut %s "
                              "bytes of whole entries" % (rnd, part, got[0]))
            if want > 0 and got != [str(want)]:
                raise Failure("round %d: partition %d: recovery should "
                              "cut %d bytes, log says %s"
                              % (rnd, part, want, got))
            total += want
        if rnd > 0 and "no clean-shutdown marker" not in text:
            raise Failure("round %d: no recovery after kill -9" % rnd)
        if total:
            self.stats["cut_bytes"] += total
            if ("%d bytes truncated" % total) not in text:
                raise Failure("round %d: summary line does not say %d "
                              "bytes" % (rnd, total))

    def read_partition(self, part):
        r = subprocess.run([self.consume, "-b", "127.0.0.1:%d" % self.port,
                            "-t", TOPIC, "-p", str(part), "-o", "beginning",
                            "-e", "-f", "%o\\t%s\\n"],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           timeout=60)
        if r.returncode != 0:
            raise Failure("klog-consume -p %d exited %d: %s"
                          % (part, r.returncode, r.stderr.decode().strip()))
        out = []
        for line in r.stdout.split(b"\n")[:-1]:
            off, _, payload = line.partition(b"\t")
            out.append((int(off), payload))
        return out

    def verify(self, rnd):
        total = 0
        for part in range(PARTITIONS):
            msgs = self.read_partition(part)
            where = {}
            for i, (_, payload) in enumerate(msgs):
                if not re.fullmatch(rb"r\d+\.\d+\.\d+", payload):
                    raise Failure("partition %d: a record never sent: %r"
                                  % (part, payload[:60]))
                if payload in where:
                    raise Failure("partition %d: %r twice" % (part, payload))
                where[payload] = i
            last = -1
            for offset, recs, gz in self.ledger[part]:
                if recs[0] not in where:
                    raise Failure("round %d: partition %d: acknowledged "
                                  "batch at %d lost (%r...)"
                                  % (rnd, part, offset, recs[0]))
                i = where[recs[0]]
                if i <= last:
                    raise Failure("partition %d: batch at %d out of order"
                                  % (part, offset))
                got = msgs[i:i + len(recs)]
                if [p for _, p in got] != recs:
                    raise Failure("partition %d: batch at %d not whole"
                                  % (part, offset))
                if got[0][0] != offset:
                    raise Failure("partition %d: batch acknowledged at %d "
                                  "is at %d" % (part, offset, got[0][0]))
                if gz and any(o != offset for o, _ in got):
                    raise Failure("partition %d: gzip batch at %d: inner "
                                  "offsets differ" % (part, offset))
                last = i + len(recs) - 1
            total += len(msgs)
        self.stats["records_read"] = total

    def round(self, rnd):
        self.start(rnd)
        self.check_recovery_log(rnd)
        self.verify(rnd)
        prod = Producer(self.port, random.Random(self.rnd.random()),
                        "r%d" % rnd)
        prod.start()
        time.sleep(self.rnd.uniform(0.05, 0.4))
        self.kill()
        prod.join(30)
        if prod.is_alive():
            raise Failure("round %d: the producer hangs" % rnd)
        for part, offset, recs, gz, size in prod.acked:
            self.ledger[part].append((offset, recs, gz))
            self.batch_end[part] = offset + size
        self.stats["acked_batches"] += len(prod.acked)
        self.stats["acked_records"] += sum(len(a[2]) for a in prod.acked)
        self.stats["sent_batches"] += prod.sent
        for k, v in prod.errors.items():
            self.stats["error_" + str(k)] += v
        if rnd % 3 != 0:
            self.tear(self.rnd.randrange(PARTITIONS))
        self.expected_cuts()

    def run(self):
        try:
            for rnd in range(self.rounds):
                self.round(rnd)
            final = self.rounds
            self.start(final)
            self.check_recovery_log(final)
            self.verify(final)
            self.proc.send_signal(signal.SIGTERM)
            if self.proc.wait(30) != 0:
                raise Failure("clean stop exited %d" % self.proc.returncode)
            self.proc = None
        finally:
            if self.proc is not None:
                self.proc.kill()
                self.proc.wait()
        s = self.stats
        print("crash: %d rounds of kill -9, %d of %d batches (%d records) "
              "acknowledged and all found, %d tails torn, %d bytes cut by "
              "recovery, %d records read back, errors %s"
              % (self.rounds, s["acked_batches"], s["sent_batches"],
                 s["acked_records"], s["torn"], s["cut_bytes"],
                 s["records_read"],
                 {k: v for k, v in s.items() if k.startswith("error_")}))


def main():
    if len(sys.argv) not in (6, 7):
        sys.exit(__doc__.strip().splitlines()[2])
    serve, consume, data, port, rounds = sys.argv[1:6]
    seed = int(sys.argv[6]) if len(sys.argv) == 7 else 1
    try:
        Crash(serve, consume, data, int(port), int(rounds), seed).run()
    except Failure as e:
        print("crash: FAILED: %s" % e, file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
