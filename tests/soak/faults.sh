#!/bin/bash
# make soak (with tests/soak/replication.sh): one standalone broker under
# everything at once for SOAK_SECONDS (default 300): two producers of
# numbered records, acks 1 and acks all, each run writing a --report; a
# plain consumer keeping an offset file; klog-retain from a loop; hostile
# connections (garbage, absurd sizes, half requests, idle sockets) beside
# them; and kill -9, drawn at random (SOAK_SEED), of the broker or of a
# client, each restarted.  At the end: every record a report says was
# acknowledged is in the log where it says, unless retention has since
# deleted its segment; the consumer never printed an offset below one it
# had printed before, except right after its own kill; the broker's RSS
# stayed under SOAK_RSS_MB (default 200).  The figures on stdout; exit 0
# only if every check passed.  127.0.0.1, free ports, a temp dir,
# processes killed by pid.  SOAK_BROKER_LOG and SOAK_CLIENT_LOG keep the
# broker's and the clients' stderr outside the temp dir, which goes.
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
trap 'common_teardown' EXIT
trap 'exit 130' INT TERM
die() { echo "soak faults: FAIL: $*" >&2; tail -20 "$TMP/broker.log" >&2; exit 1; }

PORT=$(free_port)
B=127.0.0.1:$PORT
D=$TMP/data
export KLOG_BROKERS=$B
serve() {
	klog-serve -q -d "$D" -l "$B" --segment-bytes 1M --retention-hours off \
		--idle-timeout 5s --request-timeout 2s --max-pending-bytes 64M \
		2>>"${SOAK_BROKER_LOG:-$TMP/broker.log}" &
	BPID=$!
	PIDS+=("$BPID")
	wait_port "$PORT" 20 || die "broker did not start"
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
		--reset earliest -f '%o\n' >>"$TMP/consumed" 2>>"${SOAK_CLIENT_LOG:-$TMP/clients.log}" &
	CPID=$!
	PIDS+=("$CPID")
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

serve
produce p1 1
produce pall all
consume
hostile
( while :; do klog-retain -q -d "$D" --max-bytes 20M -w 5s; sleep 2; done ) \
	>/dev/null 2>&1 &
PIDS+=("$!")

end=$((SECONDS + SOAK_SECONDS))
kills=0 bkills=0 pkills=0 ckills=0 rss_max=0
while [ "$SECONDS" -lt "$end" ]; do
	sleep $((2 + RANDOM % 5))
	rss=$(awk '/^VmRSS:/ { print int($2 / 1024) }' "/proc/$BPID/status" 2>/dev/null)
	[ -n "$rss" ] && [ "$rss" -gt "$rss_max" ] && rss_max=$rss
	case $((RANDOM % 4)) in
	0)	kill -KILL "$BPID"; wait "$BPID" 2>/dev/null
		bkills=$((bkills + 1)); serve ;;
	1)	kill -KILL "${PPID_OF[p1]}"; wait "${PPID_OF[p1]}" 2>/dev/null
		pkills=$((pkills + 1)); produce p1 1 ;;
	2)	kill -KILL "${PPID_OF[pall]}"; wait "${PPID_OF[pall]}" 2>/dev/null
		pkills=$((pkills + 1)); produce pall all ;;
	3)	kill -KILL "$CPID"; wait "$CPID" 2>/dev/null
		ckills=$((ckills + 1)); consume ;;
	esac
	kills=$((kills + 1))
done
# The producers end their input, the consumer catches up, then all stop.
for n in p1 pall; do kill -TERM "${PPID_OF[$n]}" 2>/dev/null; wait "${PPID_OF[$n]}" 2>/dev/null; done
sleep 3
kill -TERM "$CPID"; wait "$CPID" 2>/dev/null
kill -TERM "$HPID" 2>/dev/null
read -r start _ <<<"$(klog-consume -L -t soak | awk -F'\t' '{ print $3, $4 }')"
klog-consume -t soak -o "$start" -e -f '%o %s\n' >"$TMP/log" ||
	die "the final read failed"

"$PY" - "$TMP" "$start" "$SOAK_RSS_MB" "$rss_max" <<'PYEOF' || exit 1
import glob, json, os, sys
tmp, start, rss_limit, rss = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
at = {}
for line in open(os.path.join(tmp, "log")):
    off, _, payload = line.rstrip("\n").partition(" ")
    at.setdefault(int(off), []).append(payload)
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
        if r["offset"] < start:
            retained += 1
            continue
        want = "%s-%d %s" % (name, r["record"], "x" * 180)
        if want not in at.get(r["offset"], []):
            lost += 1
            if lost <= 5:
                print("LOST", rep, r, file=sys.stderr)
back = 0
prev = None
for line in open(os.path.join(tmp, "consumed")):
    if line.startswith("#"):
        prev = None          # its own restart may go back to its file
        continue
    off = int(line)
    if prev is not None and off < prev:
        back += 1
    prev = off
print("acknowledged %d, lost %d, deleted by retention %d, refused %d; "
      "consumer moved back %d times; broker RSS at most %d MB"
      % (acked, lost, retained, refused, back, rss))
sys.exit(0 if lost == 0 and back == 0 and rss < rss_limit else 1)
PYEOF
echo "kills $kills (broker $bkills, producers $pkills, consumer $ckills) in ${SOAK_SECONDS}s"
