#!/usr/bin/env bats
# klog-produce -Z and klog-consume -Z on a replicated topic: records go to
# each partition's leader (and from there to its follower), a new leader
# is followed after a kill -9, a partition without a leader is waited for
# within --retry-for and then given up with 69.  Two brokers, replication
# factor 2, min.insync 1; elections are the brokers' own.

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
	ZKC="$ZK/follow$BATS_TEST_NUMBER"
}

teardown() {
	rep_teardown
	common_teardown
}

# count ID PART: records of partition PART of rt on broker ID's disk.
count() {
	klog-dump -P 0 "$TMP/broker-$1/rt-$2" | grep -c '^offset='
}

# leaders: both partitions have one.
leaders() {
	rep_leader rt 0 >/dev/null && rep_leader rt 1 >/dev/null
}

@test "follow: records go to each partition's leader; a new leader is followed; no leader is 69" {
	local l
	rep_broker 1
	rep_broker 2
	klog-group -Z "$ZKC" create-topic -t rt --partitions 2 \
		--replication-factor 2 --min-insync-replicas 1 >/dev/null
	rep_wait "$REP_WAIT" leaders
	seq 1 100 | klog-produce -Z "$ZKC" -t rt -a all --batch 10
	# Partition numbers, not (broker, partition) pairs.
	run -0 klog-consume -Z "$ZKC" -L -t rt
	[ "${#lines[@]}" -eq 2 ]
	run -0 klog-consume -Z "$ZKC" -t rt -o beginning -e
	[ "${#lines[@]}" -eq 100 ]
	# acks=all: on both replicas' disks.
	[ $(( $(count 1 0) + $(count 1 1) )) -eq 100 ]
	[ $(( $(count 2 0) + $(count 2 1) )) -eq 100 ]
	# The leader of partition 0 killed: the other leads, and is followed.
	l=$(rep_leader rt 0)
	rep_kill "$l"
	rep_wait_new_leader rt 0 "$l"
	seq 101 200 | klog-produce -Z "$ZKC" -t rt -p 0 -a all
	run -0 klog-consume -Z "$ZKC" -t rt -p 0 -o beginning -e
	[ "${lines[-1]}" = 200 ]
	# No broker left: no leader, waited for, then 69.
	rep_kill "$(rep_leader rt 0)"
	rep_wait_gone 1
	rep_wait_gone 2
	run -69 --separate-stderr klog-produce -Z "$ZKC" -t rt -p 0 \
		--retry-for 1s <<<x
	# The partition written to is named, not another one without a leader.
	[[ $stderr == 'klog-produce: topic "rt" partition 0: no leader'* ]]
	run -69 klog-consume -Z "$ZKC" -t rt -p 0 -o beginning -e --retry-for 1s
	[[ $output == *'partition 0: no leader'* ]]
}
