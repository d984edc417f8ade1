#!/usr/bin/env bats
# tests/soak/partcheck.py check, the checker of make soak SOAK=partitions,
# on a hand-made run: it passes a sound one and catches each fault it is
# there to catch.  No broker, no ZooKeeper, no namespace.

bats_require_minimum_version 1.5.0
load helpers

PY=/usr/bin/python3
PARTCHECK="$BATS_TEST_DIRNAME/../soak/partcheck.py"

setup() {
	common_setup
}

teardown() {
	common_teardown
}

# fixture [FAULT...]: $TMP/run as partitions.sh leaves a run of scenario
# (a): three brokers, topic part of 3 partitions; records r:1, r:2 ...
# acknowledged round robin 20 a second from t=1001 to 1020; broker 1, the
# leader of partition 0, cut at 1005 and healed at 1012; broker 2 leads
# partition 0 from 1008 (epoch 2, acknowledging from 1009), and broker 1
# answers NOT_LEADER for it from 1009.5.  FAULTs: lost (an acknowledgement
# at an offset the final log does not have), dup (two records acknowledged
# at one offset), late (an epoch 1 acknowledgement 1.4 s after epoch 2's
# first), slow (broker 1 leads on until 1011), mute (broker 2's metrics
# unanswered 1010-1013), loud (the cut let a connect through), diverge (a
# byte of broker 3's copy differs), behind (the consumer stopped short).
fixture() {
	"$PY" - "$TMP/run" "$@" <<-'PY'
	import json, os, struct, sys, zlib
	run, faults = sys.argv[1], set(sys.argv[2:])
	os.makedirs(run)
	def w(name, text):
	    with open(os.path.join(run, name), "w") as f:
	        f.write(text)
	acks, logs = [], {0: [], 1: [], 2: []}
	for n in range(1, 381):
	    t = 1001 + (n - 1) * 0.05
	    p = (n - 1) % 3
	    if p == 0 and 1005 <= t < 1009:
	        p = 1
	    pl = b"r:%d" % n
	    off = sum(9 + len(x) for x in logs[p])
	    logs[p].append(pl)
	    acks.append([t, p, off, n])
	ep2 = min(a[2] for a in acks if a[1] == 0 and a[0] >= 1009)
	if "late" in faults:
	    max((a for a in acks if a[1] == 0 and a[2] < ep2),
	        key=lambda a: a[0])[0] = 1010.5
	if "dup" in faults:
	    a = acks[10]
	    acks.append([a[0] + 0.01, a[1], a[2], 999999])
	if "lost" in faults:
	    acks.append([1019.9, 1, 10 ** 6, 999998])
	w("report", "".join('%.6f {"record":%d,"partition":%d,"offset":%d}\n'
	                    % (a[0], a[3], a[1], a[2]) for a in acks))
	fin = ""
	for p in range(3):
	    off = 0
	    for pl in logs[p]:
	        fin += "%d\t%d\t%d\t%s\n" % (p, off, off + 9 + len(pl), pl.decode())
	        off += 9 + len(pl)
	w("final", fin)
	w("list", "".join("part\t%d\t0\t%d\n" % (p, sum(9 + len(x) for x in logs[p]))
	                  for p in range(3)))
	cons = fin.splitlines(True)
	if "behind" in faults:
	    cons = [c for c in cons if not c.startswith("2\t")][:-5]
	w("consumed", "".join(cons))
	for b in (1, 2, 3):
	    for p in range(3):
	        d = os.path.join(run, "broker-%d" % b, "part-%d" % p)
	        os.makedirs(d)
	        data = b"".join(struct.pack(">IBI", 5 + len(pl), 0, zlib.crc32(pl))
	                        + pl for pl in logs[p])
	        if "diverge" in faults and b == 3 and p == 1:
	            data = data[:-1] + b"X"
	        with open(os.path.join(d, "%020d.klog" % 0), "wb") as f:
	            f.write(data)
	        with open(os.path.join(d, "leader-epochs"), "w") as f:
	            f.write("klog-epochs 1\n1 0\n" + ("2 %d\n" % ep2 if p == 0 else ""))
	    w("broker-%d.log" % b, "")
	w("events", "\n".join([
	    "1000.0 run_start scenario=a timing=2 part=0 param=7",
	    "1001.0 traffic",
	    "1005.0 cut victim=1 role=leader peers=zk,b2,b3 led=0 part=0",
	    "1005.1 silent from=b1 to=zk port=2181 want=timeout result=%s"
	    % ("refused" if "loud" in faults else "timeout"),
	    "1005.1 silent from=cl to=b1 port=9092 want=connected result=connected",
	    "1012.0 heal victim=1", "1012.0 fault_end rc=0",
	    "1020.0 produce_stop", "1020.5 consumer_end reached=%d"
	    % (0 if "behind" in faults else 1), "1020.5 end", ""]))
	poll = []
	for i in range(84):
	    t = 1000 + i * 0.25
	    lead0 = 1 if t < 1008 else 2
	    isr = [1, 2, 3] if t < 1008 or t > 1013 else [2, 3]
	    poll.append({"t": t, "k": "s", "ok": 1, "parts": {
	        "0": [lead0, 1 if lead0 == 1 else 2, isr],
	        "1": [2, 1, [2, 3, 1]], "2": [3, 1, [3, 1, 2]]}})
	    for b in (1, 2, 3):
	        if not ("mute" in faults and b == 2 and 1010 <= t <= 1013):
	            poll.append({"t": t, "k": "m", "b": b, "ok": 1, "lat": 0.002})
	        leads = {1: [0] if t < (1011 if "slow" in faults else 1009.5) else [],
	                 2: [1] + ([0] if t >= 1008 else []), 3: [2]}[b]
	        poll.append({"t": t, "k": "p", "b": b, "lat": 0.001,
	                     "produce": [0 if p in leads else 17 for p in range(3)],
	                     "offsets": [0 if p in leads else 17 for p in range(3)]})
	w("poll", "".join(json.dumps(x) + "\n" for x in poll))
	PY
}

