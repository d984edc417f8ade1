#!/usr/bin/python3
"""A lossy, slow link in user space, for tests/soak/partitions.sh.

This kernel has neither netem nor the gact action, so tc cannot drop a
share of the packets or hold them back.  This program stands in for
`tc qdisc add dev eth0 root netem loss 30% delay 50ms`: it forwards
Ethernet frames between two interfaces of the namespace it runs in, each
way with its own loss and delay.  Standard library only (Debian's
/usr/bin/python3).

  link.py run IF_A IF_B [--loss-ab PCT] [--delay-ab MS] [--loss-ba PCT]
              [--delay-ba MS] [--seed N] [--stats FILE] [--ready FILE]
      Forward every frame that arrives on IF_A out of IF_B and the other
      way round.  A frame from A to B is dropped with probability
      loss-ab %, the others leave delay-ab ms after they came, in order
      (and the same for B to A).  AF_PACKET sockets, so the interfaces
      must be up and in no bridge; frames the kernel sends on them are
      not taken.  --ready FILE is written once both sockets are bound;
      --stats FILE gets "DIR frames N dropped N bytes N" a line per
      direction every second and at the end (SIGTERM or SIGINT).

  link.py offload-off IF...
      Turn off the checksum and segmentation offloads of these
      interfaces (ethtool -K IF tx off sg off tso off gso off gro off,
      by the SIOCETHTOOL ioctl: there is no ethtool here).  Frames read
      from an AF_PACKET socket must be finished, real-size packets: with
      the offloads a veth hands over 64 KB TCP super-frames with their
      checksums not yet computed, which another interface can neither
      send nor the receiver accept.

  link.py probe HOST PORT TIMEOUT
      Try one TCP connection: print "connected", "timeout" (silent: a
      cut drops every packet), "refused" (a RST came back) or
      "unreachable" (an ICMP error or a local route refused it), with
      the seconds it took.  Exit 0 whatever the outcome.

  link.py rtt HOST PORT N
      The median time of N TCP connects (seconds), for the delay check;
      connects that time out (1 s) are left out; "-" when none worked.
"""

import ctypes
import errno
import fcntl
import heapq
import os
import random
import select
import signal
import socket
import struct
import sys
import time

ETH_P_ALL = 0x0003
PACKET_OUTGOING = 4
PACKET_IGNORE_OUTGOING = 23
SOL_PACKET = 263
SIOCETHTOOL = 0x8946
# Legacy ethtool set commands, each with a struct ethtool_value
# {u32 cmd; u32 data}: GRO, GSO, TSO, scatter-gather, tx checksums.
ETHTOOL_SETS = (0x2c, 0x24, 0x1f, 0x19, 0x17)


def offload_off(names):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    for name in names:
        for cmd in ETHTOOL_SETS:
            val = ctypes.create_string_buffer(struct.pack("II", cmd, 0))
            ifr = struct.pack("16sP", name.encode(), ctypes.addressof(val))
            try:
                fcntl.ioctl(s, SIOCETHTOOL, ifr)
            except OSError as e:
                if e.errno != errno.EOPNOTSUPP:
                    raise
    s.close()
    return 0


def opts(argv, spec):
    out, rest = dict(spec), []
    i = 0
    while i < len(argv):
        a = argv[i]
        if a.startswith("--"):
            key = a[2:]
            if key not in out:
                raise SystemExit("link.py: unknown option %s" % a)
            out[key] = argv[i + 1]
            i += 2
        else:
            rest.append(a)
            i += 1
    return out, rest


def packet_socket(name):
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW,
                      socket.htons(ETH_P_ALL))
    try:
        s.setsockopt(SOL_PACKET, PACKET_IGNORE_OUTGOING, 1)
    except OSError:
        pass  # older kernels: outgoing frames are skipped by pkttype below
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 << 20)
    s.bind((name, ETH_P_ALL))
    s.setblocking(False)
    return s


