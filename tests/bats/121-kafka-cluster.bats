#!/usr/bin/env bats
# The Kafka listener in cluster mode: three brokers, each with a Kafka
# listener registered in ZooKeeper; Metadata from any one names every
# listener and each replicated partition's leader; kcat moves to the new
# leader when one is killed; a Kafka group's coordinator is the same from
# every broker and its commits are the group's ZooKeeper offsets, which
# klog-group describe shows and OffsetFetch of every partition reads.

bats_require_minimum_version 1.5.0
load helpers
load kafka

setup_file() {
	start_zk
}

teardown_file() {
	stop_zk
}

declare -gA KPORTS

# kafka_broker ID: cluster broker ID with a Kafka listener of its own
# (KPORTS[ID], kept for restarts) and 2 s sessions.
kafka_broker() {
	KPORTS[$1]=${KPORTS[$1]:-$(free_port)}
	start_zk_broker "$1" --zk-session-timeout 2000 --replica-lag-time 3s \
		--kafka-listen "127.0.0.1:${KPORTS[$1]}"
}

setup() {
	common_setup
	unset KLOG_ZOOKEEPER KLOG_BROKERS
	ZKC="$ZK/kc$BATS_TEST_NUMBER"
	kafka_broker 1
	kafka_broker 2
	kafka_broker 3
	KAFKA="127.0.0.1:${KPORTS[1]}"
}

teardown() {
	common_teardown
}

# wait_leaders TOPIC N: until every one of the N partitions has a leader.
wait_leaders() {
	local n=100
	until [ "$(klog-group -Z "$ZKC" -H -J topics -t "$1" |
	    jq -s '[.[] | select(.leader >= 0)] | length')" -eq "$2" ]; do
		n=$((n - 1))
		[ "$n" -gt 0 ] || return 1
		sleep 0.1
	done
}

@test "kafka cluster: Metadata from any broker names all three listeners and each leader" {
	klog-group -Z "$ZKC" -H create-topic -t orders --partitions 3 \
		--replication-factor 3 >/dev/null
	wait_leaders orders 3
	for id in 1 2 3; do
		run -0 timeout 30 kcat -b "127.0.0.1:${KPORTS[$id]}" -L -t orders
		[[ $output == *"3 brokers:"* ]]
		for b in 1 2 3; do
			[[ $output == *"broker $b at 127.0.0.1:${KPORTS[$b]}"* ]]
		done
		[[ $output == *'topic "orders" with 3 partitions:'* ]]
	done
	# The leaders kcat is told are ZooKeeper's.
	klog-group -Z "$ZKC" -H -J topics -t orders |
		jq -r '"partition \(.partition), leader \(.leader),"' |
		while read -r line; do
			[[ $output == *"$line"* ]]
		done
	# 0.7-layout topics are the native tools' only.
	seq 10 | klog-produce -Z "$ZKC" -t legacy
	run -0 timeout 30 kcat -b "$KAFKA" -L -t legacy
	[[ $output == *'topic "legacy" with 0 partitions: Broker: Unknown topic or partition'* ]]
}

