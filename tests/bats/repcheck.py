#!/usr/bin/python3
"""Replication test helper (tests/bats/replication.bash, tests/soak).

Subcommands (run with Debian's /usr/bin/python3; standard library only):

  gen P RATE STOPFILE COUNTFILE
      Write "P:1", "P:2", ... one a line to stdout, RATE lines a second,
      flushed each, until STOPFILE exists; then write how many lines were
      written to COUNTFILE and exit 0 (1 if stdout broke: the reader died).

  isr-full NPART RF      (klog-group topics -t T -J on stdin)
      Exit 0 iff there are NPART partitions 0..NPART-1, each with a leader
      among its RF replicas and every replica in the ISR.

  get P KEY              (klog-group topics -t T -J on stdin)
      Print KEY of partition P: a number, or a list joined by commas.

  settled TOPIC LISTFILE DIR...
      Exit 0 iff every replica (DIR/TOPIC-p) of every partition in LISTFILE
      (klog-consume -L) ends at its committed end: HW = LEO everywhere.

  check --topic T --list FILE --final FILE --sent P=N... [--consumed FILE...]
        [--dirs DIR...] [--wait SECONDS]
      After healing, with the producers stopped:
        --list      klog-consume -L -t T output: "topic\tpartition\tlo\thi"
                    (hi: the committed end)
        --final     klog-consume -t T -o beginning -e -f '%p\t%o\t%O\t%s\n'
        --consumed  the same format, from consumers that ran during the faults
        --sent      P=N: the producer of partition P read N lines ("P:1" ..
                    "P:N") and exited 0, so every one was acknowledged
        --dirs      broker data directories; the replicas of partition p are
                    DIR/T-p (where present)
      Checks: the final log chains from lo to hi; no acknowledged record is
      missing (zero tolerance); per partition seqs go 1, 2, 3 ... with only
      retry duplicates of earlier seqs between; every consumed record is in
      the final log at the same offset; every replica ends at hi (waiting up
      to --wait seconds for followers) and all replicas are byte-identical
      over [max log start, hi), bytes that parse to exactly the final log's
      records there.  Exit 0 and one "repcheck: ok ..." line, or 1 and one
      "repcheck: FAIL ..." line per problem.
"""

import hashlib
import json
import os
import re
import struct
import sys
import time
import zlib

SEGMENT = re.compile(r"^([0-9]{20})\.(klog|kafka)$")


def gen(argv):
    part, rate, stop, countfile = argv[0], float(argv[1]), argv[2], argv[3]
    n, status = 0, 0
    gap = 1.0 / rate if rate > 0 else 0.0
    t = time.monotonic()
    try:
        while not os.path.exists(stop):
            n += 1
            sys.stdout.write("%s:%d\n" % (part, n))
            sys.stdout.flush()
            t += gap
            d = t - time.monotonic()
            if d > 0:
                time.sleep(d)
            else:
                t = time.monotonic()
    except BrokenPipeError:
        status = 1
    tmp = countfile + ".tmp"
    with open(tmp, "w") as f:
        f.write("%d\n" % n)
    os.rename(tmp, countfile)
    try:
        sys.stdout.close()
    except BrokenPipeError:
        status = 1
    return status


def topics(stream):
    out = {}
    for line in stream:
        line = line.strip()
        if line:
            o = json.loads(line)
            out[int(o["partition"])] = o
    return out


def isr_full(argv):
    npart, rf = int(argv[0]), int(argv[1])
    t = topics(sys.stdin)
    if sorted(t) != list(range(npart)):
        return 1
    for o in t.values():
        reps = [int(x) for x in o.get("replicas", [])]
        isr = [int(x) for x in o.get("isr", [])]
        leader = o.get("leader")
        if len(reps) != rf or sorted(isr) != sorted(reps):
            return 1
        if leader is None or int(leader) not in reps:
            return 1
    return 0


def get(argv):
    p, key = int(argv[0]), argv[1]
    o = topics(sys.stdin).get(p)
    if o is None or key not in o or o[key] is None:
        return 1
    v = o[key]
    print(",".join(str(x) for x in v) if isinstance(v, list) else v)
    return 0


def read_records(path, torn_ok=False):
    """(partition, offset, next, payload) lines of -f '%p\t%o\t%O\t%s\n'.
    With torn_ok, a last line without its newline (a consumer stopped while
    writing it) is left out."""
    out = []
    with open(path, "rb") as f:
        for raw in f:
            if torn_ok and not raw.endswith(b"\n"):
                break
            raw = raw.rstrip(b"\n")
            if not raw:
                continue
            fields = raw.split(b"\t", 3)
            if len(fields) != 4:
                raise ValueError("%s: bad line %r" % (path, raw[:80]))
            out.append((int(fields[0]), int(fields[1]), int(fields[2]),
                        fields[3]))
    return out


