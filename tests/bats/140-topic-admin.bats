#!/usr/bin/env bats
# klog-group -b: a standalone broker's topics created, grown and deleted at
# run time; what a delete does to consumers and producers; a partition
# directory removed behind the broker's back (issue 15).

bats_require_minimum_version 1.5.0
load helpers

setup() {
	common_setup
}

teardown() {
	common_teardown
}

@test "topic admin: create-topic -b makes a local topic; again is refused" {
	start_broker
	run klog-group -b "$KLOG_BROKERS" create-topic -t app --partitions 3
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = "$(printf 'TOPIC\tPARTITIONS')" ]
	[ "${lines[1]}" = "$(printf 'app\t3')" ]
	[ -d "$BROKER_DATA/app-0" ] && [ -d "$BROKER_DATA/app-2" ]
	[ ! -e "$BROKER_DATA/app-3" ]
	run klog-consume -L -t app
	[ "$status" -eq 0 ]
	[[ "$output" == *app* ]]
	run klog-group -b "$KLOG_BROKERS" create-topic -t app --partitions 3
	[ "$status" -eq 1 ]
	[[ "$output" == *'topic "app" exists already'* ]]
}

@test "topic admin: alter-topic adds partitions, never removes them" {
	start_broker
	klog-group -b "$KLOG_BROKERS" create-topic -t app --partitions 2
	run klog-group -b "$KLOG_BROKERS" -J alter-topic -t app --partitions 4
	[ "$status" -eq 0 ]
	[ "$output" = '{"topic":"app","partitions":4}' ]
	[ -d "$BROKER_DATA/app-3" ]
	echo x | klog-produce -t app -p 3 -a all
	run klog-group -b "$KLOG_BROKERS" alter-topic -t app --partitions 2
	[ "$status" -eq 1 ]
	[[ "$output" == *'has 4 partitions: partitions are added, never removed'* ]]
	[ -d "$BROKER_DATA/app-3" ]
	run klog-group -b "$KLOG_BROKERS" alter-topic -t nope --partitions 2
	[ "$status" -eq 1 ]
	[[ "$output" == *'topic "nope": no such topic'* ]]
}

@test "topic admin: delete-topic answers a follower, removes the data; produce makes it afresh" {
	start_broker
	echo one | klog-produce -t todel -a all
	klog-consume -t todel -o beginning -u >"$TMP/out" 2>"$TMP/err" &
	local cpid=$!
	PIDS+=("$cpid")
	local i=0
	until grep -q one "$TMP/out" || [ "$i" -ge 50 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	grep -q one "$TMP/out"
	run klog-group -b "$KLOG_BROKERS" -H delete-topic -t todel
	[ "$status" -eq 0 ]
	[ "$output" = "$(printf 'todel\t1')" ]
	[ ! -e "$BROKER_DATA/todel-0" ]
	# The long poll it was parked in is answered: it stops, and says why.
	run wait "$cpid"
	[ "$status" -eq 1 ]
	grep -q 'topic "todel" partition 0: the topic no longer exists' \
		"$TMP/err"
	grep -q 'deleted topic "todel" (1 partition)' "$TMP/broker.log"
	run klog-consume -t todel -e
	[ "$status" -eq 1 ]
	[[ "$output" == *'topic "todel" does not exist'* ]]
	run klog-group -b "$KLOG_BROKERS" delete-topic -t todel
	[ "$status" -eq 1 ]
	[[ "$output" == *'no such topic'* ]]
	echo two | klog-produce -t todel -a all
	run klog-consume -t todel -o beginning -e
	[ "$status" -eq 0 ]
	[ "$output" = two ]
}

@test "topic admin: after a delete, --no-auto-create refuses the produce" {
	start_broker --no-auto-create --topic todel:1
	echo one | klog-produce -t todel -a all
	klog-group -b "$KLOG_BROKERS" delete-topic -t todel
	run klog-produce -t todel -a all <<<"two"
	[ "$status" -ne 0 ]
	[[ "$output" == *'topic "todel" does not exist and the broker did not create it'* ]]
	[ ! -e "$BROKER_DATA/todel-0" ]
}

@test "topic admin: rm -rf of a partition directory never acknowledges acks=all into it" {
	start_broker
	echo first | klog-produce -t todel -a all
	rm -rf "$BROKER_DATA/todel-0"
	run klog-produce -t todel -a all <<<"again"
	[ "$status" -ne 0 ]
	[[ "$output" == *STORAGE_ERROR* ]]
	grep -q 'todel-0/00000000000000000000.klog: removed while the broker had it open' \
		"$TMP/broker.log"
	grep -q 'topic "todel" partition 0: its directory was removed behind' \
		"$TMP/broker.log"
	# The next write lands in a live file: it is there to read.
	echo again | klog-produce -t todel -a all
	[ -s "$BROKER_DATA/todel-0/00000000000000000000.klog" ]
	run klog-consume -t todel -o beginning -e
	[ "$status" -eq 0 ]
	[ "$output" = again ]
}

@test "topic admin: -b and -Z choose the commands they take" {
	run klog-group -b 127.0.0.1:1 list
	[ "$status" -eq 64 ]
	[[ "$output" == *'list needs ZooKeeper (-Z), not a broker (-b)'* ]]
	# -Z alters and deletes replicated topics (113-replicated-topic-admin).
	run klog-group -Z "127.0.0.1:$(free_port)" -T 1s delete-topic -t x
	[ "$status" -eq 69 ]
	run klog-group -b 127.0.0.1:1 create-topic -t x --partitions 1 \
		--replication-factor 1
	[ "$status" -eq 64 ]
	[[ "$output" == *'--replication-factor and --min-insync-replicas need -Z'* ]]
	run klog-group -b 127.0.0.1:1 -Z 127.0.0.1:2 create-topic -t x \
		--partitions 1
	[ "$status" -eq 64 ]
	run klog-group -b 127.0.0.1:1 alter-topic -t x
	[ "$status" -eq 64 ]
	[[ "$output" == *'alter-topic needs --partitions'* ]]
	run klog-group -b "127.0.0.1:$(free_port)" delete-topic -t x
	[ "$status" -eq 69 ]
}

@test "topic admin: klog-group(1)'s -b examples run" {
	start_broker
	local b=$KLOG_BROKERS
	run klog-group -b "$b" create-topic -t clicks --partitions 3
	[ "$status" -eq 0 ]
	run klog-group -b "$b" alter-topic -t clicks --partitions 6
	[ "$status" -eq 0 ]
	[ "${lines[1]}" = "$(printf 'clicks\t6')" ]
	[ -d "$BROKER_DATA/clicks-5" ]
	run klog-group -b "$b" delete-topic -t clicks
	[ "$status" -eq 0 ]
	[ ! -e "$BROKER_DATA/clicks-0" ] && [ ! -e "$BROKER_DATA/clicks-5" ]
}
