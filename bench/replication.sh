#!/bin/sh
# replication: one cluster of three brokers on this machine, in a
# throwaway ZooKeeper (a fresh chroot and fresh brokers each run):
#   - acks=all produce of nginx access-log lines (bench_accesslog, fixed
#     seed) to a topic of replication factor 3 (min.insync 2) vs the same to
#     a topic of factor 1, both of 3 partitions: lines/s and their ratio
#     (target: RF 3 at least 0.4 of RF 1; the two alternate which goes first);
#   - a follower's catch-up: broker 3 killed -9, the same lines produced to
#     the RF-3 topic without it, broker 3 restarted on its data: the bytes it
#     lacked over the time from its start until its replicas hold all of
#     them (bytes/s), and the time until the ISR is full again;
#   - failover: the leader of partition 0 killed -9, then one acks=all
#     klog-produce of one line to partition 0 (--retry-for 60s): the time
#     from the kill to its exit 0, an acknowledged write on the successor
#     (target: under the session timeout plus one second).
# Knobs: REPL_LINES (default 300000, times BENCH_SCALE), REPL_ZKS (the
# brokers' --zk-session-timeout, default 6000 ms).
. "$(dirname "$0")/lib.sh"

GROUP=$ROOT/bin/klog-group
PRODUCE=$ROOT/bin/klog-produce
if ! "$GROUP" -h 2>&1 | grep -q create-topic; then
	note "replication: skipped (no klog-group create-topic yet)"
	exit 0
fi
if [ ! -x "$ZKSERVER" ]; then
	note "replication: skipped (no ZooKeeper at $ZKSERVER)"
	exit 0
fi
bench_setup replication
ZKS=${REPL_ZKS:-6000}

PY=/usr/bin/python3

# rbroker ID: start broker ID of this run (port and data kept across
# restarts in $WORK/port-ID and $WORK/broker-ID); pid in $WORK/pid-ID.
rbroker() {
	[ -s "$WORK/port-$1" ] || free_port >"$WORK/port-$1"
	"$SERVE" -Z "$zkc" --broker-id "$1" -l "127.0.0.1:$(cat "$WORK/port-$1")" \
		-d "$WORK/broker-$1" --zk-session-timeout "$ZKS" \
		2>>"$WORK/broker-$1.log" &
	echo $! >"$WORK/pid-$1"
	track "$!"
}

# registered ID: whether /brokers/ids/ID is there.
registered() {
	"$GROUP" -Z "$zkc" -H brokers 2>/dev/null | grep -q "^$1	"
}

# wait_until SECONDS CMD...: poll CMD every 0.05 s, SECONDS at most.
wait_until() {
	_w=$(( $1 * 20 ))
	shift
	until "$@"; do
		_w=$((_w - 1))
		[ "$_w" -gt 0 ] || {
			echo "replication: gave up waiting for: $*" >&2
			exit 1
		}
		sleep 0.05
	done
}

not() { ! "$@"; }

# kill9 ID: kill -9 broker ID and reap it.
kill9() {
	_p=$(cat "$WORK/pid-$1")
	kill -KILL "$_p" 2>/dev/null || :
	wait "$_p" 2>/dev/null || :
	untrack "$_p"
}

# full TOPIC RF: every partition (3) has a leader and all RF in its ISR.
full() {
	"$GROUP" -Z "$zkc" topics -t "$1" -J 2>/dev/null | "$PY" -c '
import json, sys
rf, ps = int(sys.argv[1]), {}
for line in sys.stdin:
    if line.strip():
        o = json.loads(line)
        ps[int(o["partition"])] = o
ok = sorted(ps) == [0, 1, 2] and all(
    len(o["replicas"]) == rf and sorted(o["isr"]) == sorted(o["replicas"])
    and o.get("leader") in o["replicas"] for o in ps.values())
sys.exit(0 if ok else 1)' "$2"
}

# isr_without TOPIC ID: broker ID is in no partition's ISR.
isr_without() {
	"$GROUP" -Z "$zkc" topics -t "$1" -J 2>/dev/null | "$PY" -c '
import json, sys
n = 0
for line in sys.stdin:
    if line.strip():
        n += 1
        if int(sys.argv[1]) in json.loads(line)["isr"]:
            sys.exit(1)
sys.exit(0 if n else 1)' "$2"
}

# leader0 TOPIC: the leader of partition 0.
leader0() {
	"$GROUP" -Z "$zkc" topics -t "$1" -J 2>/dev/null | "$PY" -c '
import json, sys
for line in sys.stdin:
    if line.strip():
        o = json.loads(line)
        if int(o["partition"]) == 0 and o.get("leader") not in (None, -1):
            print(o["leader"])' | grep .
}

