#!/bin/bash
# make soak (with tests/soak/replication.sh): one broker, registered in a
# ZooKeeper of its own, under everything at once for SOAK_SECONDS (default
# 300), on a topic of 4 partitions: two producers of numbered records,
# acks 1 and acks all, each run writing a --report; a plain consumer
# keeping an offset file; a consumer group of two members (-G, offsets in
# ZooKeeper); klog-retain from a loop; hostile connections (garbage,
# absurd sizes, half requests, idle sockets) beside them; and kill -9,
# drawn at random (SOAK_SEED), of the broker or of a client, each
# restarted.  At the end: every record a report says was acknowledged is
# in the log where it says, unless retention has since deleted its
# segment; no consumer run printed, in a partition, an offset below one it
# had printed there before (a run ends at its kill); the group printed
# every message of the final log, and printed a message twice only after
# a member's kill; the broker's RSS stayed under SOAK_RSS_MB (default
# 200).  The figures on stdout; exit 0 only if every check passed.
# 127.0.0.1, free ports, a temp dir, processes killed by pid.
# SOAK_BROKER_LOG and SOAK_CLIENT_LOG keep the broker's and the clients'
# stderr outside the temp dir, which goes.
set -u
cd "$(dirname "$0")/../.." || exit 1
BATS_TEST_DIRNAME=$PWD/tests/bats
. tests/bats/helpers.bash

SOAK_SECONDS=${SOAK_SECONDS:-300}
SOAK_RSS_MB=${SOAK_RSS_MB:-200}
RANDOM=${SOAK_SEED:-$$}
PY=/usr/bin/python3

[ -x bin/klog-serve ] || { echo "make soak: build first" >&2; exit 1; }
common_setup
trap 'stop_zk 2>/dev/null; common_teardown' EXIT
trap 'exit 130' INT TERM
die() { echo "soak faults: FAIL: $*" >&2; tail -20 "$TMP/broker.log" >&2; exit 1; }

PORT=$(free_port)
B=127.0.0.1:$PORT
D=$TMP/data
export KLOG_BROKERS=$B
# After a kill -9 the broker waits for its old registration to expire
# before it serves: up to the session timeout.
serve() {
	klog-serve -q -d "$D" -l "$B" -Z "$ZK" --broker-id 1 --topic soak:4 \
		--segment-bytes 1M --retention-hours off \
		--idle-timeout 5s --request-timeout 2s --max-pending-bytes 64M \
		2>>"${SOAK_BROKER_LOG:-$TMP/broker.log}" &
	BPID=$!
	PIDS+=("$BPID")
	wait_port "$PORT" 30 || die "broker did not start"
}

# A producer run: records "<name>-<run>-<i> xxx..." (200 bytes or so), i
# from 1, at about 2,000 a second, its report in $TMP/<name>-<run>.report.
declare -A PPID_OF RUN_OF
produce() {
	local name=$1 acks=$2 run=$(( ${RUN_OF[$1]:-0} + 1 ))
	RUN_OF[$name]=$run
	"$PY" -c 'import sys, time
i = 0
while True:
    i += 1
    sys.stdout.write("%s-%d %s\n" % (sys.argv[1], i, "x" * 180))
    if i % 200 == 0:
        sys.stdout.flush(); time.sleep(0.1)' "$name-$run" 2>/dev/null |
		klog-produce -q -t soak -a "$acks" --retry-for 60s \
		--report "$TMP/$name-$run.report" 2>>"${SOAK_CLIENT_LOG:-$TMP/clients.log}" &
	PPID_OF[$name]=$!
	PIDS+=("$!")
}

CRUN=0
consume() {
	CRUN=$((CRUN + 1))
	echo "# run $CRUN" >>"$TMP/consumed"
	klog-consume -q -t soak --offset-file "$TMP/offsets" --retry-for 60s \
		--reset earliest -f '%p %o\n' >>"$TMP/consumed" 2>>"${SOAK_CLIENT_LOG:-$TMP/clients.log}" &
	CPID=$!
	PIDS+=("$CPID")
}