partcheck() {
	"$PY" "$PARTCHECK" check --run "$TMP/run" --scenario a --timing 2 \
		--zks 4000 --lag 3 --parts 3 --metrics-gap 2 \
		--result "$TMP/result"
}

@test "partcheck: a sound run passes, with its figures" {
	fixture
	run -0 partcheck
	[[ $output == "a2  PASS     acked 380 "* ]]
	[[ $output == *" lost 0  split 0  gap 4.2s  stepdown 4.5s  stale 1.2s "* ]]
	[[ $output == *"liveness:ok lost:ok split:ok gap:ok stepdown:ok metrics:ok consumer:ok replicas:ok" ]]
	run -0 "$PY" "$PARTCHECK" report "$TMP/result"
	[[ $output == *"runs: 1 pass, 0 fail, 0 harness failures" ]]
}

@test "partcheck: an acknowledged record not at its offset is lost" {
	fixture lost
	run -1 partcheck
	[[ $output == *"lost: record 999998 acknowledged at partition 1 offset 1000000"* ]]
	[[ $output == *"lost:FAIL split:ok"* ]]
}

@test "partcheck: one offset acknowledged for two records is split brain" {
	fixture dup
	run -1 partcheck
	[[ $output == *"split brain: partition 1 offset 36 acknowledged for records 11 and 999999"* ]]
	[[ $output == *"split:FAIL"* ]]
}

@test "partcheck: an old epoch acknowledging after a new one is split brain" {
	fixture late
	run -1 partcheck
	[[ $output == *"split brain: partition 0: epoch 1 acknowledged until 1.4 s after epoch 2's first acknowledgement"* ]]
	[[ $output == *"lost:ok split:FAIL"* ]]
}

@test "partcheck: a deposed leader leading on past the session timeout + 1 s fails" {
	fixture slow
	run -1 partcheck
	[[ $output == *"stepdown:FAIL"*"stepdown 6.0s <= 5s"* ]]
}

@test "partcheck: a metrics endpoint silent for 3 s fails" {
	fixture mute
	run -1 partcheck
	[[ $output == *"metrics:FAIL"*"metrics gap 3.5s <= 2s"* ]]
}

@test "partcheck: replicas that differ fail" {
	fixture diverge
	run -1 partcheck
	[[ $output == *"replicas: partition 1 differs"* ]]
	[[ $output == *"replicas:FAIL"* ]]
}

@test "partcheck: a consumer that stopped short fails" {
	fixture behind
	run -1 partcheck
	[[ $output == *"consumer: partition 2 read to 0, committed end"* ]]
	[[ $output == *"consumer:FAIL"* ]]
}

@test "partcheck: a cut that was not silent is the harness's failure" {
	fixture loud
	run -2 partcheck
	[[ $output == *"HARNESS b1 -> zk:2181 gave refused, wanted timeout"* ]]
	[[ $output == "a2  HARNESS "* || $output == *$'\n'"a2  HARNESS "* ]]
	run -2 "$PY" "$PARTCHECK" report "$TMP/result"
	[[ $output == *"runs: 0 pass, 0 fail, 1 harness failures" ]]
}
