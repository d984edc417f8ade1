#!/usr/bin/env bats
# Replication under faults, in the spirit of Kafka's replication_test.py
# and Jepsen: three brokers, a topic of 3 partitions with replication
# factor 3 and --min-insync-replicas 2, an acks=all producer of numbered
# records per partition and a consumer running throughout, and kill -9 of
# leaders, of a leader and a follower, of a broker whose disk then loses
# its tail, and of the whole cluster.  After healing (full ISR) repcheck.py
# checks: no acknowledged record lost, order kept within a partition
# (retry duplicates aside), nothing a consumer saw missing from the final
# log at its offset, replicas byte-identical over the committed range.
# klog-produce prints no per-record offsets: each producer exiting 0 is
# what says every record it read was acknowledged.
#
# One ZooKeeper for the file, a chroot per test; helpers in
# replication.bash.  No timed assertion: every wait is a bound on a hang.

bats_require_minimum_version 1.5.0
load helpers
load replication

T=orders
RATE=20		# records a second into each partition's producer

setup_file() {
	start_zk
}

teardown_file() {
	stop_zk
}

setup() {
	common_setup
	unset KLOG_ZOOKEEPER KLOG_BROKERS
	ZKC="$ZK/rep$BATS_TEST_NUMBER"
	rep_cluster
	rep_create "$T" 3
}

teardown() {
	rep_teardown
	common_teardown
}

# running: the producers and the consumer, and records flowing on every
# partition before any fault.
running() {
	rep_produce_start "$T" 3 "$RATE"
	rep_consume_start "$T"
	rep_wait_progress 0 10
	rep_wait_progress 1 10
	rep_wait_progress 2 10
}

@test "replication: the leader of partition 0 killed -9 and restarted, twice" {
	local round l
	running
	# More rounds, and kills of every kind, are make soak's
	# (tests/soak/replication.sh).
	for round in 1 2; do
		l=$(rep_leader "$T" 0)
		rep_kill "$l"
		rep_wait_new_leader "$T" 0 "$l"
		# Writes carry on on the new leader while the old one is away.
		rep_wait_progress 0 20
		rep_restart "$l"
		rep_wait_full "$T" 3
		rep_wait_progress 0 10
	done
	# Two elections after the first leader's (epoch 1), each with a
	# higher epoch than the one before.
	[ "$(rep_get "$T" 0 leader_epoch)" -ge 3 ]
	rep_check "$T"
}

@test "replication: a leader and an in-sync follower killed in quick succession" {
	local l f
	running
	l=$(rep_leader "$T" 0)
	f=$(rep_follower "$T" 0)
	rep_kill "$l"
	rep_kill "$f"
	# The one left was in sync: it leads, alone in the ISR, so acks=all
	# writes wait (min.insync 2) until a second replica is back.
	rep_wait_new_leader "$T" 0 "$l" "$f"
	rep_wait_gone "$l"
	rep_wait_gone "$f"
	rep_broker "$f"
	rep_wait_progress 0 20
	rep_broker "$l"
	rep_check "$T"
}

@test "replication: kill -9, then the newest segments lose their tails (power loss)" {
	local l f cut
	running
	# The leader of partition 0 ...
	l=$(rep_leader "$T" 0)
	rep_kill "$l"
	cut=$(rep_cut_tail "$l" "$T" 100)
	[ "$cut" -gt 0 ]
	rep_wait_new_leader "$T" 0 "$l"
	rep_wait_progress 0 20
	rep_restart "$l"
	rep_wait_full "$T" 3
	# ... then a follower of partition 1, a torn entry at each tail.
	f=$(rep_follower "$T" 1)
	rep_kill "$f"
	cut=$(rep_cut_tail "$f" "$T" 7)
	[ "$cut" -gt 0 ]
	rep_wait_progress 1 20
	rep_restart "$f"
	rep_check "$T"
}

@test "replication: the whole cluster killed -9, restarted one by one" {
	local id
	running
	rep_kill 1
	rep_kill 2
	rep_kill 3
	for id in 1 2 3; do rep_wait_gone "$id"; done
	rep_broker 3
	sleep 1
	rep_broker 2
	rep_wait_progress 0 10
	rep_broker 1
	rep_check "$T"
}

@test "replication: acks=all waits for an in-sync follower that stopped fetching; its leader killed, that follower leads and nothing acknowledged is lost" {
	local l f1 f2
	running
	l=$(rep_leader "$T" 0)
	f1=$(rep_follower "$T" 0)
	f2=$(rep_get "$T" 0 replicas | tr , '\n' | grep -vx -e "$l" -e "$f1")
	rep_kill "$f2"
	rep_wait_gone "$f2"
	rep_wait "$REP_WAIT" rep_isr_is "$T" 0 "$l,$f1"
	# f1 stays in the ISR for --replica-lag-time without fetching: what
	# the leader takes meanwhile is on its disk only, and must not be
	# acknowledged (Jepsen's 2013 case, without the network partition).
	kill -STOP "${BROKER_PIDS[$f1]}"
	sleep 1
	rep_kill "$l"
	kill -CONT "${BROKER_PIDS[$f1]}"
	rep_wait_new_leader "$T" 0 "$l"
	[ "$(rep_leader "$T" 0)" = "$f1" ]
	# Alone in the ISR it takes no acks=all write: a second replica back,
	# the writes go on.
	rep_broker "$f2"
	rep_wait_progress 0 10
	# The old leader comes back as a follower and cuts what it alone had.
	rep_broker "$l"
	rep_check "$T"
}

@test "replication: with the ISR below --min-insync-replicas no acks=all write is acknowledged; a restarted follower catches up and rejoins" {
	local l f1 f2 end
	seq 1 5 | sed 's/^/0:/' |
		klog-produce -Z "$ZKC" -t "$T" -p 0 -a all --retry-for 30s
	l=$(rep_leader "$T" 0)
	f1=$(rep_follower "$T" 0)
	f2=$(rep_get "$T" 0 replicas | tr , '\n' | grep -vx -e "$l" -e "$f1")
	rep_kill "$f1"
	rep_kill "$f2"
	rep_wait_gone "$f1"
	rep_wait_gone "$f2"
	# The leader drops them from the ISR after --replica-lag-time.
	rep_wait "$REP_WAIT" rep_isr_is "$T" 0 "$l"
	end=$(stat -c %s "$(rep_newest_segment "$TMP/broker-$l/$T-0")")
	run timeout 60 klog-produce -Z "$ZKC" -t "$T" -p 0 -a all \
		--retry-for 3s <<<"0:6"
	[ "$status" -ne 0 ]
	# Refused, not appended: nothing new on the leader's disk.
	[ "$(stat -c %s "$(rep_newest_segment "$TMP/broker-$l/$T-0")")" -eq "$end" ]
	# One follower back: it catches up and rejoins; writes go through.
	rep_broker "$f1"
	rep_wait "$REP_WAIT" rep_isr_is "$T" 0 "$l,$f1"
	seq 6 15 | sed 's/^/0:/' |
		klog-produce -Z "$ZKC" -t "$T" -p 0 -a all --retry-for 30s
	rep_broker "$f2"
	rep_wait_full "$T" 3
	REP_SENT=(0=15)
	rep_check "$T"
}
