#!/bin/sh
# produce: the broker's produce path through the raw protocol
# (bench_produce), 200-byte messages on one connection, pipelined:
#   single   one message per request, each its own write, acks 1
#            (target >= 500,000 msg/s)
#   batch    50 messages per request, acks 1 (target >= 2,000,000 msg/s)
#   noack    50 messages per request, acks 0
#   single_nagle  as single, but without TCP_NODELAY, so that the kernel
#            merges the small writes into fewer segments (no target: it
#            tells the loopback's per-segment cost from the broker's)
# Each run starts a fresh broker on an empty data directory.  Knobs:
# PRODUCE_MESSAGES (default 10000000, times BENCH_SCALE), PRODUCE_WINDOW
# (requests in flight, default 256).
. "$(dirname "$0")/lib.sh"
bench_setup produce

msgs=$(scaled "${PRODUCE_MESSAGES:-10000000}" 1000)
window=${PRODUCE_WINDOW:-256}
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
		out=$("$B/bench_produce" -b "$BROKER" -n "$msgs" -w "$window" "$@")
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

note "$msgs messages of 200 bytes per run, $RUNS runs, window $window"
produce_case single 500000 -m 1 -a 1
produce_case batch 2000000 -m 50 -a 1
produce_case noack - -m 50 -a 0
produce_case single_nagle - -m 1 -a 1 -N
