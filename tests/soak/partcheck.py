#!/usr/bin/python3
"""Helpers of tests/soak/partitions.sh: time stamps, the poller, the checks
of one run and the report.  Standard library only (Debian's
/usr/bin/python3); the replica comparison is tests/bats/repcheck.py's.

  partcheck.py stamp
      Copy stdin to stdout, each line after the wall-clock time it arrived
      ("1767225600.123456 LINE"), flushed each: klog-produce's --report and
      the brokers' logs carry no time of their own.

  partcheck.py zkok HOST PORT
      Exit 0 iff the ZooKeeper server there answers "srvr" with a Mode.

  partcheck.py poll --zk CONNECT --topic T --parts N --brokers ID=HOST,...
                    [--port 9092] [--metrics-port 9644] [--every 0.25]
                    [--klog-group PATH]
      Until SIGTERM, every --every seconds and for each broker at once:
        metrics  GET /metrics (1 s deadline, a fresh connection each time,
                 as curl --max-time 1 would): whether it answered, how
                 long it took, and klog_zookeeper_fenced,
                 klog_zookeeper_fences_total, klog_zookeeper_session_state
                 and klog_replica_isr_size per partition when present;
        probe    on one kept connection, a PRODUCE of an empty set to each
                 partition (acks 1: it appends nothing) and an OFFSETS
                 request (latest) for each, 1 s deadline: the error code
                 per partition (0 NONE: "I lead it"; 17 NOT_LEADER), or
                 why there was no answer;
      and once per --every, klog-group -Z topics -t T -J: who leads each
      partition, its epoch and ISR, as ZooKeeper has them.  One JSON
      object per line on stdout, "t" the wall-clock time it started.

  partcheck.py check --run DIR --scenario S --timing K --zks MS --lag S
                     --parts N --metrics-gap S [--result FILE]
      The checks and figures of one run, from DIR's files (see
      partitions.sh): events, report, poll, consumed, list, final,
      broker-ID.log, broker-ID/T-p.  Prints one line per finding and the
      run's summary; appends its JSON to --result.  Exit 0 if every
      target of the scenario passed, 1 if one failed, 2 if the harness
      itself failed (a cut that was not silent, a link that did not lose,
      a file missing).

  partcheck.py report FILE
      The table of every run's result in FILE (check --result), totals,
      exit 0 only if all passed (1 a target failed, 2 a harness failure).
"""

import json
import os
import signal
import socket
import struct
import subprocess
import sys
import threading
import time

sys.dont_write_bytecode = True  # no __pycache__ in the tree
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "bats"))
import repcheck  # noqa: E402

TOPIC = "part"
NOT_LEADER = 17


# ---------------------------------------------------------------- stamp

def stamp(argv):
    # Lives as long as its input: a Ctrl-C ends the writer, then this.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    out = sys.stdout.buffer
    for line in sys.stdin.buffer:
        if not line.endswith(b"\n"):
            line += b"\n"
        out.write(b"%.6f " % time.time() + line)
        out.flush()
    return 0


def zkok(argv):
    try:
        s = socket.create_connection((argv[0], int(argv[1])), timeout=2)
        s.settimeout(2)
        s.sendall(b"srvr")
        data = b""
        while True:
            d = s.recv(4096)
            if not d:
                break
            data += d
        s.close()
    except OSError:
        return 1
    return 0 if b"Mode:" in data else 1


# ---------------------------------------------------------------- poll

def s16(text):
    b = text.encode()
    return struct.pack(">h", len(b)) + b


class Conn:
    """One kept klog connection, with a deadline per request."""

    def __init__(self, host, port):
        self.host, self.port, self.sock, self.cid = host, port, None, 0

    def close(self):
        if self.sock is not None:
            self.sock.close()
        self.sock = None

    def request(self, api, body, deadline):
        if self.sock is None:
            self.sock = socket.create_connection(
                (self.host, self.port),
                timeout=max(0.01, deadline - time.monotonic()))
        self.cid += 1
        self.sock.settimeout(max(0.01, deadline - time.monotonic()))
        self.sock.sendall(struct.pack(">ihhi", 8 + len(body), api, 1,
                                      self.cid) + body)
        head = self.recv(4, deadline)
        (n,) = struct.unpack(">i", head)
        frame = self.recv(n, deadline)
        cid, err = struct.unpack(">ih", frame[:6])
        if cid != self.cid:
            raise OSError("correlation %d, expected %d" % (cid, self.cid))
        return err, frame[6:]

    def recv(self, n, deadline):
        out = b""
        while len(out) < n:
            self.sock.settimeout(max(0.01, deadline - time.monotonic()))
            d = self.sock.recv(n - len(out))
            if not d:
                raise OSError("connection closed")
            out += d
        return out