def replica(d):
    """(start, end, [(base, path, size)]) of a partition directory."""
    segs = []
    for name in os.listdir(d):
        m = SEGMENT.match(name)
        if m:
            path = os.path.join(d, name)
            segs.append((int(m.group(1)), path, os.path.getsize(path)))
    segs.sort()
    if not segs:
        return 0, 0, []
    return segs[0][0], segs[-1][0] + segs[-1][2], segs


def read_range(segs, lo, hi):
    """Bytes [lo, hi) of the concatenated segments; None where a gap is."""
    out = bytearray()
    pos = lo
    for base, path, size in segs:
        if base + size <= pos or base >= hi:
            continue
        if base > pos:
            return None
        with open(path, "rb") as f:
            f.seek(pos - base)
            want = min(hi, base + size) - pos
            chunk = f.read(want)
        if len(chunk) != want:
            return None
        out += chunk
        pos += want
    return bytes(out) if pos == hi else None


def parse_entries(data, base):
    """[(offset, next, payload)] of magic-0/1 uncompressed entries."""
    out, i = [], 0
    while i < len(data):
        if i + 4 > len(data):
            raise ValueError("partial length at %d" % (base + i))
        (n,) = struct.unpack(">I", data[i:i + 4])
        if n < 5 or i + 4 + n > len(data):
            raise ValueError("bad length %d at %d" % (n, base + i))
        magic = data[i + 4]
        if magic == 0:
            crc = struct.unpack(">I", data[i + 5:i + 9])[0]
            payload = data[i + 9:i + 4 + n]
        elif magic == 1 and n >= 6:
            if data[i + 5] & 3:
                raise ValueError("compressed entry at %d" % (base + i))
            crc = struct.unpack(">I", data[i + 6:i + 10])[0]
            payload = data[i + 10:i + 4 + n]
        else:
            raise ValueError("magic %d at %d" % (magic, base + i))
        if zlib.crc32(payload) != crc:
            raise ValueError("bad CRC at %d" % (base + i))
        out.append((base + i, base + i + 4 + n, payload))
        i += 4 + n
    return out


