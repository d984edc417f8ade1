#!/usr/bin/env bats
# klog-group create-topic and topics for replicated topics (klog(7),
# "Replicated topics"): the assignment over three live brokers, the
# refusals, and the shapes of the topics output.  One ZooKeeper for the
# file; three cluster brokers for each test, under a chroot of its own.  The
# tests hold whether or not the brokers have elected leaders yet: a leader
# is -1 or one of the partition's replicas.

bats_require_minimum_version 1.5.0
load helpers

setup_file() {
	start_zk
}

teardown_file() {
	stop_zk
}

# Three brokers for each test, under a chroot of the test's own.
setup() {
	common_setup
	unset KLOG_ZOOKEEPER KLOG_BROKERS
	ZKC="$ZK/radmin$BATS_TEST_NUMBER"
	start_zk_broker 1
	start_zk_broker 2
	start_zk_broker 3
}

teardown() {
	common_teardown
}

@test "create-topic: spreads leaders and replicas over the live brokers" {
	run -0 klog-group -Z "$ZKC" -H create-topic -t spread --partitions 6 \
		--replication-factor 2 --min-insync-replicas 2
	[ "${#lines[@]}" -eq 6 ]
	run -0 klog-group -Z "$ZKC" -H -J topics -t spread
	echo "$output" | jq -e -s '
		length == 6 and
		([.[].partition] == [0,1,2,3,4,5]) and
		all(.[]; .topic == "spread" and (.replicas | length) == 2 and
		    (.replicas | unique | length) == 2 and
		    (.replicas - [1,2,3] == []) and
		    (.leader == -1 or (.leader as $l | .replicas | index($l)))
		    and (.isr - .replicas == []) and .leader_epoch >= 0) and
		# The preferred leaders (first replicas): two partitions each.
		([.[].replicas[0]] | group_by(.) | map(length)) == [2,2,2] and
		# Every broker holds four of the twelve replicas.
		([.[].replicas[]] | group_by(.) | map(length)) == [4,4,4]'
	# The assignment node is the documented JSON.
	run -0 /usr/share/zookeeper/bin/zkCli.sh -server "$ZKC" \
		get /klog/topics/spread
	[[ "$output" == *'{"version":1,"partitions":{"0":['*'"min_insync":2}'* ]]
}

@test "create-topic: the state written at creation" {
	run -0 klog-group -Z "$ZKC" -H -J create-topic -t fresh --partitions 1 \
		--replication-factor 3
	# Before an election: leader node absent, epoch 0, isr all replicas.
	# After one: the leader is a replica and the epoch has grown.
	echo "$output" | jq -e '
		(.replicas | sort) == [1,2,3] and (.isr - .replicas == []) and
		((.leader == -1 and .leader_epoch == 0 and
		  (.isr | sort) == [1,2,3]) or
		 (.leader as $l | .replicas | index($l)) != null)'
	run -0 /usr/share/zookeeper/bin/zkCli.sh -server "$ZKC" \
		get /klog/topics/fresh/partitions/0/state
	[[ "$output" == *'{"version":1,"isr":['*'],"leader":'*',"controller_epoch":-1,"leader_epoch":'* ]]
}

@test "create-topic: refuses more replicas than live brokers" {
	run -1 klog-group -Z "$ZKC" create-topic -t toomany --partitions 1 \
		--replication-factor 4
	[ "$output" = "klog-group: replication factor: 4 larger than available brokers: 3" ]
	run -1 klog-group -Z "$ZKC" topics -t toomany
}

@test "create-topic: usage errors" {
	run -64 klog-group -Z "$ZKC" create-topic -t u --partitions 1
	[[ "$output" == *"--replication-factor is required"* ]]
	run -64 klog-group -Z "$ZKC" create-topic -t u --replication-factor 1
	[[ "$output" == *"create-topic needs --partitions"* ]]
	run -64 klog-group -Z "$ZKC" create-topic --partitions 1 \
		--replication-factor 1
	[[ "$output" == *"create-topic needs -t"* ]]
	run -64 klog-group -Z "$ZKC" create-topic -t u --partitions 1 \
		--replication-factor 2 --min-insync-replicas 3
	[[ "$output" == *"--min-insync-replicas 3 is more than --replication-factor 2"* ]]
	run -64 klog-group -Z "$ZKC" create-topic -t u --partitions 1 \
		--replication-factor 2 --min-insync-replicas 0
	run -64 klog-group -Z "$ZKC" create-topic -t u --partitions 0 \
		--replication-factor 1
	run -64 klog-group -Z "$ZKC" create-topic -t u --partitions x \
		--replication-factor 1
	run -64 klog-group -Z "$ZKC" topics --partitions 2
	[[ "$output" == *"topics does not take --partitions"* ]]
}

@test "create-topic: an existing topic, replicated or not, is refused" {
	run -0 klog-group -Z "$ZKC" create-topic -t twice --partitions 1 \
		--replication-factor 1
	run -1 klog-group -Z "$ZKC" create-topic -t twice --partitions 2 \
		--replication-factor 1
	[[ "$output" == *'topic "twice" exists'* ]]
	# A 0.7-layout topic, made by a broker on the first produce.
	echo x | klog-produce -b "127.0.0.1:${BROKER_PORTS[1]}" -t legacy
	n=100
	until klog-group -Z "$ZKC" -H topics -t legacy >/dev/null 2>&1; do
		n=$((n - 1)); [ "$n" -gt 0 ]; sleep 0.1
	done
	run -1 klog-group -Z "$ZKC" create-topic -t legacy --partitions 1 \
		--replication-factor 1
	[[ "$output" == *'topic "legacy" exists (unreplicated'* ]]
}

@test "topics: replicated topics have their own table; -H and -J" {
	klog-group -Z "$ZKC" create-topic -t table --partitions 2 \
		--replication-factor 3 >/dev/null
	run -0 klog-group -Z "$ZKC" topics -t table
	[ "${lines[0]}" = "$(printf 'TOPIC\tPARTITION\tLEADER\tLEADER_EPOCH\tREPLICAS\tISR')" ]
	[ "${#lines[@]}" -eq 3 ]
	[[ "${lines[1]}" =~ ^table$'\t'0$'\t'-?[0-9]+$'\t'[0-9]+$'\t'[1-3],[1-3],[1-3]$'\t'[1-3,]*$ ]]
	run -0 klog-group -Z "$ZKC" -H topics -t table
	[ "${#lines[@]}" -eq 2 ]
	[[ "${lines[0]}" == table$'\t'0$'\t'* ]]
	run -0 klog-group -Z "$ZKC" -J topics -t table
	[ "${#lines[@]}" -eq 2 ]
	echo "${lines[1]}" | jq -e '
		(keys | sort) == ["isr","leader","leader_epoch","partition",
		    "replicas","topic"] and .partition == 1 and
		(.leader | type) == "number" and (.isr | type) == "array"'
	# Without -t: the 0.7 table, then the replicated one with its header.
	run -0 klog-group -Z "$ZKC" topics
	[ "${lines[0]}" = "$(printf 'TOPIC\tPARTITION\tBROKER\tADDRESS')" ]
	printf '%s\n' "${lines[@]}" | grep -qx "$(printf 'TOPIC\tPARTITION\tLEADER\tLEADER_EPOCH\tREPLICAS\tISR')"
	printf '%s\n' "${lines[@]}" | grep -q "^table	1	"
	run -1 klog-group -Z "$ZKC" topics -t nosuch
}
