#!/bin/sh
# latency: end-to-end, produce to consume (bench_latency), 200-byte
# messages at a fixed rate, default flush settings (so every message waits
# for its fsync before a consumer sees it): p50, p99, p999 and max, in ms.
#   fixed    LATENCY_RATE msg/s (default 10000)
#   at N%    N% of the maximum end-to-end rate, measured first: the
#            slower of a producer (bench_produce, 50 messages per request,
#            acks 1) and a consumer following it at once (bench_consume
#            -o end), for each N in LATENCY_POINTS (default "10 50 90").
#            The maximum is what they sustain for as long as a latency run
#            lasts: a burst of a second goes into the page cache at up to
#            1.9 M msg/s here (400 MB/s), but for 10 s consumers see what
#            the disk's fsync lets through (1.35-1.45 M msg/s, 283-305
#            MB/s, on a disk that takes 300 MB/s with fdatasync), so 90% of the
#            burst's rate was more than the machine could carry.  The
#            burst's figure is reported too (max_burst_end_to_end).
#            The producer alone, the broker's maximum produce rate, is
#            reported too (max_produce): on a machine whose cores the
#            clients share with the broker it is well above what a
#            producer and a consumer sustain together.  The producer lingers
#            LATENCY_LINGER (default 1ms) between requests unless 1000
#            messages are due, as klog-produce does (5ms by default):
#            requests of a message or two at these rates would load the
#            producer's core more than the broker
# Each run starts a fresh broker.  late_ms says how far behind schedule the
# producer ended: well above a few ms, the rate was not kept and the
# figures are of an overloaded machine (the producer, the consumer and the
# broker share its cores).  steal_ms is the CPU time the hypervisor took
# during a run (see steal_ms in lib.sh).  Knobs: LATENCY_RATE,
# LATENCY_SECONDS (default 10, times BENCH_SCALE, at least 1),
# LATENCY_POINTS, LATENCY_LINGER.
. "$(dirname "$0")/lib.sh"
bench_setup latency

secs=$(scaled "${LATENCY_SECONDS:-10}" 1)
warm=$(awk -v s="$secs" 'BEGIN { print (s >= 10 ? 1000 : s * 100) }')

# point NAME RATE [bench_latency options]: RUNS runs at RATE, then the
# medians.
point() {
	name=$1 rate=$2
	shift 2
	for k in p50 p99 p999 max late steal; do : >"$WORK/$k"; done
	i=1
	while [ "$i" -le "$RUNS" ]; do
		broker_start "$WORK/data"
		st0=$(steal_ms)
		out=$("$B/bench_latency" -b "$BROKER" -r "$rate" -d "$secs" \
			-W "${warm}ms" "$@")
		out="$out steal_ms $(($(steal_ms) - st0))"
		broker_stop
		rm -rf "$WORK/data"
		note "$name run $i: $out"
		for k in p50 p99 p999 max late steal; do
			field "${k}_ms" "$out" >>"$WORK/$k"
		done
		i=$((i + 1))
	done
	say "latency_${name}_rate" "$rate" msg/s
	for k in p50 p99 p999 max late steal; do
		say "latency_${name}_${k}_ms" "$(median <"$WORK/$k")" ms
	done
}

note "$secs s per run after ${warm} ms of warmup, $RUNS runs per point"
rate=${LATENCY_RATE:-10000}
point "$rate" "$rate"

points=${LATENCY_POINTS-10 50 90}
[ -n "$points" ] || exit 0
: >"$WORK/max"
: >"$WORK/burst"
: >"$WORK/e2e"
n=$(scaled 2000000 1000)
# slower_of OUT FILE: the lower msg/s of the producer's line and the
# consumer's file.
slower_of() {
	awk -v a="$(field msgs_s "$1")" -v b="$(field msgs_s "$(cat "$2")")" \
		'BEGIN { print (a < b ? a : b) }'
}
i=1
while [ "$i" -le 3 ]; do
	broker_start "$WORK/data"
	out=$("$B/bench_produce" -b "$BROKER" -n "$n" -m 50 -a 1)
	note "max run $i: $out"
	field msgs_s "$out" >>"$WORK/max"
	# The same with a consumer following: what producer and consumer
	# carry together when they share the machine with the broker.
	out=$(produce_followed "$n" "$WORK/follow" 300 "$(field bytes "$out")")
	note "burst end-to-end run $i: producer $out"
	note "burst end-to-end run $i: consumer $(cat "$WORK/follow")"
	burst=$(slower_of "$out" "$WORK/follow")
	echo "$burst" >>"$WORK/burst"
	broker_stop
	rm -rf "$WORK/data"
	# And for as long as a latency run, at least, at the burst's rate
	# (the topic made first, as the burst's producer made it).
	broker_start "$WORK/data" --topic bench:1
	out=$(produce_followed "$(awk -v r="$burst" -v s="$secs" \
		'BEGIN { printf "%.0f\n", r * (s + 1) }')" "$WORK/follow" 300 0)
	note "end-to-end run $i: producer $out"
	note "end-to-end run $i: consumer $(cat "$WORK/follow")"
	slower_of "$out" "$WORK/follow" >>"$WORK/e2e"
	broker_stop
	rm -rf "$WORK/data"
	i=$((i + 1))
done
max=$(median <"$WORK/max")
e2e=$(median <"$WORK/e2e")
say latency_max_produce_msgs_s "$max" msg/s
say latency_max_burst_end_to_end_msgs_s "$(median <"$WORK/burst")" msg/s
say latency_max_end_to_end_msgs_s "$e2e" msg/s
for pct in $points; do
	point "at${pct}pct" "$(awk -v m="$e2e" -v p="$pct" \
		'BEGIN { printf "%.0f\n", m * p / 100 }')" \
		-L "${LATENCY_LINGER:-1ms}"
done
