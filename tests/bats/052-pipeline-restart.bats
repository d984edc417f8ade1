#!/usr/bin/env bats
# A broker killed with -9 in the middle of a produce: the producer
# reconnects, resends, and every record it reports acknowledged is there
# after the restart; a broker that stays away makes it give up with 69.

bats_require_minimum_version 1.5.0
load helpers

setup() {
	common_setup
}

teardown() {
	common_teardown
}

# slow_seq N: 1..N in 50 slices, a little apart, so the produce takes a while.
slow_seq() {
	local step=$(( $1 / 50 )) i
	for (( i = 1; i <= $1; i += step )); do
		seq "$i" $(( i + step - 1 ))
		sleep 0.04
	done
}

@test "restart: kill -9 of the broker mid-produce; all acknowledged records survive" {
	start_broker
	slow_seq 50000 | klog-produce -t r -v --retry-for 30s 2>"$TMP/err" &
	local prod=$!
	PIDS+=("$prod")
	# Wait until some records are in, then kill the broker.
	local n=100
	until [ "$(klog-consume -L -t r 2>/dev/null | cut -f4)" -gt 50000 ] 2>/dev/null; do
		[ "$n" -gt 0 ]
		sleep 0.1
		n=$((n - 1))
	done
	kill -KILL "$BROKER_PID"
	wait "$BROKER_PID" || true
	sleep 0.5
	start_broker
	local rc=0
	wait "$prod" || rc=$?
	[ "$rc" -eq 0 ]
	grep -q '^klog-produce: 50000 records, 50000 acknowledged' "$TMP/err"
	grep -q ' [1-9][0-9]* reconnects' "$TMP/err"
	# At least once: everything there, repeats allowed.
	cmp <(klog-consume -t r -o beginning -e | sort -n -u) <(seq 50000)
}

@test "restart: a broker that stays away: exit 69 and a count of what was acknowledged" {
	start_broker
	echo first | klog-produce -t g
	{ echo a; sleep 1; echo b; } | klog-produce -t g --retry-for 1s \
		2>"$TMP/err" &
	local prod=$!
	PIDS+=("$prod")
	sleep 0.4
	kill -KILL "$BROKER_PID"
	wait "$BROKER_PID" || true
	local rc=0
	wait "$prod" || rc=$?
	[ "$rc" -eq 69 ]
	grep -q 'gave up after' "$TMP/err"
	grep -q '^klog-produce: 1 of 2 records acknowledged, 1 not$' "$TMP/err"
}
