#!/usr/bin/env bats
# klog-produce -Z and klog-consume -Z against several brokers found in
# ZooKeeper: topics created on every live broker, records spread over all
# (broker, partition) pairs, keys, a broker leaving mid-stream, usage.

bats_require_minimum_version 1.5.0
load helpers

ZKS=2000

setup_file() {
	start_zk
}

teardown_file() {
	stop_zk
}

setup() {
	common_setup
	unset KLOG_ZOOKEEPER KLOG_BROKERS
	ZKC="$ZK/produce$BATS_TEST_NUMBER"
}

teardown() {
	common_teardown
}

# count ID TOPIC PART: records of one partition on broker ID.
count() {
	klog-consume -b "127.0.0.1:${BROKER_PORTS[$1]}" -t "$2" -p "$3" \
		-o beginning -e | wc -l
}

@test "produce -Z: a new topic is made on every live broker; records spread over all partitions" {
	start_zk_broker 1 --zk-session-timeout $ZKS
	start_zk_broker 2 --zk-session-timeout $ZKS --partitions 2
	seq 1 3000 | klog-produce -Z "$ZKC" --zk-session-timeout $ZKS \
		-t spread --batch 20
	run -0 klog-group -Z "$ZKC" -H topics -t spread
	[ "${#lines[@]}" -eq 3 ]
	[[ "${lines[0]}" == "spread	1-0	1	"* ]]
	[[ "${lines[2]}" == "spread	2-1	2	"* ]]
	[ "$(count 1 spread 0)" -gt 0 ]
	[ "$(count 2 spread 0)" -gt 0 ]
	[ "$(count 2 spread 1)" -gt 0 ]
	[ $(( $(count 1 spread 0) + $(count 2 spread 0) +
	    $(count 2 spread 1) )) -eq 3000 ]
	# One consumer reads both brokers, merged.
	run -0 klog-consume -Z "$ZKC" -t spread -o beginning -e
	[ "${#lines[@]}" -eq 3000 ]
	[ "$(printf '%s\n' "${lines[@]}" | sort -n | uniq | wc -l)" -eq 3000 ]
	run -0 klog-consume -Z "$ZKC" -L -t spread
	[ "${#lines[@]}" -eq 3 ]
	[[ "${lines[2]}" == "spread	2	0	"* ]]
}

@test "produce -Z: a key always lands on the same (broker, partition)" {
	start_zk_broker 1 --zk-session-timeout $ZKS --topic k:2
	start_zk_broker 2 --zk-session-timeout $ZKS --topic k:2
	for i in $(seq 1 200); do echo "user$((i % 5)):event $i"; done |
		klog-produce -Z "$ZKC" -t k -K : --batch 7
	run -0 klog-consume -Z "$ZKC" -t k -o beginning -e -f '%p %s\n'
	[ "${#lines[@]}" -eq 200 ]
	# Each key in exactly one partition.
	[ "$(printf '%s\n' "${lines[@]}" | sed 's/:.*//' | sort -u | wc -l)" -eq 5 ]
	# Partition 1 is broker 1's second: the numeric sort of the pairs.
	run -0 klog-consume -Z "$ZKC" -t k -p 1 -o beginning -e
	[ "$(count 1 k 1)" -eq "${#lines[@]}" ]
}

@test "produce -Z: a broker that leaves is dropped; what it had not acknowledged goes elsewhere" {
	start_zk_broker 1 --zk-session-timeout $ZKS --topic gone:1
	start_zk_broker 2 --zk-session-timeout $ZKS --topic gone:1
	# A slow stream, so that the broker dies in the middle of it.
	(for i in $(seq 1 60); do echo "r$i"; sleep 0.1; done) |
		klog-produce -Z "$ZKC" --zk-session-timeout $ZKS -t gone \
		--linger 1ms --retry-for 60s -v 2>"$TMP/produce.err" &
	local prod=$!
	PIDS+=("$prod")
	sleep 2
	kill -KILL "${BROKER_PIDS[2]}"
	wait "$prod" || { cat "$TMP/produce.err"; false; }
	grep -q 'topic "gone": 1 partition now' "$TMP/produce.err"
	# Broker 2 keeps what it acknowledged before dying: bring it back to
	# count.  Nothing is missing (a record may be there twice).
	start_zk_broker 2 --zk-session-timeout $ZKS
	run -0 klog-consume -Z "$ZKC" -t gone -o beginning -e
	[ "$(printf '%s\n' "${lines[@]}" | sort -u | wc -l)" -eq 60 ]
	[ "$(count 1 gone 0)" -gt 0 ]
	[ "$(count 2 gone 0)" -gt 0 ]
}

@test "produce -Z: a broker that joins gets records too" {
	start_zk_broker 1 --zk-session-timeout $ZKS --topic join:1
	(for i in $(seq 1 40); do echo "j$i"; sleep 0.1; done) |
		klog-produce -Z "$ZKC" --zk-session-timeout $ZKS -t join \
		--linger 1ms &
	local prod=$!
	PIDS+=("$prod")
	sleep 1
	start_zk_broker 2 --zk-session-timeout $ZKS --topic join:1
	wait "$prod"
	[ "$(count 2 join 0)" -gt 0 ]
	run -0 klog-consume -Z "$ZKC" -t join -o beginning -e
	[ "$(printf '%s\n' "${lines[@]}" | sort -u | wc -l)" -eq 40 ]
}

@test "produce -Z, consume -Z: usage and an unreachable ZooKeeper" {
	local dead
	dead="127.0.0.1:$(free_port)"
	run -64 klog-produce -Z "$ZK" -b 127.0.0.1:1 -t x
	[[ "$output" == *"-b and -Z cannot be used together"* ]]
	run -64 klog-consume -Z "$ZK" -b 127.0.0.1:1 -t x
	run -64 klog-produce -Z "127.0.0.1" -t x
	run -64 klog-consume -Z "$ZK" --zk-session-timeout 1 -t x
	run -69 klog-produce -Z "$dead" -m 1s -t x </dev/null
	[[ "$output" == *"not connected in time"* ]]
	run -69 klog-consume -Z "$dead" -m 1s -t x
	# No live broker at all.
	run -69 klog-produce -Z "$ZKC" -m 1s -t x <<<"lost"
	[[ "$output" == *"no live broker"* ]]
	run -1 klog-consume -Z "$ZKC" -t x -e
	[[ "$output" == *'topic "x" does not exist'* ]]
	# KLOG_ZOOKEEPER is cluster mode; -b wins over it.
	start_zk_broker 1 --zk-session-timeout $ZKS
	echo env | KLOG_ZOOKEEPER="$ZKC" klog-produce -t e
	run -0 env KLOG_ZOOKEEPER="$dead" klog-consume \
		-b "127.0.0.1:${BROKER_PORTS[1]}" -t e -o beginning -e
	[ "$output" = env ]
}
