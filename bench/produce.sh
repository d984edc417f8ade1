#!/bin/sh
# produce: the broker's produce path through the raw protocol
# (bench_produce), 200-byte messages on one connection, pipelined:
#   single   one message per request, each its own sendmsg, acks 1,
#            MSG_MORE while the next request follows at once, 1024 in
#            flight (target >= 500,000 msg/s)
#   single_push  as single, but every request pushed as a segment of its
#            own (no MSG_MORE), 256 in flight: the loopback's per-segment
#            cost on the sending core, for comparison (no target)
#   batch    50 messages per request, acks 1 (target >= 2,000,000 msg/s)
#   noack    50 messages per request, acks 0
# Each run starts a fresh broker on an empty data directory.  Knobs:
# PRODUCE_MESSAGES (default 10000000, times BENCH_SCALE), PRODUCE_WINDOW
# (requests in flight for all but single, default 256),
# PRODUCE_SINGLE_WINDOW (default 1024).
. "$(dirname "$0")/lib.sh"
bench_setup produce

msgs=$(scaled "${PRODUCE_MESSAGES:-10000000}" 1000)
window=${PRODUCE_WINDOW:-256}
swindow=${PRODUCE_SINGLE_WINDOW:-1024}
loop=$(loopback_mb_s)
say produce_loopback_mb_s "$loop" MB/s

# produce_case NAME GOAL ARGS...: RUNS runs, then the medians.
produce_case() {
	name=$1 goal=$2
	shift 2
	: >"$WORK/msgs"
	: >"$WORK/mb"
	i=1
	while [ "$i" -le "$RUNS" ]; do
		broker_start "$WORK/data"
		out=$("$B/bench_produce" -b "$BROKER" -n "$msgs" "$@")
		broker_stop
		rm -rf "$WORK/data"
		note "$name run $i: $out"
		field msgs_s "$out" >>"$WORK/msgs"
		field mb_s "$out" >>"$WORK/mb"
		i=$((i + 1))
	done
	m=$(median <"$WORK/msgs")
	mb=$(median <"$WORK/mb")
	say "produce_${name}_msgs_s" "$m" msg/s
	say "produce_${name}_mb_s" "$mb" MB/s
	say "produce_${name}_of_loopback" "$(ratio "$mb" "$loop")" fraction
	[ "$goal" = - ] || target "produce_${name}_msgs_s" "$m" '>=' "$goal" msg/s
}

note "$msgs messages of 200 bytes per run, $RUNS runs, window $window" \
    "(single: $swindow)"
produce_case single 500000 -m 1 -a 1 -M -w "$swindow"
produce_case single_push - -m 1 -a 1 -w "$window"
produce_case batch 2000000 -m 50 -a 1 -w "$window"
produce_case noack - -m 50 -a 0 -w "$window"