def parse_parts(body, with_offsets):
    """{partition: error} of a PRODUCE or OFFSETS response body."""
    (count,) = struct.unpack(">i", body[:4])
    i, out = 4, {}
    for _ in range(count):
        (tl,) = struct.unpack(">h", body[i:i + 2])
        i += 2 + tl
        part, err = struct.unpack(">ih", body[i:i + 6])
        i += 6
        if with_offsets:
            (n,) = struct.unpack(">i", body[i:i + 4])
            i += 4 + 8 * n
        else:
            i += 8
        out[part] = err
    return out


def probe_once(conn, nparts):
    deadline = time.monotonic() + 1.0
    body = struct.pack(">hii", 1, 1000, nparts) + b"".join(
        s16(TOPIC) + struct.pack(">ii", p, 0) for p in range(nparts))
    err, resp = conn.request(0, body, deadline)
    if err:
        return {"err": "produce request error %d" % err}
    prod = parse_parts(resp, False)
    body = struct.pack(">i", nparts) + b"".join(
        s16(TOPIC) + struct.pack(">iqi", p, -1, 1) for p in range(nparts))
    err, resp = conn.request(4, body, deadline)
    if err:
        return {"err": "offsets request error %d" % err}
    offs = parse_parts(resp, True)
    return {"produce": [prod.get(p) for p in range(nparts)],
            "offsets": [offs.get(p) for p in range(nparts)]}


def scrape(host, port):
    """The metrics we want, or raise."""
    deadline = time.monotonic() + 1.0
    s = socket.create_connection((host, port), timeout=1.0)
    try:
        s.sendall(b"GET /metrics HTTP/1.0\r\nHost: %s\r\n\r\n"
                  % host.encode())
        data = b""
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise socket.timeout("deadline")
            s.settimeout(left)
            d = s.recv(65536)
            if not d:
                break
            data += d
    finally:
        s.close()
    head, _, text = data.partition(b"\r\n\r\n")
    if not head.startswith(b"HTTP/1.") or b" 200 " not in head.split(
            b"\r\n")[0] + b" ":
        raise OSError("answer %r" % head[:40])
    out, isr = {}, {}
    for line in text.decode("ascii", "replace").splitlines():
        if line.startswith("#") or not line:
            continue
        name, _, value = line.rpartition(" ")
        if name in ("klog_zookeeper_fenced", "klog_zookeeper_fences_total",
                    "klog_zookeeper_session_state"):
            out[name[len("klog_zookeeper_"):]] = float(value)
        elif name.startswith("klog_replica_isr_size{") and \
                'topic="%s"' % TOPIC in name:
            p = name.split('partition="', 1)[1].split('"', 1)[0]
            isr[p] = int(float(value))
    if isr:
        out["isr"] = isr
    return out


