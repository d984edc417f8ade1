#!/usr/bin/env bats
# klog-consume -Z without -G through the expiry of its own ZooKeeper
# session (issue 27): ZooKeeper paused (kill -STOP) for longer than every
# session timeout while the leader of the partition read is killed -9.
# Once ZooKeeper is back (kill -CONT) the sessions of the consumer and of
# the brokers have expired; the brokers register again and elect a new
# leader, and the consumer must open a session of its own, find that
# leader and print what is written there.  The consumer is also stopped
# across ZooKeeper's resume, so that its session surely expires.  Two
# brokers, replication factor 2, min.insync 1; sessions of 2 s.

bats_require_minimum_version 1.5.0
load helpers
load replication

setup_file() {
	start_zk
}

teardown_file() {
	stop_zk
}

setup() {
	common_setup
	unset KLOG_ZOOKEEPER KLOG_BROKERS
	ZKC="$ZK/expiry$BATS_TEST_NUMBER"
}

teardown() {
	# A failed test may have left ZooKeeper or the consumer stopped.
	kill -CONT "$ZK_PID" 2>/dev/null
	[ -z "${CONSUMER_PID:-}" ] || kill -CONT "$CONSUMER_PID" 2>/dev/null
	rep_teardown
	common_teardown
}

# lines N: the consumer has written N lines.
lines() {
	[ "$(wc -l <"$TMP/out")" -eq "$1" ]
}

@test "consume -Z: its session expires while the leader dies; it reads on at the new leader" {
	local l
	rep_broker 1
	rep_broker 2
	klog-group -Z "$ZKC" create-topic -t rt --partitions 1 \
		--replication-factor 2 --min-insync-replicas 1 >/dev/null
	rep_wait "$REP_WAIT" rep_leader rt 0 >/dev/null
	seq 1 10 | klog-produce -Z "$ZKC" -t rt -a all
	# --retry-for longer than the test: without a session of its own the
	# consumer would wait here, silent, rather than exit.
	klog-consume -Z "$ZKC" -t rt -o beginning -u \
		--zk-session-timeout "$REP_ZKS" --retry-for 60s \
		>"$TMP/out" 2>"$TMP/consume.err" &
	CONSUMER_PID=$!
	PIDS+=("$CONSUMER_PID")
	rep_wait 10 lines 10
	l=$(rep_leader rt 0)
	kill -STOP "$ZK_PID"
	rep_kill "$l"
	# Twice the session timeout: every session is past its deadline.
	sleep 4
	# When ZooKeeper resumes, a client's reconnect can still win the race
	# with its session's expiry (tests/unit/zk/test_zk.c): the consumer
	# stopped across the resume, twice its session timeout, makes its
	# expiry certain.
	kill -STOP "$CONSUMER_PID"
	kill -CONT "$ZK_PID"
	sleep 4
	kill -CONT "$CONSUMER_PID"
	rep_wait 20 rep_new_leader rt 0 "$l"
	seq 11 20 | klog-produce -Z "$ZKC" -t rt -a all --retry-for 10s
	rep_wait 15 lines 20 || {
		cat "$TMP/consume.err" >&2
		false
	}
	[ "$(sed -n '11p;20p' "$TMP/out" | paste -sd' ')" = "11 20" ]
	kill -0 "$CONSUMER_PID"
	grep -q 'zookeeper: session expired; opening a new one' \
		"$TMP/consume.err"
}