# A member of group g, its output in $TMP/member-<name>, one "# run" line
# before each run's.
declare -A MPID_OF MRUN_OF
member() {
	local name=$1 run=$(( ${MRUN_OF[$1]:-0} + 1 ))
	MRUN_OF[$name]=$run
	echo "# run $run" >>"$TMP/member-$name"
	klog-consume -q -Z "$ZK" -G g -t soak -o beginning --retry-for 60s -f '%p %o\n' \
		>>"$TMP/member-$name" 2>>"${SOAK_CLIENT_LOG:-$TMP/clients.log}" &
	MPID_OF[$name]=$!
	PIDS+=("$!")
}

hostile() {
	"$PY" - "$PORT" <<-'PYEOF' 2>/dev/null &
	import os, random, socket, struct, sys, time
	port, held = int(sys.argv[1]), []
	while True:
	    try:
	        s = socket.create_connection(("127.0.0.1", port), timeout=2)
	        k = random.randrange(4)
	        if k == 0:
	            s.sendall(os.urandom(random.randrange(1, 5000))); s.close()
	        elif k == 1:
	            s.sendall(struct.pack(">i", 0x7fffffff)); s.close()
	        elif k == 2:
	            s.sendall(struct.pack(">i", 50 << 20) + os.urandom(1 << 20))
	            held.append(s)
	        else:
	            held.append(s)
	        held = held[-50:]
	    except OSError:
	        pass
	    time.sleep(0.05)
	PYEOF
	HPID=$!
	PIDS+=("$HPID")
}

start_zk || die "ZooKeeper did not start"
serve
produce p1 1
produce pall all
consume
member a
member b
hostile
( while :; do klog-retain -q -d "$D" --max-bytes 20M -w 5s; sleep 2; done ) \
	>/dev/null 2>&1 &
PIDS+=("$!")

end=$((SECONDS + SOAK_SECONDS))
kills=0 bkills=0 pkills=0 ckills=0 mkills=0 rss_max=0
while [ "$SECONDS" -lt "$end" ]; do
	sleep $((2 + RANDOM % 5))
	rss=$(awk '/^VmRSS:/ { print int($2 / 1024) }' "/proc/$BPID/status" 2>/dev/null)
	[ -n "$rss" ] && [ "$rss" -gt "$rss_max" ] && rss_max=$rss
	case $((RANDOM % 6)) in
	0)	kill -KILL "$BPID"; wait "$BPID" 2>/dev/null
		bkills=$((bkills + 1)); serve ;;
	1)	kill -KILL "${PPID_OF[p1]}"; wait "${PPID_OF[p1]}" 2>/dev/null
		pkills=$((pkills + 1)); produce p1 1 ;;
	2)	kill -KILL "${PPID_OF[pall]}"; wait "${PPID_OF[pall]}" 2>/dev/null
		pkills=$((pkills + 1)); produce pall all ;;
	3)	kill -KILL "$CPID"; wait "$CPID" 2>/dev/null
		ckills=$((ckills + 1)); consume ;;
	4|5)	m=$([ $((RANDOM % 2)) = 0 ] && echo a || echo b)
		kill -KILL "${MPID_OF[$m]}"; wait "${MPID_OF[$m]}" 2>/dev/null
		mkills=$((mkills + 1)); member "$m" ;;
	esac
	kills=$((kills + 1))
done
# The producers end their input, the consumers catch up, then all stop.
for n in p1 pall; do kill -TERM "${PPID_OF[$n]}" 2>/dev/null; wait "${PPID_OF[$n]}" 2>/dev/null; done
kill -TERM "$HPID" 2>/dev/null
klog-consume -L -t soak | awk -F'\t' '{ print $2, $3 }' >"$TMP/starts" ||
	die "listing the partitions failed"
: >"$TMP/log"
while read -r p start; do
	klog-consume -t soak -p "$p" -o "$start" -e -f '%p %o %s\n' >>"$TMP/log" ||
		die "the final read of partition $p failed"