def poll(argv):
    o = {"zk": None, "topic": TOPIC, "parts": "3", "brokers": "",
         "port": "9092", "metrics-port": "9644", "every": "0.25",
         "klog-group": "klog-group"}
    i = 0
    while i < len(argv):
        o[argv[i][2:]] = argv[i + 1]
        i += 2
    nparts, every = int(o["parts"]), float(o["every"])
    brokers = []
    for item in o["brokers"].split(","):
        bid, host = item.split("=")
        brokers.append((int(bid), host))
    lock = threading.Lock()
    stop = threading.Event()
    out = sys.stdout

    def emit(obj):
        line = json.dumps(obj, separators=(",", ":"))
        with lock:
            out.write(line + "\n")
            out.flush()

    def tick_loop(fn):
        nxt = time.monotonic()
        while not stop.is_set():
            fn()
            nxt += every
            d = nxt - time.monotonic()
            if d > 0:
                stop.wait(d)
            else:
                nxt = time.monotonic()

    def metrics(bid, host):
        def one():
            t, t0 = time.time(), time.monotonic()
            try:
                m = scrape(host, int(o["metrics-port"]))
                m.update({"t": t, "k": "m", "b": bid, "ok": 1,
                          "lat": round(time.monotonic() - t0, 4)})
            except (OSError, ValueError) as e:
                m = {"t": t, "k": "m", "b": bid, "ok": 0,
                     "lat": round(time.monotonic() - t0, 4),
                     "why": type(e).__name__ + ": " + str(e)[:60]}
            emit(m)
        tick_loop(one)

    def probe(bid, host):
        conn = Conn(host, int(o["port"]))

        def one():
            t, t0 = time.time(), time.monotonic()
            try:
                r = probe_once(conn, nparts)
            except (OSError, ValueError, struct.error) as e:
                conn.close()
                r = {"err": type(e).__name__ + ": " + str(e)[:60]}
            r.update({"t": t, "k": "p", "b": bid,
                      "lat": round(time.monotonic() - t0, 4)})
            emit(r)
        tick_loop(one)

    def state():
        def one():
            t = time.time()
            try:
                r = subprocess.run(
                    [o["klog-group"], "-Z", o["zk"], "-T", "2", "topics",
                     "-t", o["topic"], "-J"], capture_output=True,
                    timeout=3)
                parts = {}
                for line in r.stdout.decode().splitlines():
                    line = line.strip()
                    if line:
                        j = json.loads(line)
                        parts[str(j["partition"])] = [
                            j.get("leader"), j.get("leader_epoch"),
                            j.get("isr")]
                emit({"t": t, "k": "s", "ok": int(r.returncode == 0
                                                  and bool(parts)),
                      "parts": parts})
            except (subprocess.TimeoutExpired, ValueError, OSError):
                emit({"t": t, "k": "s", "ok": 0, "parts": {}})
        tick_loop(one)

    threads = [threading.Thread(target=state, daemon=True)]
    for bid, host in brokers:
        threads.append(threading.Thread(target=metrics, args=(bid, host),
                                        daemon=True))
        threads.append(threading.Thread(target=probe, args=(bid, host),
                                        daemon=True))
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    for th in threads:
        th.start()
    while not stop.is_set():
        stop.wait(0.5)
    for th in threads:
        th.join(3)
    return 0


# ---------------------------------------------------------------- check

def read_events(path):
    """[(t, name, {k: v})] of the harness's events file."""
    out = []
    with open(path) as f:
        for line in f:
            fields = line.split()
            if len(fields) < 2:
                continue
            kv = {}
            for x in fields[2:]:
                k, _, v = x.partition("=")
                kv[k] = v
            out.append((float(fields[0]), fields[1], kv))
    return out


def read_stamped(path):
    out = []
    try:
        with open(path, "rb") as f:
            for line in f:
                ts, _, rest = line.partition(b" ")
                try:
                    out.append((float(ts), rest.rstrip(b"\n")))
                except ValueError:
                    pass
    except OSError:
        pass
    return out


def read_epochs(dirs, part):
    """[(epoch, start)] of a partition's leader-epochs file (the longest
    among the replicas)."""
    best = []
    for d in dirs:
        path = os.path.join(d, "%s-%d" % (TOPIC, part), "leader-epochs")
        try:
            with open(path) as f:
                lines = f.read().split("\n")
        except OSError:
            continue
        eps = []
        for line in lines[1:]:
            fields = line.split()
            if len(fields) == 2:
                eps.append((int(fields[0]), int(fields[1])))
        if len(eps) > len(best):
            best = eps
    return best


def fmt(v, unit="s"):
    if v is None:
        return "-"
    if isinstance(v, float):
        return "%.1f%s" % (v, unit)
    return "%s" % v


def check(argv):
    """check's work; a crash in it is the harness's failure, recorded."""
    try:
        return check_run(argv)
    except Exception as e:  # noqa: BLE001: any bug here is the harness's
        import traceback
        traceback.print_exc()
        o = dict(zip((a[2:] for a in argv[0::2]), argv[1::2]))
        res = {"run": "%s%s" % (o.get("scenario"), o.get("timing")),
               "scenario": o.get("scenario"), "timing": o.get("timing"),
               "status": "HARNESS", "targets": {}, "fig": {}, "notes": [],
               "harness": ["partcheck crashed: %s: %s"
                           % (type(e).__name__, e)]}
        print(summary_line(res))
        if o.get("result"):
            with open(o["result"], "a") as f:
                f.write(json.dumps(res) + "\n")
        return 2


