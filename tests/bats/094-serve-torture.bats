#!/usr/bin/env bats
# Every protocol abuse at once (tests/drivers/torture.py: thousands of idle
# connections, random bytes, cut frames, absurd and negative sizes, lying
# bodies, a client that never reads, a flood of tiny requests, a drip of
# single bytes) while a well-behaved klog-produce | klog-consume round trip
# runs beside them: the round trip comes out identical, every abuse gets
# the answer the protocol promises, and the broker's memory stays bounded.

bats_require_minimum_version 1.5.0
load helpers

DRIVERS="$KLOG_ROOT/tests/drivers"

setup() {
	common_setup
}

teardown() {
	common_teardown
}

hwm_kb() {
	awk '/^VmHWM:/ { print $2 }' "/proc/$BROKER_PID/status"
}

@test "torture: all abuses at once; a round trip beside them is identical; memory bounded" {
	start_broker -q --max-request-bytes 4M --topic good
	python3 "$DRIVERS/torture.py" "$BROKER_PORT" 10 "$TMP/ready" \
		$((4 << 20)) >"$TMP/torture.out" 2>&1 &
	local torture=$!
	PIDS+=("$torture")
	local n=300
	until [ -e "$TMP/ready" ]; do
		n=$((n - 1))
		[ "$n" -gt 0 ]
		sleep 0.1
	done
	# The well-behaved pair: produce and consume at the same time.
	seq 1 500000 | klog-produce -t good -a all 2>"$TMP/produce.err" &
	local prod=$!
	PIDS+=("$prod")
	klog-consume -t good -o beginning -c 500000 >"$TMP/out"
	wait "$prod"
	cmp "$TMP/out" <(seq 1 500000)
	# A second one once the abuse is in full swing.
	seq 1 1000 | klog-produce -t good2 -a all
	run -0 klog-consume -t good2 -o beginning -e
	[ "$output" = "$(seq 1 1000)" ]
	local rc=0
	wait "$torture" || rc=$?
	cat "$TMP/torture.out"
	[ "$rc" -eq 0 ]
	grep -q '^torture: .*flood [1-9]' "$TMP/torture.out"
	grep -q 'idle [1-9][0-9][0-9]' "$TMP/torture.out"
	kill -0 "$BROKER_PID"
	local hwm
	hwm=$(hwm_kb)
	echo "# torture: broker peak RSS (VmHWM) ${hwm} kB" >&3
	[ "$hwm" -lt 65536 ]
	# Still serving, and says no more than a line a second about it.
	echo after | klog-produce -t good -a all
	run -0 klog-consume -t good -o beginning -e
	[ "${lines[-1]}" = "after" ]
	[ "$(grep -c 'bad request' "$TMP/broker.log")" -lt 60 ]
}
