#!/bin/sh
# consume: the broker's fetch path (sendfile) and a reader that checks
# every CRC (bench_consume), 4 MiB fetches over one connection, from a
# partition filled once with 200-byte messages (target >= 4,000,000 msg/s).
# The partition was just written, so it reads from the page cache.  Knobs:
# CONSUME_MESSAGES (default 10000000, times BENCH_SCALE), CONSUME_FETCH
# (default 4M).
. "$(dirname "$0")/lib.sh"
bench_setup consume

msgs=$(scaled "${CONSUME_MESSAGES:-10000000}" 1000)
fetch=${CONSUME_FETCH:-4M}
loop=$(loopback_mb_s)
say consume_loopback_mb_s "$loop" MB/s

broker_start "$WORK/data"
fill "$BROKER" bench "$msgs"
note "$msgs messages of 200 bytes, fetches of $fetch, $RUNS runs"
: >"$WORK/msgs"
: >"$WORK/mb"
i=1
while [ "$i" -le "$RUNS" ]; do
	out=$("$B/bench_consume" -b "$BROKER" -o beginning -f "$fetch")
	note "run $i: $out"
	[ "$(field msgs "$out")" -eq "$msgs" ] || {
		echo "consume: read $(field msgs "$out") of $msgs" >&2
		exit 1
	}
	field msgs_s "$out" >>"$WORK/msgs"
	field mb_s "$out" >>"$WORK/mb"
	i=$((i + 1))
done
broker_stop
m=$(median <"$WORK/msgs")
mb=$(median <"$WORK/mb")
say consume_msgs_s "$m" msg/s
say consume_mb_s "$mb" MB/s
say consume_of_loopback "$(ratio "$mb" "$loop")" fraction
target consume_msgs_s "$m" '>=' 4000000 msg/s