def check_run(argv):
    o = {"result": ""}
    i = 0
    while i < len(argv):
        o[argv[i][2:]] = argv[i + 1]
        i += 2
    run, scen, timing = o["run"], o["scenario"], o["timing"]
    zks = float(o["zks"]) / 1000
    lag = float(o["lag"])
    nparts = int(o["parts"])
    mgap_max = float(o["metrics-gap"])
    dirs = [os.path.join(run, "broker-%d" % b) for b in (1, 2, 3)]
    notes, harness = [], []
    res = {"run": "%s%s" % (scen, timing), "scenario": scen,
           "timing": timing, "targets": {}, "fig": {}}
    fig, tg = res["fig"], res["targets"]

    def target(name, ok, text):
        tg[name] = {"ok": bool(ok), "text": text}

    def hfail(msg):
        harness.append(msg)
        print("partcheck %s%s: HARNESS %s" % (scen, timing, msg))

    def note(msg):
        notes.append(msg)
        print("partcheck %s%s: %s" % (scen, timing, msg))

    try:
        events = read_events(os.path.join(run, "events"))
    except OSError:
        events = []
        hfail("no events file")
    ev = lambda name: [e for e in events if e[1] == name]
    for e in ev("harness_error"):
        hfail(" ".join("%s=%s" % kv for kv in e[2].items()))
    bfails = []
    for e in ev("broker_fail"):
        bfails.append(" ".join("%s=%s" % kv for kv in e[2].items()))
        note("broker failure: " + bfails[-1])
    for e in ev("note"):
        note("note: " + " ".join("%s=%s" % kv for kv in e[2].items()))
    target("liveness", not bfails, "; ".join(bfails) or "ok")
    t_end = (ev("produce_stop") or ev("end") or [(time.time(), "", {})])[0][0]
    t_traffic = (ev("traffic") or ev("run_start") or [(t_end, "", {})])[0][0]
    t_fault_end = (ev("fault_end") or [(t_end, "", {})])[0][0]

    # The cuts were silent, the clients still reached who they should,
    # the link lost and delayed what it should.
    for t, _, kv in ev("silent"):
        want = kv.get("want")
        got = kv.get("result", "")
        if not got.startswith(want):
            hfail("%s -> %s:%s gave %s, wanted %s" % (
                kv.get("from"), kv.get("to"), kv.get("port"), got, want))
    for t, _, kv in ev("link_check"):
        before = float(kv.get("rtt_before", "nan").replace("-", "nan"))
        during = float(kv.get("rtt_during", "nan").replace("-", "nan"))
        fig["rtt"] = "%.1f->%.1fms" % (before * 1000, during * 1000)
        want = float(kv.get("delay_ms", "0")) / 1000
        if not during >= before + 0.8 * want:
            hfail("link delay: connect rtt %s -> %s s, wanted +%s s"
                  % (before, during, want))
    for t, _, kv in ev("link_off"):
        frames, dropped = int(kv.get("frames", 0)), int(kv.get("dropped", 0))
        want = float(kv.get("loss", 0)) / 100
        share = dropped / frames if frames else 0.0
        fig["loss"] = "%d/%d" % (dropped, frames)
        if frames < 50 or abs(share - want) > max(0.1, 3 * (
                want * (1 - want) / max(frames, 1)) ** 0.5):
            hfail("link loss: %d of %d frames dropped, wanted %.0f%%"
                  % (dropped, frames, want * 100))

    # The acknowledgements, from the time-stamped --report.
    acks, refused = [], 0
    report = read_stamped(os.path.join(run, "report"))
    if not report:
        hfail("empty report: the producer never acknowledged anything")
    for t, line in report:
        try:
            j = json.loads(line)
        except ValueError:
            hfail("report line %r" % line[:60])
            continue
        if "offset" in j and j["offset"] is not None:
            acks.append((t, int(j["partition"]), int(j["offset"]),
                         int(j["record"])))
        else:
            refused += 1
    fig["acked"] = len(acks)
    fig["refused"] = refused
    try:
        with open(os.path.join(run, "produce.rc")) as f:
            fig["producer_rc"] = int(f.read().strip() or -1)
    except (OSError, ValueError):
        fig["producer_rc"] = None

    # The final log and the committed ends.
    final, ends = {}, {}
    try:
        for p, off, nxt, payload in repcheck.read_records(
                os.path.join(run, "final")):
            final[(p, off)] = payload
        with open(os.path.join(run, "list")) as f:
            for line in f:
                fl = line.rstrip("\n").split("\t")
                if len(fl) == 4 and fl[0] == TOPIC:
                    ends[int(fl[1])] = (int(fl[2]), int(fl[3]))
    except (OSError, ValueError) as e:
        note("final log unreadable: %s" % e)

    # 0 acknowledged lost: each acknowledged record at its offset.
    lost = [a for a in acks if final.get((a[1], a[2])) != b"r:%d" % a[3]]
    for a in lost[:5]:
        note("lost: record %d acknowledged at partition %d offset %d; the "
             "final log has %r" % (a[3], a[1], a[2],
                                   final.get((a[1], a[2]))))
    fig["lost"] = len(lost)
    target("lost", not lost and final, "%d lost" % len(lost))

    # 0 split brain: no offset acknowledged for two records, and no
    # acknowledgement of an epoch after the first one of a later epoch.
    split, by_off = 0, {}
    for a in acks:
        prev = by_off.setdefault((a[1], a[2]), a[3])
        if prev != a[3]:
            split += 1
            if split <= 5:
                note("split brain: partition %d offset %d acknowledged for "
                     "records %d and %d" % (a[1], a[2], prev, a[3]))
    late = 0
    for p in range(nparts):
        eps = read_epochs(dirs, p)
        if not eps:
            continue
        span = {}
        for t, ap, off, rec in acks:
            if ap != p:
                continue
            e = max((x for x in eps if x[1] <= off), default=eps[0])[0]
            lo, hi = span.get(e, (t, t))
            span[e] = (min(lo, t), max(hi, t))
        es = sorted(span)
        for k, e in enumerate(es):
            for e2 in es[k + 1:]:
                over = span[e][1] - span[e2][0]
                if over > 0.5:
                    late += 1
                    note("split brain: partition %d: epoch %d acknowledged "
                         "until %.1f s after epoch %d's first "
                         "acknowledgement" % (p, e, over, e2))
    fig["split"] = split + late
    target("split", split + late == 0, "%d split" % (split + late))

    # Acknowledgement gaps per partition, first acknowledgement to the
    # producer's stop.
    gaps = {}
    for p in range(nparts):
        ts = sorted(a[0] for a in acks if a[1] == p)
        if not ts:
            gaps[p] = t_end - t_traffic
            continue
        g = max([b - a for a, b in zip(ts, ts[1:])] + [t_end - ts[-1], 0.0])
        gaps[p] = g
    gmax = max(gaps.values()) if gaps else None
    fig["gap"] = round(gmax, 2) if gmax is not None else None
    fig["gaps"] = {str(k): round(v, 2) for k, v in gaps.items()}
    gap_limit = zks + lag + 3
    if scen in ("a", "b", "d"):
        target("gap", gmax is not None and gmax <= gap_limit,
               "gap %s <= %.0fs" % (fmt(gmax), gap_limit))

    # The poller's view.
    polls = []
    try:
        with open(os.path.join(run, "poll")) as f:
            for line in f:
                try:
                    polls.append(json.loads(line))
                except ValueError:
                    pass
    except OSError:
        pass
    if not polls:
        hfail("no poller output")
    states = [(x["t"], x["parts"]) for x in polls if x["k"] == "s"
              and x.get("ok")]
    probes = {b: [x for x in polls if x["k"] == "p" and x["b"] == b]
              for b in (1, 2, 3)}
    scrapes = {b: [x for x in polls if x["k"] == "m" and x["b"] == b]
               for b in (1, 2, 3)}
    logs = {b: read_stamped(os.path.join(run, "broker-%d.log" % b))
            for b in (1, 2, 3)}

    # Step-down: for each cut of a leader, each partition it led that
    # another broker was elected to lead meanwhile: the first sign that
    # the cut broker stopped leading it.
    steps, deposed_n, cuts = [], 0, []
    pending = {}
    for t, name, kv in events:
        if name == "cut":
            pending[kv.get("victim")] = (t, kv)
        elif name == "heal" and kv.get("victim") in pending:
            t0, kv0 = pending.pop(kv.get("victim"))
            cuts.append((t0, t, kv0))
    for t0, t1, kv in cuts:
        if kv.get("role") != "leader":
            continue
        v = int(kv["victim"])
        led = [int(x) for x in kv.get("led", "").split(",") if x != ""]
        for p in led:
            dep = [t for t, parts in states
                   if t0 <= t <= t1 + 3 and str(p) in parts
                   and parts[str(p)][0] not in (v, -1, None)]
            if not dep:
                continue
            deposed_n += 1
            sig = []
            for x in probes[v]:
                if x["t"] >= t0 and "produce" in x and \
                        x["produce"][p] not in (0, None):
                    sig.append((x["t"], "probe"))
                    break
            for x in scrapes[v]:
                if x["t"] >= t0 and x.get("fenced") == 1:
                    sig.append((x["t"], "fenced"))
                    break
            for t, line in logs[v]:
                if t >= t0 and b"zookeeper: silent for" in line:
                    sig.append((t, "log"))
                    break
            # Its last answer as the leader after another broker was
            # elected (both then took writes), before the heal.
            stale = [x["t"] for x in probes[v] if dep[0] <= x["t"] <= t1
                     and x.get("produce", [None] * nparts)[p] == 0]
            first_other = dep[0] - t0
            if sig:
                ts, how = min(sig)
                steps.append((ts - t0, how, first_other,
                              (stale[-1] - dep[0]) if stale else 0.0))
            else:
                steps.append((None, "never", first_other,
                              (stale[-1] - dep[0]) if stale else 0.0))
    fig["deposed"] = deposed_n
    if steps:
        worst = max(steps, key=lambda s: float("inf") if s[0] is None
                    else s[0])
        fig["stepdown"] = None if worst[0] is None else round(worst[0], 2)
        fig["stepdown_how"] = worst[1]
        fig["elected_after"] = round(max(s[2] for s in steps), 2)
        fig["stale"] = round(max(s[3] for s in steps), 2)
        if worst[0] is None or worst[0] > zks + 1:
            note("a deposed leader went on leading: %s after the cut "
                 "(another broker elected %.1f s after it; it still answered "
                 "as leader %.1f s after that)" % (
                     "never stepped down" if worst[0] is None
                     else "stepped down %.1f s" % worst[0],
                     worst[2], worst[3]))
    if scen in ("a", "b", "d"):
        if steps:
            sd = fig["stepdown"]
            target("stepdown", sd is not None and sd <= zks + 1,
                   "stepdown %s <= %.0fs" % (
                       "never" if sd is None else fmt(sd), zks + 1))
        else:
            target("stepdown", True, "stepdown n/a (not deposed)")

    # Back in the ISR: from the heal (last heal, link off or restart) to
    # every partition with a leader and all 3 in its ISR.
    t_ref = max([e[0] for e in events if e[1] in ("heal", "link_off",
                                                 "restart")] or [t_fault_end])
    full = [t for t, parts in states if t >= t_ref and len(parts) == nparts
            and all(v[0] not in (-1, None) and len(v[2] or []) == 3
                    for v in parts.values())]
    rejoin = (full[0] - t_ref) if full else None
    fig["rejoin"] = None if rejoin is None else round(rejoin, 2)
    if scen == "c":
        target("rejoin", rejoin is not None and rejoin <= 5,
               "rejoin %s <= 5s" % ("never" if rejoin is None
                                    else fmt(rejoin)))
    elif rejoin is None:
        note("the ISR never got full again after the fault")

    # The metrics endpoints answer throughout: the longest time between
    # two answered scrapes, from the first acknowledgement to the end,
    # leaving out a broker's time dead (killed -9 until restarted) and the
    # broker behind the lossy link (the link, not the broker, loses them).
    dead = {}
    for t, name, kv in events:
        if name == "kill":
            dead.setdefault(int(kv["broker"]), []).append([t, t_end])
        elif name in ("restart", "restarted"):
            # Up once registered (restarted), or 2 s after the start.
            b = int(kv["broker"])
            if dead.get(b):
                dead[b][-1][1] = t + (1.0 if name == "restarted" else 2.0)
    exempt = {int(kv["victim"]) for t, name, kv in events
              if name == "link_on"}
    mg, worst_b = {}, None
    for b in (1, 2, 3):
        ok = sorted(x["t"] + x["lat"] for x in scrapes[b] if x["ok"]
                    and t_traffic <= x["t"] <= t_end)
        marks = ok + [t_traffic, t_end]
        for lo, hi in dead.get(b, []):
            marks += [lo, hi]
        marks.sort()
        g = 0.0
        for a, c in zip(marks, marks[1:]):
            if any(lo <= a and c <= hi for lo, hi in dead.get(b, [])):
                continue
            g = max(g, c - a)
        if not ok:
            g = t_end - t_traffic
        mg[b] = round(g, 2)
        fails = sum(1 for x in scrapes[b] if not x["ok"]
                    and t_traffic <= x["t"] <= t_end)
        if fails:
            whys = {}
            for x in scrapes[b]:
                if not x["ok"] and t_traffic <= x["t"] <= t_end:
                    whys[x.get("why", "?").split(":")[0]] = whys.get(
                        x.get("why", "?").split(":")[0], 0) + 1
            note("broker %d: %d scrapes failed (%s), longest gap %.1f s%s"
                 % (b, fails, ", ".join("%s %d" % kv for kv in whys.items()),
                    g, " (behind the lossy link)" if b in exempt else ""))
        if b not in exempt and (worst_b is None or g > mg[worst_b]):
            worst_b = b
    fig["metrics_gaps"] = {str(b): mg[b] for b in mg}
    judged = {b: mg[b] for b in mg if b not in exempt}
    mworst = max(judged.values()) if judged else 0.0
    fig["metrics_gap"] = mworst
    target("metrics", mworst <= mgap_max, "metrics gap %s <= %.0fs%s" % (
        fmt(mworst), mgap_max, " (b%s on the link left out)" % ",".join(
            str(b) for b in sorted(exempt)) if exempt else ""))

    # Every reader reaches the end, and read only what is in the final log.
    consumed = {}
    try:
        for p, off, nxt, payload in repcheck.read_records(
                os.path.join(run, "consumed"), True):
            consumed[(p, off)] = (nxt, payload)
    except (OSError, ValueError) as e:
        note("consumer output unreadable: %s" % e)
    reached = bool(ends)
    for p, (lo, hi) in sorted(ends.items()):
        top = max([n for (cp, off), (n, _) in consumed.items() if cp == p],
                  default=lo)
        if top != hi:
            reached = False
            note("consumer: partition %d read to %d, committed end %d"
                 % (p, top, hi))
    unread = [a for a in acks if (a[1], a[2]) not in consumed]
    phantom = [k for k, (n, pl) in consumed.items() if final.get(k) != pl]
    if unread:
        reached = False
        note("consumer: %d acknowledged records never read (first: record "
             "%d at %d/%d)" % (len(unread), unread[0][3], unread[0][1],
                               unread[0][2]))
    if phantom:
        note("consumer: %d records read that the final log does not have "
             "at that offset (first %s)" % (len(phantom), phantom[0]))
    fig["consumed"] = len(consumed)
    fig["phantom"] = len(phantom)
    cons_ev = ev("consumer_end")
    if cons_ev and cons_ev[0][2].get("reached") != "1":
        reached = False
    target("consumer", reached and not phantom,
           "consumer %s" % ("at end" if reached else "behind")
           + (", %d phantom" % len(phantom) if phantom else ""))

    # Replicas byte-identical over [max log start, committed end).
    rep_ok, compared = bool(ends), 0
    for p, (lo, hi) in sorted(ends.items()):
        reps = []
        for d in dirs:
            pd = os.path.join(d, "%s-%d" % (TOPIC, p))
            if os.path.isdir(pd):
                reps.append((pd,) + repcheck.replica(pd))
        if len(reps) != 3:
            rep_ok = False
            note("replicas: partition %d has %d replica directories"
                 % (p, len(reps)))
            continue
        for pd, start, end, segs in reps:
            if end != hi:
                rep_ok = False
                note("replicas: %s ends at %d, committed end %d"
                     % (os.path.relpath(pd, run), end, hi))
        start = max(r[1] for r in reps)
        digest = set()
        for pd, _, end, segs in reps:
            data = repcheck.read_range(segs, start, min(hi, end))
            digest.add(None if data is None else data[:hi - start])
        if len(digest) != 1 or None in digest:
            rep_ok = False
            note("replicas: partition %d differs over [%d, %d)"
                 % (p, start, hi))
        else:
            data = digest.pop()
            try:
                entries = repcheck.parse_entries(data, start)
            except ValueError as e:
                rep_ok = False
                note("replicas: partition %d: %s" % (p, e))
                entries = []
            want = [(off, pl) for (fp, off), pl in sorted(final.items())
                    if fp == p and off >= start]
            if [(e[0], e[2]) for e in entries] != want:
                rep_ok = False
                note("replicas: partition %d: bytes are not the final "
                     "log's records" % p)
            compared += hi - start
    fig["compared"] = compared
    target("replicas", rep_ok, "replicas %s" % ("identical" if rep_ok
                                                 else "differ"))

    # The smallest ISR seen from the first fault to its end.
    t_fault = min([e[0] for e in events if e[1] in (
        "cut", "link_on", "zk_stop")] or [t_fault_end])
    sizes = [len(v[2] or []) for t, parts in states
             if t_fault <= t <= t_fault_end for v in parts.values()]
    fig["isr_min"] = min(sizes) if sizes else None

    # Leader changes seen, for the record.
    changes, last = 0, {}
    for t, parts in states:
        for p, v in parts.items():
            if p in last and v[0] not in (-1, None) and v[0] != last[p]:
                changes += 1
            if v[0] not in (-1, None):
                last[p] = v[0]
    fig["leader_changes"] = changes

    res["harness"] = harness
    res["notes"] = notes
    if harness:
        res["status"] = "HARNESS"
    elif all(x["ok"] for x in tg.values()):
        res["status"] = "PASS"
    else:
        res["status"] = "FAIL"
    line = summary_line(res)
    print(line)
    if o["result"]:
        with open(o["result"], "a") as f:
            f.write(json.dumps(res) + "\n")
    return {"PASS": 0, "FAIL": 1}.get(res["status"], 2)