# bytes_of ID TOPIC: bytes in broker ID's segments of TOPIC.
bytes_of() {
	find "$WORK/broker-$1" -path "*/$2-*" -type f \
		\( -name '*.klog' -o -name '*.kafka' \) -printf '%s\n' |
		awk '{ s += $1 } END { printf "%.0f\n", s }'
}

# holds ID TOPIC BYTES: broker ID's replicas of TOPIC hold BYTES.
holds() { [ "$(bytes_of "$1" "$2")" -ge "$3" ]; }

# produce TOPIC: acks=all, the input; seconds taken.
produce() {
	_t0=$(now_s)
	"$PRODUCE" -q -Z "$zkc" -t "$1" -a all <"$WORK/input" || {
		echo "replication: klog-produce to $1 failed" >&2
		exit 1
	}
	elapsed "$_t0" "$(now_s)"
}

lines=$(scaled "${REPL_LINES:-300000}" 1000)
"$B/bench_accesslog" -n "$lines" >"$WORK/input"
note "$lines lines, $(wc -c <"$WORK/input") bytes, $RUNS runs," \
	"session timeout $ZKS ms"
zk_start
for f in rf3 rf1 ratio catchup rejoin failover; do : >"$WORK/$f"; done
i=1
while [ "$i" -le "$RUNS" ]; do
	zkc=$ZK/repl$i
	rm -rf "$WORK"/broker-* "$WORK"/port-* "$WORK"/pid-*
	for id in 1 2 3; do rbroker "$id"; done
	for id in 1 2 3; do wait_until 30 registered "$id"; done
	"$GROUP" -Z "$zkc" create-topic -t r3 --partitions 3 \
		--replication-factor 3 --min-insync-replicas 2 >/dev/null
	"$GROUP" -Z "$zkc" create-topic -t r1 --partitions 3 \
		--replication-factor 1 >/dev/null
	wait_until 60 full r3 3
	wait_until 60 full r1 1

	# Throughput, RF 3 against RF 1, alternating which goes first.
	if [ $((i % 2)) -eq 1 ]; then
		s1=$(produce r1); s3=$(produce r3)
	else
		s3=$(produce r3); s1=$(produce r1)
	fi
	ratio "$lines" "$s3" 0 >>"$WORK/rf3"
	ratio "$lines" "$s1" 0 >>"$WORK/rf1"
	ratio "$s1" "$s3" >>"$WORK/ratio"

	# Catch-up: broker 3 away while the input goes to r3 again.
	wait_until 60 full r3 3
	kill9 3
	wait_until 60 isr_without r3 3
	produce r3 >/dev/null
	want=$(bytes_of 1 r3)
	lacks=$((want - $(bytes_of 3 r3)))
	wait_until 60 not registered 3
	t0=$(now_s)
	rbroker 3
	wait_until 300 holds 3 r3 "$want"
	t1=$(now_s)
	wait_until 120 full r3 3
	t2=$(now_s)
	cu=$(elapsed "$t0" "$t1")
	ratio "$lacks" "$cu" 0 >>"$WORK/catchup"
	elapsed "$t0" "$t2" >>"$WORK/rejoin"

	# Failover: the leader of r3's partition 0 killed -9; the first
	# acknowledged write after it.
	l=$(leader0 r3)
	t0=$(now_s)
	kill9 "$l"
	echo failover | "$PRODUCE" -q -Z "$zkc" -t r3 -p 0 -a all \
		--retry-for 60s || {
		echo "replication: no write acknowledged after the kill" >&2
		exit 1
	}
	t1=$(now_s)
	elapsed "$t0" "$t1" >>"$WORK/failover"
	nl=$(leader0 r3)
	note "run $i: rf3 $s3 s, rf1 $s1 s; broker 3 caught up $lacks bytes" \
		"in $cu s; failover from $l to $nl" \
		"$(tail -n 1 "$WORK/failover") s"

	for id in 1 2 3; do
		[ "$id" = "$l" ] || broker_stop "$(cat "$WORK/pid-$id")"
	done
	i=$((i + 1))
done
say repl_rf3_acks_all_lines_s "$(median <"$WORK/rf3")" lines/s
say repl_rf1_acks_all_lines_s "$(median <"$WORK/rf1")" lines/s
r=$(median <"$WORK/ratio")
say repl_rf3_ratio "$r" of_rf1
target repl_rf3_ratio "$r" ">=" 0.4 of_rf1
c=$(median <"$WORK/catchup")
say repl_catchup_mb_s "$(awk -v c="$c" 'BEGIN { printf "%.1f\n", c / 1048576 }')" MB/s
say repl_rejoin_s "$(median <"$WORK/rejoin")" s
f=$(median <"$WORK/failover")
say repl_failover_s "$f" s
target repl_failover_s "$f" "<=" "$(awk -v z="$ZKS" 'BEGIN { print z / 1000 + 1 }')" s
