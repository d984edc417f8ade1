#!/usr/bin/env bats
# Following: tail -F | klog-produce into a following klog-consume; records
# show up downstream without more input pushing them; SIGINT/TERM stop a
# follower cleanly.  Waits are generous loops, never timing assertions.

bats_require_minimum_version 1.5.0
load helpers

setup() {
	common_setup
}

teardown() {
	common_teardown
}

# wait_for SECONDS COMMAND...: until COMMAND succeeds.
wait_for() {
	local n=$(( $1 * 10 ))
	shift
	until "$@"; do
		[ "$n" -gt 0 ] || return 1
		sleep 0.1
		n=$((n - 1))
	done
}

has_lines() {
	[ "$(wc -l <"$1" 2>/dev/null || echo 0)" -ge "$2" ]
}

@test "follow: tail -F | klog-produce, and a following klog-consume sees each line" {
	start_broker
	: >"$TMP/access.log"
	# tail -F | klog-produce, through a fifo so that both pids are known.
	mkfifo "$TMP/pipe"
	tail -n +1 -F "$TMP/access.log" 2>/dev/null >"$TMP/pipe" &
	PIDS+=($!)
	klog-produce -t nginx <"$TMP/pipe" &
	PIDS+=($!)
	echo "GET /first 200" >>"$TMP/access.log"
	wait_for 20 klog-consume -L -t nginx
	klog-consume -t nginx -o beginning >"$TMP/out" &
	PIDS+=($!)
	for i in $(seq 2 20); do
		echo "GET /page$i 200" >>"$TMP/access.log"
		# One line at a time: it must arrive without the next one.
		wait_for 20 has_lines "$TMP/out" "$i"
	done
	[ "$(head -n 1 "$TMP/out")" = "GET /first 200" ]
	[ "$(tail -n 1 "$TMP/out")" = "GET /page20 200" ]
	[ "$(wc -l <"$TMP/out")" -eq 20 ]
}

@test "follow: a follower started at the end sees only new records, via jq" {
	start_broker
	seq 1 5 | klog-produce -t f
	# $! must be klog-consume's pid, for teardown; jq ends with its input.
	klog-consume -t f -J > >(jq --unbuffered -r .payload >"$TMP/out") &
	PIDS+=($!)
	sleep 0.5
	echo six | klog-produce -t f
	wait_for 20 has_lines "$TMP/out" 1
	[ "$(cat "$TMP/out")" = "six" ]
}

@test "follow: SIGINT stops a follower with exit 0 and its output flushed" {
	start_broker
	seq 1 3 | klog-produce -t s
	klog-consume -t s -o beginning >"$TMP/out" &
	local pid=$!
	PIDS+=("$pid")
	wait_for 20 has_lines "$TMP/out" 3
	kill -INT "$pid"
	local rc=0
	wait "$pid" || rc=$?
	[ "$rc" -eq 0 ]
	[ "$(cat "$TMP/out")" = "1
2
3" ]
}

@test "follow: the consumer rides out a broker restart" {
	start_broker
	echo before | klog-produce -t r
	klog-consume -t r -o beginning >"$TMP/out" &
	PIDS+=($!)
	wait_for 20 has_lines "$TMP/out" 1
	kill -KILL "$BROKER_PID"
	wait "$BROKER_PID" || true
	start_broker
	echo after | klog-produce -t r
	wait_for 30 has_lines "$TMP/out" 2
	[ "$(cat "$TMP/out")" = "before
after" ]
}