def check(argv):
    opts = {"--consumed": [], "--dirs": [], "--sent": []}
    key = None
    for a in argv:
        if a.startswith("--"):
            key = a
            opts.setdefault(key, [])
        elif key is None:
            raise SystemExit("repcheck check: %s: no option" % a)
        else:
            opts[key].append(a)
    topic = opts["--topic"][0]
    wait = float((opts.get("--wait") or ["0"])[0])
    fails = []

    def fail(msg):
        fails.append(msg)
        print("repcheck: FAIL " + msg)

    ends = {}
    with open(opts["--list"][0]) as f:
        for line in f:
            fields = line.rstrip("\n").split("\t")
            if len(fields) == 4 and fields[0] == topic:
                ends[int(fields[1])] = (int(fields[2]), int(fields[3]))
    sent = {}
    for s in opts["--sent"]:
        p, n = s.split("=")
        sent[int(p)] = int(n)
    if not ends:
        fail("no partitions of %s listed" % topic)
    final = {}
    for p, off, nxt, payload in read_records(opts["--final"][0]):
        final.setdefault(p, []).append((off, nxt, payload))

    acked = dups = 0
    at = {}
    for p in sorted(set(ends) | set(sent) | set(final)):
        recs = final.get(p, [])
        lo, hi = ends.get(p, (0, 0))
        if p not in ends:
            fail("partition %d: not listed by klog-consume -L" % p)
        # The final log chains from lo to hi.
        pos = lo
        for off, nxt, payload in recs:
            if off != pos:
                fail("partition %d: record at %d, expected one at %d"
                     % (p, off, pos))
                break
            if nxt <= off + 4:
                fail("partition %d: next offset %d after %d" % (p, nxt, off))
                break
            pos = nxt
        else:
            if pos != hi:
                fail("partition %d: final read ends at %d, committed end %d"
                     % (p, pos, hi))
        at[p] = {off: payload for off, _, payload in recs}
        # Order: a new seq is the next one; anything else repeats one seen.
        top, seen = 0, set()
        prefix = b"%d:" % p
        for off, _, payload in recs:
            if not payload.startswith(prefix):
                fail("partition %d: foreign record %r at %d"
                     % (p, payload[:40], off))
                continue
            try:
                seq = int(payload[len(prefix):])
            except ValueError:
                fail("partition %d: bad record %r at %d" % (p, payload[:40], off))
                continue
            if seq == top + 1:
                top = seq
            elif seq <= top:
                dups += 1
            else:
                fail("partition %d: seq %d at %d follows %d: %d..%d skipped "
                     "(reordered or lost)" % (p, seq, off, top, top + 1, seq - 1))
                top = seq
            seen.add(seq)
        # No acknowledged record lost.
        n = sent.get(p, 0)
        acked += n
        missing = [s for s in range(1, n + 1) if s not in seen]
        if missing:
            fail("partition %d: %d of %d acknowledged records lost (first %s)"
                 % (p, len(missing), n, missing[:10]))
        if n and not recs:
            fail("partition %d: final log empty" % p)

    # No phantom reads: what a consumer saw is in the final log, same offset.
    consumed = 0
    for path in opts["--consumed"]:
        bad = 0
        for p, off, nxt, payload in read_records(path, True):
            consumed += 1
            if at.get(p, {}).get(off) != payload:
                bad += 1
                if bad <= 5:
                    fail("%s: partition %d offset %d: consumed %r, final log "
                         "has %r" % (os.path.basename(path), p, off,
                                     payload[:40], at.get(p, {}).get(off)))
        if bad > 5:
            fail("%s: %d consumed records not in the final log"
                 % (os.path.basename(path), bad))

    # Replicas: all end at the committed end, byte-identical from the
    # highest log start, and those bytes are the final log's records.
    compared = 0
    for p in sorted(ends):
        lo, hi = ends[p]
        dirs = [os.path.join(d, "%s-%d" % (topic, p)) for d in opts["--dirs"]]
        dirs = [d for d in dirs if os.path.isdir(d)]
        if not opts["--dirs"]:
            continue
        if len(dirs) < 2 and hi == 0:
            continue
        if len(dirs) < 2:
            fail("partition %d: %d replica directories" % (p, len(dirs)))
            continue
        deadline = time.monotonic() + wait
        while True:
            reps = [(d,) + replica(d) for d in dirs]
            if all(r[2] == hi for r in reps) or time.monotonic() >= deadline:
                break
            time.sleep(0.2)
        for d, start, end, segs in reps:
            if end != hi:
                fail("partition %d: %s ends at %d, committed end %d"
                     % (p, d, end, hi))
        start = max(r[1] for r in reps)
        digests = {}
        for d, _, end, segs in reps:
            data = read_range(segs, start, min(hi, end))
            if data is None:
                fail("partition %d: %s has a gap in [%d, %d)"
                     % (p, d, start, min(hi, end)))
                continue
            digests[d] = (hashlib.sha256(data[:hi - start]).hexdigest(), data)
        if len({v[0] for v in digests.values()}) > 1:
            fail("partition %d: replicas differ over [%d, %d): %s"
                 % (p, start, hi, ", ".join("%s %s" % (d, v[0][:12])
                                             for d, v in sorted(digests.items()))))
        if digests:
            d, (h, data) = sorted(digests.items())[0]
            try:
                entries = parse_entries(data, start)
            except ValueError as e:
                fail("partition %d: %s: %s" % (p, d, e))
                entries = []
            want = [r for r in final.get(p, []) if r[0] >= start]
            if entries != want:
                fail("partition %d: %s's bytes over [%d, %d) are not the "
                     "final log's %d records (%d entries)"
                     % (p, d, start, hi, len(want), len(entries)))
            compared += hi - start
        epochs = set()
        for d in dirs:
            try:
                with open(os.path.join(d, "leader-epochs"), "rb") as f:
                    epochs.add(f.read())
            except OSError:
                pass
        if len(epochs) > 1:
            print("repcheck: note: partition %d: leader-epochs files differ"
                  % p)

    if fails:
        return 1
    print("repcheck: ok: %d partitions, %d acknowledged, %d in the final log "
          "(%d retry duplicates), %d consumed, replicas identical over %d bytes"
          % (len(ends), acked, sum(len(v) for v in final.values()), dups,
             consumed, compared))
    return 0


def settled(argv):
    """settled TOPIC LISTFILE DIR...: every replica of every listed
    partition ends at the committed end (HW = LEO everywhere)."""
    topic, listfile, dirs = argv[0], argv[1], argv[2:]
    n = 0
    with open(listfile) as f:
        for line in f:
            fields = line.rstrip("\n").split("\t")
            if len(fields) != 4 or fields[0] != topic:
                continue
            n += 1
            for d in dirs:
                d = os.path.join(d, "%s-%s" % (topic, fields[1]))
                if os.path.isdir(d) and replica(d)[1] != int(fields[3]):
                    return 1
    return 0 if n else 1


def main():
    if len(sys.argv) < 2:
        sys.stderr.write(__doc__)
        return 64
    cmd, argv = sys.argv[1], sys.argv[2:]
    if cmd == "gen":
        return gen(argv)
    if cmd == "isr-full":
        return isr_full(argv)
    if cmd == "get":
        return get(argv)
    if cmd == "settled":
        return settled(argv)
    if cmd == "check":
        return check(argv)
    sys.stderr.write("repcheck: unknown command %s\n" % cmd)
    return 64


if __name__ == "__main__":
    sys.exit(main())
