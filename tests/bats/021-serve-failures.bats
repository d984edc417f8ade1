#!/usr/bin/env bats
# klog-serve when things go wrong: a taken port, a data directory in use,
# kill -9 and recovery of a torn tail, a gap between segments, retention.

bats_require_minimum_version 1.5.0
load helpers

setup() {
	common_setup
}

teardown() {
	common_teardown
}

@test "serve: port in use: one clear line, exit 69, data untouched" {
	start_broker
	run -69 --separate-stderr klog-serve -l "$KLOG_BROKERS" -d "$TMP/other"
	[ "$stderr" = "klog-serve: listen $KLOG_BROKERS: Address already in use" ]
	[ ! -e "$TMP/other" ]
}

@test "serve: a data directory in use by another broker: exit 69" {
	start_broker
	run -69 --separate-stderr klog-serve -l "127.0.0.1:$(free_port)" \
		-d "$BROKER_DATA"
	[ "$stderr" = "klog-serve: $BROKER_DATA: in use by another broker" ]
	# The first one is unharmed.
	echo still | klog-produce -t a
	run -0 klog-consume -t a -o beginning -e
	[ "$output" = "still" ]
}

@test "serve: kill -9, a torn tail, restart: recovered, logged, acknowledged data kept" {
	start_broker
	seq 1 100 | klog-produce -t r -a all
	kill -KILL "$BROKER_PID"
	wait "$BROKER_PID" || true
	[ ! -e "$BROKER_DATA/.klog_cleanshutdown" ]
	# What a crash can leave: a half-written entry at the end.
	printf '\000\000\000\100\000garbage' >>"$BROKER_DATA/r-0/00000000000000000000.klog"
	start_broker
	grep -q '^klog-serve: warn: topic "r" partition 0: recovery truncated 12 bytes at offset [0-9]*, kept in .*\.salvage (klog-dump --salvage)$' "$TMP/broker.log"
	grep -q "^klog-serve: warn: $BROKER_DATA: no clean-shutdown marker: recovered 1 partition, 12 bytes truncated\$" "$TMP/broker.log"
	# How far recovery got is said, at least once it is done.
	grep -q '^klog-serve: info: recovery: 1 of 1 partitions (topic "r" partition 0)$' "$TMP/broker.log"
	run -0 klog-consume -t r -o beginning -e
	[ "$output" = "$(seq 1 100)" ]
	# New records go right after the recovered ones.
	echo 101 | klog-produce -t r
	run -0 klog-consume -t r -o beginning -e
	[ "$output" = "$(seq 1 101)" ]
}

@test "serve: a gap between segments: one line naming the file, exit 65" {
	start_broker --segment-bytes 1K
	seq 1 2000 | klog-produce -t g -a all --batch 50
	kill -TERM "$BROKER_PID"
	wait "$BROKER_PID"
	local segs
	segs=("$BROKER_DATA"/g-0/*.klog)
	[ "${#segs[@]}" -ge 3 ]
	rm "${segs[1]}"
	run -65 --separate-stderr klog-serve -l "127.0.0.1:$(free_port)" \
		-d "$BROKER_DATA"
	[ "${#stderr_lines[@]}" -eq 1 ]
	[[ "$stderr" == "klog-serve: "*"g-0"* ]]
}

@test "serve: the retention cleaner deletes old segments and says what it did" {
	start_broker --segment-bytes 1K
	seq 1 2000 | klog-produce -t old -a all --batch 50
	kill -TERM "$BROKER_PID"
	wait "$BROKER_PID"
	local n
	n=$(ls "$BROKER_DATA"/old-0/*.klog | wc -l)
	[ "$n" -ge 3 ]
	touch -d '3 days ago' "$BROKER_DATA"/old-0/*.klog
	start_broker --segment-bytes 1K --retention-hours 48 \
		--cleanup-interval 1s
	local i=100
	until grep -q 'topic "old" partition 0: retention deleted' \
		"$TMP/broker.log"; do
		[ "$i" -gt 0 ] || false
		sleep 0.1
		i=$((i - 1))
	done
	# Only the active segment is left, and the earliest offset moved.
	[ "$(ls "$BROKER_DATA"/old-0/*.klog | wc -l)" -eq 1 ]
	run -0 klog-consume -L -t old
	[ "$(echo "$output" | cut -f3)" -gt 0 ]
}

@test "serve: retention by size keeps each partition under --retention-bytes" {
	start_broker --segment-bytes 1K --retention-bytes 4K \
		--cleanup-interval 1s
	seq 1 3000 | klog-produce -t sz -a all --batch 50
	local i=100
	until grep -q 'topic "sz" partition 0: retention deleted' \
		"$TMP/broker.log"; do
		[ "$i" -gt 0 ] || false
		sleep 0.1
		i=$((i - 1))
	done
	[ "$(du -sb "$BROKER_DATA/sz-0" | cut -f1)" -lt 12000 ]
	# The newest records are still there.
	run -0 klog-consume -t sz -o beginning -e
	[ "${lines[-1]}" = "3000" ]
}

@test "serve: segments removed by another process (klog-retain) are noticed" {
	start_broker --segment-bytes 1K
	seq 1 2000 | klog-produce -t ext -a all --batch 50
	local first
	first=$(ls "$BROKER_DATA"/ext-0/*.klog | head -1)
	rm "$first"
	local i=150
	until [ "$(klog-consume -L -t ext | cut -f3)" -gt 0 ]; do
		[ "$i" -gt 0 ] || false
		sleep 0.1
		i=$((i - 1))
	done
	run -0 klog-consume -t ext -o beginning -e
	[ "${lines[-1]}" = "2000" ]
}
