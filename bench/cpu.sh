#!/bin/sh
# cpu: the broker's CPU time (utime + stime of klog-serve, both its
# threads, from /proc/PID/stat) per MB it moves, 200-byte messages:
#   produce   bench_produce alone (50 messages per request, acks 1)
#   consume   bench_consume alone, reading those messages back
#   both      one producer and one consumer following it, at once
# MB are 10^6 bytes of message sets in plus out; *_cores is CPU time over
# wall time (1.0 is one core busy).  Clock ticks are 10 ms, so runs need
# seconds, not milliseconds, to mean anything.  Knob: CPU_MESSAGES
# (default 5000000, times BENCH_SCALE).
. "$(dirname "$0")/lib.sh"
bench_setup cpu

msgs=$(scaled "${CPU_MESSAGES:-5000000}" 1000)
hz=$(getconf CLK_TCK)
note "$msgs messages per phase, $RUNS runs, $hz ticks a second"

# per_mb T0 T1 BYTES: broker CPU ms per MB between two tick readings.
per_mb() {
	awk -v a="$1" -v b="$2" -v n="$3" -v hz="$hz" \
		'BEGIN { printf "%.3f\n", (b - a) * 1000 / hz / (n / 1e6) }'
}

# cores T0 T1 SECS: CPU time over wall time.
cores() {
	awk -v a="$1" -v b="$2" -v s="$3" -v hz="$hz" \
		'BEGIN { printf "%.2f\n", (s > 0 ? (b - a) / hz / s : 0) }'
}

for k in produce consume both both_cores; do : >"$WORK/$k"; done
i=1
while [ "$i" -le "$RUNS" ]; do
	broker_start "$WORK/data"
	c0=$(cpu_ticks "$BROKER_PID")
	p=$("$B/bench_produce" -b "$BROKER" -n "$msgs" -m 50 -a 1)
	c1=$(cpu_ticks "$BROKER_PID")
	c=$("$B/bench_consume" -b "$BROKER" -o beginning)
	c2=$(cpu_ticks "$BROKER_PID")
	b=$(produce_followed "$msgs" "$WORK/tail" 500)
	c3=$(cpu_ticks "$BROKER_PID")
	t=$(cat "$WORK/tail")
	broker_stop
	rm -rf "$WORK/data"
	note "run $i produce: $p"
	note "run $i consume: $c"
	note "run $i both: $b / $t"
	per_mb "$c0" "$c1" "$(field bytes "$p")" >>"$WORK/produce"
	per_mb "$c1" "$c2" "$(field bytes "$c")" >>"$WORK/consume"
	moved=$(($(field bytes "$b") + $(field bytes "$t")))
	per_mb "$c2" "$c3" "$moved" >>"$WORK/both"
	secs=$(awk -v a="$(field start "$b")" -v b="$(field end "$t")" \
		'BEGIN { print b - a }')
	cores "$c2" "$c3" "$secs" >>"$WORK/both_cores"
	i=$((i + 1))
done
say cpu_produce_ms_per_mb "$(median <"$WORK/produce")" ms/MB
say cpu_consume_ms_per_mb "$(median <"$WORK/consume")" ms/MB
say cpu_both_ms_per_mb "$(median <"$WORK/both")" ms/MB
say cpu_both_cores "$(median <"$WORK/both_cores")" cores