done <"$TMP/starts"
# The group has caught up once it printed the last message of each
# partition; a member killed late hands its partitions over after its
# session expires.
caught_up() {
	local p
	for p in $(cut -d' ' -f1 "$TMP/log" | sort -u); do
		grep -qx "$(grep "^$p " "$TMP/log" | tail -1 | cut -d' ' -f1,2)" \
			"$TMP"/member-* || return 1
	done
}
n=600
until caught_up; do
	n=$((n - 1))
	[ "$n" -gt 0 ] || die "the group did not catch up in 60 s"
	sleep 0.1
done
sleep 3
kill -TERM "$CPID" "${MPID_OF[a]}" "${MPID_OF[b]}"
wait "$CPID" "${MPID_OF[a]}" "${MPID_OF[b]}" 2>/dev/null

"$PY" - "$TMP" "$SOAK_RSS_MB" "$rss_max" <<'PYEOF' || exit 1
import glob, json, os, sys
tmp, rss_limit, rss = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
at, start = {}, {}
for line in open(os.path.join(tmp, "starts")):
    p, off = line.split()
    start[int(p)] = int(off)
for line in open(os.path.join(tmp, "log")):
    p, off, payload = line.rstrip("\n").split(" ", 2)
    at.setdefault((int(p), int(off)), []).append(payload)
acked = lost = retained = refused = 0
for rep in sorted(glob.glob(os.path.join(tmp, "*.report"))):
    name = os.path.basename(rep)[:-len(".report")]
    for text in open(rep):
        try:
            r = json.loads(text)
        except ValueError:
            continue     # the last line of a run killed mid-write
        if "error" in r:
            refused += 1
            continue
        acked += 1
        if r["offset"] < start[r["partition"]]:
            retained += 1
            continue
        want = "%s-%d %s" % (name, r["record"], "x" * 180)
        if want not in at.get((r["partition"], r["offset"]), []):
            lost += 1
            if lost <= 5:
                print("LOST", rep, r, file=sys.stderr)

def runs(path):
    """Each run of a consumer: the (partition, offset) it printed, in order."""
    out = []
    for line in open(path):
        if line.startswith("#"):
            out.append([])
        elif line.strip():
            p, off = line.split()
            out[-1].append((int(p), int(off)))
    return out

def moved_back(run):
    last, back = {}, 0
    for p, off in run:
        if off <= last.get(p, -1):
            back += 1
        last[p] = off
    return back

back = moved_back_group = 0
for run in runs(os.path.join(tmp, "consumed")):
    back += moved_back(run)
# Every run of a member but its last ended by kill -9: what it printed
# after its last commit is printed again by the next owner.
seen, by_killed, printed, killed_runs = {}, set(), 0, 0
for path in glob.glob(os.path.join(tmp, "member-*")):
    rs = runs(path)
    killed_runs += len(rs) - 1
    for i, run in enumerate(rs):
        moved_back_group += moved_back(run)
        for key in run:
            seen[key] = seen.get(key, 0) + 1
            printed += 1
            if i < len(rs) - 1:
                by_killed.add(key)
missed = [k for k in at if k not in seen]
twice = sum(n - 1 for n in seen.values())
unexplained = [k for k, n in seen.items() if n > 1 and k not in by_killed]
for k in unexplained[:5]:
    print("PRINTED TWICE WITHOUT A KILL", k, file=sys.stderr)
for k in missed[:5]:
    print("NOT PRINTED BY THE GROUP", k, file=sys.stderr)
print("acknowledged %d, lost %d, deleted by retention %d, refused %d; "
      "consumer moved back %d times; group: %d printed, %d of the final "
      "log's %d missed, %d printed again after %d member kills (%d without "
      "one), moved back %d times; broker RSS at most %d MB"
      % (acked, lost, retained, refused, back, printed, len(missed), len(at),
         twice, killed_runs, len(unexplained), moved_back_group, rss))
ok = (lost == 0 and back == 0 and moved_back_group == 0 and not missed
      and not unexplained and rss < rss_limit)
sys.exit(0 if ok else 1)
PYEOF
echo "kills $kills (broker $bkills, producers $pkills, consumer $ckills, group members $mkills) in ${SOAK_SECONDS}s"
