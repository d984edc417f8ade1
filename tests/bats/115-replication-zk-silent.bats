#!/usr/bin/env bats
# Replication when ZooKeeper goes silent (issue 27): three brokers with
# metrics listeners, a topic of 3 partitions, RF 3, --min-insync-replicas
# 2, a 2 s ZooKeeper session.  ZooKeeper is paused (kill -STOP: its
# connections stay open and nothing is answered, as across a silent
# network partition), and with it one follower, so that the leader must
# also shrink an ISR meanwhile.  The partition suite with network
# namespaces and lossy links is make soak's (SOAK=partitions).
#
# One ZooKeeper for the file (this test pauses it), a chroot per test;
# helpers in replication.bash.

bats_require_minimum_version 1.5.0
load helpers
load replication

T=orders
REP_ZKS=2000
REP_LAG=1s
declare -gA METRICS_PORTS

setup_file() {
	start_zk
}

teardown_file() {
	[ -z "${ZK_PID:-}" ] || kill -CONT "$ZK_PID" 2>/dev/null
	stop_zk
}

setup() {
	common_setup
	unset KLOG_ZOOKEEPER KLOG_BROKERS
	ZKC="$ZK/part$BATS_TEST_NUMBER"
	local id
	for id in 1 2 3; do
		METRICS_PORTS[$id]=$(free_port)
		start_zk_broker "$id" --zk-session-timeout "$REP_ZKS" \
			--replica-lag-time "$REP_LAG" \
			--metrics-listen "127.0.0.1:${METRICS_PORTS[$id]}" ||
			return 1
	done
	rep_create "$T" 3
}

teardown() {
	local id
	kill -CONT "$ZK_PID" 2>/dev/null || :
	for id in 1 2 3; do
		kill -CONT "${BROKER_PIDS[$id]}" 2>/dev/null || :
	done
	rep_teardown
	common_teardown
}

now_ms() { echo $(( $(date +%s%N) / 1000000 )); }

# scrape ID: broker ID's /metrics, or fail after a second.
scrape() {
	curl -sf --max-time 1 "http://127.0.0.1:${METRICS_PORTS[$1]}/metrics"
}

@test "ZooKeeper silent: the leader stops leading within its session timeout, says so, and its loop never waits" {
	local l f stop_at t fenced_at=0 polls=0 missed=0 out
	l=$(rep_leader "$T" 0)
	f=$(rep_get "$T" 0 replicas | tr , '\n' | grep -vx "$l" | head -1)
	scrape "$l" | grep -qx 'klog_zookeeper_fenced 0'

	kill -STOP "$ZK_PID" "${BROKER_PIDS[$f]}"
	stop_at=$(now_ms)
	# Past the session timeout, and past the follower's lag (the ISR
	# write it brings can only wait, or not, on the loop).
	while t=$(now_ms); [ $((t - stop_at)) -lt 4000 ]; do
		polls=$((polls + 1))
		if ! out=$(scrape "$l"); then
			missed=$((missed + 1))
			echo "# /metrics of broker $l missed at $((t - stop_at)) ms" >&3
		elif [ "$fenced_at" -eq 0 ] &&
		    grep -qx 'klog_zookeeper_fenced 1' <<<"$out"; then
			fenced_at=$((t - stop_at))
		fi
		sleep 0.1
	done
	kill -CONT "$ZK_PID" "${BROKER_PIDS[$f]}"
	echo "# broker $l fenced at ${fenced_at} ms; $missed of $polls scrapes missed" >&3

	[ "$missed" -eq 0 ]
	[ "$fenced_at" -gt 0 ]
	[ "$fenced_at" -le $((REP_ZKS + 1000)) ]
	grep -q 'zookeeper: silent for [0-9]* ms (session timeout 2000 ms): leading nothing until it answers' \
		"$TMP/broker-$l.log"

	# Answering again: every partition led, the ISRs full, an acks=all
	# record acknowledged, and nobody fenced.
	rep_wait_full "$T" 3
	echo 'after the pause' | klog-produce -Z "$ZKC" -t "$T" -p 0 -a all \
		--retry-for 30s
	for id in 1 2 3; do
		rep_wait 20 eval "scrape $id | grep -qx 'klog_zookeeper_fenced 0'"
	done
	scrape "$l" | grep -q '^klog_zookeeper_fences_total [1-9]'
}
