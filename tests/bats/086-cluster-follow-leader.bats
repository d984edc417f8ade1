#!/usr/bin/env bats
# klog-produce -Z and klog-consume -Z on a replicated topic: records go to
# each partition's leader (and from there to its follower), a new leader
# is followed after a kill -9, a partition without a leader is waited for
# within --retry-for and then given up with 69, even while the consumer's
# other partitions are read.  Two brokers, replication factor 2 (1 where
# a partition is to lose every replica), min.insync 1; elections are the
# brokers' own.

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

@test "follow: a partition left without a leader is given up after --retry-for (69) while another one is read" {
	local pid st=0
	rep_broker 1
	rep_broker 2
	# One replica each, on two brokers: the kill leaves partition 0 with
	# none, and partition 1 answers the consumer's fetches all along.
	klog-group -Z "$ZKC" create-topic -t rt --partitions 2 \
		--replication-factor 1 --min-insync-replicas 1 >/dev/null
	rep_wait "$REP_WAIT" leaders
	[ "$(rep_leader rt 0)" != "$(rep_leader rt 1)" ]
	seq 1 10 | klog-produce -Z "$ZKC" -t rt -a all
	klog-consume -Z "$ZKC" -t rt -o beginning -u --retry-for 6s \
		>"$TMP/out" 2>"$TMP/err" &
	pid=$!
	PIDS+=("$pid")
	rep_wait 10 eval '[ "$(wc -l <"$TMP/out")" -eq 10 ]'
	rep_kill "$(rep_leader rt 0)"
	wait_gone "$pid" 20
	wait "$pid" || st=$?
	[ "$st" -eq 69 ]
	grep -q '^klog-consume: topic "rt" partition 0: .*gave up after' \
		"$TMP/err"
}

# seen: records the two group members have written, once each.
seen() {
	cat "$TMP"/m1.out "$TMP"/m2.out | sort -u | wc -l
}

@test "follow: a consumer group reads a replicated topic through a leader's kill -9" {
	local l i
	rep_broker 1
	rep_broker 2
	klog-group -Z "$ZKC" create-topic -t rt --partitions 2 \
		--replication-factor 2 --min-insync-replicas 1 >/dev/null
	rep_wait "$REP_WAIT" leaders
	seq 1 200 | klog-produce -Z "$ZKC" -t rt -a all
	for i in 1 2; do
		klog-consume -Z "$ZKC" -t rt -G g -o beginning -u \
			--zk-session-timeout "$REP_ZKS" --retry-for 60s \
			>"$TMP/m$i.out" 2>"$TMP/m$i.err" &
		PIDS+=("$!")
	done
	rep_wait "$REP_WAIT" eval '[ "$(seen)" -eq 200 ]'
	l=$(rep_leader rt 0)
	rep_kill "$l"
	rep_wait_new_leader rt 0 "$l"
	seq 201 400 | klog-produce -Z "$ZKC" -t rt -a all
	rep_wait "$REP_WAIT" eval '[ "$(seen)" -eq 400 ]'
	# Every record is one of those produced: nothing made up.
	[ "$(cat "$TMP"/m1.out "$TMP"/m2.out | sort -un | head -n 1)" = 1 ]
	[ "$(cat "$TMP"/m1.out "$TMP"/m2.out | sort -un | tail -n 1)" = 400 ]
	# The group's offsets are kept by partition number.
	run -0 klog-group -Z "$ZKC" -H describe -g g
	[ "${#lines[@]}" -eq 2 ]
	[[ "${lines[0]}" == "g	rt	0	"* ]]
	[[ "${lines[1]}" == "g	rt	1	"* ]]
}