def run(argv):
    o, rest = opts(argv, {"loss-ab": "0", "delay-ab": "0", "loss-ba": "0",
                          "delay-ba": "0", "seed": "", "stats": "",
                          "ready": ""})
    if len(rest) != 2:
        raise SystemExit("usage: link.py run IF_A IF_B [options]")
    rng = random.Random(o["seed"] or None)
    a, b = packet_socket(rest[0]), packet_socket(rest[1])
    # Per direction: (from socket, to socket, loss, delay, counters)
    dirs = {
        a.fileno(): ["ab", b, float(o["loss-ab"]) / 100,
                     float(o["delay-ab"]) / 1000, [0, 0, 0]],
        b.fileno(): ["ba", a, float(o["loss-ba"]) / 100,
                     float(o["delay-ba"]) / 1000, [0, 0, 0]],
    }
    socks = {a.fileno(): a, b.fileno(): b}
    stop = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(1))
    signal.signal(signal.SIGINT, lambda *_: stop.append(1))

    def write_stats():
        if not o["stats"]:
            return
        tmp = o["stats"] + ".tmp"
        with open(tmp, "w") as f:
            for d in dirs.values():
                f.write("%s frames %d dropped %d bytes %d\n"
                        % (d[0], d[4][0], d[4][1], d[4][2]))
        os.rename(tmp, o["stats"])

    if o["ready"]:
        with open(o["ready"], "w") as f:
            f.write("%d\n" % os.getpid())
    queue, seq = [], 0  # (due, seq, socket, frame)
    next_stats = time.monotonic() + 1
    while not stop:
        now = time.monotonic()
        timeout = 0.2
        if queue:
            timeout = max(0.0, min(timeout, queue[0][0] - now))
        try:
            ready, _, _ = select.select(list(socks), [], [], timeout)
        except InterruptedError:
            continue
        now = time.monotonic()
        for fd in ready:
            d = dirs[fd]
            while True:
                try:
                    frame, addr = socks[fd].recvfrom(65536)
                except (BlockingIOError, InterruptedError):
                    break
                if addr[2] == PACKET_OUTGOING:
                    continue
                d[4][0] += 1
                d[4][2] += len(frame)
                if d[2] > 0 and rng.random() < d[2]:
                    d[4][1] += 1
                    continue
                seq += 1
                heapq.heappush(queue, (now + d[3], seq, d[1], frame))
        while queue and queue[0][0] <= now:
            _, _, out, frame = heapq.heappop(queue)
            try:
                out.send(frame)
            except OSError:
                pass  # a full queue or a frame too big: lost, like a wire
        if now >= next_stats:
            write_stats()
            next_stats = now + 1
    write_stats()
    return 0


def probe(argv):
    host, port, to = argv[0], int(argv[1]), float(argv[2])
    t = time.monotonic()
    try:
        s = socket.create_connection((host, port), timeout=to)
        s.close()
        what = "connected"
    except socket.timeout:
        what = "timeout"
    except ConnectionRefusedError:
        what = "refused"
    except OSError as e:
        what = "unreachable(%s)" % (errno.errorcode.get(e.errno, e.errno))
    print("%s %.3f" % (what, time.monotonic() - t))
    return 0


def rtt(argv):
    host, port, n = argv[0], int(argv[1]), int(argv[2])
    times = []
    for _ in range(n):
        t = time.monotonic()
        try:
            s = socket.create_connection((host, port), timeout=1)
            times.append(time.monotonic() - t)
            s.close()
        except OSError:
            pass
        time.sleep(0.02)
    if not times:
        print("-")
    else:
        times.sort()
        print("%.4f" % times[len(times) // 2])
    return 0


def main():
    if len(sys.argv) < 2:
        sys.stderr.write(__doc__)
        return 64
    cmd, argv = sys.argv[1], sys.argv[2:]
    if cmd == "run":
        return run(argv)
    if cmd == "offload-off":
        return offload_off(argv)
    if cmd == "probe":
        return probe(argv)
    if cmd == "rtt":
        return rtt(argv)
    sys.stderr.write("link.py: unknown command %s\n" % cmd)
    return 64


if __name__ == "__main__":
    sys.exit(main())