@test "kafka cluster: kcat produces to each leader; the records survive the leader's kill -9" {
	klog-group -Z "$ZKC" -H create-topic -t ev --partitions 2 \
		--replication-factor 3 --min-insync-replicas 2 >/dev/null
	wait_leaders ev 2
	seq 1 20000 >"$TMP/in1"
	kc -P -t ev -X acks=all <"$TMP/in1"
	leader=$(klog-group -Z "$ZKC" -H -J topics -t ev |
		jq -r 'select(.partition == 0) | .leader')
	kill -KILL "${BROKER_PIDS[$leader]}"
	# Another broker's listener, in case the one killed was ours.
	for id in 1 2 3; do
		[ "$id" != "$leader" ] && KAFKA="127.0.0.1:${KPORTS[$id]}"
	done
	# Compressed batches too: kept compressed, copied verbatim by the
	# followers.
	seq 20001 30000 >"$TMP/in2"
	kc -P -t ev -X acks=all -X message.timeout.ms=60000 -z gzip \
		<"$TMP/in2"
	# Every acknowledged record, from the new leaders, through Kafka and
	# natively.
	kc -C -t ev -o beginning -e >"$TMP/out"
	sort -n "$TMP/out" | cmp - <(seq 1 30000)
	klog-consume -Z "$ZKC" -t ev -o beginning -e | sort -n |
		cmp - <(seq 1 30000)
	# The two live replicas of each partition hold the same bytes up to
	# the committed end, the gzip batches among them.
	klog-consume -Z "$ZKC" -L -t ev >"$TMP/list"
	for p in 0 1; do
		end=$(awk -v p="$p" '$2 == p { print $4 }' "$TMP/list")
		live=()
		for id in 1 2 3; do
			[ "$id" = "$leader" ] ||
				live+=("$TMP/broker-$id/ev-$p/00000000000000000000.klog")
		done
		n=100
		until cmp -n "$end" "${live[@]}" 2>/dev/null; do
			n=$((n - 1))
			[ "$n" -gt 0 ]
			sleep 0.1
		done
		entry_kinds "${live[0]}" >>"$TMP/kinds"
	done
	# librdkafka's sticky partitioner may put all of them in one
	# partition: a gzip batch in either.
	grep -qx 2/1 "$TMP/kinds"
}

@test "kafka cluster: a group's coordinator is one broker; its commits are ZooKeeper offsets klog-group describe shows" {
	klog-group -Z "$ZKC" -H create-topic -t gq --partitions 2 \
		--replication-factor 2 >/dev/null
	wait_leaders gq 2
	seq 1000 | klog-produce -Z "$ZKC" -t gq -a all
	# Every broker names the same coordinator.
	for id in 1 2 3; do
		"$PY" - "127.0.0.1:${KPORTS[$id]}" <<-'EOF2' >>"$TMP/coord"
		import sys
		from kafka import KafkaAdminClient
		a = KafkaAdminClient(bootstrap_servers=sys.argv[1])
		print(a._find_coordinator_ids(["billing"])["billing"])
		a.close()
		EOF2
	done
	[ "$(sort -u "$TMP/coord" | wc -l)" -eq 1 ]
	timeout 30 "$PY" - "$KAFKA" <<-'EOF2'
	import sys
	from kafka import KafkaConsumer
	c = KafkaConsumer("gq", bootstrap_servers=sys.argv[1], group_id="billing",
	                  auto_offset_reset="earliest", enable_auto_commit=False,
	                  consumer_timeout_ms=5000)
	n = sum(1 for _ in c)
	assert n == 1000, n
	c.commit()
	c.close()
	EOF2
	# klog-group describe: the committed offsets, lag 0.
	run -0 klog-group -Z "$ZKC" -H describe -g billing
	# group, topic, partition, offset, end, lag, owner
	[ "$(echo "$output" | awk '$1 == "billing" && $2 == "gq"' | wc -l)" -eq 2 ]
	echo "$output" | awk '$2 == "gq" { if ($4 != $5 || $6 != 0) exit 1 }'
	echo "$output" | awk '$2 == "gq" { s += $4 } END { exit !(s == 11893) }'
	# Every offset of the group (OffsetFetch with null topics) read from
	# ZooKeeper, from any broker.
	"$PY" - "127.0.0.1:${KPORTS[2]}" <<-'EOF2'
	import sys
	from kafka import KafkaAdminClient
	a = KafkaAdminClient(bootstrap_servers=sys.argv[1])
	o = a.list_consumer_group_offsets("billing")
	assert sorted((tp.topic, tp.partition) for tp in o) == [("gq", 0), ("gq", 1)], o
	assert sum(v.offset for v in o.values()) == 11893, o
	a.close()
	EOF2
}