def summary_line(res):
    f = res["fig"]
    parts = ["%-3s %-7s" % (res["run"], res["status"]),
             "acked %-6s" % f.get("acked"), "lost %s" % f.get("lost"),
             "split %s" % f.get("split"),
             "gap %s" % fmt(f.get("gap")),
             "stepdown %s" % ("never" if f.get("deposed") and
                              f.get("stepdown") is None
                              else fmt(f.get("stepdown"))),
             "stale %s" % fmt(f.get("stale")),
             "rejoin %s" % fmt(f.get("rejoin")),
             "isr>=%s" % fmt(f.get("isr_min")),
             "metrics %s" % fmt(f.get("metrics_gap"))]
    if "loss" in f:
        parts.append("link loss %s rtt %s" % (f["loss"], f.get("rtt")))
    bad = [k for k, v in res["targets"].items() if not v["ok"]]
    parts.append("| " + " ".join(
        "%s:%s" % (k, "ok" if v["ok"] else "FAIL")
        for k, v in res["targets"].items()))
    if res.get("harness"):
        parts.append("| harness: " + "; ".join(res["harness"]))
    elif bad:
        parts.append("| " + "; ".join(res["targets"][k]["text"]
                                      for k in bad))
    return "  ".join(parts)


def report(argv):
    rows = []
    try:
        with open(argv[0]) as f:
            for line in f:
                if line.strip():
                    rows.append(json.loads(line))
    except OSError:
        pass
    if not rows:
        print("soak partitions: no run was checked")
        return 2
    print("soak partitions: %d runs" % len(rows))
    for r in rows:
        print(summary_line(r))
    names = ["lost", "split", "stepdown", "rejoin", "gap", "metrics",
             "consumer", "replicas", "liveness"]
    tot = {n: [0, 0] for n in names}
    for r in rows:
        for n, v in r["targets"].items():
            tot.setdefault(n, [0, 0])
            tot[n][0 if v["ok"] else 1] += 1
    print("totals: " + "  ".join("%s %d/%d" % (n, tot[n][0], sum(tot[n]))
                                 for n in names if sum(tot[n])))
    st = [r["status"] for r in rows]
    print("runs: %d pass, %d fail, %d harness failures"
          % (st.count("PASS"), st.count("FAIL"), st.count("HARNESS")))
    if st.count("HARNESS"):
        return 2
    return 0 if rows and st.count("PASS") == len(rows) else 1


def main():
    if len(sys.argv) < 2:
        sys.stderr.write(__doc__)
        return 64
    cmd, argv = sys.argv[1], sys.argv[2:]
    fn = {"stamp": stamp, "zkok": zkok, "poll": poll, "check": check,
          "report": report}.get(cmd)
    if fn is None:
        sys.stderr.write("partcheck: unknown command %s\n" % cmd)
        return 64
    return fn(argv)


if __name__ == "__main__":
    sys.exit(main())
