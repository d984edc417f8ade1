#!/bin/bash
# make soak: the kill loop of tests/bats/112-replication-faults.bats for
# longer (SOAK_SECONDS, default 300), outside make check.  Three brokers, a
# topic of 3 partitions with replication factor 3 and min.insync 2, acks=all
# producers of numbered records (SOAK_RATE a second into each partition)
# and a consumer throughout; faults drawn at random (SOAK_SEED): kill -9 of
# a partition's leader, of a leader and an in-sync follower, of a broker
# whose newest segments then lose a random tail, of the whole cluster; each
# broker restarted once its registration has expired.  At the end the
# checks of tests/bats/repcheck.py, and the figures: records acknowledged,
# kills, time from a leader's kill to a new leader and from a restart to a
# full ISR (medians and maxima).  Exit 0 only if every check passed.
# Everything on 127.0.0.1, free ports, a temp dir; processes killed by pid.
set -u
cd "$(dirname "$0")/../.." || exit 1
BATS_TEST_DIRNAME=$PWD/tests/bats
. tests/bats/helpers.bash
. tests/bats/replication.bash

SOAK_SECONDS=${SOAK_SECONDS:-300}
SOAK_RATE=${SOAK_RATE:-50}
RANDOM=${SOAK_SEED:-$$}
T=soak

if [ ! -x bin/klog-serve ]; then
	echo "make soak: build first (make all)" >&2
	exit 1
fi
common_setup
finish() {
	[ "${BATS_TEST_COMPLETED:-}" = 1 ] || rep_logs >&2
	rep_teardown >/dev/null 2>&1
	stop_zk 2>/dev/null
	common_teardown
}
trap finish EXIT
trap 'exit 130' INT TERM

now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.2f\n", b - a }'; }
# stat FILE: "median max" of the numbers in FILE.
stats() {
	sort -g "$1" | awk '{ v[NR] = $1 } END {
		if (NR == 0) { print "- -"; exit }
		m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
		printf "%.2f %.2f\n", m, v[NR] }'
}
die() { echo "soak: FAIL: $*" >&2; exit 1; }

start_zk || die "ZooKeeper did not start"
rep_cluster || die "the brokers did not start"
rep_create "$T" 3 || die "create-topic"
rep_produce_start "$T" 3 "$SOAK_RATE"
rep_consume_start "$T"
for p in 0 1 2; do rep_wait_progress "$p" 10 || die "no records flowing"; done

kills=0 faults=0
: >"$TMP/failover"; : >"$TMP/rejoin"
# kill_leader P: kill -9 partition P's leader; time until another leads.
kill_leader() {
	local l t0
	l=$(rep_leader "$T" "$1") || die "partition $1 has no leader"
	t0=$(now)
	rep_kill "$l"
	kills=$((kills + 1))
	rep_wait_new_leader "$T" "$1" "$l" || die "no new leader for $1"
	since "$t0" >>"$TMP/failover"
	KILLED=$l
}
# back IDS...: restart them; time until the ISR is full again.
back() {
	local id t0
	for id in "$@"; do rep_wait_gone "$id" || die "broker $id stays"; done
	t0=$(now)
	for id in "$@"; do rep_broker "$id" || die "broker $id restart"; done
	rep_wait_full "$T" 3 || die "ISR not full after restarting $*"
	since "$t0" >>"$TMP/rejoin"
}

t_end=$(( $(date +%s) + SOAK_SECONDS ))
while [ "$(date +%s)" -lt "$t_end" ]; do
	p=$((RANDOM % 3))
	faults=$((faults + 1))
	case $((RANDOM % 8)) in
	0)	# a leader and an in-sync follower
		f=$(rep_follower "$T" "$p") || die "partition $p: no follower"
		kill_leader "$p"
		rep_kill "$f"
		kills=$((kills + 1))
		rep_log "fault $faults: leader $KILLED and follower $f of $p"
		back "$f" "$KILLED" ;;
	1)	# the whole cluster, restarted one by one
		rep_kill 1; rep_kill 2; rep_kill 3
		kills=$((kills + 3))
		rep_log "fault $faults: whole cluster"
		for id in 1 2 3; do rep_wait_gone "$id" || die "$id stays"; done
		t0=$(now)
		s=$((RANDOM % 3))
		for k in 0 1 2; do
			id=$(( (s + k) % 3 + 1 ))
			rep_broker "$id" || die "broker $id restart"
			sleep "0.$((RANDOM % 10))"
		done
		rep_wait_full "$T" 3 || die "ISR not full after whole cluster"
		since "$t0" >>"$TMP/rejoin" ;;
	2|3)	# power loss on the leader
		kill_leader "$p"
		rep_cut_tail "$KILLED" "$T" $((1 + RANDOM % 500)) >/dev/null
		rep_log "fault $faults: power loss on $KILLED (leader of $p)"
		back "$KILLED" ;;
	*)	# the leader, killed -9
		kill_leader "$p"
		rep_log "fault $faults: leader $KILLED of $p"
		back "$KILLED" ;;
	esac
	rep_wait_progress "$p" 5 || die "partition $p: no progress after fault $faults"
	sleep "$((RANDOM % 3))"
done

# Not in $(...): rep_check sets REP_SENT.
st=0
rep_check "$T" >"$TMP/check.out" 2>&1 || st=$?
cat "$TMP/check.out"
acked=0
for s in "${REP_SENT[@]}"; do acked=$((acked + ${s#*=})); done
read -r fo_med fo_max < <(stats "$TMP/failover")
read -r rj_med rj_max < <(stats "$TMP/rejoin")
echo "soak_seconds $SOAK_SECONDS s"
echo "soak_faults $faults faults"
echo "soak_kills $kills kills"
echo "soak_records_acked $acked records"
echo "soak_failover_median $fo_med s (kill -9 of a leader to a new leader)"
echo "soak_failover_max $fo_max s"
echo "soak_rejoin_median $rj_med s (restart to a full ISR)"
echo "soak_rejoin_max $rj_max s"
[ "$st" -eq 0 ] || die "checks failed"
BATS_TEST_COMPLETED=1
echo "soak: ok"
