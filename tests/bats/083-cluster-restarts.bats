#!/usr/bin/env bats
# Cluster mode through restarts: ZooKeeper restarted on its data, a broker
# of a group's topic stopped and started again.  Brokers keep their
# registrations, group members keep (or get back) their partitions, and
# every record comes through.

bats_require_minimum_version 1.5.0
load helpers

ZKS=2000

setup() {
	common_setup
	unset KLOG_ZOOKEEPER KLOG_BROKERS
	start_zk
	export KLOG_ZOOKEEPER="$ZK"
	start_zk_broker 1 --zk-session-timeout $ZKS --topic t:2
	start_zk_broker 2 --zk-session-timeout $ZKS --topic t:2
}

teardown() {
	common_teardown
}

member() {
	klog-consume --zk-session-timeout $ZKS -G g -t t -o beginning -u -v \
		>"$TMP/$1.out" 2>"$TMP/$1.err" &
	PIDS+=("$!")
	eval "$1_pid=$!"
}

have() {
	local want=$1
	shift
	[ "$(cat "$@" | sort -u | wc -l)" -ge "$want" ]
}

wait_for() {
	local n=$1
	shift
	until "$@"; do
		n=$((n - 1))
		[ "$n" -gt 0 ] || return 1
		sleep 0.1
	done
}

owned_by() {
	[ "$(klog-group -H describe -g g -t t | awk '$7 != "-"' |
	    awk '{ print $7 }' | sort -u | wc -l)" -eq "$1" ]
}

@test "restarts: ZooKeeper restarted on its data is survived by brokers and members" {
	seq 1 200 | klog-produce -t t --batch 10
	member a
	member b
	wait_for 150 owned_by 2
	wait_for 100 have 200 "$TMP/a.out" "$TMP/b.out"
	restart_zk 1 || { cat "$ZK_DIR/log"; ls -la "$ZK_DIR"; false; }
	# The sessions survived: the same registrations, the same owners.
	wait_for 100 eval 'klog-group -H brokers | grep -c . | grep -qx 2'
	seq 201 400 | klog-produce -t t --batch 10
	wait_for 150 have 400 "$TMP/a.out" "$TMP/b.out"
	wait_for 150 owned_by 2
	kill -0 "$a_pid" && kill -0 "$b_pid"
	grep -q 'connection lost' "$TMP/a.err"
	grep -q 'connection lost' "$TMP/broker-1.log"
	# Back on the same session, or (when the restart outlasted it on a
	# loaded machine) on a new one with everything registered again.
	wait_for 50 grep -Eq 'reconnected|new session' "$TMP/broker-1.log"
}

@test "restarts: a broker stopped and started again: its partitions leave the group and come back" {
	seq 1 200 | klog-produce -t t --batch 10
	member a
	wait_for 150 owned_by 1
	wait_for 100 have 200 "$TMP/a.out"
	kill -TERM "${BROKER_PIDS[2]}"
	wait_gone "${BROKER_PIDS[2]}" 10
	# Only broker 1's partitions are left to own.
	wait_for 100 eval '[ "$(klog-group -H describe -g g -t t |
	    awk '\''$7 != "-"'\'' | wc -l)" -eq 2 ]'
	seq 201 300 | klog-produce -t t --batch 10
	start_zk_broker 2 --zk-session-timeout $ZKS
	seq 301 400 | klog-produce -t t --batch 10
	wait_for 150 have 400 "$TMP/a.out"
	run -0 klog-group -H describe -g g -t t
	[ "${#lines[@]}" -eq 4 ]
	grep -q 'reads 1-0 1-1 2-0 2-1' "$TMP/a.err"
}
