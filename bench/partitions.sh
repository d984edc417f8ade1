#!/bin/sh
# partitions: one broker, one topic of 1, 10, 100 and 1000 partitions
# (PARTITIONS_COUNTS), 200-byte messages spread over all of them by
# bench_produce: each request is one set of 50 messages (acks 1), and
# successive requests go to successive partitions, so only the partition
# count changes between the cases.  Aggregate produce throughput, each
# count beside the first one's (target at 1000: >= 70% of 1), and the
# broker's open descriptors at the end of the last run (one per partition
# for its active segment, plus a few).  Each run starts a fresh broker with
# the topic made at startup.  Knobs: PARTITIONS_COUNTS,
# PARTITIONS_MESSAGES (default 5000000, times BENCH_SCALE).
. "$(dirname "$0")/lib.sh"
bench_setup partitions

counts=${PARTITIONS_COUNTS:-1 10 100 1000}
msgs=$(scaled "${PARTITIONS_MESSAGES:-5000000}" 1000)
note "$msgs messages per run, $RUNS runs"

# Rounds of every count back to back, rather than all runs of one count
# then the next: this disk's fsync and writeback speed drifts over
# minutes, and the ratio should compare like with like.
i=1
while [ "$i" -le "$RUNS" ]; do
	for n in $counts; do
		broker_start "$WORK/data" --topic "bench:$n"
		out=$("$B/bench_produce" -b "$BROKER" -n "$msgs" -m 50 -a 1 \
			-P "$n")
		fd_count "$BROKER_PID" >"$WORK/fds.$n"
		broker_stop
		rm -rf "$WORK/data"
		note "$n partitions run $i: $out"
		field msgs_s "$out" >>"$WORK/v.$n"
	done
	i=$((i + 1))
done

base=
for n in $counts; do
	m=$(median <"$WORK/v.$n")
	say "partitions_${n}_msgs_s" "$m" msg/s
	say "partitions_${n}_fds" "$(cat "$WORK/fds.$n")" fds
	if [ -z "$base" ]; then
		base=$m first=$n
	else
		say "partitions_${n}_ratio" "$(ratio "$m" "$base")" "of_$first"
	fi
	[ "$n" != 1000 ] || [ "$first" != 1 ] ||
		target partitions_1000_ratio "$(ratio "$m" "$base")" '>=' 0.7 \
			"of_1"
done
